//! The reference path's part that calls into the policy: a reference run whose mapping
//! does not allow it faults into the policy, and a run that raises a page counter's
//! interrupt hands it to the policy. The mechanism prices the run
//! ([`MemSystem::price`], [`MemSystem::occupy`]); the engine, which holds the policy,
//! sequences the fault and the interrupt around it, so the mechanism never names a
//! component.

use crate::component::{default_fault, Fault, Policy};
use crate::memory::{Access, UserRun};
use crate::mm::MemSystem;
use crate::stats::{RefClass, Stats, ThreadStats};
use crate::types::{NodeId, Ns, ThreadId, Vpn};

/// A fault the policy (and the default handling after it) left without a mapping that
/// allows the access: a policy bug, reported by the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Unresolved;

impl MemSystem {
    /// A run of `count` references by thread `tid` on `node` to `vpn` starting at `now`;
    /// returns when it ends. A missing or too weak mapping faults into `policy` (charged
    /// the fault cost plus its actions); faults on one page serialise; a locked PTE and a
    /// busy memory module delay the run; the per-word latency follows the mapping.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn reference(
        &mut self,
        policy: &mut dyn Policy,
        stats: &mut Stats,
        ts: &mut ThreadStats,
        tid: u32,
        node: NodeId,
        vpn: Vpn,
        write: bool,
        count: u32,
        now: Ns,
    ) -> Result<Ns, Unresolved> {
        let mut t = now;
        let target = match self.mem.reaches(vpn, node, write) {
            Some(target) => target,
            None => {
                let (end, target) =
                    self.fault_path(policy, stats, ts, tid, node, vpn, write, now)?;
                t = end;
                target
            }
        };
        if self.mem.has_entries() {
            let locked = self.mem.pte_locked_until(vpn, node);
            if locked > t {
                ts.pte_wait_ns += (locked - t).0;
                t = locked;
            }
        }
        let (mut per_word, class) = self.price(node, target, vpn, write);
        if self.machine.config.contention && class != RefClass::Cached {
            t = self.occupy(ts, node, target, class == RefClass::Remote, count, t);
        }
        if let Some(m) = self.monitors.as_deref_mut() {
            per_word += m.reference_run(tid, node, target, vpn, write, count, per_word, t);
        }
        let start = t;
        // Saturating: an absurd cost reaches TIME_LIMIT and is reported, never wraps.
        t += Ns(per_word.saturating_mul(count as u64));
        if self.mem.has_entries() {
            self.mem.record_user_run(
                vpn,
                node,
                UserRun {
                    thread: tid,
                    start,
                    end: t,
                    per_access: Ns(per_word),
                },
            );
        }
        ts.refs.add(class, count as u64);
        stats.refs.add(class, count as u64);
        if let Some(r) = stats.pages.get_mut(vpn.idx()) {
            r.refs.add(class, count as u64);
        }
        self.hist.record(vpn, node, count);
        if let Some(c) = &mut self.counters {
            if c.record(vpn, node, target, count) {
                t += self.counter_interrupt(policy, stats, node, vpn, t);
            }
        }
        if write {
            self.mem.mark_written(vpn);
        }
        Ok(t)
    }

    /// A reference whose mapping does not allow it: waits for a fault in progress on
    /// the page, faults into the policy, and returns when the fault ends and the copy
    /// the new mapping reaches.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn fault_path(
        &mut self,
        policy: &mut dyn Policy,
        stats: &mut Stats,
        ts: &mut ThreadStats,
        tid: u32,
        node: NodeId,
        vpn: Vpn,
        write: bool,
        now: Ns,
    ) -> Result<(Ns, NodeId), Unresolved> {
        let mut t = now;
        // Faults on one page serialise on its fault handler (PLATINUM's Cpage lock):
        // a fault arriving while another is handled waits, then finds the page as
        // the earlier fault left it.
        let busy = self.fault_busy.get(vpn.idx()).copied().unwrap_or(Ns::ZERO);
        if busy > t {
            let wait = busy - t;
            ts.fault_wait_ns += wait.0;
            if let Some(r) = stats.pages.get_mut(vpn.idx()) {
                r.contended_faults += 1;
                r.fault_wait_ns += wait.0;
            }
            t = busy;
            if let Some(target) = self.mem.reaches(vpn, node, write) {
                return Ok((t, target));
            }
        }
        let cost = self.fault(policy, stats, tid, node, vpn, write, t);
        t += cost;
        if let Some(busy) = self.fault_busy.get_mut(vpn.idx()) {
            *busy = t;
        }
        let target = self.mem.reaches(vpn, node, write).ok_or(Unresolved)?;
        stats.events.faults += 1;
        ts.faults += 1;
        ts.fault_ns += cost.0;
        if let Some(r) = stats.pages.get_mut(vpn.idx()) {
            r.faults += 1;
            r.fault_ns += cost.0;
        }
        Ok((t, target))
    }

    /// Hands a fault to `policy`, completes what it left undone with the default
    /// handling, and returns the handler's cost (the fault itself plus the actions).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn fault(
        &mut self,
        policy: &mut dyn Policy,
        stats: &mut Stats,
        tid: u32,
        node: NodeId,
        vpn: Vpn,
        write: bool,
        now: Ns,
    ) -> Ns {
        let fault = Fault {
            thread: ThreadId(tid),
            node,
            vpn,
            write,
        };
        let needed = if write { Access::Write } else { Access::Read };
        let by_default = self.faults_by_default;
        let mut ctx = self.sim(stats, now, node);
        ctx.cost = Ns(ctx.machine.costs().page_fault_ns);
        if by_default {
            default_fault(&mut ctx, fault);
        } else {
            policy.on_fault(&mut ctx, fault);
        }
        if ctx.mem.mapping(vpn, node).access < needed {
            default_fault(&mut ctx, fault);
        }
        ctx.cost
    }

    /// The counters of `vpn` raised an interrupt for node `n` during a reference run that
    /// ended at `now`: the policy handles it on the referencing node, and what it does is
    /// charged to the referencing thread (the interrupted processor).
    #[cold]
    pub(crate) fn counter_interrupt(
        &mut self,
        policy: &mut dyn Policy,
        stats: &mut Stats,
        n: NodeId,
        vpn: Vpn,
        now: Ns,
    ) -> Ns {
        let mut ctx = self.sim(stats, now, n);
        policy.on_counter_interrupt(&mut ctx, vpn, n);
        ctx.cost
    }
}
