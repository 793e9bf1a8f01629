//! The placement-policy interface: small event hooks that do nothing by default, and the
//! action API ([`Ctx`]) through which a policy acts and the engine charges every cost.
//!
//! Contract: a policy reads page state and history only through its [`Ctx`] and changes
//! them only through its actions; it keeps any per-page state of its own in dense arrays
//! indexed by [`Vpn`]. The machine and memory never grow policy-specific fields.

pub mod foresight;
pub mod holliday_daemon;
pub mod platinum;
pub mod static_placement;

use crate::error::ConfigError;
use crate::history::{HistoryMode, RefHistory};
use crate::machine::Machine;
use crate::memory::{Access, Mapping, Memory, PageState};
use crate::stats::Stats;
use crate::types::{NodeId, NodeSet, Ns, ProcId, ThreadId, Vpn};
use rand_pcg::Pcg64;
use thiserror::Error;

pub use foresight::{Foresight, ForesightConfig};
pub use holliday_daemon::{HollidayConfig, HollidayDaemon};
pub use platinum::{PlatinumConfig, PlatinumPolicy};
pub use static_placement::{StaticConfig, StaticPlacement, StaticPolicy};

/// A fault handed to the policy: a reference found no mapping, or a read-only mapping for a
/// write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The faulting thread.
    pub thread: ThreadId,
    /// Its node.
    pub node: NodeId,
    /// The page.
    pub vpn: Vpn,
    /// Whether the reference was a write.
    pub write: bool,
}

/// Where a daemon runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DaemonPlacement {
    /// On a processor of its own, not used by any thread (Holliday's daemons). The engine
    /// picks the lowest-numbered free processor.
    OwnProcessor,
    /// Stealing time from the first processor of a node (DUnX's per-node scanners): the
    /// processor's thread is delayed while the daemon works.
    StealOn(NodeId),
}

/// A periodic activity a policy asks the engine to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DaemonSpec {
    /// Name for reports.
    pub name: String,
    /// Where it runs.
    pub placement: DaemonPlacement,
    /// When it first wakes.
    pub first_wake: Ns,
}

/// What a daemon does after a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DaemonNext {
    /// Wake again this long after the step's work ends.
    After(Ns),
    /// Never wake again.
    Stop,
}

/// A scheduler event the policy is told of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedEvent {
    /// A thread stopped running.
    Preempted(ThreadId),
    /// A thread started running again on a processor.
    Resumed(ThreadId, ProcId),
    /// A running thread moved to another processor.
    Migrated {
        /// The thread.
        thread: ThreadId,
        /// Where it was.
        from: ProcId,
        /// Where it is now.
        to: ProcId,
    },
}

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

/// A page-table-entry copy held by a daemon (see [`Ctx::acquire_pte`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a held page-table entry must be released"]
pub struct PteHold {
    vpn: Vpn,
    node: NodeId,
    acquired: Ns,
    user: Option<u32>,
}

/// The placement policy interface. Every hook has a default that does nothing (or, for
/// faults, the plain static behaviour), so a policy overrides only what it needs.
pub trait Policy {
    /// The registry name.
    fn name(&self) -> &'static str;

    /// The reference-history mechanism the engine must maintain for this policy.
    fn history(&self) -> HistoryMode {
        HistoryMode::None
    }

    /// Whether the policy takes page-table-entry copies with [`Ctx::acquire_pte`]; only
    /// then does the engine keep the user run through each copy that an acquisition
    /// must wait for.
    fn acquires_ptes(&self) -> bool {
        false
    }

    /// Called once before time 0, after initial placement.
    fn init(&mut self, _ctx: &mut Ctx) {}

    /// Initial placement of page `vpn` at time 0 (no cost is charged: the papers exclude
    /// initialisation). `hint` is the node the program asks for (program-directed
    /// placement), if any. `None` leaves the page unplaced until its first touch.
    fn initial_placement(
        &mut self,
        _machine: &Machine,
        _vpn: Vpn,
        _hint: Option<NodeId>,
    ) -> Option<NodeId> {
        None
    }

    /// A reference found no suitable mapping. The policy must leave the faulting node
    /// with a mapping that allows the access; whatever it leaves undone the engine
    /// completes with [`default_fault`].
    fn on_fault(&mut self, ctx: &mut Ctx, fault: Fault) {
        default_fault(ctx, fault);
    }

