//! The `numaplace` command.

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use numaplace_core::sched::SchedulerConfig;
use numaplace_core::workload::WorkloadConfig;
use numaplace_core::{Machine, MachineConfig, PolicyConfig, SimError};
use numaplace_harness::{presets, resolve, text, Overrides, UserError};
use std::path::PathBuf;
use std::process::ExitCode;

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
    List,
    /// Machine presets.
    Machine {
        #[command(subcommand)]
        command: MachineCommand,
    },
    /// Time fixed scenarios on this host (simulated references and operations per second).
    Bench {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Repetitions per scenario (the best time is kept).
        #[arg(long, default_value_t = 3)]
        reps: usize,
    },
}

#[derive(Subcommand, Debug)]
enum MachineCommand {
    /// Print a preset's resolved values as TOML.
    Show {
        /// Preset name (see `numaplace list`).
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
}

/// An error with the exit code it deserves: 2 for bad input, 1 for anything else.
struct Failure {
    code: u8,
    err: anyhow::Error,
}

impl From<anyhow::Error> for Failure {
    fn from(err: anyhow::Error) -> Failure {
        let code = if err.downcast_ref::<UserError>().is_some() {
            2
        } else {
            1
        };
        Failure { code, err }
    }
}

impl From<UserError> for Failure {
    fn from(e: UserError) -> Failure {
        Failure {
            code: 2,
            err: e.into(),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("numaplace: {:#}", f.err);
            ExitCode::from(f.code)
        }
    }
}

fn dispatch(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Run(a) => run(a),
        Command::List => {
            list();
            Ok(())
        }
        Command::Machine {
            command: MachineCommand::Show { name, sets },
        } => machine_show(&name, &sets),
        Command::Bench { json, reps } => {
            bench(json, reps);
            Ok(())
        }
    }
}

fn read_config(path: &PathBuf) -> Result<(String, toml::Table), Failure> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| UserError::new(format!("{origin}: cannot read: {e}")))?;
    let table = numaplace_harness::resolve::parse_file(&origin, &text)?;
    Ok((origin, table))
}

fn run(a: RunArgs) -> Result<(), Failure> {
    let file = a.config.as_ref().map(read_config).transpose()?;
    let ov = Overrides {
        machine: a.machine,
        workload: a.workload,
        policy: a.policy,
        seed: a.seed,
        sets: a.sets,
    };
    let cfg = resolve(file.as_ref().map(|(o, t)| (o.as_str(), t.clone())), &ov)?;
    let out = numaplace_harness::run_to_json(&cfg).map_err(|e| match e {
        SimError::Config(c) => Failure::from(UserError::new(format!("invalid configuration: {c}"))),
        other => Failure::from(anyhow::Error::new(other).context("simulation failed")),
    })?;
    print!("{}", text::run_summary(&cfg, &out.stats));
    if a.pages > 0 {
        print!("{}", text::page_report(&out.stats, a.pages));
    }
    if let Some(path) = a.json {
        let body = serde_json::to_string_pretty(&out.json).context("serialising the result")?;
        if path.as_os_str() == "-" {
            println!("{body}");
        } else {
            std::fs::write(&path, body + "\n")
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    Ok(())
}

fn list() {
    println!("machines:");
    for name in presets::names() {
        let t = presets::preset_table(name).expect("built-in presets parse");
        let d = t.get("description").and_then(|d| d.as_str()).unwrap_or("");
        println!("  {name:<16} {d}");
    }
    println!("workloads:");
    for w in WorkloadConfig::all() {
        println!("  {:<16} {}", w.kind(), w.describe());
    }
    println!("policies:");
    for p in PolicyConfig::all() {
        println!("  {:<16} {}", p.kind(), p.describe());
    }
    println!("schedulers:");
    for s in SchedulerConfig::all() {
        println!("  {:<16} {}", s.kind(), s.describe());
    }
}

fn machine_show(name: &str, sets: &[String]) -> Result<(), Failure> {
    let mut table = presets::preset_table(name)?;
    for s in sets {
        numaplace_harness::resolve::apply_set(&mut table, s)?;
    }
    let cfg: MachineConfig = serde_path_to_error_free(table)?;
    let m =
        Machine::new(cfg.clone()).map_err(|e| UserError::new(format!("machine {name}: {e}")))?;
    print!("{}", text::machine_summary(&m));
    let body = toml::to_string_pretty(&cfg).context("serialising the machine")?;
    println!("{body}");
    Ok(())
}

fn serde_path_to_error_free(table: toml::Table) -> Result<MachineConfig, Failure> {
    toml::Value::Table(table)
        .try_into::<MachineConfig>()
        .map_err(|e| UserError::new(format!("invalid machine: {}", e.message())).into())
}

fn bench(json: bool, reps: usize) {
    let results = numaplace_harness::bench::run_all(reps);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&results).expect("bench results serialise")
        );
        return;
    }
    println!(
        "{:<44} {:>14} {:>12} {:>10} {:>16} {:>14}",
        "scenario", "refs", "ops", "seconds", "refs/s", "ops/s"
    );
    for r in results {
        println!(
            "{:<44} {:>14} {:>12} {:>10.4} {:>16.3e} {:>14.3e}",
            r.name, r.refs, r.ops, r.seconds, r.refs_per_sec, r.ops_per_sec
        );
    }
}
