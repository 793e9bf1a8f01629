//! `numaplace bench`: fixed scenarios, each long enough (about a second or more on a
//! current core) to tell a 10% change from noise, each measured in a process of its own
//! so that its peak memory is its own. Reported separately: engine operations per CPU
//! second (the engine's unit of work), simulated references per CPU second (which a
//! scenario's references per operation inflate), and peak resident memory. A stored
//! result (`--json`) can be compared with a later one (`--compare`), ratio by ratio.

use numaplace_core::RunConfig;
use serde::{Deserialize, Serialize};

/// One scenario's measurement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    /// Scenario name.
    pub name: String,
    /// Engine operations of the run.
    pub ops: u64,
    /// Simulated references of the run.
    pub refs: u64,
    /// Simulated makespan (ns): the same in every measurement of a scenario, so a
    /// comparison can tell that two builds simulated the same thing.
    pub makespan_ns: u64,
    /// CPU seconds of one run (the best of the repetitions), building the engine
    /// included.
    pub cpu_seconds: f64,
    /// Of `cpu_seconds`, building the engine: allocating and initialising the page
    /// state and the programs (0 in results stored before it was measured).
    #[serde(default)]
    pub setup_seconds: f64,
    /// Runs a repetition made to reach `--min-seconds` of CPU time (1 in results stored
    /// before; the times above are per run).
    #[serde(default = "one")]
    pub runs: u64,
    /// Wall-clock seconds of that repetition.
    pub wall_seconds: f64,
    /// Engine operations per CPU second.
    pub ops_per_cpu_sec: f64,
    /// Simulated references per CPU second.
    pub refs_per_cpu_sec: f64,
    /// Peak resident memory of the process that ran it (bytes), when the host says.
    pub peak_rss_bytes: Option<u64>,
}

/// A benchmark scenario: a name, what it exercises, and its configuration.
pub struct Scenario {
    /// Name (what `--scenario` selects).
    pub name: &'static str,
    /// What it exercises.
    pub what: &'static str,
    /// Preset, workload, policy, and `--set` overrides.
    pub machine: &'static str,
    /// Workload kind.
    pub workload: &'static str,
    /// Policy kind.
    pub policy: &'static str,
    /// Field overrides.
    pub sets: &'static [&'static str],
    /// Whether it takes minutes or gigabytes: run only when named or with `--heavy`.
    pub heavy: bool,
}

impl Scenario {
    /// The scenario's resolved configuration.
    pub fn config(&self) -> RunConfig {
        let ov = crate::Overrides {
            machine: Some(self.machine.into()),
            workload: Some(self.workload.into()),
            policy: Some(self.policy.into()),
            seed: Some(1),
            sets: self
                .sets
                .iter()
                .map(|s| s.to_string())
                .chain(["report.per_page=false".to_string()])
                .collect(),
        };
        crate::resolve(None, &ov).expect("benchmark scenarios are valid")
    }
}

fn one() -> u64 {
    1
}

/// The `workload.path` setting of a committed recording, `recorder/fixtures/NAME`, by its
/// place in this checkout.
macro_rules! fixture_path {
    ($name:literal) => {
        concat!(
            "workload.path=\"",
            env!("CARGO_MANIFEST_DIR"),
            "/../../recorder/fixtures/",
            $name,
            "\""
        )
    };
}

