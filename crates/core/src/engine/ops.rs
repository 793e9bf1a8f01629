//! A thread's operations: the interpreter that runs a thread ahead until another event
//! comes first, reference runs (costed by the mechanism), hints and iteration ends.

use super::*;

/// How many operations ahead a thread's page state is fetched (about 16 GUPS updates: the
/// host's memory latency over a few operations' work).
const PREFETCH_AHEAD: usize = 48;

/// Pages of a run beyond which page state is fetched ahead (2^16 pages: 2 MB of page
/// records, more than a host core's cache holds; smaller runs find it in the cache).
pub(super) const PREFETCH_PAGES: usize = 1 << 16;

/// Where [`Engine::lane`] left a thread.
pub(super) enum Lane {
    /// At this time, at an operation the lane does not take (or the buffer's end).
    At(Ns),
    /// At this time, at a reference run its mapping does not allow (it faults).
    Faults(Ns, Vpn, bool, u32),
    /// To go on at this time, which another event comes at or before (the caller queues
    /// the thread).
    Yields(Ns),
}

impl Engine {
    #[inline(always)]
    pub(super) fn step_thread(&mut self, tid: u32, mut now: Ns) -> Result<(), SimError> {
        if self.threads[tid as usize].status == Status::Sleeping {
            // Woken: it runs from its own event, once it has a processor.
            self.wake(tid, now);
            if self.threads[tid as usize].proc.is_some() {
                self.queue_thread(tid, now);
            }
            return Ok(());
        }
        loop {
            let th = &self.threads[tid as usize];
            if th.status != Status::Ready {
                return Ok(());
            }
            let Some(proc) = th.proc else {
                return Ok(());
            };
            let busy = self.proc_busy_until[proc.idx()];
            if busy > now {
                self.queue_thread(tid, busy);
                return Ok(());
            }
            let th = &mut self.threads[tid as usize];
            if th.delay > Ns::ZERO {
                let d = std::mem::replace(&mut th.delay, Ns::ZERO);
                th.stats.pte_wait_ns += d.0;
                self.queue_thread(tid, now + d);
                return Ok(());
            }
            if th.pos == th.buf.len() {
                th.buf.clear();
                th.pos = 0;
                let p = &mut self.progs[th.prog as usize];
                p.prog.next_ops(th.local, &p.running, &mut th.buf);
                if th.buf.is_empty() {
                    self.finish_thread(tid, now);
                    return self.unless_stuck(now);
                }
            }
            if self.plain_allowed() {
                // The general loop yields when the next event comes at or before an
                // operation's end, or the end reaches the run's stop.
                let limit = match self.queue.next_time() {
                    Some(t) => t.0.min(self.stop_at),
                    None => self.stop_at,
                };
                let lane = if self.bare {
                    self.lane::<true>(tid, proc.idx(), now, limit)
                } else {
                    self.lane::<false>(tid, proc.idx(), now, limit)
                };
                match lane {
                    Lane::Yields(next) => {
                        self.queue_thread(tid, next);
                        return Ok(());
                    }
                    Lane::Faults(t, vpn, write, count) => {
                        match self.faulting_reference(tid, proc.idx(), t, (vpn, write, count))? {
                            Some(next) => {
                                // A fault may change what the lane holds fixed: the checks
                                // above come first.
                                now = next;
                                continue;
                            }
                            None => return Ok(()),
                        }
                    }
                    Lane::At(t) => now = t,
                }
                let th = &self.threads[tid as usize];
                if th.pos == th.buf.len() {
                    continue;
                }
            }
            self.prefetch_ahead(tid);
            let th = &mut self.threads[tid as usize];
            let op = th.buf[th.pos];
            th.pos += 1;
            self.stats.ops += 1;
            let next = match op {
                Op::ParallelEnter(k) | Op::ParallelExit(k) => {
                    // A boundary marks where the thread is; it is not work, so it is not
                    // counted, and when nothing is charged for it the thread goes on
                    // exactly as if it were not there.
                    self.stats.ops -= 1;
                    let boundary = match op {
                        Op::ParallelEnter(_) => Boundary::Enter,
                        _ => Boundary::Exit,
                    };
                    let end = self.parallel(tid, k, boundary, now);
                    if end == now {
                        continue;
                    }
                    end
                }
                Op::Ref {
                    vpn,
                    write,
                    count,
                    at,
                    span,
                } => {
                    if self.mm.caches.is_some() {
                        self.reference_cached(tid, now, vpn, write, count, (at, span))?
                    } else if let Some(end) = self.plain_reference(tid, now, vpn, write, count) {
                        end
                    } else {
                        self.reference(tid, now, vpn, write, count)?
                    }
                }
                Op::Compute(d) => self.compute_end(now, d),
                Op::Sleep(d) => {
                    self.sleep(tid, d, now);
                    return Ok(());
                }
                Op::Barrier => {
                    if !self.barrier(tid, now) {
                        return self.unless_stuck(now);
                    }
                    now
                }
                Op::Lock(l) => {
                    if !self.lock(tid, l, now) {
                        return self.unless_stuck(now);
                    }
                    now
                }
                Op::Unlock(l) => {
                    self.unlock(tid, l, now);
                    now
                }
                Op::PhaseHint => {
                    let node = self.threads[tid as usize].node;
                    let (policy, mut ctx) = self.ctx(now, node);
                    policy.on_phase_hint(&mut ctx, ThreadId(tid));
                    now + ctx.cost
                }
                Op::IterationEnd(k) => self.iteration_end(tid, k, now),
                Op::Advise(local_vpn) => self.advise(tid, local_vpn, now)?,
                Op::Spin {
                    vpn,
                    write,
                    count,
                    event,
                    at_least,
                } => {
                    // The poll that starts at or after the advance sees it; until then
                    // the op repeats, each poll a reference run that costs time.
                    let seen = self.event_value(self.threads[tid as usize].prog, event) >= at_least;
                    let target = (!seen).then_some((event, at_least));
                    let was = std::mem::replace(&mut self.threads[tid as usize].spin_on, target);
                    if !seen && was.is_none() && self.stuck() {
                        // Every other thread spins or waits too: no one can advance the count.
                        return Err(self.deadlock(now));
                    }
                    let count = count.max(1);
                    let end = if self.mm.caches.is_some() {
                        self.reference_cached(tid, now, vpn, write, count, (0, 0))?
                    } else if let Some(end) = self.plain_reference(tid, now, vpn, write, count) {
                        // Most polls find their mapping: the reference path in the loop.
                        end
                    } else {
                        self.reference(tid, now, vpn, write, count)?
                    };
                    if !seen {
                        self.threads[tid as usize].pos -= 1;
                    }
                    end.max(now + Ns(1))
                }
                Op::Advance { event, to } => {
                    let pi = self.threads[tid as usize].prog as usize;
                    let ev = &mut self.progs[pi].events;
                    if ev.len() <= event as usize {
                        ev.resize(event as usize + 1, 0);
                    }
                    ev[event as usize] = ev[event as usize].max(to);
                    if !self.progs[pi].awaiting.is_empty() {
                        self.release_awaiting(pi, event, now);
                    }
                    now
                }
                Op::Await { event, at_least } => {
                    if !self.await_event(tid, event, at_least, now) {
                        return self.unless_stuck(now);
                    }
                    now
                }
            };
            let next = self.ticked_end(tid, proc.idx(), now, next);
            if self.queued_after(tid, next) {
                return Ok(());
            }
            now = next;
        }
    }