    /// The policy's daemons.
    fn daemons(&self, _machine: &Machine) -> Vec<DaemonSpec> {
        Vec::new()
    }

    /// One step of daemon `id`; the work it charges through `ctx` is the daemon's busy time.
    fn on_daemon(&mut self, _ctx: &mut Ctx, _id: usize) -> DaemonNext {
        DaemonNext::Stop
    }

    /// A scheduler event.
    fn on_sched_event(&mut self, _ctx: &mut Ctx, _event: SchedEvent) {}

    /// All threads of `program` finished iteration `iteration`; the cost of what the
    /// policy does is charged to the last thread to arrive.
    fn on_iteration_end(&mut self, _ctx: &mut Ctx, _program: u32, _iteration: u32) {}

    /// A thread announced a phase change (the DUnX hint).
    fn on_phase_hint(&mut self, _ctx: &mut Ctx, _thread: ThreadId) {}

    /// A thread announced that it is about to reference page `vpn` heavily (the
    /// information Holliday's Foresight baseline acts on). What the policy does is charged
    /// to the thread.
    fn on_advise(&mut self, _ctx: &mut Ctx, _thread: ThreadId, _vpn: Vpn) {}
}

/// The plain fault handling every policy can fall back on: place an unplaced page on the
/// faulting node (first touch), resolve a write to a replicated page by the coherency
/// protocol, and map the nearest copy with the rights the access needs.
pub fn default_fault(ctx: &mut Ctx, f: Fault) {
    let page = ctx.page(f.vpn);
    if page.copies.is_empty() {
        ctx.place_near(f.vpn, f.node);
    }
    if f.write && ctx.page(f.vpn).copies.len() > 1 {
        let keep = if ctx.page(f.vpn).copies.contains(f.node) {
            f.node
        } else {
            ctx.page(f.vpn).home
        };
        ctx.coherency_fault(f.vpn, keep);
    }
    let access = if f.write { Access::Write } else { Access::Read };
    ctx.map_nearest(f.vpn, f.node, access);
}

/// The view of the simulation a policy hook gets, and its actions. Every action charges
/// its cost to [`Ctx::cost`], which the engine adds to whoever triggered the hook (the
/// faulting thread, the daemon, the thread ending an iteration).
pub struct Ctx<'a> {
    pub(crate) machine: &'a Machine,
    pub(crate) mem: &'a mut Memory,
    pub(crate) hist: &'a mut RefHistory,
    pub(crate) stats: &'a mut Stats,
    pub(crate) modules: &'a mut [Ns],
    pub(crate) thread_nodes: &'a [Option<NodeId>],
    pub(crate) rng: &'a mut Pcg64,
    pub(crate) now: Ns,
    pub(crate) actor: NodeId,
    pub(crate) cost: Ns,
}

impl<'a> Ctx<'a> {
    /// Current simulated time (the start of the hook; actions add to [`Ctx::cost`]).
    #[inline]
    pub fn now(&self) -> Ns {
        self.now
    }

    /// Time charged so far in this hook.
    #[inline]
    pub fn cost(&self) -> Ns {
        self.cost
    }

    /// The node of the processor running the hook.
    #[inline]
    pub fn actor(&self) -> NodeId {
        self.actor
    }

    /// The machine.
    #[inline]
    pub fn machine(&self) -> &Machine {
        self.machine
    }

    /// Number of pages.
    #[inline]
    pub fn npages(&self) -> usize {
        self.mem.npages()
    }

    /// State of page `vpn`.
    #[inline]
    pub fn page(&self, vpn: Vpn) -> &PageState {
        self.mem.page(vpn)
    }

    /// Node `n`'s mapping of `vpn`.
    #[inline]
    pub fn mapping(&self, vpn: Vpn, n: NodeId) -> Mapping {
        self.mem.mapping(vpn, n)
    }

    /// Free frames on node `n`.
    pub fn free_frames(&self, n: NodeId) -> u32 {
        self.mem.free_frames(n)
    }

    /// The reference history.
    #[inline]
    pub fn history(&self) -> &RefHistory {
        self.hist
    }

    /// Reads and clears node `n`'s history of `vpn` (see [`RefHistory::examine`]); the
    /// examine cost is the policy's to charge, since it depends on the mechanism.
    pub fn examine_history(&mut self, vpn: Vpn, n: NodeId) -> u32 {
        self.hist.examine(vpn, n)
    }

