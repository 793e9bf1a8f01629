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
    /// Where the runs are made: `local` (this host's cores) or `ray` (each run a Ray
    /// task, on the cluster `ray.init` finds or at --address; needs the Python package
    /// with Ray, run by $NUMAPLACE_PYTHON or python3).
    #[arg(long, value_enum, default_value_t = Engine::Local)]
    engine: Engine,
    /// The Ray cluster's address (with --engine ray).
    #[arg(long)]
    address: Option<String>,
    #[command(flatten)]
    limits: StudyLimits,
}

/// Where a sweep's runs are made.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// This host's cores.
    Local,
    /// Ray tasks, through the Python package.
    Ray,
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
    if a.engine == Engine::Ray {
        return on_ray(&a);
    }
    if a.address.is_some() {
        return Err(user(anyhow::anyhow!("--address is for --engine ray")));
    }
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

/// The sweep on Ray: handed to the Python package (`python -m numaplace sweep --engine
/// ray`), which runs each point as a Ray task with this binary's own code and streams
/// the records into the same results file; its exit code is this command's.
fn on_ray(a: &SweepArgs) -> Result<(), Failure> {
    if a.shard.is_some() {
        return Err(user(anyhow::anyhow!(
            "--shard and --engine ray: Ray spreads the runs itself; choose one"
        )));
    }
    let python = std::env::var_os("NUMAPLACE_PYTHON").unwrap_or_else(|| "python3".into());
    let mut cmd = std::process::Command::new(&python);
    cmd.args(["-m", "numaplace", "sweep", "--engine", "ray"])
        .arg(&a.spec);
    if let Some(out) = &a.out {
        cmd.arg("--out").arg(out);
    }
    if let Some(address) = &a.address {
        cmd.args(["--address", address]);
    }
    for (flag, on) in [
        ("--resume", a.resume),
        ("--quick", a.quick),
        ("--force", a.limits.forced()),
    ] {
        if on {
            cmd.arg(flag);
        }
    }
    let status = cmd.status().map_err(|e| {
        user(anyhow::anyhow!(
            "--engine ray runs `{} -m numaplace` (the Python package, with Ray): {e}",
            python.to_string_lossy()
        ))
    })?;
    match status.code() {
        Some(0) => Ok(()),
        Some(code) => Err(Failure {
            code: u8::try_from(code).unwrap_or(1),
            err: anyhow::anyhow!("the sweep on Ray failed"),
        }),
        None => Err(anyhow::anyhow!("the sweep on Ray was stopped by a signal").into()),
    }
}
