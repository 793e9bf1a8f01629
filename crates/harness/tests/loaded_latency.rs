//! Loaded latency: on the presets that model it, a memory's latency rises with the
//! bandwidth drawn from it, so a busy fast tier can serve more slowly than an idle slow one.

use numaplace_harness::{resolve, run_to_json, Overrides};

fn gups(machine: &str, sets: &[&str]) -> Overrides {
    Overrides {
        machine: Some(machine.into()),
        workload: Some("gups".into()),
        policy: Some("static".into()),
        seed: Some(1),
        sets: [
            "workload.updates=20000",
            "workload.working_set_bytes=16777216",
            "workload.compute_ns_per_update=0",
        ]
        .iter()
        .chain(sets)
        .map(|s| s.to_string())
        .collect(),
    }
}

fn makespan(o: &Overrides) -> u64 {
    run_to_json(&resolve(None, o).unwrap())
        .unwrap()
        .stats
        .makespan_ns
}

/// Each node's peak lowered to 5 GB/s: a thread has one reference outstanding, so it
/// draws a cache line per latency (0.7 GB/s at 89 ns), and 36 of them about 26 GB/s.
const LOW_PEAK: &str = "machine.loaded_latency.nodes=[{peak_gbps = 5.0, curve = [[0.0, 0.0], [1.0, 100.0]]}, {peak_gbps = 5.0, curve = [[0.0, 0.0], [1.0, 100.0]]}]";
const OFF: &str = "machine.loaded_latency.enabled=false";

#[test]
fn many_threads_drawing_on_one_memory_beyond_its_peak_wait_longer_per_reference() {
    let loaded = makespan(&gups("xeon-2s", &["workload.threads=36", LOW_PEAK]));
    let idle = makespan(&gups("xeon-2s", &["workload.threads=36", LOW_PEAK, OFF]));
    assert!(loaded > idle * 3 / 2, "loaded {loaded} ns, idle {idle} ns");
}

#[test]
fn one_thread_barely_loads_a_memory() {
    let loaded = makespan(&gups("xeon-2s", &["workload.threads=1", LOW_PEAK]));
    let idle = makespan(&gups("xeon-2s", &["workload.threads=1", LOW_PEAK, OFF]));
    assert!(
        loaded < idle * 13 / 10,
        "loaded {loaded} ns, idle {idle} ns"
    );
}

#[test]
fn a_run_with_loaded_latency_is_reproducible() {
    let o = gups("cxl-expander", &["workload.threads=8"]);
    let a = run_to_json(&resolve(None, &o).unwrap()).unwrap().json;
    let b = run_to_json(&resolve(None, &o).unwrap()).unwrap().json;
    assert_eq!(a, b);
}

#[test]
fn a_curve_for_too_few_nodes_is_refused_naming_the_field() {
    let e = resolve(
        None,
        &gups(
            "xeon-2s",
            &["machine.loaded_latency.nodes=[{peak_gbps = 10.0, curve = [[0.0, 0.0]]}]"],
        ),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("machine.loaded_latency.nodes"), "{e}");
}
