//! Evaluating a claim over a study's records.

use serde_json::Value;

use super::{
    validate, Check, Claim, ClaimResult, Direction, Operand, Order, ReportedPoint, Status,
};
use crate::store::Record;
use crate::value::{compare_values, fmt_num, label, toml_to_json};

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
        Check::Difference(c) => {
            let (l, r, base) = both_means(records, &c.left, &c.right, default_metric, values)?;
            let diff = l - r;
            values.push(("difference".to_string(), diff));
            Ok((
                within(diff, c.at_least, c.at_most),
                format!(
                    "{base}; difference {} expected {}",
                    fmt_num(diff),
                    bounds_text(c.at_least, c.at_most)
                ),
            ))
        }
        Check::Compare(c) => {
            let Some(over) = c.over.as_deref() else {
                let (l, r, base) = both_means(records, &c.left, &c.right, default_metric, values)?;
                let (ok, want) = compared(c.expect, l, r);
                return Ok((ok, format!("{base}; expected left {want} right")));
            };
            let from = c.from.as_ref().map(toml_to_json);
            let xs: Vec<Value> = values_of(records, &c.left, over)
                .into_iter()
                .filter(|x| {
                    from.as_ref()
                        .is_none_or(|f| compare_values(x, f) != std::cmp::Ordering::Less)
                })
                .collect();
            if xs.is_empty() {
                return Err(format!("no value of `{over}` to compare at"));
            }
            let mut failed = Vec::new();
            let mut shown = Vec::new();
            let mut want = "";
            for x in &xs {
                let at = [(over.to_string(), x.clone())];
                let (l, _) = operand_mean(records, &c.left, &at, default_metric)?;
                let (r, _) = operand_mean(records, &c.right, &at, default_metric)?;
                values.push((format!("left {over}={}", label(x)), l));
                values.push((format!("right {over}={}", label(x)), r));
                let (ok, w) = compared(c.expect, l, r);
                want = w;
                shown.push(format!("{}: {} vs {}", label(x), fmt_num(l), fmt_num(r)));
                if !ok {
                    failed.push(label(x));
                }
            }
            let lm = c.left.metric.as_deref().unwrap_or(default_metric);
            let rm = c.right.metric.as_deref().unwrap_or(default_metric);
            let mut detail = format!(
                "left {} vs right {} over {over}: {}; expected left {want} right at each",
                describe(&c.left, lm),
                describe(&c.right, rm),
                shown.join(", ")
            );
            if !failed.is_empty() {
                detail.push_str(&format!("; fails at {}", failed.join(", ")));
            }
            Ok((failed.is_empty(), detail))
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
