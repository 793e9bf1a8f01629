//! Tiered memory: nodes of different capacity (`node_frames`) and processor-less memory
//! nodes (`memory_only_nodes`), on the `tiered` preset with `gups`.

use numaplace_harness::{resolve, run_to_json, Overrides};

fn tiered(sets: &[&str]) -> Overrides {
    Overrides {
        machine: Some("tiered".into()),
        workload: Some("gups".into()),
        policy: Some("static".into()),
        seed: Some(1),
        sets: ["workload.updates=2000", "workload.working_set_bytes=409600"]
            .iter()
            .chain(sets)
            .map(|s| s.to_string())
            .collect(),
    }
}

#[test]
fn threads_run_only_on_nodes_with_processors() {
    let cfg = resolve(None, &tiered(&["workload.threads=24"])).unwrap();
    let out = run_to_json(&cfg).unwrap();
    assert!(out.stats.threads.iter().all(|t| t.node == 0));
}

#[test]
fn more_threads_than_the_processor_nodes_hold_are_refused() {
    let e = resolve(None, &tiered(&["workload.threads=25"]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("the machine has 24"), "{e}");
}

#[test]
fn first_touch_fills_the_fast_tier_then_spills_to_the_slow_one() {
    // 100 pages of data, 40 frames of fast memory.
    let cfg = resolve(None, &tiered(&["machine.node_frames=[40, 1000]"])).unwrap();
    let out = run_to_json(&cfg).unwrap();
    let refs = &out.stats.refs;
    assert!(refs.local > 0 && refs.remote > 0, "{refs:?}");
    // The hot set (the first 10 pages, touched first, so fast) takes 90% of updates;
    // the other 10% spread over all 100 pages, 40 of them fast: about 94% local.
    let local = refs.local as f64 / (refs.local + refs.remote) as f64;
    assert!(local > 0.85, "{local}");
}

#[test]
fn two_gups_phases_give_a_series_point_at_the_end_of_each() {
    let one = run_to_json(&resolve(None, &tiered(&[])).unwrap()).unwrap();
    let two = run_to_json(&resolve(None, &tiered(&["workload.phases=2"])).unwrap()).unwrap();
    assert!(one.stats.series.is_empty());
    let s = &two.stats.series;
    assert_eq!(
        s.iter().map(|p| p.iteration).collect::<Vec<_>>(),
        [0, 1],
        "{s:?}"
    );
    // Each phase is 2,000 updates of a read and a write; the first ends where the run of
    // one phase ends, the second at the run's end.
    assert!(s.iter().all(|p| p.refs.total == 4000), "{s:?}");
    assert_eq!(s[0].time_ns, one.stats.makespan_ns);
    assert_eq!(s[1].time_ns, two.stats.makespan_ns);
}

#[test]
fn a_frame_list_of_the_wrong_length_names_the_field() {
    let e = resolve(None, &tiered(&["machine.node_frames=[40]"])).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("machine.node_frames") && msg.contains("one entry per node"),
        "{msg}"
    );
}

#[test]
fn a_machine_of_memory_only_nodes_is_refused() {
    let e = resolve(None, &tiered(&["machine.memory_only_nodes=2"])).unwrap_err();
    assert!(e.to_string().contains("machine.memory_only_nodes"), "{e}");
}

#[test]
fn a_1024_node_machine_runs_replication_on_nodes_beyond_64() {
    let ov = Overrides {
        machine: Some("butterfly-plus".into()),
        workload: Some("matvec".into()),
        policy: Some("platinum".into()),
        seed: Some(1),
        sets: [
            "machine.nodes=1024",
            "machine.frames_per_node=64",
            "workload.n=256",
            "workload.threads=256",
            "workload.iterations=2",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    };
    let out = run_to_json(&resolve(None, &ov).unwrap()).unwrap();
    assert!(out.stats.threads.iter().any(|t| t.node >= 200));
    assert!(out.stats.events.replications > 0);
    assert!(out.stats.refs.local > 0);
}

/// Records a tiered GUPS run and solves it.
fn solved(sets: &[&str]) -> numaplace_oracle::solve::Solution {
    let dir = tempfile::tempdir().unwrap();
    let cfg = resolve(None, &tiered(sets)).unwrap();
    let path = dir.path().join("gups.bin");
    numaplace_oracle::record::record(&cfg, &path).unwrap();
    numaplace_oracle::solve::solve(&path, Default::default()).unwrap()
}

#[test]
fn a_short_fast_tier_bounds_the_optimum_between_the_unlimited_one_and_the_policy() {
    // 100 pages, 40 fast frames: first-touch static placement is a schedule within the
    // limits, so the bound of the optimum with them may not exceed its cost.
    let sol = solved(&["machine.node_frames=[40, 1000]"]);
    let c = sol.capacity.as_ref().expect("the fast tier is short");
    assert_eq!(c.limited.len(), 1);
    assert_eq!(c.unlimited, sol.migration.total());
    assert!(c.bound > c.unlimited, "{} vs {}", c.bound, c.unlimited);
    assert!(
        c.bound <= sol.policy.total(),
        "{} > {}",
        c.bound,
        sol.policy.total()
    );
    let most = sol.regret_at_most().expect("a bound of the regret");
    assert!(
        most >= 1.0 && most < sol.regret(),
        "{most} vs {}",
        sol.regret()
    );
}

#[test]
fn a_fast_tier_holding_every_page_leaves_the_unlimited_optimum_exact() {
    let sol = solved(&["machine.node_frames=[100, 1000]"]);
    assert!(sol.capacity.is_none() && sol.capacity_refused.is_none());
    assert!(!sol.capacity_binds());
    assert!(sol.regret_at_most().is_none());
}

#[test]
fn the_capacity_bound_is_the_same_on_one_thread_and_on_two() {
    let bound = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| solved(&["machine.node_frames=[40, 1000]"]))
            .capacity
            .unwrap()
    };
    let (one, two) = (bound(1), bound(2));
    assert_eq!(one.bound, two.bound);
    assert_eq!(one.lambda, two.lambda);
}

#[test]
fn a_record_written_a_page_at_a_time_is_byte_for_byte_the_one_built_whole() {
    use numaplace_harness::result::{record_without_pages, stats_json, write_record};
    for per_page in [true, false] {
        let mut cfg = resolve(None, &tiered(&["machine.node_frames=[40, 1000]"])).unwrap();
        cfg.report.per_page = per_page;
        let (stats, data) = numaplace_harness::run_monitored(&cfg, None).unwrap();
        let whole = serde_json::to_string_pretty(&stats_json(&cfg, &stats, &data)).unwrap();
        let mut streamed = Vec::new();
        let rest = record_without_pages(&cfg, &stats, &data);
        write_record(&mut streamed, &rest, &stats, &data).unwrap();
        assert_eq!(String::from_utf8(streamed).unwrap(), whole);
    }
}
