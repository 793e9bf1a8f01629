//! Claims: named, checkable statements over the records of a study, e.g.
//! "the daemon is at least 10% slower with 2 KB pages".

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod eval;
mod noise;
mod read;

pub use eval::{evaluate, evaluate_reported};
pub use noise::{Estimate, Verdict, DEFAULT_LEVEL};

/// Kind of claim: the value of its `kind` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimKind {
    /// See [`RatioCheck`].
    Ratio,
    /// A difference within bounds (the fields of [`RatioCheck`]).
    Difference,
    /// See [`CompareCheck`].
    Compare,
    /// See [`TrendCheck`].
    Trend,
    /// See [`ValueCheck`].
    Value,
    /// See [`SpeedupCheck`].
    Speedup,
    /// See [`ReportedCheck`].
    Reported,
    /// See [`IntervalsCheck`].
    Intervals,
    /// See [`CurveCheck`].
    Curve,
}

/// Which side is expected to be smaller (`compare`, `speedup`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// left < right.
    #[serde(alias = "<")]
    Less,
    /// left > right.
    #[serde(alias = ">")]
    Greater,
}

/// Direction of a `trend` (strictly at every step) or of a `curve`'s measure across
/// curves (never against it at any step, and the last unlike the first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// The sequence increases.
    Increasing,
    /// The sequence decreases.
    Decreasing,
}

/// How two confidence intervals stand (`intervals`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Overlap {
    /// They share at least one point: the difference of the means is not significant at
    /// that level (the paper's reading).
    Overlap,
    /// They share none.
    Disjoint,
}

/// What a `curve` claim measures on each curve (the means of `left` at each value of its
/// `over` axis).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Measure {
    /// The value of `over` where the mean is least, among those in [`x_from`, `x_to`].
    /// Where several tie, `at` holds if it is one of them (no value does better), bounds
    /// only if every one is within them, and a direction across curves takes the first.
    Argmin,
    /// The largest mean among the values of `over` in [`x_from`, `x_to`] over the least
    /// mean of the whole curve: 1 where every value in the range is the best, and the
    /// depth of the curve (max / min) without a range.
    WorstOverBest,
}

/// A set of runs and the metric taken from them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Operand {
    /// Selector: configuration field (dotted) → required value.
    #[serde(default, rename = "where")]
    pub selector: BTreeMap<String, toml::Value>,
    /// Metric (dotted path into results); defaults to the study's metric.
    #[serde(default)]
    pub metric: Option<String>,
}

/// A claim as written in `paper.toml` (`[[claim]]`): the fields every claim has,
/// and beside them, under `kind`, the fields of its check.
// Deserialized by hand (see `read`), so that errors in the check keep their path and
// line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Claim {
    /// Short unique name.
    pub name: String,
    /// The statement in words (usually quoting the paper).
    pub text: String,
    /// Name of the study (spec `name`) whose records are checked.
    pub study: String,
    /// Why the statement gets no verdict, when it gets none: its window is not in the
    /// paper's words, or the paper has no such quantity. Its numbers are still printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observation: Option<String>,
    /// What is checked.
    #[serde(flatten)]
    pub check: Check,
}

/// What a claim checks: one variant per `kind`, holding exactly the fields that kind
/// takes, so a missing field or one of another kind is refused when the file is read.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Check {
    /// `kind = "ratio"`.
    Ratio(RatioCheck),
    /// `kind = "difference"`: mean(left) - mean(right) within the bounds, in the metric's
    /// unit (for a paper that states an absolute difference, "less than two seconds more").
    Difference(RatioCheck),
    /// `kind = "compare"`.
    Compare(CompareCheck),
    /// `kind = "trend"`.
    Trend(TrendCheck),
    /// `kind = "value"`.
    Value(ValueCheck),
    /// `kind = "speedup"`.
    Speedup(SpeedupCheck),
    /// `kind = "reported"`.
    Reported(ReportedCheck),
    /// `kind = "intervals"`.
    Intervals(IntervalsCheck),
    /// `kind = "curve"`.
    Curve(CurveCheck),
}

/// mean(left) / mean(right) lies within [`at_least`, `at_most`] (`ratio`), or
/// mean(left) - mean(right) does (`difference`); with `over`, so at every value of that
/// axis among left's runs (those listed in `values`, when given). An operand whose own
/// selector names the axis keeps its value there: a fixed baseline (e.g. `type = "None"`)
/// beside each value of `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatioCheck {
    /// Numerator runs (default: all runs).
    #[serde(default)]
    pub left: Operand,
    /// Denominator runs.
    pub right: Operand,
    /// Axis field at each of whose values the bounds must hold (e.g. every workload),
    /// instead of once over the means of all selected runs.
    #[serde(default)]
    pub over: Option<String>,
    /// With `over`: the values of the axis checked (default: every value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<toml::Value>>,
    /// Lower bound (inclusive).
    #[serde(default)]
    pub at_least: Option<f64>,
    /// Upper bound (inclusive).
    #[serde(default)]
    pub at_most: Option<f64>,
}

