//! The memory-management mechanism and the seam between it and placement policies.
//!
//! A policy sees the machine's memory and acts on it only through [`Mm`]: reads (time,
//! machine, page location, copies and mappings, reference history, thread placement)
//! and actions (place, migrate, replicate, invalidate, freeze and thaw, lock page-table
//! entries, age modification bits, charge time). The simulator implements it
//! ([`SimMm`], which charges every action its modelled cost), and so does a recording
//! test double ([`Recording`]) that policies' unit tests drive. The trait names no
//! simulator type beyond plain state, so a trace replayer or a live engine (Linux
//! `move_pages`) can stand behind it as well.

mod counters;
mod monitor;
mod recording;
mod sim;
mod system;

pub use counters::{CounterSpec, PageCounters};
pub(crate) use monitor::Monitors;
pub use monitor::{MonitorSpec, NodeLoad, Sample, SamplingSpec};
pub use recording::{Action, Recording};
pub use sim::SimMm;
pub(crate) use sim::{nearest_with_frame, DaemonAhead};
pub use system::MemSystem;

use crate::history::RefHistory;
use crate::machine::Machine;
use crate::memory::{Access, Mapping, PageState};
use crate::stats::Stats;
use crate::types::{NodeId, NodeSet, Ns, Vpn};
use rand_pcg::Pcg64;
use thiserror::Error;

/// Why an action was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum ActionError {
    /// The target node has no free frame.
    #[error("node {0} has no free frame")]
    NoFrame(NodeId),
    /// The page has no physical copy yet.
    #[error("page is not placed")]
    NotPlaced,
    /// The action needs a page with a single copy.
    #[error("page has several copies")]
    Replicated,
    /// The node holds no copy of the page.
    #[error("node {0} holds no copy")]
    NoCopy(NodeId),
    /// The page is already placed.
    #[error("page is already placed")]
    AlreadyPlaced,
}

/// A page-table-entry copy held by a daemon (see [`Mm::acquire_pte`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a held page-table entry must be released"]
pub struct PteHold {
    vpn: Vpn,
    node: NodeId,
    acquired: Ns,
    user: Option<u32>,
}

/// The mechanism a policy acts through. Every action charges its cost to [`Mm::cost`],
/// which the caller adds to whoever triggered the hook (the faulting thread, the
/// daemon, the thread ending an iteration).
pub trait Mm {
    /// Current simulated time (the start of the hook; actions add to [`Mm::cost`]).
    fn now(&self) -> Ns;

    /// Time charged so far in this hook.
    fn cost(&self) -> Ns;

    /// The node of the processor running the hook.
    fn actor(&self) -> NodeId;

    /// The machine.
    fn machine(&self) -> &Machine;

    /// Number of pages.
    fn npages(&self) -> usize;

    /// State of page `vpn`.
    fn page(&self, vpn: Vpn) -> PageState;

    /// How many copies `vpn` has (0 until placed).
    fn copy_count(&self, vpn: Vpn) -> u32 {
        self.page(vpn).copies.len()
    }

    /// The node of `vpn`'s primary copy (meaningful once placed).
    fn home(&self, vpn: Vpn) -> NodeId {
        self.page(vpn).home
    }

    /// Whether node `n` holds a copy of `vpn`.
    fn has_copy(&self, vpn: Vpn, n: NodeId) -> bool {
        self.page(vpn).copies.contains(n)
    }

    /// Node `n`'s mapping of `vpn`.
    fn mapping(&self, vpn: Vpn, n: NodeId) -> Mapping;

    /// Free frames on node `n`.
    fn free_frames(&self, n: NodeId) -> u32;

    /// The reference history.
    fn history(&self) -> &RefHistory;

    /// Reads and clears node `n`'s history of `vpn` (see [`RefHistory::examine`]); the
    /// examine cost is the policy's to charge, since it depends on the mechanism.
    fn examine_history(&mut self, vpn: Vpn, n: NodeId) -> u32;

    /// The node each thread currently runs on (`None`: not running).
    fn thread_nodes(&self) -> &[Option<NodeId>];

    /// The run's random number generator (seeded from the run's seed).
    fn rng(&mut self) -> &mut Pcg64;

