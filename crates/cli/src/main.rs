//! The `numaplace` command.

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use config::{machine_from_table, read_text, run_config};
use failure::{user, Failure};
use limits::{host_limits, StudyLimits};
use numaplace_core::fields::{flatten, FieldInfo, Fields};
use numaplace_core::sched::SchedulerConfig;
use numaplace_core::workload::WorkloadConfig;
use numaplace_core::{Machine, MachineConfig, PolicyConfig, SimError};
use numaplace_harness::{presets, text, Overrides, UserError};
use optimum::{oracle_failure, run_oracle, TracePath};
use output::{emit, out};
use parse::parse_count;
use std::path::PathBuf;
use std::process::ExitCode;

mod config;
mod failure;
mod limits;
mod optimum;
mod output;
mod parse;
mod progress;
mod tune_cmd;

/// Dynamic page placement on non-uniform memory: a deterministic simulator of the classic
/// and modern placement policies.
#[derive(Parser, Debug)]
#[command(name = "numaplace", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Simulate one run and print its statistics.
    Run(RunArgs),
    /// List every machine, workload, policy and scheduler with a one-line description.
    List {
        /// Also list every configuration field: its default, allowed range, unit and
        /// meaning (the ranges are the ones validation enforces).
        #[arg(long)]
        fields: bool,
    },
    /// Machine presets.
    Machine {
        #[command(subcommand)]
        command: ShowCommand,
    },
    /// Workloads.
    Workload {
        #[command(subcommand)]
        command: ShowCommand,
    },
    /// Placement policies.
    Policy {
        #[command(subcommand)]
        command: ShowCommand,
    },
    /// Schedulers.
    Scheduler {
        #[command(subcommand)]
        command: ShowCommand,
    },
    /// Run an experiment spec: every combination of its axes and trials, in parallel,
    /// appending each finished run to a JSON Lines results file.
    Sweep(SweepArgs),
    /// Summarise (and plot) a stored results file.
    Report(ReportArgs),
    /// Run a paper's studies, show ours beside the paper's numbers and check its claims.
    Reproduce(ReproduceArgs),
    /// When does moving a page pay? PLATINUM's minimum page sizes (its Table 1) and LaRowe
    /// et al.'s break-even reference counts, from a machine's costs.
    Breakeven(BreakevenArgs),
    /// The offline optimum of a run: record its references, solve the cheapest placement
    /// of every page for them (migration only; migration + replication with
    /// write-invalidate), and set the policy's cost in the same model beside it.
    Oracle(OracleArgs),
    /// Time fixed scenarios on this host: operations and simulated references per CPU
    /// second and peak memory, each scenario in a process of its own (`--compare` a stored
    /// `--json` result for ratios).
    Bench(BenchArgs),
    /// Tune a policy's parameters for one workload on one machine: a noise-aware search
    /// of the space the policy declares, its budget counted in simulation runs; writes the
    /// best setting as a [policy] table, every candidate and a convergence plot.
    Tune(tune_cmd::TuneArgs),
    /// Settings of a policy across a grid of workloads x machines: each setting's regret
    /// against each cell's tuned best, its worst and mean regret, and the minimax-regret
    /// default.
    Robustness(tune_cmd::RobustnessArgs),
}

/// `numaplace bench`.
#[derive(clap::Args, Debug)]
struct BenchArgs {
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
    /// holliday-daemon, platinum-gauss, gups-tiered-1G, gups-tiered-16G, pages-2^24.
    #[arg(long)]
    scenario: Vec<String>,
    /// A stored `bench --json` result: print each scenario's ratios to it.
    #[arg(long, value_name = "OLD.json")]
    compare: Option<PathBuf>,
    /// Measure one scenario in this process and print its result as JSON (how `bench`
    /// runs each scenario in a process of its own).
    #[arg(long, hide = true)]
    child: Option<String>,
}