/// mean(left) is less (or greater) than mean(right), per `expect`; with `over`, so at
/// every value of that axis among left's runs (from `from` on, and those listed in
/// `values`, when given). An operand whose own selector names the axis keeps its value
/// there, as in [`RatioCheck`]. With `confidence`, each order must also be significant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareCheck {
    /// Left runs (default: all runs).
    #[serde(default)]
    pub left: Operand,
    /// Right runs.
    pub right: Operand,
    /// How left stands to right.
    pub expect: Order,
    /// Axis field at each of whose values the order must hold (e.g. every processor
    /// count), instead of once over the means of all selected runs.
    #[serde(default)]
    pub over: Option<String>,
    /// With `over`: the smallest value of the axis checked.
    #[serde(default)]
    pub from: Option<toml::Value>,
    /// With `over`: the values of the axis checked (default: every value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<toml::Value>>,
    /// The level of the Student-t confidence intervals of the two means (default 0.99):
    /// the order holds when they are disjoint in it, fails when they are disjoint the
    /// other way, and is within noise when they overlap. Each side needs two runs or more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
}

/// At each value of `over`, mean(left)/mean(right) (or mean(left) alone when there is
/// no `right`) forms an increasing/decreasing sequence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrendCheck {
    /// Left runs (default: all runs).
    #[serde(default)]
    pub left: Operand,
    /// Right runs, dividing left at each value of `over`.
    #[serde(default)]
    pub right: Option<Operand>,
    /// Axis field the sequence runs over.
    pub over: String,
    /// Direction of the sequence.
    pub expect: Direction,
}

/// mean(left) lies within [`at_least`, `at_most`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValueCheck {
    /// Runs (default: all runs).
    #[serde(default)]
    pub left: Operand,
    /// Lower bound (inclusive).
    #[serde(default)]
    pub at_least: Option<f64>,
    /// Upper bound (inclusive).
    #[serde(default)]
    pub at_most: Option<f64>,
}

/// Speedup along `over`: mean at the smallest value of `over` divided by the mean at
/// `at`. Without `right`, left's speedup lies within [`at_least`, `at_most`]; with
/// `right`, left's speedup is greater/less than right's (`expect`) or their ratio lies
/// within the bounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpeedupCheck {
    /// Runs whose speedup is taken (default: all runs).
    #[serde(default)]
    pub left: Operand,
    /// Runs whose speedup left's is compared with.
    #[serde(default)]
    pub right: Option<Operand>,
    /// Axis field the speedup runs along.
    pub over: String,
    /// The value of `over` at which the speedup is taken (e.g. 16 processors).
    pub at: toml::Value,
    /// Lower bound (inclusive) of left's speedup, or of its ratio to right's.
    #[serde(default)]
    pub at_least: Option<f64>,
    /// Upper bound (inclusive) of left's speedup, or of its ratio to right's.
    #[serde(default)]
    pub at_most: Option<f64>,
    /// How left's speedup stands to right's, when there are no bounds.
    #[serde(default)]
    pub expect: Option<Order>,
}

/// The Student-t confidence intervals of the means of left and right (at `confidence`)
/// overlap, or are disjoint, per `expect`; with `over`, so at every value of that axis
/// among left's runs (those listed in `values`, when given).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntervalsCheck {
    /// Left runs (default: all runs).
    #[serde(default)]
    pub left: Operand,
    /// Right runs.
    pub right: Operand,
    /// How the intervals stand.
    pub expect: Overlap,
    /// Confidence level of the intervals (default 0.99).
    #[serde(default)]
    pub confidence: Option<f64>,
    /// Axis field at each of whose values the intervals are compared.
    #[serde(default)]
    pub over: Option<String>,
    /// With `over`: the values of the axis compared (default: every value).
    #[serde(default)]
    pub values: Option<Vec<toml::Value>>,
}