    /// Statistics gathered so far (read-only).
    fn stats(&self) -> &Stats;

    /// Charges policy overhead that is not one of the actions below (e.g. a daemon's
    /// bookkeeping).
    fn charge(&mut self, ns: Ns);

    /// Counts one daemon pass (a policy-defined unit, for reports).
    fn count_daemon_pass(&mut self);

    /// Asked by a daemon whose step just ended with its next step due at once (it would
    /// return `DaemonNext::After(0)`): whether it may take that step within this call.
    /// The engine says yes when the step would be the next event anyway (it comes before
    /// every other event, and the step just ended took time), so taking it here is taking
    /// it as the engine would; `true` counts it as a step of its own. A mechanism without
    /// an engine says no, and a daemon that never asks takes one step per call.
    fn next_daemon_step_now(&mut self) -> bool {
        false
    }

    /// Places unplaced page `vpn` on node `n` (no cost: used at first touch, where the
    /// fault cost covers it).
    fn place(&mut self, vpn: Vpn, n: NodeId) -> Result<(), ActionError>;

    /// Places unplaced page `vpn` on node `n`, or on the nearest node with a free frame
    /// when `n` is full (as an operating system does at first touch).
    fn place_near(&mut self, vpn: Vpn, n: NodeId) -> NodeId;

    /// The copy of `vpn` nearest to node `n`: its own, else the cheapest to read (ties
    /// to the lower node). Derived from [`Mm::page`] and the machine, so every
    /// implementation answers alike.
    #[inline]
    fn nearest_copy(&self, vpn: Vpn, n: NodeId) -> Option<NodeId> {
        if self.has_copy(vpn, n) {
            return Some(n);
        }
        match self.copy_count(vpn) {
            0 => return None,
            1 => return Some(self.home(vpn)),
            _ => {}
        }
        self.page(vpn)
            .copies
            .iter()
            .min_by_key(|&c| (self.machine().read_ns(n, c), c.0))
    }

    /// Maps `vpn` on node `n` to its nearest copy with `access` rights. A write mapping
    /// needs a single copy (the caller resolves replication first).
    fn map_nearest(&mut self, vpn: Vpn, n: NodeId, access: Access) -> Option<NodeId>;

    /// Maps `vpn` on node `n` to the copy on `target` with `access` rights (no cost: the
    /// fault that leads here is charged by the engine).
    fn map_to(
        &mut self,
        vpn: Vpn,
        n: NodeId,
        target: NodeId,
        access: Access,
    ) -> Result<(), ActionError>;

    /// Removes the mappings of `vpn` on `nodes`, interrupting each (one shootdown each,
    /// except for the acting node, which changes its own mapping).
    fn invalidate_mappings(&mut self, vpn: Vpn, nodes: NodeSet);

    /// Restricts every writable mapping of `vpn` to read-only.
    fn restrict_to_read(&mut self, vpn: Vpn);

    /// Migrates single-copy page `vpn` to node `to`: block transfer, the copy moves, every
    /// mapping is redirected to the new copy (one shootdown per node interrupted), and the
    /// machine's migration cost is charged. Refused when `to` has no free frame.
    fn migrate(&mut self, vpn: Vpn, to: NodeId) -> Result<(), ActionError>;

    /// Replicates page `vpn` onto node `to` by a block copy from the nearest copy. Writable
    /// mappings are first restricted to read-only (a shootdown per node interrupted).
    /// Does not map the new copy. Refused when `to` has no free frame.
    fn replicate(&mut self, vpn: Vpn, to: NodeId) -> Result<(), ActionError>;

    /// The coherency protocol's write to a replicated page: every copy but the one on `keep`
    /// is freed, every mapping to a freed copy is invalidated (a shootdown per node
    /// interrupted), and the fixed plus per-copy coherency cost is charged. Records the
    /// invalidation time that freezing policies read.
    fn coherency_fault(&mut self, vpn: Vpn, keep: NodeId);

    /// The coherent-memory read miss (PLATINUM §3.2): node `n` gets a copy of its own by a
    /// block copy from an existing copy, after every writable mapping has been restricted
    /// to read-only (a modified page), and maps it read-only. Refused, with nothing
    /// changed, when `n` has no free frame; the caller then maps a remote copy.
    fn coherent_read_miss(&mut self, vpn: Vpn, n: NodeId) -> Result<(), ActionError>;