    /// The node each thread currently runs on (`None`: not running).
    pub fn thread_nodes(&self) -> &[Option<NodeId>] {
        self.thread_nodes
    }

    /// The run's random number generator (seeded from the run's seed).
    pub fn rng(&mut self) -> &mut Pcg64 {
        self.rng
    }

    /// Statistics gathered so far (read-only).
    pub fn stats(&self) -> &Stats {
        self.stats
    }

    /// Charges policy overhead that is not one of the actions below (e.g. a daemon's
    /// bookkeeping).
    #[inline]
    pub fn charge(&mut self, ns: Ns) {
        self.cost += ns;
    }

    /// Counts one daemon pass (a policy-defined unit, for reports).
    pub fn count_daemon_pass(&mut self) {
        self.stats.daemon_passes += 1;
    }

    /// Places unplaced page `vpn` on node `n` (no cost: used at first touch, where the
    /// fault cost covers it).
    pub fn place(&mut self, vpn: Vpn, n: NodeId) -> Result<(), ActionError> {
        if !self.mem.page(vpn).copies.is_empty() {
            return Err(ActionError::AlreadyPlaced);
        }
        if !self.mem.take_frame(n) {
            self.stats.events.refused += 1;
            return Err(ActionError::NoFrame(n));
        }
        let p = self.mem.page_mut(vpn);
        p.copies = NodeSet::single(n);
        p.home = n;
        Ok(())
    }

    /// Places unplaced page `vpn` on node `n`, or on the nearest node with a free frame
    /// when `n` is full (as an operating system does at first touch).
    pub fn place_near(&mut self, vpn: Vpn, n: NodeId) -> NodeId {
        let target = nearest_with_frame(self.machine, self.mem, n).unwrap_or(n);
        // The engine checks at start that all pages fit, so a frame exists somewhere.
        let _ = self.place(vpn, target);
        target
    }

    /// The copy of `vpn` nearest to node `n` (by read cost; ties to the lower node).
    pub fn nearest_copy(&self, vpn: Vpn, n: NodeId) -> Option<NodeId> {
        let copies = self.mem.page(vpn).copies;
        if copies.contains(n) {
            return Some(n);
        }
        copies
            .iter()
            .min_by_key(|&c| (self.machine.read_ns(n, c), c.0))
    }

    /// Maps `vpn` on node `n` to its nearest copy with `access` rights. A write mapping
    /// needs a single copy (the caller resolves replication first).
    pub fn map_nearest(&mut self, vpn: Vpn, n: NodeId, access: Access) -> Option<NodeId> {
        let target = self.nearest_copy(vpn, n)?;
        self.map_to(vpn, n, target, access).ok()?;
        Some(target)
    }

    /// Maps `vpn` on node `n` to the copy on `target` with `access` rights (no cost: the
    /// fault that leads here is charged by the engine).
    pub fn map_to(
        &mut self,
        vpn: Vpn,
        n: NodeId,
        target: NodeId,
        access: Access,
    ) -> Result<(), ActionError> {
        let page = self.mem.page(vpn);
        if !page.copies.contains(target) {
            return Err(ActionError::NoCopy(target));
        }
        if access == Access::Write && page.copies.len() > 1 {
            return Err(ActionError::Replicated);
        }
        self.mem.set_mapping(vpn, n, Mapping { target, access });
        Ok(())
    }

    /// Removes the mappings of `vpn` on `nodes`, interrupting each (one shootdown each,
    /// except for the acting node, which changes its own mapping).
    pub fn invalidate_mappings(&mut self, vpn: Vpn, nodes: NodeSet) {
        let hit = NodeSet(nodes.0 & self.mem.page(vpn).mapped.0);
        for n in hit.iter() {
            self.mem.set_mapping(vpn, n, Mapping::default());
        }
        self.charge_shootdowns(hit);
    }

    /// Restricts every writable mapping of `vpn` to read-only.
    pub fn restrict_to_read(&mut self, vpn: Vpn) {
        let writers = self.mem.page(vpn).writers;
        for n in writers.iter() {
            let m = self.mem.mapping(vpn, n);
            self.mem.set_mapping(
                vpn,
                n,
                Mapping {
                    target: m.target,
                    access: Access::Read,
                },
            );
        }
        self.charge_shootdowns(writers);
    }

