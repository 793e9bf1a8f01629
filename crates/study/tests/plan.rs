//! Sweeps are resolved completely before the first run: sizes are counted and
//! limited before anything is expanded, and every axis combination is checked
//! by the runner.

mod common;

use std::time::Instant;

use common::{FakeRunner, SPEC_3X5};
use numaplace_study::sweep::{plan_sweep, run_sweep, SweepOptions};
use numaplace_study::{load, parse_spec, DEFAULT_MAX_RUNS};

fn opts(out: &std::path::Path) -> SweepOptions {
    SweepOptions {
        jobs: 2,
        progress: false,
        ..SweepOptions::new(out)
    }
}

fn reject(field: &str, value: impl Into<toml::Value>) -> FakeRunner {
    FakeRunner {
        reject: Some((field.to_string(), value.into())),
        ..FakeRunner::default()
    }
}

#[test]
fn a_point_failing_its_check_stops_the_sweep_before_any_run() {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.jsonl");
    // The last value of the last axis.
    let runner = reject("policy.kind", "dynamic");
    let err = format!("{:#}", run_sweep(&spec, &runner, &opts(&out)).unwrap_err());
    assert_eq!(runner.total_calls(), 0, "nothing may run");
    assert!(!out.exists(), "no results file is made");
    for needle in [
        "spec.toml",
        "r000005",
        "policy.kind = \"dynamic\"",
        "unknown",
    ] {
        assert!(err.contains(needle), "`{needle}` not in: {err}");
    }
    assert!(
        !err.contains("r000005: r000005"),
        "the id is named once: {err}"
    );
}

#[test]
fn only_the_first_trial_of_each_axis_combination_is_checked() {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let runner = FakeRunner::new(0);
    run_sweep(&spec, &runner, &opts(&dir.path().join("r.jsonl"))).unwrap();
    assert_eq!(runner.checks.load(std::sync::atomic::Ordering::SeqCst), 12);
    assert_eq!(runner.total_calls(), 60);
}

#[test]
fn a_sweep_over_the_run_limit_is_refused_with_its_size_before_expanding() {
    // 10^5 × 10^5 × 10^3 runs: expanding even the points would take terabytes.
    let text = "name = \"huge\"\ntrials = 1000\n\
                [[axis]]\nfield = \"a.x\"\nrange = { from = 1, to = 100000, step = 1 }\n\
                [[axis]]\nfield = \"a.y\"\nrange = { from = 1, to = 100000, step = 1 }\n";
    let spec = parse_spec(text, "huge.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let runner = FakeRunner::new(0);
    let start = Instant::now();
    let err = run_sweep(&spec, &runner, &opts(&dir.path().join("r.jsonl"))).unwrap_err();
    let err = format!("{err:#}");
    assert!(start.elapsed().as_secs() < 5, "took {:?}", start.elapsed());
    for needle in [
        "huge.toml",
        "10000000000000 runs",
        "100000 values of a.x",
        "1000 trials",
        &format!("limit of {DEFAULT_MAX_RUNS}"),
        "--force",
    ] {
        assert!(err.contains(needle), "`{needle}` not in: {err}");
    }
    assert_eq!(runner.checks.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[test]
fn a_sweep_without_a_limit_runs_past_the_default_one() {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(&dir.path().join("r.jsonl"));
    o.max_runs = Some(59);
    let err = run_sweep(&spec, &FakeRunner::new(0), &o).unwrap_err();
    assert!(err.to_string().contains("60 runs"), "{err}");
    o.max_runs = None;
    assert_eq!(run_sweep(&spec, &FakeRunner::new(0), &o).unwrap().total, 60);
}

#[test]
fn the_run_limit_applies_to_the_runs_of_a_shard() {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(&dir.path().join("r.jsonl"));
    o.max_runs = Some(30);
    o.shard = Some((1, 2));
    assert_eq!(run_sweep(&spec, &FakeRunner::new(0), &o).unwrap().total, 30);
    o.shard = Some((0, 1));
    let err = plan_sweep(&spec, &FakeRunner::new(0), &o).unwrap_err();
    assert!(err.to_string().contains("shard 0/1 has 60"), "{err}");
}

#[test]
fn kept_records_hold_only_the_paths_asked_for_while_the_file_holds_whole_records() {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    let mut o = opts(&path);
    o.keep = Some(vec!["refs.remote".into(), "config.workload.kind".into()]);
    let out = run_sweep(&spec, &FakeRunner::new(0), &o).unwrap();
    let r = &out.records[0];
    assert_eq!(
        r.result,
        serde_json::json!({"refs": {"remote": 2}, "config": {"workload": {"kind": "jacobi"}}})
    );
    assert!(r.spec_config.is_null());
    assert_eq!(r.field("workload.kind"), Some("jacobi".into()));
    let stored = load(&path).unwrap();
    assert!(stored.iter().all(|r| r.result.get("series").is_some()));
    assert!(stored.iter().all(|r| !r.spec_config.is_null()));
}

#[test]
fn a_plan_with_one_job_checks_its_points_on_the_calling_thread() {
    // Checks the first trial of each of the 12 axis combinations, noting the thread.
    struct Threads(std::sync::Mutex<Vec<std::thread::ThreadId>>);
    impl numaplace_study::Runner for Threads {
        fn run(&self, _: &numaplace_study::RunPoint) -> anyhow::Result<serde_json::Value> {
            anyhow::bail!("a plan runs nothing")
        }
        fn check(&self, _: &numaplace_study::RunPoint) -> anyhow::Result<()> {
            self.0.lock().unwrap().push(std::thread::current().id());
            Ok(())
        }
    }
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(&dir.path().join("r.jsonl"));
    o.jobs = 1;
    let runner = Threads(std::sync::Mutex::new(Vec::new()));
    assert_eq!(plan_sweep(&spec, &runner, &o).unwrap().runs(), 60);
    let threads = runner.0.into_inner().unwrap();
    assert_eq!(threads.len(), 12);
    assert!(threads.iter().all(|&t| t == std::thread::current().id()));
}