    /// When thread `tid`'s operation from `now` to `end` on processor `proc` ends: clock
    /// interrupts due while it ran take their time from it.
    #[inline(always)]
    fn ticked_end(&mut self, tid: u32, proc: usize, now: Ns, end: Ns) -> Ns {
        match &mut self.ticks {
            Some(ticks) => ticks.charge(proc, now, end, &mut self.threads[tid as usize].stats),
            None => end,
        }
    }

    /// After thread `tid`'s operation that ends at `next`: queues the thread to go on at
    /// `next` when another event comes first, and returns whether it did.
    #[inline(always)]
    fn queued_after(&mut self, tid: u32, next: Ns) -> bool {
        match self.queue.next_time() {
            Some(t) if t <= next => {}
            // Running ahead yields to the event loop when a monitor is due, so progress
            // shows and a stop request is honoured, and when it passes the run's budget
            // or the time limit, which the loop then reports.
            _ if self.stats.ops + self.events >= self.next_poll || next.0 >= self.stop_at => {}
            _ => return false,
        }
        self.queue_thread(tid, next);
        true
    }

    /// Fetches the page state of the thread's run some operations ahead meanwhile: with
    /// many pages (GUPS over gigabytes), the state of the page a run finds is rarely in
    /// the host's caches, and waiting for it is most of a run's time.
    #[inline(always)]
    fn prefetch_ahead(&self, tid: u32) {
        if self.prefetch {
            let th = &self.threads[tid as usize];
            if let Some(Op::Ref { vpn, .. }) = th.buf.get(th.pos + PREFETCH_AHEAD) {
                self.mm.prefetch(Vpn(th.base_vpn.wrapping_add(vpn.0)));
            }
        }
    }