    /// The coherent-memory write miss (PLATINUM §3.2): node `n` ends with the only copy,
    /// mapped writable. If `n` holds a copy, the others are invalidated (a coherency
    /// fault). Otherwise the page comes to `n`: a replicated page by a block copy and a
    /// coherency fault, a single copy by a migration whose other mappings are invalidated
    /// rather than redirected. `Ok(true)` when other nodes' copies or mappings were
    /// invalidated (the protocol's invalidation, which PLATINUM's freeze window counts
    /// from). Refused when `n` has no free frame; the caller then maps the (single)
    /// remote copy.
    fn coherent_write_miss(&mut self, vpn: Vpn, n: NodeId) -> Result<bool, ActionError>;

    /// Reports that the policy froze `vpn` (keeps it in place, mapped remotely). The
    /// frozen state is the policy's; the mechanism only counts freezes and frozen time.
    /// A policy reports each freeze once, and a thaw only of a frozen page.
    fn freeze(&mut self, vpn: Vpn);

    /// Reports that the policy thawed (defrosted) `vpn`.
    fn thaw(&mut self, vpn: Vpn);

    /// Locks node `n`'s page-table-entry copy of `vpn` for `hold` from the current cost
    /// point: user references from `n` to the page wait until it is released. Charges the
    /// lock cost.
    fn lock_pte(&mut self, vpn: Vpn, n: NodeId, hold: Ns);

    /// Acquires node `n`'s page-table-entry copy of `vpn` at the current cost point, as a
    /// daemon does in Holliday's locking protocol. When a user run through that copy is
    /// under way, the daemon first waits for the access in progress to end (the user holds
    /// the entry for one access at a time) and that user's next access will wait for the
    /// release. Charges the lock cost; release with [`Mm::release_pte`].
    fn acquire_pte(&mut self, vpn: Vpn, n: NodeId) -> PteHold;

    /// Releases an entry taken by [`Mm::acquire_pte`] at the current cost point; a user
    /// whose run was interrupted is delayed until then.
    fn release_pte(&mut self, hold: PteHold);

    /// A daemon's examine step over `vpn`'s page-table-entry copies on `nodes`, one
    /// after the other: acquire the copy, read and clear its history into `counts[n]`,
    /// charge `examine`, release. The same as those calls in sequence; as a provided
    /// method it is compiled for each mechanism, so a daemon pays one dynamic call per
    /// page rather than four per entry. A count of zero may be left unwritten (a daemon
    /// keeps `counts` zero between steps). Returns the nodes below 64 whose count is not
    /// zero, as bits (bit `n` for node `n`), with every bit set when a node of 64 or more
    /// was examined: a daemon looks at those counts only.
    fn examine_entries(
        &mut self,
        vpn: Vpn,
        nodes: &[NodeId],
        examine: Ns,
        counts: &mut [u32],
    ) -> u64 {
        let mut read = 0;
        for &n in nodes {
            let hold = self.acquire_pte(vpn, n);
            let c = self.examine_history(vpn, n);
            counts[n.idx()] = c;
            read |= counted(n, c);
            self.charge(examine);
            self.release_pte(hold);
        }
        read
    }

    /// Migrates `vpn` to `to` under Holliday's locking protocol: every copy of its entry
    /// (on `nodes`) is held while the page moves, then each copy is updated (charged
    /// `update`) and released. A full destination refuses the page, which stays.
    fn migrate_holding_entries(&mut self, vpn: Vpn, to: NodeId, nodes: &[NodeId], update: Ns) {
        let held: Vec<PteHold> = nodes.iter().map(|&n| self.acquire_pte(vpn, n)).collect();
        let _ = self.migrate(vpn, to);
        for h in held {
            self.charge(update);
            self.release_pte(h);
        }
    }

    /// Shifts `vpn`'s aged modification history (see [`Memory::age_modifications`]).
    fn age_modifications(&mut self, vpn: Vpn);

    /// The hardware per-page access counters, when the policy asked for them
    /// ([`crate::component::Policy::page_counters`]).
    fn page_counters(&self) -> Option<&PageCounters>;