/// A measure of the curve of left's means over the axis `over` (see [`Measure`]) lies
/// within bounds, or equals `at`; with `across`, one curve per value of that field (those
/// in `values`, when given), each of which must satisfy it, or whose measures must move
/// in the direction `expect` from one value of `across` to the next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurveCheck {
    /// The runs of the curve(s) (default: all runs).
    #[serde(default)]
    pub left: Operand,
    /// The curve's x: a field whose values are the points of the curve (numbers, and
    /// strings such as `"inf"` after every number).
    pub over: String,
    /// What is measured.
    pub measure: Measure,
    /// Smallest value of `over` the measure looks at (default: the first).
    #[serde(default)]
    pub x_from: Option<toml::Value>,
    /// Largest value of `over` the measure looks at (default: the last).
    #[serde(default)]
    pub x_to: Option<toml::Value>,
    /// A field with one curve per value (e.g. the workload, or an operation cost).
    #[serde(default)]
    pub across: Option<String>,
    /// With `across`: the values of `across` whose curves are measured (default: all).
    #[serde(default)]
    pub values: Option<Vec<toml::Value>>,
    /// For `argmin`: the value of `over` where the least mean must be.
    #[serde(default)]
    pub at: Option<toml::Value>,
    /// Lower bound (inclusive) of the measure; an `argmin` at a string value (`"inf"`) is
    /// outside any numeric bound.
    #[serde(default)]
    pub at_least: Option<f64>,
    /// Upper bound (inclusive) of the measure.
    #[serde(default)]
    pub at_most: Option<f64>,
    /// With `across`: how the measure moves from one curve to the next.
    #[serde(default)]
    pub expect: Option<Direction>,
}

/// Every `[[reported]]` number of the paper for this study whose `table` is the
/// claim's `table` matches ours: within `tolerance` (absolute), or, with
/// `lower_metric`/`upper_metric`, between our values of those metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportedCheck {
    /// The `table` of the reported numbers checked.
    pub table: String,
    /// Largest absolute difference allowed.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// Metric of our lower bound (with `upper_metric`).
    #[serde(default)]
    pub lower_metric: Option<String>,
    /// Metric of our upper bound (a missing value: unbounded).
    #[serde(default)]
    pub upper_metric: Option<String>,
}

impl Check {
    /// The `kind` of the check.
    pub fn kind(&self) -> ClaimKind {
        match self {
            Check::Ratio(_) => ClaimKind::Ratio,
            Check::Difference(_) => ClaimKind::Difference,
            Check::Compare(_) => ClaimKind::Compare,
            Check::Trend(_) => ClaimKind::Trend,
            Check::Value(_) => ClaimKind::Value,
            Check::Speedup(_) => ClaimKind::Speedup,
            Check::Reported(_) => ClaimKind::Reported,
            Check::Intervals(_) => ClaimKind::Intervals,
            Check::Curve(_) => ClaimKind::Curve,
        }
    }
}

/// A check whose fields are each well formed but say nothing checkable together:
/// what the types cannot require (one of two optional fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// A ratio or value claim without bounds.
    #[error("needs `at_least` and/or `at_most`")]
    Unbounded,
    /// A speedup claim with neither `right` nor bounds.
    #[error("a speedup claim without `right` needs `at_least` and/or `at_most`")]
    UnboundedSpeedup,
    /// A speedup claim with `right` but neither `expect` nor bounds.
    #[error("a speedup claim with `right` needs `expect` (less/greater) or bounds")]
    SpeedupWithoutComparison,
    /// A reported claim with neither `tolerance` nor a metric to bound by.
    #[error("a reported claim needs `tolerance` or `lower_metric`/`upper_metric`")]
    ReportedWithoutMeasure,
    /// A compare claim with `from` but no `over`.
    #[error("a compare claim's `from` needs `over`")]
    FromWithoutOver,
    /// A ratio, difference, compare or intervals claim with `values` but no `over`.
    #[error("a claim's `values` needs `over`")]
    ValuesWithoutOver,
    /// A confidence level outside (0, 1).
    #[error("`confidence` must lie strictly between 0 and 1")]
    BadConfidence,
    /// A curve claim that asks nothing of its measure.
    #[error("a curve claim needs `at`, `at_least`/`at_most`, or `expect` with `across`")]
    CurveWithoutExpectation,
    /// A curve claim whose `expect` or `values` has no `across`.
    #[error("a curve claim's `expect` and `values` need `across`")]
    CurveWithoutAcross,
    /// A curve claim with `at` for a measure other than `argmin`.
    #[error("`at` names a value of `over`: only the `argmin` measure has one")]
    AtWithoutArgmin,
}