/// The fixed scenarios.
pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "fine-static",
        what:
            "one reference per operation (Holliday's synthetic matrix product), static first touch",
        machine: "butterfly-plus",
        workload: "matvec-synthetic",
        policy: "static",
        sets: &["workload.n=5792", "machine.frames_per_node=8192"],
        heavy: false,
    },
    Scenario {
        name: "jacobi-64B-pages",
        what: "Jacobi with 64-byte pages: many pages, short reference runs",
        machine: "butterfly-plus",
        workload: "jacobi",
        policy: "static",
        sets: &[
            "machine.page_size_bytes=64",
            "machine.frames_per_node=65536",
            "workload.iterations=200",
        ],
        heavy: false,
    },
    Scenario {
        name: "holliday-daemon",
        what:
            "Holliday's migration daemon on software address translation: PTE locks on every access",
        machine: "butterfly-plus-sat",
        workload: "jacobi",
        policy: "holliday-daemon",
        sets: &["workload.threads=16", "workload.iterations=160"],
        heavy: false,
    },
    Scenario {
        name: "platinum-gauss",
        what: "PLATINUM's coherent memory on Gaussian elimination: faults, replication, freezing",
        machine: "butterfly-plus",
        workload: "gauss",
        policy: "platinum",
        sets: &["workload.n=1260"],
        heavy: false,
    },
    Scenario {
        name: "gups-tiered-1G",
        what: "GUPS as in HeMem's memsim: one thread, 1 GiB, 90% of updates to a 10% hot set, fast+slow tier",
        machine: "tiered",
        workload: "gups",
        policy: "static",
        sets: &[],
        heavy: false,
    },
    Scenario {
        name: "gups-tiered-16G",
        what: "the same with a 16 GiB working set (4M pages: page state far beyond the host's caches)",
        machine: "tiered",
        workload: "gups",
        policy: "static",
        sets: &["workload.working_set_bytes=17179869184"],
        heavy: false,
    },
    Scenario {
        name: "gups-memsim-2M",
        what: "memsim's GUPS experiment as published (512 GiB working set, 128 GiB hot set, two phases of 10M updates, the hot set moved to the end) at 2 MB pages, memsim's 42 GB fast and 512 GB slow tiers",
        machine: "tiered",
        workload: "gups",
        policy: "static",
        sets: &[
            "machine.page_size_bytes=2097152",
            "machine.node_frames=[21504, 262144]",
            "workload.working_set_bytes=549755813888",
            "workload.hot_set_bytes=137438953472",
            "workload.phases=2",
        ],
        heavy: false,
    },
    Scenario {
        name: "gups-memsim-4K",
        what: "memsim's GUPS experiment as gups-memsim-2M, at the preset's 4 KB pages: 134 million pages (about 13 CPU s and 4 GiB)",
        machine: "tiered",
        workload: "gups",
        policy: "static",
        sets: &[
            "workload.working_set_bytes=549755813888",
            "workload.hot_set_bytes=137438953472",
            "workload.phases=2",
        ],
        heavy: true,
    },
    Scenario {
        name: "pages-2^24",
        what: "a 2^24-page address space on 64 nodes (64 GiB of 4 KB pages), 64 GUPS threads, first touch",
        machine: "butterfly-plus",
        workload: "gups",
        policy: "static",
        sets: &[
            "machine.nodes=64",
            "machine.frames_per_node=262144",
            "machine.page_size_bytes=4096",
            "workload.working_set_bytes=68719476736",
            "workload.threads=64",
            "workload.updates=100000",
        ],
        heavy: false,
    },
    Scenario {
        name: "nas-cg-class-a",
        what: "NAS CG at class A (order 14000, 15 iterations) on the Origin2000, a thread per processor, first touch: its operations made as the run consumes them",
        machine: "origin2000",
        workload: "nas-cg",
        policy: "static",
        sets: &[],
        heavy: false,
    },
    Scenario {
        name: "hemem-optane",
        what: "HeMem's sampling policy on its Optane testbed: 16 GUPS threads, 32 GiB in 2 MB pages all starting in Optane, loaded latency, a 100 ms policy period",
        machine: "optane-hemem",
        workload: "gups",
        policy: "hemem",
        sets: &[
            "workload.threads=16",
            "workload.working_set_bytes=34359738368",
            "workload.updates=1000000",
            "policy.initial.placement=\"fixed\"",
            "policy.initial.node=1",
            "policy.policy_period_ms=100",
        ],
        heavy: false,
    },
    Scenario {
        name: "trace-replay",
        what: "a recorded OpenMP stencil (4 threads, 3.5 M references) replayed, trace decoding included: short runs, re-timed barriers",
        machine: "epyc-2s",
        workload: "trace",
        policy: "static",
        sets: &[fixture_path!("stencil-4-bench.trace")],
        heavy: false,
    },
    Scenario {
        name: "trace-replay-short",
        what: "the tests' recorded stencil (4 threads, 436 k references, a run of some 20 ms): a short replay, its start (opening the trace, first writes to fresh buffers) a large part",
        machine: "epyc-2s",
        workload: "trace",
        policy: "static",
        sets: &[fixture_path!("stencil-4.trace")],
        heavy: false,
    },
];

