//! The offline optimum against real runs: for every registered workload and policy on a
//! small machine, the optimum is never dearer than the policy's own schedule priced in
//! the same model; and a recorded trace reads back exactly as the run saw it.

mod common;

use numaplace_core::{PolicyConfig, RunConfig};
use numaplace_harness::resolve::{resolve, Overrides};
use numaplace_oracle::replay::{Op, ScheduleModel};
use numaplace_oracle::solve::{solve, SolveOptions, DEFAULT_REPLICATION_BUDGET};

fn config(workload: &str, policy: &str, nodes: u16) -> RunConfig {
    let mut sets = common::small(workload);
    sets.retain(|s| !s.starts_with("workload.threads"));
    sets.push(format!("machine.nodes={nodes}"));
    sets.push(format!("workload.threads={nodes}"));
    sets.push("machine.frames_per_node=4096".into());
    resolve(
        None,
        &Overrides {
            machine: Some("butterfly-plus".into()),
            workload: Some(workload.into()),
            policy: Some(policy.into()),
            seed: Some(1),
            sets,
        },
    )
    .unwrap()
}

#[test]
fn the_optimum_is_never_dearer_than_any_policy_in_the_same_model() {
    let dir = tempfile::tempdir().unwrap();
    for w in ["jacobi", "gauss", "matvec", "backprop"] {
        for p in PolicyConfig::all() {
            if matches!(p.kind(), "holliday-daemon" | "hemem" | "colloid") {
                // Its daemons need processors of their own: fewer nodes for threads.
                continue;
            }
            if matches!(p.kind(), "linux-tiering" | "tpp" | "memtis" | "damon") {
                // Tiering policies refuse a machine of one tier.
                continue;
            }
            let cfg = config(w, p.kind(), 4);
            let path = dir.path().join(format!("{w}-{}.bin", p.kind()));
            numaplace_oracle::record::record(&cfg, &path).unwrap();
            let sol = solve(&path, SolveOptions::default()).unwrap();
            let rep = sol
                .replication
                .expect("4 nodes are solved with replication");
            assert!(
                rep.total() <= sol.policy.total(),
                "{w}/{}: replication optimum {} > policy {}",
                p.kind(),
                rep.total(),
                sol.policy.total()
            );
            assert!(rep.total() <= sol.migration.total());
            if !sol.policy_replicated {
                assert!(
                    sol.migration.total() <= sol.policy.total(),
                    "{w}/{}: migration optimum {} > policy {}",
                    p.kind(),
                    sol.migration.total(),
                    sol.policy.total()
                );
            }
            for page in &sol.pages {
                assert!(page.regret_ns() >= 0, "{w}/{} page {}", p.kind(), page.vpn);
            }
        }
    }
}

#[test]
fn a_recorded_trace_holds_every_reference_the_run_made() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config("jacobi", "platinum", 4);
    let path = dir.path().join("t.bin");
    let stats = numaplace_oracle::record::record(&cfg, &path).unwrap();
    let mut r = numaplace_oracle::trace::TraceReader::open(&path).unwrap();
    let mut recs = Vec::new();
    while r.next_block(&mut recs).unwrap() {}
    let words: u64 = recs.iter().map(|x| x.count as u64).sum();
    assert_eq!(words, stats.refs.total);
    assert_eq!(recs.len() as u64, r.footer.records);
    let remote: u64 = recs
        .iter()
        .filter(|x| x.node != x.target)
        .map(|x| x.count as u64)
        .sum();
    assert_eq!(remote, stats.refs.remote);
    assert!(recs.windows(2).all(|w| w[0].time <= w[1].time));
    assert_eq!(r.header.machine, cfg.machine);
}

#[test]
fn a_policy_schedule_priced_from_the_trace_matches_the_runs_reference_costs() {
    // Static placement makes no moves: its cost in the model is its references alone.
    let dir = tempfile::tempdir().unwrap();
    let cfg = config("matvec", "static", 4);
    let path = dir.path().join("s.bin");
    numaplace_oracle::record::record(&cfg, &path).unwrap();
    let sol = solve(&path, SolveOptions::default()).unwrap();
    assert_eq!(sol.policy.moves + sol.policy.coherency, 0);
    assert!(sol.migration.total() <= sol.policy.total());
}

#[test]
fn replaying_the_optimum_makes_the_scheduled_moves() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config("jacobi", "static", 4);
    let trace = dir.path().join("r.bin");
    numaplace_oracle::record::record(&cfg, &trace).unwrap();
    let r = numaplace_harness::oracle::replay(
        &cfg,
        &trace,
        &dir.path().join("sched.json"),
        &dir.path().join("again.bin"),
        ScheduleModel::Migration,
        DEFAULT_REPLICATION_BUDGET,
    )
    .unwrap();
    let sol = solve(&trace, SolveOptions::default()).unwrap();
    assert_eq!(r.schedule.model, ScheduleModel::Migration);
    assert_eq!(r.schedule.cost, sol.migration.total());
    assert_eq!(
        r.schedule.count(Op::Replicate) + r.schedule.count(Op::Collapse),
        0
    );
    assert!(r.stats.events.migrations <= r.schedule.count(Op::Migrate) as u64);
    assert!(r.stats.makespan_ns > 0);
}

