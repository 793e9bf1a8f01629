//! The `numaplace` command: the command line parsed and each subcommand handed to its
//! module under `commands/`.

use clap::{Parser, Subcommand};
use commands::{
    bench, breakeven, import, list, oracle, record, report, reproduce, robustness, run, show,
    sweep, tune,
};
use failure::Failure;
use std::process::ExitCode;

mod commands;
mod config;
mod failure;
mod limits;
mod optimum;
mod output;
mod parse;
mod progress;
mod search;

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
    Run(run::RunArgs),
    /// List every machine, workload, policy and scheduler with a one-line description.
    List(list::ListArgs),
    /// Machine presets.
    Machine(show::ShowArgs),
    /// Workloads.
    Workload(show::ShowArgs),
    /// Placement policies.
    Policy(show::ShowArgs),
    /// Schedulers.
    Scheduler(show::ShowArgs),
    /// Run an experiment spec: every combination of its axes and trials, in parallel,
    /// appending each finished run to a JSON Lines results file.
    Sweep(sweep::SweepArgs),
    /// Summarise (and plot) a stored results file.
    Report(report::ReportArgs),
    /// Run a paper's studies, show ours beside the paper's numbers and check its claims.
    Reproduce(reproduce::ReproduceArgs),
    /// When does moving a page pay? PLATINUM's minimum page sizes (its Table 1) and LaRowe
    /// et al.'s break-even reference counts, from a machine's costs.
    Breakeven(breakeven::BreakevenArgs),
    /// The offline optimum of a run: record its references, solve the cheapest placement
    /// of every page for them (migration only; migration + replication with
    /// write-invalidate), and set the policy's cost in the same model beside it.
    Oracle(oracle::OracleArgs),
    /// Record a real multi-threaded program (OpenMP or pthreads) under Valgrind: each
    /// thread's references folded into runs, its instructions, and its synchronisation,
    /// written as a trace that `run --workload trace --set workload.path=TRACE` replays.
    Record(record::RecordArgs),
    /// Turn a trace recorded elsewhere (Valgrind lackey's text) into a trace that
    /// `run --workload trace` replays.
    Import(import::ImportArgs),
    /// Time fixed scenarios on this host: operations and simulated references per CPU
    /// second and peak memory, each scenario in a process of its own (`--compare` a stored
    /// `--json` result for ratios).
    Bench(bench::BenchArgs),
    /// Tune a policy's parameters for one workload on one machine: a noise-aware search
    /// of the space the policy declares, its budget counted in simulation runs; writes the
    /// best setting as a [policy] table, every candidate and a convergence plot.
    Tune(tune::TuneArgs),
    /// Settings of a policy across a grid of workloads x machines: each setting's regret
    /// against each cell's tuned best, its worst and mean regret, and the minimax-regret
    /// default.
    Robustness(robustness::RobustnessArgs),
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
        Command::Run(a) => run::run(a),
        Command::List(a) => list::run(a),
        Command::Machine(a) => show::run("machine", a),
        Command::Workload(a) => show::run("workload", a),
        Command::Policy(a) => show::run("policy", a),
        Command::Scheduler(a) => show::run("scheduler", a),
        Command::Sweep(a) => sweep::run(a),
        Command::Report(a) => report::run(a),
        Command::Reproduce(a) => reproduce::run(a),
        Command::Breakeven(a) => breakeven::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Oracle(a) => oracle::run(a),
        Command::Record(a) => record::run(a),
        Command::Import(a) => import::run(a),
        Command::Tune(a) => tune::run(a),
        Command::Robustness(a) => robustness::run(a),
    }
}
