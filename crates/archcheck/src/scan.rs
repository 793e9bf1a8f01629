//! Reading a crate's source files and collecting the edges between its top-level modules.

use crate::error::Error;
use crate::location::Location;
use proc_macro2::{Spacing, TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Attribute, Item, ItemMod, ItemUse, Meta, Token, UseTree};

/// The node of the items the crate root (`lib.rs` or `main.rs`) defines itself.
pub const ROOT: &str = "crate";

/// Imports through the root's imports stop after this many steps, so a malformed
/// chain (`use a as b; use b as a;`) cannot loop.
const MAX_IMPORT_DEPTH: usize = 16;

/// The nodes and edges of a crate, each edge with the first place that makes it.
pub(crate) struct Scan {
    pub nodes: BTreeSet<String>,
    pub edges: BTreeMap<(String, String), Location>,
}

/// Reads the crate whose root file is in `src_dir` and every module file it declares.
pub(crate) fn scan_crate(src_dir: &Path) -> Result<Scan, Error> {
    let root_file = ["lib.rs", "main.rs"]
        .iter()
        .map(|name| src_dir.join(name))
        .find(|path| path.is_file())
        .ok_or_else(|| Error::NoRoot(src_dir.to_path_buf()))?;
    let root_ast = parse(&root_file)?;
    let root = Root::of(&root_ast);
    let mut edges = BTreeMap::new();
    let mut pending = Vec::new();

    let mut collector = Collector::new(
        &root,
        &mut edges,
        &mut pending,
        Pending {
            file: root_file,
            module: Vec::new(),
            dir: src_dir.to_path_buf(),
        },
    );
    for attr in &root_ast.attrs {
        collector.visit_attribute(attr);
    }
    for item in &root_ast.items {
        // The root's own `use` declarations are its facade: they count where the
        // root's code uses the names they bring in (see `Root::resolve_in_root`).
        if !matches!(item, Item::Use(_)) {
            collector.visit_item(item);
        }
    }
    collector.finish()?;

    let mut next = 0;
    while let Some(file) = pending.get(next).cloned() {
        next += 1;
        let ast = parse(&file.file)?;
        let mut collector = Collector::new(&root, &mut edges, &mut pending, file);
        collector.visit_file(&ast);
        collector.finish()?;
    }

    let mut nodes = root.modules.clone();
    if root.has_items {
        nodes.insert(ROOT.to_string());
    }
    for (from, to) in edges.keys() {
        nodes.insert(from.clone());
        nodes.insert(to.clone());
    }
    Ok(Scan { nodes, edges })
}

fn parse(path: &Path) -> Result<syn::File, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    syn::parse_file(&text).map_err(|e| Error::Parse {
        path: path.to_path_buf(),
        line: e.span().start().line,
        message: e.to_string(),
    })
}

/// A module file still to read.
#[derive(Clone)]
struct Pending {
    file: PathBuf,
    /// The module's path from the crate root (empty for the root).
    module: Vec<String>,
    /// The directory its own `mod NAME;` declarations are looked up in.
    dir: PathBuf,
}

/// What the crate root declares, which every `crate::` path is resolved through.
#[derive(Default)]
struct Root {
    /// The top-level modules (not those under `#[cfg(test)]`).
    modules: BTreeSet<String>,
    /// Names the root imports, with the path they are imported from as written.
    imports: BTreeMap<String, Vec<String>>,
    /// Prefixes of the root's glob imports (`pub use engine::*;`).
    globs: Vec<Vec<String>>,
    /// Names of the items the root defines itself.
    items: BTreeSet<String>,
    /// Whether the root holds code of its own besides `mod` and `use` declarations.
    has_items: bool,
}

impl Root {
    fn of(ast: &syn::File) -> Root {
        let mut root = Root::default();
        for item in &ast.items {
            if is_test_only(item_attrs(item)) {
                continue;
            }
            match item {
                Item::Mod(m) => {
                    root.modules.insert(m.ident.to_string());
                }
                Item::Use(u) if u.leading_colon.is_none() => {
                    for leaf in use_leaves(&u.tree) {
                        match leaf.bound {
                            _ if leaf.glob => root.globs.push(leaf.path),
                            Some(name) => {
                                root.imports.insert(name, leaf.path);
                            }
                            None => {}
                        }
                    }
                }
                Item::Use(_) | Item::ExternCrate(_) => {}
                _ => {
                    root.has_items = true;
                    if let Some(name) = item_name(item) {
                        root.items.insert(name);
                    }
                }
            }
        }
        root
    }

