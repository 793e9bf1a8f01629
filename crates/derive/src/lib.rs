//! `#[derive(Fields)]`: a configuration struct's fields described once, at the field.
//!
//! Each field's doc comment, its allowed range and its unit are read from the struct
//! definition, so the range that validation enforces and the range `numaplace list
//! --fields` prints are the same declaration:
//!
//! ```ignore
//! #[derive(Fields)]
//! pub struct JacobiConfig {
//!     /// Grid order N.
//!     #[field(min = 1, max = 16_777_216, unit = "elements")]
//!     pub n: u64,
//!     /// Costs of the machine's operations.
//!     #[field(nested)]
//!     pub costs: Costs,
//! }
//! ```
//!
//! `min` and `max` are integer or float literals or integer constants (inclusive); a field without them is
//! listed but not range-checked; `nested` fields are structs that derive `Fields`
//! themselves and are listed and checked under `name.`. Field values are read through
//! `numaplace_core::fields::FieldValue`, so `Option` fields are checked when present.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use syn::{parse_macro_input, Data, DeriveInput, Expr, ExprLit, Fields, Lit, LitStr, Meta};

/// Derives the statistics a counter struct (named `u64` fields) gives once declared:
/// `minus` (the difference of two snapshots, for per-interval series) and `counters()`,
/// each counter's name, label and value in declaration order, from which the JSON record,
/// the text table and CSV columns are made. Adding a counter is one field. The label is
/// `#[counter(label = "..")]`, or the name with spaces for underscores.
#[proc_macro_derive(Counters, attributes(counter))]
pub fn derive_counters(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand_counters(&input) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand_counters(input: &DeriveInput) -> syn::Result<TokenStream2> {
    let named = match &input.data {
        Data::Struct(d) => match &d.fields {
            Fields::Named(n) => n,
            _ => {
                return Err(syn::Error::new_spanned(
                    input,
                    "Counters is derived for structs with named u64 fields",
                ))
            }
        },
        _ => {
            return Err(syn::Error::new_spanned(
                input,
                "Counters is derived for structs with named u64 fields",
            ))
        }
    };
    let ident = &input.ident;
    let mut members = Vec::new();
    let mut entries = Vec::new();
    for f in &named.named {
        let member = f.ident.clone().expect("named field");
        let name = member.to_string();
        let mut label = name.replace('_', " ");
        for attr in f.attrs.iter().filter(|a| a.path().is_ident("counter")) {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("label") {
                    let l: LitStr = meta.value()?.parse()?;
                    label = l.value();
                    Ok(())
                } else {
                    Err(meta.error("expected `label = \"..\"`"))
                }
            })?;
        }
        entries.push(quote! {
            ::numaplace_core::stats::Counter {
                name: #name,
                label: #label,
                value: self.#member,
            }
        });
        members.push(member);
    }
    let n = members.len();
    Ok(quote! {
        impl #ident {
            /// The difference of two snapshots, counter by counter (`earlier` <= `self`).
            pub fn minus(&self, earlier: &#ident) -> #ident {
                #ident { #(#members: self.#members - earlier.#members),* }
            }

            /// Adds `other`'s counts to these, counter by counter (totals over parts).
            pub fn add_all(&mut self, other: &#ident) {
                #(self.#members += other.#members;)*
            }

            /// Every counter with its name, label and value, in declaration order.
            pub fn counters(&self) -> [::numaplace_core::stats::Counter; #n] {
                [#(#entries),*]
            }
        }
    })
}

