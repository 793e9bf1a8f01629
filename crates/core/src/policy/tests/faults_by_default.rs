//! A policy that declares its faults handled by [`default_fault`] alone
//! ([`Policy::faults_by_default`]) has the engine skip its `on_fault`, so its `on_fault`
//! must do what `default_fault` does: the same actions, the same page state, the same
//! cost, in every scene a fault can meet.

use super::test_scene::recording;
use crate::component::{default_fault, Fault, Policy, PolicyConfig};
use crate::machine::{Machine, MachineConfig};
use crate::mm::{test_machine_config, Mm, Recording};
use crate::types::{NodeId, ThreadId, Vpn};

const NODES: u16 = 4;
const PAGE: Vpn = Vpn(3);

/// A fault by node `node`'s thread on the scene's page.
fn fault(node: u16, write: bool) -> Fault {
    Fault {
        thread: ThreadId(node.into()),
        node: NodeId(node),
        vpn: PAGE,
        write,
    }
}

/// A scene: its name, how it is set, and the fault.
type Scene = (&'static str, fn(&mut Recording), Fault);

/// What a fault meets: the page unplaced, placed on node 1 (read-mapped there), or with
/// copies on nodes 1 and 2; and the fault, by the page's node or another, read or write.
fn scenes() -> Vec<Scene> {
    fn unplaced(_: &mut Recording) {}
    fn placed(r: &mut Recording) {
        r.place(PAGE, NodeId(1)).unwrap();
        r.map_nearest(PAGE, NodeId(1), crate::memory::Access::Read);
    }
    fn replicated(r: &mut Recording) {
        placed(r);
        r.replicate(PAGE, NodeId(2)).unwrap();
    }
    vec![
        ("unplaced, read", unplaced, fault(0, false)),
        ("unplaced, write", unplaced, fault(0, true)),
        ("placed, read elsewhere", placed, fault(3, false)),
        ("placed, write at home", placed, fault(1, true)),
        ("placed, write elsewhere", placed, fault(3, true)),
        ("replicated, read elsewhere", replicated, fault(3, false)),
        ("replicated, write at a copy", replicated, fault(2, true)),
        ("replicated, write elsewhere", replicated, fault(0, true)),
    ]
}

/// How the fault left the double: its actions, the page, every node's mapping, the cost.
fn outcome(r: &mut Recording) -> String {
    let maps: Vec<_> = (0..NODES).map(|n| r.mapping(PAGE, NodeId(n))).collect();
    format!(
        "{:?} {:?} {:?} {:?}",
        r.actions(),
        r.page(PAGE),
        maps,
        r.cost()
    )
}

/// The scenes where `policy`'s `on_fault` does not do what `default_fault` does.
fn differing(build: &dyn Fn(&Machine) -> Box<dyn Policy>) -> Vec<&'static str> {
    let machine = Machine::new(MachineConfig {
        loaded_latency: None,
        frames_per_node: 16,
        ..test_machine_config(NODES)
    })
    .unwrap();
    let mut differ = Vec::new();
    for (name, scene, f) in scenes() {
        let mut policy = build(&machine);
        let mut by_policy = recording(NODES, 16, 8, policy.history());
        let mut by_default = recording(NODES, 16, 8, policy.history());
        policy.init(&mut by_policy);
        for r in [&mut by_policy, &mut by_default] {
            scene(r);
            r.clear();
            r.actor = f.node;
        }
        policy.on_fault(&mut by_policy, f);
        default_fault(&mut by_default, f);
        if outcome(&mut by_policy) != outcome(&mut by_default) {
            differ.push(name);
        }
    }
    differ
}

#[test]
fn a_policy_declaring_default_faults_handles_every_fault_as_the_default_does() {
    let mut declaring = 0;
    for config in PolicyConfig::all() {
        let machine = Machine::new(test_machine_config(NODES)).unwrap();
        let p = match config.build(&machine) {
            Ok(p) => p,
            // A tiering policy refuses a machine of one tier (and handles faults itself).
            Err(e) if e.message.contains("needs a slow tier") => continue,
            Err(e) => panic!("{}: {e}", config.kind()),
        };
        if !p.faults_by_default() {
            continue;
        }
        declaring += 1;
        let build = |m: &Machine| config.build(m).unwrap();
        assert_eq!(differing(&build), Vec::<&str>::new(), "{}", p.name());
    }
    assert!(declaring >= 1, "no policy declares default faults");
}

#[test]
fn the_comparison_tells_a_policy_with_its_own_fault_handling_from_the_default() {
    // PLATINUM handles its faults itself (it freezes and replicates): a comparison that
    // found no difference would pass any policy.
    let config = PolicyConfig::default_of("platinum").unwrap();
    let build = |m: &Machine| config.build(m).unwrap();
    assert!(!build(&Machine::new(test_machine_config(NODES)).unwrap()).faults_by_default());
    assert!(!differing(&build).is_empty());
}
