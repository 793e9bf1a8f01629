//! A recording test double of [`Mm`]: real page state (the simulator's memory model and
//! history, so the policy sees the consequences of its actions), no engine, and a log of
//! every action the policy took. Policies' unit tests build one, set the scene (pages
//! placed, history counted, the clock), call one hook and assert on [`Recording::actions`].

use super::{ActionError, MemSystem, Mm, PteHold, SimMm};
use crate::history::{HistoryMode, RefHistory};
use crate::machine::Machine;
use crate::memory::{Access, Mapping, PageState};
use crate::stats::Stats;
use crate::types::{NodeId, NodeSet, Ns, Vpn};
use rand_pcg::Pcg64;

/// One action a policy took through [`Mm`], in the order taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// [`Mm::charge`].
    Charge(Ns),
    /// [`Mm::count_daemon_pass`].
    DaemonPass,
    /// [`Mm::examine_history`].
    ExamineHistory(Vpn, NodeId),
    /// [`Mm::place`].
    Place(Vpn, NodeId),
    /// [`Mm::place_near`].
    PlaceNear(Vpn, NodeId),
    /// [`Mm::map_nearest`].
    MapNearest(Vpn, NodeId, Access),
    /// [`Mm::map_to`]: page, node mapping, target copy, access.
    MapTo(Vpn, NodeId, NodeId, Access),
    /// [`Mm::invalidate_mappings`].
    InvalidateMappings(Vpn, NodeSet),
    /// [`Mm::restrict_to_read`].
    RestrictToRead(Vpn),
    /// [`Mm::migrate`].
    Migrate(Vpn, NodeId),
    /// [`Mm::replicate`].
    Replicate(Vpn, NodeId),
    /// [`Mm::coherency_fault`]: page, the copy kept.
    CoherencyFault(Vpn, NodeId),
    /// [`Mm::coherent_read_miss`].
    CoherentReadMiss(Vpn, NodeId),
    /// [`Mm::coherent_write_miss`].
    CoherentWriteMiss(Vpn, NodeId),
    /// [`Mm::freeze`].
    Freeze(Vpn),
    /// [`Mm::thaw`].
    Thaw(Vpn),
    /// [`Mm::lock_pte`].
    LockPte(Vpn, NodeId, Ns),
    /// [`Mm::acquire_pte`].
    AcquirePte(Vpn, NodeId),
    /// [`Mm::release_pte`].
    ReleasePte(Vpn, NodeId),
    /// [`Mm::age_modifications`].
    AgeModifications(Vpn),
    /// [`Mm::decay_page_counters`].
    DecayCounters(Vpn, u32),
    /// [`Mm::reset_page_counters`].
    ResetCounters(Vpn),
    /// [`Mm::protect`]: the first page and the count.
    Protect(Vpn, u64),
    /// [`Mm::test_and_clear_accessed`].
    TestAccessed(Vpn),
}

/// The recording double: owns what the engine would own for a hook.
pub struct Recording {
    sys: MemSystem,
    stats: Stats,
    /// The clock a hook starts at.
    pub now: Ns,
    /// The node running the hook.
    pub actor: NodeId,
    cost: Ns,
    actions: Vec<Action>,
    /// Per node: the load set by the scene, in place of the accounting's.
    loads: Vec<Option<super::NodeLoad>>,
}

impl Recording {
    /// `npages` unplaced pages on `machine`, with history `mode`, one thread per node (on
    /// that node), the clock at 0 and node 0 acting.
    pub fn new(machine: Machine, npages: usize, mode: HistoryMode) -> Recording {
        let threads = (0..machine.nodes() as u16)
            .map(|n| Some(NodeId(n)))
            .collect();
        Recording {
            sys: MemSystem::new(machine, npages, mode, threads, 1),
            stats: Stats::default(),
            now: Ns::ZERO,
            actor: NodeId(0),
            cost: Ns::ZERO,
            actions: Vec::new(),
            loads: Vec::new(),
        }
    }

    /// The actions taken so far.
    pub fn actions(&self) -> &[Action] {
        &self.actions
    }

    /// Forgets the actions and the cost so far (after setting the scene).
    pub fn clear(&mut self) {
        self.actions.clear();
        self.cost = Ns::ZERO;
    }

    /// The reference history, to set the scene (e.g. count references).
    pub fn history_mut(&mut self) -> &mut RefHistory {
        &mut self.sys.hist
    }

    /// Marks a page written since the last aging, to set the scene.
    pub fn mark_written_since_age(&mut self, vpn: Vpn) {
        self.sys.mem.set_written_since_age(vpn)
    }

