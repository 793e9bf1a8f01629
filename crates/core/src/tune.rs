//! Search spaces of policy parameters, for automatic tuning.
//!
//! A policy declares the space its parameters are tuned over next to its parameters
//! ([`PolicyParams::SEARCH_SPACE`](crate::component::PolicyParams::SEARCH_SPACE)): per
//! parameter a numeric range (linear, or logarithmic where the values that matter span
//! decades), whether it is an integer, and the values beyond that range its source allows
//! (an infinite duration, a negative count meaning "never"). A tuner draws candidates
//! from the space, and the harness writes them into the policy's table by field name, so
//! a candidate is a configuration like any other and is validated like one.
//!
//! This module only describes and samples; it runs nothing (the harness tunes).

use crate::fields::{Bound, FieldInfo};
use rand::Rng;
use std::fmt;

/// How a numeric range is sampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Uniformly.
    Linear,
    /// Uniformly in the logarithm (the range must be positive).
    Log,
}

/// One parameter value of a candidate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// A real number.
    Float(f64),
    /// Infinity (a duration that never ends: `"inf"` in a configuration).
    Inf,
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Inf => f.write_str("inf"),
        }
    }
}

impl Value {
    /// The value as a number (`Inf` as infinity), for ordering and plots.
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Int(i) => i as f64,
            Value::Float(x) => x,
            Value::Inf => f64::INFINITY,
        }
    }
}

/// One tuned parameter: a field of the policy's table and where its values come from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dim {
    /// The field's name in the policy's table.
    pub field: &'static str,
    /// Smallest value of the numeric range.
    pub lo: f64,
    /// Largest value of the numeric range.
    pub hi: f64,
    /// Whether values are integers (drawn values are rounded).
    pub integer: bool,
    /// How the numeric range is sampled.
    pub scale: Scale,
    /// Values beyond the numeric range that the parameter may take (drawn as categories
    /// of their own beside the range).
    pub specials: &'static [Value],
    /// Where the range comes from, one line.
    pub source: &'static str,
}

/// Share of draws that take the numeric range rather than a special value (the rest is
/// split evenly among the specials).
pub const RANGE_SHARE: f64 = 0.7;

/// A parameter's value drawn as an arm (the numeric range, or special value `i`) and a
/// position in the range: what a model-based tuner learns over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arm {
    /// The numeric range, at this position in [0, 1) of its (log) scale.
    Range(f64),
    /// The special value of this index.
    Special(usize),
}

impl Dim {
    /// A numeric dimension without special values.
    pub const fn range(
        field: &'static str,
        lo: f64,
        hi: f64,
        integer: bool,
        scale: Scale,
        source: &'static str,
    ) -> Dim {
        Dim {
            field,
            lo,
            hi,
            integer,
            scale,
            specials: &[],
            source,
        }
    }

    /// The value at position `u` in [0, 1] of the numeric range (on its scale).
    pub fn at(&self, u: f64) -> Value {
        let u = u.clamp(0.0, 1.0);
        let x = match self.scale {
            Scale::Linear => self.lo + u * (self.hi - self.lo),
            Scale::Log => (self.lo.ln() + u * (self.hi.ln() - self.lo.ln())).exp(),
        };
        if self.integer {
            // Rounded into the range: an integer range has integer ends.
            Value::Int(x.round().clamp(self.lo, self.hi) as i64)
        } else {
            Value::Float(x.clamp(self.lo, self.hi))
        }
    }

    /// The position in [0, 1] of a finite value on the range's scale (clamped).
    pub fn position(&self, v: f64) -> f64 {
        if self.hi <= self.lo {
            return 0.0;
        }
        let u = match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Log => (v.max(self.lo).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln()),
        };
        u.clamp(0.0, 1.0)
    }

    /// The value of an arm.
    pub fn value(&self, arm: Arm) -> Value {
        match arm {
            Arm::Range(u) => self.at(u),
            Arm::Special(i) => self.specials[i.min(self.specials.len().saturating_sub(1))],
        }
    }

    /// Draws an arm: the range with probability [`RANGE_SHARE`] (always without
    /// specials), else one of the specials, uniformly.
    pub fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> Arm {
        // Both numbers are drawn every time, so a space's draws stay aligned whatever
        // arm each dimension takes.
        let pick: f64 = rng.gen();
        let u: f64 = rng.gen();
        if self.specials.is_empty() || pick < RANGE_SHARE {
            Arm::Range(u)
        } else {
            let share = (pick - RANGE_SHARE) / (1.0 - RANGE_SHARE);
            let i = ((share * self.specials.len() as f64) as usize).min(self.specials.len() - 1);
            Arm::Special(i)
        }
    }

    /// The arm that gives `v`: its special value's, else the range at `v`'s position
    /// (clamped into the range; infinity without an `Inf` special at the range's top).
    pub fn arm_of(&self, v: Value) -> Arm {
        if let Some(i) = self.specials.iter().position(|&s| s == v) {
            return Arm::Special(i);
        }
        Arm::Range(self.position(v.as_f64()))
    }

    /// Whether `v` is a value of this dimension (in the range, or a special).
    pub fn contains(&self, v: Value) -> bool {
        if self.specials.contains(&v) {
            return true;
        }
        match v {
            Value::Int(i) => self.integer && (self.lo..=self.hi).contains(&(i as f64)),
            Value::Float(x) => !self.integer && (self.lo..=self.hi).contains(&x),
            Value::Inf => false,
        }
    }
}

/// Why a space (or a range given for one of its dimensions) is not usable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct SpaceError {
    /// The parameter.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

