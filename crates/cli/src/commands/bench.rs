//! `numaplace bench`: fixed scenarios timed on this host, each in a process of its own.

use crate::config::read_text;
use crate::failure::Failure;
use crate::output::out;
use anyhow::Context;
use numaplace_harness::UserError;
use std::path::PathBuf;

/// `numaplace bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Print the results as JSON (what `--compare` reads).
    #[arg(long)]
    json: bool,
    /// Repetitions per scenario (the least CPU time is kept).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=100))]
    reps: u64,
    /// CPU seconds a repetition lasts at least: a shorter run is repeated (and its
    /// times averaged over the runs) so that noise of a few milliseconds does not count.
    #[arg(long, default_value_t = 1.0, value_parser = min_seconds)]
    min_seconds: f64,
    /// Run only this scenario (repeatable): fine-static, jacobi-64B-pages,
    /// holliday-daemon, platinum-gauss, gups-tiered-1G, gups-tiered-16G, gups-memsim-2M,
    /// pages-2^24, nas-cg-class-a, hemem-optane, trace-replay, trace-replay-short, and the
    /// heavy gups-memsim-4K.
    #[arg(long)]
    scenario: Vec<String>,
    /// Also run the heavy scenarios (minutes or gigabytes each), which the whole set leaves
    /// out unless named with --scenario.
    #[arg(long)]
    heavy: bool,
    /// A stored `bench --json` result: print each scenario's ratios to it.
    #[arg(long, value_name = "OLD.json")]
    compare: Option<PathBuf>,
    /// Measure one scenario in this process and print its result as JSON (how `bench`
    /// runs each scenario in a process of its own).
    #[arg(long, hide = true)]
    child: Option<String>,
}

/// `--min-seconds`: a finite number of seconds from 0 to an hour.
fn min_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=3600.0).contains(&v) => Ok(v),
        Ok(_) => Err("must be from 0 to 3600 seconds".into()),
        Err(e) => Err(format!("not a number of seconds: {e}")),
    }
}

/// Times the scenarios `a` asks for (or, with `--child`, one of them in this process).
pub fn run(a: BenchArgs) -> Result<(), Failure> {
    use numaplace_harness::bench::{self, BenchResult};
    if let Some(name) = &a.child {
        // One scenario in this process of its own, so its peak memory is its own.
        let s = bench::scenario(name)
            .ok_or_else(|| UserError::new(format!("--child: no scenario `{name}`")))?;
        let r = bench::measure(s, a.reps as usize, a.min_seconds);
        return out(&(serde_json::to_string(&r).context("serialising the result")? + "\n"));
    }
    let old: Option<Vec<BenchResult>> = match &a.compare {
        None => None,
        Some(path) => {
            let (origin, text) = read_text(path)?;
            Some(serde_json::from_str(&text).map_err(|e| {
                UserError::new(format!(
                    "{origin}:{}: not a stored `numaplace bench --json` result: {e}",
                    e.line()
                ))
            })?)
        }
    };
    let names: Vec<&str> = if a.scenario.is_empty() {
        bench::SCENARIOS
            .iter()
            .filter(|s| a.heavy || !s.heavy)
            .map(|s| s.name)
            .collect()
    } else {
        for n in &a.scenario {
            if bench::scenario(n).is_none() {
                let known: Vec<&str> = bench::SCENARIOS.iter().map(|s| s.name).collect();
                return Err(UserError::new(format!(
                    "--scenario: no scenario `{n}`; known: {}",
                    known.join(", ")
                ))
                .into());
            }
        }
        a.scenario.iter().map(String::as_str).collect()
    };
    let exe = std::env::current_exe().context("finding this program to run the scenarios")?;
    let mut results = Vec::new();
    for name in names {
        eprintln!("bench: {name} ...");
        let o = std::process::Command::new(&exe)
            .args(["bench", "--child", name, "--reps", &a.reps.to_string()])
            .args(["--min-seconds", &a.min_seconds.to_string()])
            .output()
            .with_context(|| format!("running scenario {name}"))?;
        if !o.status.success() {
            return Err(anyhow::anyhow!(
                "scenario {name} failed: {}",
                String::from_utf8_lossy(&o.stderr)
            )
            .into());
        }
        let r: BenchResult = serde_json::from_slice(&o.stdout)
            .with_context(|| format!("reading scenario {name}'s result"))?;
        results.push(r);
    }
    if a.json {
        let body = serde_json::to_string_pretty(&results).context("serialising the results")?;
        return out(&(body + "\n"));
    }
    out(&bench::render(&results, old.as_deref()))
}
