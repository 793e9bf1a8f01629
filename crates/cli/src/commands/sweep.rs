//! `numaplace sweep`: every run of an experiment spec, appended to a results file.

use crate::failure::{user, Failure};
use crate::limits::StudyLimits;
use crate::output::out;
use clap::Args;
use std::path::PathBuf;

/// `numaplace sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The experiment spec (TOML).
    spec: PathBuf,
    /// Results file (JSON Lines); default: the spec's name with `.jsonl` in the current
    /// directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Parallel runs (0 = one per core).
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// Continue an interrupted sweep: run only what the results file lacks.
    #[arg(long)]
    resume: bool,
    /// Run only shard I of N (`I/N`, 0-based): runs whose index mod N is I.
    #[arg(long, value_parser = parse_shard)]
    shard: Option<(usize, usize)>,
    /// Use the spec's reduced `[quick]` settings.
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    limits: StudyLimits,
}

/// `--shard I/N`: shard I of N, 0-based.
fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("`{s}`: expected I/N, e.g. 0/4"))?;
    let i: usize = i
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: I is not a number"))?;
    let n: usize = n
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: N is not a number"))?;
    if n == 0 || i >= n {
        return Err(format!("`{s}`: need 0 <= I < N"));
    }
    Ok((i, n))
}

/// Runs `a`'s sweep and prints its summary.
pub fn run(a: SweepArgs) -> Result<(), Failure> {
    use numaplace_study::sweep::{run_sweep, SweepOptions};
    let spec = numaplace_study::spec::load_spec(&a.spec).map_err(user)?;
    let out = a
        .out
        .unwrap_or_else(|| PathBuf::from(format!("{}.jsonl", spec.name)));
    let table_opts = numaplace_study::reproduce::table_options(&spec);
    let mut opts = SweepOptions::new(&out);
    opts.jobs = a.jobs;
    opts.resume = a.resume;
    opts.shard = a.shard;
    opts.quick = a.quick;
    opts.max_runs = a.limits.max_runs();
    // The summary below is all this command needs from the records in memory; the
    // results file gets every record whole.
    opts.keep = Some(table_opts.result_paths());
    let runner = a.limits.runner(a.jobs);
    let outcome = run_sweep(&spec, &runner, &opts).map_err(user)?;
    let table = numaplace_study::table::summarize(&outcome.records, &table_opts);
    self::out(&table.render_text())?;
    eprintln!(
        "{}: {} runs ({} run now, {} already stored, {} failed)",
        out.display(),
        outcome.total,
        outcome.executed,
        outcome.skipped,
        outcome.failures.len()
    );
    for (id, msg) in &outcome.failures {
        eprintln!("  {id}: {msg}");
    }
    if !outcome.failures.is_empty() {
        return Err(anyhow::anyhow!("{} runs failed", outcome.failures.len()).into());
    }
    Ok(())
}
