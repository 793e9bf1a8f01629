//! Configuration fields described at their declaration: doc, allowed range and unit.
//!
//! Every configuration struct derives [`Fields`] (from `numaplace-derive`) and marks each
//! numeric field with `#[field(min = .., max = .., unit = "..")]`. The same declaration
//! drives validation ([`Fields::check_ranges`], run before anything is allocated) and
//! the listing of `numaplace list --fields`, so the documented range is the enforced one.
//! Limits that depend on another field (a node number below the machine's node count, a
//! grid dividing the order) are checked by the component's own validation.

use crate::error::ConfigError;
use std::fmt;

pub use numaplace_derive::Fields;

/// An inclusive bound of a field's range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// An integer bound, compared exactly.
    Int(i128),
    /// A real bound.
    Float(f64),
}

impl Bound {
    fn as_f64(self) -> f64 {
        match self {
            Bound::Int(i) => i as f64,
            Bound::Float(f) => f,
        }
    }

    /// `self <= other`, exactly for two integers.
    fn le(self, other: Bound) -> bool {
        match (self, other) {
            (Bound::Int(a), Bound::Int(b)) => a <= b,
            (a, b) => a.as_f64() <= b.as_f64(),
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            // Powers of two read better as such once they are large.
            Bound::Int(i) if i >= 1 << 16 && (i as u128).is_power_of_two() => {
                write!(f, "2^{}", i.trailing_zeros())
            }
            Bound::Int(i) => write!(f, "{i}"),
            Bound::Float(x) => write!(f, "{x}"),
        }
    }
}

/// One field of a configuration struct, as declared.
#[derive(Clone, Copy, Debug)]
pub struct FieldInfo {
    /// The name in a configuration file.
    pub name: &'static str,
    /// The field's doc comment, one line.
    pub doc: &'static str,
    /// Smallest allowed value, if bounded.
    pub min: Option<Bound>,
    /// Largest allowed value, if bounded.
    pub max: Option<Bound>,
    /// Unit of the value (`ns`, `bytes`, ...), or empty.
    pub unit: &'static str,
    /// For a nested struct: its own fields.
    pub nested: Option<fn() -> &'static [FieldInfo]>,
}

impl FieldInfo {
    /// The range as text, e.g. `1..=64`, `>= 1`, or empty when unbounded.
    pub fn range(&self) -> String {
        range_text(self.min, self.max)
    }
}

fn range_text(min: Option<Bound>, max: Option<Bound>) -> String {
    match (min, max) {
        (Some(lo), Some(hi)) => format!("{lo}..={hi}"),
        (Some(lo), None) => format!(">= {lo}"),
        (None, Some(hi)) => format!("<= {hi}"),
        (None, None) => String::new(),
    }
}

/// A configuration struct whose fields are described by `#[derive(Fields)]`.
pub trait Fields {
    /// Every field in declaration order.
    fn fields() -> &'static [FieldInfo]
    where
        Self: Sized;

    /// Checks every bounded field (and nested struct) against its declared range;
    /// `prefix` is the struct's dotted path (`workload`, `machine.costs`).
    fn check_ranges(&self, prefix: &str) -> Result<(), ConfigError>;
}

/// A field value that ranges apply to.
pub trait FieldValue {
    /// The value as a bound, or `None` when absent (an unset `Option`).
    fn number(&self) -> Option<Bound>;
}

macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl FieldValue for $t {
            fn number(&self) -> Option<Bound> {
                Some(Bound::Int(*self as i128))
            }
        }
    )*};
}
int_value!(u8, u16, u32, u64, usize, i32, i64);

impl FieldValue for f64 {
    fn number(&self) -> Option<Bound> {
        Some(Bound::Float(*self))
    }
}

impl FieldValue for crate::types::NsOrInf {
    /// The finite value; infinity is in every range that allows it (the field's doc says
    /// whether it does; its type is what allows it).
    fn number(&self) -> Option<Bound> {
        self.finite().map(|v| Bound::Int(v as i128))
    }
}

impl<T: FieldValue> FieldValue for Option<T> {
    fn number(&self) -> Option<Bound> {
        self.as_ref().and_then(FieldValue::number)
    }
}

