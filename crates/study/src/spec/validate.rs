//! Checking a spec as written and turning it into a [`Spec`]: what TOML types cannot
//! say, reported by field path.

use std::collections::BTreeMap;

use super::expand::{count_breakdown, effective_axes, point_count};
use super::parse::{line_of, Range, WrittenSpec};
use super::{Axis, PlotKind, QuickSpec, Spec, SpecError, MAX_RANGE_POINTS};
use crate::value::set_dotted;

/// Checks a spec as written and turns its axes and quick overrides into their
/// validated form. Errors name the field by its path; only a quick axis, whose value
/// is told apart here as a list or a range, is also placed by its line in `text`.
pub(super) fn validate(written: WrittenSpec, text: &str, origin: &str) -> Result<Spec, SpecError> {
    let invalid = |field: &str, message: String| SpecError::Invalid {
        origin: origin.to_string(),
        field: field.to_string(),
        message,
    };
    if written.name.trim().is_empty() {
        return Err(invalid("name", "must not be empty".into()));
    }
    if written
        .name
        .chars()
        .any(|c| c == '/' || c == '\\' || c.is_control())
        || written.name.starts_with('.')
    {
        return Err(invalid(
            "name",
            "must be usable as a file name (no slashes, not starting with '.')".into(),
        ));
    }
    if written.trials == 0 {
        return Err(invalid("trials", "must be at least 1".into()));
    }
    // Seeds are stored in the run configuration as TOML integers (i64).
    check_seeds(written.seed_base, written.trials).map_err(|m| invalid("trials", m))?;
    if let Some(t) = written.quick.as_ref().and_then(|q| q.trials) {
        check_seeds(written.seed_base, t).map_err(|m| invalid("quick.trials", m))?;
    }
    let mut axes: Vec<Axis> = Vec::new();
    for (i, a) in written.axes.into_iter().enumerate() {
        let here = format!("axis[{i}]");
        check_path(&a.field).map_err(|m| invalid(&format!("{here}.field"), m))?;
        if axes.iter().any(|b| b.field == a.field) {
            return Err(invalid(
                &format!("{here}.field"),
                format!("duplicate axis `{}`", a.field),
            ));
        }
        let values = match (a.values, a.range) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    &here,
                    "give either `values` or `range`, not both".into(),
                ))
            }
            (None, None) => return Err(invalid(&here, "needs `values` or `range`".into())),
            (Some(v), None) => {
                check_values(&v).map_err(|m| invalid(&format!("{here}.values"), m))?;
                v
            }
            (None, Some(r)) => expand_range(&r, &format!("{here}.range"), origin)?,
        };
        let labels = match a.labels {
            None => Vec::new(),
            Some(labels) => {
                check_case_axis(&labels, &values)
                    .map_err(|(f, m)| invalid(&format!("{here}.{f}"), m))?;
                labels
            }
        };
        axes.push(Axis {
            field: a.field,
            values,
            labels,
        });
    }

    let quick = match written.quick {
        None => None,
        Some(q) => {
            if q.trials == Some(0) {
                return Err(invalid("quick.trials", "must be at least 1".into()));
            }
            for (k, _) in &q.base {
                check_path(k).map_err(|m| invalid(&format!("quick.base.{k}"), m))?;
            }
            let mut qaxes = BTreeMap::new();
            for (k, v) in q.axes {
                let here = format!("quick.axis.{k}");
                if !axes.iter().any(|a| a.field == k) {
                    return Err(invalid(&here, "names no axis of the spec".into()));
                }
                let line = line_of(text, v.span().start);
                let values = match v.into_inner() {
                    toml::Value::Array(l) => {
                        check_values(&l).map_err(|m| invalid(&here, m))?;
                        l
                    }
                    toml::Value::Table(t) => {
                        let r: Range =
                            toml::Value::Table(t)
                                .try_into()
                                .map_err(|e: toml::de::Error| SpecError::Parse {
                                    origin: origin.to_string(),
                                    field: Some(here.clone()),
                                    line: Some(line),
                                    message: e.message().trim().to_string(),
                                })?;
                        expand_range(&r, &here, origin)?
                    }
                    other => {
                        return Err(SpecError::Parse {
                            origin: origin.to_string(),
                            field: Some(here),
                            line: Some(line),
                            message: format!(
                                "expected a list of values or a range {{ from, to, step }}, got {}",
                                other.type_str()
                            ),
                        })
                    }
                };
                // A case axis is narrowed by naming some of its labels.
                if let Some(a) = axes.iter().find(|a| a.field == k && !a.labels.is_empty()) {
                    for v in &values {
                        if !v.as_str().is_some_and(|l| a.labels.iter().any(|x| x == l)) {
                            return Err(invalid(
                                &here,
                                format!(
                                    "a case axis is narrowed by its labels ({}), got {v}",
                                    a.labels.join(", ")
                                ),
                            ));
                        }
                    }
                }
                qaxes.insert(k, values);
            }
            for (k, by_label) in &q.cases {
                let here = format!("quick.cases.{k}");
                let Some(a) = axes.iter().find(|a| &a.field == k) else {
                    return Err(invalid(&here, "names no axis of the spec".into()));
                };
                if a.labels.is_empty() {
                    return Err(invalid(&here, "is no case axis (it has no labels)".into()));
                }
                for (label, sets) in by_label {
                    if !a.labels.contains(label) {
                        return Err(invalid(
                            &format!("{here}.{label}"),
                            format!("is no label of the axis ({})", a.labels.join(", ")),
                        ));
                    }
                    for f in sets.keys() {
                        check_path(f).map_err(|m| invalid(&format!("{here}.{label}.{f}"), m))?;
                    }
                }
            }
            Some(QuickSpec {
                trials: q.trials,
                base: q.base,
                axes: qaxes,
                cases: q.cases,
            })
        }
    };

    let output = written.output;
    if !(output.confidence > 0.0 && output.confidence < 1.0) {
        return Err(invalid(
            "output.confidence",
            format!(
                "must be strictly between 0 and 1, got {}",
                output.confidence
            ),
        ));
    }
    check_metric(&output.metric).map_err(|m| invalid("output.metric", m))?;
    for (i, p) in output.plot.iter().enumerate() {
        let here = format!("output.plot[{i}]");
        if p.file.is_empty()
            || p.file.contains("..")
            || p.file.starts_with('/')
            || p.file.contains('\\')
        {
            return Err(invalid(
                &format!("{here}.file"),
                "must be a relative file stem without `..`".into(),
            ));
        }
        if matches!(p.kind, PlotKind::Line | PlotKind::Speedup) && p.x.is_none() {
            return Err(invalid(
                &format!("{here}.x"),
                "line and speedup plots need `x`".into(),
            ));
        }
        if p.kind != PlotKind::Line {
            let only_line = [
                ("x_scale", p.x_scale != super::XScale::Linear),
                ("x_unit", p.x_unit.is_some()),
                ("levels", !p.levels.is_empty()),
            ];
            if let Some((field, _)) = only_line.iter().find(|(_, set)| *set) {
                return Err(invalid(
                    &format!("{here}.{field}"),
                    "only line plots have it".into(),
                ));
            }
        }
    }

    let spec = Spec {
        name: written.name,
        description: written.description,
        origin: origin.to_string(),
        trials: written.trials,
        seed_base: written.seed_base,
        base: written.base,
        axes,
        quick,
        output,
    };
    for quick in [false, true] {
        check_expansion(&spec, quick)?;
    }
    Ok(spec)
}

