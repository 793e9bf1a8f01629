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
        freeze_window_ns: NsOrInf::Ns(WINDOW),
        scan_delay_ns: NsOrInf::Ns(SCAN),
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
fn a_collecting_pass_ages_and_charges_only_its_own_nodes_frames_and_wakes_after_the_scan_delay() {
    let cfg = DunxConfig {
        sample_passes: 1,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 2, cfg);
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
fn a_checking_pass_charges_each_frame_again_for_the_page_replacement_policy() {
    let (mut policy, mut rec) = setup(2, 8, 2, config()); // sample_passes 0: every pass checks
    rec.place(Vpn(0), NodeId(0)).unwrap();
    rec.place(Vpn(1), NodeId(1)).unwrap();
    rec.clear();
    scan(&mut policy, &mut rec, 1, SCAN);
    let examine = Ns(rec.machine().costs().pte_examine_ns);
    assert_eq!(
        rec.actions(),
        [
            Action::DaemonPass,
            Action::Charge(examine),
            Action::Charge(examine),
            Action::AgeModifications(Vpn(1)),
        ]
    );
}

#[test]
fn a_scanner_reads_and_clears_the_reference_count_of_each_mapping_of_its_frames() {
    let cfg = DunxConfig {
        sample_passes: 1, // a collecting pass keeps the counts
        ..config()
    };
    let (mut policy, mut rec) = setup(3, 8, 1, cfg);
    frozen(&mut policy, &mut rec); // home node 1, mapped there and by node 0
    rec.history_mut().record(Vpn(0), NodeId(0), 5);
    rec.history_mut().record(Vpn(0), NodeId(1), 2);
    scan(&mut policy, &mut rec, 1, SCAN);
    for n in [0, 1] {
        assert!(rec
            .actions()
            .contains(&Action::ExamineHistory(Vpn(0), NodeId(n))));
        assert_eq!(rec.history().peek(Vpn(0), NodeId(n)), 0, "count cleared");
    }
    assert_eq!(policy.reference_counts(Vpn(0)), (2, 5), "(local, remote)");
}

#[test]
fn each_remote_mapping_read_costs_one_examine_more() {
    let cfg = DunxConfig {
        sample_passes: 1,
        ..config()
    };
    let (mut policy, mut rec) = setup(3, 8, 1, cfg);
    frozen(&mut policy, &mut rec); // home node 1, node 0 remote
    rec.map_to(Vpn(0), NodeId(2), NodeId(1), Access::Read)
        .unwrap();
    rec.clear();
    scan(&mut policy, &mut rec, 1, SCAN);
    let examine = Ns(rec.machine().costs().pte_examine_ns);
    let charged = rec
        .actions()
        .iter()
        .filter(|a| **a == Action::Charge(examine))
        .count();
    assert_eq!(charged, 3, "the frame and two remote mappings");
}

#[test]
fn the_remote_count_is_the_sum_of_the_other_nodes_references() {
    let cfg = DunxConfig {
        sample_passes: 1,
        ..config()
    };
    let (mut policy, mut rec) = setup(3, 8, 1, cfg);
    frozen(&mut policy, &mut rec); // home node 1, node 0 remote
    rec.map_to(Vpn(0), NodeId(2), NodeId(1), Access::Read)
        .unwrap();
    rec.history_mut().record(Vpn(0), NodeId(0), 3);
    rec.history_mut().record(Vpn(0), NodeId(2), 4);
    rec.history_mut().record(Vpn(0), NodeId(1), 6);
    scan(&mut policy, &mut rec, 1, SCAN);
    assert_eq!(policy.reference_counts(Vpn(0)), (6, 7));
}

#[test]
fn a_count_left_by_a_mapping_since_invalidated_is_cleared_and_not_counted() {
    let cfg = DunxConfig {
        sample_passes: 1,
        ..config()
    };
    let (mut policy, mut rec) = setup(3, 8, 1, cfg);
    frozen(&mut policy, &mut rec); // home node 1; node 2 never mapped it
    rec.history_mut().record(Vpn(0), NodeId(2), 9);
    scan(&mut policy, &mut rec, 1, SCAN);
    assert_eq!(rec.history().peek(Vpn(0), NodeId(2)), 0);
    assert_eq!(policy.reference_counts(Vpn(0)), (0, 0));
}

#[test]
fn a_replica_frames_mappings_are_read_by_its_own_nodes_scanner_only() {
    let (mut policy, mut rec) = setup(3, 8, 1, config());
    on_node0(&mut rec);
    fault(&mut policy, &mut rec, 1, 0, false); // replica on node 1, mapped there
    rec.history_mut().record(Vpn(0), NodeId(1), 4);
    rec.clear();
    scan(&mut policy, &mut rec, 0, SCAN); // the home's scanner leaves node 1's count
    assert_eq!(rec.history().peek(Vpn(0), NodeId(1)), 4);
    scan(&mut policy, &mut rec, 1, SCAN);
    assert_eq!(rec.history().peek(Vpn(0), NodeId(1)), 0);
}

#[test]
fn a_migration_starts_the_frames_counts_afresh() {
    let cfg = DunxConfig {
        sample_passes: 1,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    on_node0(&mut rec);
    rec.history_mut().record(Vpn(0), NodeId(0), 3);
    scan(&mut policy, &mut rec, 0, SCAN);
    assert_eq!(policy.reference_counts(Vpn(0)), (3, 0));
    rec.now = Ns(2 * SCAN);
    fault(&mut policy, &mut rec, 1, 0, true);
    assert_eq!(policy.reference_counts(Vpn(0)), (0, 0));
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
    rec.history_mut().record(Vpn(0), NodeId(0), 1);
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
    rec.history_mut().record(Vpn(0), NodeId(0), 1);
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
                scan_delay_ns: NsOrInf::Ns(0),
                ..config()
            },
        ),
        (
            "policy.recent_mod",
            DunxConfig {
                recent_mod: -65_537,
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

// ---- The six parameters' boundary values (SOSP 1991, section 2) ----

/// Page 0 on node 0 with the largest aged modification count (written in each of the
/// last 16 scan intervals): 65535.
fn on_node0_always_written(rec: &mut Recording) {
    on_node0(rec);
    for _ in 0..16 {
        rec.mark_written_since_age(Vpn(0));
        rec.age_modifications(Vpn(0));
    }
    assert_eq!(rec.page(Vpn(0)).mod_history >> 16, 0xffff);
    rec.clear();
}

#[test]
fn any_negative_recent_mod_never_replicates_even_a_page_never_written() {
    for recent_mod in [-1, -7, -65_536] {
        let cfg = DunxConfig {
            recent_mod,
            ..config()
        };
        let (mut policy, mut rec) = setup(2, 8, 1, cfg);
        on_node0(&mut rec);
        assert_eq!(rec.page(Vpn(0)).mod_history >> 16, 0, "never aged in");
        rec.clear();
        fault(&mut policy, &mut rec, 1, 0, false);
        assert!(
            rec.actions().contains(&Action::Migrate(Vpn(0), NodeId(1))),
            "recent_mod {recent_mod}"
        );
        assert!(!rec
            .actions()
            .iter()
            .any(|a| matches!(a, Action::Replicate(..))));
        assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(1)));
    }
}

#[test]
fn recent_mod_two_to_the_sixteen_replicates_on_a_read_fault_whatever_the_modifications() {
    let cfg = DunxConfig {
        recent_mod: TWO_TO_16,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    on_node0_always_written(&mut rec);
    fault(&mut policy, &mut rec, 1, 0, false);
    assert_eq!(
        rec.actions(),
        [
            Action::Replicate(Vpn(0), NodeId(1)),
            Action::MapTo(Vpn(0), NodeId(1), NodeId(1), Access::Read),
        ]
    );
}

#[test]
fn recent_mod_just_below_the_count_migrates_and_at_the_count_replicates() {
    for (recent_mod, migrates) in [(0xfffe, true), (0xffff, false)] {
        let cfg = DunxConfig {
            recent_mod,
            ..config()
        };
        let (mut policy, mut rec) = setup(2, 8, 1, cfg);
        on_node0_always_written(&mut rec);
        fault(&mut policy, &mut rec, 1, 0, false);
        assert_eq!(
            rec.actions().contains(&Action::Migrate(Vpn(0), NodeId(1))),
            migrates,
            "recent_mod {recent_mod}: the count must exceed it"
        );
    }
}

#[test]
fn a_write_fault_migrates_whatever_recent_mod_says() {
    let cfg = DunxConfig {
        recent_mod: TWO_TO_16,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    on_node0(&mut rec);
    rec.clear();
    fault(&mut policy, &mut rec, 1, 0, true);
    assert!(rec.actions().contains(&Action::Migrate(Vpn(0), NodeId(1))));
}

#[test]
fn freeze_window_zero_never_freezes() {
    let cfg = DunxConfig {
        freeze_window_ns: NsOrInf::Ns(0),
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    migrated_at(&mut policy, &mut rec, 1_000);
    fault(&mut policy, &mut rec, 0, 0, true); // at the same instant
    assert!(!policy.is_frozen(Vpn(0)));
    assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(0)));
}

#[test]
fn an_infinite_freeze_window_freezes_a_page_invalidated_however_long_ago() {
    let cfg = DunxConfig {
        freeze_window_ns: NsOrInf::Inf,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    migrated_at(&mut policy, &mut rec, 1_000);
    rec.now = Ns(crate::TIME_LIMIT - 1);
    fault(&mut policy, &mut rec, 0, 0, true);
    assert!(policy.is_frozen(Vpn(0)));
    assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(1)));
}

#[test]
fn an_infinite_scan_delay_runs_no_scanner_at_all() {
    let cfg = DunxConfig {
        scan_delay_ns: NsOrInf::Inf,
        ..config()
    };
    let (mut policy, mut rec) = setup(3, 8, 1, cfg);
    assert!(policy.daemons(rec.machine()).is_empty());
    // Even if asked, a scanner does nothing and stops.
    frozen(&mut policy, &mut rec);
    rec.history_mut().record(Vpn(0), NodeId(0), 1);
    assert_eq!(scan(&mut policy, &mut rec, 1, SCAN), DaemonNext::Stop);
    assert_eq!(rec.actions(), []);
    assert!(policy.is_frozen(Vpn(0)));
}

#[test]
fn defrost_trigger_zero_defrosts_at_the_first_check_even_when_local_use_dominates() {
    let cfg = DunxConfig {
        defrost_trigger: 0,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    frozen(&mut policy, &mut rec); // home node 1
    rec.history_mut().record(Vpn(0), NodeId(1), 1); // local samples only
    scan(&mut policy, &mut rec, 1, SCAN);
    assert!(!policy.is_frozen(Vpn(0)));
    assert!(rec.actions().contains(&Action::Thaw(Vpn(0))));
}

#[test]
fn defrost_trigger_one_needs_one_check_with_remote_at_least_local() {
    let cfg = DunxConfig {
        defrost_trigger: 1,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    frozen(&mut policy, &mut rec);
    rec.history_mut().record(Vpn(0), NodeId(1), 1);
    scan(&mut policy, &mut rec, 1, SCAN);
    assert!(policy.is_frozen(Vpn(0)), "local > remote: no success");
    rec.history_mut().record(Vpn(0), NodeId(0), 1);
    scan(&mut policy, &mut rec, 1, 2 * SCAN);
    assert!(!policy.is_frozen(Vpn(0)));
}

#[test]
fn sample_passes_collect_that_many_passes_then_check_the_samples_of_all_of_them() {
    let cfg = DunxConfig {
        sample_passes: 2,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    frozen(&mut policy, &mut rec); // home node 1
                                   // Pass 1: one remote sample; pass 2: one local; pass 3 (the check): one local. The
                                   // check sees remote 1 < local 2 over the three passes: no success.
    rec.history_mut().record(Vpn(0), NodeId(0), 1);
    scan(&mut policy, &mut rec, 1, SCAN);
    rec.history_mut().record(Vpn(0), NodeId(1), 1);
    scan(&mut policy, &mut rec, 1, 2 * SCAN);
    assert!(policy.is_frozen(Vpn(0)), "two passes only collect");
    assert_eq!(policy.successes(Vpn(0)), 0);
    rec.history_mut().record(Vpn(0), NodeId(1), 1);
    scan(&mut policy, &mut rec, 1, 3 * SCAN);
    assert!(policy.is_frozen(Vpn(0)));
    assert_eq!(policy.successes(Vpn(0)), 0, "remote 1 < local 2");
    // The next round: remote samples in each of its three passes, none local.
    for k in 4..=6 {
        rec.history_mut().record(Vpn(0), NodeId(0), 1);
        scan(&mut policy, &mut rec, 1, k * SCAN);
        assert_eq!(policy.is_frozen(Vpn(0)), k < 6, "pass {k}");
    }
}

/// Page 0 frozen on node 1, mapped there locally and by node 0 remotely, written in the
/// last scan interval (aged count 0x8000 after the scanner's pass), and referenced
/// remotely so the scanner's next check defrosts it.
fn frozen_written_and_shared(policy: &mut DunxPolicy, rec: &mut Recording) {
    frozen(policy, rec);
    rec.map_to(Vpn(0), NodeId(1), NodeId(1), Access::Write)
        .unwrap();
    rec.mark_written_since_age(Vpn(0));
    rec.history_mut().record(Vpn(0), NodeId(0), 1);
    rec.clear();
}

#[test]
fn trigger_method_two_to_the_sixteen_invalidates_only_the_remote_mappings_of_a_written_page() {
    let cfg = DunxConfig {
        trigger_method: TWO_TO_16,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    frozen_written_and_shared(&mut policy, &mut rec);
    scan(&mut policy, &mut rec, 1, SCAN);
    assert!(rec.actions().contains(&Action::InvalidateMappings(
        Vpn(0),
        NodeSet::single(NodeId(0))
    )));
    assert_eq!(rec.mapping(Vpn(0), NodeId(0)), Mapping::default());
    assert_eq!(rec.mapping(Vpn(0), NodeId(1)), mapped(1, Access::Write));
    assert!(!policy.is_frozen(Vpn(0)));
}

#[test]
fn trigger_method_below_the_aged_count_invalidates_every_mapping() {
    for trigger_method in [0, 0x7fff] {
        let cfg = DunxConfig {
            trigger_method,
            ..config()
        };
        let (mut policy, mut rec) = setup(2, 8, 1, cfg);
        frozen_written_and_shared(&mut policy, &mut rec);
        scan(&mut policy, &mut rec, 1, SCAN);
        assert!(rec.actions().contains(&Action::InvalidateMappings(
            Vpn(0),
            NodeSet::from_bits(0b11)
        )));
        assert_eq!(rec.page(Vpn(0)).mapped, NodeSet::EMPTY);
    }
    // At the count itself (0x8000, not exceeded): only the remote ones.
    let cfg = DunxConfig {
        trigger_method: 0x8000,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    frozen_written_and_shared(&mut policy, &mut rec);
    scan(&mut policy, &mut rec, 1, SCAN);
    assert_eq!(rec.mapping(Vpn(0), NodeId(1)), mapped(1, Access::Write));
}

#[test]
fn a_negative_trigger_method_invalidates_every_mapping_of_a_page_never_written() {
    let cfg = DunxConfig {
        trigger_method: -1,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    frozen(&mut policy, &mut rec);
    rec.map_to(Vpn(0), NodeId(1), NodeId(1), Access::Read)
        .unwrap();
    rec.history_mut().record(Vpn(0), NodeId(0), 1);
    rec.clear();
    scan(&mut policy, &mut rec, 1, SCAN);
    assert_eq!(rec.page(Vpn(0)).mod_history >> 16, 0);
    assert_eq!(rec.page(Vpn(0)).mapped, NodeSet::EMPTY);
}

// ---- Registry names, defaults and presets ----

fn parse(v: serde_json::Value) -> Result<crate::component::PolicyConfig, String> {
    serde_json::from_value(v).map_err(|e| e.to_string())
}

#[test]
fn larowe_defaults_are_the_sosp_general_purpose_setting_and_dunx_keeps_psolus() {
    let l = LaroweConfig::default();
    assert_eq!(l.freeze_window_ns, NsOrInf::Ns(150_000_000));
    assert_eq!(l.recent_mod, 1 << 16);
    assert_eq!(l.scan_delay_ns, NsOrInf::Ns(10_000_000_000));
    assert_eq!(l.sample_passes, 0);
    assert_eq!(l.defrost_trigger, 1);
    assert_eq!(l.trigger_method, 1 << 16);
    let d = DunxConfig::default();
    assert_eq!(d.freeze_window_ns, NsOrInf::Ns(187_500_000));
    assert_eq!(d.setting(), preset("psolu").unwrap());
    let p = parse(serde_json::json!({"kind": "larowe"})).unwrap();
    assert_eq!(p.get::<LaroweConfig>(), Some(&l));
    assert_eq!(p.presets().len(), PRESETS.len());
}

#[test]
fn both_names_build_one_policy_reporting_its_own_name() {
    let machine = Machine::new(test_machine_config(2)).unwrap();
    for (kind, cfg) in [
        (
            "dunx",
            crate::component::PolicyConfig::from(DunxConfig::default()),
        ),
        ("larowe", LaroweConfig::default().into()),
    ] {
        assert_eq!(cfg.kind(), kind);
        assert_eq!(cfg.build(&machine).unwrap().name(), kind);
    }
}

#[test]
fn the_named_presets_load_with_table_3s_values() {
    const MS: u64 = 1_000_000;
    // SOSP 1991 Table 3 (freeze-window, recent-mod, scan-delay, sample-passes,
    // defrost-trigger, trigger-method) and sec. 4.5's default setting.
    let table3: [(&str, u64, i32, u64, u32, u32, i32); 7] = [
        ("gauss", 125 * MS, 65_536, 1_500 * MS, 0, 4, 65_536),
        ("hh3d", 312_500_000, 65_536, 10_000 * MS, 0, 4, 65_536),
        ("psolu", 187_500_000, 65_536, 10_000 * MS, 0, 1, 65_536),
        ("hough", 31_250_000, 65_536, 10_000 * MS, 0, 1, 65_536),
        ("msort", 50 * MS, 0, 10_000 * MS, 0, 0, 0),
        ("wave", 250 * MS, 65_536, 10_000 * MS, 10, 4, 65_536),
        (
            "general-purpose",
            150 * MS,
            65_536,
            10_000 * MS,
            0,
            1,
            65_536,
        ),
    ];
    assert_eq!(PRESETS.len(), table3.len());
    for (name, fw, rm, sd, sp, dt, tm) in table3 {
        for kind in ["larowe", "dunx"] {
            let p = parse(serde_json::json!({"kind": kind, "preset": name})).unwrap();
            let s = match kind {
                "larowe" => p.get::<LaroweConfig>().unwrap().setting(),
                _ => p.get::<DunxConfig>().unwrap().setting(),
            };
            let want = Setting {
                freeze_window: NsOrInf::Ns(fw),
                recent_mod: rm,
                scan_delay: NsOrInf::Ns(sd),
                sample_passes: sp,
                defrost_trigger: dt,
                trigger_method: tm,
            };
            assert_eq!(s, want, "{kind} preset {name}");
        }
    }
}

#[test]
fn fields_beside_a_preset_override_it_and_the_record_reads_back_the_same() {
    let p = parse(serde_json::json!({
        "kind": "larowe", "preset": "wave", "freeze_window_ns": 100_000_000_u64,
        "scan_delay_ns": "inf"
    }))
    .unwrap();
    let c = p.get::<LaroweConfig>().unwrap();
    assert_eq!(c.preset.as_deref(), Some("wave"));
    assert_eq!(c.freeze_window_ns, NsOrInf::Ns(100_000_000));
    assert_eq!(c.scan_delay_ns, NsOrInf::Inf);
    assert_eq!(c.sample_passes, 10, "the rest is wave's");
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["scan_delay_ns"], "inf");
    assert_eq!(parse(json).unwrap(), p);
}

#[test]
fn integers_and_every_spelling_of_infinity_are_read_where_the_paper_allows_infinity() {
    for v in [
        serde_json::json!("inf"),
        serde_json::json!("infinity"),
        serde_json::json!("Inf"),
    ] {
        for field in ["scan_delay_ns", "freeze_window_ns"] {
            let p = parse(serde_json::json!({"kind": "larowe", field: v.clone()})).unwrap();
            let s = p.get::<LaroweConfig>().unwrap().setting();
            let got = if field == "scan_delay_ns" {
                s.scan_delay
            } else {
                s.freeze_window
            };
            assert_eq!(got, NsOrInf::Inf, "{field} = {v}");
        }
    }
    let p =
        parse(serde_json::json!({"kind": "larowe", "scan_delay_ns": 2_000_000_000_u64})).unwrap();
    assert_eq!(
        p.get::<LaroweConfig>().unwrap().scan_delay_ns,
        NsOrInf::Ns(2_000_000_000)
    );
}

#[test]
fn unreadable_values_and_unknown_presets_are_refused() {
    for (v, needle) in [
        (
            serde_json::json!({"kind": "larowe", "preset": "nope"}),
            "unknown preset `nope`",
        ),
        (
            serde_json::json!({"kind": "larowe", "scan_delay_ns": -5}),
            "negative",
        ),
        (
            serde_json::json!({"kind": "larowe", "scan_delay_ns": "never"}),
            "`never`",
        ),
        (
            serde_json::json!({"kind": "larowe", "freeze_window_ns": 1.5}),
            "1.5",
        ),
        (
            serde_json::json!({"kind": "larowe", "recent_mod": "inf"}),
            "expected i32",
        ),
        (
            serde_json::json!({"kind": "larowe", "freeze_window": 5}),
            "unknown field",
        ),
    ] {
        let e = parse(v.clone()).expect_err("refused");
        assert!(e.contains(needle), "{v}: {e}");
    }
}

#[test]
fn every_parameter_out_of_range_is_refused_naming_it() {
    let machine = Machine::new(test_machine_config(2)).unwrap();
    let base = LaroweConfig::default;
    let cases: [(&str, LaroweConfig); 9] = [
        (
            "policy.freeze_window_ns",
            LaroweConfig {
                freeze_window_ns: NsOrInf::Ns(crate::TIME_LIMIT + 1),
                ..base()
            },
        ),
        (
            "policy.recent_mod",
            LaroweConfig {
                recent_mod: -65_537,
                ..base()
            },
        ),
        (
            "policy.recent_mod",
            LaroweConfig {
                recent_mod: 65_537,
                ..base()
            },
        ),
        (
            "policy.scan_delay_ns",
            LaroweConfig {
                scan_delay_ns: NsOrInf::Ns(999),
                ..base()
            },
        ),
        (
            "policy.scan_delay_ns",
            LaroweConfig {
                scan_delay_ns: NsOrInf::Ns(crate::TIME_LIMIT + 1),
                ..base()
            },
        ),
        (
            "policy.sample_passes",
            LaroweConfig {
                sample_passes: 1_000_001,
                ..base()
            },
        ),
        (
            "policy.defrost_trigger",
            LaroweConfig {
                defrost_trigger: 1_000_001,
                ..base()
            },
        ),
        (
            "policy.trigger_method",
            LaroweConfig {
                trigger_method: -65_537,
                ..base()
            },
        ),
        (
            "policy.trigger_method",
            LaroweConfig {
                trigger_method: 65_537,
                ..base()
            },
        ),
    ];
    for (field, cfg) in cases {
        let e = crate::component::PolicyConfig::from(cfg)
            .build(&machine)
            .err()
            .expect("refused");
        assert_eq!(e.field, field, "{e}");
    }
    // The extremes the paper allows are accepted.
    let edge = LaroweConfig {
        freeze_window_ns: NsOrInf::Inf,
        recent_mod: -65_536,
        scan_delay_ns: NsOrInf::Inf,
        trigger_method: 65_536,
        ..base()
    };
    assert!(crate::component::PolicyConfig::from(edge)
        .build(&machine)
        .is_ok());
}

// ---- Reference counts, modification bit and hint as the papers describe them ----

#[test]
fn a_frozen_page_nobody_referenced_since_the_last_check_is_not_defrosted() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    frozen(&mut policy, &mut rec);
    scan(&mut policy, &mut rec, 1, SCAN);
    assert!(policy.is_frozen(Vpn(0)));
    assert_eq!(policy.successes(Vpn(0)), 0);
}

#[test]
fn a_frozen_page_used_locally_more_often_than_by_all_remote_nodes_together_stays_frozen() {
    let (mut policy, mut rec) = setup(3, 8, 1, config());
    frozen(&mut policy, &mut rec); // home node 1, node 0 remote
    rec.map_to(Vpn(0), NodeId(2), NodeId(1), Access::Read)
        .unwrap();
    rec.history_mut().record(Vpn(0), NodeId(0), 3);
    rec.history_mut().record(Vpn(0), NodeId(2), 3);
    rec.history_mut().record(Vpn(0), NodeId(1), 7);
    scan(&mut policy, &mut rec, 1, SCAN);
    assert!(policy.is_frozen(Vpn(0)), "remote 6 < local 7");
    assert_eq!(policy.successes(Vpn(0)), 0);
}

#[test]
fn a_frozen_page_referenced_by_remote_nodes_only_is_defrosted() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    frozen(&mut policy, &mut rec);
    rec.history_mut().record(Vpn(0), NodeId(0), 1);
    scan(&mut policy, &mut rec, 1, SCAN);
    assert!(!policy.is_frozen(Vpn(0)));
}

#[test]
fn the_counts_restart_at_every_check() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    frozen(&mut policy, &mut rec);
    rec.history_mut().record(Vpn(0), NodeId(1), 5);
    scan(&mut policy, &mut rec, 1, SCAN);
    assert_eq!(policy.reference_counts(Vpn(0)), (0, 0));
    rec.history_mut().record(Vpn(0), NodeId(0), 1);
    scan(&mut policy, &mut rec, 1, 2 * SCAN);
    assert!(
        !policy.is_frozen(Vpn(0)),
        "remote 1 >= local 0 at the second check"
    );
}

#[test]
fn a_page_written_since_the_last_scan_is_recently_modified_with_no_scanners() {
    let cfg = DunxConfig {
        recent_mod: 0,
        scan_delay_ns: NsOrInf::Inf,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    on_node0(&mut rec);
    rec.mark_written_since_age(Vpn(0));
    rec.clear();
    fault(&mut policy, &mut rec, 1, 0, false);
    assert!(rec.actions().contains(&Action::Migrate(Vpn(0), NodeId(1))));
    assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(1)));
}

#[test]
fn a_write_not_yet_aged_in_counts_as_one_in_the_newest_scan_interval() {
    for (recent_mod, migrates) in [(0x7fff, true), (0x8000, false)] {
        let cfg = DunxConfig {
            recent_mod,
            ..config()
        };
        let (mut policy, mut rec) = setup(2, 8, 1, cfg);
        on_node0(&mut rec);
        rec.mark_written_since_age(Vpn(0));
        rec.clear();
        fault(&mut policy, &mut rec, 1, 0, false);
        assert_eq!(
            rec.actions().contains(&Action::Migrate(Vpn(0), NodeId(1))),
            migrates,
            "recent_mod {recent_mod}: the count is 0x8000"
        );
    }
}

#[test]
fn recent_mod_two_to_the_sixteen_replicates_a_page_written_since_the_last_scan() {
    let cfg = DunxConfig {
        recent_mod: TWO_TO_16,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    on_node0_always_written(&mut rec);
    rec.mark_written_since_age(Vpn(0));
    fault(&mut policy, &mut rec, 1, 0, false);
    assert!(rec
        .actions()
        .contains(&Action::Replicate(Vpn(0), NodeId(1))));
}

#[test]
fn the_phase_hints_defrost_reads_the_modification_bit_not_yet_aged() {
    let cfg = DunxConfig {
        trigger_method: 0,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, cfg);
    frozen(&mut policy, &mut rec); // never aged: the aged count is 0
    rec.mark_written_since_age(Vpn(0));
    rec.clear();
    policy.on_phase_hint(&mut rec, ThreadId(0));
    assert_eq!(rec.page(Vpn(0)).mapped, NodeSet::EMPTY, "every mapping");
}

#[test]
fn the_phase_hint_forgets_recent_invalidations_so_a_page_may_move_again_at_once() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    migrated_at(&mut policy, &mut rec, 1_000); // to node 1
    rec.now = Ns(1_500);
    policy.on_phase_hint(&mut rec, ThreadId(1));
    assert_eq!(policy.last_invalidation(Vpn(0)), None);
    rec.now = Ns(2_000); // within the window of the migration
    fault(&mut policy, &mut rec, 0, 0, true);
    assert!(!policy.is_frozen(Vpn(0)));
    assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(0)));
}

#[test]
fn a_replicated_page_is_never_one_the_freeze_check_would_freeze() {
    // A coherency fault leaves one copy and freezes the page at the next remote fault
    // within the window; once the window has passed, the page may be replicated, and
    // from then on it is neither frozen nor recently invalidated (SOSP 1991 sec. 2.1).
    let (mut policy, mut rec) = setup(3, 8, 1, config());
    on_node0(&mut rec);
    fault(&mut policy, &mut rec, 1, 0, false); // replicated
    rec.now = Ns(100);
    fault(&mut policy, &mut rec, 0, 0, true); // coherency fault
    rec.now = Ns(200);
    fault(&mut policy, &mut rec, 1, 0, false); // within the window: frozen
    assert!(policy.is_frozen(Vpn(0)));
    assert_eq!(rec.page(Vpn(0)).copies.len(), 1);
    policy.on_phase_hint(&mut rec, ThreadId(0)); // defrosted
    rec.now = Ns(300);
    fault(&mut policy, &mut rec, 1, 0, false); // replicated again
    fault(&mut policy, &mut rec, 2, 0, false);
    assert_eq!(rec.page(Vpn(0)).copies.len(), 3);
    assert!(!policy.should_freeze(rec.now, Vpn(0)));
}
