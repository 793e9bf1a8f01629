//! Experiment specs: a base run configuration, axes to sweep, trials, quick
//! overrides and output preferences, parsed from TOML and expanded into the
//! cartesian product of run points.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::value::{get_dotted_toml, set_dotted};

/// Most points one range may produce; guards against typos such as a step
/// of 1 over nanoseconds that would expand into millions of runs.
pub const MAX_RANGE_POINTS: usize = 100_000;

/// An error in an experiment spec (or another TOML file of this crate),
/// naming the file and the field or line at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    /// The text is not valid TOML, or a field has the wrong type or is unknown.
    #[error("{origin}: {}{message}{}", field_prefix(.field), line_suffix(.line))]
    Parse {
        /// File name (or other origin) of the text.
        origin: String,
        /// Dotted path of the offending field, if known.
        field: Option<String>,
        /// 1-based line of the error, if known.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// The TOML is well formed but a value is not acceptable.
    #[error("{origin}: field `{field}`: {message}")]
    Invalid {
        /// File name (or other origin) of the text.
        origin: String,
        /// Dotted path of the offending field (e.g. `axis[1].range.step`).
        field: String,
        /// What is wrong.
        message: String,
    },
}

pub(crate) fn field_prefix(field: &Option<String>) -> String {
    match field {
        Some(f) if !f.is_empty() && f != "." => format!("field `{f}`: "),
        _ => String::new(),
    }
}

pub(crate) fn line_suffix(line: &Option<usize>) -> String {
    match line {
        Some(l) => format!(" (line {l})"),
        None => String::new(),
    }
}

/// An experiment spec. Parsing reads it with its axes and quick overrides as written
/// in the file; validation turns those into [`Axis`] and [`QuickSpec`], the default
/// parameters and the form every other function takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    bound(deserialize = "A: Deserialize<'de>, Q: Deserialize<'de>")
)]
pub struct Spec<A = Axis, Q = QuickSpec> {
    /// Short name; also names result files (`NAME.jsonl`).
    pub name: String,
    /// Free text describing the experiment.
    #[serde(default)]
    pub description: String,
    /// Where the spec came from (file name), for error messages.
    #[serde(skip_deserializing)]
    pub origin: String,
    /// Runs per axis combination; seeds are `seed_base .. seed_base + trials`.
    #[serde(default = "default_one")]
    pub trials: u64,
    /// Seed of the first trial.
    #[serde(default = "default_one")]
    pub seed_base: u64,
    /// The base run configuration the axis values are applied to.
    #[serde(default)]
    pub base: toml::Table,
    /// Axes in declaration order (first is outermost in the expansion).
    #[serde(default, rename(deserialize = "axis"))]
    pub axes: Vec<A>,
    /// Overrides applied in `--quick` mode.
    #[serde(default)]
    pub quick: Option<Q>,
    /// Output preferences (tables and plots).
    #[serde(default)]
    pub output: OutputSpec,
}

/// A spec as parsed, before validation: its `[[axis]]` tables and quick axes as
/// written. A quick axis is kept as a TOML value with its place, told apart as a list
/// or a range by validation, so that a misspelled range key is reported as such (an
/// untagged list-or-range would only say that neither matched), with its line.
type WrittenSpec = Spec<WrittenAxis, QuickSpec<toml::Spanned<toml::Value>>>;

/// One swept parameter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Axis {
    /// Dotted path into the run configuration, e.g. `machine.nodes`.
    pub field: String,
    /// The values taken, in order (non-empty).
    pub values: Vec<toml::Value>,
    /// Names of the values, for a *case axis*: then `field` is just a name for the axis,
    /// each value is a table of dotted settings applied together (e.g. a policy and its
    /// parameters), and results record the label (e.g. `"1D(B50)"`). Empty for a plain
    /// axis.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
}

