//! `numaplace run`: one simulation and its statistics.

use crate::config::run_config;
use crate::failure::Failure;
use crate::limits::host_limits;
use crate::optimum::run_oracle;
use crate::output::{command_line, out, write_page, write_streamed};
use crate::parse::parse_count;
use crate::progress;
use anyhow::Context;
use clap::Args;
use numaplace_core::SimError;
use numaplace_harness::{text, Overrides, UserError};
use std::path::PathBuf;

/// `numaplace run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Machine preset (default: butterfly-plus).
    #[arg(long)]
    machine: Option<String>,
    /// Workload kind (default: jacobi).
    #[arg(long)]
    workload: Option<String>,
    /// Policy kind (default: static).
    #[arg(long)]
    policy: Option<String>,
    /// A TOML run configuration; the options above and --set override it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override any field: `--set workload.n=256 --set machine.costs.remote_read_ns=2000`.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    sets: Vec<String>,
    /// Seed of the run (default 1).
    #[arg(long)]
    seed: Option<u64>,
    /// Also write the JSON result to this file (`-` for standard output).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Print the per-page report for this many pages (most faults first).
    #[arg(long, default_value_t = 0)]
    pages: usize,
    /// Print the resource estimate (memory, operations) and exit without running.
    #[arg(long)]
    estimate: bool,
    /// Run even when the estimate exceeds the memory or operation limits.
    #[arg(long)]
    force: bool,
    /// Memory a run may need (default: 80% of what the host has available), e.g. `16GB`.
    #[arg(long, value_name = "SIZE", value_parser = numaplace_harness::limits::parse_bytes)]
    max_memory: Option<u64>,
    /// Operations a run may simulate without --force (default 2e10).
    #[arg(long, value_name = "N", value_parser = parse_count)]
    max_ops: Option<u64>,
    /// Also record the run's references and report the offline optimum, the policy's
    /// cost in the same model and the regret (as `numaplace oracle` does).
    #[arg(long)]
    oracle: bool,
    /// Also run each program alone on dedicated processors (same machine, policy and
    /// seed) and report its slowdown in this run.
    #[arg(long)]
    slowdown: bool,
    /// Also record where each page is over the run, as its references see it (the JSON
    /// record's `locations`, which `report RUN.json --html` draws).
    #[arg(long)]
    locations: bool,
    /// Also write a self-contained HTML page of the run: its numbers, a heatmap of where
    /// its pages were over time (records the locations), its series and busiest pages.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

/// Runs `a`'s simulation and prints its statistics (and its JSON record when asked).
pub fn run(a: RunArgs) -> Result<(), Failure> {
    let ov = Overrides {
        machine: a.machine,
        workload: a.workload,
        policy: a.policy,
        seed: a.seed,
        sets: a.sets,
    };
    let cfg = run_config(a.config.as_ref(), &ov)?;
    let mut limits = host_limits(a.force, a.max_memory);
    if let Some(n) = a.max_ops {
        limits.max_ops = n;
    }
    // `run` builds its record only for --json, and writes its per-page list a page at a
    // time; with --oracle or --html the record is built whole.
    let locations = a.locations || a.html.is_some();
    let record = if a.oracle || a.html.is_some() {
        numaplace_harness::limits::Record::InMemory
    } else if a.json.is_some() {
        numaplace_harness::limits::Record::Streamed
    } else {
        numaplace_harness::limits::Record::Absent
    };
    if a.estimate {
        let est = numaplace_harness::limits::estimate_with(&cfg, record)?;
        return out(&text::estimate_summary(&est, &limits));
    }
    let est = numaplace_harness::limits::admit_with(&cfg, &limits, record)?;
    if a.oracle && a.slowdown {
        return Err(UserError::new("--oracle and --slowdown: choose one").into());
    }
    if a.oracle && locations {
        return Err(UserError::new("--oracle and --locations or --html: choose one").into());
    }
    if a.oracle {
        let top = if a.pages > 0 { a.pages } else { 10 };
        return run_oracle(&cfg, None, top, a.json, Default::default());
    }
    let bar = progress::bar(est.ops.max(1), "ops (estimate)");
    progress::install_stop_handler();
    let monitor = Box::new(progress::RunMonitor { bar: bar.clone() });
    // The JSON record is built only when asked for: with the per-page report of a large
    // address space it takes far more memory than the run itself.
    let result =
        numaplace_harness::locations::run_maybe_located(&cfg, Some((monitor, 1 << 16)), locations);
    bar.finish_and_clear();
    let (stats, page_data, located) =
        result.map_err(|e| match numaplace_harness::error::input_error(e) {
            Ok(input) => Failure::from(input),
            Err(other) => Failure::from(anyhow::Error::new(other).context("simulation failed")),
        })?;
    // The record without its per-page list; the list is written a page at a time.
    let mut json = (a.json.is_some() || a.html.is_some())
        .then(|| numaplace_harness::result::record_without_pages(&cfg, &stats, &page_data));
    if let (Some(j), Some(l)) = (json.as_mut(), &located) {
        numaplace_harness::locations::add_to_record(j, l);
    }
    let mut report = text::run_summary(&cfg, &stats);
    if a.slowdown && !stats.partial {
        eprintln!("slowdown: running each program alone on dedicated processors");
        let slow = numaplace_harness::slowdown::slowdowns(&cfg, &stats).map_err(|e| match e {
            SimError::Config(c) => Failure::from(UserError::new(format!(
                "a program alone on dedicated processors: {c}"
            ))),
            other => {
                Failure::from(anyhow::Error::new(other).context("a program's dedicated run failed"))
            }
        })?;
        if let Some(j) = json.as_mut() {
            numaplace_harness::slowdown::add_to_record(j, &slow);
        }
        report.push_str(&numaplace_harness::slowdown::text(&slow));
    }
    if a.pages > 0 {
        report.push_str(&text::page_report(&stats, &page_data, a.pages));
    }
    let json_to_stdout = a.json.as_ref().is_some_and(|p| p.as_os_str() == "-");
    if json_to_stdout {
        // Standard output carries only the JSON; the table goes to standard error.
        eprint!("{report}");
    } else {
        out(&report)?;
    }
    match (json, &a.html) {
        // A page is rendered from the whole record.
        (Some(json), Some(html)) => {
            let body = numaplace_harness::result::record_text(&json, &stats, &page_data)
                .context("serialising the result")?;
            let whole = serde_json::from_str(&body).context("serialising the result")?;
            let page = numaplace_harness::run_page::render(&whole, &command_line())?;
            write_page(html, &page)?;
            match &a.json {
                Some(_) if json_to_stdout => out(&body)?,
                Some(path) => std::fs::write(path, &body)
                    .with_context(|| format!("writing {}", path.display()))?,
                None => {}
            }
        }
        // Otherwise the record is written as it is serialised, a page at a time.
        (Some(json), None) => {
            if let Some(path) = &a.json {
                write_streamed(path, |w| {
                    numaplace_harness::result::write_record(w, &json, &stats, &page_data)
                })?;
            }
        }
        (None, _) => {}
    }
    // A run out of its simulated-time budget is a result (it did not finish), not a
    // stop by the user.
    if stats.partial && !stats.budget_exceeded {
        return Err(Failure {
            code: 130,
            err: anyhow::anyhow!(
                "stopped at {:.6} s of simulated time: the statistics above are partial",
                stats.makespan_ns as f64 * 1e-9
            ),
        });
    }
    Ok(())
}