/// Checks that every seed `seed_base .. seed_base + trials` fits a TOML integer.
fn check_seeds(seed_base: u64, trials: u64) -> Result<(), String> {
    match seed_base.checked_add(trials.saturating_sub(1)) {
        Some(last) if i64::try_from(last).is_ok() => Ok(()),
        _ => Err(format!(
            "seeds run from seed_base ({seed_base}) to seed_base + trials - 1, which must not exceed {}",
            i64::MAX
        )),
    }
}

fn check_path(path: &str) -> Result<(), String> {
    if path.is_empty() || path.split('.').any(|p| p.is_empty()) {
        Err(format!("`{path}` is not a valid dotted path"))
    } else {
        Ok(())
    }
}

/// A metric: a dotted path, or a quotient of two (`refs.local / refs.total`).
fn check_metric(metric: &str) -> Result<(), String> {
    match crate::value::metric_paths(metric).as_slice() {
        [p] => check_path(p),
        [n, d] => check_path(n).and_then(|_| check_path(d)),
        _ => Err(format!(
            "`{metric}` is neither a dotted path nor a quotient of two (`a.b / c.d`)"
        )),
    }
}

fn check_values(values: &[toml::Value]) -> Result<(), String> {
    if values.is_empty() {
        return Err("must not be empty".into());
    }
    for (i, v) in values.iter().enumerate() {
        if values[..i].contains(v) {
            return Err(format!("value {v} appears twice"));
        }
    }
    Ok(())
}

