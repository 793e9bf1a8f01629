//! Evaluating a claim over a study's records.

use serde_json::Value;

use std::cmp::Ordering;

use super::noise::{Estimate, Verdict, DEFAULT_LEVEL};
use super::{
    validate, Check, Claim, ClaimResult, CompareCheck, CurveCheck, Direction, IntervalsCheck,
    Measure, Operand, Order, Overlap, RatioCheck, ReportedPoint, Status,
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

/// The fields of `extra` that `op` does not select itself: an operand's own selector keeps
/// its value (a fixed baseline beside each value of an axis).
fn extra_of<'a>(op: &Operand, extra: &'a [(String, Value)]) -> Vec<&'a (String, Value)> {
    extra
        .iter()
        .filter(|(k, _)| !op.selector.contains_key(k))
        .collect()
}

/// `op` at the point `extra`, for a message.
fn operand_text(op: &Operand, metric: &str, extra: &[(String, Value)]) -> String {
    let mut text = describe(op, metric);
    for (k, v) in extra_of(op, extra) {
        text.push_str(&format!(" at {k}={}", label(v)));
    }
    text
}

/// The successful records matching `op`'s selector plus `extra`, each with its value of
/// `op`'s metric; an error message when nothing matches or no matching run has the metric.
fn operand_runs<'r>(
    records: &'r [Record],
    op: &Operand,
    extra: &[(String, Value)],
    default_metric: &str,
) -> Result<Vec<(&'r Record, f64)>, String> {
    let metric = op.metric.as_deref().unwrap_or(default_metric);
    let mut sel = selector_json(op);
    sel.extend(extra_of(op, extra).into_iter().cloned());
    let matching: Vec<&Record> = records.iter().filter(|r| r.matches(&sel)).collect();
    if matching.is_empty() {
        return Err(format!(
            "no run matches {}",
            operand_text(op, metric, extra)
        ));
    }
    let runs: Vec<(&Record, f64)> = matching
        .iter()
        .filter_map(|r| Some((*r, r.metric(metric)?)))
        .collect();
    if runs.is_empty() {
        return Err(format!(
            "{} run(s) match {} but none succeeded with that metric",
            matching.len(),
            operand_text(op, metric, extra)
        ));
    }
    Ok(runs)
}

/// The estimate of `op`'s metric over the successful records matching its selector plus
/// `extra` (its mean, and its interval at `level`), and the number of runs; an error
/// message when nothing matches or a configuration has fewer than two runs.
///
/// Runs of several configurations (an operand that pools, e.g. "the t32 and t16 runs")
/// are the mean of each configuration's mean weighted by its runs (the pooled mean), with
/// the interval the configurations' intervals give that mean: their ends weighted alike.
/// The spread between configurations is no noise.
fn operand_estimate(
    records: &[Record],
    op: &Operand,
    extra: &[(String, Value)],
    default_metric: &str,
    level: f64,
) -> Result<(Estimate, usize), String> {
    let metric = op.metric.as_deref().unwrap_or(default_metric);
    // The runs' values by configuration (their settings), in the order first met.
    let mut groups: Vec<(&serde_json::Map<String, Value>, Vec<f64>)> = Vec::new();
    for (r, v) in operand_runs(records, op, extra, default_metric)? {
        match groups.iter_mut().find(|(s, _)| **s == r.settings) {
            Some((_, vs)) => vs.push(v),
            None => groups.push((&r.settings, vec![v])),
        }
    }
    let n: usize = groups.iter().map(|(_, vs)| vs.len()).sum();
    let mut e = Estimate::exact(0.0);
    for (settings, vs) in &groups {
        let g = Estimate::of(vs, level).ok_or_else(|| {
            let mut what = operand_text(op, metric, extra);
            if groups.len() > 1 {
                let at: Vec<String> = settings
                    .iter()
                    .map(|(k, v)| format!("{k}={}", label(v)))
                    .collect();
                what.push_str(&format!(" ({})", at.join(", ")));
            }
            format!(
                "an interval needs two runs or more; {what} has {} (the study's trials)",
                vs.len()
            )
        })?;
        let w = vs.len() as f64 / n as f64;
        e = Estimate {
            mean: e.mean + w * g.mean,
            lo: e.lo + w * g.lo,
            hi: e.hi + w * g.hi,
        };
    }
    Ok((e, n))
}

