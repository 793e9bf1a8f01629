//! Experiment specs: a base run configuration, axes to sweep, trials, quick
//! overrides and output preferences, parsed from TOML and expanded into the
//! cartesian product of run points.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::value::get_dotted_toml;

mod expand;
mod parse;
mod validate;

pub use expand::{
    count_breakdown, effective_axes, effective_base, effective_trials, expand, point_count,
    point_id, Expansion, RunPoint,
};
pub(crate) use parse::{line_of, parse_toml};
pub use parse::{load_spec, parse_spec};

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
    /// Settings added to a case axis's cases, by axis and label (applied after the case's
    /// own): `cases = { workload = { psolu = { "workload.grid" = 24 } } }` shrinks one case
    /// of a case axis that sets each case's size, which `base` cannot (axes override it).
    #[serde(default)]
    pub cases: BTreeMap<String, BTreeMap<String, toml::Table>>,
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
    /// How x values are placed (`line` plots): `linear` (the default) or `category`, one
    /// evenly spaced position per distinct value in order, labelled with the value (for
    /// settings such as recent-mod's -1, 0, ..., 2^16, or a final `"inf"`).
    #[serde(default)]
    pub x_scale: XScale,
    /// The unit x is shown in when it is a time in ns (`s`, `ms`, `us`).
    #[serde(default)]
    pub x_unit: Option<crate::unit::PaperUnit>,
    /// The unit the metric is shown in when it is a time in ns (`s`, `ms`, `us`).
    #[serde(default)]
    pub y_unit: Option<crate::unit::PaperUnit>,
    /// Reference levels (`line` plots): selectors whose runs are drawn as one horizontal
    /// line each at their mean across the plot (e.g. a static placement's time beside a
    /// parameter sweep), instead of as points of a line.
    #[serde(default)]
    pub levels: Vec<BTreeMap<String, toml::Value>>,
}

/// How a plot places its x values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum XScale {
    /// At their numeric value.
    #[default]
    Linear,
    /// Evenly spaced in order, labelled by value (strings after numbers).
    Category,
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