    fn charge_shootdowns(&mut self, nodes: NodeSet) {
        let mut others = nodes;
        others.remove(self.actor);
        let k = others.len() as u64;
        self.stats.events.invalidations += k;
        self.cost += Ns(self.machine.costs().shootdown_per_node_ns.saturating_mul(k));
    }

    /// Occupies modules `a` and `b` for a block transfer starting no earlier than the
    /// current cost point, when contention is modelled; returns the transfer's duration
    /// including any wait.
    fn block_transfer(&mut self, a: NodeId, b: NodeId) -> Ns {
        let xfer = self.machine.page_transfer();
        if !self.machine.config.contention {
            return xfer;
        }
        let ready = self.now + self.cost;
        let start = ready.max(self.modules[a.idx()]).max(self.modules[b.idx()]);
        let end = start + xfer;
        self.modules[a.idx()] = end;
        self.modules[b.idx()] = end;
        end - ready
    }

    /// Migrates single-copy page `vpn` to node `to`: block transfer, the copy moves, every
    /// mapping is redirected to the new copy (one shootdown per node interrupted), and the
    /// machine's migration cost is charged. Refused when `to` has no free frame.
    pub fn migrate(&mut self, vpn: Vpn, to: NodeId) -> Result<(), ActionError> {
        let page = self.mem.page(vpn);
        if page.copies.is_empty() {
            return Err(ActionError::NotPlaced);
        }
        if page.copies.len() > 1 {
            return Err(ActionError::Replicated);
        }
        let from = page.home;
        if from == to {
            return Ok(());
        }
        if !self.mem.take_frame(to) {
            self.stats.events.refused += 1;
            return Err(ActionError::NoFrame(to));
        }
        self.mem.release_frame(from);
        self.cost += Ns(self.machine.costs().migrate_fixed_ns);
        let t = self.block_transfer(from, to);
        self.cost += t;
        let mapped = self.mem.page(vpn).mapped;
        for n in mapped.iter() {
            let m = self.mem.mapping(vpn, n);
            self.mem.set_mapping(
                vpn,
                n,
                Mapping {
                    target: to,
                    access: m.access,
                },
            );
        }
        self.charge_shootdowns(mapped);
        let now = self.now;
        let p = self.mem.page_mut(vpn);
        p.copies = NodeSet::single(to);
        p.home = to;
        p.last_migration = Some(now);
        self.stats.events.migrations += 1;
        if let Some(r) = self.stats.page(vpn) {
            r.migrations += 1;
        }
        Ok(())
    }

    /// Replicates page `vpn` onto node `to` by a block copy from the nearest copy. Writable
    /// mappings are first restricted to read-only (a shootdown per node interrupted).
    /// Does not map the new copy. Refused when `to` has no free frame.
    pub fn replicate(&mut self, vpn: Vpn, to: NodeId) -> Result<(), ActionError> {
        let page = self.mem.page(vpn);
        if page.copies.is_empty() {
            return Err(ActionError::NotPlaced);
        }
        if page.copies.contains(to) {
            return Ok(());
        }
        let src = self.nearest_copy(vpn, to).ok_or(ActionError::NotPlaced)?;
        if !self.mem.take_frame(to) {
            self.stats.events.refused += 1;
            return Err(ActionError::NoFrame(to));
        }
        self.restrict_to_read(vpn);
        self.cost += Ns(self.machine.costs().replicate_fixed_ns);
        let t = self.block_transfer(src, to);
        self.cost += t;
        let p = self.mem.page_mut(vpn);
        p.copies.insert(to);
        p.dirty = false;
        self.stats.events.replications += 1;
        if let Some(r) = self.stats.page(vpn) {
            r.replications += 1;
        }
        Ok(())
    }

