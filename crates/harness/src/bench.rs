//! `numaplace bench`: fixed scenarios timed on this host, single-threaded, reported as
//! simulated references and operations per second beside a plain array scan for scale.

use numaplace_core::RunConfig;
use serde::Serialize;
use std::time::Instant;

/// One benchmark result.
#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    /// Scenario name.
    pub name: String,
    /// Simulated references in the run.
    pub refs: u64,
    /// Engine operations in the run.
    pub ops: u64,
    /// Wall-clock seconds (best of the repetitions).
    pub seconds: f64,
    /// Simulated references per wall-clock second.
    pub refs_per_sec: f64,
    /// Engine operations per wall-clock second.
    pub ops_per_sec: f64,
}

/// The fixed scenarios: (name, config) built from presets with a few fields set.
pub fn scenarios() -> Vec<(String, RunConfig)> {
    let mk = |name: &str, machine: &str, workload: &str, policy: &str, sets: &[&str]| {
        let ov = crate::Overrides {
            machine: Some(machine.into()),
            workload: Some(workload.into()),
            policy: Some(policy.into()),
            seed: Some(1),
            sets: sets.iter().map(|s| s.to_string()).collect(),
        };
        let cfg = crate::resolve(None, &ov).expect("benchmark scenarios are valid");
        (name.to_string(), cfg)
    };
    vec![
        mk(
            "jacobi-512-16t-first-touch",
            "butterfly-plus",
            "jacobi",
            "static",
            &["report.per_page=false"],
        ),
        mk(
            "jacobi-512-16t-64B-pages",
            "butterfly-plus",
            "jacobi",
            "static",
            &[
                "machine.page_size_bytes=64",
                "machine.frames_per_node=65536",
                "report.per_page=false",
            ],
        ),
        mk(
            "matvec-1024-64t-origin2000",
            "origin2000",
            "matvec",
            "static",
            &[
                "workload.n=1024",
                "workload.repeat=4",
                "workload.iterations=4",
                "policy.placement=\"round-robin\"",
                "report.per_page=false",
            ],
        ),
    ]
}

/// Times a plain scan summing `words` u32 words `reps` times: the host's raw memory speed.
pub fn array_scan(words: usize, reps: usize) -> BenchResult {
    let data: Vec<u32> = (0..words as u32).collect();
    let mut best = f64::INFINITY;
    let mut sink = 0u64;
    for _ in 0..3 {
        let start = Instant::now();
        for _ in 0..reps {
            sink = sink.wrapping_add(
                std::hint::black_box(&data)
                    .iter()
                    .map(|&x| x as u64)
                    .sum::<u64>(),
            );
        }
        best = best.min(start.elapsed().as_secs_f64());
    }
    std::hint::black_box(sink);
    let n = (words * reps) as u64;
    BenchResult {
        name: "baseline: plain array scan (words read)".into(),
        refs: n,
        ops: n,
        seconds: best,
        refs_per_sec: n as f64 / best,
        ops_per_sec: n as f64 / best,
    }
}

/// Runs every scenario `reps` times and keeps the best time of each.
pub fn run_all(reps: usize) -> Vec<BenchResult> {
    let mut out = Vec::new();
    for (name, cfg) in scenarios() {
        let mut best = f64::INFINITY;
        let mut refs = 0;
        let mut ops = 0;
        for _ in 0..reps.max(1) {
            let start = Instant::now();
            let stats = cfg.run().expect("benchmark scenarios run");
            best = best.min(start.elapsed().as_secs_f64());
            refs = stats.refs.total;
            ops = stats.ops;
        }
        out.push(BenchResult {
            name,
            refs,
            ops,
            seconds: best,
            refs_per_sec: refs as f64 / best,
            ops_per_sec: ops as f64 / best,
        });
    }
    out.push(array_scan(1 << 22, 16));
    out
}