#[test]
fn the_replication_schedule_of_a_recorded_run_costs_the_replication_optimum() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config("gauss", "platinum", 4);
    let trace = dir.path().join("g.bin");
    numaplace_oracle::record::record(&cfg, &trace).unwrap();
    let sol = solve(&trace, SolveOptions::default()).unwrap();
    let sched =
        numaplace_oracle::replay::replication_schedule(&trace, DEFAULT_REPLICATION_BUDGET).unwrap();
    assert_eq!(sched.model, ScheduleModel::Replication);
    assert_eq!(sched.cost, sol.replication.unwrap().total());
    assert!(
        sched.count(Op::Replicate) > 0,
        "gauss's pivot rows are read by all"
    );
    assert!(sched.actions.windows(2).all(|w| w[0].time <= w[1].time));
}

#[test]
fn replaying_the_replication_optimum_replicates_and_reports_its_model() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config("gauss", "platinum", 4);
    let trace = dir.path().join("g.bin");
    numaplace_oracle::record::record(&cfg, &trace).unwrap();
    let r = numaplace_harness::oracle::replay(
        &cfg,
        &trace,
        &dir.path().join("sched.json"),
        &dir.path().join("again.bin"),
        ScheduleModel::Replication,
        DEFAULT_REPLICATION_BUDGET,
    )
    .unwrap();
    // Scheduled ones, and again those a late write took away (so no upper bound).
    assert!(r.stats.events.replications > 0);
    let sol = solve(&trace, SolveOptions::default()).unwrap();
    let text = numaplace_harness::oracle::replay_text(&r, &r.stats, &sol);
    assert!(text.contains("replay of the replication optimum"), "{text}");
    let json = numaplace_harness::oracle::replay_json(&r, &sol);
    assert_eq!(json["model"], "replication");
    assert_eq!(json["optimum_cost"]["refs"], sol.replication.unwrap().refs);
}

/// A version-2 schedule of one page: placed on node 0, replicated onto node 1 at 1 us,
/// collapsed onto node 0 at 2 us.
const REPLICATE_THEN_COLLAPSE: &str = r#"{"version": 2, "model": "replication",
  "initial": [0],
  "actions": [
    {"time": 1000, "vpn": 0, "op": "replicate", "node": 1},
    {"time": 2000, "vpn": 0, "op": "collapse", "node": 0}],
  "cost": 0}"#;

#[test]
fn a_scheduled_replication_and_collapse_are_made_in_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    std::fs::write(&path, REPLICATE_THEN_COLLAPSE).unwrap();
    let mut cfg = config("jacobi", "static", 2);
    cfg.policy = PolicyConfig::new(numaplace_oracle::replay::ReplayConfig {
        schedule: path.display().to_string(),
    });
    let stats = cfg.engine().unwrap().run().unwrap();
    assert_eq!(stats.events.replications, 1);
    // The collapse is the scheduled one, or a write's coming first: exactly one.
    assert_eq!(stats.events.coherency_faults, 1);
    assert_eq!(stats.events.migrations, 0);
}

#[test]
fn the_replication_model_is_refused_above_sixteen_nodes_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config("jacobi", "static", 4);
    cfg.machine.nodes = 17;
    let path = dir.path().join("n.bin");
    numaplace_oracle::record::record(&cfg, &path).unwrap();
    let sol = solve(&path, SolveOptions::default()).unwrap();
    assert!(sol.replication.is_none());
    assert!(sol.replication_refused.unwrap().contains("at most 16"));
}

#[test]
fn frame_limits_the_unlimited_optimum_keeps_within_leave_the_regret_exact() {
    // Every node holds one frame fewer than the pages referenced, but the optimum spreads
    // the pages over four nodes: the limits are checked, and do not turn the regret
    // into a bound.
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config("jacobi", "static", 4);
    let path = dir.path().join("a.bin");
    numaplace_oracle::record::record(&cfg, &path).unwrap();
    let pages = solve(&path, SolveOptions::default()).unwrap().pages.len() as u32;
    cfg.machine.frames_per_node = pages - 1;
    numaplace_oracle::record::record(&cfg, &path).unwrap();
    let sol = solve(&path, SolveOptions::default()).unwrap();
    let c = sol.capacity.as_ref().expect("the limits were checked");
    assert!(c.unlimited_fits);
    assert!(!sol.capacity_binds());
    assert!(sol.regret_at_most().is_none());
}

#[test]
fn a_record_with_its_optimum_written_a_page_at_a_time_is_the_one_built_whole() {
    use numaplace_harness::oracle::{oracle_json, run_with_oracle, write_oracle_record};
    use numaplace_harness::result::stats_json;
    let dir = tempfile::tempdir().unwrap();
    let cfg = config("gauss", "platinum", 4);
    let (run, sol) =
        run_with_oracle(&cfg, &dir.path().join("t.bin"), SolveOptions::default()).unwrap();
    let mut shown = cfg.clone();
    shown.report.per_page = true;
    let mut whole = stats_json(&shown, &run.stats, &run.page_data);
    whole
        .as_object_mut()
        .unwrap()
        .insert("oracle".into(), oracle_json(&sol, true));
    let mut streamed = Vec::new();
    write_oracle_record(&mut streamed, &run, &oracle_json(&sol, false), &sol).unwrap();
    assert!(!sol.pages.is_empty() && !run.stats.pages.is_empty());
    let (streamed, whole) = (
        String::from_utf8(streamed).unwrap(),
        serde_json::to_string_pretty(&whole).unwrap(),
    );
    assert_eq!(streamed, whole);
}
