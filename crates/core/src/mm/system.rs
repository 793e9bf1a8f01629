//! The mechanism's state and the reference cost path.
//!
//! [`MemSystem`] owns everything placement acts on: the machine, memory (frames, copies,
//! mappings, PTE locks), reference history, memory-module queues, the fault handlers'
//! serialisation, where threads run, and the run's random numbers. The engine owns one
//! and asks it for two things: the cost of a reference run (priced here, [`MemSystem::price`]
//! and [`MemSystem::occupy`]; the path that faults into the policy is the engine's,
//! `engine/reference.rs`) and a [`SimMm`] for a policy hook. The recording double owns one
//! too, so both share one model of memory.

use super::SimMm;
use crate::history::RefHistory;
use crate::machine::Machine;
use crate::memory::Memory;
use crate::stats::{RefClass, Stats, ThreadStats};
use crate::types::{NodeId, Ns, Vpn};
use rand::SeedableRng;
use rand_pcg::Pcg64;

/// The mechanism's state (see the module documentation).
pub struct MemSystem {
    pub(crate) machine: Machine,
    pub(crate) mem: Memory,
    pub(crate) hist: RefHistory,
    /// Until when each node's memory module is busy (contention).
    pub(crate) modules: Vec<Ns>,
    /// Until when each node's switch port is busy (contention): a remote access holds
    /// the ports of both ends of its path.
    pub(crate) ports: Vec<Ns>,
    /// Until when each page's fault handler is busy: faults on one page serialise. Empty
    /// in a run of one thread, whose faults never meet another's.
    pub(crate) fault_busy: Vec<Ns>,
    /// The node of each thread while it runs.
    pub(crate) thread_nodes: Vec<Option<NodeId>>,
    pub(crate) rng: Pcg64,
    /// Hardware per-page access counters, when the policy asks for them.
    pub(crate) counters: Option<super::PageCounters>,
    /// The processors' caches, when the machine has them.
    pub(crate) caches: Option<crate::cache::Caches>,
    /// A buffer for the entries a daemon holds at once (kept to stay allocation-free).
    pub(crate) holds: Vec<super::PteHold>,
    /// The policy handles faults with the default handling alone
    /// ([`crate::component::Policy::faults_by_default`]): called on the concrete
    /// [`SimMm`], not through the policy.
    pub(crate) faults_by_default: bool,
    /// The access monitors (bandwidth, loaded latency, sampling, hinting faults), when
    /// the machine or the policy asks for any.
    pub(crate) monitors: Option<Box<super::Monitors>>,
}

impl MemSystem {
    /// Empty memory for `npages` pages on `machine`, history kept as `history` says.
    pub(crate) fn new(
        machine: Machine,
        npages: usize,
        history: crate::history::HistoryMode,
        thread_nodes: Vec<Option<NodeId>>,
        seed: u64,
    ) -> MemSystem {
        let nodes = machine.nodes();
        MemSystem {
            mem: Memory::with_frames(
                npages,
                &(0..nodes as u16)
                    .map(|n| machine.frames(NodeId(n)))
                    .collect::<Vec<_>>(),
            ),
            hist: RefHistory::new(history, npages, nodes),
            modules: vec![Ns::ZERO; nodes],
            ports: vec![Ns::ZERO; nodes],
            fault_busy: if thread_nodes.len() > 1 {
                crate::bigvec::filled(npages, Ns::ZERO)
            } else {
                Vec::new()
            },
            thread_nodes,
            rng: Pcg64::seed_from_u64(seed),
            counters: None,
            caches: None,
            holds: Vec::new(),
            faults_by_default: false,
            monitors: None,
            machine,
        }
    }

    /// Heap bytes of the fault handlers' busy times for `npages` pages in a run of
    /// `threads` threads (kept beside the allocation in [`MemSystem::new`]).
    pub fn fault_table_bytes(npages: u64, threads: u32) -> u64 {
        if threads > 1 {
            npages.saturating_mul(std::mem::size_of::<Ns>() as u64)
        } else {
            0
        }
    }

    /// Asks the processor to fetch the state a run to `vpn` reads (the page's record and
    /// fault-handler time) ahead of the run.
    #[inline(always)]
    pub(crate) fn prefetch(&self, vpn: Vpn) {
        self.mem.prefetch(vpn);
        if let Some(busy) = self.fault_busy.get(vpn.idx()) {
            crate::memory::prefetch(busy);
        }
    }

    /// A policy hook's view, at `now`, of a hook running on node `actor`.
    pub(crate) fn sim<'a>(&'a mut self, stats: &'a mut Stats, now: Ns, actor: NodeId) -> SimMm<'a> {
        SimMm {
            machine: &self.machine,
            mem: &mut self.mem,
            hist: &mut self.hist,
            stats,
            modules: &mut self.modules,
            ports: &mut self.ports,
            thread_nodes: &self.thread_nodes,
            rng: &mut self.rng,
            counters: self.counters.as_mut(),
            caches: self.caches.as_mut(),
            holds: &mut self.holds,
            monitors: self.monitors.as_deref_mut(),
            now,
            actor,
            cost: Ns::ZERO,
            ahead: Default::default(),
        }
    }

    /// The latency of one word of a run from `node` to `vpn` served by `target`'s copy,
    /// and where it is served.
    #[inline(always)]
    pub(crate) fn price(
        &self,
        node: NodeId,
        target: NodeId,
        vpn: Vpn,
        write: bool,
    ) -> (u64, RefClass) {
        let costs = self.machine.costs();
        if target == node {
            match costs.cached_read_ns {
                Some(c) if !write && self.mem.copy_count(vpn) > 1 => (c, RefClass::Cached),
                _ if write => (costs.local_write_ns, RefClass::Local),
                _ => (costs.local_read_ns, RefClass::Local),
            }
        } else if write {
            (self.machine.write_ns(node, target), RefClass::Remote)
        } else {
            (self.machine.read_ns(node, target), RefClass::Remote)
        }
    }

    /// With contention on: a run of `count` words from a processor on `node` served by
    /// `target`'s module, wanted at `t`, waits until the module (and, for a remote run,
    /// the switch ports of both ends) are free, holds them for the run's occupancy, and
    /// starts; returns when it starts. Every resource of the run is held from one start
    /// time (a reservation, not a word-by-word interleaving), so a long run delays a
    /// competitor by its whole occupancy while the total throughput of each resource
    /// is right.
    #[inline]
    pub(crate) fn occupy(
        &mut self,
        ts: &mut ThreadStats,
        node: NodeId,
        target: NodeId,
        remote: bool,
        count: u32,
        t: Ns,
    ) -> Ns {
        let costs = self.machine.costs();
        let n = count as u64;
        let mut start = t.max(self.modules[target.idx()]);
        let module_ns = if remote {
            let switch = costs.switch_service_ns;
            if switch > 0 {
                start = start
                    .max(self.ports[node.idx()])
                    .max(self.ports[target.idx()]);
                let held = start + Ns(switch.saturating_mul(n));
                self.ports[node.idx()] = held;
                self.ports[target.idx()] = held;
            }
            self.machine.remote_module_service_ns()
        } else {
            costs.module_service_ns
        };
        self.modules[target.idx()] = start + Ns(module_ns.saturating_mul(n));
        ts.contention_wait_ns += (start - t).0;
        start
    }
}
