//! Claims: named, checkable statements over the records of a study, e.g.
//! "the daemon is at least 10% slower with 2 KB pages".

use std::collections::BTreeMap;
use std::fmt;

use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeSeed, Deserializer, Error as _, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::store::Record;
use crate::value::{compare_values, fmt_num, label, toml_to_json};

/// Kind of claim: the value of its `kind` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimKind {
    /// See [`RatioCheck`].
    Ratio,
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

/// Direction of a `trend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// The sequence increases strictly.
    Increasing,
    /// The sequence decreases strictly.
    Decreasing,
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Claim {
    /// Short unique name.
    pub name: String,
    /// The statement in words (usually quoting the paper).
    pub text: String,
    /// Name of the study (spec `name`) whose records are checked.
    pub study: String,
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
}

/// mean(left) / mean(right) lies within [`at_least`, `at_most`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatioCheck {
    /// Numerator runs (default: all runs).
    #[serde(default)]
    pub left: Operand,
    /// Denominator runs.
    pub right: Operand,
    /// Lower bound (inclusive).
    #[serde(default)]
    pub at_least: Option<f64>,
    /// Upper bound (inclusive).
    #[serde(default)]
    pub at_most: Option<f64>,
}

/// mean(left) is less (or greater) than mean(right), per `expect`.
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
            Check::Compare(_) => ClaimKind::Compare,
            Check::Trend(_) => ClaimKind::Trend,
            Check::Value(_) => ClaimKind::Value,
            Check::Speedup(_) => ClaimKind::Speedup,
            Check::Reported(_) => ClaimKind::Reported,
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
}

/// Checks what reading a claim cannot: that it has a bound or a way to compare
/// where its kind needs one of several optional fields.
pub fn validate(claim: &Claim) -> Result<(), ShapeError> {
    let bounded = |lo: Option<f64>, hi: Option<f64>| lo.is_some() || hi.is_some();
    match &claim.check {
        Check::Ratio(c) if !bounded(c.at_least, c.at_most) => Err(ShapeError::Unbounded),
        Check::Value(c) if !bounded(c.at_least, c.at_most) => Err(ShapeError::Unbounded),
        Check::Speedup(c) if !bounded(c.at_least, c.at_most) => match (&c.right, c.expect) {
            (None, _) => Err(ShapeError::UnboundedSpeedup),
            (Some(_), None) => Err(ShapeError::SpeedupWithoutComparison),
            (Some(_), Some(_)) => Ok(()),
        },
        Check::Reported(c)
            if c.tolerance.is_none() && c.lower_metric.is_none() && c.upper_metric.is_none() =>
        {
            Err(ShapeError::ReportedWithoutMeasure)
        }
        _ => Ok(()),
    }
}

// Reading a claim. Serde's own internally tagged enums buffer the whole table before
// looking at `kind`, and an error found in the buffer loses its field path and line
// (`at_least = "x"` would be reported as a type error of the claim as a whole). So
// the claim is read by hand up to `kind`, and then the struct of that kind reads the
// rest of the table in place: the struct refuses missing and foreign fields, and the
// TOML parser's path and line reach every error. Keys written before `kind`, other
// than the ones every claim has, are buffered and still checked by the struct.

impl<'de> Deserialize<'de> for Claim {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_struct("Claim", &["name", "text", "study", "kind"], ClaimVisitor)
    }
}

/// The keys of the fields every claim has, whatever its kind.
const COMMON_FIELDS: &[&str] = &["name", "text", "study"];

/// The fields every claim has, as they are met.
#[derive(Default)]
struct Common {
    name: Option<String>,
    text: Option<String>,
    study: Option<String>,
}

impl Common {
    /// Reads the value of `key` if every claim has that field; `false` otherwise.
    fn read<'de, A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
        let slot = match key {
            "name" => &mut self.name,
            "text" => &mut self.text,
            "study" => &mut self.study,
            _ => return Ok(false),
        };
        *slot = Some(map.next_value()?);
        Ok(true)
    }
}

struct ClaimVisitor;