fn bounds_text(lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        (Some(l), Some(h)) => format!("in [{}, {}]", fmt_num(l), fmt_num(h)),
        (Some(l), None) => format!(">= {}", fmt_num(l)),
        (None, Some(h)) => format!("<= {}", fmt_num(h)),
        (None, None) => "unbounded".to_string(),
    }
}

/// The sign `expect` asks of left against right.
fn sign(expect: Order) -> &'static str {
    match expect {
        Order::Less => "<",
        Order::Greater => ">",
    }
}

/// A number and its interval for a claim's detail: `m [lo, hi]`, or `m` when exact.
fn shown(e: &Estimate) -> String {
    if e.is_exact() {
        fmt_num(e.mean)
    } else {
        format!("{} {}", fmt_num(e.mean), e.range())
    }
}

/// How a verdict reads after the numbers in a claim's detail.
fn noise_note(v: Verdict) -> &'static str {
    match v {
        Verdict::WithinNoise => " (within noise)",
        _ => "",
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
/// over its mean at `at`, with the interval their intervals allow.
fn speedup_of(
    records: &[Record],
    op: &Operand,
    over: &str,
    at: &Value,
    default_metric: &str,
    level: f64,
) -> Result<(Estimate, Value), String> {
    let xs = values_of(records, op, over);
    let base = xs
        .first()
        .cloned()
        .ok_or_else(|| format!("no run matches {}", describe(op, default_metric)))?;
    let (b, _) = operand_estimate(
        records,
        op,
        &[(over.to_string(), base.clone())],
        default_metric,
        level,
    )?;
    let (t, _) = operand_estimate(
        records,
        op,
        &[(over.to_string(), at.clone())],
        default_metric,
        level,
    )?;
    let s = b
        .over(t)
        .ok_or_else(|| format!("mean is 0 at {over}={}", label(at)))?;
    Ok((s, base))
}

/// A claim's outcome from its verdict (or the reason it has none). A claim marked as an
/// observation keeps its numbers and has no verdict.
fn result(
    claim: &Claim,
    outcome: Result<(Verdict, String), String>,
    values: Vec<(String, f64)>,
) -> ClaimResult {
    let (status, detail) = match outcome {
        Err(e) => (Status::Error(e.clone()), e),
        Ok((_, d)) if claim.observation.is_some() => (Status::Observation, d),
        Ok((Verdict::Held, d)) => (Status::Held, d),
        Ok((Verdict::NotHeld, d)) => (Status::NotHeld, d),
        Ok((Verdict::WithinNoise, d)) => (Status::WithinNoise, d),
    };
    ClaimResult {
        name: claim.name.clone(),
        text: claim.text.clone(),
        study: claim.study.clone(),
        observation: claim.observation.clone(),
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
    let outcome = (|| -> Result<(Verdict, String), String> {
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
            Verdict::from_bool(held),
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
) -> Result<(Verdict, String), String> {
    let level = DEFAULT_LEVEL;
    match check {
        Check::Value(c) => {
            let lm = c.left.metric.as_deref().unwrap_or(default_metric);
            let (l, n) = operand_estimate(records, &c.left, &[], default_metric, level)?;
            values.push(("left".to_string(), l.mean));
            let v = l.within(c.at_least, c.at_most);
            Ok((
                v,
                format!(
                    "mean {} = {} (n={n}){}, expected {}",
                    describe(&c.left, lm),
                    shown(&l),
                    noise_note(v),
                    bounds_text(c.at_least, c.at_most)
                ),
            ))
        }
        Check::Ratio(c) | Check::Difference(c) => {
            let difference = matches!(check, Check::Difference(_));
            ratio(records, c, difference, default_metric, level, values)
        }
        Check::Intervals(c) => intervals(records, c, default_metric, values),
        Check::Curve(c) => curve(records, c, default_metric, level, values),
        Check::Compare(c) => compare(records, c, default_metric, values),
        Check::Reported(_) => {
            Err("a reported claim is evaluated against the paper's reported numbers".into())
        }
        Check::Speedup(c) => {
            let lm = c.left.metric.as_deref().unwrap_or(default_metric);
            let over = c.over.as_str();
            let at = toml_to_json(&c.at);
            let (l, base) = speedup_of(records, &c.left, over, &at, default_metric, level)?;
            values.push(("left speedup".to_string(), l.mean));
            let mut detail = format!(
                "left {} speedup {}={} -> {}: {}",
                describe(&c.left, lm),
                over,
                label(&base),
                label(&at),
                shown(&l)
            );
            let Some(right) = &c.right else {
                let v = l.within(c.at_least, c.at_most);
                detail.push_str(&format!(
                    "{}; expected {}",
                    noise_note(v),
                    bounds_text(c.at_least, c.at_most)
                ));
                return Ok((v, detail));
            };
            let rm = right.metric.as_deref().unwrap_or(default_metric);
            let (r, _) = speedup_of(records, right, over, &at, default_metric, level)?;
            values.push(("right speedup".to_string(), r.mean));
            detail.push_str(&format!(
                "; right {} speedup {}",
                describe(right, rm),
                shown(&r)
            ));
            if c.at_least.is_some() || c.at_most.is_some() {
                let q = l.over(r).ok_or("right speedup is 0")?;
                values.push(("ratio".to_string(), q.mean));
                let v = q.within(c.at_least, c.at_most);
                detail.push_str(&format!(
                    "; ratio {}{} expected {}",
                    shown(&q),
                    noise_note(v),
                    bounds_text(c.at_least, c.at_most)
                ));
                return Ok((v, detail));
            }
            // Without bounds, `validate` made sure there is an `expect`.
            let expect = c.expect.unwrap_or(Order::Greater);
            let v = l.ordered(&r, expect);
            detail.push_str(&format!(
                "{}; expected left {} right",
                noise_note(v),
                sign(expect)
            ));
            Ok((v, detail))
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
                let (l, _) = operand_estimate(records, &c.left, &at, default_metric, level)?;
                let y = match &c.right {
                    Some(right) => {
                        let (r, _) = operand_estimate(records, right, &at, default_metric, level)?;
                        l.over(r)
                            .ok_or_else(|| format!("right mean is 0 at {over}={}", label(x)))?
                    }
                    None => l,
                };
                values.push((format!("{over}={}", label(x)), y.mean));
                seq.push(y);
            }
            let increasing = c.expect == Direction::Increasing;
            // Each step must rise (fall) beyond the noise of both its ends.
            let step = if increasing {
                Order::Less
            } else {
                Order::Greater
            };
            let v = Verdict::all(seq.windows(2).map(|w| w[0].ordered(&w[1], step)));
            let what = if c.right.is_some() {
                "left/right"
            } else {
                "left mean"
            };
            let shown: Vec<String> = xs
                .iter()
                .zip(&seq)
                .map(|(x, y)| format!("{}: {}", label(x), shown(y)))
                .collect();
            Ok((
                v,
                format!(
                    "{what} over {over}: {}{}; expected {} at every step",
                    shown.join(", "),
                    noise_note(v),
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

/// The points a claim with an optional axis is checked at: each value of `over` (as a
/// selector entry), or once with no extra selector.
fn points(
    records: &[Record],
    left: &Operand,
    over: Option<&str>,
    only: Option<&[toml::Value]>,
) -> Result<Vec<Vec<(String, Value)>>, String> {
    match over {
        None => Ok(vec![Vec::new()]),
        Some(over) => Ok(axis_values(records, left, over, only)?
            .into_iter()
            .map(|x| vec![(over.to_string(), x)])
            .collect()),
    }
}

/// A point's name where a claim failed: the axis value, or "the means" without an axis.
fn point_name(at: &[(String, Value)]) -> String {
    at.first()
        .map(|(_, x)| label(x))
        .unwrap_or_else(|| "the means".into())
}

/// `left X vs right Y over AXIS, L% intervals`: the head of a two-operand claim's detail.
fn pair_head(
    left: &Operand,
    right: &Operand,
    over: Option<&str>,
    level: f64,
    default_metric: &str,
) -> String {
    let lm = left.metric.as_deref().unwrap_or(default_metric);
    let rm = right.metric.as_deref().unwrap_or(default_metric);
    let axis = over.map(|o| format!(" over {o}")).unwrap_or_default();
    format!(
        "left {} vs right {}{axis}, {}% intervals",
        describe(left, lm),
        describe(right, rm),
        fmt_num(level * 100.0)
    )
}

/// `x: ` for a point of an axis, nothing for the one point of a claim without one.
fn point_label(at: &[(String, Value)]) -> String {
    at.first()
        .map(|(_, x)| format!("{}: ", label(x)))
        .unwrap_or_default()
}

/// A `compare`: left's mean stands to right's as `expect` says, beyond the noise of
/// both (their intervals disjoint), at each value of `over` (or once).
fn compare(
    records: &[Record],
    c: &CompareCheck,
    default_metric: &str,
    values: &mut Vec<(String, f64)>,
) -> Result<(Verdict, String), String> {
    let level = c.confidence.unwrap_or(DEFAULT_LEVEL);
    let from = c.from.as_ref().map(toml_to_json);
    let mut at_points = points(records, &c.left, c.over.as_deref(), c.values.as_deref())?;
    at_points.retain(|at| {
        at.first().is_none_or(|(_, x)| {
            from.as_ref()
                .is_none_or(|f| compare_values(x, f) != Ordering::Less)
        })
    });
    if at_points.is_empty() {
        return Err(format!(
            "no value of `{}` to compare at",
            c.over.as_deref().unwrap_or_default()
        ));
    }
    let (mut verdicts, mut shown_at, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    for at in &at_points {
        let (l, nl) = operand_estimate(records, &c.left, at, default_metric, level)?;
        let (r, nr) = operand_estimate(records, &c.right, at, default_metric, level)?;
        let p = point_label(at);
        let (lk, rk) = if at.is_empty() {
            ("left".to_string(), "right".to_string())
        } else {
            let (k, x) = &at[0];
            (
                format!("left {k}={}", label(x)),
                format!("right {k}={}", label(x)),
            )
        };
        values.push((lk, l.mean));
        values.push((rk, r.mean));
        let v = l.ordered(&r, c.expect);
        verdicts.push(v);
        shown_at.push(format!(
            "{p}{} (n={nl}) vs {} (n={nr}){}",
            shown(&l),
            shown(&r),
            noise_note(v)
        ));
        if v != Verdict::Held {
            failed.push((point_name(at), v));
        }
    }
    let mut detail = format!(
        "{}: {}; expected left {} right{}",
        pair_head(&c.left, &c.right, c.over.as_deref(), level, default_metric),
        shown_at.join(", "),
        sign(c.expect),
        if c.over.is_some() { " at each" } else { "" }
    );
    push_failures(&mut detail, &failed, c.over.is_some());
    Ok((Verdict::all(verdicts), detail))
}

/// Appends where a claim checked at several points failed or was within noise.
fn push_failures(detail: &mut String, failed: &[(String, Verdict)], axis: bool) {
    if !axis {
        return;
    }
    let at = |want: Verdict| -> Vec<&str> {
        failed
            .iter()
            .filter(|(_, v)| *v == want)
            .map(|(x, _)| x.as_str())
            .collect()
    };
    let (fails, noisy) = (at(Verdict::NotHeld), at(Verdict::WithinNoise));
    if !fails.is_empty() {
        detail.push_str(&format!("; fails at {}", fails.join(", ")));
    }
    if !noisy.is_empty() {
        detail.push_str(&format!("; within noise at {}", noisy.join(", ")));
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

/// A `ratio` or `difference`: the interval of mean(left)/mean(right) (or of the
/// difference) within the bounds, at every value of `over` (or once).
fn ratio(
    records: &[Record],
    c: &RatioCheck,
    difference: bool,
    default_metric: &str,
    level: f64,
    values: &mut Vec<(String, f64)>,
) -> Result<(Verdict, String), String> {
    let at_points = points(records, &c.left, c.over.as_deref(), c.values.as_deref())?;
    let what = if difference { "difference" } else { "ratio" };
    let (mut verdicts, mut shown_at, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    for at in &at_points {
        let (l, nl) = operand_estimate(records, &c.left, at, default_metric, level)?;
        let (r, nr) = operand_estimate(records, &c.right, at, default_metric, level)?;
        let y = if difference {
            l.minus(r)
        } else {
            l.over(r).ok_or_else(|| {
                format!("right mean is 0{}; ratio undefined", {
                    let p = point_label(at);
                    if p.is_empty() {
                        String::new()
                    } else {
                        format!(" at {}", p.trim_end_matches(": "))
                    }
                })
            })?
        };
        let key = match at.first() {
            Some((k, x)) => format!("{what} {k}={}", label(x)),
            None => {
                values.push(("left".to_string(), l.mean));
                values.push(("right".to_string(), r.mean));
                what.to_string()
            }
        };
        values.push((key, y.mean));
        let v = y.within(c.at_least, c.at_most);
        verdicts.push(v);
        shown_at.push(format!(
            "{}{} (n={nl}) vs {} (n={nr}), {what} {}{}",
            point_label(at),
            shown(&l),
            shown(&r),
            shown(&y),
            noise_note(v)
        ));
        if v != Verdict::Held {
            failed.push((point_name(at), v));
        }
    }
    let mut detail = format!(
        "{}: {}; {what} expected {}{}",
        pair_head(&c.left, &c.right, c.over.as_deref(), level, default_metric),
        shown_at.join("; "),
        bounds_text(c.at_least, c.at_most),
        if c.over.is_some() { " at each" } else { "" }
    );
    push_failures(&mut detail, &failed, c.over.is_some());
    Ok((Verdict::all(verdicts), detail))
}

/// An `intervals` claim: the confidence intervals of left's and right's means overlap or
/// not, at each value of `over` (or once). The claim is about the intervals themselves,
/// so its verdict is never "within noise".
fn intervals(
    records: &[Record],
    c: &IntervalsCheck,
    default_metric: &str,
    values: &mut Vec<(String, f64)>,
) -> Result<(Verdict, String), String> {
    let level = c.confidence.unwrap_or(DEFAULT_LEVEL);
    let at_points = points(records, &c.left, c.over.as_deref(), c.values.as_deref())?;
    let want = c.expect == Overlap::Overlap;
    let (mut shown_at, mut failed) = (Vec::new(), Vec::new());
    for at in &at_points {
        let (l, _) = operand_estimate(records, &c.left, at, default_metric, level)?;
        let (r, _) = operand_estimate(records, &c.right, at, default_metric, level)?;
        let overlap = l.overlaps(&r);
        let p = point_label(at);
        for (name, v) in [
            ("left low", l.lo),
            ("left high", l.hi),
            ("right low", r.lo),
            ("right high", r.hi),
        ] {
            values.push((format!("{p}{name}"), v));
        }
        shown_at.push(format!(
            "{p}{} vs {} {}",
            l.range(),
            r.range(),
            if overlap { "overlap" } else { "disjoint" }
        ));
        if overlap != want {
            failed.push((point_name(at), Verdict::NotHeld));
        }
    }
    let lm = c.left.metric.as_deref().unwrap_or(default_metric);
    let rm = c.right.metric.as_deref().unwrap_or(default_metric);
    let mut detail = format!(
        "{}% intervals of left {} vs right {}: {}; expected {}",
        fmt_num(level * 100.0),
        describe(&c.left, lm),
        describe(&c.right, rm),
        shown_at.join("; "),
        if want { "overlap" } else { "disjoint" }
    );
    push_failures(&mut detail, &failed, c.over.is_some());
    if c.over.is_none() && !failed.is_empty() {
        detail.push_str("; fails at the means");
    }
    Ok((Verdict::from_bool(failed.is_empty()), detail))
}

/// One curve's measure: where its least mean is (`argmin`: the values of `over` whose
/// interval meets the least mean's, by their positions among every curve's values) or a
/// ratio of means, each with the interval of values the noise allows.
struct Measured {
    /// Lower end (a position among the values of `over`, or a ratio).
    lo: f64,
    /// Upper end.
    hi: f64,
    /// As printed.
    text: String,
    /// The measure alone (the argmin's value of `over`, or the ratio).
    short: String,
}

/// A `curve` claim: the measure of each curve (one per value of `across`, or one).
///
/// `argmin`: the values of `over` whose interval meets the least mean's are its
/// candidates (one when the least mean is clear of the noise). `at` holds when it is the
/// only candidate and fails when it is not one; bounds hold when every candidate is
/// within them and fail when none is; anything between is within noise, so a tie reads
/// the same whichever expectation the claim states. `worst-over-best`: the ratio's
/// interval against the bounds. `expect` across curves: no step may move against the
/// direction and the last curve's measure must lie beyond the first's, each beyond the
/// noise of both.
fn curve(
    records: &[Record],
    c: &CurveCheck,
    default_metric: &str,
    level: f64,
    values: &mut Vec<(String, f64)>,
) -> Result<(Verdict, String), String> {
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
    // Every curve's values of `over`, in order: an argmin's position among them.
    let all_xs = values_of(records, &c.left, over);
    let position = |x: &Value| {
        all_xs
            .iter()
            .position(|y| values_equal(x, y))
            .unwrap_or_default() as f64
    };
    let at = c.at.as_ref().map(toml_to_json);
    let mut measured = Vec::new();
    let (mut verdicts, mut shown_at, mut failed) = (Vec::new(), Vec::new(), Vec::new());
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
            let (e, _) = operand_estimate(records, &c.left, &extra, default_metric, level)?;
            points.push((x, e));
        }
        let name = g.as_ref().map(label).unwrap_or_else(|| "curve".into());
        let best = points
            .iter()
            .min_by(|a, b| a.1.mean.total_cmp(&b.1.mean))
            .ok_or_else(|| format!("{name}: no value of `{over}`"))?;
        let ranged: Vec<&(Value, Estimate)> = points.iter().filter(|p| in_range(&p.0)).collect();
        let mut verdict = Verdict::Held;
        let m = match c.measure {
            Measure::Argmin => {
                let low = ranged
                    .iter()
                    .min_by(|a, b| a.1.mean.total_cmp(&b.1.mean))
                    .ok_or_else(|| format!("{name}: no value of `{over}` in the range"))?;
                let candidates: Vec<&Value> = ranged
                    .iter()
                    .filter(|p| p.1.overlaps(&low.1))
                    .map(|p| &p.0)
                    .collect();
                if let Some(x) = as_f64(&low.0) {
                    values.push((name.clone(), x));
                }
                if let Some(at) = &at {
                    let among = candidates.iter().any(|x| values_equal(x, at));
                    verdict = Verdict::all([
                        verdict,
                        Verdict::of_points(among && candidates.len() == 1, among),
                    ]);
                }
                if c.at_least.is_some() || c.at_most.is_some() {
                    let inside = |x: &&Value| {
                        as_f64(x).is_some_and(|v| {
                            c.at_least.is_none_or(|l| l <= v) && c.at_most.is_none_or(|h| v <= h)
                        })
                    };
                    verdict = Verdict::all([
                        verdict,
                        Verdict::of_points(
                            candidates.iter().all(inside),
                            candidates.iter().any(inside),
                        ),
                    ]);
                }
                let others: Vec<String> = candidates
                    .iter()
                    .filter(|x| !values_equal(x, &low.0))
                    .map(|x| label(x))
                    .collect();
                let mut text = format!(
                    "{name}: least mean {} at {over}={}",
                    shown(&low.1),
                    label(&low.0)
                );
                if !others.is_empty() {
                    text.push_str(&format!(" (within noise of it: {})", others.join(", ")));
                }
                let at_positions = candidates.iter().map(|x| position(x));
                Measured {
                    lo: at_positions.clone().fold(f64::INFINITY, f64::min),
                    hi: at_positions.fold(f64::NEG_INFINITY, f64::max),
                    text,
                    short: label(&low.0),
                }
            }
            Measure::WorstOverBest => {
                let worst = ranged
                    .iter()
                    .max_by(|a, b| a.1.mean.total_cmp(&b.1.mean))
                    .ok_or_else(|| format!("{name}: no value of `{over}` in the range"))?;
                let r = worst
                    .1
                    .over(best.1)
                    .ok_or_else(|| format!("{name}: the least mean is 0"))?;
                values.push((name.clone(), r.mean));
                if c.at_least.is_some() || c.at_most.is_some() {
                    verdict = r.within(c.at_least, c.at_most);
                }
                Measured {
                    lo: r.lo,
                    hi: r.hi,
                    short: shown(&r),
                    text: format!(
                        "{name}: worst {} at {over}={} over best {} at {}: {}",
                        fmt_num(worst.1.mean),
                        label(&worst.0),
                        fmt_num(best.1.mean),
                        label(&best.0),
                        shown(&r)
                    ),
                }
            }
        };
        if verdict != Verdict::Held {
            failed.push((name.clone(), verdict));
        }
        verdicts.push(verdict);
        shown_at.push(format!("{}{}", m.text, noise_note(verdict)));
        measured.push(m);
    }
    let mut expected = Vec::new();
    if let Some(at) = &at {
        expected.push(format!("the least mean at {over}={}", label(at)));
    }
    if c.at_least.is_some() || c.at_most.is_some() {
        expected.push(format!("a measure {}", bounds_text(c.at_least, c.at_most)));
    }
    if let Some(dir) = c.expect {
        let up = dir == Direction::Increasing;
        // (the interval of a measure, as the direction reads it: rising is up)
        let ends = |m: &Measured| if up { (m.lo, m.hi) } else { (-m.hi, -m.lo) };
        let steps = measured.windows(2).map(|w| {
            let ((a0, a1), (b0, b1)) = (ends(&w[0]), ends(&w[1]));
            Verdict::of_points(b0 >= a1, b1 >= a0)
        });
        let net = match (measured.first(), measured.last()) {
            (Some(a), Some(b)) => {
                let ((a0, a1), (b0, b1)) = (ends(a), ends(b));
                Verdict::of_points(b0 > a1, b1 > a0)
            }
            _ => Verdict::NotHeld,
        };
        let v = Verdict::all(steps.chain([net]));
        if v != Verdict::Held {
            failed.push((
                format!(
                    "the sequence {}",
                    measured
                        .iter()
                        .map(|m| m.short.clone())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                v,
            ));
        }
        verdicts.push(v);
        expected.push(format!(
            "{} across {} (never {} from one to the next, {} at the end)",
            if up { "increasing" } else { "decreasing" },
            c.across.as_deref().unwrap_or_default(),
            if up { "falling" } else { "rising" },
            if up { "higher" } else { "lower" }
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
        "{} of {} over {over}{range}, {}% intervals: {}; expected {}",
        match c.measure {
            Measure::Argmin => "argmin",
            Measure::WorstOverBest => "worst over best",
        },
        describe(&c.left, lm),
        fmt_num(level * 100.0),
        shown_at.join("; "),
        expected.join(" and ")
    );
    push_failures(&mut detail, &failed, true);
    Ok((Verdict::all(verdicts), detail))
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

    /// Two trials a point, which agree: exact intervals.
    fn records() -> Vec<Record> {
        [(1, 100.0), (4, 25.0), (16, 10.0)]
            .iter()
            .enumerate()
            .flat_map(|(i, &(n, t))| [rec(2 * i, n, t), rec(2 * i + 1, n, t)])
            .collect()
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
