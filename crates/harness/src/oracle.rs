//! The offline optimum beside a run: record the run's trace, solve it, and render the
//! optimum, the policy's cost in the same model, the regret and the pages it comes from.

use crate::result::{record_without_pages, write_record_with, RunOutput, Spliced, ValueList};
use numaplace_core::memory::PageNames;
use numaplace_core::RunConfig;
use numaplace_oracle::replay::{Op, ScheduleModel};
use numaplace_oracle::solve::{OracleError, PageResult, Solution, SolveOptions};
use numaplace_oracle::Cost;
use serde_json::{json, Value};
use std::fmt::Write;
use std::path::Path;

/// Runs `cfg` recording its trace to `trace` (its per-page report turned on), then
/// solves the trace. The run's `json` is its record without the per-page list, which
/// [`write_oracle_record`] writes a page at a time with the oracle's report.
pub fn run_with_oracle(
    cfg: &RunConfig,
    trace: &Path,
    opts: SolveOptions,
) -> Result<(RunOutput, Solution), OracleError> {
    let stats = numaplace_oracle::record::record(cfg, trace)?;
    let mut shown = cfg.clone();
    shown.report.per_page = true;
    let data = shown.page_data()?;
    let json = record_without_pages(&shown, &stats, &data);
    let run = RunOutput {
        stats,
        page_data: data,
        json,
    };
    let sol = numaplace_oracle::solve::solve(trace, opts)?;
    Ok((run, sol))
}

/// Writes the record of a run with its optimum: `run`'s record (from
/// [`run_with_oracle`]) with its per-page list, and under `oracle` the report `oracle`
/// (from [`oracle_json`] without pages, perhaps amended) with the solution's per-page
/// list, both lists serialised a page at a time: the bytes of the whole record built in
/// memory, in a fraction of it.
pub fn write_oracle_record(
    w: impl std::io::Write,
    run: &RunOutput,
    oracle: &Value,
    sol: &Solution,
) -> serde_json::Result<()> {
    let empty = serde_json::Map::new();
    let report = Spliced {
        rest: oracle.as_object().unwrap_or(&empty),
        first: ("pages", ValueList(&sol.pages)),
        second: None::<(&str, ())>,
    };
    write_record_with(
        w,
        &run.json,
        &run.stats,
        &run.page_data,
        Some(("oracle", &report)),
    )
}

fn ms(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 * 1e-6)
}

fn signed_ms(ns: i128) -> String {
    format!("{:+.3} ms", ns as f64 * 1e-6)
}

fn bytes(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    }
}

/// Which model the regret is measured in, in words.
fn against(sol: &Solution) -> &'static str {
    let limits = sol.capacity_binds();
    match (sol.replication.is_some(), sol.policy_replicated, limits) {
        (true, _, false) => "the replication model's optimum",
        (true, _, true) => "the replication model's optimum without the machine's frame limits (a lower bound of the optimum with them)",
        (false, false, false) => "the migration-only optimum",
        (false, false, true) => "the migration-only optimum without the machine's frame limits (a lower bound of the optimum with them)",
        (false, true, _) => {
            "the migration-only optimum, which is NOT a bound for a policy that replicates"
        }
    }
}

/// The capacity relaxation's lines of the report.
fn capacity_text(o: &mut String, sol: &Solution) {
    if let Some(c) = sol.capacity.as_ref().filter(|c| c.unlimited_fits) {
        let _ = writeln!(
            o,
            "  frame limits: {} of the nodes hold fewer frames than the {} pages referenced, but the optimum without limits keeps within each one's frames on average over the run (checked on the aggregate only)",
            c.limited.len(),
            sol.pages.len()
        );
    } else if let Some(c) = &sol.capacity {
        const SHOWN: usize = 4;
        let mut nodes: Vec<String> = c
            .limited
            .iter()
            .zip(&c.mean_frames_used)
            .take(SHOWN)
            .map(|(l, used)| {
                format!(
                    "node {} ({} frames; the relaxed schedule keeps {used:.1} on average)",
                    l.node, l.frames
                )
            })
            .collect();
        if c.limited.len() > SHOWN {
            nodes.push(format!("and {} more", c.limited.len() - SHOWN));
        }
        let _ = writeln!(
            o,
            "  {:<30} {:>67}",
            "migration, frame limits, >=",
            ms(c.bound)
        );
        let _ = writeln!(
            o,
            "  frame limits bind: {} pages referenced, fewer frames on {}; the optima above ignore the limits. The bound is a Lagrangian relaxation's (frame occupancy priced per window, {} window(s), {} trace passes in {:.2} s, state {}{}): the optimum with the limits is at least this, {:.3}x the optimum without them",
            sol.pages.len(),
            nodes.join(", "),
            c.windows,
            c.passes,
            c.seconds,
            bytes(c.state_bytes),
            if c.unlimited_fits {
                "; the optimum without limits already fits them on aggregate, so the relaxation cannot tighten it"
            } else {
                ""
            },
            c.bound as f64 / c.unlimited.max(1) as f64
        );
    } else if let Some(why) = &sol.capacity_refused {
        let _ = writeln!(
            o,
            "  frame limits bind ({} pages referenced, a node holds fewer), but their bound was not computed: {why}",
            sol.pages.len()
        );
    }
}