impl<'de> Visitor<'de> for ClaimVisitor {
    type Value = Claim;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct Claim")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Claim, A::Error> {
        let mut common = Common::default();
        let mut early = Vec::new();
        let kind = loop {
            let Some(key) = map.next_key::<String>()? else {
                return Err(A::Error::missing_field("kind"));
            };
            if key == "kind" {
                break map.next_value::<ClaimKind>()?;
            }
            if !common.read(&key, &mut map)? {
                early.push((key, map.next_value::<toml::Value>()?));
            }
        };
        let mut rest = Rest {
            early: early.into_iter(),
            pending: None,
            map,
            common: &mut common,
        };
        let check = match kind {
            ClaimKind::Ratio => Check::Ratio(rest.read()?),
            ClaimKind::Compare => Check::Compare(rest.read()?),
            ClaimKind::Trend => Check::Trend(rest.read()?),
            ClaimKind::Value => Check::Value(rest.read()?),
            ClaimKind::Speedup => Check::Speedup(rest.read()?),
            ClaimKind::Reported => Check::Reported(rest.read()?),
        };
        Ok(Claim {
            name: common.name.ok_or_else(|| A::Error::missing_field("name"))?,
            text: common.text.unwrap_or_default(),
            study: common
                .study
                .ok_or_else(|| A::Error::missing_field("study"))?,
            check,
        })
    }
}

/// The keys of a claim after `kind`, as a map for the struct of its kind: first those
/// buffered before `kind`, then the rest of the table in place, setting aside the
/// fields every claim has.
struct Rest<'c, A> {
    early: std::vec::IntoIter<(String, toml::Value)>,
    pending: Option<(String, toml::Value)>,
    map: A,
    common: &'c mut Common,
}

impl<'de, A: MapAccess<'de>> Rest<'_, A> {
    fn read<T: Deserialize<'de>>(&mut self) -> Result<T, A::Error> {
        T::deserialize(MapAccessDeserializer::new(self))
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Rest<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        if let Some((key, value)) = self.early.next() {
            let field = seed.deserialize(IntoDeserializer::<A::Error>::into_deserializer(
                key.as_str(),
            ))?;
            self.pending = Some((key, value));
            return Ok(Some(field));
        }
        let mut seed = Some(seed);
        loop {
            match self.map.next_key_seed(KeySeed(&mut seed))? {
                None => return Ok(None),
                Some(Key::Field(field)) => return Ok(Some(field)),
                Some(Key::Common(key)) => {
                    self.common.read(&key, &mut self.map)?;
                }
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        match self.pending.take() {
            // A buffered value has no place in the file any more: name its key.
            Some((key, value)) => seed
                .deserialize(value)
                .map_err(|e| A::Error::custom(format_args!("field `{key}`: {}", e.message()))),
            None => self.map.next_value_seed(seed),
        }
    }
}

/// A key of a claim after `kind`: a field every claim has, or one for the struct of
/// its kind (whose key seed is used only then, so it is lent rather than moved).
enum Key<F> {
    Common(String),
    Field(F),
}

struct KeySeed<'s, K>(&'s mut Option<K>);

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'_, K> {
    type Value = Key<K::Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let key = String::deserialize(deserializer)?;
        if COMMON_FIELDS.contains(&key.as_str()) {
            return Ok(Key::Common(key));
        }
        let seed = self
            .0
            .take()
            .ok_or_else(|| D::Error::custom("a key was read twice"))?;
        seed.deserialize(key.into_deserializer()).map(Key::Field)
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
}

/// Outcome of a claim.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Status {
    /// The records support the claim.
    Held,
    /// The records contradict the claim.
    NotHeld,
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

    /// `held`, `NOT HELD` or `ERROR: ...`.
    pub fn verdict(&self) -> String {
        match &self.status {
            Status::Held => "held".to_string(),
            Status::NotHeld => "NOT HELD".to_string(),
            Status::Error(e) => format!("ERROR: {e}"),
        }
    }
}

fn selector_json(op: &Operand) -> Vec<(String, Value)> {
    op.selector
        .iter()
        .map(|(k, v)| (k.clone(), toml_to_json(v)))
        .collect()
}

