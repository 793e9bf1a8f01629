//! `numaplace report RESULTS.jsonl`: tables, CSV and plots from a stored
//! results file, without re-running anything.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::Value;

use crate::plot::{draw_records, figure, figure_svg, PlotRequest};
use crate::spec::{Band, PlotKind};
use crate::store::{load, Record};
use crate::table::{records_csv, summarize, SummaryTable, TableOptions};
use crate::value::{as_f64, fmt_num, parse_loose_value};

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
    /// Write a self-contained HTML page of the report here.
    pub html: Option<PathBuf>,
    /// The command shown on the HTML page as the one that made it.
    pub command: String,
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
            html: None,
            command: String::new(),
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
    let mut records = load(results)?;
    records.sort_by_key(|r| r.index);
    report_records(&records, results, opts)
}

/// Every configuration field the records know: swept settings (outermost
/// first), then `seed`, `id`, `index`, then the leaves of the resolved
/// configurations the runner reported (objects are descended, arrays are
/// leaves).
pub fn available_fields(records: &[Record]) -> Vec<String> {
    let mut out = setting_fields(records);
    out.extend(["seed", "id", "index"].map(String::from));
    let mut config = std::collections::BTreeSet::new();
    for r in records {
        if let Some(cfg) = r.result.get("config") {
            leaf_paths(cfg, "", &mut |p: String| {
                config.insert(p);
            });
        }
    }
    out.extend(
        config
            .into_iter()
            .filter(|p| !out.contains(p))
            .collect::<Vec<_>>(),
    );
    out
}

/// Every numeric leaf of the successful results (outside `config`; objects
/// are descended, arrays are not), sorted.
pub fn available_metrics(records: &[Record]) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    for r in records.iter().filter(|r| r.ok()) {
        if let Value::Object(map) = &r.result {
            for (k, v) in map.iter().filter(|(k, _)| k.as_str() != "config") {
                leaf_paths(v, k, &mut |p: String| {
                    if r.metric(&p).is_some() {
                        out.insert(p);
                    }
                });
            }
        }
    }
    out.into_iter().collect()
}

/// Fields of the entries of the successful results' `series` arrays, sorted.
fn series_fields(records: &[Record]) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    for r in records.iter().filter(|r| r.ok()) {
        if let Some(Value::Array(series)) = r.result.get("series") {
            for entry in series {
                leaf_paths(entry, "", &mut |p: String| {
                    out.insert(p);
                });
            }
        }
    }
    out.into_iter().collect()
}

fn leaf_paths(value: &Value, prefix: &str, emit: &mut dyn FnMut(String)) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                leaf_paths(v, &path, emit);
            }
        }
        _ if !prefix.is_empty() => emit(prefix.to_string()),
        _ => {}
    }
}

fn unknown(what: &str, option: &str, name: &str, have: &[String]) -> anyhow::Error {
    anyhow::anyhow!(
        "{option}: no {what} `{name}` in the results; available: {}",
        if have.is_empty() {
            "none".to_string()
        } else {
            have.join(", ")
        }
    )
}

/// Checks report options against the records before rendering anything:
/// the confidence level lies strictly between 0 and 1, the metric is a number
/// in some successful run (unless no run succeeded), and every field named by
/// `group_by`, the baseline and `x` is known to some run. Errors list what
/// the results offer.
pub fn check_options(records: &[Record], opts: &ReportOptions) -> anyhow::Result<()> {
    if !(opts.confidence > 0.0 && opts.confidence < 1.0) {
        bail!(
            "--confidence: must be strictly between 0 and 1, got {}",
            opts.confidence
        );
    }
    let series = opts.plot == Some(PlotKind::Series);
    let any_ok = records.iter().any(Record::ok);
    if let Some(metric) = &opts.metric {
        if series {
            let have = series_fields(records);
            if any_ok && !have.contains(metric) {
                return Err(unknown("series field", "--metric", metric, &have));
            }
        } else if any_ok && !records.iter().any(|r| r.metric(metric).is_some()) {
            return Err(unknown(
                "numeric metric",
                "--metric",
                metric,
                &available_metrics(records),
            ));
        }
    }
    let known = |f: &str| records.iter().any(|r| r.field(f).is_some());
    let fields = opts
        .group_by
        .iter()
        .map(|f| ("--group-by", f))
        .chain(opts.baseline.iter().map(|(f, _)| ("--baseline", f)));
    for (option, f) in fields {
        if !known(f) {
            return Err(unknown("field", option, f, &available_fields(records)));
        }
    }
    if let Some(x) = &opts.x {
        if series {
            let have = series_fields(records);
            if any_ok && !have.contains(x) {
                return Err(unknown("series field", "--x", x, &have));
            }
        } else if !known(x) {
            return Err(unknown("field", "--x", x, &available_fields(records)));
        }
    }
    Ok(())
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
    check_options(records, opts).with_context(|| source.display().to_string())?;
    // Files are appended in finishing order; reports follow the run order.
    let mut sorted: Vec<Record> = Vec::new();
    let records = if records.windows(2).all(|w| w[0].index <= w[1].index) {
        records
    } else {
        sorted.extend_from_slice(records);
        sorted.sort_by_key(|r| r.index);
        &sorted[..]
    };
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
    let mut drawn_svg = None;
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
        let drawn = draw_records(records, &req, &stem)?;
        files.extend(drawn.files);
        let kind_name = format!("{kind:?}").to_lowercase();
        drawn_svg = Some((format!("{kind_name} plot of {metric}"), drawn.svg));
    }
    if let Some(path) = &opts.html {
        let ctx = PageContext {
            source,
            records,
            metric: &metric,
            group_by: &group_by,
            table: &table,
            confidence: opts.confidence,
            command: &opts.command,
        };
        let page = results_page(&ctx, drawn_svg);
        std::fs::write(path, page).with_context(|| format!("cannot write {}", path.display()))?;
        files.push(path.clone());
    }
    Ok(ReportOutput { text, files })
}