    /// Gives the double hardware page counters (every page in program 0), to set the
    /// scene; [`Recording::count`] then counts accesses.
    pub fn enable_counters(&mut self, spec: &super::CounterSpec) {
        let (n, nodes) = (self.sys.mem.npages(), self.sys.machine.nodes());
        self.sys.counters = Some(super::PageCounters::new(spec, n, nodes, |_| 0));
    }

    /// Counts `count` accesses by node `n` to `vpn` in the page counters, to set the
    /// scene; whether they raised an interrupt.
    pub fn count(&mut self, vpn: Vpn, n: NodeId, count: u32) -> bool {
        let home = self.sys.mem.page(vpn).home;
        self.sys
            .counters
            .as_mut()
            .is_some_and(|c| c.record(vpn, n, home, count))
    }

    /// Gives the double the monitors `spec` asks for (and the machine's loaded-latency
    /// model, if it has one), to set the scene.
    pub fn enable_monitors(&mut self, spec: super::MonitorSpec) {
        let m = &self.sys.machine;
        self.sys.monitors = super::Monitors::new(
            spec,
            m.config.loaded_latency.as_ref(),
            m.nodes(),
            self.sys.mem.npages(),
            m.config.word_size_bytes,
        );
    }

    /// Puts a sampled access record in the buffer, to set the scene (the double must
    /// have sampling, [`Recording::enable_monitors`]).
    pub fn push_sample(&mut self, s: super::Sample) {
        if let Some(m) = self.sys.monitors.as_deref_mut() {
            m.push_sample(s);
        }
    }

    /// Sets node `n`'s load as [`Mm::node_load`] reports it from now on, to set the
    /// scene (in place of the bandwidth accounting's).
    pub fn set_node_load(&mut self, n: NodeId, load: super::NodeLoad) {
        if self.loads.len() <= n.idx() {
            self.loads.resize(n.idx() + 1, None);
        }
        self.loads[n.idx()] = Some(load);
    }

    /// The nodes the threads run on, to set the scene.
    pub fn thread_nodes_mut(&mut self) -> &mut Vec<Option<NodeId>> {
        &mut self.sys.thread_nodes
    }