    /// When computation of `d` from `now` ends, on a processor faster or slower than the
    /// workload's figures assume (`compute_pct`).
    #[inline(always)]
    fn compute_end(&self, now: Ns, d: Ns) -> Ns {
        if self.compute_pct == 100 {
            now + d
        } else {
            now + Ns(d.0.saturating_mul(self.compute_pct) / 100)
        }
    }

    /// Runs thread `tid` from `now` through the plain operations at the head of its
    /// buffer (references its mappings allow, computation, polls of a thread already
    /// spinning) for as long as no other event comes first (the next event, or the run's
    /// stop, at `limit`): the same steps as the general loop, with what cannot change while
    /// the thread runs alone looked at once instead of at every operation (the thread's
    /// state, processor `proc` and delay, which only events change; the queue's next
    /// event, as nothing here queues one; the monitor's and the run's limits). `At` the first operation it leaves to the general
    /// loop, or the buffer's end; `Yields` when it is to go on at a later event.
    #[inline(always)]
    pub(super) fn lane<const BARE: bool>(
        &mut self,
        tid: u32,
        proc: usize,
        mut now: Ns,
        limit: u64,
    ) -> Lane {
        debug_assert!(!BARE || self.bare_reference_path());
        let budget = self.next_poll.saturating_sub(self.events);
        let mut ops = self.stats.ops;
        let lane = loop {
            let th = &self.threads[tid as usize];
            let Some(&op) = th.buf.get(th.pos) else {
                break Lane::At(now);
            };
            self.prefetch_ahead(tid);
            let next = match op {
                Op::Ref {
                    vpn, write, count, ..
                } => match self.allowed_run::<BARE>(tid, now, vpn, write, count) {
                    Some(end) => end,
                    None => break Lane::Faults(now, vpn, write, count),
                },
                Op::Compute(d) => self.compute_end(now, d),
                Op::Spin {
                    vpn,
                    write,
                    count,
                    event,
                    at_least,
                } => {
                    // A poll, as in the general loop; a thread that starts to spin is
                    // left to it (it looks for a deadlock then).
                    let th = &self.threads[tid as usize];
                    let seen = self.event_value(th.prog, event) >= at_least;
                    if !seen && th.spin_on.is_none() {
                        break Lane::At(now);
                    }
                    let Some(end) = self.allowed_run::<BARE>(tid, now, vpn, write, count.max(1))
                    else {
                        break Lane::At(now);
                    };
                    let th = &mut self.threads[tid as usize];
                    th.spin_on = (!seen).then_some((event, at_least));
                    if !seen {
                        // The poll repeats: back by one before the step below moves on
                        // (wrapping, as a poll may be the first op of its buffer).
                        th.pos = th.pos.wrapping_sub(1);
                    }
                    end.max(now + Ns(1))
                }
                _ => break Lane::At(now),
            };
            let next = if BARE {
                next
            } else {
                self.ticked_end(tid, proc, now, next)
            };
            let th = &mut self.threads[tid as usize];
            th.pos = th.pos.wrapping_add(1);
            ops += 1;
            if next.0 >= limit || ops >= budget {
                break Lane::Yields(next);
            }
            now = next;
        };
        self.stats.ops = ops;
        lane
    }