/// What a results file's page is made of.
struct PageContext<'a> {
    source: &'a Path,
    records: &'a [Record],
    metric: &'a str,
    group_by: &'a [String],
    table: &'a SummaryTable,
    confidence: f64,
    command: &'a str,
}

/// The figure a results page shows when no plot was asked for: the metric over the
/// innermost numeric field of the grouping that takes several values (a line per value
/// of the others), else a bar per group. `None` when neither can be drawn.
fn default_figure(ctx: &PageContext) -> Option<(String, String)> {
    let numeric_axis = |f: &String| {
        let mut seen: Vec<f64> = Vec::new();
        for r in ctx.records.iter().filter(|r| r.ok()) {
            let x = r.field(f).as_ref().and_then(as_f64)?;
            if !seen.contains(&x) {
                seen.push(x);
            }
        }
        Some(seen.len() >= 2)
    };
    let x = ctx
        .group_by
        .iter()
        .rev()
        .find(|f| numeric_axis(f) == Some(true));
    let others = |x: Option<&String>| {
        ctx.group_by
            .iter()
            .filter(|g| Some(*g) != x)
            .cloned()
            .collect::<Vec<_>>()
    };
    let mut req = match x {
        Some(x) => {
            let mut req = PlotRequest::new(PlotKind::Line, ctx.metric, others(Some(x)));
            req.x = Some(x.clone());
            req
        }
        None => PlotRequest::new(PlotKind::Bar, ctx.metric, others(None)),
    };
    req.confidence = ctx.confidence;
    req.title = ctx
        .source
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let fig = figure(ctx.records, &req).ok()?;
    let svg = figure_svg(&fig, req.size).ok()?;
    let caption = match &req.x {
        Some(x) => format!(
            "mean {} over {x}, {}% interval bands",
            ctx.metric,
            fmt_num(ctx.confidence * 100.0)
        ),
        None => format!(
            "mean {} by group, {}% interval whiskers",
            ctx.metric,
            fmt_num(ctx.confidence * 100.0)
        ),
    };
    Some((caption, svg))
}

/// A results file's report as a self-contained HTML page: the summary table, a figure
/// (`drawn`, the plot asked for, or [`default_figure`]) and the runs that failed.
fn results_page(ctx: &PageContext, drawn: Option<(String, String)>) -> String {
    use crate::html::{escape, figure as html_figure, table, Page};
    let name = ctx.source.display().to_string();
    let mut page = Page::new(&format!("Results: {name}"));
    page.text("h1", &format!("Results: {name}"));
    if !ctx.command.is_empty() {
        page.raw(&format!(
            "<p>Command: <code class=\"command\">{}</code></p>\n",
            escape(ctx.command)
        ));
    }
    let failed = ctx.records.iter().filter(|r| !r.ok()).count();
    page.text(
        "p",
        &format!(
            "{} runs ({failed} failed); metric {}; grouped by {}; intervals at {}% (Student's t over each group's runs).",
            ctx.records.len(),
            ctx.metric,
            if ctx.group_by.is_empty() {
                "nothing (one group)".to_string()
            } else {
                ctx.group_by.join(", ")
            },
            fmt_num(ctx.confidence * 100.0)
        ),
    );
    page.heading("h2", "summary", "Summary");
    page.raw(&table(
        &ctx.table.headers(),
        &ctx.table.cells(),
        ctx.table.group_by.len(),
    ));
    page.heading("h2", "figure", "Figure");
    match drawn.or_else(|| default_figure(ctx)) {
        Some((caption, svg)) => page.raw(&html_figure(&svg, &caption)),
        None => page.text("p", "No figure: no successful run has the metric."),
    }
    if failed > 0 {
        page.heading("h2", "failed", "Runs that failed");
        let rows: Vec<Vec<String>> = ctx
            .records
            .iter()
            .filter(|r| !r.ok())
            .map(|r| {
                vec![
                    r.id.clone(),
                    r.settings
                        .iter()
                        .map(|(k, v)| format!("{k}={}", crate::value::label(v)))
                        .collect::<Vec<_>>()
                        .join(", "),
                    r.error.clone().unwrap_or_default(),
                ]
            })
            .collect();
        page.raw(&table(
            &["run", "settings", "error"].map(String::from),
            &rows,
            3,
        ));
    }
    page.finish()
}
