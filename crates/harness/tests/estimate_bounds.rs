//! No run allocates more than its estimate says: a counting allocator measures the peak
//! heap of resolving, building and running every machine x workload x policy at a small
//! size (and a few larger ones), and compares it with the harness's estimate.

use numaplace_core::component::WorkloadConfig;
use numaplace_core::PolicyConfig;
use numaplace_harness::{limits, presets, resolve, run_to_json, Overrides};
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
    // Each thread holds a few hundred operations of its work at a time, not an iteration.
    let (total, threads) = estimated("origin2000", "nas-cg", &["workload.iterations=15"]);
    let (total_75, threads_75) = estimated("origin2000", "nas-cg", &["workload.iterations=75"]);
    assert!(total < 1_000_000_000, "{total} B");
    assert!(total_75 < 1_000_000_000, "{total_75} B");
    assert_eq!(threads, threads_75);
}
