//! Sweep behaviour: parallelism, ordering, interruption, resume, shards.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{FakeRunner, SPEC_3X5};
use numaplace_study::sweep::{merge, run_sweep, SweepOptions};
use numaplace_study::{load, parse_spec};

fn opts(out: &std::path::Path, jobs: usize) -> SweepOptions {
    SweepOptions {
        jobs,
        progress: false,
        ..SweepOptions::new(out)
    }
}

#[test]
fn sweep_of_three_axes_and_five_trials_uses_two_threads_and_sorts_by_index() {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let runner = FakeRunner::new(3);
    let out = run_sweep(&spec, &runner, &opts(&dir.path().join("r.jsonl"), 2)).unwrap();
    assert_eq!(out.total, 2 * 3 * 2 * 5);
    assert_eq!(out.records.len(), 60);
    assert_eq!(runner.threads.lock().unwrap().len(), 2);
    assert_eq!(runner.max_in_flight.load(Ordering::SeqCst), 2);
    let idx: Vec<usize> = out.records.iter().map(|r| r.index).collect();
    assert_eq!(idx, (0..60).collect::<Vec<_>>());
    assert!(out.complete());
    // The file holds every run exactly once (in finishing order).
    assert_eq!(load(&dir.path().join("r.jsonl")).unwrap().len(), 60);
}

#[test]
fn existing_results_file_without_resume_is_an_error() {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    std::fs::write(&path, "x\n").unwrap();
    let err = run_sweep(&spec, &FakeRunner::new(0), &opts(&path, 1)).unwrap_err();
    assert!(err.to_string().contains("exists; use --resume"), "{err}");
}

#[test]
fn interrupted_then_resumed_sweep_equals_uninterrupted_without_rerunning() {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();

    let whole = run_sweep(
        &spec,
        &FakeRunner::new(0),
        &opts(&dir.path().join("whole.jsonl"), 2),
    )
    .unwrap();

    let path = dir.path().join("part.jsonl");
    let flag = Arc::new(AtomicBool::new(false));
    let mut first = FakeRunner::new(1);
    first.stop_after = Some((17, flag.clone()));
    let mut o = opts(&path, 2);
    o.stop = Some(flag);
    let part = run_sweep(&spec, &first, &o).unwrap();
    assert!(part.interrupted);
    assert!(
        part.records.len() >= 17 && part.records.len() < 60,
        "{}",
        part.records.len()
    );
    assert_eq!(first.max_calls_per_run(), 1);

    let second = FakeRunner::new(0);
    let mut o = opts(&path, 2);
    o.resume = true;
    let resumed = run_sweep(&spec, &second, &o).unwrap();
    assert!(resumed.complete());
    assert_eq!(resumed.skipped, part.records.len());
    assert_eq!(first.total_calls() + second.total_calls(), 60);
    for id in second.calls.lock().unwrap().keys() {
        assert!(
            !first.calls.lock().unwrap().contains_key(id),
            "{id} ran twice"
        );
    }
    assert_eq!(resumed.records, whole.records);
    assert_eq!(load(&path).unwrap().len(), 60);
}

#[test]
fn resume_with_changed_spec_is_an_error() {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    run_sweep(&spec, &FakeRunner::new(0), &opts(&path, 2)).unwrap();
    let changed = parse_spec(
        &SPEC_3X5.replace("values = [2, 4]", "values = [2, 8]"),
        "spec.toml",
    )
    .unwrap();
    let mut o = opts(&path, 2);
    o.resume = true;
    let err = run_sweep(&changed, &FakeRunner::new(0), &o).unwrap_err();
    assert!(err.to_string().contains("spec changed"), "{err}");
}

#[test]
fn resume_with_changed_base_configuration_is_an_error() {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    run_sweep(&spec, &FakeRunner::new(0), &opts(&path, 2)).unwrap();
    let changed = parse_spec(
        &SPEC_3X5.replace(r#"workload.kind = "jacobi""#, r#"workload.kind = "matvec""#),
        "spec.toml",
    )
    .unwrap();
    let mut o = opts(&path, 2);
    o.resume = true;
    let err = run_sweep(&changed, &FakeRunner::new(0), &o).unwrap_err();
    assert!(err.to_string().contains("base changed"), "{err}");
}

#[test]
fn shards_merged_equal_the_whole() {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let whole = run_sweep(
        &spec,
        &FakeRunner::new(0),
        &opts(&dir.path().join("w.jsonl"), 2),
    )
    .unwrap();
    let mut paths = Vec::new();
    for i in 0..2 {
        let p = dir.path().join(format!("s{i}.jsonl"));
        let mut o = opts(&p, 1);
        o.shard = Some((i, 2));
        let part = run_sweep(&spec, &FakeRunner::new(0), &o).unwrap();
        assert_eq!(part.total, 30);
        assert!(part.records.iter().all(|r| r.index % 2 == i));
        paths.push(p);
    }
    assert_eq!(merge(&paths).unwrap(), whole.records);
}

#[test]
fn merging_conflicting_duplicates_is_an_error() {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    run_sweep(&spec, &FakeRunner::new(0), &opts(&a, 2)).unwrap();
    let text = std::fs::read_to_string(&a).unwrap();
    let b = dir.path().join("b.jsonl");
    std::fs::write(
        &b,
        text.replacen("\"makespan_ns\":", "\"makespan_ns\":1e9,\"x\":", 1),
    )
    .unwrap();
    let err = merge(&[a, b]).unwrap_err();
    assert!(err.to_string().contains("differs"), "{err}");
}

#[test]
fn torn_last_line_is_ignored_on_load_and_resume_completes() {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    let whole = run_sweep(&spec, &FakeRunner::new(0), &opts(&path, 2)).unwrap();
    // Keep 10 complete lines and half of the 11th, as if killed mid-write.
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let torn = format!(
        "{}\n{}",
        lines[..10].join("\n"),
        &lines[10][..lines[10].len() / 2]
    );
    std::fs::write(&path, torn).unwrap();
    assert_eq!(load(&path).unwrap().len(), 10);

    let runner = FakeRunner::new(0);
    let mut o = opts(&path, 2);
    o.resume = true;
    let resumed = run_sweep(&spec, &runner, &o).unwrap();
    assert_eq!(runner.total_calls(), 50);
    assert_eq!(resumed.records, whole.records);
    assert_eq!(load(&path).unwrap().len(), 60);
}

#[test]
fn failed_run_is_recorded_without_losing_the_others() {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut runner = FakeRunner::new(0);
    runner.fail_index = Some(7);
    let out = run_sweep(&spec, &runner, &opts(&dir.path().join("r.jsonl"), 2)).unwrap();
    assert_eq!(out.records.len(), 60);
    assert_eq!(out.failures.len(), 1);
    assert_eq!(out.records[7].error.as_deref(), Some("deliberate failure"));
    assert!(out.records.iter().filter(|r| r.ok()).count() == 59);
}

#[test]
fn invalid_shard_is_an_error() {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(&dir.path().join("r.jsonl"), 1);
    o.shard = Some((2, 2));
    assert!(run_sweep(&spec, &FakeRunner::new(0), &o).is_err());
}
