//! Evaluating a claim over a study's records.

use serde_json::Value;

use std::cmp::Ordering;

use super::{
    validate, Check, Claim, ClaimResult, CurveCheck, Direction, IntervalsCheck, Measure, Operand,
    Order, Overlap, RatioCheck, ReportedPoint, Status,
};
use crate::store::Record;
use crate::value::{as_f64, compare_values, fmt_num, label, toml_to_json, values_equal};

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

/// `op`'s metric over the successful records matching its selector plus `extra`; an
/// error message when nothing matches or no matching run has the metric.
fn operand_values(
    records: &[Record],
    op: &Operand,
    extra: &[(String, Value)],
    default_metric: &str,
) -> Result<Vec<f64>, String> {
    let metric = op.metric.as_deref().unwrap_or(default_metric);
    let mut sel = selector_json(op);
    // A field the operand selects itself keeps its value (a fixed baseline beside each
    // value of an axis).
    let extra: Vec<(String, Value)> = extra
        .iter()
        .filter(|(k, _)| !op.selector.contains_key(k))
        .cloned()
        .collect();
    sel.extend(extra.iter().cloned());
    let matching: Vec<&Record> = records.iter().filter(|r| r.matches(&sel)).collect();
    let what = || {
        let mut text = describe(op, metric);
        for (k, v) in &extra {
            text.push_str(&format!(" at {k}={}", label(v)));
        }
        text
    };
    if matching.is_empty() {
        return Err(format!("no run matches {}", what()));
    }
    let values: Vec<f64> = matching.iter().filter_map(|r| r.metric(metric)).collect();
    if values.is_empty() {
        return Err(format!(
            "{} run(s) match {} but none succeeded with that metric",
            matching.len(),
            what()
        ));
    }
    Ok(values)
}

/// Mean of `op`'s metric over the successful records matching its selector
/// plus `extra`; an error message when nothing matches.
fn operand_mean(
    records: &[Record],
    op: &Operand,
    extra: &[(String, Value)],
    default_metric: &str,
) -> Result<(f64, usize), String> {
    let values = operand_values(records, op, extra, default_metric)?;
    let m = crate::stats::mean(&values).unwrap_or(f64::NAN);
    Ok((m, values.len()))
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
    values_where(records, &selector_json(op), over)
}