    /// The reference run at thread `tid`'s place (page, write, count), which the lane
    /// found its mapping does not allow: made through the reference path (with its
    /// fault, or the error of a page outside the address space) as the general loop makes
    /// it. Returns when it ends, or `None` when the thread was queued to go on later.
    #[inline(never)]
    fn faulting_reference(
        &mut self,
        tid: u32,
        proc: usize,
        now: Ns,
        (vpn, write, count): (Vpn, bool, u32),
    ) -> Result<Option<Ns>, SimError> {
        let th = &mut self.threads[tid as usize];
        th.pos += 1;
        self.stats.ops += 1;
        let end = self.reference(tid, now, vpn, write, count)?;
        let next = self.ticked_end(tid, proc, now, end);
        Ok((!self.queued_after(tid, next)).then_some(next))
    }

    /// Whether no thread can ever make progress: every unfinished thread spins on an event
    /// count or waits at a barrier or lock, and no scheduler change is to come. (Waiting
    /// threads alone are caught when the event queue runs dry; spinning threads keep it
    /// busy, so they are checked here.)
    pub(super) fn stuck(&self) -> bool {
        self.scheduler.next_event().is_none()
            && self.pending_starts == 0
            && self.threads.iter().all(|t| {
                let spins_in_vain = t
                    .spin_on
                    .is_some_and(|(e, v)| self.event_value(t.prog, e) < v);
                (t.status != Status::Ready && t.status != Status::Sleeping)
                    || spins_in_vain
                    || t.proc.is_none()
            })
    }

    /// After a thread blocked: a deadlock error if spinning threads now wait forever.
    pub(super) fn unless_stuck(&self, now: Ns) -> Result<(), SimError> {
        if self.threads.iter().any(|t| t.spin_on.is_some()) && self.stuck() {
            return Err(self.deadlock(now));
        }
        Ok(())
    }

    /// Program `prog`'s event count `event` (0 until first advanced).
    pub(super) fn event_value(&self, prog: u32, event: u32) -> u32 {
        self.progs[prog as usize]
            .events
            .get(event as usize)
            .copied()
            .unwrap_or(0)
    }

    /// A run of `count` references to the thread's program page `local_vpn`; returns
    /// when it ends (the cost path is the mechanism's, [`MemSystem::reference`]).
    #[inline]
    pub(super) fn reference(
        &mut self,
        tid: u32,
        now: Ns,
        local_vpn: Vpn,
        write: bool,
        count: u32,
    ) -> Result<Ns, SimError> {
        let (node, vpn) = self.global_vpn(tid, local_vpn, "referenced")?;
        self.memory_run(tid, now, node, vpn, write, count)
    }

    /// [`Engine::reference`] for a run whose mapping allows it (no fault), with no
    /// hardware counters or observer to tell: the reference path's work for it
    /// ([`MemSystem::reference`]: entry lock, price, occupancy, counts, history, user
    /// run) in the thread's loop, not behind a call; `None` (and nothing done) otherwise.
    #[inline(always)]
    fn plain_reference(
        &mut self,
        tid: u32,
        now: Ns,
        local_vpn: Vpn,
        write: bool,
        count: u32,
    ) -> Option<Ns> {
        if !self.plain_allowed() {
            return None;
        }
        self.allowed_run::<false>(tid, now, local_vpn, write, count)
    }