#[derive(Subcommand, Debug)]
enum ShowCommand {
    /// Print a component's resolved values as a TOML run configuration section, which
    /// `numaplace run --config FILE` reads back to the same run.
    Show {
        /// Its name (see `numaplace list`).
        name: String,
        /// Overrides, e.g. `--set nodes=4`.
        #[arg(long = "set", value_name = "FIELD=VALUE")]
        sets: Vec<String>,
    },
}

#[derive(Args, Debug)]
struct RunArgs {
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
}

/// `numaplace oracle`.
#[derive(Args, Debug)]
struct OracleArgs {
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

#[derive(Args, Debug)]
struct BreakevenArgs {
    /// Machine preset (default: butterfly-plus).
    #[arg(long, default_value = "butterfly-plus")]
    machine: String,
    /// Override machine fields, e.g. `--set costs.block_transfer_per_word_ns=1100`.
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    sets: Vec<String>,
    /// Use this numerator A of inequality (2) instead of the machine's F/(T_r-T_l)
    /// (the paper prints 107).
    #[arg(long)]
    numerator: Option<f64>,
    /// Use this slope B of inequality (2) instead of the machine's T_b/(T_r-T_l)
    /// (the paper prints 0.24).
    #[arg(long)]
    slope: Option<f64>,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct SweepArgs {
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

#[derive(Args, Debug)]
struct ReportArgs {
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

#[derive(Args, Debug)]
struct ReproduceArgs {
    /// The paper (a directory name under the experiments directory).
    paper: Option<String>,
    /// List the papers available.
    #[arg(long)]
    list: bool,
    /// Reduced sizes fit for CI (seconds).
    #[arg(long)]
    quick: bool,
    /// Report failed claims but exit 0.
    #[arg(long)]
    no_fail: bool,
    /// Continue interrupted studies.
    #[arg(long)]
    resume: bool,
    /// Parallel runs (0 = one per core).
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// Where results go (`OUT/PAPER/STUDY.jsonl`).
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Read the papers from this directory (one directory per paper) instead of the
    /// copy of `experiments/` built into numaplace.
    #[arg(long, value_name = "DIR")]
    experiments: Option<PathBuf>,
    /// Print Markdown.
    #[arg(long)]
    markdown: bool,
    #[command(flatten)]
    limits: StudyLimits,
}

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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) if f.code == 0 => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("numaplace: {:#}", f.err);
            ExitCode::from(f.code)
        }
    }
}

fn dispatch(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Run(a) => run(a),
        Command::List { fields } => list(fields),
        Command::Machine {
            command: ShowCommand::Show { name, sets },
        } => machine_show(&name, &sets),
        Command::Workload {
            command: ShowCommand::Show { name, sets },
        } => section_show("workload", &name, &sets),
        Command::Policy {
            command: ShowCommand::Show { name, sets },
        } => section_show("policy", &name, &sets),
        Command::Scheduler {
            command: ShowCommand::Show { name, sets },
        } => section_show("scheduler", &name, &sets),
        Command::Sweep(a) => sweep(a),
        Command::Report(a) => report(a),
        Command::Reproduce(a) => reproduce(a),
        Command::Breakeven(a) => breakeven(a),
        Command::Bench(a) => bench(a),
        Command::Oracle(a) => oracle(a),
        Command::Tune(a) => tune_cmd::tune(a),
        Command::Robustness(a) => tune_cmd::robustness(a),
    }
}