/// Overrides for `--quick` mode (small, fast variants of an experiment). `V` is the
/// form of an axis's values: as written while parsing, the list of values (the
/// default) once validated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, bound(deserialize = "V: Deserialize<'de>"))]
pub struct QuickSpec<V = Vec<toml::Value>> {
    /// Replaces `trials` when set.
    #[serde(default)]
    pub trials: Option<u64>,
    /// Dotted-path overrides of base fields, applied before the axes.
    #[serde(default, deserialize_with = "table_entries")]
    pub base: Vec<(String, toml::Value)>,
    /// Replacement values for named axes.
    #[serde(default, rename(deserialize = "axis"))]
    pub axes: BTreeMap<String, V>,
}

/// Reads a table as its entries, in the table's order.
fn table_entries<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<(String, toml::Value)>, D::Error> {
    Ok(toml::Table::deserialize(deserializer)?
        .into_iter()
        .collect())
}

/// Output preferences of a spec (`[output]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Default metric: dotted path into each run's result JSON.
    #[serde(default = "default_metric")]
    pub metric: String,
    /// Configuration fields naming table rows and plot lines; empty means
    /// "all axis fields".
    #[serde(default)]
    pub group_by: Vec<String>,
    /// Selector of the baseline row for relative differences (empty: none).
    #[serde(default)]
    pub baseline: BTreeMap<String, toml::Value>,
    /// Confidence level of the interval columns, in (0, 1).
    #[serde(default = "default_confidence")]
    pub confidence: f64,
    /// Extra metrics written to the raw CSV besides `metric`.
    #[serde(default)]
    pub metrics: Vec<String>,
    /// Plots to draw.
    #[serde(default)]
    pub plot: Vec<PlotSpec>,
}

impl Default for OutputSpec {
    fn default() -> Self {
        OutputSpec {
            metric: default_metric(),
            group_by: Vec::new(),
            baseline: BTreeMap::new(),
            confidence: default_confidence(),
            metrics: Vec::new(),
            plot: Vec::new(),
        }
    }
}

/// Kind of plot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlotKind {
    /// Metric against a numeric parameter, one line per group.
    Line,
    /// Speedup against processors: metric at the smallest x / metric at x.
    Speedup,
    /// One bar per configuration (group), with CI whiskers.
    Bar,
    /// Time series from one run's `series` array, one line per group.
    Series,
}

/// Band drawn around plot lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Band {
    /// Student-t confidence interval of the mean.
    #[default]
    Ci,
    /// Minimum to maximum over trials.
    #[serde(alias = "min-max")]
    Minmax,
    /// No band.
    None,
}

/// One `[[output.plot]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// Kind of plot.
    pub kind: PlotKind,
    /// X parameter (dotted config path) for `line` and `speedup`; for
    /// `series`, the field of each series record (default `iteration`).
    #[serde(default)]
    pub x: Option<String>,
    /// Output file stem; `.svg` and `.png` are appended.
    pub file: String,
    /// Metric (defaults to the output metric); for `series`, the field of
    /// each series record (default `remote`).
    #[serde(default)]
    pub metric: Option<String>,
    /// Band around lines (line plots only).
    #[serde(default)]
    pub band: Band,
    /// Grouping (defaults to the output grouping minus `x`).
    #[serde(default)]
    pub group_by: Option<Vec<String>>,
    /// Only records matching this selector are plotted.
    #[serde(default, rename = "where")]
    pub filter: BTreeMap<String, toml::Value>,
    /// Plot title (defaults to the spec name).
    #[serde(default)]
    pub title: Option<String>,
}

fn default_metric() -> String {
    "makespan_ns".to_string()
}

fn default_confidence() -> f64 {
    0.99
}

fn default_one() -> u64 {
    1
}

/// An `[[axis]]` table as written. Kept apart from [`Axis`] because validation needs
/// what was written, not only the values it stands for: it tells an empty `values`
/// from a missing one, and names a missing or bad part of a `range` by its path
/// (`axis[0].range.step`), neither of which serde can do while parsing.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WrittenAxis {
    field: String,
    #[serde(default)]
    values: Option<Vec<toml::Value>>,
    #[serde(default)]
    range: Option<Range>,
    #[serde(default)]
    labels: Option<Vec<String>>,
}

