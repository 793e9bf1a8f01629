//! No run allocates more than its estimate says: a counting allocator measures the peak
//! heap of resolving, building and running every machine x workload x policy at a small
//! size (and a few larger ones), and compares it with the harness's estimate.
//! The same counting holds every workload to a memory independent of its length.

use numaplace_core::component::WorkloadConfig;
use numaplace_core::PolicyConfig;
use numaplace_harness::{limits, presets, resolve, run_monitored, run_to_json, Overrides};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

mod common;
use common::small;

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
            PEAK.fetch_max(now, Ordering::SeqCst);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::SeqCst);
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Tests in this file measure one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Peak heap bytes above the starting level while `f` runs.
fn peak_of(f: impl FnOnce()) -> usize {
    let base = CURRENT.load(Ordering::SeqCst);
    PEAK.store(base, Ordering::SeqCst);
    f();
    PEAK.load(Ordering::SeqCst).saturating_sub(base)
}

fn check(ov: &Overrides) {
    let label = format!("{ov:?}");
    let cfg = match resolve(None, ov) {
        Ok(cfg) => cfg,
        // A tiering policy refuses a machine of one tier before allocating anything.
        Err(e) if e.to_string().contains("needs a slow tier") => return,
        Err(e) => panic!("{label}: {e}"),
    };
    check_config(&label, &cfg);
}

fn check_config(label: &str, cfg: &numaplace_core::RunConfig) {
    let est = limits::estimate(cfg).unwrap_or_else(|e| panic!("{label}: {e}"));
    let peak = peak_of(|| {
        let out = run_to_json(cfg).unwrap_or_else(|e| panic!("{label}: {e}"));
        let body = serde_json::to_string_pretty(&out.json).unwrap();
        assert!(!body.is_empty());
    });
    assert!(
        peak as u64 <= est.bytes,
        "{label}: peak {peak} B above the estimate {} B",
        est.bytes
    );
}

#[test]
fn no_registered_combination_allocates_more_than_its_estimate() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for machine in presets::names() {
        for w in WorkloadConfig::all() {
            for p in PolicyConfig::all() {
                check(&Overrides {
                    machine: Some(machine.to_string()),
                    workload: Some(w.kind().to_string()),
                    policy: Some(p.kind().to_string()),
                    seed: Some(1),
                    sets: small(w.kind()),
                });
            }
        }
    }
}

#[test]
fn larger_runs_stay_within_their_estimates() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for sets in [
        // Many small pages and per-page reports.
        vec![
            "workload.n=512",
            "machine.page_size_bytes=64",
            "machine.frames_per_node=100000",
        ],
        // History on every page and node.
        vec!["workload.n=256", "machine.page_size_bytes=256"],
        // Many iterations: series points.
        vec!["workload.n=64", "workload.iterations=2000"],
        // Fixed-interval series points (tens of thousands: the run lasts about a second on
        // the preset, whose modules and switch queue).
        vec!["workload.n=128", "report.series_interval_ns=20000"],
    ] {
        for policy in ["static", "holliday-daemon", "platinum"] {
            check(&Overrides {
                machine: Some("butterfly-plus".into()),
                workload: Some("jacobi".into()),
                policy: Some(policy.into()),
                seed: Some(1),
                sets: sets
                    .iter()
                    .map(|s| s.to_string())
                    .chain(["workload.threads=8".to_string()])
                    .collect(),
            });
        }
    }
}

#[test]
fn a_multiprogrammed_run_stays_within_its_estimate() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let text = r#"
[[program]]
workload = { kind = "jacobi", n = 128, threads = 4 }
[[program]]
start_ns = 100000
workload = { kind = "gauss", n = 64, threads = 4 }
[[program]]
start_ns = 200000
workload = { kind = "matvec", n = 128, threads = 4 }
"#;
    for policy in ["static", "platinum"] {
        let ov = Overrides {
            policy: Some(policy.into()),
            ..Default::default()
        };
        let cfg = numaplace_harness::resolve_text("three.toml", text, &ov).unwrap();
        check_config(&format!("three programs under {policy}"), &cfg);
    }
}