/// The oracle's section of a run's report; `data` names the arrays on each page,
/// `top` pages are listed by regret, `peak_rss` is the process's peak memory.
pub fn oracle_text(sol: &Solution, data: &PageNames, top: usize, peak_rss: Option<u64>) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "offline optimum (per page, exact for its model; references priced by the copy that serves them, moves by the machine's migration, replication and coherency costs; fault handling, shootdowns, PTE locks, contention and synchronisation are not in the model)"
    );
    let _ = writeln!(
        o,
        "  {:<30} {:>16} {:>16} {:>16} {:>16}",
        "schedule", "references", "moves", "coherency", "total"
    );
    let mut row = |name: &str, c: &Cost| {
        let _ = writeln!(
            o,
            "  {:<30} {:>16} {:>16} {:>16} {:>16}",
            name,
            ms(c.refs),
            ms(c.moves),
            ms(c.coherency),
            ms(c.total())
        );
    };
    row(&format!("policy `{}`", sol.header.policy), &sol.policy);
    row("optimum, migration only", &sol.migration);
    if let Some(r) = &sol.replication {
        row("optimum, replication", r);
    }
    if let Some(why) = &sol.replication_refused {
        let _ = writeln!(o, "  replication model not solved: {why}");
        let _ = writeln!(
            o,
            "  {:<30} {:>67}",
            "replication, lower bound",
            ms(sol.replication_bound)
        );
    }
    capacity_text(&mut o, sol);
    let _ = writeln!(
        o,
        "  regret (policy / optimum)      {:.3}x, against {}",
        sol.regret(),
        against(sol)
    );
    if let Some(most) = sol.regret_at_most() {
        let _ = if sol.policy_replicated {
            writeln!(
                o,
                "  regret against the replication model is at most {most:.3}x (policy / the relaxation's lower bound of its optimum)"
            )
        } else {
            writeln!(
                o,
                "  regret against the migration-only optimum with the frame limits is at most {most:.3}x (policy / the capacity relaxation's lower bound)"
            )
        };
    }
    let _ = writeln!(
        o,
        "  solved {} reference runs ({} references) in {:.2} s: {:.3e} runs/s, {:.3e} references/s; solver state {}{}",
        sol.records,
        sol.footer.words,
        sol.seconds,
        sol.runs_per_second(),
        sol.refs_per_second(),
        bytes(sol.state_bytes),
        peak_rss.map_or(String::new(), |b| format!(", process peak RSS {}", bytes(b)))
    );
    let mut worst: Vec<&PageResult> = sol.pages.iter().filter(|p| p.regret_ns() > 0).collect();
    worst.sort_by_key(|p| (std::cmp::Reverse(p.regret_ns()), p.vpn));
    if top > 0 && !worst.is_empty() {
        let _ = writeln!(
            o,
            "  pages by regret (policy less optimum, by cause; {} of {} referenced pages cost more than their optimum):",
            worst.len(),
            sol.pages.len()
        );
        let _ = writeln!(
            o,
            "    {:>8} {:<16} {:>14} {:>14} {:>14} {:>14} {:>14}",
            "page", "data", "policy", "optimum", "references", "moves", "coherency"
        );
        for p in worst.iter().take(top) {
            let opt = p.optimum();
            let d = |a: u64, b: u64| signed_ms(a as i128 - b as i128);
            let _ = writeln!(
                o,
                "    {:>8} {:<16} {:>14} {:>14} {:>14} {:>14} {:>14}",
                p.vpn,
                data.get(p.vpn as usize).unwrap_or(""),
                ms(p.policy.total()),
                ms(opt.total()),
                d(p.policy.refs, opt.refs),
                d(p.policy.moves, opt.moves),
                d(p.policy.coherency, opt.coherency)
            );
        }
    }
    o
}

/// The oracle's results as JSON (totals, regret, throughput; per-page results when
/// `pages`).
pub fn oracle_json(sol: &Solution, pages: bool) -> Value {
    let mut v = json!({
        "policy": sol.header.policy,
        "policy_cost": sol.policy,
        "optimum_migration": sol.migration,
        "optimum_replication": sol.replication,
        "replication_refused": sol.replication_refused,
        "replication_lower_bound": sol.replication_bound,
        "regret_at_most": sol.regret_at_most(),
        "regret": sol.regret(),
        "regret_against": against(sol),
        "runs": sol.records,
        "references": sol.footer.words,
        "solve_seconds": sol.seconds,
        "runs_per_second": sol.runs_per_second(),
        "references_per_second": sol.refs_per_second(),
        "solver_state_bytes": sol.state_bytes,
    });
    // Only where frame limits bind (records of other runs stay as they were).
    if let Some(o) = v.as_object_mut() {
        if let Some(c) = &sol.capacity {
            o.insert("capacity".into(), json!(c));
        }
        if let Some(why) = &sol.capacity_refused {
            o.insert("capacity_refused".into(), json!(why));
        }
    }
    if pages {
        if let Some(o) = v.as_object_mut() {
            o.insert("pages".into(), json!(sol.pages));
        }
    }
    v
}

