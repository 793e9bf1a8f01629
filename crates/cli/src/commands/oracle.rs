//! `numaplace oracle`: the offline optimum of a run or of a recorded trace.

use crate::config::run_config;
use crate::failure::Failure;
use crate::limits::host_limits;
use crate::optimum::{oracle_failure, run_oracle, TracePath};
use crate::output::{emit, emit_streamed};
use crate::parse::parse_count;
use clap::Args;
use numaplace_harness::{text, Overrides, UserError};
use std::path::PathBuf;

/// `numaplace oracle`.
#[derive(Args, Debug)]
pub struct OracleArgs {
    /// A TOML run configuration (resolved as `numaplace run --config` resolves it).
    config: Option<PathBuf>,
    /// Machine preset.
    #[arg(long)]
    machine: Option<String>,
    /// Workload kind.
    #[arg(long)]
    workload: Option<String>,
    /// Policy kind.
    #[arg(long)]
    policy: Option<String>,
    /// Override any field: `--set workload.n=256`.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    sets: Vec<String>,
    /// Seed of the run.
    #[arg(long)]
    seed: Option<u64>,
    /// Keep the recorded trace in this file (default: a temporary file, removed after).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Solve a trace recorded before (`--trace`) instead of running a configuration.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["config", "machine", "workload", "policy", "sets", "seed", "trace"])]
    from_trace: Option<PathBuf>,
    /// Pages to list by regret.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Solve only the migration-only model.
    #[arg(long)]
    no_replication: bool,
    /// Copy-set updates the replication model may take before it is given up (its work
    /// grows as runs x 2^nodes in the worst case).
    #[arg(long, value_name = "N", value_parser = parse_count,
          default_value_t = numaplace_oracle::solve::DEFAULT_REPLICATION_BUDGET)]
    replication_budget: u64,
    /// Trace passes the capacity relaxation may make where a node holds fewer frames
    /// than the pages referenced (each prices frame occupancy once; 0: no bound).
    #[arg(long, value_name = "N",
          default_value_t = numaplace_oracle::capacity::DEFAULT_CAPACITY_PASSES)]
    capacity_passes: u32,
    /// Windows of the run whose frame occupancy the capacity relaxation prices apart
    /// (more windows: a tighter bound where the pages crowd part of the run).
    #[arg(long, value_name = "W", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=numaplace_oracle::capacity::MAX_WINDOWS as i64))]
    capacity_windows: u16,
    /// Also write the results as JSON to this file (`-` for standard output).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Run even when the estimate exceeds the memory or operation limits.
    #[arg(long)]
    force: bool,
    /// Also replay the optimum in the simulator (policy `oracle-replay`) and report its
    /// makespan beside the policy's: the replication optimum when that model was solved,
    /// else the migration-only one (`--replay-model` chooses).
    #[arg(long)]
    replay: bool,
    /// Which optimum `--replay` replays (default: replication when solved, else
    /// migration).
    #[arg(long, value_enum, value_name = "MODEL", requires = "replay")]
    replay_model: Option<ReplayModel>,
    /// Keep the replayed schedule in this file (JSON; `--set policy.schedule=...` of
    /// `oracle-replay` reads it).
    #[arg(long, value_name = "FILE", requires = "replay")]
    schedule: Option<PathBuf>,
}

/// The model of the optimum `oracle --replay` replays.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ReplayModel {
    /// Migration only.
    Migration,
    /// Migration + replication with write-invalidate (solved up to 16 nodes).
    Replication,
}

/// Solves the optimum `a` asks for and prints it (and its JSON when asked).
pub fn run(a: OracleArgs) -> Result<(), Failure> {
    let opts = numaplace_oracle::solve::SolveOptions {
        replication: !a.no_replication,
        replication_budget: a.replication_budget,
        capacity: numaplace_oracle::capacity::CapacityOptions {
            passes: a.capacity_passes,
            windows: a.capacity_windows as usize,
        },
    };
    if let Some(path) = &a.from_trace {
        let sol = numaplace_oracle::solve::solve(path, opts).map_err(oracle_failure)?;
        let rss = numaplace_harness::bench::peak_rss_bytes();
        let report = numaplace_harness::oracle::oracle_text(&sol, &Default::default(), a.top, rss);
        return emit(report, a.json, || {
            numaplace_harness::oracle::oracle_json(&sol, true)
        });
    }
    let ov = Overrides {
        machine: a.machine,
        workload: a.workload,
        policy: a.policy,
        seed: a.seed,
        sets: a.sets,
    };
    if a.no_replication && a.replay_model == Some(ReplayModel::Replication) {
        return Err(UserError::new(
            "--replay-model replication with --no-replication: the replication optimum is not solved (not asked for)",
        )
        .into());
    }
    let cfg = run_config(a.config.as_ref(), &ov)?;
    numaplace_harness::admit(&cfg, &host_limits(a.force, None))?;
    if !a.replay {
        return run_oracle(&cfg, a.trace, a.top, a.json, opts);
    }
    let trace = TracePath::new(a.trace);
    eprintln!(
        "oracle: simulating and recording to {}",
        trace.path.display()
    );
    let (run, sol) = numaplace_harness::oracle::run_with_oracle(&cfg, &trace.path, opts)
        .map_err(oracle_failure)?;
    use numaplace_oracle::replay::ScheduleModel;
    let solved = sol.replication.is_some();
    let model = match a.replay_model {
        Some(ReplayModel::Migration) => ScheduleModel::Migration,
        Some(ReplayModel::Replication) if !solved => {
            let why = sol.replication_refused.as_deref().unwrap_or("not solved");
            return Err(UserError::new(format!(
                "--replay-model replication: the replication optimum was not solved ({why})"
            ))
            .into());
        }
        _ if solved => ScheduleModel::Replication,
        _ => ScheduleModel::Migration,
    };
    let schedule = match a.schedule {
        Some(p) => TracePath::new(Some(p)),
        None => TracePath {
            path: std::env::temp_dir()
                .join(format!("numaplace-schedule-{}.json", std::process::id())),
            keep: false,
        },
    };
    let replay_trace = TracePath {
        path: std::env::temp_dir().join(format!("numaplace-replay-{}.bin", std::process::id())),
        keep: false,
    };
    eprintln!("oracle: replaying the {} optimum", model.name());
    let replayed = numaplace_harness::oracle::replay(
        &cfg,
        &trace.path,
        &schedule.path,
        &replay_trace.path,
        model,
        a.replication_budget,
    )
    .map_err(oracle_failure)?;
    let rss = numaplace_harness::bench::peak_rss_bytes();
    let mut report = text::run_summary(&cfg, &run.stats);
    report.push_str(&numaplace_harness::oracle::oracle_text(
        &sol,
        &run.page_data,
        a.top,
        rss,
    ));
    report.push_str(&numaplace_harness::oracle::replay_text(
        &replayed, &run.stats, &sol,
    ));
    emit_streamed(report, a.json, |w| {
        let mut oracle = numaplace_harness::oracle::oracle_json(&sol, false);
        if let Some(m) = oracle.as_object_mut() {
            m.insert(
                "replay".into(),
                numaplace_harness::oracle::replay_json(&replayed, &sol),
            );
        }
        numaplace_harness::oracle::write_oracle_record(w, &run, &oracle, &sol)
    })
}