/// The scenario named `name`.
pub fn scenario(name: &str) -> Option<&'static Scenario> {
    SCENARIOS.iter().find(|s| s.name == name)
}

/// CPU seconds this process has used.
fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Peak resident memory of this process (bytes), when the host reports it.
pub fn peak_rss_bytes() -> Option<u64> {
    // SAFETY: an all-zero rusage is a valid value for the call to fill.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid rusage for the call to fill.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return None;
    }
    let max = u64::try_from(ru.ru_maxrss).ok()?;
    // Linux reports kilobytes, macOS bytes.
    Some(if cfg!(target_os = "macos") {
        max
    } else {
        max * 1024
    })
}

/// Runs scenario `s` `reps` times in this process and keeps the repetition with the
/// least CPU time per run. A repetition repeats the run until it has used `min_seconds`
/// of CPU time, so that a short scenario is timed over a second or more (the same run
/// each time: a scenario is deterministic). Meant for a process of its own (see the
/// CLI's `bench`), so that the peak memory is the scenario's.
pub fn measure(s: &Scenario, reps: usize, min_seconds: f64) -> BenchResult {
    let cfg = s.config();
    let mut best: Option<BenchResult> = None;
    for _ in 0..reps.max(1) {
        let (cpu0, wall0) = (cpu_seconds(), std::time::Instant::now());
        let mut setup = 0.0;
        let mut runs = 0u64;
        let stats = loop {
            let c = cpu_seconds();
            let engine = cfg.engine().expect("benchmark scenarios are valid");
            setup += cpu_seconds() - c;
            let stats = engine.run().expect("benchmark scenarios run");
            runs += 1;
            if cpu_seconds() - cpu0 >= min_seconds {
                break stats;
            }
        };
        let n = runs as f64;
        let cpu = (cpu_seconds() - cpu0) / n;
        let wall = wall0.elapsed().as_secs_f64() / n;
        if best.as_ref().is_some_and(|b| b.cpu_seconds <= cpu) {
            continue;
        }
        best = Some(BenchResult {
            name: s.name.to_string(),
            ops: stats.ops,
            refs: stats.refs.total,
            makespan_ns: stats.makespan_ns,
            cpu_seconds: cpu,
            setup_seconds: setup / n,
            runs,
            wall_seconds: wall,
            ops_per_cpu_sec: stats.ops as f64 / cpu,
            refs_per_cpu_sec: stats.refs.total as f64 / cpu,
            peak_rss_bytes: None,
        });
    }
    let mut r = best.expect("at least one repetition");
    r.peak_rss_bytes = peak_rss_bytes();
    r
}