    /// Runs `f` on the simulator's mechanism over this double's state, keeping the cost.
    fn sim<R>(&mut self, f: impl FnOnce(&mut SimMm<'_>) -> R) -> R {
        let mut s = self.sys.sim(&mut self.stats, self.now, self.actor);
        s.cost = self.cost;
        let r = f(&mut s);
        self.cost = s.cost;
        r
    }

    /// Records `a`, then performs it on the simulator's mechanism.
    fn act<R>(&mut self, a: Action, f: impl FnOnce(&mut SimMm<'_>) -> R) -> R {
        self.actions.push(a);
        self.sim(f)
    }
}

impl Mm for Recording {
    fn now(&self) -> Ns {
        self.now
    }
    fn cost(&self) -> Ns {
        self.cost
    }
    fn actor(&self) -> NodeId {
        self.actor
    }
    fn machine(&self) -> &Machine {
        &self.sys.machine
    }
    fn npages(&self) -> usize {
        self.sys.mem.npages()
    }
    fn page(&self, vpn: Vpn) -> PageState {
        self.sys.mem.page(vpn)
    }
    fn copy_count(&self, vpn: Vpn) -> u32 {
        self.sys.mem.copy_count(vpn)
    }
    fn home(&self, vpn: Vpn) -> NodeId {
        self.sys.mem.home(vpn)
    }
    fn has_copy(&self, vpn: Vpn, n: NodeId) -> bool {
        self.sys.mem.has_copy(vpn, n)
    }
    fn mapping(&self, vpn: Vpn, n: NodeId) -> Mapping {
        self.sys.mem.mapping(vpn, n)
    }
    fn free_frames(&self, n: NodeId) -> u32 {
        self.sys.mem.free_frames(n)
    }
    fn history(&self) -> &RefHistory {
        &self.sys.hist
    }
    fn examine_history(&mut self, vpn: Vpn, n: NodeId) -> u32 {
        self.act(Action::ExamineHistory(vpn, n), |s| {
            s.examine_history(vpn, n)
        })
    }
    fn thread_nodes(&self) -> &[Option<NodeId>] {
        &self.sys.thread_nodes
    }
    fn rng(&mut self) -> &mut Pcg64 {
        &mut self.sys.rng
    }
    fn stats(&self) -> &Stats {
        &self.stats
    }
    fn charge(&mut self, ns: Ns) {
        self.act(Action::Charge(ns), |s| s.charge(ns))
    }
    fn count_daemon_pass(&mut self) {
        self.act(Action::DaemonPass, |s| s.count_daemon_pass())
    }
    fn place(&mut self, vpn: Vpn, n: NodeId) -> Result<(), ActionError> {
        self.act(Action::Place(vpn, n), |s| s.place(vpn, n))
    }
    fn place_near(&mut self, vpn: Vpn, n: NodeId) -> NodeId {
        self.act(Action::PlaceNear(vpn, n), |s| s.place_near(vpn, n))
    }
    fn map_nearest(&mut self, vpn: Vpn, n: NodeId, access: Access) -> Option<NodeId> {
        self.act(Action::MapNearest(vpn, n, access), |s| {
            s.map_nearest(vpn, n, access)
        })
    }
    fn map_to(
        &mut self,
        vpn: Vpn,
        n: NodeId,
        target: NodeId,
        access: Access,
    ) -> Result<(), ActionError> {
        self.act(Action::MapTo(vpn, n, target, access), |s| {
            s.map_to(vpn, n, target, access)
        })
    }
    fn invalidate_mappings(&mut self, vpn: Vpn, nodes: NodeSet) {
        self.act(Action::InvalidateMappings(vpn, nodes), |s| {
            s.invalidate_mappings(vpn, nodes)
        })
    }
    fn restrict_to_read(&mut self, vpn: Vpn) {
        self.act(Action::RestrictToRead(vpn), |s| s.restrict_to_read(vpn))
    }
    fn migrate(&mut self, vpn: Vpn, to: NodeId) -> Result<(), ActionError> {
        self.act(Action::Migrate(vpn, to), |s| s.migrate(vpn, to))
    }
    fn replicate(&mut self, vpn: Vpn, to: NodeId) -> Result<(), ActionError> {
        self.act(Action::Replicate(vpn, to), |s| s.replicate(vpn, to))
    }
    fn coherency_fault(&mut self, vpn: Vpn, keep: NodeId) {
        self.act(Action::CoherencyFault(vpn, keep), |s| {
            s.coherency_fault(vpn, keep)
        })
    }
    fn coherent_read_miss(&mut self, vpn: Vpn, n: NodeId) -> Result<(), ActionError> {
        self.act(Action::CoherentReadMiss(vpn, n), |s| {
            s.coherent_read_miss(vpn, n)
        })
    }
    fn coherent_write_miss(&mut self, vpn: Vpn, n: NodeId) -> Result<bool, ActionError> {
        self.act(Action::CoherentWriteMiss(vpn, n), |s| {
            s.coherent_write_miss(vpn, n)
        })
    }
    fn freeze(&mut self, vpn: Vpn) {
        self.act(Action::Freeze(vpn), |s| s.freeze(vpn))
    }
    fn thaw(&mut self, vpn: Vpn) {
        self.act(Action::Thaw(vpn), |s| s.thaw(vpn))
    }
    fn lock_pte(&mut self, vpn: Vpn, n: NodeId, hold: Ns) {
        self.act(Action::LockPte(vpn, n, hold), |s| s.lock_pte(vpn, n, hold))
    }
    fn acquire_pte(&mut self, vpn: Vpn, n: NodeId) -> PteHold {
        self.act(Action::AcquirePte(vpn, n), |s| s.acquire_pte(vpn, n))
    }
    fn release_pte(&mut self, hold: PteHold) {
        self.act(Action::ReleasePte(hold.vpn, hold.node), |s| {
            s.release_pte(hold)
        })
    }
    fn age_modifications(&mut self, vpn: Vpn) {
        self.act(Action::AgeModifications(vpn), |s| s.age_modifications(vpn))
    }
    fn page_counters(&self) -> Option<&super::PageCounters> {
        self.sys.counters.as_ref()
    }
    fn decay_page_counters(&mut self, vpn: Vpn, amount: u32) {
        self.act(Action::DecayCounters(vpn, amount), |s| {
            s.decay_page_counters(vpn, amount)
        })
    }
    fn reset_page_counters(&mut self, vpn: Vpn) {
        self.act(Action::ResetCounters(vpn), |s| s.reset_page_counters(vpn))
    }

    fn take_samples(&mut self, out: &mut Vec<super::Sample>) {
        self.sim(|s| s.take_samples(out))
    }

    fn protect(&mut self, first: Vpn, count: u64, homes: NodeSet) -> u64 {
        self.act(Action::Protect(first, count), |s| {
            s.protect(first, count, homes)
        })
    }

    fn hinting_fault(&mut self, vpn: Vpn) -> Option<Ns> {
        self.sim(|s| s.hinting_fault(vpn))
    }

    fn test_and_clear_accessed(&mut self, vpn: Vpn) -> bool {
        self.act(Action::TestAccessed(vpn), |s| {
            s.test_and_clear_accessed(vpn)
        })
    }

    fn node_load(&self, n: NodeId) -> super::NodeLoad {
        if let Some(&Some(load)) = self.loads.get(n.idx()) {
            return load;
        }
        self.sys
            .monitors
            .as_deref()
            .map(|m| m.load(n))
            .unwrap_or_default()
    }
}
