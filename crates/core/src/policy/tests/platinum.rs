//! Unit tests of the `platinum` policy against the recording double, one behaviour each.

use super::*;
use crate::history::HistoryMode;
use crate::mm::{Action, Recording};
use crate::policy::test_scene::{fault, mapped, recording};
use crate::types::NodeSet;

const T1: u64 = 10_000;
const T2: u64 = 1_000_000;

fn config() -> PlatinumConfig {
    PlatinumConfig {
        t1_ns: T1,
        t2_ns: T2,
        ..PlatinumConfig::default()
    }
}

/// `config` over `npages` unplaced pages of the unit-test machine with `nodes` nodes
/// of `frames` frames (costs: replication 800 + 16 words at 2, shootdown 30).
fn setup(
    nodes: u16,
    frames: u32,
    npages: usize,
    config: PlatinumConfig,
) -> (PlatinumPolicy, Recording) {
    let mut rec = recording(nodes, frames, npages, HistoryMode::None);
    let mut policy = PlatinumPolicy::new(config, rec.machine()).unwrap();
    policy.init(&mut rec);
    (policy, rec)
}

/// Page 0 first touched by node 0, replicated by a read on node 1, then written by
/// node 0 at `at` (the coherency protocol invalidates node 1's copy): one copy on
/// node 0, mapped writable there. All through the policy, which records the
/// invalidation.
fn invalidated_at(policy: &mut PlatinumPolicy, rec: &mut Recording, at: u64) {
    rec.now = Ns(at);
    fault(policy, rec, 0, 0, false);
    fault(policy, rec, 1, 0, false);
    fault(policy, rec, 0, 0, true);
    assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(0)));
    rec.clear();
}

/// Page 0 invalidated at 1 us and frozen by node 1's read fault at 2 us (within t1),
/// its copy on node 0.
fn frozen(policy: &mut PlatinumPolicy, rec: &mut Recording) {
    invalidated_at(policy, rec, 1_000);
    rec.now = Ns(2_000);
    fault(policy, rec, 1, 0, false);
    assert_eq!(policy.frozen_since(Vpn(0)), Some(Ns(2_000)));
    rec.clear();
}

#[test]
fn a_first_touch_places_the_page_on_the_faulting_node_and_maps_it_there() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    fault(&mut policy, &mut rec, 1, 0, false);
    assert_eq!(
        rec.actions(),
        [
            Action::PlaceNear(Vpn(0), NodeId(1)),
            Action::MapTo(Vpn(0), NodeId(1), NodeId(1), Access::Read),
        ]
    );
    assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(1)));
    assert_eq!(rec.mapping(Vpn(0), NodeId(1)), mapped(1, Access::Read));
}

#[test]
fn a_read_fault_on_a_remote_page_replicates_it_and_maps_the_local_copy() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    let (v, n0) = (Vpn(0), NodeId(0));
    rec.place(v, n0).unwrap();
    rec.map_to(v, n0, n0, Access::Write).unwrap();
    rec.clear();
    fault(&mut policy, &mut rec, 1, 0, false);
    assert_eq!(rec.actions(), [Action::CoherentReadMiss(v, NodeId(1))]);
    let copies: Vec<NodeId> = rec.page(v).copies.iter().collect();
    assert_eq!(copies, [NodeId(0), NodeId(1)]);
    assert_eq!(rec.mapping(v, NodeId(1)), mapped(1, Access::Read));
    assert_eq!(
        rec.mapping(v, n0),
        mapped(0, Access::Read),
        "the writer is restricted to read-only first"
    );
    // Replication (800 + 16 words at 2) and the writer's shootdown (30).
    assert_eq!(rec.cost(), Ns(800 + 32 + 30));
}

#[test]
fn a_read_fault_on_a_node_without_a_free_frame_maps_a_remote_copy() {
    let (mut policy, mut rec) = setup(2, 1, 2, config());
    rec.place(Vpn(0), NodeId(0)).unwrap();
    rec.place(Vpn(1), NodeId(1)).unwrap(); // node 1's only frame
    rec.clear();
    fault(&mut policy, &mut rec, 1, 0, false);
    assert_eq!(
        rec.actions(),
        [
            Action::CoherentReadMiss(Vpn(0), NodeId(1)),
            Action::MapNearest(Vpn(0), NodeId(1), Access::Read),
        ]
    );
    assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(0)));
    assert_eq!(rec.mapping(Vpn(0), NodeId(1)), mapped(0, Access::Read));
    assert!(policy.frozen_since(Vpn(0)).is_none(), "refused, not frozen");
}