/// The distinct values of field `over` among the runs matching `sel`, ascending.
fn values_where(records: &[Record], sel: &[(String, Value)], over: &str) -> Vec<Value> {
    let mut xs: Vec<Value> = Vec::new();
    for r in records.iter().filter(|r| r.matches(sel)) {
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
        let values_of = |sel: &[(String, Value)], metric: &str| -> Vec<f64> {
            records
                .iter()
                .filter(|r| r.matches(sel))
                .filter_map(|r| r.metric(metric))
                .collect()
        };
        let mean_of = |sel: &[(String, Value)], metric: &str| -> Option<f64> {
            crate::stats::mean(&values_of(sel, metric))
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
                match p
                    .statistic
                    .of(&values_of(&p.selector, &p.metric), p.confidence)
                {
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
        Check::Ratio(c) | Check::Difference(c) if c.over.is_some() => {
            let difference = matches!(check, Check::Difference(_));
            ratio_over(records, c, difference, default_metric, values)
        }
        Check::Intervals(c) => intervals(records, c, default_metric, values),
        Check::Curve(c) => curve(records, c, default_metric, values),
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
                let (apart, noise) = significance(records, c, &[], default_metric)?;
                return Ok((
                    ok && apart,
                    format!("{base}{noise}; expected left {want} right"),
                ));
            };
            let from = c.from.as_ref().map(toml_to_json);
            let xs: Vec<Value> = axis_values(records, &c.left, over, c.values.as_deref())?
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
                let (apart, noise) = significance(records, c, &at, default_metric)?;
                want = w;
                shown.push(format!(
                    "{}: {} vs {}{noise}",
                    label(x),
                    fmt_num(l),
                    fmt_num(r)
                ));
                if !(ok && apart) {
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

/// The values of `over` to check: those among `op`'s runs, restricted to `only` when
/// given (each of which must be there).
fn axis_values(
    records: &[Record],
    op: &Operand,
    over: &str,
    only: Option<&[toml::Value]>,
) -> Result<Vec<Value>, String> {
    let mut xs = values_of(records, op, over);
    if let Some(only) = only {
        let want: Vec<Value> = only.iter().map(toml_to_json).collect();
        if let Some(w) = want.iter().find(|w| !xs.iter().any(|x| values_equal(x, w))) {
            return Err(format!("no run has {over}={}", label(w)));
        }
        xs.retain(|x| want.iter().any(|w| values_equal(x, w)));
    }
    if xs.is_empty() {
        return Err(format!("no value of `{over}` to check at"));
    }
    Ok(xs)
}

/// A `ratio` or `difference` with `over`: the bounds must hold at every value of the axis.
fn ratio_over(
    records: &[Record],
    c: &RatioCheck,
    difference: bool,
    default_metric: &str,
    values: &mut Vec<(String, f64)>,
) -> Result<(bool, String), String> {
    let over = c.over.as_deref().unwrap_or_default();
    let xs = axis_values(records, &c.left, over, c.values.as_deref())?;
    let what = if difference { "difference" } else { "ratio" };
    let (mut shown, mut failed) = (Vec::new(), Vec::new());
    for x in &xs {
        let at = [(over.to_string(), x.clone())];
        let (l, _) = operand_mean(records, &c.left, &at, default_metric)?;
        let (r, _) = operand_mean(records, &c.right, &at, default_metric)?;
        let y = if difference {
            l - r
        } else if r == 0.0 {
            return Err(format!(
                "right mean is 0 at {over}={}; ratio undefined",
                label(x)
            ));
        } else {
            l / r
        };
        values.push((format!("{what} {over}={}", label(x)), y));
        shown.push(format!(
            "{}: {} vs {}, {what} {}",
            label(x),
            fmt_num(l),
            fmt_num(r),
            fmt_num(y)
        ));
        if !within(y, c.at_least, c.at_most) {
            failed.push(label(x));
        }
    }
    let lm = c.left.metric.as_deref().unwrap_or(default_metric);
    let rm = c.right.metric.as_deref().unwrap_or(default_metric);
    let mut detail = format!(
        "left {} vs right {} over {over}: {}; {what} expected {} at each",
        describe(&c.left, lm),
        describe(&c.right, rm),
        shown.join("; "),
        bounds_text(c.at_least, c.at_most)
    );
    if !failed.is_empty() {
        detail.push_str(&format!("; fails at {}", failed.join(", ")));
    }
    Ok((failed.is_empty(), detail))
}

/// An `intervals` claim: the confidence intervals of left's and right's means overlap or
/// not, at each value of `over` (or once).
fn intervals(
    records: &[Record],
    c: &IntervalsCheck,
    default_metric: &str,
    values: &mut Vec<(String, f64)>,
) -> Result<(bool, String), String> {
    let level = c.confidence.unwrap_or(0.99);
    let points: Vec<Option<Value>> = match c.over.as_deref() {
        None => vec![None],
        Some(over) => axis_values(records, &c.left, over, c.values.as_deref())?
            .into_iter()
            .map(Some)
            .collect(),
    };
    let interval = |op: &Operand, extra: &[(String, Value)]| -> Result<(f64, f64), String> {
        let v = operand_values(records, op, extra, default_metric)?;
        let m = crate::stats::mean(&v).unwrap_or(f64::NAN);
        let h = crate::stats::ci_half_width(&v, level).ok_or_else(|| {
            format!(
                "a confidence interval needs two runs or more; {} has {}",
                describe(op, op.metric.as_deref().unwrap_or(default_metric)),
                v.len()
            )
        })?;
        Ok((m - h, m + h))
    };
    let want = c.expect == Overlap::Overlap;
    let (mut shown, mut failed) = (Vec::new(), Vec::new());
    for x in &points {
        let extra: Vec<(String, Value)> = match (x, c.over.as_deref()) {
            (Some(x), Some(over)) => vec![(over.to_string(), x.clone())],
            _ => Vec::new(),
        };
        let (l0, l1) = interval(&c.left, &extra)?;
        let (r0, r1) = interval(&c.right, &extra)?;
        let overlap = l0 <= r1 && r0 <= l1;
        let at = x
            .as_ref()
            .map(|x| format!("{}: ", label(x)))
            .unwrap_or_default();
        for (name, v) in [
            ("left low", l0),
            ("left high", l1),
            ("right low", r0),
            ("right high", r1),
        ] {
            values.push((format!("{at}{name}"), v));
        }
        shown.push(format!(
            "{at}[{}, {}] vs [{}, {}] {}",
            fmt_num(l0),
            fmt_num(l1),
            fmt_num(r0),
            fmt_num(r1),
            if overlap { "overlap" } else { "disjoint" }
        ));
        if overlap != want {
            failed.push(x.as_ref().map(label).unwrap_or_else(|| "the means".into()));
        }
    }
    let lm = c.left.metric.as_deref().unwrap_or(default_metric);
    let rm = c.right.metric.as_deref().unwrap_or(default_metric);
    let mut detail = format!(
        "{}% intervals of left {} vs right {}: {}; expected {}",
        fmt_num(level * 100.0),
        describe(&c.left, lm),
        describe(&c.right, rm),
        shown.join("; "),
        if want { "overlap" } else { "disjoint" }
    );
    if !failed.is_empty() {
        detail.push_str(&format!("; fails at {}", failed.join(", ")));
    }
    Ok((failed.is_empty(), detail))
}

/// One curve's measure: the x of its least mean (`argmin`) or a ratio of means.
enum Measured {
    At(Value),
    Ratio(f64),
}

impl Measured {
    fn cmp(&self, other: &Measured) -> Ordering {
        match (self, other) {
            (Measured::At(a), Measured::At(b)) => compare_values(a, b),
            (Measured::Ratio(a), Measured::Ratio(b)) => a.total_cmp(b),
            _ => Ordering::Equal,
        }
    }

    fn number(&self) -> Option<f64> {
        match self {
            Measured::At(x) => as_f64(x),
            Measured::Ratio(r) => Some(*r),
        }
    }

    fn text(&self) -> String {
        match self {
            Measured::At(x) => label(x),
            Measured::Ratio(r) => fmt_num(*r),
        }
    }
}

/// A `curve` claim: the measure of each curve (one per value of `across`, or one).
fn curve(
    records: &[Record],
    c: &CurveCheck,
    default_metric: &str,
    values: &mut Vec<(String, f64)>,
) -> Result<(bool, String), String> {
    let over = c.over.as_str();
    let curves: Vec<Option<Value>> = match c.across.as_deref() {
        None => vec![None],
        Some(across) => axis_values(records, &c.left, across, c.values.as_deref())?
            .into_iter()
            .map(Some)
            .collect(),
    };
    let from = c.x_from.as_ref().map(toml_to_json);
    let to = c.x_to.as_ref().map(toml_to_json);
    let in_range = |x: &Value| {
        from.as_ref()
            .is_none_or(|f| compare_values(x, f) != Ordering::Less)
            && to
                .as_ref()
                .is_none_or(|t| compare_values(x, t) != Ordering::Greater)
    };
    let at = c.at.as_ref().map(toml_to_json);
    let mut measured = Vec::new();
    let (mut shown, mut failed) = (Vec::new(), Vec::new());
    for g in &curves {
        let base: Vec<(String, Value)> = match (g, c.across.as_deref()) {
            (Some(g), Some(across)) => vec![(across.to_string(), g.clone())],
            _ => Vec::new(),
        };
        let mut sel = selector_json(&c.left);
        sel.extend(base.iter().cloned());
        let mut points = Vec::new();
        for x in values_where(records, &sel, over) {
            let mut extra = base.clone();
            extra.push((over.to_string(), x.clone()));
            let (m, _) = operand_mean(records, &c.left, &extra, default_metric)?;
            points.push((x, m));
        }
        let name = g.as_ref().map(label).unwrap_or_else(|| "curve".into());
        let best = points
            .iter()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .ok_or_else(|| format!("{name}: no value of `{over}`"))?;
        let ranged: Vec<&(Value, f64)> = points.iter().filter(|p| in_range(&p.0)).collect();
        // The values of `over` whose mean is the least in the range (several when tied).
        let mut least: Vec<&Value> = Vec::new();
        let (m, text) = match c.measure {
            Measure::Argmin => {
                let low = ranged
                    .iter()
                    .min_by(|a, b| a.1.total_cmp(&b.1))
                    .ok_or_else(|| format!("{name}: no value of `{over}` in the range"))?;
                least = ranged
                    .iter()
                    .filter(|p| p.1 == low.1)
                    .map(|p| &p.0)
                    .collect();
                let text = format!(
                    "{name}: least mean {} at {over}={}",
                    fmt_num(low.1),
                    least
                        .iter()
                        .map(|x| label(x))
                        .collect::<Vec<_>>()
                        .join(" and ")
                );
                (Measured::At(low.0.clone()), text)
            }
            Measure::WorstOverBest => {
                let worst = ranged
                    .iter()
                    .max_by(|a, b| a.1.total_cmp(&b.1))
                    .ok_or_else(|| format!("{name}: no value of `{over}` in the range"))?;
                if best.1 == 0.0 {
                    return Err(format!("{name}: the least mean is 0"));
                }
                let r = worst.1 / best.1;
                let text = format!(
                    "{name}: worst {} at {over}={} over best {} at {}: {}",
                    fmt_num(worst.1),
                    label(&worst.0),
                    fmt_num(best.1),
                    label(&best.0),
                    fmt_num(r)
                );
                (Measured::Ratio(r), text)
            }
        };
        if let Some(v) = m.number() {
            values.push((name.clone(), v));
        }
        let mut ok = true;
        // A tie at the least mean: `at` holds when it is among them (no value does
        // better), bounds only when every one of them is within.
        if let Some(at) = &at {
            ok &= least.iter().any(|x| values_equal(x, at));
        }
        if c.at_least.is_some() || c.at_most.is_some() {
            ok &= match c.measure {
                Measure::Argmin => least
                    .iter()
                    .all(|x| as_f64(x).is_some_and(|v| within(v, c.at_least, c.at_most))),
                Measure::WorstOverBest => {
                    m.number().is_some_and(|v| within(v, c.at_least, c.at_most))
                }
            };
        }
        if !ok {
            failed.push(name.clone());
        }
        shown.push(text);
        measured.push((name, m));
    }
    let mut expected = Vec::new();
    if let Some(at) = &at {
        expected.push(format!("the least mean at {over}={}", label(at)));
    }
    if c.at_least.is_some() || c.at_most.is_some() {
        expected.push(format!("a measure {}", bounds_text(c.at_least, c.at_most)));
    }
    let mut held = failed.is_empty();
    if let Some(dir) = c.expect {
        let want = match dir {
            Direction::Increasing => Ordering::Greater,
            Direction::Decreasing => Ordering::Less,
        };
        let steady = measured
            .windows(2)
            .all(|w| w[1].1.cmp(&w[0].1) != want.reverse());
        let net = match (measured.first(), measured.last()) {
            (Some(a), Some(b)) => b.1.cmp(&a.1) == want,
            _ => false,
        };
        if !(steady && net) {
            held = false;
            failed.push(format!(
                "the sequence {}",
                measured
                    .iter()
                    .map(|(_, m)| m.text())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        expected.push(format!(
            "{} across {} (never {} from one to the next, {} at the end)",
            if want == Ordering::Greater {
                "increasing"
            } else {
                "decreasing"
            },
            c.across.as_deref().unwrap_or_default(),
            if want == Ordering::Greater {
                "falling"
            } else {
                "rising"
            },
            if want == Ordering::Greater {
                "higher"
            } else {
                "lower"
            }
        ));
    }
    let lm = c.left.metric.as_deref().unwrap_or(default_metric);
    let range = match (&from, &to) {
        (None, None) => String::new(),
        _ => format!(
            " in [{}, {}]",
            from.as_ref().map(label).unwrap_or_else(|| "first".into()),
            to.as_ref().map(label).unwrap_or_else(|| "last".into())
        ),
    };
    let mut detail = format!(
        "{} of {} over {over}{range}: {}; expected {}",
        match c.measure {
            Measure::Argmin => "argmin",
            Measure::WorstOverBest => "worst over best",
        },
        describe(&c.left, lm),
        shown.join("; "),
        expected.join(" and ")
    );
    if !failed.is_empty() {
        detail.push_str(&format!("; fails at {}", failed.join(", ")));
    }
    Ok((held, detail))
}

/// The means of `left` and `right` (pushed to `values`) and the sentence giving them.
/// For a `compare` with `confidence`: whether the Student-t intervals of left's and
/// right's means at that level (at the point `extra`) are disjoint, and a note of their
/// half-widths for the detail. Without `confidence`: `(true, "")`.
fn significance(
    records: &[Record],
    c: &super::CompareCheck,
    extra: &[(String, Value)],
    default_metric: &str,
) -> Result<(bool, String), String> {
    let Some(level) = c.confidence else {
        return Ok((true, String::new()));
    };
    let interval = |op: &Operand| -> Result<(f64, f64), String> {
        let v = operand_values(records, op, extra, default_metric)?;
        let m = crate::stats::mean(&v).unwrap_or(f64::NAN);
        let h = crate::stats::ci_half_width(&v, level).ok_or_else(|| {
            format!(
                "a significant difference needs two runs or more a side; {} has {}",
                describe(op, op.metric.as_deref().unwrap_or(default_metric)),
                v.len()
            )
        })?;
        Ok((m, h))
    };
    let (l, hl) = interval(&c.left)?;
    let (r, hr) = interval(&c.right)?;
    let apart = (l - r).abs() > hl + hr;
    let note = format!(
        " (±{}, ±{} at {}%{})",
        fmt_num(hl),
        fmt_num(hr),
        fmt_num(level * 100.0),
        if apart { "" } else { ": within noise" }
    );
    Ok((apart, note))
}

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
            statistic: Default::default(),
            confidence: 0.99,
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
