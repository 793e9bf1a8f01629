//! What the policies' unit tests share: the recording double on the unit-test machine,
//! a fault handed to a policy as the engine hands it, and a mapping to expect.

use crate::component::{Fault, Policy};
use crate::history::HistoryMode;
use crate::machine::{Machine, MachineConfig};
use crate::memory::{Access, Mapping};
use crate::mm::{test_machine_config, Recording};
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