/// A range of axis values, `{ from, to, step }`; its parts are checked as it is
/// expanded.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct Range {
    #[serde(default)]
    from: Option<toml::Value>,
    #[serde(default)]
    to: Option<toml::Value>,
    #[serde(default)]
    step: Option<toml::Value>,
}

/// Converts a 0-based byte offset to a 1-based line number.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Deserializes TOML text into `T`, reporting the field path and line of any
/// error. Shared by specs and paper files.
pub(crate) fn parse_toml<T: serde::de::DeserializeOwned>(
    text: &str,
    origin: &str,
) -> Result<T, SpecError> {
    let de = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(de).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        SpecError::Parse {
            origin: origin.to_string(),
            field: if path.is_empty() || path == "." {
                None
            } else {
                Some(path)
            },
            line: inner.span().map(|s| line_of(text, s.start)),
            message: inner.message().trim().to_string(),
        }
    })
}

/// Parses and validates an experiment spec. `origin` names the file in
/// error messages.
pub fn parse_spec(text: &str, origin: &str) -> Result<Spec, SpecError> {
    let written: WrittenSpec = parse_toml(text, origin)?;
    validate(written, text, origin)
}

/// Checks a spec as written and turns its axes and quick overrides into their
/// validated form. Errors name the field by its path; only a quick axis, whose value
/// is told apart here as a list or a range, is also placed by its line in `text`.
fn validate(written: WrittenSpec, text: &str, origin: &str) -> Result<Spec, SpecError> {
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
            Some(QuickSpec {
                trials: q.trials,
                base: q.base,
                axes: qaxes,
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
    check_path(&output.metric).map_err(|m| invalid("output.metric", m))?;
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

/// Reads and parses a spec file.
pub fn load_spec(path: &std::path::Path) -> anyhow::Result<Spec> {
    use anyhow::Context;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read spec {}", path.display()))?;
    Ok(parse_spec(&text, &path.display().to_string())?)
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

/// One run of a sweep: an axis combination and a trial.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPoint {
    /// Position in the full expansion (0-based, stable for a given spec).
    pub index: usize,
    /// Stable identifier, `r` followed by the zero-padded index (`r000017`).
    pub id: String,
    /// The axis values of this run, in axis order (dotted path, value).
    pub settings: Vec<(String, toml::Value)>,
    /// Trial number within the combination (0-based).
    pub trial: u64,
    /// Random seed of this run (`seed_base + trial`).
    pub seed: u64,
    /// Full run configuration: base with quick overrides and settings
    /// applied, and top-level `seed` set.
    pub config: toml::Table,
}

/// Axis values effective in the given mode.
pub fn effective_axes(spec: &Spec, quick: bool) -> Vec<Axis> {
    spec.axes
        .iter()
        .map(|a| {
            let values = match (&spec.quick, quick) {
                (Some(q), true) => q.axes.get(&a.field).cloned(),
                _ => None,
            };
            match values {
                Some(picked) if !a.labels.is_empty() => {
                    let (values, labels) = picked
                        .iter()
                        .filter_map(|p| {
                            let i = a
                                .labels
                                .iter()
                                .position(|l| Some(l.as_str()) == p.as_str())?;
                            Some((a.values[i].clone(), a.labels[i].clone()))
                        })
                        .unzip();
                    Axis {
                        field: a.field.clone(),
                        values,
                        labels,
                    }
                }
                values => Axis {
                    field: a.field.clone(),
                    values: values.unwrap_or_else(|| a.values.clone()),
                    labels: a.labels.clone(),
                },
            }
        })
        .collect()
}

/// Trials effective in the given mode.
pub fn effective_trials(spec: &Spec, quick: bool) -> u64 {
    match (&spec.quick, quick) {
        (
            Some(QuickSpec {
                trials: Some(t), ..
            }),
            true,
        ) => *t,
        _ => spec.trials,
    }
}

/// Base configuration effective in the given mode (quick overrides applied).
pub fn effective_base(spec: &Spec, quick: bool) -> toml::Table {
    let mut base = spec.base.clone();
    if let (Some(q), true) = (&spec.quick, quick) {
        for (k, v) in &q.base {
            set_dotted(&mut base, k, v.clone());
        }
    }
    base
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

/// Number of run points of the expansion, or `None` on overflow. Counted from
/// the axes' lengths with checked arithmetic: nothing is expanded.
pub fn point_count(spec: &Spec, quick: bool) -> Option<usize> {
    let mut n = usize::try_from(effective_trials(spec, quick)).ok()?;
    for len in effective_axis_lens(spec, quick) {
        n = n.checked_mul(len)?;
    }
    Some(n)
}

/// The number of values of each effective axis, without cloning them.
fn effective_axis_lens(spec: &Spec, quick: bool) -> Vec<usize> {
    spec.axes
        .iter()
        .map(|a| match (&spec.quick, quick) {
            (Some(q), true) => q.axes.get(&a.field).map_or(a.values.len(), Vec::len),
            _ => a.values.len(),
        })
        .collect()
}

/// How the number of runs comes about, e.g. `2 values of machine.nodes × 3 values of
/// workload.n × 5 trials`, for messages about the size of a sweep.
pub fn count_breakdown(spec: &Spec, quick: bool) -> String {
    let mut parts: Vec<String> = spec
        .axes
        .iter()
        .zip(effective_axis_lens(spec, quick))
        .map(|(a, n)| format!("{n} value{} of {}", plural(n), a.field))
        .collect();
    let t = effective_trials(spec, quick);
    parts.push(format!("{t} trial{}", plural(t as usize)));
    parts.join(" × ")
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
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

/// A spec's run points in one mode, generated on demand from their index: a
/// sweep never needs to hold every point (each carries a whole configuration).
#[derive(Debug, Clone)]
pub struct Expansion {
    axes: Vec<Axis>,
    trials: u64,
    seed_base: u64,
    base: toml::Table,
    len: usize,
}

impl Expansion {
    /// The expansion of `spec` in the given mode. Fails only when the number of
    /// runs overflows (which [`parse_spec`] already rejects).
    pub fn new(spec: &Spec, quick: bool) -> Result<Expansion, SpecError> {
        let Some(len) = point_count(spec, quick) else {
            return Err(SpecError::Invalid {
                origin: spec.origin.clone(),
                field: "axis".into(),
                message: format!(
                    "the number of runs overflows ({})",
                    count_breakdown(spec, quick)
                ),
            });
        };
        Ok(Expansion {
            axes: effective_axes(spec, quick),
            trials: effective_trials(spec, quick).max(1),
            seed_base: spec.seed_base,
            base: effective_base(spec, quick),
            len,
        })
    }

    /// Number of run points.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no run points.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Trials per axis combination (consecutive indices, trial innermost).
    pub fn trials(&self) -> u64 {
        self.trials
    }

    /// The run point at `index` (`None` past the end): the cartesian product of
    /// the axes (first axis outermost) with trials innermost.
    pub fn point(&self, index: usize) -> Option<RunPoint> {
        if index >= self.len {
            return None;
        }
        // Mixed-radix decode: trials is the fastest digit, then the last axis.
        let trials = self.trials as usize;
        let trial = (index % trials) as u64;
        let mut rest = index / trials;
        let mut choice = vec![0usize; self.axes.len()];
        for (k, a) in self.axes.iter().enumerate().rev() {
            choice[k] = rest % a.values.len();
            rest /= a.values.len();
        }
        let mut config = self.base.clone();
        let mut settings: Vec<(String, toml::Value)> = Vec::with_capacity(self.axes.len());
        for (a, &c) in self.axes.iter().zip(&choice) {
            if a.labels.is_empty() {
                set_dotted(&mut config, &a.field, a.values[c].clone());
                settings.push((a.field.clone(), a.values[c].clone()));
            } else {
                if let toml::Value::Table(t) = &a.values[c] {
                    for (k, v) in t {
                        set_dotted(&mut config, k, v.clone());
                    }
                }
                settings.push((a.field.clone(), toml::Value::String(a.labels[c].clone())));
            }
        }
        // `parse_spec` checked that every seed fits a TOML integer.
        let seed = self.seed_base.saturating_add(trial);
        config.insert(
            "seed".into(),
            toml::Value::Integer(i64::try_from(seed).unwrap_or(i64::MAX)),
        );
        Some(RunPoint {
            index,
            id: point_id(index),
            settings,
            trial,
            seed,
            config,
        })
    }

    /// Every run point in index order, generated one at a time.
    pub fn points(&self) -> impl Iterator<Item = RunPoint> + '_ {
        (0..self.len).filter_map(|i| self.point(i))
    }
}

/// Expands a spec into its run points: the cartesian product of the axes
/// (first axis outermost) with trials innermost, numbered from 0. Holds every
/// point at once; sweeps use [`Expansion`] instead.
pub fn expand(spec: &Spec, quick: bool) -> Vec<RunPoint> {
    match Expansion::new(spec, quick) {
        Ok(e) => e.points().collect(),
        Err(_) => Vec::new(),
    }
}

/// The identifier of the run at `index` (`r000017`).
pub fn point_id(index: usize) -> String {
    format!("r{index:06}")
}

/// The group-by fields of a spec: the explicit `output.group_by`, or all
/// axis fields when none are given.
pub fn default_group_by(spec: &Spec) -> Vec<String> {
    if spec.output.group_by.is_empty() {
        spec.axes.iter().map(|a| a.field.clone()).collect()
    } else {
        spec.output.group_by.clone()
    }
}

/// Looks up a field of the base configuration (used to label constant fields).
pub fn base_field<'a>(spec: &'a Spec, path: &str) -> Option<&'a toml::Value> {
    get_dotted_toml(&spec.base, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "jacobi-numa-vs-uma"
description = "demo"
trials = 2
seed_base = 10
[base]
machine.preset = "butterfly-plus"
workload.kind = "jacobi"
[[axis]]
field = "machine.nodes"
values = [2, 4]
[[axis]]
field = "machine.costs.remote_read_ns"
range = { from = 1000, to = 3000, step = 1000 }
[quick]
trials = 1
base = { "workload.n" = 64 }
axis = { "machine.nodes" = [2] }
[output]
metric = "makespan_ns"
group_by = ["machine.nodes"]
[[output.plot]]
kind = "line"
x = "machine.nodes"
file = "jacobi-nodes"
"#;

    #[test]
    fn good_spec_parses_and_expands_in_order() {
        let spec = parse_spec(GOOD, "good.toml").unwrap();
        let pts = expand(&spec, false);
        assert_eq!(pts.len(), 2 * 3 * 2);
        assert_eq!(pts[0].id, "r000000");
        assert_eq!(pts[1].seed, 11);
        assert_eq!(pts[2].settings[1].1, toml::Value::Integer(2000));
        assert_eq!(pts[6].settings[0].1, toml::Value::Integer(4));
        let cfg = &pts[7].config;
        assert_eq!(
            get_dotted_toml(cfg, "machine.costs.remote_read_ns"),
            Some(&toml::Value::Integer(1000))
        );
        assert_eq!(cfg.get("seed"), Some(&toml::Value::Integer(11)));
        assert_eq!(
            get_dotted_toml(cfg, "machine.preset"),
            Some(&toml::Value::String("butterfly-plus".into()))
        );
    }

    #[test]
    fn quick_mode_replaces_axes_trials_and_base() {
        let spec = parse_spec(GOOD, "good.toml").unwrap();
        let pts = expand(&spec, true);
        assert_eq!(pts.len(), 3);
        assert_eq!(
            get_dotted_toml(&pts[0].config, "workload.n"),
            Some(&toml::Value::Integer(64))
        );
    }

    #[test]
    fn float_range_includes_endpoint() {
        let text = "name='f'\n[[axis]]\nfield='a.b'\nrange={from=0.1,to=0.3,step=0.1}\n";
        let spec = parse_spec(text, "f.toml").unwrap();
        assert_eq!(
            spec.axes[0].values,
            vec![0.1.into(), 0.2.into(), toml::Value::Float(0.3)]
        );
    }

    #[test]
    fn syntax_error_names_file_and_line() {
        let err = parse_spec("name = 'x'\ntrials = = 3\n", "bad.toml").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("bad.toml") && msg.contains("line 2"), "{msg}");
    }
}