/// Derives `numaplace_core::fields::Fields`; see the crate documentation.
#[proc_macro_derive(Fields, attributes(field))]
pub fn derive_fields(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// What `#[field(...)]` says about one field.
#[derive(Default)]
struct FieldAttr {
    min: Option<TokenStream2>,
    max: Option<TokenStream2>,
    unit: Option<LitStr>,
    nested: bool,
}

/// A bound literal as a `Bound` constructor.
fn bound(lit: &Lit) -> syn::Result<TokenStream2> {
    match lit {
        Lit::Int(i) => {
            let v: i128 = i.base10_parse()?;
            Ok(quote!(::numaplace_core::fields::Bound::Int(#v)))
        }
        Lit::Float(f) => {
            let v: f64 = f.base10_parse()?;
            Ok(quote!(::numaplace_core::fields::Bound::Float(#v)))
        }
        other => Err(syn::Error::new_spanned(
            other,
            "a bound is an integer or float literal",
        )),
    }
}

/// A possibly negated literal: `-5` parses as a unary expression.
fn signed_lit(expr: &Expr) -> syn::Result<TokenStream2> {
    match expr {
        Expr::Lit(ExprLit { lit, .. }) => bound(lit),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match &*u.expr {
            Expr::Lit(ExprLit {
                lit: Lit::Int(i), ..
            }) => {
                let v: i128 = i.base10_parse()?;
                let v = -v;
                Ok(quote!(::numaplace_core::fields::Bound::Int(#v)))
            }
            Expr::Lit(ExprLit {
                lit: Lit::Float(f), ..
            }) => {
                let v: f64 = f.base10_parse()?;
                let v = -v;
                Ok(quote!(::numaplace_core::fields::Bound::Float(#v)))
            }
            other => Err(syn::Error::new_spanned(other, "expected a literal")),
        },
        // A named integer constant, e.g. `crate::TIME_LIMIT`.
        Expr::Path(p) => Ok(quote!(::numaplace_core::fields::Bound::Int(#p as i128))),
        other => Err(syn::Error::new_spanned(
            other,
            "a bound is an integer or float literal or an integer constant's path",
        )),
    }
}

fn field_attr(attrs: &[syn::Attribute]) -> syn::Result<FieldAttr> {
    let mut out = FieldAttr::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("field")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("nested") {
                out.nested = true;
                Ok(())
            } else if meta.path.is_ident("min") {
                out.min = Some(signed_lit(&meta.value()?.parse::<Expr>()?)?);
                Ok(())
            } else if meta.path.is_ident("max") {
                out.max = Some(signed_lit(&meta.value()?.parse::<Expr>()?)?);
                Ok(())
            } else if meta.path.is_ident("unit") {
                out.unit = Some(meta.value()?.parse()?);
                Ok(())
            } else {
                Err(meta.error("expected `min = ..`, `max = ..`, `unit = \"..\"` or `nested`"))
            }
        })?;
    }
    if out.nested && (out.min.is_some() || out.max.is_some() || out.unit.is_some()) {
        return Err(syn::Error::new_spanned(
            &attrs[0],
            "a nested field has its own fields' ranges, not one of its own",
        ));
    }
    Ok(out)
}

/// The doc comment's lines, trimmed and joined by spaces.
fn doc(attrs: &[syn::Attribute]) -> String {
    let mut lines = Vec::new();
    for a in attrs {
        if let Meta::NameValue(nv) = &a.meta {
            if nv.path.is_ident("doc") {
                if let Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) = &nv.value
                {
                    lines.push(s.value().trim().to_string());
                }
            }
        }
    }
    lines.join(" ").trim().to_string()
}

/// What the field's `serde` attributes say: the name a configuration file uses
/// (`rename = ".."`), and whether the field is not in configuration files at all (`skip`).
fn serde_name(field: &syn::Field) -> syn::Result<(Option<String>, bool)> {
    let mut name = None;
    let mut skip = false;
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let s: LitStr = meta.value()?.parse()?;
                name = Some(s.value());
            } else if meta.path.is_ident("skip") {
                skip = true;
            } else if meta.input.peek(syn::Token![=]) {
                // Other key = value options (default = "..", with = "..") are not ours.
                let _: Expr = meta.value()?.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                let _content;
                syn::parenthesized!(_content in meta.input);
            }
            Ok(())
        })?;
    }
    Ok((name, skip))
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream2> {
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            input,
            "Fields is derived for structs with named fields",
        ));
    };
    let Fields::Named(named) = &data.fields else {
        return Err(syn::Error::new_spanned(
            input,
            "Fields is derived for structs with named fields",
        ));
    };
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut infos = Vec::new();
    let mut checks = Vec::new();
    for f in &named.named {
        let member = f.ident.as_ref().expect("named field");
        let (rename, skip) = serde_name(f)?;
        let attr = field_attr(&f.attrs)?;
        if skip {
            // Filled in by code, never read from a file: neither listed nor checked.
            continue;
        }
        let name = rename.unwrap_or_else(|| member.to_string());
        let doc = doc(&f.attrs);
        let ty = &f.ty;
        let opt = |b: &Option<TokenStream2>| match b {
            Some(t) => quote!(Some(#t)),
            None => quote!(None),
        };
        let min = opt(&attr.min);
        let max = opt(&attr.max);
        let unit = attr.unit.as_ref().map(|u| u.value()).unwrap_or_default();
        let nested = if attr.nested {
            quote!(Some(<#ty as ::numaplace_core::fields::Fields>::fields))
        } else {
            quote!(None)
        };
        infos.push(quote! {
            ::numaplace_core::fields::FieldInfo {
                name: #name,
                doc: #doc,
                min: #min,
                max: #max,
                unit: #unit,
                nested: #nested,
            }
        });
        if attr.nested {
            checks.push(quote! {
                ::numaplace_core::fields::Fields::check_ranges(
                    &self.#member,
                    &::numaplace_core::fields::join(prefix, #name),
                )?;
            });
        } else if attr.min.is_some() || attr.max.is_some() {
            checks.push(quote! {
                ::numaplace_core::fields::check_value(prefix, #name, &self.#member, #min, #max, #unit)?;
            });
        }
    }
    Ok(quote! {
        impl #impl_generics ::numaplace_core::fields::Fields for #ident #ty_generics #where_clause {
            fn fields() -> &'static [::numaplace_core::fields::FieldInfo] {
                const FIELDS: &[::numaplace_core::fields::FieldInfo] = &[#(#infos),*];
                FIELDS
            }

            fn check_ranges(&self, prefix: &str) -> ::core::result::Result<(), ::numaplace_core::error::ConfigError> {
                #(#checks)*
                Ok(())
            }
        }
    })
}
