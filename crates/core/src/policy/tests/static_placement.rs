//! Unit tests of the `static_placement` policy against the recording double, one behaviour each.

use super::*;
use crate::component::Fault;
use crate::history::HistoryMode;
use crate::memory::Access;
use crate::mm::{Action, Mm, Recording};
use crate::types::ThreadId;

fn machine() -> Machine {
    Machine::new(crate::mm::test_machine_config(4)).unwrap()
}

fn policy(placement: StaticPlacement, fallback: StaticPlacement) -> StaticPolicy {
    let config = StaticConfig {
        placement,
        node: 2,
        fallback,
    };
    StaticPolicy::new(config, &machine()).unwrap()
}

#[test]
fn first_touch_places_a_faulting_page_on_the_faulting_node_and_maps_it() {
    let mut p = policy(StaticPlacement::FirstTouch, StaticPlacement::FirstTouch);
    let mut rec = Recording::new(machine(), 4, HistoryMode::None);
    let (vpn, node) = (Vpn(3), NodeId(1));
    p.on_fault(
        &mut rec,
        Fault {
            thread: ThreadId(1),
            node,
            vpn,
            write: false,
        },
    );
    assert_eq!(
        rec.actions(),
        [
            Action::PlaceNear(vpn, node),
            Action::MapNearest(vpn, node, Access::Read)
        ]
    );
    assert_eq!(rec.page(vpn).home, node);
    assert!(rec.mapping(vpn, node).access >= Access::Read);
}

#[test]
fn first_touch_leaves_initial_placement_to_the_first_fault() {
    let mut p = policy(StaticPlacement::FirstTouch, StaticPlacement::FirstTouch);
    assert_eq!(
        p.initial_placement(&machine(), Vpn(5), Some(NodeId(3))),
        None
    );
}

#[test]
fn round_robin_deals_pages_to_nodes_in_turn() {
    let mut p = policy(StaticPlacement::RoundRobin, StaticPlacement::FirstTouch);
    let m = machine();
    let nodes: Vec<_> = (0..6)
        .map(|v| p.initial_placement(&m, Vpn(v), None))
        .collect();
    let expect: Vec<_> = [0, 1, 2, 3, 0, 1].map(|n| Some(NodeId(n))).to_vec();
    assert_eq!(nodes, expect);
}

#[test]
fn fixed_places_every_page_on_the_configured_node() {
    let mut p = policy(StaticPlacement::Fixed, StaticPlacement::FirstTouch);
    assert_eq!(
        p.initial_placement(&machine(), Vpn(7), None),
        Some(NodeId(2))
    );
}

#[test]
fn program_placement_follows_the_hint_and_falls_back_without_one() {
    let mut p = policy(StaticPlacement::Program, StaticPlacement::RoundRobin);
    let m = machine();
    assert_eq!(
        p.initial_placement(&m, Vpn(1), Some(NodeId(3))),
        Some(NodeId(3))
    );
    assert_eq!(p.initial_placement(&m, Vpn(1), None), Some(NodeId(1)));
}

#[test]
fn a_fixed_node_the_machine_lacks_is_refused() {
    let config = StaticConfig {
        placement: StaticPlacement::Fixed,
        node: 9,
        fallback: StaticPlacement::FirstTouch,
    };
    let e = StaticPolicy::new(config, &machine()).unwrap_err();
    assert_eq!(e.field, "policy.node");
}
