//! What the policies' unit tests share: the recording double on the unit-test machine,
//! a fault handed to a policy as the engine hands it, and a mapping to expect.

use crate::component::{Fault, Policy};
use crate::history::HistoryMode;
use crate::machine::{Machine, MachineConfig};
use crate::memory::{Access, Mapping};
use crate::mm::{test_machine_config, Mm, Recording};
use crate::types::{NodeId, ThreadId, Vpn};

/// The double over `npages` unplaced pages of the unit-test machine with `nodes` nodes
/// of `frames` frames each, keeping `history`.
pub(crate) fn recording(nodes: u16, frames: u32, npages: usize, history: HistoryMode) -> Recording {
    let machine = Machine::new(MachineConfig {
        loaded_latency: None,
        frames_per_node: frames,
        node_frames: Vec::new(),
        memory_only_nodes: 0,
        ..test_machine_config(nodes)
    })
    .unwrap();
    Recording::new(machine, npages, history)
}

/// The two tiers of a tiering policy's test machine: a fast node 0 of `fast` frames and a
/// slow memory-only node 1 of `slow` frames, of `page_bytes` each (the unit-test
/// machine's when `None`).
pub(crate) struct Tiers {
    pub fast: u32,
    pub slow: u32,
    pub page_bytes: Option<u64>,
}

/// The double on a machine of two `tiers`, over `npages` pages keeping `history`: the
/// first `on_fast` on the fast node, as many of the rest as the slow node holds on it, all
/// mapped from node 0; and the policy `build` makes on that machine, with the monitors it
/// asks for, initialised, the recording then cleared.
pub(crate) fn two_tiers<P: Policy>(
    tiers: Tiers,
    npages: u32,
    on_fast: u32,
    history: HistoryMode,
    build: impl FnOnce(&Machine) -> P,
) -> (P, Recording) {
    let base = test_machine_config(2);
    let machine = Machine::new(MachineConfig {
        node_frames: vec![tiers.fast, tiers.slow],
        memory_only_nodes: 1,
        page_size_bytes: tiers.page_bytes.unwrap_or(base.page_size_bytes),
        ..base
    })
    .unwrap();
    let mut rec = Recording::new(machine, npages as usize, history);
    let mut p = build(rec.machine());
    rec.enable_monitors(p.monitors());
    for v in 0..npages.min(on_fast + tiers.slow) {
        let n = NodeId(if v < on_fast { 0 } else { 1 });
        rec.place(Vpn(v), n).unwrap();
        rec.map_nearest(Vpn(v), NodeId(0), Access::Read);
    }
    p.init(&mut rec);
    rec.clear();
    (p, rec)
}

/// Hands `policy` a fault by node `node`'s thread (thread `node`), run on that node as
/// the engine runs it.
pub(crate) fn fault(
    policy: &mut dyn Policy,
    rec: &mut Recording,
    node: u16,
    vpn: u32,
    write: bool,
) {
    rec.actor = NodeId(node);
    let f = Fault {
        thread: ThreadId(node.into()),
        node: NodeId(node),
        vpn: Vpn(vpn),
        write,
    };
    policy.on_fault(rec, f);
}

/// A mapping to the copy on `target` with `access` rights.
pub(crate) fn mapped(target: u16, access: Access) -> Mapping {
    Mapping {
        target: NodeId(target),
        access,
    }
}