fn run(a: RunArgs) -> Result<(), Failure> {
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
    // time; with --oracle the record is built whole.
    let record = if a.oracle {
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
    if a.oracle {
        let top = if a.pages > 0 { a.pages } else { 10 };
        return run_oracle(&cfg, None, top, a.json, Default::default());
    }
    let bar = progress::bar(est.ops.max(1), "ops (estimate)");
    progress::install_stop_handler();
    let monitor = Box::new(progress::RunMonitor { bar: bar.clone() });
    // The JSON record is built only when asked for: with the per-page report of a large
    // address space it takes far more memory than the run itself.
    let result = numaplace_harness::run_monitored(&cfg, Some((monitor, 1 << 16)));
    bar.finish_and_clear();
    let (stats, page_data) = result.map_err(|e| match e {
        SimError::Config(c) => Failure::from(UserError::new(format!("invalid configuration: {c}"))),
        e @ SimError::TimeOverflow { .. } => Failure::from(UserError::new(e.to_string())),
        other => Failure::from(anyhow::Error::new(other).context("simulation failed")),
    })?;
    // The record without its per-page list; the list is written a page at a time.
    let mut json = a
        .json
        .is_some()
        .then(|| numaplace_harness::result::record_without_pages(&cfg, &stats, &page_data));
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
    if let (Some(path), Some(json)) = (a.json, json) {
        let mut bytes = Vec::new();
        numaplace_harness::result::write_record(&mut bytes, &json, &stats, &page_data)
            .context("serialising the result")?;
        let body = String::from_utf8(bytes).context("serialising the result")?;
        if json_to_stdout {
            out(&(body + "\n"))?;
        } else {
            std::fs::write(&path, body + "\n")
                .with_context(|| format!("writing {}", path.display()))?;
        }
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

fn oracle(a: OracleArgs) -> Result<(), Failure> {
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
        let report = numaplace_harness::oracle::oracle_text(&sol, &[], a.top, rss);
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
    emit(report, a.json, || {
        let mut v = run.json.clone();
        if let Some(o) = v.as_object_mut() {
            let mut oj = numaplace_harness::oracle::oracle_json(&sol, true);
            if let Some(m) = oj.as_object_mut() {
                m.insert(
                    "replay".into(),
                    numaplace_harness::oracle::replay_json(&replayed, &sol),
                );
            }
            o.insert("oracle".into(), oj);
        }
        v
    })
}

fn list(fields: bool) -> Result<(), Failure> {
    let mut o = String::from("machines:\n");
    for name in presets::names() {
        let t = presets::preset_table(name)?;
        let d = t.get("description").and_then(|d| d.as_str()).unwrap_or("");
        o.push_str(&format!("  {name:<18} {d}\n"));
    }
    if fields {
        o.push_str("  fields of every machine (values from the preset; `machine show NAME`):\n");
        field_lines(&mut o, MachineConfig::fields(), None);
        o.push_str("run:\n");
        field_lines(
            &mut o,
            numaplace_core::ReportConfig::fields(),
            toml::Value::try_from(numaplace_core::ReportConfig::default()).ok(),
        );
    }
    // One section per registry: each component's name and description, and with
    // `--fields` its parameters.
    type Presets = &'static [(&'static str, &'static str)];
    fn section<C: serde::Serialize>(
        o: &mut String,
        title: &str,
        all: Vec<C>,
        name: impl Fn(&C) -> (&'static str, &'static str, &'static [FieldInfo], Presets),
        fields: bool,
    ) {
        o.push_str(title);
        o.push_str(":\n");
        for c in all {
            let (kind, desc, declared, presets) = name(&c);
            o.push_str(&format!("  {kind:<18} {desc}\n"));
            if !presets.is_empty() {
                let names: Vec<&str> = presets.iter().map(|p| p.0).collect();
                o.push_str(&format!(
                    "  {:<18} presets (`preset = \"NAME\"`): {}\n",
                    "",
                    names.join(", ")
                ));
            }
            if fields {
                field_lines(o, declared, toml::Value::try_from(&c).ok());
            }
        }
    }
    section(
        &mut o,
        "workloads",
        WorkloadConfig::all(),
        |c| (c.kind(), c.describe(), c.fields(), c.presets()),
        fields,
    );
    section(
        &mut o,
        "policies",
        PolicyConfig::all(),
        |c| (c.kind(), c.describe(), c.fields(), c.presets()),
        fields,
    );
    section(
        &mut o,
        "schedulers",
        SchedulerConfig::all(),
        |c| (c.kind(), c.describe(), c.fields(), c.presets()),
        fields,
    );
    out(&o)
}

/// One line per field: dotted name, default (when `defaults` is given), range with
/// unit, and the field's doc, in columns as wide as this block needs.
fn field_lines(o: &mut String, declared: &[FieldInfo], defaults: Option<toml::Value>) {
    let rows: Vec<[String; 4]> = flatten(declared)
        .into_iter()
        .map(|(name, f)| {
            let default = defaults
                .as_ref()
                .and_then(|d| name.split('.').try_fold(d, |v, k| v.get(k)))
                .map(|v| match v {
                    toml::Value::String(s) => format!("\"{s}\""),
                    v => v.to_string(),
                })
                .unwrap_or_else(|| "-".into());
            let range = match (f.range(), f.unit) {
                (r, "") => r,
                (r, u) if r.is_empty() => u.to_string(),
                (r, u) => format!("{r} {u}"),
            };
            [name, default, range, f.doc.to_string()]
        })
        .collect();
    let width = |i: usize| rows.iter().map(|r| r[i].len()).max().unwrap_or(0);
    let (w0, w1, w2) = (width(0), width(1), width(2));
    for [name, default, range, doc] in &rows {
        o.push_str(&format!(
            "      {name:<w0$}  {default:<w1$}  {range:<w2$}  {doc}\n"
        ));
    }
}

/// Prints `[section]` of a run configuration for the component `name` with `sets`
/// applied: the defaults of every parameter, readable back by `run --config`.
fn section_show(section: &str, name: &str, sets: &[String]) -> Result<(), Failure> {
    let kinds = match section {
        "workload" => WorkloadConfig::kinds(),
        "policy" => PolicyConfig::kinds(),
        _ => SchedulerConfig::kinds(),
    };
    if !kinds.contains(&name) {
        return Err(UserError::new(format!(
            "no {section} `{name}`; known: {}",
            kinds.join(", ")
        ))
        .into());
    }
    // Every configuration type defaults its fields, so the kind alone gives the defaults.
    let mut base = toml::Table::new();
    base.insert("kind".into(), toml::Value::String(name.into()));
    let mut doc = toml::Table::new();
    doc.insert(section.into(), toml::Value::Table(base));
    for s in sets {
        let prefixed = format!("{section}.{}", s.trim());
        numaplace_harness::resolve::apply_set(&mut doc, &prefixed)?;
    }
    // Read it back into its typed configuration, so what is printed is valid and complete.
    let table = doc
        .remove(section)
        .unwrap_or(toml::Value::Table(toml::Table::new()));
    let typed = |e: toml::de::Error| UserError::new(format!("{section}: {}", e.message()));
    let (value, presets) = match section {
        "workload" => {
            let c = table.try_into::<WorkloadConfig>().map_err(typed)?;
            (toml::Value::try_from(&c), c.presets())
        }
        "policy" => {
            let c = table.try_into::<PolicyConfig>().map_err(typed)?;
            (toml::Value::try_from(&c), c.presets())
        }
        _ => {
            let c = table.try_into::<SchedulerConfig>().map_err(typed)?;
            (toml::Value::try_from(&c), c.presets())
        }
    };
    let value = value.context("serialising the section")?;
    // The named settings as comments (`--set preset='"NAME"'` shows one).
    let mut listed = String::new();
    if !presets.is_empty() {
        listed.push_str("# presets (`preset = \"NAME\"`, other fields override it):\n");
        for (p, source) in presets {
            listed.push_str(&format!("#   {p:<16} {source}\n"));
        }
    }
    let mut shown = toml::Table::new();
    shown.insert(section.into(), value);
    let body = toml::to_string_pretty(&shown).context("serialising the section")?;
    out(&format!(
        "# {section} `{name}`: every parameter with its value; `numaplace run --config FILE` reads this\n{listed}{body}"
    ))
}

fn machine_show(name: &str, sets: &[String]) -> Result<(), Failure> {
    let mut table = presets::preset_table(name)?;
    for s in sets {
        numaplace_harness::resolve::apply_set(&mut table, s)?;
    }
    let cfg: MachineConfig = machine_from_table(table)?;
    let m =
        Machine::new(cfg.clone()).map_err(|e| UserError::new(format!("machine {name}: {e}")))?;
    let mut doc = toml::Table::new();
    doc.insert(
        "machine".into(),
        toml::Value::try_from(&cfg).context("serialising the machine")?,
    );
    let body = toml::to_string_pretty(&doc).context("serialising the machine")?;
    // The summary as comments: the output is a run configuration `run --config` reads.
    let summary: String = text::machine_summary(&m)
        .lines()
        .map(|l| format!("# {l}\n"))
        .collect();
    out(&format!("{summary}{body}"))
}

fn breakeven(a: BreakevenArgs) -> Result<(), Failure> {
    let mut table = presets::preset_table(&a.machine)?;
    for s in &a.sets {
        numaplace_harness::resolve::apply_set(&mut table, s)?;
    }
    let cfg: MachineConfig = machine_from_table(table)?;
    let m = Machine::new(cfg).map_err(|e| UserError::new(format!("machine {}: {e}", a.machine)))?;
    for (name, v) in [("--numerator", a.numerator), ("--slope", a.slope)] {
        if v.is_some_and(|x| !x.is_finite() || x < 0.0) {
            return Err(UserError::new(format!("{name}: must be a non-negative number")).into());
        }
    }
    if a.json {
        let v = numaplace_harness::analysis::breakeven_json(&m, a.numerator, a.slope)?;
        let body = serde_json::to_string_pretty(&v).context("serialising the analysis")?;
        out(&(body + "\n"))
    } else {
        out(&numaplace_harness::analysis::breakeven_text(
            &m,
            a.numerator,
            a.slope,
        )?)
    }
}

/// `--min-seconds`: a finite number of seconds from 0 to an hour.
fn min_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=3600.0).contains(&v) => Ok(v),
        Ok(_) => Err("must be from 0 to 3600 seconds".into()),
        Err(e) => Err(format!("not a number of seconds: {e}")),
    }
}

fn bench(a: BenchArgs) -> Result<(), Failure> {
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
        bench::SCENARIOS.iter().map(|s| s.name).collect()
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

fn sweep(a: SweepArgs) -> Result<(), Failure> {
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

fn report(a: ReportArgs) -> Result<(), Failure> {
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

fn reproduce(a: ReproduceArgs) -> Result<(), Failure> {
    use numaplace_study::reproduce::{reproduce_from, Experiments, ReproduceOptions};
    let experiments = match &a.experiments {
        Some(dir) => Experiments::Dir(dir.clone()),
        None => Experiments::Builtin(BUILTIN_EXPERIMENTS),
    };
    if a.list || a.paper.is_none() {
        let papers = experiments.list().map_err(user)?;
        let list: String = papers
            .iter()
            .map(|p| format!("{:<16} {}\n", p.name, p.title))
            .collect();
        return out(&list);
    }
    let paper = a.paper.unwrap_or_default();
    let source = experiments.paper(&paper).map_err(user)?;
    let opts = ReproduceOptions {
        quick: a.quick,
        jobs: a.jobs,
        no_fail: a.no_fail,
        resume: a.resume,
        max_runs: a.limits.max_runs(),
        ..ReproduceOptions::new(a.out)
    };
    let runner = a.limits.runner(a.jobs);
    let rep = reproduce_from(&source, &runner, &opts).map_err(user)?;
    if a.markdown {
        out(&rep.render_markdown())?;
    } else {
        out(&rep.render_text())?;
    }
    match rep.exit_code() {
        0 => Ok(()),
        code => Err(Failure {
            code: code.clamp(1, 255) as u8,
            err: anyhow::anyhow!("claims of `{paper}` did not hold"),
        }),
    }
}

// The `experiments/` tree, built in by build.rs.
include!(concat!(env!("OUT_DIR"), "/experiments.rs"));