    /// The nodes a path from the crate root leads to (the segments after `crate::`).
    /// A name the root neither declares nor imports is taken to be at the root (an
    /// exported macro), unless glob imports may bring it in.
    fn resolve_abs(&self, segments: &[String], depth: usize) -> Vec<String> {
        let Some(first) = segments.first() else {
            return vec![ROOT.to_string()];
        };
        if self.modules.contains(first) {
            return vec![first.clone()];
        }
        if let Some(path) = self.imports.get(first) {
            return self.resolve_import(path, depth + 1);
        }
        if self.items.contains(first) || self.globs.is_empty() {
            return vec![ROOT.to_string()];
        }
        let mut targets: Vec<String> = self
            .globs
            .iter()
            .flat_map(|glob| self.resolve_import(glob, depth + 1))
            .collect();
        targets.sort();
        targets.dedup();
        targets
    }

    /// The nodes a path in one of the root's own `use` declarations leads to; none when
    /// it leaves the crate.
    fn resolve_import(&self, path: &[String], depth: usize) -> Vec<String> {
        if depth > MAX_IMPORT_DEPTH {
            return Vec::new();
        }
        match path.first().map(String::as_str) {
            Some("crate" | "self") => self.resolve_abs(&path[1..], depth),
            Some(first) if self.modules.contains(first) => vec![first.to_string()],
            Some(first) if self.imports.contains_key(first) => {
                self.resolve_import(&self.imports[first], depth + 1)
            }
            Some(first) if self.items.contains(first) => vec![ROOT.to_string()],
            _ => Vec::new(),
        }
    }

    /// The nodes a relative path written in the root's own code leads to: a top-level
    /// module it goes through, or a name the root imports. A lone module name is not
    /// enough in an expression (it is then a local binding of the same name), but is in
    /// a `use` declaration.
    fn resolve_in_root(&self, path: &[String], lone_module_counts: bool) -> Vec<String> {
        let Some(first) = path.first() else {
            return Vec::new();
        };
        if self.modules.contains(first) && (path.len() > 1 || lone_module_counts) {
            vec![first.clone()]
        } else if let Some(import) = self.imports.get(first) {
            self.resolve_import(import, 1)
        } else {
            Vec::new()
        }
    }
}

/// One name a `use` tree brings in.
struct UseLeaf {
    /// The full path, `self` leaves folded into their prefix; for a glob, its prefix.
    path: Vec<String>,
    /// The name it is bound to (none for `_` and globs).
    bound: Option<String>,
    glob: bool,
    line: usize,
}

fn use_leaves(tree: &UseTree) -> Vec<UseLeaf> {
    fn walk(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<UseLeaf>) {
        match tree {
            UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(&p.tree, prefix, out);
                prefix.pop();
            }
            UseTree::Name(n) => {
                let (path, bound) = leaf(prefix, &n.ident, &n.ident);
                out.push(UseLeaf {
                    path,
                    bound,
                    glob: false,
                    line: n.ident.span().start().line,
                });
            }
            UseTree::Rename(r) => {
                let (path, bound) = leaf(prefix, &r.ident, &r.rename);
                out.push(UseLeaf {
                    path,
                    bound,
                    glob: false,
                    line: r.ident.span().start().line,
                });
            }
            UseTree::Glob(g) => out.push(UseLeaf {
                path: prefix.clone(),
                bound: None,
                glob: true,
                line: g.star_token.span.start().line,
            }),
            UseTree::Group(g) => {
                for tree in &g.items {
                    walk(tree, prefix, out);
                }
            }
        }
    }
    fn leaf(
        prefix: &[String],
        ident: &syn::Ident,
        bound: &syn::Ident,
    ) -> (Vec<String>, Option<String>) {
        let mut path = prefix.to_vec();
        if ident != "self" {
            path.push(ident.to_string());
        }
        let bound = if bound == "_" {
            None
        } else if bound == "self" {
            path.last().cloned()
        } else {
            Some(bound.to_string())
        };
        (path, bound)
    }
    let mut out = Vec::new();
    walk(tree, &mut Vec::new(), &mut out);
    out
}

fn item_attrs(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

fn item_name(item: &Item) -> Option<String> {
    let ident = match item {
        Item::Const(i) => &i.ident,
        Item::Enum(i) => &i.ident,
        Item::Fn(i) => &i.sig.ident,
        Item::Macro(i) => i.ident.as_ref()?,
        Item::Static(i) => &i.ident,
        Item::Struct(i) => &i.ident,
        Item::Trait(i) => &i.ident,
        Item::TraitAlias(i) => &i.ident,
        Item::Type(i) => &i.ident,
        Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

/// Whether the attributes hold a `#[cfg(..)]` that is true only in test builds.
fn is_test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<Meta>()
                .is_ok_and(|predicate| implies_test(&predicate))
    })
}