/// The estimate of `workload` on `machine` with `sets`: its total and its threads' part.
fn estimated(machine: &str, workload: &str, sets: &[&str]) -> (u64, u64) {
    let cfg = resolve(
        None,
        &Overrides {
            machine: Some(machine.into()),
            workload: Some(workload.into()),
            seed: Some(1),
            sets: sets.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        },
    )
    .unwrap();
    let est = limits::estimate(&cfg).unwrap();
    let threads = est
        .parts
        .iter()
        .find(|p| p.what == "threads and their generated operations")
        .expect("a threads term")
        .bytes;
    (est.bytes, threads)
}

#[test]
fn nas_cg_class_a_is_estimated_under_a_gigabyte_whatever_its_iterations() {
    // The heap counter is the process's: a test that allocates while another measures
    // would add to its peak, so every test here takes its turn.
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Each thread holds a few hundred operations of its work at a time, not an iteration.
    let (total, threads) = estimated("origin2000", "nas-cg", &["workload.iterations=15"]);
    let (total_75, threads_75) = estimated("origin2000", "nas-cg", &["workload.iterations=75"]);
    assert!(total < 1_000_000_000, "{total} B");
    assert!(total_75 < 1_000_000_000, "{total_75} B");
    assert_eq!(threads, threads_75);
}

/// The setting that makes a registered workload longer (more iterations, steps, updates,
/// jobs) without making it larger, with a short and a long value (the long one 8 to 64 times
/// the work); `None` for a workload whose length comes only with its size.
fn length_setting(kind: &str) -> Option<(&'static str, u64, u64)> {
    Some(match kind {
        "background" => ("jobs", 4, 128),
        "backprop" => ("epochs", 1, 16),
        "gups" => ("updates", 20_000, 640_000),
        "hh3d" | "wave" => ("steps", 2, 64),
        "jacobi" | "matvec" | "matvec-sparse" => ("iterations", 2, 64),
        "nas-bt" | "nas-sp" | "nas-lu" | "nas-mg" | "nas-cg" | "nas-ft" => ("iterations", 1, 32),
        "matvec-synthetic" => ("refs_per_nonzero", 1, 16),
        "psolu" => ("tolerance_digits", 2, 5),
        "surface-wave" => ("total_ms", 200, 6400),
        _ => return None,
    })
}

/// Workloads whose length grows only with their size, with a small and a larger order,
/// held to their pages' growth. gauss's operations grow faster than its pages (n^3 against
/// n^2), so memory that followed them would show; msort's and hough's grow about as their
/// pages do, so for them this holds only that memory follows the pages.
fn size_setting(kind: &str) -> Option<(&'static str, u64, u64)> {
    Some(match kind {
        "gauss" => ("n", 64, 128),
        "msort" => ("n", 4096, 16_384),
        "hough" => ("n", 64, 128),
        _ => return None,
    })
}

/// What a run of a workload held at its peak.
struct Held {
    /// Peak heap (bytes above the level before the run).
    peak: usize,
    /// Pages of its programs.
    pages: u64,
    /// Series points of its record (one per iteration end), which are results and grow
    /// with its length by design.
    points: usize,
}

