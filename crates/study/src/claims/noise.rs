//! Run-to-run noise in a claim's verdict: every quantity a claim checks is a mean of
//! trials, so it is an interval, and a verdict is one of three: the whole interval says
//! yes (held), the whole interval says no (not held), or it says both (within noise).
//!
//! Intervals are Student-t intervals of the means at the claim's level (0.99 unless the
//! claim asks otherwise, as LaRowe, Ellis & Kaplan report their runs). A quantity derived
//! from two means (a difference, a ratio, a speedup) takes every value its operands'
//! intervals allow (interval arithmetic): so "a ratio above 1" is significant exactly
//! when the two means' intervals are disjoint, the rule a `compare` uses, and a derived
//! interval is never narrower than the data allow.

use super::Order;

/// The confidence level of a claim that names none.
pub const DEFAULT_LEVEL: f64 = 0.99;

/// A claim's verdict before it is stated (see [`super::Status`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The whole interval supports the claim.
    Held,
    /// The whole interval contradicts it.
    NotHeld,
    /// Part of the interval supports it and part contradicts it.
    WithinNoise,
}

impl Verdict {
    /// The verdict of a claim that must hold at every one of several points: not held
    /// if it is not held at one, held if held at all, within noise otherwise. Held for
    /// no point at all (callers refuse an empty set of points before).
    pub fn all(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
        let mut out = Verdict::Held;
        for v in verdicts {
            match v {
                Verdict::NotHeld => return Verdict::NotHeld,
                Verdict::WithinNoise => out = Verdict::WithinNoise,
                Verdict::Held => {}
            }
        }
        out
    }

    /// `Held` when `yes`, else `NotHeld`: a verdict that noise does not reach (a fact of
    /// the configuration, or a comparison of point values).
    pub fn from_bool(yes: bool) -> Verdict {
        if yes {
            Verdict::Held
        } else {
            Verdict::NotHeld
        }
    }

    /// The verdict of a test on the points of an interval, given whether its every point
    /// passes and whether any does.
    pub fn of_points(every: bool, any: bool) -> Verdict {
        match (every, any) {
            (true, _) => Verdict::Held,
            (false, false) => Verdict::NotHeld,
            (false, true) => Verdict::WithinNoise,
        }
    }
}

/// A mean with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The mean (or the quantity derived from means).
    pub mean: f64,
    /// The interval's lower end.
    pub lo: f64,
    /// The interval's upper end.
    pub hi: f64,
}

impl Estimate {
    /// The mean of `values` with its Student-t interval at `level`; `None` with fewer
    /// than two values (one run says nothing of its noise).
    pub fn of(values: &[f64], level: f64) -> Option<Estimate> {
        let mean = crate::stats::mean(values)?;
        let half = crate::stats::ci_half_width(values, level)?;
        Some(Estimate {
            mean,
            lo: mean - half,
            hi: mean + half,
        })
    }

    /// An exact value: an interval of one point.
    pub fn exact(value: f64) -> Estimate {
        Estimate {
            mean: value,
            lo: value,
            hi: value,
        }
    }

    /// `self - other`, every point of one interval against every point of the other.
    pub fn minus(self, other: Estimate) -> Estimate {
        Estimate {
            mean: self.mean - other.mean,
            lo: self.lo - other.hi,
            hi: self.hi - other.lo,
        }
    }