fn implies_test(predicate: &Meta) -> bool {
    match predicate {
        Meta::Path(path) => path.is_ident("test"),
        Meta::List(list) => {
            let Ok(parts) = list.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
            else {
                return false;
            };
            if list.path.is_ident("all") {
                parts.iter().any(implies_test)
            } else if list.path.is_ident("any") {
                !parts.is_empty() && parts.iter().all(implies_test)
            } else {
                false
            }
        }
        Meta::NameValue(_) => false,
    }
}

/// Walks one file's code and records the edges it makes.
struct Collector<'a> {
    root: &'a Root,
    edges: &'a mut BTreeMap<(String, String), Location>,
    pending: &'a mut Vec<Pending>,
    file: PathBuf,
    /// The path of the module being walked (inline modules pushed onto the file's).
    module: Vec<String>,
    /// Where the walked module's `mod NAME;` files are.
    dir: PathBuf,
    /// How many inline `mod NAME { .. }` blocks of this file enclose the walk.
    inline_depth: usize,
    error: Option<Error>,
}

impl<'a> Collector<'a> {
    fn new(
        root: &'a Root,
        edges: &'a mut BTreeMap<(String, String), Location>,
        pending: &'a mut Vec<Pending>,
        at: Pending,
    ) -> Collector<'a> {
        Collector {
            root,
            edges,
            pending,
            file: at.file,
            module: at.module,
            dir: at.dir,
            inline_depth: 0,
            error: None,
        }
    }

    fn finish(self) -> Result<(), Error> {
        self.error.map_or(Ok(()), Err)
    }

    fn node(&self) -> &str {
        self.module.first().map_or(ROOT, String::as_str)
    }

    fn add(&mut self, targets: Vec<String>, line: usize) {
        let from = self.node().to_string();
        for to in targets {
            if to == from {
                continue;
            }
            let at = Location {
                file: self.file.clone(),
                line,
            };
            let place = self.edges.entry((from.clone(), to)).or_insert(at.clone());
            if at < *place {
                *place = at;
            }
        }
    }

    /// The nodes a path written in the walked module leads to. Relative paths in a
    /// module other than the root stay in it or leave the crate, so they lead nowhere.
    fn resolve(&self, path: &[String], lone_module_counts: bool) -> Vec<String> {
        match path.first().map(String::as_str) {
            Some("crate") => self.root.resolve_abs(&path[1..], 0),
            Some("self") => {
                let mut absolute = self.module.clone();
                absolute.extend_from_slice(&path[1..]);
                self.root.resolve_abs(&absolute, 0)
            }
            Some("super") => {
                let ups = path.iter().take_while(|s| *s == "super").count();
                let Some(kept) = self.module.len().checked_sub(ups) else {
                    return Vec::new();
                };
                let mut absolute = self.module[..kept].to_vec();
                absolute.extend_from_slice(&path[ups..]);
                self.root.resolve_abs(&absolute, 0)
            }
            Some(_) if self.module.is_empty() => {
                self.root.resolve_in_root(path, lone_module_counts)
            }
            _ => Vec::new(),
        }
    }

    fn use_item(&mut self, item: &ItemUse) {
        for attr in &item.attrs {
            self.visit_attribute(attr);
        }
        if item.leading_colon.is_some() {
            return;
        }
        for leaf in use_leaves(&item.tree) {
            let targets = self.resolve(&leaf.path, true);
            self.add(targets, leaf.line);
        }
    }

    fn module_item(&mut self, item: &ItemMod) {
        for attr in &item.attrs {
            self.visit_attribute(attr);
        }
        let name = item.ident.to_string();
        let mut module = self.module.clone();
        module.push(name.clone());
        if let Some((_, items)) = &item.content {
            let inner_dir = self.dir.join(&name);
            let outer_dir = std::mem::replace(&mut self.dir, inner_dir);
            self.module.push(name);
            self.inline_depth += 1;
            for item in items {
                self.visit_item(item);
            }
            self.inline_depth -= 1;
            self.module.pop();
            self.dir = outer_dir;
            return;
        }
        let path_attr = item.attrs.iter().find_map(|attr| match &attr.meta {
            Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        });
        let (looked_for, dir) = match path_attr {
            Some(path) => {
                // Outside inline modules a `#[path]` is relative to the declaring
                // file's directory; the file found owns its directory like a `mod.rs`.
                let base = if self.inline_depth == 0 {
                    self.file
                        .parent()
                        .map(Path::to_path_buf)
                        .unwrap_or_default()
                } else {
                    self.dir.clone()
                };
                let file = base.join(path);
                let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
                (vec![file], dir)
            }
            None => (
                vec![
                    self.dir.join(format!("{name}.rs")),
                    self.dir.join(&name).join("mod.rs"),
                ],
                self.dir.join(&name),
            ),
        };
        match looked_for.iter().find(|file| file.is_file()) {
            Some(file) => self.pending.push(Pending {
                file: file.clone(),
                module,
                dir,
            }),
            None => {
                let at = Location {
                    file: self.file.clone(),
                    line: item.ident.span().start().line,
                };
                self.error.get_or_insert(Error::MissingModule {
                    name,
                    at,
                    looked_for,
                });
            }
        }
    }

    /// Records the paths in the tokens of an attribute or a macro invocation: sequences
    /// `a :: b :: ..` starting with `crate` (or `$crate`), `self` or `super`, and in the
    /// root's code also those starting with a top-level module or a root import.
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            let TokenTree::Ident(first) = &tokens[i] else {
                if let TokenTree::Group(group) = &tokens[i] {
                    self.scan_tokens(group.stream());
                }
                i += 1;
                continue;
            };
            let mut path = vec![first.to_string()];
            let mut next = i + 1;
            while let (
                Some(TokenTree::Punct(colon)),
                Some(TokenTree::Punct(second)),
                Some(TokenTree::Ident(segment)),
            ) = (tokens.get(next), tokens.get(next + 1), tokens.get(next + 2))
            {
                if colon.as_char() != ':'
                    || colon.spacing() != Spacing::Joint
                    || second.as_char() != ':'
                {
                    break;
                }
                path.push(segment.to_string());
                next += 3;
            }
            // A field, method, lifetime or a path that starts before this ident (after
            // `::` or a qualified `<T>::`) is not a path of its own.
            let punct_before = |back: usize| match i.checked_sub(back).map(|at| &tokens[at]) {
                Some(TokenTree::Punct(p)) => Some((p.as_char(), p.spacing())),
                _ => None,
            };
            let continues_something = match punct_before(1) {
                Some(('.' | '\'', _)) => true,
                Some((':', _)) => punct_before(2) == Some((':', Spacing::Joint)),
                _ => false,
            };
            // A lone `crate`, `self` or `super` is a visibility or a receiver.
            let lone_keyword =
                path.len() == 1 && matches!(path[0].as_str(), "crate" | "self" | "super");
            if !continues_something && !lone_keyword {
                let targets = self.resolve(&path, false);
                self.add(targets, first.span().start().line);
            }
            i = next;
        }
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item(&mut self, item: &'ast Item) {
        if is_test_only(item_attrs(item)) {
            return;
        }
        match item {
            Item::Mod(m) => self.module_item(m),
            Item::Use(u) => self.use_item(u),
            _ => visit::visit_item(self, item),
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs: &[Attribute] = match item {
            syn::ImplItem::Const(i) => &i.attrs,
            syn::ImplItem::Fn(i) => &i.attrs,
            syn::ImplItem::Type(i) => &i.attrs,
            syn::ImplItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        if !is_test_only(attrs) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_trait_item(&mut self, item: &'ast syn::TraitItem) {
        let attrs: &[Attribute] = match item {
            syn::TraitItem::Const(i) => &i.attrs,
            syn::TraitItem::Fn(i) => &i.attrs,
            syn::TraitItem::Type(i) => &i.attrs,
            syn::TraitItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        if !is_test_only(attrs) {
            visit::visit_trait_item(self, item);
        }
    }

    fn visit_field(&mut self, field: &'ast syn::Field) {
        if !is_test_only(&field.attrs) {
            visit::visit_field(self, field);
        }
    }

    fn visit_variant(&mut self, variant: &'ast syn::Variant) {
        if !is_test_only(&variant.attrs) {
            visit::visit_variant(self, variant);
        }
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        if !is_test_only(&local.attrs) {
            visit::visit_local(self, local);
        }
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        if !is_test_only(&arm.attrs) {
            visit::visit_arm(self, arm);
        }
    }

    fn visit_attribute(&mut self, attr: &'ast Attribute) {
        if attr.path().is_ident("doc") {
            return;
        }
        match &attr.meta {
            Meta::Path(path) => self.visit_path(path),
            Meta::List(list) => {
                self.visit_path(&list.path);
                self.scan_tokens(list.tokens.clone());
            }
            Meta::NameValue(nv) => self.visit_expr(&nv.value),
        }
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.scan_tokens(mac.tokens.clone());
    }

    // `pub(crate)`, `pub(super)` and `pub(in path)` say who may use an item, not what
    // it uses.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() {
            if let Some(first) = path.segments.first() {
                let segments: Vec<String> =
                    path.segments.iter().map(|s| s.ident.to_string()).collect();
                let targets = self.resolve(&segments, false);
                self.add(targets, first.ident.span().start().line);
            }
        }
        visit::visit_path(self, path);
    }
}