/// What running `kind` (small, no per-page report) with `field = value` held.
fn run_held(kind: &str, field: &str, value: u64) -> Held {
    let mut sets: Vec<String> = small(kind)
        .into_iter()
        .filter(|s| !s.starts_with(&format!("workload.{field}=")))
        .collect();
    sets.push(format!("workload.{field}={value}"));
    sets.push("report.per_page=false".into());
    let cfg = resolve(
        None,
        &Overrides {
            workload: Some(kind.into()),
            policy: Some("static".into()),
            seed: Some(1),
            sets,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{kind} {field}={value}: {e}"));
    // The run alone: its JSON record is built after the peak is taken.
    let mut run = None;
    let peak = peak_of(|| {
        run = Some(
            run_monitored(&cfg, None).unwrap_or_else(|e| panic!("{kind} {field}={value}: {e}")),
        );
    });
    let (stats, data) = run.expect("the run ran");
    let json = numaplace_harness::result::stats_json(&cfg, &stats, &data);
    Held {
        peak,
        pages: json["programs"]
            .as_array()
            .map(|ps| ps.iter().filter_map(|p| p["pages"].as_u64()).sum())
            .unwrap_or(0),
        points: json["series"].as_array().map_or(0, Vec::len),
    }
}

/// What a series point may take in the run's statistics, with the growth of the vector
/// that holds it: the only part of a run's memory allowed to grow with its length.
const POINT_BYTES: usize = 1 << 10;

/// The bound on the longer run's peak: the shorter's, a tenth more, and its extra points.
fn length_bound(short: &Held, long: &Held) -> usize {
    short.peak + short.peak / 10 + long.points.saturating_sub(short.points) * POINT_BYTES + 4096
}

#[test]
fn every_workload_holds_its_memory_whatever_its_length() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for w in WorkloadConfig::all() {
        let kind = w.kind();
        if kind == "trace" {
            continue; // its length is its file's: the next test but one
        }
        if let Some((field, short, long)) = length_setting(kind) {
            let (a, b) = (run_held(kind, field, short), run_held(kind, field, long));
            let bound = length_bound(&a, &b);
            assert!(
                b.peak <= bound,
                "{kind}: peak heap {} B at {field} = {short}, {} B at {field} = {long} (bound {bound} B with {} series points)",
                a.peak,
                b.peak,
                b.points
            );
        } else if let Some((field, small_n, large_n)) = size_setting(kind) {
            let (a, b) = (
                run_held(kind, field, small_n),
                run_held(kind, field, large_n),
            );
            let grown = Held {
                peak: (a.peak as f64 * b.pages as f64 / a.pages.max(1) as f64) as usize,
                ..a
            };
            let bound = length_bound(&grown, &b);
            assert!(
                b.peak <= bound,
                "{kind}: peak heap {} B over {} pages at {field} = {small_n}, {} B over {} pages at {field} = {large_n} (bound {bound} B)",
                a.peak,
                a.pages,
                b.peak,
                b.pages
            );
        } else {
            panic!("workload `{kind}` has no length or size setting in this test: add one");
        }
    }
}
#[test]
fn a_run_whose_memory_follows_its_operations_is_past_the_length_bound() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Jacobi at 128 x 128 on 8 threads holds about 63 KB over 2 iterations; generated up
    // front, its operations (some 800 an iteration at 24 bytes) would add about 19 KB for
    // each of 62 more iterations, far beyond their 62 series points.
    let short = Held {
        peak: 63_000,
        pages: 32,
        points: 2,
    };
    let up_front = Held {
        peak: 63_000 + 62 * 19_000,
        pages: 32,
        points: 64,
    };
    let streamed = Held {
        peak: 78_000,
        ..up_front
    };
    assert!(up_front.peak > length_bound(&short, &up_front));
    assert!(streamed.peak <= length_bound(&short, &streamed));
}

/// A one-thread trace of `runs` reads cycling over 16 pages.
fn cyclic_trace(dir: &std::path::Path, runs: u64) -> std::path::PathBuf {
    use numaplace_harness::trace::format::{Event, Header};
    let path = dir.join(format!("cyclic-{runs}.trace"));
    let header = Header {
        program: "./cyclic".into(),
        args: vec![],
        page_size: 4096,
        recorder: "the tests".into(),
        environment: vec![],
    };
    let mut w = numaplace_harness::trace::TraceWriter::create(&path, &header).unwrap();
    for i in 0..runs {
        let address = 0x5555_0000_0000 + (i % 16) * 4096 + (i * 64) % 4096;
        let run = Event::Run {
            write: i % 3 == 0,
            address,
            count: 1,
            span: 8,
        };
        w.push(0, 10, run).unwrap();
    }
    w.push(0, 0, Event::Exit).unwrap();
    w.finish(vec![]).unwrap();
    path
}

#[test]
fn a_trace_replay_holds_its_memory_whatever_the_trace_length() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("numaplace-length-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let peak = |runs: u64| {
        let path = cyclic_trace(&dir, runs);
        let cfg = resolve(
            None,
            &Overrides {
                machine: Some("epyc-2s".into()),
                workload: Some("trace".into()),
                policy: Some("static".into()),
                seed: Some(1),
                sets: vec![
                    format!("workload.path={:?}", path.display().to_string()),
                    "report.per_page=false".into(),
                ],
            },
        )
        .unwrap();
        peak_of(|| {
            run_to_json(&cfg).unwrap();
        })
    };
    let (a, b) = (peak(100_000), peak(800_000));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        b <= a + a / 10 + 4096,
        "peak heap {a} B replaying 100,000 runs, {b} B replaying 800,000"
    );
}