/// An optimum replayed in the simulator (`oracle-replay`).
pub struct Replayed {
    /// The schedule that was replayed (its `model` says which optimum).
    pub schedule: numaplace_oracle::replay::Schedule,
    /// The replayed run's statistics.
    pub stats: numaplace_core::Stats,
    /// The replayed run's own cost in the model (its `policy`).
    pub solution: Solution,
}

/// Extracts the optimal schedule of `model` from `trace` (the replication model with
/// at most `budget` copy-set updates, as the solver had), writes it to `schedule`, and
/// runs `cfg` again under `oracle-replay` with it, recording to `replay_trace`.
pub fn replay(
    cfg: &RunConfig,
    trace: &Path,
    schedule: &Path,
    replay_trace: &Path,
    model: ScheduleModel,
    budget: u64,
) -> Result<Replayed, OracleError> {
    let sched = match model {
        ScheduleModel::Migration => numaplace_oracle::replay::migration_schedule(trace)?,
        ScheduleModel::Replication => {
            numaplace_oracle::replay::replication_schedule(trace, budget)?
        }
    };
    let io = |e: std::io::Error| OracleError::Io {
        path: schedule.display().to_string(),
        source: e,
    };
    let text = sched.to_json().map_err(|e| io(e.into()))?;
    std::fs::write(schedule, text).map_err(io)?;
    let mut again = cfg.clone();
    again.policy = numaplace_core::PolicyConfig::new(numaplace_oracle::replay::ReplayConfig {
        schedule: schedule.display().to_string(),
    });
    let stats = numaplace_oracle::record::record(&again, replay_trace)?;
    // Only the replayed run's own cost is wanted: no optimum of its trace.
    let solution = numaplace_oracle::solve::solve(
        replay_trace,
        SolveOptions {
            replication: false,
            ..SolveOptions::default()
        },
    )?;
    Ok(Replayed {
        schedule: sched,
        stats,
        solution,
    })
}

/// The optimum a replay of `model` carries out, from the original run's solution.
fn replayed_optimum(sol: &Solution, model: ScheduleModel) -> Option<Cost> {
    match model {
        ScheduleModel::Migration => Some(sol.migration),
        ScheduleModel::Replication => sol.replication,
    }
}

/// The name of the optimum a replay carried out, in words.
fn optimum_name(model: ScheduleModel) -> &'static str {
    match model {
        ScheduleModel::Migration => "migration-only optimum",
        ScheduleModel::Replication => "replication optimum",
    }
}

/// The replay's section of the report, beside the policy's own run.
pub fn replay_text(r: &Replayed, policy: &numaplace_core::Stats, sol: &Solution) -> String {
    let mut o = String::new();
    let secs = |ns: u64| format!("{:.6} s", ns as f64 * 1e-9);
    let s = &r.schedule;
    let model = s.model;
    let _ = writeln!(
        o,
        "replay of the {} (`oracle-replay`: {} initial placements; {} migrations, {} replications, {} collapses scheduled, made by daemons of the receiving nodes)",
        optimum_name(model),
        s.initial.iter().flatten().count(),
        s.count(Op::Migrate),
        s.count(Op::Replicate),
        s.count(Op::Collapse)
    );
    let _ = writeln!(
        o,
        "  makespan {} replayed, {} under `{}`",
        secs(r.stats.makespan_ns),
        secs(policy.makespan_ns),
        sol.header.policy
    );
    let _ = writeln!(
        o,
        "  cost in the model: {} replayed, {} the {}",
        ms(r.solution.policy.total()),
        replayed_optimum(sol, model).map_or("?".into(), |c| ms(c.total())),
        optimum_name(model)
    );
    let e = &r.stats.events;
    let _ = writeln!(
        o,
        "  made: {} migrations, {} replications, {} coherency faults (a scheduled action finding the page already as it leaves it makes nothing; a write finding the page still replicated makes a coherency fault, and a copy it took away from the schedule is made again at its node's next read)",
        e.migrations, e.replications, e.coherency_faults
    );
    let _ = writeln!(
        o,
        "  (the per-page optimum ignores timing, contention and synchronisation: it prices references and moves only; the replayed makespan is what its schedule gives with them)"
    );
    o
}

/// The replay's results as JSON.
pub fn replay_json(r: &Replayed, sol: &Solution) -> Value {
    let s = &r.schedule;
    let e = &r.stats.events;
    json!({
        "model": s.model.name(),
        "makespan_ns": r.stats.makespan_ns,
        "model_cost": r.solution.policy,
        "optimum_cost": replayed_optimum(sol, s.model),
        "migrations_scheduled": s.count(Op::Migrate),
        "replications_scheduled": s.count(Op::Replicate),
        "collapses_scheduled": s.count(Op::Collapse),
        "migrations": e.migrations,
        "replications": e.replications,
        "coherency_faults": e.coherency_faults,
    })
}
