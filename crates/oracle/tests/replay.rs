//! `oracle-replay`: schedule files of both versions load, a written schedule reads back,
//! a bad file is refused naming the field and the file; and the policy against the
//! recording double, when the run drifts from the schedule.

use numaplace_core::component::{Fault, Policy, PolicyParams};
use numaplace_core::memory::Access;
use numaplace_core::mm::{test_machine_config, Action, Recording};
use numaplace_core::{ConfigError, HistoryMode, Machine, Mm, NodeId, Ns, ThreadId, Vpn};
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

/// `oracle-replay` on `schedule` (JSON), over one page placed on node 0 of the
/// two-node test machine, against the recording double.
fn scene(schedule: &str) -> (Box<dyn Policy>, Recording, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    std::fs::write(&path, schedule).unwrap();
    let cfg = ReplayConfig {
        schedule: path.display().to_string(),
    };
    let mut policy = cfg.build(&machine()).unwrap();
    let mut rec = Recording::new(machine(), 1, HistoryMode::None);
    rec.place(Vpn(0), NodeId(0)).unwrap();
    policy.init(&mut rec);
    (policy, rec, dir)
}

fn fault_at(policy: &mut dyn Policy, rec: &mut Recording, at: u64, node: u16, write: bool) {
    rec.now = Ns(at);
    rec.actor = NodeId(node);
    policy.on_fault(
        rec,
        Fault {
            thread: ThreadId(node as u32),
            node: NodeId(node),
            vpn: Vpn(0),
            write,
        },
    );
}

/// The only daemon (node 1's) wakes at `at`.
fn daemon_at(policy: &mut dyn Policy, rec: &mut Recording, at: u64) {
    rec.now = Ns(at);
    rec.actor = NodeId(1);
    policy.on_daemon(rec, 0);
}

#[test]
fn a_copy_a_late_write_took_away_is_made_again_at_the_readers_next_read() {
    let (mut policy, mut rec, _dir) = scene(
        r#"{"version":2,"initial":[0],
            "actions":[{"time":100,"vpn":0,"op":"replicate","node":1}],"cost":0}"#,
    );
    daemon_at(policy.as_mut(), &mut rec, 100);
    assert_eq!(rec.page(Vpn(0)).copies.len(), 2);
    // Node 0's write, which the schedule had before the replication, comes after it.
    fault_at(policy.as_mut(), &mut rec, 150, 0, true);
    assert!(rec
        .actions()
        .contains(&Action::CoherencyFault(Vpn(0), NodeId(0))));
    assert_eq!(rec.page(Vpn(0)).copies.len(), 1);
    rec.clear();
    fault_at(policy.as_mut(), &mut rec, 200, 1, false);
    assert_eq!(
        rec.actions()
            .iter()
            .filter(|a| matches!(a, Action::Replicate(..) | Action::MapTo(..)))
            .copied()
            .collect::<Vec<_>>(),
        vec![
            Action::Replicate(Vpn(0), NodeId(1)),
            Action::MapTo(Vpn(0), NodeId(1), NodeId(1), Access::Read)
        ]
    );
}

#[test]
fn a_write_before_its_scheduled_collapse_keeps_the_copy_the_collapse_keeps() {
    let (mut policy, mut rec, _dir) = scene(
        r#"{"version":2,"initial":[0],
            "actions":[{"time":100,"vpn":0,"op":"replicate","node":1},
                       {"time":1000,"vpn":0,"op":"collapse","node":1}],"cost":0}"#,
    );
    daemon_at(policy.as_mut(), &mut rec, 100);
    // Node 0 writes at 990, nearer the collapse (1000) than the replication (100).
    fault_at(policy.as_mut(), &mut rec, 990, 0, true);
    assert!(rec
        .actions()
        .contains(&Action::CoherencyFault(Vpn(0), NodeId(1))));
    // The page's scheduled copy is node 1's now: node 0 reads it remotely, no copy made.
    rec.clear();
    fault_at(policy.as_mut(), &mut rec, 995, 0, false);
    assert!(!rec
        .actions()
        .iter()
        .any(|a| matches!(a, Action::Replicate(..))));
    assert_eq!(rec.mapping(Vpn(0), NodeId(0)).target, NodeId(1));
}

#[test]
fn a_scheduled_replication_maps_the_new_copy_for_its_node() {
    let (mut policy, mut rec, _dir) = scene(
        r#"{"version":2,"initial":[0],
            "actions":[{"time":100,"vpn":0,"op":"replicate","node":1}],"cost":0}"#,
    );
    // Node 1 reads the page remotely before its copy is made.
    fault_at(policy.as_mut(), &mut rec, 50, 1, false);
    assert_eq!(rec.mapping(Vpn(0), NodeId(1)).target, NodeId(0));
    daemon_at(policy.as_mut(), &mut rec, 100);
    assert_eq!(rec.mapping(Vpn(0), NodeId(1)).target, NodeId(1));
}
