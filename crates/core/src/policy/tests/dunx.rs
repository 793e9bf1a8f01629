//! Unit tests of the `dunx` policy against the recording double, one behaviour each.

use super::*;
use crate::history::HistoryMode;
use crate::memory::Mapping;
use crate::mm::{test_machine_config, Action, Recording};
use crate::policy::test_scene::{fault, mapped, recording};

const WINDOW: u64 = 10_000;
const SCAN: u64 = 1_000_000;

fn config() -> DunxConfig {
    DunxConfig {
        freeze_window_ns: WINDOW,
        scan_delay_ns: SCAN,
        ..DunxConfig::default()
    }
}

/// `config` over `npages` unplaced pages of the unit-test machine with `nodes` nodes of
/// `frames` frames, reference bits kept as the policy asks.
fn setup(nodes: u16, frames: u32, npages: usize, config: DunxConfig) -> (DunxPolicy, Recording) {
    let machine = recording(nodes, frames, 0, HistoryMode::None)
        .machine()
        .clone();
    let mut policy = DunxPolicy::new(config, &machine).unwrap();
    let mut rec = recording(nodes, frames, npages, policy.history());
    policy.init(&mut rec);
    (policy, rec)
}

/// Page 0 placed on node 0 and mapped writable there.
fn on_node0(rec: &mut Recording) {
    let (v, n0) = (Vpn(0), NodeId(0));
    rec.place(v, n0).unwrap();
    rec.map_to(v, n0, n0, Access::Write).unwrap();
}

/// Page 0 on node 0, migrated to node 1 by a write fault at `at` (through the policy).
fn migrated_at(policy: &mut DunxPolicy, rec: &mut Recording, at: u64) {
    on_node0(rec);
    rec.now = Ns(at);
    fault(policy, rec, 1, 0, true);
    assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(1)));
    rec.clear();
}

/// Page 0 frozen on node 1 (migrated there at 1 us, node 0's read fault at 2 us froze
/// it), node 0 mapping it remotely.
fn frozen(policy: &mut DunxPolicy, rec: &mut Recording) {
    migrated_at(policy, rec, 1_000);
    rec.now = Ns(2_000);
    fault(policy, rec, 0, 0, false);
    assert!(policy.is_frozen(Vpn(0)));
    rec.clear();
}

/// Runs node `n`'s scanner once at `at`.
fn scan(policy: &mut DunxPolicy, rec: &mut Recording, n: u16, at: u64) -> DaemonNext {
    rec.now = Ns(at);
    rec.actor = NodeId(n);
    policy.on_daemon(rec, n as usize)
}

#[test]
fn a_first_touch_places_the_page_on_the_faulting_node_and_maps_it_there() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    fault(&mut policy, &mut rec, 1, 0, true);
    assert_eq!(
        rec.actions(),
        [
            Action::PlaceNear(Vpn(0), NodeId(1)),
            Action::MapTo(Vpn(0), NodeId(1), NodeId(1), Access::Write),
        ]
    );
}

#[test]
fn initial_placement_follows_the_program_as_the_static_policy_does() {
    let (mut policy, rec) = setup(2, 8, 2, config());
    let m = rec.machine().clone();
    assert_eq!(
        policy.initial_placement(&m, Vpn(0), Some(NodeId(1))),
        Some(NodeId(1))
    );
    assert_eq!(policy.initial_placement(&m, Vpn(1), None), None);
}

#[test]
fn a_read_fault_on_a_remote_page_replicates_it_and_maps_the_local_copy_read_only() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    on_node0(&mut rec);
    rec.clear();
    fault(&mut policy, &mut rec, 1, 0, false);
    assert_eq!(
        rec.actions(),
        [
            Action::Replicate(Vpn(0), NodeId(1)),
            Action::MapTo(Vpn(0), NodeId(1), NodeId(1), Access::Read),
        ]
    );
    assert_eq!(rec.page(Vpn(0)).copies.len(), 2);
    assert_eq!(
        rec.mapping(Vpn(0), NodeId(0)),
        mapped(0, Access::Read),
        "write access to every copy is withdrawn"
    );
}

#[test]
fn a_write_fault_on_a_remote_page_migrates_it_and_invalidates_the_other_mappings() {
    let (mut policy, mut rec) = setup(3, 8, 1, config());
    on_node0(&mut rec);
    rec.map_to(Vpn(0), NodeId(2), NodeId(0), Access::Write)
        .unwrap();
    rec.now = Ns(7_000);
    rec.clear();
    fault(&mut policy, &mut rec, 1, 0, true);
    let others: NodeSet = NodeSet::from_bits(0b101);
    assert_eq!(
        rec.actions(),
        [
            Action::InvalidateMappings(Vpn(0), others),
            Action::Migrate(Vpn(0), NodeId(1)),
            Action::MapTo(Vpn(0), NodeId(1), NodeId(1), Access::Write),
        ]
    );
    assert_eq!(rec.mapping(Vpn(0), NodeId(2)), Mapping::default());
    assert_eq!(policy.last_invalidation(Vpn(0)), Some(Ns(7_000)));
}