    /// Subtracts `amount` from every counter of `vpn` (software decay; free of charge, as
    /// a clock-interrupt chore). Nothing without counters.
    fn decay_page_counters(&mut self, vpn: Vpn, amount: u32);

    /// Zeroes every counter of `vpn`. Nothing without counters.
    fn reset_page_counters(&mut self, vpn: Vpn);

    /// Moves the sampled access records taken since the last call to `out`, oldest
    /// first (none unless the policy asked for sampling,
    /// [`crate::component::Policy::monitors`]). Free: the policy charges its handling.
    fn take_samples(&mut self, out: &mut Vec<Sample>);

    /// Makes those of `count` pages from `first` whose primary copy is on a node of
    /// `homes` inaccessible for a hinting fault, as Linux's NUMA balancing changes a
    /// range's entries to `PROT_NONE` (in its tiering mode, only the slow tier's): every
    /// mapping of each such page is dropped (its copies stay where they are) and the
    /// time noted; the next access faults, and the policy hears the time since
    /// protection from [`Mm::hinting_fault`]. Charged one entry update
    /// (`pte_examine_ns`) per mapping dropped and one shootdown of each node that lost
    /// one (the flush is batched over the range). Returns the pages protected. Nothing
    /// unless the policy asked for hinting faults.
    fn protect(&mut self, first: Vpn, count: u64, homes: NodeSet) -> u64;

    /// Whether `vpn` was protected by [`Mm::protect`] and not accessed since: the time
    /// since its protection, cleared (a hinting fault is heard once).
    fn hinting_fault(&mut self, vpn: Vpn) -> Option<Ns>;

    /// Tests and clears `vpn`'s Accessed bits (the Referenced bits of
    /// [`crate::history::HistoryMode::RefBit`], one per node's entry): whether any node
    /// accessed the page since the last test. Charged `pte_examine_ns` per mapped entry
    /// examined. False when the policy keeps no Referenced bits.
    fn test_and_clear_accessed(&mut self, vpn: Vpn) -> bool;

    /// Node `n`'s memory load: bytes served and, on a machine with a loaded-latency
    /// model, its utilisation and the latency it adds (all zero without bandwidth
    /// accounting).
    fn node_load(&self, n: NodeId) -> NodeLoad;
}

/// [`Mm::examine_entries`]'s bits for node `n` having counted `c`.
#[inline(always)]
pub(crate) fn counted(n: NodeId, c: u32) -> u64 {
    match n.0 {
        0..64 => u64::from(c != 0) << n.0,
        _ => u64::MAX,
    }
}

/// A small machine for tests (policies against [`Recording`], engine tests): `nodes`
/// nodes of one processor, 64 frames each, 64-byte pages of 16 four-byte words, remote
/// five times local. Not a real machine.
pub fn test_machine_config(nodes: u16) -> crate::machine::MachineConfig {
    use crate::machine::{Costs, MachineConfig, Topology};
    MachineConfig {
        loaded_latency: None,
        preset: "test".into(),
        description: "policy unit tests".into(),
        nodes,
        procs_per_node: 1,
        frames_per_node: 64,
        node_frames: Vec::new(),
        memory_only_nodes: 0,
        page_size_bytes: 64,
        word_size_bytes: 4,
        topology: Topology::Uniform,
        costs: Costs {
            local_read_ns: 10,
            local_write_ns: 12,
            remote_read_ns: 50,
            remote_write_ns: 60,
            cached_read_ns: None,
            page_fault_ns: 100,
            migrate_fixed_ns: 1000,
            replicate_fixed_ns: 800,
            block_transfer_per_word_ns: 2,
            coherency_fault_fixed_ns: 500,
            coherency_per_copy_ns: 50,
            shootdown_per_node_ns: 30,
            pte_lock_ns: 5,
            pte_examine_ns: 3,
            module_service_ns: 10,
            remote_module_service_ns: None,
            switch_service_ns: 0,
            operation_delay_ns: 0,
        },
        variation: Default::default(),
        contention: false,
        cache: Default::default(),
        compute_time_pct: 100,
        clock_mhz: None,
    }
}
