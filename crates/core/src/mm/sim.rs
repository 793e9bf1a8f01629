//! The simulator's implementation of [`Mm`]: the engine's memory, history and
//! statistics, borrowed for one policy hook, with every action charged its modelled cost.

use super::{ActionError, Mm, PteHold};
use crate::history::RefHistory;
use crate::machine::Machine;
use crate::memory::{Access, Mapping, Memory, PageState};
use crate::stats::Stats;
use crate::types::{NodeId, NodeSet, Ns, Vpn};
use rand_pcg::Pcg64;

/// The simulator's mechanism: a policy hook's view of the engine's memory, history and
/// statistics, charging every action the machine's cost for it.
pub struct SimMm<'a> {
    pub(crate) machine: &'a Machine,
    pub(crate) mem: &'a mut Memory,
    pub(crate) hist: &'a mut RefHistory,
    pub(crate) stats: &'a mut Stats,
    pub(crate) modules: &'a mut [Ns],
    pub(crate) ports: &'a mut [Ns],
    pub(crate) thread_nodes: &'a [Option<NodeId>],
    pub(crate) rng: &'a mut Pcg64,
    pub(crate) counters: Option<&'a mut super::PageCounters>,
    /// The processors' caches: a page that moves leaves them.
    pub(crate) caches: Option<&'a mut crate::cache::Caches>,
    /// Entry holds of [`Mm::migrate_holding_entries`], a buffer kept between calls.
    pub(crate) holds: &'a mut Vec<PteHold>,
    /// The access monitors, when the machine or the policy asks for them.
    pub(crate) monitors: Option<&'a mut super::Monitors>,
    pub(crate) now: Ns,
    pub(crate) actor: NodeId,
    pub(crate) cost: Ns,
    /// What [`Mm::next_daemon_step_now`] may allow in this call (none outside daemon
    /// steps).
    pub(crate) ahead: DaemonAhead,
}

/// The daemon steps a daemon hook may take within one call: while each starts before
/// `until` (the earliest other event), at most `steps_left` more (the engine's monitor
/// is called between events), and only after a step that took time (a step of no time
/// is followed by the next one a nanosecond later, so it goes back to the engine).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DaemonAhead {
    pub(crate) until: Ns,
    pub(crate) steps_left: u64,
    /// When the step under way started (the cost point).
    pub(crate) started: Ns,
}

impl<'a> SimMm<'a> {
    fn charge_shootdowns(&mut self, nodes: NodeSet) {
        let mut others = nodes;
        others.remove(self.actor);
        let k = others.len() as u64;
        self.stats.events.invalidations += k;
        self.cost += Ns(self.machine.costs().shootdown_per_node_ns.saturating_mul(k));
    }

    /// Occupies modules `a` and `b` (and, when the switch is modelled, both ends' switch
    /// ports: the copy's path) for a block transfer starting no earlier than the current
    /// cost point, when contention is modelled; returns the transfer's duration
    /// including any wait. PLATINUM measured the Butterfly's transfer taking 75% of both
    /// nodes' memory bandwidth ("both processors are memory-starved"): the modules are
    /// held for the whole copy.
    fn block_transfer(&mut self, a: NodeId, b: NodeId) -> Ns {
        let xfer = self.machine.page_transfer();
        if let Some(m) = self.monitors.as_deref_mut() {
            m.page_copy(a, b, self.machine.page_size(), self.now + self.cost);
        }
        if !self.machine.config.contention {
            return xfer;
        }
        let ready = self.now + self.cost;
        let mut start = ready.max(self.modules[a.idx()]).max(self.modules[b.idx()]);
        let path = self.machine.costs().switch_service_ns > 0 && a != b;
        if path {
            start = start.max(self.ports[a.idx()]).max(self.ports[b.idx()]);
        }
        let end = start + xfer;
        self.modules[a.idx()] = end;
        self.modules[b.idx()] = end;
        if path {
            self.ports[a.idx()] = end;
            self.ports[b.idx()] = end;
        }
        end - ready
    }
}