#[test]
fn a_read_fault_on_a_recently_modified_page_migrates_it() {
    let cfg = DunxConfig {
        recent_mod: 0,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    on_node0(&mut rec);
    rec.mark_written_since_age(Vpn(0));
    rec.age_modifications(Vpn(0));
    rec.clear();
    fault(&mut policy, &mut rec, 1, 0, false);
    assert!(rec.actions().contains(&Action::Migrate(Vpn(0), NodeId(1))));
    assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(1)));
}

#[test]
fn a_recent_mod_of_minus_one_never_replicates() {
    let cfg = DunxConfig {
        recent_mod: -1,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    on_node0(&mut rec);
    rec.clear();
    fault(&mut policy, &mut rec, 1, 0, false);
    assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(1)));
}

#[test]
fn a_fault_on_a_page_migrated_within_the_freeze_window_maps_it_remotely_and_freezes_it() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    migrated_at(&mut policy, &mut rec, 1_000);
    rec.now = Ns(1_000 + WINDOW - 1);
    fault(&mut policy, &mut rec, 0, 0, false);
    assert!(rec.actions().contains(&Action::Freeze(Vpn(0))));
    assert!(policy.is_frozen(Vpn(0)));
    assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(1)));
    assert_eq!(rec.mapping(Vpn(0), NodeId(0)), mapped(1, Access::Read));
}

#[test]
fn a_fault_after_the_freeze_window_moves_the_page_again() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    migrated_at(&mut policy, &mut rec, 1_000);
    rec.now = Ns(1_000 + WINDOW);
    fault(&mut policy, &mut rec, 0, 0, true);
    assert!(!policy.is_frozen(Vpn(0)));
    assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(0)));
}

#[test]
fn a_fault_on_a_page_whose_replicas_were_invalidated_within_the_window_freezes_it() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    on_node0(&mut rec);
    rec.now = Ns(1_000);
    fault(&mut policy, &mut rec, 1, 0, false); // replicate on node 1
    fault(&mut policy, &mut rec, 0, 0, true); // coherency fault, node 0 keeps its copy
    rec.clear();
    rec.now = Ns(2_000);
    fault(&mut policy, &mut rec, 1, 0, false);
    assert!(policy.is_frozen(Vpn(0)));
    assert_eq!(rec.mapping(Vpn(0), NodeId(1)), mapped(0, Access::Read));
}

#[test]
fn a_frozen_page_stays_mapped_remotely_after_the_window_until_defrosted() {
    let (mut policy, mut rec) = setup(3, 8, 1, config());
    frozen(&mut policy, &mut rec);
    rec.now = Ns(10 * WINDOW);
    fault(&mut policy, &mut rec, 2, 0, true);
    assert_eq!(
        rec.actions(),
        [Action::MapNearest(Vpn(0), NodeId(2), Access::Write)]
    );
    assert!(policy.is_frozen(Vpn(0)));
}

#[test]
fn a_write_to_a_replicated_page_with_a_local_copy_invalidates_the_other_copies() {
    let (mut policy, mut rec) = setup(3, 8, 1, config());
    on_node0(&mut rec);
    fault(&mut policy, &mut rec, 1, 0, false);
    fault(&mut policy, &mut rec, 2, 0, false);
    rec.now = Ns(5_000);
    rec.clear();
    fault(&mut policy, &mut rec, 1, 0, true);
    assert_eq!(
        rec.actions(),
        [
            Action::CoherencyFault(Vpn(0), NodeId(1)),
            Action::MapTo(Vpn(0), NodeId(1), NodeId(1), Access::Write),
        ]
    );
    assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(1)));
    assert_eq!(policy.replicas_invalidated(), 2);
    assert_eq!(policy.last_invalidation(Vpn(0)), Some(Ns(5_000)));
}