#[test]
fn a_write_fault_on_a_replicated_page_invalidates_the_other_copies() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    let (v, n0, n1) = (Vpn(0), NodeId(0), NodeId(1));
    rec.place(v, n0).unwrap();
    rec.map_to(v, n0, n0, Access::Read).unwrap();
    rec.replicate(v, n1).unwrap();
    rec.map_to(v, n1, n1, Access::Read).unwrap();
    rec.now = Ns(5_000);
    rec.clear();
    fault(&mut policy, &mut rec, 1, 0, true);
    assert_eq!(rec.actions(), [Action::CoherentWriteMiss(v, n1)]);
    assert_eq!(rec.page(v).copies, NodeSet::single(n1));
    assert_eq!(rec.mapping(v, n0).access, Access::None);
    assert_eq!(rec.mapping(v, n1), mapped(1, Access::Write));
    assert_eq!(policy.last_invalidation(v), Some(Ns(5_000)));
}

#[test]
fn a_write_fault_on_a_remote_single_copy_migrates_it() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    let (v, n0, n1) = (Vpn(0), NodeId(0), NodeId(1));
    rec.place(v, n0).unwrap();
    rec.map_to(v, n0, n0, Access::Write).unwrap();
    rec.clear();
    fault(&mut policy, &mut rec, 1, 0, true);
    assert_eq!(rec.actions(), [Action::CoherentWriteMiss(v, n1)]);
    assert_eq!(rec.page(v).copies, NodeSet::single(n1));
    assert_eq!(rec.page(v).home, n1);
    assert_eq!(rec.mapping(v, n0).access, Access::None);
    assert_eq!(rec.mapping(v, n1), mapped(1, Access::Write));
}

#[test]
fn a_fault_less_than_t1_after_an_invalidation_freezes_the_page_and_maps_it_remotely() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    invalidated_at(&mut policy, &mut rec, 1_000);
    rec.now = Ns(1_000 + T1 - 1);
    fault(&mut policy, &mut rec, 1, 0, false);
    assert_eq!(
        rec.actions(),
        [
            Action::Freeze(Vpn(0)),
            Action::MapNearest(Vpn(0), NodeId(1), Access::Write),
        ]
    );
    let page = rec.page(Vpn(0));
    assert_eq!(policy.frozen_since(Vpn(0)), Some(Ns(1_000 + T1 - 1)));
    assert_eq!(page.copies, NodeSet::single(NodeId(0)));
    assert_eq!(rec.mapping(Vpn(0), NodeId(1)).target, NodeId(0));
}

#[test]
fn a_fault_t1_after_an_invalidation_replicates_again() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    invalidated_at(&mut policy, &mut rec, 1_000);
    rec.now = Ns(1_000 + T1);
    fault(&mut policy, &mut rec, 1, 0, false);
    assert_eq!(rec.actions(), [Action::CoherentReadMiss(Vpn(0), NodeId(1))]);
    assert!(policy.frozen_since(Vpn(0)).is_none());
}

#[test]
fn a_write_fault_on_a_frozen_page_maps_its_copy_writable_where_it_is() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    frozen(&mut policy, &mut rec);
    rec.now = Ns(3_000);
    fault(&mut policy, &mut rec, 1, 0, true);
    assert_eq!(
        rec.actions(),
        [Action::MapNearest(Vpn(0), NodeId(1), Access::Write)]
    );
    assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(0)));
    assert_eq!(rec.mapping(Vpn(0), NodeId(1)), mapped(0, Access::Write));
}

#[test]
fn a_frozen_page_stays_frozen_after_t1_until_the_defrost_daemon_thaws_it() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    frozen(&mut policy, &mut rec);
    rec.now = Ns(2_000 + 10 * T1);
    fault(&mut policy, &mut rec, 1, 0, false);
    assert_eq!(
        rec.actions(),
        [Action::MapNearest(Vpn(0), NodeId(1), Access::Write)]
    );
    assert!(policy.frozen_since(Vpn(0)).is_some());
    assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(0)));
}

