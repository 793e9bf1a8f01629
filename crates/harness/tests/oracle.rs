//! The offline optimum against real runs: for every registered workload and policy on a
//! small machine, the optimum is never dearer than the policy's own schedule priced in
//! the same model; and a recorded trace reads back exactly as the run saw it.

mod common;

use numaplace_core::{PolicyConfig, RunConfig};
use numaplace_harness::resolve::{resolve, Overrides};
use numaplace_oracle::solve::{solve, SolveOptions};

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
            if p.kind() == "holliday-daemon" {
                // Its daemon needs a processor of its own: one node fewer for threads.
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
    )
    .unwrap();
    let sol = solve(&trace, SolveOptions::default()).unwrap();
    assert_eq!(r.schedule.cost, sol.migration.total());
    assert!(r.stats.events.migrations <= r.schedule.moves.len() as u64);
    assert!(r.stats.makespan_ns > 0);
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