impl Mm for SimMm<'_> {
    #[inline]
    fn now(&self) -> Ns {
        self.now
    }

    #[inline]
    fn cost(&self) -> Ns {
        self.cost
    }

    #[inline]
    fn actor(&self) -> NodeId {
        self.actor
    }

    #[inline]
    fn machine(&self) -> &Machine {
        self.machine
    }

    #[inline]
    fn npages(&self) -> usize {
        self.mem.npages()
    }

    #[inline]
    fn page(&self, vpn: Vpn) -> PageState {
        self.mem.page(vpn)
    }

    #[inline]
    fn copy_count(&self, vpn: Vpn) -> u32 {
        self.mem.copy_count(vpn)
    }
    #[inline]
    fn home(&self, vpn: Vpn) -> NodeId {
        self.mem.home(vpn)
    }
    #[inline]
    fn has_copy(&self, vpn: Vpn, n: NodeId) -> bool {
        self.mem.has_copy(vpn, n)
    }
    #[inline]
    fn mapping(&self, vpn: Vpn, n: NodeId) -> Mapping {
        self.mem.mapping(vpn, n)
    }

    fn free_frames(&self, n: NodeId) -> u32 {
        self.mem.free_frames(n)
    }

    #[inline]
    fn history(&self) -> &RefHistory {
        self.hist
    }

    fn examine_history(&mut self, vpn: Vpn, n: NodeId) -> u32 {
        self.hist.examine(vpn, n)
    }

    fn thread_nodes(&self) -> &[Option<NodeId>] {
        self.thread_nodes
    }

    fn rng(&mut self) -> &mut Pcg64 {
        self.rng
    }

    fn stats(&self) -> &Stats {
        self.stats
    }

    #[inline]
    fn charge(&mut self, ns: Ns) {
        self.cost += ns;
    }

    fn count_daemon_pass(&mut self) {
        self.stats.daemon_passes += 1;
    }

    #[inline]
    fn next_daemon_step_now(&mut self) -> bool {
        let at = self.now + self.cost;
        let a = &mut self.ahead;
        if a.steps_left == 0 || at <= a.started || at >= a.until {
            return false;
        }
        a.steps_left -= 1;
        a.started = at;
        true
    }

    #[inline]
    fn place(&mut self, vpn: Vpn, n: NodeId) -> Result<(), ActionError> {
        if self.mem.copy_count(vpn) != 0 {
            return Err(ActionError::AlreadyPlaced);
        }
        if !self.mem.take_first_frame(n) {
            self.stats.events.refused += 1;
            return Err(ActionError::NoFrame(n));
        }
        self.mem.place_copy(vpn, n);
        Ok(())
    }

    #[inline]
    fn place_near(&mut self, vpn: Vpn, n: NodeId) -> NodeId {
        let target = nearest_with_frame(self.machine, self.mem, n).unwrap_or(n);
        // The engine checks at start that all pages fit, so a frame exists somewhere.
        let _ = self.place(vpn, target);
        target
    }

    #[inline]
    fn map_nearest(&mut self, vpn: Vpn, n: NodeId, access: Access) -> Option<NodeId> {
        let target = self.nearest_copy(vpn, n)?;
        self.map_to(vpn, n, target, access).ok()?;
        Some(target)
    }

    #[inline]
    fn map_to(
        &mut self,
        vpn: Vpn,
        n: NodeId,
        target: NodeId,
        access: Access,
    ) -> Result<(), ActionError> {
        if !self.mem.has_copy(vpn, target) {
            return Err(ActionError::NoCopy(target));
        }
        if access == Access::Write && self.mem.copy_count(vpn) > 1 {
            return Err(ActionError::Replicated);
        }
        self.mem.set_mapping(vpn, n, Mapping { target, access });
        Ok(())
    }

    fn invalidate_mappings(&mut self, vpn: Vpn, nodes: NodeSet) {
        let hit = nodes.intersection(&self.mem.mapped(vpn));
        for n in hit.iter() {
            self.mem.set_mapping(vpn, n, Mapping::default());
        }
        self.charge_shootdowns(hit);
    }

    fn restrict_to_read(&mut self, vpn: Vpn) {
        let writers = self.mem.writers(vpn);
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

    fn migrate(&mut self, vpn: Vpn, to: NodeId) -> Result<(), ActionError> {
        match self.mem.copy_count(vpn) {
            0 => return Err(ActionError::NotPlaced),
            1 => {}
            _ => return Err(ActionError::Replicated),
        }
        let from = self.mem.home(vpn);
        if from == to {
            return Ok(());
        }
        if !self.mem.take_frame(to) {
            self.stats.events.refused += 1;
            return Err(ActionError::NoFrame(to));
        }
        self.mem.release_frame(from);
        // The new frame's counters start from zero.
        if let Some(c) = self.counters.as_deref_mut() {
            c.reset(vpn);
        }
        let c = self.machine.costs();
        self.cost += Ns(c.migrate_fixed_ns.saturating_add(c.operation_delay_ns));
        let t = self.block_transfer(from, to);
        self.cost += t;
        // Every mapping is redirected to the moved copy (a single copy's mappings reach
        // its home), each node interrupted.
        self.mem.move_copy(vpn, to);
        if let Some(c) = self.caches.as_deref_mut() {
            c.flush_page(vpn.0);
        }
        self.charge_shootdowns(self.mem.mapped(vpn));
        self.stats.events.migrations += 1;
        if let Some(p) = self.stats.program_of(vpn) {
            p.migrations += 1;
        }
        if let Some(r) = self.stats.page(vpn) {
            r.migrations += 1;
        }
        Ok(())
    }

    fn replicate(&mut self, vpn: Vpn, to: NodeId) -> Result<(), ActionError> {
        if self.mem.copy_count(vpn) == 0 {
            return Err(ActionError::NotPlaced);
        }
        if self.mem.has_copy(vpn, to) {
            return Ok(());
        }
        let src = self.nearest_copy(vpn, to).ok_or(ActionError::NotPlaced)?;
        if !self.mem.take_replica_frame(to) {
            self.stats.events.refused += 1;
            return Err(ActionError::NoFrame(to));
        }
        self.restrict_to_read(vpn);
        let c = self.machine.costs();
        self.cost += Ns(c.replicate_fixed_ns.saturating_add(c.operation_delay_ns));
        let t = self.block_transfer(src, to);
        self.cost += t;
        self.mem.add_copy(vpn, to);
        if let Some(c) = self.caches.as_deref_mut() {
            c.flush_page(vpn.0);
        }
        self.mem.set_dirty(vpn, false);
        self.stats.events.replications += 1;
        if let Some(r) = self.stats.page(vpn) {
            r.replications += 1;
        }
        Ok(())
    }

    fn coherency_fault(&mut self, vpn: Vpn, keep: NodeId) {
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
        self.cost += self.machine.coherency_fault_fixed()
            + Ns(c.coherency_per_copy_ns.saturating_mul(dropped.len() as u64));
        self.charge_shootdowns(stale);
        self.mem.keep_only(vpn, keep);
        if let Some(c) = self.caches.as_deref_mut() {
            c.flush_page(vpn.0);
        }
        self.stats.events.coherency_faults += 1;
        if let Some(r) = self.stats.page(vpn) {
            r.coherency_faults += 1;
        }
    }

    fn coherent_read_miss(&mut self, vpn: Vpn, n: NodeId) -> Result<(), ActionError> {
        self.replicate(vpn, n)?;
        self.map_to(vpn, n, n, Access::Read)
    }

    fn coherent_write_miss(&mut self, vpn: Vpn, n: NodeId) -> Result<bool, ActionError> {
        let page = self.mem.page(vpn);
        if page.copies.is_empty() {
            return Err(ActionError::NotPlaced);
        }
        let invalidated;
        if page.copies.contains(n) {
            invalidated = page.copies.len() > 1;
            if invalidated {
                self.coherency_fault(vpn, n);
            }
        } else if page.copies.len() > 1 {
            if self.mem.free_frames(n) == 0 {
                self.stats.events.refused += 1;
                return Err(ActionError::NoFrame(n));
            }
            self.replicate(vpn, n)?;
            self.coherency_fault(vpn, n);
            invalidated = true;
        } else {
            if self.mem.free_frames(n) == 0 {
                self.stats.events.refused += 1;
                return Err(ActionError::NoFrame(n));
            }
            let mut others = self.mem.mapped(vpn);
            others.remove(n);
            invalidated = !others.is_empty();
            self.invalidate_mappings(vpn, others);
            self.migrate(vpn, n)?;
        }
        self.map_to(vpn, n, n, Access::Write)?;
        Ok(invalidated)
    }

    fn freeze(&mut self, vpn: Vpn) {
        let now = self.now;
        self.stats.events.freezes += 1;
        if let Some(r) = self.stats.page(vpn) {
            r.freezes += 1;
            r.frozen_since = Some(now.0);
        }
    }

    fn thaw(&mut self, vpn: Vpn) {
        let now = self.now;
        self.stats.events.defrosts += 1;
        if let Some(r) = self.stats.page(vpn) {
            if let Some(since) = r.frozen_since.take() {
                r.frozen_ns += now.0.saturating_sub(since);
            }
        }
    }

    fn lock_pte(&mut self, vpn: Vpn, n: NodeId, hold: Ns) {
        self.cost += Ns(self.machine.costs().pte_lock_ns);
        let until = self.now + self.cost + hold;
        self.mem.lock_pte(vpn, n, until);
    }

    fn acquire_pte(&mut self, vpn: Vpn, n: NodeId) -> PteHold {
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

    fn release_pte(&mut self, hold: PteHold) {
        let end = self.now + self.cost;
        self.mem.lock_pte(hold.vpn, hold.node, end);
        if let Some(t) = hold.user {
            self.mem.delay_thread(t, end - hold.acquired);
        }
    }

    fn examine_entries(
        &mut self,
        vpn: Vpn,
        nodes: &[NodeId],
        examine: Ns,
        counts: &mut [u32],
    ) -> u64 {
        let lock = Ns(self.machine.costs().pte_lock_ns);
        let (now, cost) = (self.now, &mut self.cost);
        let mut read = 0;
        if let Some((usage, counted)) = self.hist.usage_row(vpn) {
            // The entries are held in turn; of their usage counters only those that may
            // have counted are read and cleared (`RefHistory::examine` for the others
            // would read zero and clear nothing).
            let passed = self
                .mem
                .pass_entries_mask(vpn, nodes, now, cost, (lock, examine));
            let mut bits = *counted & passed;
            *counted &= !passed;
            while bits != 0 {
                let n = bits.trailing_zeros() as usize;
                let c = std::mem::take(&mut usage[n]);
                counts[n] = c;
                read |= u64::from(c != 0) << n;
                bits &= bits - 1;
            }
        } else {
            let hist = &mut *self.hist;
            self.mem
                .pass_entries(vpn, nodes, now, cost, (lock, examine), |n| {
                    let c = hist.examine(vpn, n);
                    counts[n.idx()] = c;
                    read |= super::counted(n, c);
                });
        }
        read
    }

    fn migrate_holding_entries(&mut self, vpn: Vpn, to: NodeId, nodes: &[NodeId], update: Ns) {
        if self.mem.entries_free(vpn, self.now + self.cost) {
            // Nothing to wait for: every copy is taken at once (its lock cost each), and
            // no user is interrupted, so a release only locks the copy until then.
            let lock = Ns(self.machine.costs().pte_lock_ns);
            for _ in nodes {
                self.cost += lock;
            }
            let _ = self.migrate(vpn, to);
            for &n in nodes {
                self.cost += update;
                let end = self.now + self.cost;
                self.mem.lock_pte(vpn, n, end);
            }
            return;
        }
        // As the provided method, with the holds in a buffer kept from call to call.
        let mut held = std::mem::take(self.holds);
        held.clear();
        held.extend(nodes.iter().map(|&n| self.acquire_pte(vpn, n)));
        let _ = self.migrate(vpn, to);
        for h in held.drain(..) {
            self.charge(update);
            self.release_pte(h);
        }
        *self.holds = held;
    }

    fn age_modifications(&mut self, vpn: Vpn) {
        self.mem.age_modifications(vpn);
    }

    fn page_counters(&self) -> Option<&super::PageCounters> {
        self.counters.as_deref()
    }

    fn decay_page_counters(&mut self, vpn: Vpn, amount: u32) {
        if let Some(c) = self.counters.as_deref_mut() {
            c.decay(vpn, amount);
        }
    }

    fn reset_page_counters(&mut self, vpn: Vpn) {
        if let Some(c) = self.counters.as_deref_mut() {
            c.reset(vpn);
        }
    }

    fn take_samples(&mut self, out: &mut Vec<super::Sample>) {
        if let Some(m) = self.monitors.as_deref_mut() {
            m.take_samples(out);
        }
    }

    fn protect(&mut self, first: Vpn, count: u64, homes: NodeSet) -> u64 {
        let Some(m) = self.monitors.as_deref_mut() else {
            return 0;
        };
        if m.protected.is_empty() {
            return 0;
        }
        let end = (first.0 as u64)
            .saturating_add(count)
            .min(self.mem.npages() as u64);
        let (mut pages, mut entries) = (0u64, 0u64);
        let mut flushed = NodeSet::default();
        for p in first.0 as u64..end {
            let vpn = Vpn(p as u32);
            let mapped = self.mem.mapped(vpn);
            if mapped.is_empty() || !homes.contains(self.mem.home(vpn)) {
                continue;
            }
            for n in mapped.iter() {
                self.mem.set_mapping(vpn, n, Mapping::default());
            }
            entries += mapped.len() as u64;
            flushed = flushed.union(&mapped);
            m.protected[vpn.idx()] = self.now + self.cost;
            pages += 1;
        }
        self.cost += Ns(self.machine.costs().pte_examine_ns.saturating_mul(entries));
        self.charge_shootdowns(flushed);
        pages
    }

    fn hinting_fault(&mut self, vpn: Vpn) -> Option<Ns> {
        let m = self.monitors.as_deref_mut()?;
        let at = m.protected.get_mut(vpn.idx())?;
        if *at == Ns::MAX {
            return None;
        }
        let since = Ns(self.now.0.saturating_sub(at.0));
        *at = Ns::MAX;
        Some(since)
    }

    fn test_and_clear_accessed(&mut self, vpn: Vpn) -> bool {
        if self.hist.mode() != crate::history::HistoryMode::RefBit {
            return false;
        }
        let mut any = false;
        let mapped = self.mem.mapped(vpn);
        for n in 0..self.machine.nodes() as u16 {
            any |= self.hist.examine(vpn, NodeId(n)) != 0;
        }
        self.cost += Ns(self
            .machine
            .costs()
            .pte_examine_ns
            .saturating_mul(mapped.len() as u64));
        any
    }

    fn node_load(&self, n: NodeId) -> super::NodeLoad {
        self.monitors
            .as_deref()
            .map(|m| m.load(n))
            .unwrap_or_default()
    }
}

/// The node nearest to `n` (by read cost, ties to the lower node) that has a free frame.
#[inline]
pub(crate) fn nearest_with_frame(machine: &Machine, mem: &Memory, n: NodeId) -> Option<NodeId> {
    if mem.free_frames(n) > 0 {
        return Some(n);
    }
    (0..machine.nodes() as u16)
        .map(NodeId)
        .filter(|&m| mem.free_frames(m) > 0)
        .min_by_key(|&m| (machine.read_ns(n, m), m.0))
}