fn bound_f64(b: Bound) -> f64 {
    match b {
        Bound::Int(i) => i as f64,
        Bound::Float(x) => x,
    }
}

/// A search space: the dimensions tuned, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Space {
    /// The dimensions.
    pub dims: Vec<Dim>,
}

impl Space {
    /// The space of `dims`.
    pub fn new(dims: &[Dim]) -> Space {
        Space {
            dims: dims.to_vec(),
        }
    }

    /// The dimension of `field`.
    pub fn dim(&self, field: &str) -> Option<&Dim> {
        self.dims.iter().find(|d| d.field == field)
    }

    /// Checks every dimension against the policy's declared fields: the field exists,
    /// the range is not empty, a log range is positive, and the range and the finite
    /// specials lie within the field's declared range.
    pub fn validate(&self, fields: &[FieldInfo]) -> Result<(), SpaceError> {
        for d in &self.dims {
            let err = |message: String| SpaceError {
                field: d.field.to_string(),
                message,
            };
            let Some(f) = fields.iter().find(|f| f.name == d.field) else {
                return Err(err("the policy has no such parameter".into()));
            };
            if !(d.lo.is_finite() && d.hi.is_finite()) {
                return Err(err(format!("{}..{} is not a finite range", d.lo, d.hi)));
            }
            if d.lo > d.hi {
                return Err(err(format!(
                    "{}..{}: the lower end exceeds the upper",
                    d.lo, d.hi
                )));
            }
            if d.scale == Scale::Log && d.lo <= 0.0 {
                return Err(err(format!(
                    "{}..{}: a logarithmic range must be positive",
                    d.lo, d.hi
                )));
            }
            if d.integer && (d.lo.fract() != 0.0 || d.hi.fract() != 0.0) {
                return Err(err(format!(
                    "{}..{}: an integer parameter needs integer ends",
                    d.lo, d.hi
                )));
            }
            let finite = d
                .specials
                .iter()
                .filter(|v| !matches!(v, Value::Inf))
                .map(|v| v.as_f64());
            for x in [d.lo, d.hi].into_iter().chain(finite) {
                let below = f.min.is_some_and(|m| x < bound_f64(m));
                let above = f.max.is_some_and(|m| x > bound_f64(m));
                if below || above {
                    return Err(err(format!(
                        "{x} is outside the parameter's declared range {}",
                        f.range()
                    )));
                }
            }
        }
        Ok(())
    }

    /// Draws one candidate (an arm per dimension).
    pub fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> Vec<Arm> {
        self.dims.iter().map(|d| d.draw(rng)).collect()
    }

    /// The values of a candidate's arms.
    pub fn values(&self, arms: &[Arm]) -> Vec<Value> {
        self.dims
            .iter()
            .zip(arms)
            .map(|(d, &a)| d.value(a))
            .collect()
    }

    /// The arms of a candidate's values (see [`Dim::arm_of`]).
    pub fn arms_of(&self, values: &[Value]) -> Vec<Arm> {
        self.dims
            .iter()
            .zip(values)
            .map(|(d, &v)| d.arm_of(v))
            .collect()
    }

    /// Draws one candidate's values.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Vec<Value> {
        let arms = self.draw(rng);
        self.values(&arms)
    }

    /// Whether every value lies in its dimension.
    pub fn contains(&self, values: &[Value]) -> bool {
        values.len() == self.dims.len() && self.dims.iter().zip(values).all(|(d, &v)| d.contains(v))
    }

    /// Replaces the numeric range of `field` by `lo..=hi` (specials kept), checked by a
    /// later [`Space::validate`].
    pub fn narrow(&mut self, field: &str, lo: f64, hi: f64) -> Result<(), SpaceError> {
        let Some(d) = self.dims.iter_mut().find(|d| d.field == field) else {
            return Err(SpaceError {
                field: field.to_string(),
                message: "not a tuned parameter of this policy".into(),
            });
        };
        d.lo = lo;
        d.hi = hi;
        Ok(())
    }

    /// Removes `field` (its value fixed elsewhere); whether it was there.
    pub fn fix(&mut self, field: &str) -> bool {
        let before = self.dims.len();
        self.dims.retain(|d| d.field != field);
        self.dims.len() != before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static SPECIALS: [Value; 2] = [Value::Int(-1), Value::Inf];

    fn dim() -> Dim {
        Dim {
            field: "x",
            lo: 1.0,
            hi: 1000.0,
            integer: true,
            scale: Scale::Log,
            specials: &SPECIALS,
            source: "test",
        }
    }

    #[test]
    fn the_ends_of_a_log_range_are_reached_and_never_passed() {
        let d = dim();
        assert_eq!(d.at(0.0), Value::Int(1));
        assert_eq!(d.at(1.0), Value::Int(1000));
        assert_eq!(d.at(0.5), Value::Int(32)); // sqrt(1000) = 31.6
        assert_eq!(d.at(7.0), Value::Int(1000));
    }

    #[test]
    fn arm_of_gives_back_the_value_of_a_special_or_a_range_value() {
        let d = dim();
        assert_eq!(d.arm_of(Value::Inf), Arm::Special(1));
        assert_eq!(d.arm_of(Value::Int(-1)), Arm::Special(0));
        for v in [1, 32, 150, 1000] {
            assert_eq!(d.value(d.arm_of(Value::Int(v))), Value::Int(v), "{v}");
        }
    }

    #[test]
    fn position_inverts_at_on_the_range_scale() {
        let d = dim();
        for u in [0.0, 0.25, 0.5, 0.9, 1.0] {
            let v = d.at(u).as_f64();
            assert!((d.position(v) - u).abs() < 0.01, "{u}");
        }
    }
}