    /// The coherency protocol's write to a replicated page: every copy but the one on `keep`
    /// is freed, every mapping to a freed copy is invalidated (a shootdown per node
    /// interrupted), and the fixed plus per-copy coherency cost is charged. Records the
    /// invalidation time that freezing policies read.
    pub fn coherency_fault(&mut self, vpn: Vpn, keep: NodeId) {
        let page = self.mem.page(vpn);
        if !page.copies.contains(keep) {
            return;
        }
        let mut dropped = page.copies;
        dropped.remove(keep);
        let mut stale = NodeSet::EMPTY;
        for n in page.mapped.iter() {
            if dropped.contains(self.mem.mapping(vpn, n).target) {
                stale.insert(n);
            }
        }
        for n in stale.iter() {
            self.mem.set_mapping(vpn, n, Mapping::default());
        }
        for d in dropped.iter() {
            self.mem.release_frame(d);
        }
        let c = self.machine.costs();
        self.cost += Ns(c
            .coherency_fault_fixed_ns
            .saturating_add(c.coherency_per_copy_ns.saturating_mul(dropped.len() as u64)));
        self.charge_shootdowns(stale);
        let now = self.now;
        let p = self.mem.page_mut(vpn);
        p.copies = NodeSet::single(keep);
        p.home = keep;
        p.last_invalidation = Some(now);
        self.stats.events.coherency_faults += 1;
        if let Some(r) = self.stats.page(vpn) {
            r.coherency_faults += 1;
        }
    }

    /// The coherent-memory read miss (PLATINUM §3.2): node `n` gets a copy of its own by a
    /// block copy from an existing copy, after every writable mapping has been restricted
    /// to read-only (a modified page), and maps it read-only. Refused, with nothing
    /// changed, when `n` has no free frame; the caller then maps a remote copy.
    pub fn coherent_read_miss(&mut self, vpn: Vpn, n: NodeId) -> Result<(), ActionError> {
        self.replicate(vpn, n)?;
        self.map_to(vpn, n, n, Access::Read)
    }

    /// The coherent-memory write miss (PLATINUM §3.2): node `n` ends with the only copy,
    /// mapped writable. If `n` holds a copy, the others are invalidated (a coherency
    /// fault). Otherwise the page comes to `n`: a replicated page by a block copy and a
    /// coherency fault, a single copy by a migration whose other mappings are invalidated
    /// rather than redirected, the invalidation recorded as the protocol's. Refused when `n`
    /// has no free frame; the caller then maps the (single) remote copy.
    pub fn coherent_write_miss(&mut self, vpn: Vpn, n: NodeId) -> Result<(), ActionError> {
        let page = self.mem.page(vpn);
        if page.copies.is_empty() {
            return Err(ActionError::NotPlaced);
        }
        if page.copies.contains(n) {
            if page.copies.len() > 1 {
                self.coherency_fault(vpn, n);
            }
        } else if page.copies.len() > 1 {
            if self.mem.free_frames(n) == 0 {
                self.stats.events.refused += 1;
                return Err(ActionError::NoFrame(n));
            }
            self.replicate(vpn, n)?;
            self.coherency_fault(vpn, n);
        } else {
            if self.mem.free_frames(n) == 0 {
                self.stats.events.refused += 1;
                return Err(ActionError::NoFrame(n));
            }
            let mut others = self.mem.page(vpn).mapped;
            others.remove(n);
            let invalidated = !others.is_empty();
            self.invalidate_mappings(vpn, others);
            self.migrate(vpn, n)?;
            if invalidated {
                self.mem.page_mut(vpn).last_invalidation = Some(self.now);
            }
        }
        self.map_to(vpn, n, n, Access::Write)
    }

    /// Freezes `vpn`: the policy keeps it in place and maps it remotely.
    pub fn freeze(&mut self, vpn: Vpn) {
        let now = self.now;
        let p = self.mem.page_mut(vpn);
        if !p.frozen {
            p.frozen = true;
            p.frozen_at = now;
            self.stats.events.freezes += 1;
            if let Some(r) = self.stats.page(vpn) {
                r.freezes += 1;
            }
        }
    }

    /// Thaws (defrosts) `vpn`.
    pub fn thaw(&mut self, vpn: Vpn) {
        let now = self.now;
        let p = self.mem.page_mut(vpn);
        if p.frozen {
            p.frozen = false;
            let since = p.frozen_at;
            self.stats.events.defrosts += 1;
            if let Some(r) = self.stats.page(vpn) {
                r.frozen_ns += (now - since).0;
            }
        }
    }

    /// Locks node `n`'s page-table-entry copy of `vpn` for `hold` from the current cost
    /// point: user references from `n` to the page wait until it is released. Charges the
    /// lock cost.
    pub fn lock_pte(&mut self, vpn: Vpn, n: NodeId, hold: Ns) {
        self.cost += Ns(self.machine.costs().pte_lock_ns);
        let until = self.now + self.cost + hold;
        self.mem.lock_pte(vpn, n, until);
    }

