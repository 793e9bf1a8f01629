//! `numaplace report`: the summary (and plots) of a stored results file.

use crate::failure::{user, Failure};
use crate::output::out;
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
}

/// Prints (and writes) the report `a` asks for.
pub fn run(a: ReportArgs) -> Result<(), Failure> {
    use numaplace_study::report::{parse_assignments, parse_plot_kind, report, ReportOptions};
    let mut opts = ReportOptions {
        metric: a.metric,
        group_by: a.group_by,
        confidence: a.confidence,
        markdown: a.markdown,
        csv: a.csv,
        raw_csv: a.raw_csv,
        x: a.x,
        plot_out: a.plot_out,
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
