//! `numaplace oracle` and `run --oracle` as a user meets them.

mod common;

use common::{assert_user_error, numaplace, stderr, stdout};

const SMALL: &[&str] = &[
    "--workload",
    "gauss",
    "--policy",
    "platinum",
    "--set",
    "workload.n=48",
    "--set",
    "machine.nodes=4",
    "--set",
    "workload.threads=4",
];

#[test]
fn oracle_reports_the_optimum_the_policy_and_the_regret() {
    let mut args = vec!["oracle"];
    args.extend_from_slice(SMALL);
    let o = numaplace(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for needle in [
        "optimum, migration only",
        "optimum, replication",
        "policy `platinum`",
        "regret (policy / optimum)",
        "references/s",
    ] {
        assert!(out.contains(needle), "`{needle}` not in: {out}");
    }
}

#[test]
fn run_with_oracle_writes_the_oracle_into_the_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    let mut args = vec!["run", "--oracle", "--json", path.to_str().unwrap()];
    args.extend_from_slice(SMALL);
    let o = numaplace(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(v["oracle"]["regret"].as_f64().unwrap() >= 1.0);
    assert!(v["makespan_ns"].as_u64().unwrap() > 0);
}

#[test]
fn oracle_replay_reports_the_replayed_makespan() {
    let mut args = vec!["oracle", "--replay"];
    args.extend_from_slice(SMALL);
    let o = numaplace(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("makespan"), "{}", stdout(&o));
    assert!(stdout(&o).contains("replayed"), "{}", stdout(&o));
}

#[test]
fn oracle_replay_replays_the_replication_optimum_when_it_was_solved() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    let mut args = vec!["oracle", "--replay", "--json", path.to_str().unwrap()];
    args.extend_from_slice(SMALL);
    let o = numaplace(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("replay of the replication optimum"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let r = &v["oracle"]["replay"];
    assert_eq!(r["model"], "replication");
    assert_eq!(r["optimum_cost"], v["oracle"]["optimum_replication"]);
    assert!(r["replications"].as_u64().unwrap() > 0);
}

#[test]
fn oracle_replay_model_migration_replays_the_migration_only_optimum() {
    let mut args = vec!["oracle", "--replay", "--replay-model", "migration"];
    args.extend_from_slice(SMALL);
    let o = numaplace(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("replay of the migration-only optimum"),
        "{out}"
    );
}

#[test]
fn replay_model_replication_without_the_replication_optimum_is_refused_with_exit_code_2() {
    let mut args = vec![
        "oracle",
        "--replay",
        "--replay-model",
        "replication",
        "--no-replication",
    ];
    args.extend_from_slice(SMALL);
    let o = numaplace(&args);
    assert_user_error(&o, &["--replay-model replication", "not solved"]);
}

#[test]
fn a_file_that_is_not_a_trace_is_refused_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junk.bin");
    std::fs::write(&path, vec![7u8; 100]).unwrap();
    let o = numaplace(&["oracle", "--from-trace", path.to_str().unwrap()]);
    assert_user_error(&o, &["not a valid trace"]);
}

#[test]
fn a_bad_field_of_the_oracle_run_is_refused_with_exit_code_2() {
    let o = numaplace(&["oracle", "--set", "workload.nn=3"]);
    assert_user_error(&o, &["workload.nn"]);
}

#[test]
fn a_replay_schedule_that_cannot_be_read_names_the_field() {
    let o = numaplace(&[
        "run",
        "--policy",
        "oracle-replay",
        "--set",
        "policy.schedule=\"/nonexistent/s.json\"",
    ]);
    assert_user_error(&o, &["policy.schedule"]);
}

#[test]
fn replay_model_replication_given_up_at_the_budget_is_refused_with_the_reason() {
    let mut args = vec![
        "oracle",
        "--replay",
        "--replay-model",
        "replication",
        "--replication-budget",
        "1",
    ];
    args.extend_from_slice(SMALL);
    let o = numaplace(&args);
    assert_user_error(&o, &["--replay-model replication", "given up"]);
}