#[test]
fn a_write_to_a_replicated_page_without_a_local_copy_migrates_one_replica_here() {
    let (mut policy, mut rec) = setup(3, 8, 1, config());
    on_node0(&mut rec);
    fault(&mut policy, &mut rec, 1, 0, false);
    rec.clear();
    fault(&mut policy, &mut rec, 2, 0, true);
    assert_eq!(
        rec.actions(),
        [
            Action::CoherencyFault(Vpn(0), NodeId(0)),
            Action::InvalidateMappings(Vpn(0), NodeSet::single(NodeId(0))),
            Action::Migrate(Vpn(0), NodeId(2)),
            Action::MapTo(Vpn(0), NodeId(2), NodeId(2), Access::Write),
        ]
    );
    assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(2)));
    assert_eq!(policy.replicas_invalidated(), 1);
}

#[test]
fn a_read_of_a_replicated_page_makes_a_local_copy_without_a_freeze_check() {
    let (mut policy, mut rec) = setup(3, 8, 1, config());
    on_node0(&mut rec);
    fault(&mut policy, &mut rec, 1, 0, false);
    rec.clear();
    fault(&mut policy, &mut rec, 2, 0, false);
    assert_eq!(
        rec.actions(),
        [
            Action::Replicate(Vpn(0), NodeId(2)),
            Action::MapTo(Vpn(0), NodeId(2), NodeId(2), Access::Read),
        ]
    );
    assert!(!policy.is_frozen(Vpn(0)));
}

#[test]
fn a_fault_on_a_node_without_a_free_frame_maps_the_remote_copy() {
    let (mut policy, mut rec) = setup(2, 1, 2, config());
    on_node0(&mut rec);
    rec.place(Vpn(1), NodeId(1)).unwrap();
    rec.clear();
    fault(&mut policy, &mut rec, 1, 0, false);
    assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(0)));
    assert_eq!(rec.mapping(Vpn(0), NodeId(1)), mapped(0, Access::Read));
    assert!(!policy.is_frozen(Vpn(0)));
}

#[test]
fn there_is_one_scanner_per_node_stealing_time_on_it() {
    let (policy, rec) = setup(3, 8, 1, config());
    let d = policy.daemons(rec.machine());
    assert_eq!(d.len(), 3);
    for (n, spec) in d.iter().enumerate() {
        assert_eq!(spec.placement, DaemonPlacement::StealOn(NodeId(n as u16)));
        assert_eq!(spec.first_wake, Ns(SCAN));
    }
}

#[test]
fn a_scanner_pass_ages_and_charges_only_its_own_nodes_frames_and_wakes_after_the_scan_delay() {
    let (mut policy, mut rec) = setup(2, 8, 2, config());
    rec.place(Vpn(0), NodeId(0)).unwrap();
    rec.place(Vpn(1), NodeId(1)).unwrap();
    rec.clear();
    let next = scan(&mut policy, &mut rec, 1, SCAN);
    let examine = Ns(rec.machine().costs().pte_examine_ns);
    assert_eq!(
        rec.actions(),
        [
            Action::DaemonPass,
            Action::Charge(examine),
            Action::AgeModifications(Vpn(1)),
        ]
    );
    assert_eq!(next, DaemonNext::After(Ns(SCAN)));
}

#[test]
fn a_scanner_samples_a_frozen_frames_local_and_remote_reference_bits() {
    let (mut policy, mut rec) = setup(3, 8, 1, config());
    frozen(&mut policy, &mut rec); // home node 1
    rec.history_mut().record(Vpn(0), NodeId(0), 5);
    scan(&mut policy, &mut rec, 1, SCAN);
    for n in 0..3 {
        assert!(rec
            .actions()
            .contains(&Action::ExamineHistory(Vpn(0), NodeId(n))));
    }
    assert_eq!(rec.history().peek(Vpn(0), NodeId(0)), 0, "bits cleared");
}

#[test]
fn a_frozen_page_referenced_remotely_as_often_as_locally_is_defrosted_by_invalidating_remote_mappings(
) {
    let (mut policy, mut rec) = setup(3, 8, 1, config());
    frozen(&mut policy, &mut rec); // home node 1, node 0 maps it remotely
    rec.map_to(Vpn(0), NodeId(1), NodeId(1), Access::Read)
        .unwrap();
    rec.history_mut().record(Vpn(0), NodeId(0), 1);
    rec.history_mut().record(Vpn(0), NodeId(1), 1);
    rec.clear();
    scan(&mut policy, &mut rec, 1, SCAN);
    assert!(rec.actions().contains(&Action::InvalidateMappings(
        Vpn(0),
        NodeSet::single(NodeId(0))
    )));
    assert!(rec.actions().contains(&Action::Thaw(Vpn(0))));
    assert!(!policy.is_frozen(Vpn(0)));
    assert_eq!(
        rec.mapping(Vpn(0), NodeId(1)),
        mapped(1, Access::Read),
        "the local mapping stays"
    );
}