fn describe(op: &Operand, metric: &str) -> String {
    let sel: Vec<String> = op
        .selector
        .iter()
        .map(|(k, v)| format!("{k}={}", label(&toml_to_json(v))))
        .collect();
    if sel.is_empty() {
        format!("{metric} (all runs)")
    } else {
        format!("{metric} [{}]", sel.join(", "))
    }
}

/// Mean of `op`'s metric over the successful records matching its selector
/// plus `extra`; an error message when nothing matches.
fn operand_mean(
    records: &[Record],
    op: &Operand,
    extra: &[(String, Value)],
    default_metric: &str,
) -> Result<(f64, usize), String> {
    let metric = op.metric.as_deref().unwrap_or(default_metric);
    let mut sel = selector_json(op);
    sel.extend(extra.iter().cloned());
    let matching: Vec<&Record> = records.iter().filter(|r| r.matches(&sel)).collect();
    if matching.is_empty() {
        return Err(format!("no run matches {}", describe(op, metric)));
    }
    let values: Vec<f64> = matching.iter().filter_map(|r| r.metric(metric)).collect();
    match crate::stats::mean(&values) {
        Some(m) => Ok((m, values.len())),
        None => Err(format!(
            "{} run(s) match {} but none succeeded with that metric",
            matching.len(),
            describe(op, metric)
        )),
    }
}

fn within(x: f64, lo: Option<f64>, hi: Option<f64>) -> bool {
    let above = match lo {
        Some(l) => l <= x,
        None => true,
    };
    let below = match hi {
        Some(h) => x <= h,
        None => true,
    };
    above && below
}

fn bounds_text(lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        (Some(l), Some(h)) => format!("in [{}, {}]", fmt_num(l), fmt_num(h)),
        (Some(l), None) => format!(">= {}", fmt_num(l)),
        (None, Some(h)) => format!("<= {}", fmt_num(h)),
        (None, None) => "unbounded".to_string(),
    }
}

/// Whether `l` and `r` stand as `expect` says, and the sign.
fn compared(expect: Order, l: f64, r: f64) -> (bool, &'static str) {
    match expect {
        Order::Less => (l < r, "<"),
        Order::Greater => (l > r, ">"),
    }
}

/// The distinct values of field `over` among the runs `op` selects, ascending.
fn values_of(records: &[Record], op: &Operand, over: &str) -> Vec<Value> {
    let sel = selector_json(op);
    let mut xs: Vec<Value> = Vec::new();
    for r in records.iter().filter(|r| r.matches(&sel)) {
        if let Some(v) = r.field(over) {
            if !xs.iter().any(|x| crate::value::values_equal(x, &v)) {
                xs.push(v);
            }
        }
    }
    xs.sort_by(compare_values);
    xs
}

/// Speedup of `op` along `over`: its mean at the smallest value of `over` among its runs
/// over its mean at `at`.
fn speedup_of(
    records: &[Record],
    op: &Operand,
    over: &str,
    at: &Value,
    default_metric: &str,
) -> Result<(f64, Value), String> {
    let xs = values_of(records, op, over);
    let base = xs
        .first()
        .cloned()
        .ok_or_else(|| format!("no run matches {}", describe(op, default_metric)))?;
    let (b, _) = operand_mean(
        records,
        op,
        &[(over.to_string(), base.clone())],
        default_metric,
    )?;
    let (t, _) = operand_mean(
        records,
        op,
        &[(over.to_string(), at.clone())],
        default_metric,
    )?;
    if t == 0.0 {
        return Err(format!("mean is 0 at {over}={}", label(at)));
    }
    Ok((b / t, base))
}

/// A claim's outcome from its verdict (or the reason it has none).
fn result(
    claim: &Claim,
    outcome: Result<(bool, String), String>,
    values: Vec<(String, f64)>,
) -> ClaimResult {
    let (status, detail) = match outcome {
        Ok((true, d)) => (Status::Held, d),
        Ok((false, d)) => (Status::NotHeld, d),
        Err(e) => (Status::Error(e.clone()), e),
    };
    ClaimResult {
        name: claim.name.clone(),
        text: claim.text.clone(),
        study: claim.study.clone(),
        status,
        values,
        detail,
    }
}