    /// Acquires node `n`'s page-table-entry copy of `vpn` at the current cost point, as a
    /// daemon does in Holliday's locking protocol. When a user run through that copy is
    /// under way, the daemon first waits for the access in progress to end (the user holds
    /// the entry for one access at a time) and that user's next access will wait for the
    /// release. Charges the lock cost; release with [`Ctx::release_pte`].
    pub fn acquire_pte(&mut self, vpn: Vpn, n: NodeId) -> PteHold {
        let at = self.now + self.cost;
        let run = self.mem.user_run(vpn, n);
        let mut user = None;
        // Another holder (a second daemon's migration, a foresight move) goes first.
        let mut got = at.max(self.mem.pte_locked_until(vpn, n));
        let at_free = got;
        if run.per_access > Ns::ZERO && run.start <= at_free && at_free < run.end {
            let done = (at_free - run.start).0.div_ceil(run.per_access.0);
            got = (run.start + Ns(done.saturating_mul(run.per_access.0))).min(run.end);
            if got < run.end {
                user = Some(run.thread);
            }
        }
        self.cost += got - at;
        self.cost += Ns(self.machine.costs().pte_lock_ns);
        PteHold {
            vpn,
            node: n,
            acquired: got,
            user,
        }
    }

    /// Releases an entry taken by [`Ctx::acquire_pte`] at the current cost point; a user
    /// whose run was interrupted is delayed until then.
    pub fn release_pte(&mut self, hold: PteHold) {
        let end = self.now + self.cost;
        self.mem.lock_pte(hold.vpn, hold.node, end);
        if let Some(t) = hold.user {
            self.mem.delay_thread(t, end - hold.acquired);
        }
    }

    /// Shifts `vpn`'s aged modification history (see [`Memory::age_modifications`]).
    pub fn age_modifications(&mut self, vpn: Vpn) {
        self.mem.age_modifications(vpn);
    }
}

/// The node nearest to `n` (by read cost, ties to the lower node) that has a free frame.
pub(crate) fn nearest_with_frame(machine: &Machine, mem: &Memory, n: NodeId) -> Option<NodeId> {
    if mem.free_frames(n) > 0 {
        return Some(n);
    }
    (0..machine.nodes() as u16)
        .map(NodeId)
        .filter(|&m| mem.free_frames(m) > 0)
        .min_by_key(|&m| (machine.read_ns(n, m), m.0))
}

crate::registry::registry! {
    /// The registry of policies: a tagged configuration per policy, with its parameters.
    pub enum PolicyConfig {
        /// Static placement: first touch, round robin, a fixed node, or program-directed.
        "static" => Static(StaticConfig) = "static placement (first-touch, round-robin, fixed node, program-directed): the papers' baselines",
        /// Holliday's periodic migration daemons with reference history.
        "holliday-daemon" => HollidayDaemon(HollidayConfig) = "periodic migration daemons, greedy pull on usage/refbit/aging history, PTE locking (Holliday 1989)",
        /// Holliday's perfect-knowledge baseline: pages move just before they are used.
        "foresight" => Foresight(ForesightConfig) = "perfect foresight: each page migrates to its user just before use, as the workload announces (Holliday 1989)",
        /// PLATINUM's coherent memory: replicate on read miss, migrate on write miss, freeze
        /// pages invalidated within t1, defrost every t2.
        "platinum" => Platinum(PlatinumConfig) = "PLATINUM coherent memory: replicate on read miss, migrate on write miss, freeze if invalidated within t1, defrost every t2 (Cox & Fowler 1989)",
    }
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig::Static(StaticConfig::default())
    }
}

impl PolicyConfig {
    /// Builds the policy for `machine`.
    pub fn build(&self, machine: &Machine) -> Result<Box<dyn Policy>, ConfigError> {
        match self {
            PolicyConfig::Static(c) => Ok(Box::new(StaticPolicy::new(c.clone(), machine)?)),
            PolicyConfig::HollidayDaemon(c) => {
                Ok(Box::new(HollidayDaemon::new(c.clone(), machine)?))
            }
            PolicyConfig::Foresight(c) => Ok(Box::new(Foresight::new(c.clone(), machine)?)),
            PolicyConfig::Platinum(c) => Ok(Box::new(PlatinumPolicy::new(c.clone(), machine)?)),
        }
    }
}