    /// Whether the reference path has no part that a run can skip only by looking:
    /// no page-table-entry copies, contention, clock interrupts, reference history,
    /// per-page statistics or access monitors. Fixed for a run (each comes from its
    /// configuration or its policy); the lane then runs a copy of itself without those looks
    /// ([`Engine::allowed_run`] with `BARE`).
    pub(super) fn bare_reference_path(&self) -> bool {
        !self.mm.mem.has_entries()
            && !self.mm.machine.config.contention
            && self.ticks.is_none()
            && self.mm.hist.mode() == crate::history::HistoryMode::None
            && self.stats.pages.is_empty()
            && self.mm.monitors.is_none()
    }

    /// Whether a reference run may take [`Engine::allowed_run`]: no hardware counters or
    /// observer to tell, no processor caches to go through.
    #[inline(always)]
    pub(super) fn plain_allowed(&self) -> bool {
        self.observer.is_none() && self.mm.counters.is_none() && self.mm.caches.is_none()
    }

    /// [`Engine::plain_reference`] once [`Engine::plain_allowed`] holds; with `BARE`, for
    /// a run whose reference path is bare ([`Engine::bare_reference_path`]).
    #[inline(always)]
    fn allowed_run<const BARE: bool>(
        &mut self,
        tid: u32,
        now: Ns,
        local_vpn: Vpn,
        write: bool,
        count: u32,
    ) -> Option<Ns> {
        let th = &mut self.threads[tid as usize];
        let vpn = Vpn(th.base_vpn.checked_add(local_vpn.0)?);
        if vpn.idx() >= self.mm.mem.npages() {
            return None;
        }
        let node = th.node;
        let target = self.mm.mem.reaches(vpn, node, write)?;
        let mut t = now;
        let entries = !BARE && self.mm.mem.has_entries();
        if entries {
            // The entry copy the run goes through, while a daemon holds it.
            let locked = self.mm.mem.pte_locked_until(vpn, node);
            if locked > t {
                th.stats.pte_wait_ns += (locked - t).0;
                t = locked;
            }
        }
        let (mut per_word, class) = self.mm.price(node, target, vpn, write);
        if !BARE && self.mm.machine.config.contention && class != crate::stats::RefClass::Cached {
            let remote = class == crate::stats::RefClass::Remote;
            t = self
                .mm
                .occupy(&mut th.stats, node, target, remote, count, t);
        }
        if !BARE {
            if let Some(m) = self.mm.monitors.as_deref_mut() {
                per_word += m.reference_run(tid, node, target, vpn, write, count, per_word, t);
            }
        }
        // Saturating: an absurd cost reaches TIME_LIMIT and is reported, never wraps.
        let end = t + Ns(per_word.saturating_mul(count as u64));
        if entries {
            let run = crate::memory::UserRun {
                thread: tid,
                start: t,
                end,
                per_access: Ns(per_word),
            };
            self.mm.mem.record_user_run(vpn, node, run);
        }
        let c = count as u64;
        th.stats.refs.add(class, c);
        self.stats.refs.add(class, c);
        if !BARE {
            if let Some(r) = self.stats.pages.get_mut(vpn.idx()) {
                r.refs.add(class, c);
            }
            self.mm.hist.record(vpn, node, count);
        }
        if write {
            self.mm.mem.mark_written(vpn);
        }
        Some(end)
    }

    /// [`Engine::reference`] on a machine with processor caches: the run walks
    /// `span` bytes of the page from `at` (see [`Op::Ref`]).
    #[inline(never)]
    pub(super) fn reference_cached(
        &mut self,
        tid: u32,
        now: Ns,
        local_vpn: Vpn,
        write: bool,
        count: u32,
        (at, span): (u32, u32),
    ) -> Result<Ns, SimError> {
        let (node, vpn) = self.global_vpn(tid, local_vpn, "referenced")?;
        match self.through_cache(tid, node, vpn, write, count, at, span) {
            Ok(hit_time) => Ok(now + hit_time),
            Err((misses, hit_time)) => {
                Ok(self.memory_run(tid, now, node, vpn, write, misses)? + hit_time)
            }
        }
    }

