//! Schedule files of `oracle-replay`: both versions load, a written schedule reads back,
//! and a bad file is refused naming the field and the file.

use numaplace_core::mm::test_machine_config;
use numaplace_core::policy::PolicyParams;
use numaplace_core::{ConfigError, Machine};
use numaplace_oracle::replay::{Op, ReplayConfig, Schedule, ScheduleModel, Scheduled};

fn machine() -> Machine {
    Machine::new(test_machine_config(2)).unwrap()
}

/// Writes `text` to a schedule file and builds `oracle-replay` on it.
fn build(text: &str) -> (Result<bool, ConfigError>, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json").display().to_string();
    std::fs::write(&path, text).unwrap();
    let cfg = ReplayConfig {
        schedule: path.clone(),
    };
    (cfg.build(&machine()).map(|p| p.replicates()), path)
}

fn refused(text: &str, needle: &str) {
    let (r, path) = build(text);
    let e = r.expect_err("refused");
    assert_eq!(e.field, "policy.schedule");
    assert!(e.message.contains(&path), "{}", e.message);
    assert!(
        e.message.contains(needle),
        "`{needle}` not in {}",
        e.message
    );
}

const VERSION_1: &str = r#"{"initial":[0,null,1],"moves":[{"time":50,"vpn":0,"to":1}],"cost":7}"#;

#[test]
fn a_version_1_schedule_of_moves_still_loads() {
    let s = Schedule::from_json(VERSION_1).unwrap();
    assert_eq!(s.model, ScheduleModel::Migration);
    assert_eq!(s.initial, vec![Some(0), None, Some(1)]);
    assert_eq!(
        s.actions,
        vec![Scheduled {
            time: 50,
            vpn: 0,
            op: Op::Migrate,
            node: 1
        }]
    );
    assert_eq!(s.cost, 7);
    assert!(!build(VERSION_1).0.unwrap(), "no replications");
}

#[test]
fn a_schedule_with_replications_makes_a_replicating_policy() {
    let text = r#"{"version":2,"model":"replication","initial":[0],
        "actions":[{"time":5,"vpn":0,"op":"replicate","node":1},
                   {"time":9,"vpn":0,"op":"collapse","node":1}],"cost":0}"#;
    assert!(build(text).0.unwrap());
}

#[test]
fn a_written_schedule_reads_back_the_same() {
    let s = Schedule {
        model: ScheduleModel::Replication,
        initial: vec![Some(1), None],
        actions: vec![
            Scheduled {
                time: 3,
                vpn: 0,
                op: Op::Replicate,
                node: 0,
            },
            Scheduled {
                time: 3,
                vpn: 0,
                op: Op::Collapse,
                node: 0,
            },
            Scheduled {
                time: 8,
                vpn: 0,
                op: Op::Migrate,
                node: 1,
            },
        ],
        cost: 42,
    };
    let text = s.to_json().unwrap();
    assert!(text.contains("\"version\":2"), "{text}");
    assert_eq!(Schedule::from_json(&text).unwrap(), s);
}

#[test]
fn a_schedule_naming_a_node_the_machine_lacks_is_refused_naming_the_field() {
    refused(
        r#"{"version":2,"initial":[0],"actions":[{"time":1,"vpn":0,"op":"replicate","node":5}],"cost":0}"#,
        "`actions` names node 5",
    );
    refused(
        r#"{"initial":[3],"moves":[],"cost":0}"#,
        "`initial` names node 3",
    );
}

#[test]
fn a_schedule_of_an_unknown_version_is_refused_naming_the_field() {
    refused(
        r#"{"version":9,"initial":[],"actions":[],"cost":0}"#,
        "version 9",
    );
}

#[test]
fn a_schedule_mixing_the_versions_fields_is_refused_naming_the_field() {
    refused(
        r#"{"version":2,"initial":[],"moves":[],"cost":0}"#,
        "`moves` belongs to version 1",
    );
    refused(
        r#"{"initial":[],"actions":[],"cost":0}"#,
        "belong to version 2",
    );
}

#[test]
fn a_schedule_with_an_unknown_action_is_refused_naming_the_field() {
    refused(
        r#"{"version":2,"initial":[0],"actions":[{"time":1,"vpn":0,"op":"teleport","node":1}],"cost":0}"#,
        "teleport",
    );
}

#[test]
fn a_file_that_is_not_a_schedule_is_refused_naming_the_field() {
    refused("not json at all", "not a schedule");
}
