//! `numaplace report`: the summary (and plots) of a stored results file.

use crate::failure::{user, Failure};
use crate::output::{command_line, out, write_page};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

/// `numaplace report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A results file written by `sweep` or `reproduce`.
    results: PathBuf,
    /// Metric (dotted path into a result, e.g. `refs.remote`); default `makespan_ns`.
    #[arg(long)]
    metric: Option<String>,
    /// Group rows by these config fields (comma separated); default: every swept field.
    #[arg(long, value_delimiter = ',')]
    group_by: Vec<String>,
    /// Baseline row for relative differences, `FIELD=VALUE[,FIELD=VALUE]`.
    #[arg(long)]
    baseline: Option<String>,
    /// Confidence level of the interval column.
    #[arg(long, default_value_t = 0.99)]
    confidence: f64,
    /// Print Markdown instead of an aligned table.
    #[arg(long)]
    markdown: bool,
    /// Write the summary as CSV.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Write every run as a CSV row.
    #[arg(long)]
    raw_csv: Option<PathBuf>,
    /// Draw a plot: line, speedup, bar or series.
    #[arg(long)]
    plot: Option<String>,
    /// The x field of the plot.
    #[arg(long)]
    x: Option<String>,
    /// Output path stem of the plot (writes .svg and .png).
    #[arg(long)]
    plot_out: Option<PathBuf>,
    /// Also write a self-contained HTML page: the table and a figure (inline SVG); for a
    /// run's record (`run --json`), its numbers and where its pages were over time.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

/// Prints (and writes) the report `a` asks for.
pub fn run(a: ReportArgs) -> Result<(), Failure> {
    use numaplace_study::report::{parse_assignments, parse_plot_kind, report, ReportOptions};
    if let Some(record) = numaplace_harness::run_page::read_run_record(&a.results).map_err(user)? {
        return run_record(&a, &record);
    }
    let mut opts = ReportOptions {
        metric: a.metric,
        group_by: a.group_by,
        confidence: a.confidence,
        markdown: a.markdown,
        csv: a.csv,
        raw_csv: a.raw_csv,
        x: a.x,
        plot_out: a.plot_out,
        html: a.html,
        command: command_line(),
        ..Default::default()
    };
    if let Some(b) = a.baseline {
        opts.baseline = parse_assignments(&b).context("--baseline").map_err(user)?;
    }
    if let Some(p) = a.plot {
        opts.plot = Some(parse_plot_kind(&p).context("--plot").map_err(user)?);
    }
    let rep = report(&a.results, &opts).map_err(user)?;
    out(&rep.text)?;
    for f in rep.files {
        eprintln!("wrote {}", f.display());
    }
    Ok(())
}

/// The page of a run's record: the only output `report` makes of one.
fn run_record(a: &ReportArgs, record: &serde_json::Value) -> Result<(), Failure> {
    let results_only = a.metric.is_some()
        || !a.group_by.is_empty()
        || a.baseline.is_some()
        || a.markdown
        || a.csv.is_some()
        || a.raw_csv.is_some()
        || a.plot.is_some()
        || a.x.is_some()
        || a.plot_out.is_some();
    let file = a.results.display();
    let Some(path) = &a.html else {
        return Err(user(anyhow::anyhow!(
            "{file} is a run's record (from `run --json`): `report` makes its page with --html FILE"
        )));
    };
    if results_only {
        return Err(user(anyhow::anyhow!(
            "{file} is a run's record: only --html applies to it (the other options summarise a results file)"
        )));
    }
    let page = numaplace_harness::run_page::render(record, &command_line()).map_err(user)?;
    write_page(path, &page)
}