fn expand_range(r: &Range, field: &str, origin: &str) -> Result<Vec<toml::Value>, SpecError> {
    let invalid = |sub: &str, message: String| SpecError::Invalid {
        origin: origin.to_string(),
        field: if sub.is_empty() {
            field.to_string()
        } else {
            format!("{field}.{sub}")
        },
        message,
    };
    let get = |v: &Option<toml::Value>, name: &str| -> Result<toml::Value, SpecError> {
        match v {
            None => Err(invalid(
                name,
                "missing (a range needs from, to and step)".into(),
            )),
            Some(v @ (toml::Value::Integer(_) | toml::Value::Float(_))) => Ok(v.clone()),
            Some(other) => Err(invalid(
                name,
                format!("must be a number, got {}", other.type_str()),
            )),
        }
    };
    let (from, to, step) = (
        get(&r.from, "from")?,
        get(&r.to, "to")?,
        get(&r.step, "step")?,
    );
    if let (toml::Value::Integer(f), toml::Value::Integer(t), toml::Value::Integer(s)) =
        (&from, &to, &step)
    {
        let (f, t, s) = (*f, *t, *s);
        if s <= 0 {
            return Err(invalid("step", format!("must be positive, got {s}")));
        }
        if f > t {
            return Err(invalid("", format!("from ({f}) is greater than to ({t})")));
        }
        let count = ((t as i128 - f as i128) / s as i128 + 1) as u128;
        if count > MAX_RANGE_POINTS as u128 {
            return Err(invalid(
                "",
                format!("expands to {count} points (limit {MAX_RANGE_POINTS})"),
            ));
        }
        return Ok((0..count as i64)
            .map(|k| toml::Value::Integer(f + k * s))
            .collect());
    }
    let num = |v: &toml::Value| match v {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(x) => *x,
        _ => f64::NAN,
    };
    let (f, t, s) = (num(&from), num(&to), num(&step));
    if !(f.is_finite() && t.is_finite() && s.is_finite()) {
        return Err(invalid("", "from, to and step must be finite".into()));
    }
    if s <= 0.0 {
        return Err(invalid("step", format!("must be positive, got {s}")));
    }
    if f > t {
        return Err(invalid("", format!("from ({f}) is greater than to ({t})")));
    }
    // Tolerate rounding so that e.g. 0.1..0.3 step 0.1 includes 0.3.
    let steps = ((t - f) / s * (1.0 + 1e-12) + 1e-9).floor();
    if steps + 1.0 > MAX_RANGE_POINTS as f64 {
        return Err(invalid(
            "",
            format!("expands to more than {MAX_RANGE_POINTS} points"),
        ));
    }
    let count = steps as usize + 1;
    // Multiply rather than accumulate so errors do not compound; round to
    // 12 significant digits so 0.1 + 2 * 0.1 prints as 0.3.
    Ok((0..count)
        .map(|k| toml::Value::Float(round_sig(f + k as f64 * s, 12)))
        .collect())
}

fn round_sig(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let mag = x.abs().log10().floor() as i32;
    let scale = 10f64.powi(digits - 1 - mag);
    if !scale.is_finite() || scale == 0.0 {
        return x;
    }
    (x * scale).round() / scale
}

/// Checks a case axis: one distinct, non-empty label per value, and every value a table
/// of dotted settings. Errors name the offending key (`labels` or `values`).
fn check_case_axis(labels: &[String], values: &[toml::Value]) -> Result<(), (String, String)> {
    if labels.len() != values.len() {
        return Err((
            "labels".into(),
            format!("{} labels for {} values", labels.len(), values.len()),
        ));
    }
    for (i, l) in labels.iter().enumerate() {
        if l.trim().is_empty() || labels[..i].contains(l) {
            return Err(("labels".into(), format!("label `{l}` is empty or repeated")));
        }
    }
    for (i, v) in values.iter().enumerate() {
        let toml::Value::Table(t) = v else {
            return Err((
                format!("values[{i}]"),
                "a case axis takes tables of dotted settings, e.g. { \"policy.kind\" = \"static\" }"
                    .into(),
            ));
        };
        for k in t.keys() {
            check_path(k).map_err(|m| (format!("values[{i}].{k}"), m))?;
        }
    }
    Ok(())
}

fn check_expansion(spec: &Spec, quick: bool) -> Result<(), SpecError> {
    let origin = spec.origin.clone();
    if point_count(spec, quick).is_none() {
        return Err(SpecError::Invalid {
            origin,
            field: "axis".into(),
            message: format!(
                "the number of runs{} overflows ({})",
                if quick { " (quick)" } else { "" },
                count_breakdown(spec, quick)
            ),
        });
    }
    // Applying an axis under a key that holds a plain value would clobber it.
    let mut base = spec.base.clone();
    if let (Some(q), true) = (&spec.quick, quick) {
        for (k, v) in &q.base {
            if !set_dotted(&mut base, k, v.clone()) {
                return Err(SpecError::Invalid {
                    origin,
                    field: format!("quick.base.{k}"),
                    message: "a prefix of this path is not a table in the base".into(),
                });
            }
        }
    }
    for (i, a) in effective_axes(spec, quick).iter().enumerate() {
        if let Some(v) = a.values.first() {
            if !set_dotted(&mut base, &a.field, v.clone()) {
                return Err(SpecError::Invalid {
                    origin,
                    field: format!("axis[{i}].field"),
                    message: format!(
                        "a prefix of `{}` is not a table in the base configuration",
                        a.field
                    ),
                });
            }
        }
    }
    if base.get("seed").is_some_and(|s| s.is_table()) || spec.axes.iter().any(|a| a.field == "seed")
    {
        return Err(SpecError::Invalid {
            origin,
            field: "axis".into(),
            message: "`seed` is set from seed_base and trials; do not sweep it".into(),
        });
    }
    Ok(())
}