/// `prefix.name`, or `name` at the top level.
pub fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// Checks one field's value against its declared range.
pub fn check_value<V: FieldValue + ?Sized>(
    prefix: &str,
    name: &str,
    value: &V,
    min: Option<Bound>,
    max: Option<Bound>,
    unit: &str,
) -> Result<(), ConfigError> {
    let Some(v) = value.number() else {
        return Ok(());
    };
    let nan = matches!(v, Bound::Float(x) if x.is_nan());
    let low = min.is_some_and(|lo| !lo.le(v));
    let high = max.is_some_and(|hi| !v.le(hi));
    if nan || low || high {
        let unit = if unit.is_empty() {
            String::new()
        } else {
            format!(" {unit}")
        };
        return Err(ConfigError::new(
            join(prefix, name),
            format!(
                "{v}{unit} is out of range; allowed: {}",
                range_text(min, max)
            ),
        ));
    }
    Ok(())
}

/// Every field in `fields` as (dotted name, info), nested structs flattened.
pub fn flatten(fields: &[FieldInfo]) -> Vec<(String, FieldInfo)> {
    let mut out = Vec::new();
    flatten_into("", fields, &mut out);
    out
}

fn flatten_into(prefix: &str, fields: &[FieldInfo], out: &mut Vec<(String, FieldInfo)>) {
    for f in fields {
        let name = join(prefix, f.name);
        match f.nested {
            Some(inner) => flatten_into(&name, inner(), out),
            None => out.push((name, *f)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Fields, Default)]
    struct Inner {
        /// A cost.
        #[field(min = 1, unit = "ns")]
        cost: u64,
    }

    #[derive(Fields, Default)]
    #[allow(dead_code)] // `label` is only listed, never read
    struct Outer {
        /// Order of the grid.
        #[field(min = 1, max = 64)]
        n: u32,
        /// An optional count.
        #[field(min = 2, max = 4)]
        count: Option<u32>,
        /// A fraction.
        #[field(min = 0.0, max = 1.0)]
        share: f64,
        /// Unchecked.
        label: String,
        #[field(nested)]
        inner: Inner,
    }

    fn valid() -> Outer {
        Outer {
            n: 8,
            count: None,
            share: 0.5,
            label: String::new(),
            inner: Inner { cost: 3 },
        }
    }

    #[test]
    fn values_inside_their_ranges_pass() {
        assert_eq!(valid().check_ranges("x"), Ok(()));
    }

    #[test]
    fn a_value_below_the_minimum_is_named_with_its_path_and_range() {
        let e = Outer { n: 0, ..valid() }.check_ranges("x").unwrap_err();
        assert_eq!(e.field, "x.n");
        assert_eq!(e.message, "0 is out of range; allowed: 1..=64");
    }

    #[test]
    fn a_value_above_the_maximum_is_refused() {
        assert!(Outer { n: 65, ..valid() }.check_ranges("x").is_err());
    }

    #[test]
    fn an_absent_option_is_not_checked_and_a_present_one_is() {
        assert!(Outer {
            count: Some(3),
            ..valid()
        }
        .check_ranges("x")
        .is_ok());
        let e = Outer {
            count: Some(9),
            ..valid()
        }
        .check_ranges("x")
        .unwrap_err();
        assert_eq!(e.field, "x.count");
    }

    #[test]
    fn nan_is_out_of_every_range() {
        assert!(Outer {
            share: f64::NAN,
            ..valid()
        }
        .check_ranges("x")
        .is_err());
    }

    #[test]
    fn nested_fields_are_checked_under_their_parent() {
        let mut o = valid();
        o.inner.cost = 0;
        let e = o.check_ranges("machine").unwrap_err();
        assert_eq!(e.field, "machine.inner.cost");
        assert!(e.message.contains("0 ns"), "{}", e.message);
    }

    #[test]
    fn flatten_lists_every_field_with_its_doc_and_range() {
        let f = flatten(Outer::fields());
        let names: Vec<&str> = f.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["n", "count", "share", "label", "inner.cost"]);
        assert_eq!(f[0].1.doc, "Order of the grid.");
        assert_eq!(f[0].1.range(), "1..=64");
        assert_eq!(f[3].1.range(), "");
        assert_eq!(f[4].1.unit, "ns");
    }

    #[test]
    fn large_powers_of_two_print_as_such() {
        assert_eq!(Bound::Int(1 << 24).to_string(), "2^24");
        assert_eq!(Bound::Int(64).to_string(), "64");
    }
}