#[test]
fn thaw_on_access_thaws_a_page_frozen_t1_ago_and_replicates_it() {
    let thaw = PlatinumConfig {
        thaw_on_access: true,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, thaw);
    frozen(&mut policy, &mut rec);
    rec.now = Ns(2_000 + T1);
    fault(&mut policy, &mut rec, 1, 0, false);
    assert_eq!(
        rec.actions(),
        [
            Action::Thaw(Vpn(0)),
            Action::CoherentReadMiss(Vpn(0), NodeId(1)),
        ]
    );
    assert!(policy.frozen_since(Vpn(0)).is_none());
    assert_eq!(rec.page(Vpn(0)).copies.len(), 2);
}

#[test]
fn thaw_on_access_keeps_a_page_frozen_less_than_t1_ago_frozen() {
    // t1 has passed since the invalidation (at 1 us) but not since the freeze (2 us).
    let thaw = PlatinumConfig {
        thaw_on_access: true,
        ..config()
    };
    let (mut policy, mut rec) = setup(2, 8, 1, thaw);
    frozen(&mut policy, &mut rec);
    rec.now = Ns(2_000 + T1 - 1);
    fault(&mut policy, &mut rec, 1, 0, false);
    assert_eq!(
        rec.actions(),
        [Action::MapNearest(Vpn(0), NodeId(1), Access::Write)]
    );
    assert!(policy.frozen_since(Vpn(0)).is_some());
}

#[test]
fn the_defrost_daemon_invalidates_every_mapping_of_a_frozen_page_and_thaws_it() {
    let (mut policy, mut rec) = setup(3, 8, 2, config());
    frozen(&mut policy, &mut rec);
    let (v, other) = (Vpn(0), Vpn(1));
    rec.map_to(v, NodeId(1), NodeId(0), Access::Read).unwrap();
    rec.map_to(v, NodeId(2), NodeId(0), Access::Read).unwrap();
    rec.place(other, NodeId(1)).unwrap();
    rec.map_to(other, NodeId(1), NodeId(1), Access::Read)
        .unwrap();
    rec.now = Ns(T2);
    rec.clear();
    let next = policy.on_daemon(&mut rec, 0);
    let all: NodeSet = (0..3).map(NodeId).fold(NodeSet::EMPTY, |mut s, n| {
        s.insert(n);
        s
    });
    assert_eq!(
        rec.actions(),
        [
            Action::DaemonPass,
            Action::InvalidateMappings(v, all),
            Action::Thaw(v),
        ]
    );
    assert_eq!(next, DaemonNext::After(Ns(T2)));
    assert!(policy.frozen_since(v).is_none());
    assert!(rec.page(v).mapped.is_empty());
    assert_eq!(
        policy.last_invalidation(v),
        Some(Ns(1_000)),
        "the daemon's invalidation does not count towards t1"
    );
    assert_eq!(rec.mapping(other, NodeId(1)), mapped(1, Access::Read));
    // Nodes 1 and 2 are interrupted; node 0 runs the daemon.
    assert_eq!(rec.cost(), Ns(2 * 30));
}

#[test]
fn the_defrost_daemon_steals_time_on_its_node_every_t2() {
    let on_1 = PlatinumConfig {
        daemon_node: 1,
        ..config()
    };
    let (policy, rec) = setup(2, 8, 1, on_1);
    let specs = policy.daemons(rec.machine());
    assert_eq!(specs.len(), 1);
    assert_eq!(specs[0].placement, DaemonPlacement::StealOn(NodeId(1)));
    assert_eq!(specs[0].first_wake, Ns(T2));
}

#[test]
fn a_defrost_period_of_zero_means_no_daemon() {
    let never = PlatinumConfig {
        t2_ns: 0,
        ..config()
    };
    let (policy, rec) = setup(2, 8, 1, never);
    assert_eq!(policy.daemons(rec.machine()), []);
}

/// PLATINUM §3.2: for a frozen page "the handler creates a mapping for the remote
/// physical page granting the full access rights permitted by the virtual memory
/// system", so a node that read a frozen page can write it without faulting again.
#[test]
fn a_read_fault_on_a_frozen_page_maps_it_with_full_access_rights() {
    let (mut policy, mut rec) = setup(2, 8, 1, config());
    frozen(&mut policy, &mut rec);
    rec.now = Ns(3_000);
    fault(&mut policy, &mut rec, 1, 0, false);
    assert_eq!(rec.mapping(Vpn(0), NodeId(1)), mapped(0, Access::Write));
}