    /// A run of `count` references that reaches memory (the mechanism's cost path,
    /// [`MemSystem::reference`]); returns when it ends.
    #[inline]
    fn memory_run(
        &mut self,
        tid: u32,
        now: Ns,
        node: NodeId,
        vpn: Vpn,
        write: bool,
        count: u32,
    ) -> Result<Ns, SimError> {
        let th = &mut self.threads[tid as usize];
        let end = self
            .mm
            .reference(
                self.policy.as_mut(),
                &mut self.stats,
                &mut th.stats,
                tid,
                node,
                vpn,
                write,
                count,
                now,
            )
            .map_err(|_| SimError::Policy {
                policy: self.policy.name().into(),
                message: format!("page {} left unmapped on node {node} after a fault", vpn.0),
            })?;
        if let Some(obs) = self.observer.as_mut().filter(|_| count > 0) {
            observe(
                obs.as_mut(),
                &self.mm,
                tid,
                node,
                vpn,
                write,
                count,
                now,
                end,
            );
        }
        self.apply_delays();
        Ok(end)
    }

    /// A run through the thread's processor cache. Only the lines that miss reach memory,
    /// one access a line: `Err((misses, time of the hits))`. A run that hits throughout
    /// costs its hits, `Ok(time)`, unless the mapping no longer allows it (the
    /// translation still faults): then it goes to memory with no words.
    #[allow(clippy::too_many_arguments)]
    fn through_cache(
        &mut self,
        tid: u32,
        node: NodeId,
        vpn: Vpn,
        write: bool,
        count: u32,
        at: u32,
        span: u32,
    ) -> Result<Ns, (u32, Ns)> {
        let th = &self.threads[tid as usize];
        let cfg = &self.mm.machine.config.cache;
        let bytes = match span {
            0 => count as u64 * self.progs[th.prog as usize].ref_bytes,
            s => s as u64,
        };
        let first = at as u64 / cfg.line_bytes;
        let end = (at as u64 + bytes).div_ceil(cfg.line_bytes);
        let proc = th.proc.map_or(0, |p| p.idx());
        let hit_ns = cfg.hit_ns;
        let Some(caches) = self.mm.caches.as_mut() else {
            return Err((count, Ns::ZERO));
        };
        let (hits, misses) = caches.access(proc, vpn.0, first, end - first, write);
        let hit_time = Ns(hits.saturating_mul(hit_ns));
        if misses == 0 && self.mm.mem.reaches(vpn, node, write).is_some() {
            return Ok(hit_time);
        }
        Err((misses as u32, hit_time))
    }

    /// Thread `tid`'s node and the run's page for its program page `local_vpn`; a page
    /// outside the program's address space is the workload's error (`what` it did).
    #[inline]
    fn global_vpn(&self, tid: u32, local_vpn: Vpn, what: &str) -> Result<(NodeId, Vpn), SimError> {
        let th = &self.threads[tid as usize];
        match th.base_vpn.checked_add(local_vpn.0) {
            Some(v) if (v as usize) < self.mm.mem.npages() => Ok((th.node, Vpn(v))),
            _ => Err(outside(tid, local_vpn, what)),
        }
    }

    pub(super) fn advise(&mut self, tid: u32, local_vpn: Vpn, now: Ns) -> Result<Ns, SimError> {
        let (node, vpn) = self.global_vpn(tid, local_vpn, "advised")?;
        let (policy, mut ctx) = self.ctx(now, node);
        policy.on_advise(&mut ctx, ThreadId(tid), vpn);
        let end = now + ctx.cost;
        self.apply_delays();
        Ok(end)
    }

    /// Hands pending page-table-entry delays to the threads they hold up.
    pub(super) fn apply_delays(&mut self) {
        if !self.mm.mem.has_delays() {
            return;
        }
        for (t, d) in self.mm.mem.take_delays() {
            if let Some(th) = self.threads.get_mut(t as usize) {
                th.delay += d;
            }
        }
    }