/// Checks what reading a claim cannot: that it has a bound or a way to compare
/// where its kind needs one of several optional fields.
pub fn validate(claim: &Claim) -> Result<(), ShapeError> {
    let bounded = |lo: Option<f64>, hi: Option<f64>| lo.is_some() || hi.is_some();
    match &claim.check {
        Check::Ratio(c) if !bounded(c.at_least, c.at_most) => Err(ShapeError::Unbounded),
        Check::Difference(c) if !bounded(c.at_least, c.at_most) => Err(ShapeError::Unbounded),
        Check::Value(c) if !bounded(c.at_least, c.at_most) => Err(ShapeError::Unbounded),
        Check::Speedup(c) if !bounded(c.at_least, c.at_most) => match (&c.right, c.expect) {
            (None, _) => Err(ShapeError::UnboundedSpeedup),
            (Some(_), None) => Err(ShapeError::SpeedupWithoutComparison),
            (Some(_), Some(_)) => Ok(()),
        },
        Check::Compare(c) if c.from.is_some() && c.over.is_none() => {
            Err(ShapeError::FromWithoutOver)
        }
        Check::Compare(c) if c.values.is_some() && c.over.is_none() => {
            Err(ShapeError::ValuesWithoutOver)
        }
        Check::Ratio(c) | Check::Difference(c) if c.values.is_some() && c.over.is_none() => {
            Err(ShapeError::ValuesWithoutOver)
        }
        Check::Reported(c)
            if c.tolerance.is_none() && c.lower_metric.is_none() && c.upper_metric.is_none() =>
        {
            Err(ShapeError::ReportedWithoutMeasure)
        }
        Check::Intervals(c) if c.values.is_some() && c.over.is_none() => {
            Err(ShapeError::ValuesWithoutOver)
        }
        Check::Intervals(c) if c.confidence.is_some_and(|l| !(l > 0.0 && l < 1.0)) => {
            Err(ShapeError::BadConfidence)
        }
        Check::Compare(c) if c.confidence.is_some_and(|l| !(l > 0.0 && l < 1.0)) => {
            Err(ShapeError::BadConfidence)
        }
        Check::Curve(c) if c.at.is_some() && c.measure != Measure::Argmin => {
            Err(ShapeError::AtWithoutArgmin)
        }
        Check::Curve(c) if (c.expect.is_some() || c.values.is_some()) && c.across.is_none() => {
            Err(ShapeError::CurveWithoutAcross)
        }
        Check::Curve(c)
            if c.at.is_none() && !bounded(c.at_least, c.at_most) && c.expect.is_none() =>
        {
            Err(ShapeError::CurveWithoutExpectation)
        }
        _ => Ok(()),
    }
}

/// A reported number as a `reported` claim sees it.
#[derive(Debug, Clone)]
pub struct ReportedPoint {
    /// Where in the paper.
    pub table: String,
    /// Selector of our runs.
    pub selector: Vec<(String, Value)>,
    /// Metric compared.
    pub metric: String,
    /// The paper's value.
    pub value: f64,
    /// The statistic of our runs compared with it.
    pub statistic: crate::stats::Statistic,
    /// The confidence level of an interval statistic.
    pub confidence: f64,
}

/// Outcome of a claim.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Status {
    /// The records support the claim beyond their noise.
    Held,
    /// The records contradict the claim beyond their noise.
    NotHeld,
    /// The records' intervals allow both: the claim is neither supported nor contradicted.
    WithinNoise,
    /// A statement with no verdict (see [`Claim::observation`]).
    Observation,
    /// The claim could not be evaluated (e.g. a selector matched nothing).
    Error(String),
}

/// A claim with its outcome and the numbers behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClaimResult {
    /// Claim name.
    pub name: String,
    /// Claim statement.
    pub text: String,
    /// Study checked.
    pub study: String,
    /// Why the statement has no verdict, for an observation.
    pub observation: Option<String>,
    /// Outcome.
    pub status: Status,
    /// Named values behind the verdict (means, ratios, ...).
    pub values: Vec<(String, f64)>,
    /// One-line explanation with the numbers.
    pub detail: String,
}

impl ClaimResult {
    /// Whether the claim held.
    pub fn held(&self) -> bool {
        self.status == Status::Held
    }

    /// `held`, `NOT HELD`, `within noise`, `observation` or `ERROR: ...`.
    pub fn verdict(&self) -> String {
        match &self.status {
            Status::Held => "held".to_string(),
            Status::NotHeld => "NOT HELD".to_string(),
            Status::WithinNoise => "within noise".to_string(),
            Status::Observation => "observation".to_string(),
            Status::Error(e) => format!("ERROR: {e}"),
        }
    }
}