/// Evaluates a `reported` claim against the paper's numbers `points` (those of its study).
pub fn evaluate_reported(
    claim: &Claim,
    points: &[ReportedPoint],
    records: &[Record],
) -> ClaimResult {
    let mut values = Vec::new();
    let outcome = (|| -> Result<(bool, String), String> {
        validate(claim).map_err(|e| e.to_string())?;
        let Check::Reported(check) = &claim.check else {
            return Err(format!(
                "a {:?} claim is not checked against the paper's reported numbers",
                claim.check.kind()
            )
            .to_lowercase());
        };
        let table = check.table.as_str();
        let mine: Vec<&ReportedPoint> = points.iter().filter(|p| p.table == table).collect();
        if mine.is_empty() {
            return Err(format!("no reported number has table `{table}`"));
        }
        let mean_of = |sel: &[(String, Value)], metric: &str| -> Option<f64> {
            let v: Vec<f64> = records
                .iter()
                .filter(|r| r.matches(sel))
                .filter_map(|r| r.metric(metric))
                .collect();
            crate::stats::mean(&v)
        };
        let mut misses = Vec::new();
        for p in &mine {
            let sel: Vec<String> = p
                .selector
                .iter()
                .map(|(k, v)| format!("{k}={}", label(v)))
                .collect();
            let at = sel.join(", ");
            if let Some(tol) = check.tolerance {
                match mean_of(&p.selector, &p.metric) {
                    Some(o) => {
                        values.push((at.clone(), o));
                        if (o - p.value).abs() > tol {
                            misses.push(format!(
                                "[{at}] ours {} vs paper {}",
                                fmt_num(o),
                                fmt_num(p.value)
                            ));
                        }
                    }
                    None => misses.push(format!("[{at}] no value of {}", p.metric)),
                }
            } else {
                let lo = check
                    .lower_metric
                    .as_deref()
                    .and_then(|m| mean_of(&p.selector, m));
                let hi = check
                    .upper_metric
                    .as_deref()
                    .and_then(|m| mean_of(&p.selector, m));
                let ok = lo.is_none_or(|l| l <= p.value)
                    && hi.is_none_or(|h| p.value <= h)
                    && records.iter().any(|r| r.matches(&p.selector));
                if !ok {
                    misses.push(format!(
                        "[{at}] paper {} outside [{}, {}]",
                        fmt_num(p.value),
                        lo.map(fmt_num).unwrap_or_else(|| "-inf".into()),
                        hi.map(fmt_num).unwrap_or_else(|| "inf".into())
                    ));
                }
            }
        }
        let held = misses.is_empty();
        let how = match check.tolerance {
            Some(t) => format!("within {} of ours", fmt_num(t)),
            None => format!(
                "between our {} and {}",
                check.lower_metric.as_deref().unwrap_or("-"),
                check.upper_metric.as_deref().unwrap_or("-")
            ),
        };
        Ok((
            held,
            if held {
                format!("all {} numbers of {table} {how}", mine.len())
            } else {
                format!(
                    "{} of {} numbers of {table} not {how}: {}",
                    misses.len(),
                    mine.len(),
                    misses.join("; ")
                )
            },
        ))
    })();
    result(claim, outcome, values)
}

/// Evaluates a claim over a study's records; `default_metric` is used by
/// operands that name none.
pub fn evaluate(claim: &Claim, records: &[Record], default_metric: &str) -> ClaimResult {
    let mut values = Vec::new();
    let outcome = validate(claim)
        .map_err(|e| e.to_string())
        .and_then(|()| check(&claim.check, records, default_metric, &mut values));
    result(claim, outcome, values)
}