    pub(super) fn iteration_end(&mut self, tid: u32, k: u32, now: Ns) -> Ns {
        let th = &self.threads[tid as usize];
        let (pi, node) = (th.prog as usize, th.node);
        let p = &mut self.progs[pi];
        if p.iter_arrivals.len() <= k as usize {
            p.iter_arrivals.resize(k as usize + 1, 0);
        }
        p.iter_arrivals[k as usize] += 1;
        if p.iter_arrivals[k as usize] < p.prog.iteration_parties(k).unwrap_or(p.threads) {
            return now;
        }
        self.series_point(pi as u32, k, now);
        let construct = self.threads[tid as usize].construct;
        let (policy, mut ctx) = self.ctx(now, node);
        policy.on_iteration_end(&mut ctx, pi as u32, k, construct);
        let end = now + ctx.cost;
        self.apply_delays();
        end
    }

    pub(super) fn series_point(&mut self, program: u32, iteration: u32, now: Ns) {
        let (refs0, ev0) = self.last_point;
        let mut arrays = Vec::new();
        if let Some(p) = self.progs.get_mut(program as usize) {
            for (name, first, end, last) in p.arrays.iter_mut() {
                let mut now_refs = RefCounts::default();
                for r in
                    &self.stats.pages[*first as usize..(*end as usize).min(self.stats.pages.len())]
                {
                    now_refs.add_all(&r.refs);
                }
                arrays.push(crate::stats::ArrayRefs {
                    name: name.clone(),
                    refs: now_refs.minus(last),
                });
                *last = now_refs;
            }
        }
        let program_refs = match self.progs.get_mut(program as usize) {
            Some(p) => {
                let first = p.first_thread as usize;
                let mut now_refs = RefCounts::default();
                for t in &self.threads[first..first + p.threads as usize] {
                    now_refs.add_all(&t.stats.refs);
                }
                let delta = now_refs.minus(&p.last_refs);
                p.last_refs = now_refs;
                delta
            }
            None => RefCounts::default(),
        };
        self.stats.series.push(SeriesPoint {
            program,
            iteration,
            time_ns: now.0,
            refs: self.stats.refs.minus(&refs0),
            program_refs,
            events: self.stats.events.minus(&ev0),
            arrays,
        });
        self.last_point = (self.stats.refs, self.stats.events);
    }

    pub(super) fn finish_thread(&mut self, tid: u32, now: Ns) {
        self.set_status(tid, Status::Done);
        let th = &mut self.threads[tid as usize];
        th.stats.completion_ns = now.0;
        th.stats.node = th.node.0;
        self.done += 1;
        self.stats.makespan_ns = self.stats.makespan_ns.max(now.0);
        let pi = th.prog as usize;
        let p = &mut self.progs[pi];
        p.live -= 1;
        if p.live > 0 && p.barrier_waiting.len() as u32 >= p.live {
            self.release_barrier(pi, u32::MAX, now);
        }
        self.thread_changed(tid, ThreadChange::Finished, now);
    }
}

/// Tells the observer of a completed run (kept out of line: the engine without an
/// observer pays only the branch at the call).
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn observe(
    obs: &mut dyn crate::observe::RefObserver,
    mm: &MemSystem,
    thread: u32,
    node: NodeId,
    vpn: Vpn,
    write: bool,
    count: u32,
    start: Ns,
    end: Ns,
) {
    obs.reference(&crate::observe::ObservedRun {
        start,
        end,
        thread,
        node,
        vpn,
        write,
        count,
        target: mm.mem.mapping(vpn, node).target,
        copies: mm.mem.page(vpn).copies,
    });
}

#[cold]
fn outside(tid: u32, local_vpn: Vpn, what: &str) -> SimError {
    SimError::Policy {
        policy: "workload".into(),
        message: format!(
            "thread {tid} {what} page {} outside its address space",
            local_vpn.0
        ),
    }
}