#[test]
fn a_frozen_page_referenced_more_locally_than_remotely_stays_frozen_and_its_count_restarts() {
    let (mut policy, mut rec) = setup(3, 8, 1, config());
    frozen(&mut policy, &mut rec);
    rec.history_mut().record(Vpn(0), NodeId(1), 1);
    scan(&mut policy, &mut rec, 1, SCAN);
    assert!(policy.is_frozen(Vpn(0)));
    assert_eq!(policy.successes(Vpn(0)), 0);
    assert!(!rec.actions().contains(&Action::Thaw(Vpn(0))));
}

#[test]
fn defrosting_waits_for_defrost_trigger_successes_in_a_row() {
    let cfg = DunxConfig {
        defrost_trigger: 2,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    frozen(&mut policy, &mut rec);
    rec.history_mut().record(Vpn(0), NodeId(0), 1);
    scan(&mut policy, &mut rec, 1, SCAN);
    assert!(policy.is_frozen(Vpn(0)));
    assert_eq!(policy.successes(Vpn(0)), 1);
    rec.history_mut().record(Vpn(0), NodeId(0), 1);
    scan(&mut policy, &mut rec, 1, 2 * SCAN);
    assert!(!policy.is_frozen(Vpn(0)));
}

#[test]
fn a_recently_modified_frozen_page_is_defrosted_by_invalidating_all_its_mappings() {
    let cfg = DunxConfig {
        trigger_method: 0,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    frozen(&mut policy, &mut rec);
    rec.mark_written_since_age(Vpn(0));
    rec.clear();
    scan(&mut policy, &mut rec, 1, SCAN); // ages the write in, then checks
    let all = NodeSet::from_bits(0b11);
    assert!(rec
        .actions()
        .contains(&Action::InvalidateMappings(Vpn(0), all)));
    assert_eq!(rec.page(Vpn(0)).mapped, NodeSet::EMPTY);
}

#[test]
fn collect_only_passes_do_not_defrost() {
    let cfg = DunxConfig {
        sample_passes: 1,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    frozen(&mut policy, &mut rec);
    scan(&mut policy, &mut rec, 1, SCAN);
    assert!(policy.is_frozen(Vpn(0)), "first pass only collects");
    scan(&mut policy, &mut rec, 1, 2 * SCAN);
    assert!(!policy.is_frozen(Vpn(0)), "second pass checks");
}

#[test]
fn the_phase_hint_invalidates_every_remote_mapping_and_defrosts_every_frozen_page() {
    let (mut policy, mut rec) = setup(3, 8, 2, config());
    frozen(&mut policy, &mut rec); // page 0 frozen on node 1, node 0 remote
    rec.place(Vpn(1), NodeId(2)).unwrap();
    rec.map_to(Vpn(1), NodeId(2), NodeId(2), Access::Write)
        .unwrap();
    rec.map_to(Vpn(1), NodeId(1), NodeId(2), Access::Write)
        .unwrap();
    rec.clear();
    rec.actor = NodeId(2);
    policy.on_phase_hint(&mut rec, ThreadId(2));
    assert!(!policy.is_frozen(Vpn(0)));
    assert_eq!(rec.mapping(Vpn(0), NodeId(0)), Mapping::default());
    assert_eq!(rec.mapping(Vpn(1), NodeId(1)), Mapping::default());
    assert_eq!(
        rec.mapping(Vpn(1), NodeId(2)),
        mapped(2, Access::Write),
        "local mappings stay"
    );
    assert!(rec.cost() > Ns::ZERO, "the hint's work is charged");
}

#[test]
fn the_replicas_invalidated_are_reported_as_a_counter() {
    let (mut policy, mut rec) = setup(3, 8, 1, config());
    on_node0(&mut rec);
    fault(&mut policy, &mut rec, 1, 0, false);
    fault(&mut policy, &mut rec, 0, 0, true);
    let c = policy.counters();
    assert_eq!(c[0].name, "replicas_invalidated");
    assert_eq!(c[0].value, 1);
}

#[test]
fn bad_parameters_are_refused_naming_the_field() {
    let machine = Machine::new(test_machine_config(2)).unwrap();
    let cases = [
        (
            "policy.scan_delay_ns",
            DunxConfig {
                scan_delay_ns: 0,
                ..config()
            },
        ),
        (
            "policy.recent_mod",
            DunxConfig {
                recent_mod: -2,
                ..config()
            },
        ),
        (
            "policy.trigger_method",
            DunxConfig {
                trigger_method: 70_000,
                ..config()
            },
        ),
    ];
    for (field, cfg) in cases {
        let e = DunxPolicy::new(cfg, &machine).expect_err("refused");
        assert!(e.to_string().contains(field), "{field}: {e}");
    }
}