/// The verdict of `check` with its explanation; the numbers behind it go to `values`.
fn check(
    check: &Check,
    records: &[Record],
    default_metric: &str,
    values: &mut Vec<(String, f64)>,
) -> Result<(bool, String), String> {
    match check {
        Check::Value(c) => {
            let lm = c.left.metric.as_deref().unwrap_or(default_metric);
            let (l, n) = operand_mean(records, &c.left, &[], default_metric)?;
            values.push(("left".to_string(), l));
            let ok = within(l, c.at_least, c.at_most);
            Ok((
                ok,
                format!(
                    "mean {} = {} (n={n}), expected {}",
                    describe(&c.left, lm),
                    fmt_num(l),
                    bounds_text(c.at_least, c.at_most)
                ),
            ))
        }
        Check::Ratio(c) => {
            let (l, r, base) = both_means(records, &c.left, &c.right, default_metric, values)?;
            if r == 0.0 {
                return Err("right mean is 0; ratio undefined".into());
            }
            let ratio = l / r;
            values.push(("ratio".to_string(), ratio));
            Ok((
                within(ratio, c.at_least, c.at_most),
                format!(
                    "{base}; ratio {} expected {}",
                    fmt_num(ratio),
                    bounds_text(c.at_least, c.at_most)
                ),
            ))
        }
        Check::Compare(c) => {
            let (l, r, base) = both_means(records, &c.left, &c.right, default_metric, values)?;
            let (ok, want) = compared(c.expect, l, r);
            Ok((ok, format!("{base}; expected left {want} right")))
        }
        Check::Reported(_) => {
            Err("a reported claim is evaluated against the paper's reported numbers".into())
        }
        Check::Speedup(c) => {
            let lm = c.left.metric.as_deref().unwrap_or(default_metric);
            let over = c.over.as_str();
            let at = toml_to_json(&c.at);
            let (l, base) = speedup_of(records, &c.left, over, &at, default_metric)?;
            values.push(("left speedup".to_string(), l));
            let mut detail = format!(
                "left {} speedup {}={} -> {}: {}",
                describe(&c.left, lm),
                over,
                label(&base),
                label(&at),
                fmt_num(l)
            );
            let Some(right) = &c.right else {
                let ok = within(l, c.at_least, c.at_most);
                detail.push_str(&format!(
                    "; expected {}",
                    bounds_text(c.at_least, c.at_most)
                ));
                return Ok((ok, detail));
            };
            let rm = right.metric.as_deref().unwrap_or(default_metric);
            let (r, _) = speedup_of(records, right, over, &at, default_metric)?;
            values.push(("right speedup".to_string(), r));
            detail.push_str(&format!(
                "; right {} speedup {}",
                describe(right, rm),
                fmt_num(r)
            ));
            if c.at_least.is_some() || c.at_most.is_some() {
                if r == 0.0 {
                    return Err("right speedup is 0".into());
                }
                values.push(("ratio".to_string(), l / r));
                detail.push_str(&format!(
                    "; ratio {} expected {}",
                    fmt_num(l / r),
                    bounds_text(c.at_least, c.at_most)
                ));
                return Ok((within(l / r, c.at_least, c.at_most), detail));
            }
            // Without bounds, `validate` made sure there is an `expect`.
            let (ok, want) = compared(c.expect.unwrap_or(Order::Greater), l, r);
            detail.push_str(&format!("; expected left {want} right"));
            Ok((ok, detail))
        }
        Check::Trend(c) => {
            let over = c.over.as_str();
            let xs = values_of(records, &c.left, over);
            if xs.len() < 2 {
                return Err(format!(
                    "a trend needs at least 2 values of `{over}` among the left runs, found {}",
                    xs.len()
                ));
            }
            let mut seq = Vec::new();
            for x in &xs {
                let at = [(over.to_string(), x.clone())];
                let (l, _) = operand_mean(records, &c.left, &at, default_metric)?;
                let y = match &c.right {
                    Some(right) => {
                        let (r, _) = operand_mean(records, right, &at, default_metric)?;
                        if r == 0.0 {
                            return Err(format!("right mean is 0 at {over}={}", label(x)));
                        }
                        l / r
                    }
                    None => l,
                };
                values.push((format!("{over}={}", label(x)), y));
                seq.push(y);
            }
            let increasing = c.expect == Direction::Increasing;
            let ok = seq
                .windows(2)
                .all(|w| if increasing { w[1] > w[0] } else { w[1] < w[0] });
            let what = if c.right.is_some() {
                "left/right"
            } else {
                "left mean"
            };
            let shown: Vec<String> = xs
                .iter()
                .zip(&seq)
                .map(|(x, y)| format!("{}: {}", label(x), fmt_num(*y)))
                .collect();
            Ok((
                ok,
                format!(
                    "{what} over {over}: {}; expected {}",
                    shown.join(", "),
                    if increasing {
                        "increasing"
                    } else {
                        "decreasing"
                    }
                ),
            ))
        }
    }
}