    /// `self / den`, every point of one interval over every point of the other;
    /// unbounded when the denominator's interval reaches 0, `None` when its mean is 0.
    pub fn over(self, den: Estimate) -> Option<Estimate> {
        if den.mean == 0.0 {
            return None;
        }
        let mean = self.mean / den.mean;
        if den.lo <= 0.0 && 0.0 <= den.hi {
            return Some(Estimate {
                mean,
                lo: f64::NEG_INFINITY,
                hi: f64::INFINITY,
            });
        }
        let q = [
            self.lo / den.lo,
            self.lo / den.hi,
            self.hi / den.lo,
            self.hi / den.hi,
        ];
        Some(Estimate {
            mean,
            lo: q.iter().copied().fold(f64::INFINITY, f64::min),
            hi: q.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }

    /// Whether every point of the interval is the same.
    pub fn is_exact(&self) -> bool {
        self.lo == self.hi
    }

    /// Whether the interval lies within [`lo`, `hi`] (inclusive; a missing bound is
    /// none): held when all of it does, not held when none of it does.
    pub fn within(&self, lo: Option<f64>, hi: Option<f64>) -> Verdict {
        let low = lo.unwrap_or(f64::NEG_INFINITY);
        let high = hi.unwrap_or(f64::INFINITY);
        let every = low <= self.lo && self.hi <= high;
        let any = self.lo <= high && low <= self.hi;
        Verdict::of_points(every, any)
    }

    /// Whether `self` stands to `other` as `expect` says: held when the two intervals
    /// are disjoint in that order, not held when they are disjoint the other way (or
    /// both are the same exact value: the two are equal, not ordered), within noise
    /// when they overlap.
    pub fn ordered(&self, other: &Estimate, expect: Order) -> Verdict {
        let (small, large) = match expect {
            Order::Less => (self, other),
            Order::Greater => (other, self),
        };
        if small.hi < large.lo {
            Verdict::Held
        } else if large.hi < small.lo || (self.is_exact() && other.is_exact()) {
            Verdict::NotHeld
        } else {
            Verdict::WithinNoise
        }
    }

    /// Whether two intervals share a point.
    pub fn overlaps(&self, other: &Estimate) -> bool {
        self.lo <= other.hi && other.lo <= self.hi
    }

    /// `[lo, hi]` for a claim's detail.
    pub fn range(&self) -> String {
        use crate::value::fmt_num;
        format!("[{}, {}]", fmt_num(self.lo), fmt_num(self.hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(mean: f64, half: f64) -> Estimate {
        Estimate {
            mean,
            lo: mean - half,
            hi: mean + half,
        }
    }

    #[test]
    fn one_value_has_no_interval() {
        assert_eq!(Estimate::of(&[3.0], 0.99), None);
    }

    #[test]
    fn identical_values_have_a_zero_width_interval() {
        assert_eq!(Estimate::of(&[3.0, 3.0], 0.99), Some(est(3.0, 0.0)));
    }

    #[test]
    fn an_interval_inside_the_bounds_is_held() {
        assert_eq!(est(5.0, 1.0).within(Some(3.0), Some(7.0)), Verdict::Held);
    }

    #[test]
    fn an_interval_outside_the_bounds_is_not_held() {
        assert_eq!(est(5.0, 1.0).within(Some(6.5), None), Verdict::NotHeld);
    }

    #[test]
    fn an_interval_across_a_bound_is_within_noise() {
        assert_eq!(est(5.0, 1.0).within(None, Some(5.5)), Verdict::WithinNoise);
    }

    #[test]
    fn disjoint_intervals_in_the_expected_order_hold() {
        assert_eq!(
            est(1.0, 0.4).ordered(&est(2.0, 0.4), Order::Less),
            Verdict::Held
        );
    }

    #[test]
    fn disjoint_intervals_in_the_other_order_are_not_held() {
        assert_eq!(
            est(1.0, 0.4).ordered(&est(2.0, 0.4), Order::Greater),
            Verdict::NotHeld
        );
    }

    #[test]
    fn overlapping_intervals_are_within_noise_whichever_mean_is_smaller() {
        assert_eq!(
            est(1.0, 0.6).ordered(&est(2.0, 0.6), Order::Less),
            Verdict::WithinNoise
        );
        assert_eq!(
            est(1.0, 0.6).ordered(&est(2.0, 0.6), Order::Greater),
            Verdict::WithinNoise
        );
    }

    #[test]
    fn two_equal_exact_values_are_not_ordered() {
        assert_eq!(
            est(2.0, 0.0).ordered(&est(2.0, 0.0), Order::Less),
            Verdict::NotHeld
        );
    }

    #[test]
    fn a_difference_adds_the_half_widths() {
        assert_eq!(est(5.0, 1.0).minus(est(2.0, 0.5)), est(3.0, 1.5));
    }

    #[test]
    fn a_ratio_spans_the_quotients_of_the_intervals_ends() {
        let r = est(10.0, 1.0).over(est(5.0, 0.5)).unwrap();
        assert_eq!((r.mean, r.lo, r.hi), (2.0, 9.0 / 5.5, 11.0 / 4.5));
    }

    #[test]
    fn a_ratio_over_an_interval_reaching_zero_is_unbounded() {
        let r = est(10.0, 1.0).over(est(1.0, 1.0)).unwrap();
        assert!(r.lo.is_infinite() && r.hi.is_infinite(), "{r:?}");
    }

    #[test]
    fn a_ratio_is_significant_above_one_exactly_when_the_intervals_are_disjoint() {
        let (a, b) = (est(12.0, 1.0), est(10.0, 0.9));
        let r = a.over(b).unwrap();
        assert_eq!(r.within(Some(1.0), None), Verdict::Held);
        assert_eq!(a.ordered(&b, Order::Greater), Verdict::Held);
        let (a, b) = (est(12.0, 1.0), est(10.0, 1.1));
        let r = a.over(b).unwrap();
        assert_eq!(r.within(Some(1.0), None), Verdict::WithinNoise);
        assert_eq!(a.ordered(&b, Order::Greater), Verdict::WithinNoise);
    }

    #[test]
    fn all_points_held_hold_one_not_held_fails_else_within_noise() {
        use Verdict::*;
        assert_eq!(Verdict::all([Held, Held]), Held);
        assert_eq!(Verdict::all([Held, WithinNoise]), WithinNoise);
        assert_eq!(Verdict::all([WithinNoise, NotHeld, Held]), NotHeld);
    }
}
