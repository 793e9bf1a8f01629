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
    /// Speedup along `over`: mean at the smallest value of `over` divided by the mean at
    /// `at`. Without `right`, left's speedup lies within [`at_least`, `at_most`]; with
    /// `right`, left's speedup is greater/less than right's (`expect`) or their ratio lies
    /// within the bounds.
    Speedup,
    /// Every `[[reported]]` number of the paper for this study whose `table` is the
    /// claim's `table` matches ours: within `tolerance` (absolute), or, with
    /// `lower_metric`/`upper_metric`, between our values of those metrics.
    Reported,
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
    /// Left operand (the only one for `value`; unused by `reported`).
    #[serde(default)]
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
    /// Axis field a `trend` or `speedup` runs over.
    #[serde(default)]
    pub over: Option<String>,
    /// The value of `over` at which a `speedup` is taken (e.g. 16 processors).
    #[serde(default)]
    pub at: Option<toml::Value>,
    /// The `table` of the reported numbers a `reported` claim checks.
    #[serde(default)]
    pub table: Option<String>,
    /// Largest absolute difference a `reported` claim allows.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// Metric of our lower bound for a `reported` claim (with `upper_metric`).
    #[serde(default)]
    pub lower_metric: Option<String>,
    /// Metric of our upper bound for a `reported` claim (a missing value: unbounded).
    #[serde(default)]
    pub upper_metric: Option<String>,
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
        ClaimKind::Speedup => {
            if claim.over.is_none() || claim.at.is_none() {
                return Err("a speedup claim needs `over` (an axis field) and `at`".into());
            }
            let bounded = claim.at_least.is_some() || claim.at_most.is_some();
            if claim.right.is_none() && !bounded {
                return Err(
                    "a speedup claim without `right` needs `at_least` and/or `at_most`".into(),
                );
            }
            if claim.right.is_some()
                && !bounded
                && !matches!(claim.expect, Some(Expect::Less | Expect::Greater))
            {
                return Err(
                    "a speedup claim with `right` needs `expect` (less/greater) or bounds".into(),
                );
            }
        }
        ClaimKind::Reported => {
            if claim.table.is_none() {
                return Err("a reported claim needs `table`".into());
            }
            let range = claim.lower_metric.is_some() || claim.upper_metric.is_some();
            if claim.tolerance.is_none() && !range {
                return Err(
                    "a reported claim needs `tolerance` or `lower_metric`/`upper_metric`".into(),
                );
            }
        }
        _ => {}
    }
    Ok(())
}

/// Whether `l` and `r` stand as `expect` says (`less`, otherwise greater), and the sign.
fn compared(expect: Option<Expect>, l: f64, r: f64) -> (bool, &'static str) {
    if expect == Some(Expect::Less) {
        (l < r, "<")
    } else {
        (l > r, ">")
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

/// Evaluates a `reported` claim against the paper's numbers `points` (those of its study).
pub fn evaluate_reported(
    claim: &Claim,
    points: &[ReportedPoint],
    records: &[Record],
) -> ClaimResult {
    let mut values = Vec::new();
    let outcome = (|| -> Result<(bool, String), String> {
        validate(claim)?;
        let table = claim.table.as_deref().unwrap_or("");
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
            if let Some(tol) = claim.tolerance {
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
                let lo = claim
                    .lower_metric
                    .as_deref()
                    .and_then(|m| mean_of(&p.selector, m));
                let hi = claim
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
        let how = match claim.tolerance {
            Some(t) => format!("within {} of ours", fmt_num(t)),
            None => format!(
                "between our {} and {}",
                claim.lower_metric.as_deref().unwrap_or("-"),
                claim.upper_metric.as_deref().unwrap_or("-")
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
                    let (ok, want) = compared(claim.expect, l, r);
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
            ClaimKind::Reported => {
                Err("a reported claim is evaluated against the paper's reported numbers".into())
            }
            ClaimKind::Speedup => {
                let over = claim.over.as_deref().ok_or("missing over")?;
                let at = toml_to_json(claim.at.as_ref().ok_or("missing at")?);
                let (l, base) = speedup_of(records, &claim.left, over, &at, default_metric)?;
                values.push(("left speedup".to_string(), l));
                let mut detail = format!(
                    "left {} speedup {}={} -> {}: {}",
                    describe(&claim.left, lm),
                    over,
                    label(&base),
                    label(&at),
                    fmt_num(l)
                );
                let Some(right) = &claim.right else {
                    let ok = within(l, claim.at_least, claim.at_most);
                    detail.push_str(&format!(
                        "; expected {}",
                        bounds_text(claim.at_least, claim.at_most)
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
                if claim.at_least.is_some() || claim.at_most.is_some() {
                    if r == 0.0 {
                        return Err("right speedup is 0".into());
                    }
                    values.push(("ratio".to_string(), l / r));
                    detail.push_str(&format!(
                        "; ratio {} expected {}",
                        fmt_num(l / r),
                        bounds_text(claim.at_least, claim.at_most)
                    ));
                    return Ok((within(l / r, claim.at_least, claim.at_most), detail));
                }
                let (ok, want) = compared(claim.expect, l, r);
                detail.push_str(&format!("; expected left {want} right"));
                Ok((ok, detail))
            }
            ClaimKind::Trend => {
                let over = claim.over.as_deref().ok_or("missing over")?;
                let xs = values_of(records, &claim.left, over);
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
left = {{}}
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