/// The means of `left` and `right` (pushed to `values`) and the sentence giving them.
fn both_means(
    records: &[Record],
    left: &Operand,
    right: &Operand,
    default_metric: &str,
    values: &mut Vec<(String, f64)>,
) -> Result<(f64, f64, String), String> {
    let lm = left.metric.as_deref().unwrap_or(default_metric);
    let rm = right.metric.as_deref().unwrap_or(default_metric);
    let (l, nl) = operand_mean(records, left, &[], default_metric)?;
    let (r, nr) = operand_mean(records, right, &[], default_metric)?;
    values.push(("left".to_string(), l));
    values.push(("right".to_string(), r));
    let base = format!(
        "left {} = {} (n={nl}); right {} = {} (n={nr})",
        describe(left, lm),
        fmt_num(l),
        describe(right, rm),
        fmt_num(r)
    );
    Ok((l, r, base))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(i: usize, nodes: i64, makespan: f64) -> Record {
        let mut settings = serde_json::Map::new();
        settings.insert("machine.nodes".into(), json!(nodes));
        Record {
            id: format!("r{i:06}"),
            index: i,
            seed: 1,
            settings,
            result: json!({ "makespan_ns": makespan }),
            error: None,
            spec_config: Value::Null,
        }
    }

    fn records() -> Vec<Record> {
        vec![rec(0, 1, 100.0), rec(1, 4, 25.0), rec(2, 16, 10.0)]
    }

    fn speedup_claim(at_least: f64) -> Claim {
        toml::from_str(&format!(
            r#"
name = "s"
study = "x"
kind = "speedup"
over = "machine.nodes"
at = 16
at_least = {at_least}
left = {{}}
"#
        ))
        .unwrap()
    }

    #[test]
    fn speedup_is_the_smallest_over_value_mean_over_the_mean_at_the_point() {
        let r = evaluate(&speedup_claim(9.5), &records(), "makespan_ns");
        assert!(r.held(), "{}", r.detail);
        assert_eq!(r.values[0].1, 10.0);
    }

    #[test]
    fn speedup_below_the_bound_is_not_held() {
        let r = evaluate(&speedup_claim(11.0), &records(), "makespan_ns");
        assert_eq!(r.status, Status::NotHeld, "{}", r.detail);
    }

    fn reported_claim(tolerance: f64) -> Claim {
        toml::from_str(&format!(
            r#"
name = "r"
study = "x"
kind = "reported"
table = "Table 1"
tolerance = {tolerance}
"#
        ))
        .unwrap()
    }

    fn paper_point(nodes: i64, value: f64) -> ReportedPoint {
        ReportedPoint {
            table: "Table 1".into(),
            selector: vec![("machine.nodes".into(), json!(nodes))],
            metric: "makespan_ns".into(),
            value,
        }
    }

    #[test]
    fn reported_numbers_within_tolerance_hold() {
        let points = [paper_point(1, 101.0), paper_point(4, 24.5)];
        let r = evaluate_reported(&reported_claim(1.0), &points, &records());
        assert!(r.held(), "{}", r.detail);
    }

    #[test]
    fn one_reported_number_outside_tolerance_fails_the_claim() {
        let points = [paper_point(1, 101.0), paper_point(4, 30.0)];
        let r = evaluate_reported(&reported_claim(1.0), &points, &records());
        assert_eq!(r.status, Status::NotHeld, "{}", r.detail);
        assert!(r.detail.contains("machine.nodes=4"), "{}", r.detail);
    }
}