/// The results as a table; with `old`, each scenario's ratios new/old beside it (ops per
/// CPU second: above 1 is faster; peak memory: below 1 is smaller), and a warning when a
/// scenario simulated something else than before.
pub fn render(results: &[BenchResult], old: Option<&[BenchResult]>) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let _ = write!(
        o,
        "{:<18} {:>12} {:>14} {:>8} {:>8} {:>8} {:>12} {:>12} {:>12} {:>10}",
        "scenario",
        "ops",
        "refs",
        "refs/op",
        "CPU s",
        "setup s",
        "ops/CPU-s",
        "refs/CPU-s",
        "refs/run-s",
        "peak RSS"
    );
    if old.is_some() {
        let _ = write!(o, " {:>10} {:>10}", "x ops/s", "x RSS");
    }
    o.push('\n');
    let mut notes = Vec::new();
    for r in results {
        let rss = r
            .peak_rss_bytes
            .map(numaplace_core::estimate::human_bytes)
            .unwrap_or_else(|| "-".into());
        let _ = write!(
            o,
            "{:<18} {:>12} {:>14} {:>8.1} {:>8.3} {:>8.3} {:>12.3e} {:>12.3e} {:>12.3e} {:>10}",
            r.name,
            r.ops,
            r.refs,
            r.refs as f64 / r.ops.max(1) as f64,
            r.cpu_seconds,
            r.setup_seconds,
            r.ops_per_cpu_sec,
            r.refs_per_cpu_sec,
            r.refs as f64 / (r.cpu_seconds - r.setup_seconds),
            rss
        );
        if let Some(old) = old {
            match old.iter().find(|b| b.name == r.name) {
                Some(b) => {
                    let speed = r.ops_per_cpu_sec / b.ops_per_cpu_sec;
                    let mem = match (r.peak_rss_bytes, b.peak_rss_bytes) {
                        (Some(n), Some(p)) if p > 0 => format!("{:.2}", n as f64 / p as f64),
                        _ => "-".into(),
                    };
                    let _ = write!(o, " {speed:>10.2} {mem:>10}");
                    if (b.ops, b.refs, b.makespan_ns) != (r.ops, r.refs, r.makespan_ns) {
                        notes.push(format!(
                            "{}: simulated something else than the stored result (ops {} -> {}, \
                             makespan {} -> {} ns): the ratio compares different runs",
                            r.name, b.ops, r.ops, b.makespan_ns, r.makespan_ns
                        ));
                    }
                }
                None => {
                    let _ = write!(o, " {:>10} {:>10}", "new", "new");
                }
            }
        }
        o.push('\n');
    }
    for n in notes {
        let _ = writeln!(o, "note: {n}");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(name: &str, ops_per_cpu_sec: f64, rss: u64) -> BenchResult {
        BenchResult {
            name: name.into(),
            ops: 100,
            refs: 200,
            makespan_ns: 5,
            cpu_seconds: 1.0,
            setup_seconds: 0.0,
            runs: 1,
            wall_seconds: 1.0,
            ops_per_cpu_sec,
            refs_per_cpu_sec: 2.0 * ops_per_cpu_sec,
            peak_rss_bytes: Some(rss),
        }
    }

    #[test]
    fn a_result_stored_before_setup_and_runs_were_measured_still_reads() {
        let old = r#"{"name":"fine-static","ops":1,"refs":1,"makespan_ns":1,
            "cpu_seconds":0.5,"wall_seconds":0.5,"ops_per_cpu_sec":2.0,
            "refs_per_cpu_sec":2.0,"peak_rss_bytes":null}"#;
        let r: BenchResult = serde_json::from_str(old).expect("an older result reads");
        assert_eq!((r.setup_seconds, r.runs), (0.0, 1));
    }

    #[test]
    fn every_scenario_resolves() {
        for s in SCENARIOS {
            let cfg = s.config();
            assert!(cfg.estimate().is_ok(), "{}", s.name);
        }
    }

    #[test]
    fn a_comparison_prints_the_speed_and_memory_ratios() {
        let old = [result("a", 1e6, 1000)];
        let new = [result("a", 3e6, 500)];
        let text = render(&new, Some(&old));
        let row = text.lines().nth(1).unwrap();
        assert!(row.trim_end().ends_with("3.00       0.50"), "{text}");
    }

    #[test]
    fn a_comparison_warns_when_the_runs_simulated_differ() {
        let old = [result("a", 1e6, 1000)];
        let mut new = [result("a", 1e6, 1000)];
        new[0].makespan_ns = 6;
        assert!(render(&new, Some(&old)).contains("note: a: simulated something else"));
    }
}
