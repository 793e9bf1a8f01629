//! Claims: named, checkable statements over the records of a study, e.g.
//! "the daemon is at least 10% slower with 2 KB pages".

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::store::Record;
use crate::value::{compare_values, fmt_num, label, toml_to_json};

/// Kind of claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimKind {
    /// mean(left) / mean(right) lies within [`at_least`, `at_most`].
    Ratio,
    /// mean(left) is less (or greater) than mean(right), per `expect`.
    Compare,
    /// At each value of `over`, mean(left)/mean(right) (or mean(left) alone
    /// when there is no `right`) forms an increasing/decreasing sequence.
    Trend,
    /// mean(left) lies within [`at_least`, `at_most`].
    Value,
}

/// Direction of a comparison (`compare`) or a trend (`trend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Expect {
    /// left < right.
    #[serde(alias = "<")]
    Less,
    /// left > right.
    #[serde(alias = ">")]
    Greater,
    /// The sequence increases strictly.
    Increasing,
    /// The sequence decreases strictly.
    Decreasing,
}

/// A set of runs and the metric taken from them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Operand {
    /// Selector: configuration field (dotted) → required value.
    #[serde(default, rename = "where")]
    pub selector: BTreeMap<String, toml::Value>,
    /// Metric (dotted path into results); defaults to the study's metric.
    #[serde(default)]
    pub metric: Option<String>,
}

/// A claim as written in `paper.toml` (`[[claim]]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// Short unique name.
    pub name: String,
    /// The statement in words (usually quoting the paper).
    #[serde(default)]
    pub text: String,
    /// Name of the study (spec `name`) whose records are checked.
    pub study: String,
    /// Kind of check.
    pub kind: ClaimKind,
    /// Left operand (the only one for `value`).
    pub left: Operand,
    /// Right operand (`ratio`, `compare`; optional for `trend`).
    #[serde(default)]
    pub right: Option<Operand>,
    /// Lower bound (inclusive) for `ratio` and `value`.
    #[serde(default)]
    pub at_least: Option<f64>,
    /// Upper bound (inclusive) for `ratio` and `value`.
    #[serde(default)]
    pub at_most: Option<f64>,
    /// `less`/`greater` for `compare`, `increasing`/`decreasing` for `trend`.
    #[serde(default)]
    pub expect: Option<Expect>,
    /// Axis field a `trend` runs over.
    #[serde(default)]
    pub over: Option<String>,
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

/// Checks a claim's shape (required fields for its kind); `Err` names the
/// problem.
pub fn validate(claim: &Claim) -> Result<(), String> {
    let need_right = matches!(claim.kind, ClaimKind::Ratio | ClaimKind::Compare);
    if need_right && claim.right.is_none() {
        return Err(format!("a {:?} claim needs `right`", claim.kind).to_lowercase());
    }
    if matches!(claim.kind, ClaimKind::Ratio | ClaimKind::Value)
        && claim.at_least.is_none()
        && claim.at_most.is_none()
    {
        return Err("needs `at_least` and/or `at_most`".into());
    }
    match claim.kind {
        ClaimKind::Compare => match claim.expect {
            Some(Expect::Less | Expect::Greater) => {}
            _ => return Err("a compare claim needs `expect = \"less\"` or `\"greater\"`".into()),
        },
        ClaimKind::Trend => {
            match claim.expect {
                Some(Expect::Increasing | Expect::Decreasing) => {}
                _ => {
                    return Err(
                        "a trend claim needs `expect = \"increasing\"` or `\"decreasing\"`".into(),
                    )
                }
            }
            if claim.over.is_none() {
                return Err("a trend claim needs `over` (an axis field)".into());
            }
        }
        _ => {}
    }
    Ok(())
}

/// Evaluates a claim over a study's records; `default_metric` is used by
/// operands that name none.
pub fn evaluate(claim: &Claim, records: &[Record], default_metric: &str) -> ClaimResult {
    let mut values = Vec::new();
    let status_detail = (|| -> Result<(bool, String), String> {
        validate(claim)?;
        let lm = claim.left.metric.as_deref().unwrap_or(default_metric);
        match claim.kind {
            ClaimKind::Value => {
                let (l, n) = operand_mean(records, &claim.left, &[], default_metric)?;
                values.push(("left".to_string(), l));
                let ok = within(l, claim.at_least, claim.at_most);
                Ok((
                    ok,
                    format!(
                        "mean {} = {} (n={n}), expected {}",
                        describe(&claim.left, lm),
                        fmt_num(l),
                        bounds_text(claim.at_least, claim.at_most)
                    ),
                ))
            }
            ClaimKind::Ratio | ClaimKind::Compare => {
                let right = claim.right.as_ref().ok_or("missing right")?;
                let rm = right.metric.as_deref().unwrap_or(default_metric);
                let (l, nl) = operand_mean(records, &claim.left, &[], default_metric)?;
                let (r, nr) = operand_mean(records, right, &[], default_metric)?;
                values.push(("left".to_string(), l));
                values.push(("right".to_string(), r));
                let base = format!(
                    "left {} = {} (n={nl}); right {} = {} (n={nr})",
                    describe(&claim.left, lm),
                    fmt_num(l),
                    describe(right, rm),
                    fmt_num(r)
                );
                if claim.kind == ClaimKind::Compare {
                    let ok = match claim.expect {
                        Some(Expect::Less) => l < r,
                        _ => l > r,
                    };
                    let want = if claim.expect == Some(Expect::Less) {
                        "<"
                    } else {
                        ">"
                    };
                    return Ok((ok, format!("{base}; expected left {want} right")));
                }
                if r == 0.0 {
                    return Err("right mean is 0; ratio undefined".into());
                }
                let ratio = l / r;
                values.push(("ratio".to_string(), ratio));
                Ok((
                    within(ratio, claim.at_least, claim.at_most),
                    format!(
                        "{base}; ratio {} expected {}",
                        fmt_num(ratio),
                        bounds_text(claim.at_least, claim.at_most)
                    ),
                ))
            }
            ClaimKind::Trend => {
                let over = claim.over.as_deref().ok_or("missing over")?;
                // Values of the `over` field among the left runs, ascending.
                let left_sel = selector_json(&claim.left);
                let mut xs: Vec<Value> = Vec::new();
                for r in records.iter().filter(|r| r.matches(&left_sel)) {
                    if let Some(v) = r.field(over) {
                        if !xs.iter().any(|x| crate::value::values_equal(x, &v)) {
                            xs.push(v);
                        }
                    }
                }
                xs.sort_by(compare_values);
                if xs.len() < 2 {
                    return Err(format!(
                        "a trend needs at least 2 values of `{over}` among the left runs, found {}",
                        xs.len()
                    ));
                }
                let mut seq = Vec::new();
                for x in &xs {
                    let at = [(over.to_string(), x.clone())];
                    let (l, _) = operand_mean(records, &claim.left, &at, default_metric)?;
                    let y = match &claim.right {
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
                let increasing = claim.expect == Some(Expect::Increasing);
                let ok = seq
                    .windows(2)
                    .all(|w| if increasing { w[1] > w[0] } else { w[1] < w[0] });
                let what = if claim.right.is_some() {
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
    })();
    let (status, detail) = match status_detail {
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
