//! `numaplace report RESULTS.jsonl`: tables, CSV and plots from a stored
//! results file, without re-running anything.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::Value;

use crate::plot::{plot_records, PlotRequest};
use crate::spec::{Band, PlotKind};
use crate::store::{load, Record};
use crate::table::{records_csv, summarize, TableOptions};
use crate::value::parse_loose_value;

/// What to render from a results file.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportOptions {
    /// Metric (dotted path into results); default `makespan_ns`.
    pub metric: Option<String>,
    /// Grouping fields; empty means every swept setting.
    pub group_by: Vec<String>,
    /// Baseline selector (`F=V` pairs, see [`parse_assignments`]).
    pub baseline: Vec<(String, Value)>,
    /// Confidence level of the interval column; default 0.99.
    pub confidence: f64,
    /// Render Markdown instead of aligned text.
    pub markdown: bool,
    /// Write the summary as CSV here.
    pub csv: Option<PathBuf>,
    /// Write the raw per-run records as CSV here.
    pub raw_csv: Option<PathBuf>,
    /// Draw a plot of this kind.
    pub plot: Option<PlotKind>,
    /// X field of the plot.
    pub x: Option<String>,
    /// Band of line plots.
    pub band: Band,
    /// Output stem of the plot (default: the results file without
    /// extension, plus `-KIND`).
    pub plot_out: Option<PathBuf>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            metric: None,
            group_by: Vec::new(),
            baseline: Vec::new(),
            confidence: 0.99,
            markdown: false,
            csv: None,
            raw_csv: None,
            plot: None,
            x: None,
            band: Band::Ci,
            plot_out: None,
        }
    }
}

/// The rendered report and the files written.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportOutput {
    /// The table (text or Markdown), with a header line.
    pub text: String,
    /// Files written (CSV, SVG, PNG).
    pub files: Vec<PathBuf>,
}

/// Parses `F=V[,G=W...]` assignments (values in TOML syntax when they
/// parse as such, else plain strings), e.g. `workload.variant=uma`.
pub fn parse_assignments(text: &str) -> anyhow::Result<Vec<(String, Value)>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((k, v)) = part.split_once('=') else {
            bail!("`{part}` is not of the form FIELD=VALUE");
        };
        let k = k.trim();
        if k.is_empty() {
            bail!("`{part}` has an empty field name");
        }
        out.push((k.to_string(), parse_loose_value(v.trim())));
    }
    Ok(out)
}

/// Parses a plot kind name (`line`, `speedup`, `bar`, `series`).
pub fn parse_plot_kind(text: &str) -> anyhow::Result<PlotKind> {
    match text {
        "line" => Ok(PlotKind::Line),
        "speedup" => Ok(PlotKind::Speedup),
        "bar" => Ok(PlotKind::Bar),
        "series" => Ok(PlotKind::Series),
        other => bail!("unknown plot kind `{other}` (line, speedup, bar, series)"),
    }
}

/// Every setting key of the records, outermost axis first.
///
/// Stored settings maps are keyed alphabetically, so the spec's axis order
/// is recovered from the records (sorted by index): an outer axis changes
/// value less often between consecutive runs than an inner one.
pub fn setting_fields(records: &[Record]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for r in records {
        for k in r.settings.keys() {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let mut sorted: Vec<&Record> = records.iter().collect();
    sorted.sort_by_key(|r| r.index);
    let changes = |k: &String| {
        sorted
            .windows(2)
            .filter(|w| w[0].settings.get(k) != w[1].settings.get(k))
            .count()
    };
    // Stable sort keeps alphabetical order among ties.
    keys.sort_by_cached_key(changes);
    keys
}

/// Renders a report of the records stored in `results`.
pub fn report(results: &Path, opts: &ReportOptions) -> anyhow::Result<ReportOutput> {
    let records = load(results)?;
    report_records(&records, results, opts)
}

/// Renders a report of `records` (read from `source`, used for naming
/// default outputs).
pub fn report_records(
    records: &[Record],
    source: &Path,
    opts: &ReportOptions,
) -> anyhow::Result<ReportOutput> {
    if records.is_empty() {
        bail!("{}: no records", source.display());
    }
    let metric = opts
        .metric
        .clone()
        .unwrap_or_else(|| "makespan_ns".to_string());
    let group_by = if opts.group_by.is_empty() {
        setting_fields(records)
    } else {
        opts.group_by.clone()
    };
    let table = summarize(
        records,
        &TableOptions {
            metric: metric.clone(),
            group_by: group_by.clone(),
            baseline: opts.baseline.clone(),
            confidence: opts.confidence,
        },
    );
    let failed = records.iter().filter(|r| !r.ok()).count();
    let mut text = format!(
        "{}: {} runs{}\n",
        source.display(),
        records.len(),
        if failed > 0 {
            format!(", {failed} failed")
        } else {
            String::new()
        }
    );
    if opts.markdown {
        text.push('\n');
        text.push_str(&table.render_markdown());
    } else {
        text.push_str(&table.render_text());
    }
    let mut files = Vec::new();
    if let Some(path) = &opts.csv {
        table.write_csv(path)?;
        files.push(path.clone());
    }
    if let Some(path) = &opts.raw_csv {
        std::fs::write(path, records_csv(records, std::slice::from_ref(&metric)))
            .with_context(|| format!("cannot write {}", path.display()))?;
        files.push(path.clone());
    }
    if let Some(kind) = opts.plot {
        let mut req = PlotRequest::new(
            kind,
            &metric,
            group_by
                .iter()
                .filter(|g| Some(*g) != opts.x.as_ref())
                .cloned()
                .collect(),
        );
        if kind == PlotKind::Series && opts.metric.is_none() {
            req.metric = "remote".to_string();
        }
        req.x = opts.x.clone();
        req.band = opts.band;
        req.confidence = opts.confidence;
        req.title = source
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem = opts.plot_out.clone().unwrap_or_else(|| {
            let base = source.with_extension("");
            let kind_name = format!("{kind:?}").to_lowercase();
            PathBuf::from(format!("{}-{kind_name}", base.display()))
        });
        files.extend(plot_records(records, &req, &stem)?);
    }
    Ok(ReportOutput { text, files })
}
