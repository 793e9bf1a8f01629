//! Synchronisation: barriers and locks, where threads block until released.

use super::*;

impl Engine {
    /// Arrival at the program's barrier; returns whether the thread continues now.
    pub(super) fn barrier(&mut self, tid: u32, now: Ns) -> bool {
        let th = &self.threads[tid as usize];
        let (pi, local) = (th.prog as usize, th.local);
        let p = &mut self.progs[pi];
        p.barrier_waiting.push(tid);
        // An adaptive program's barrier waits for the construct's team only.
        let parties = p
            .prog
            .barrier_parties(local)
            .map_or(p.live, |n| n.min(p.live));
        if p.barrier_waiting.len() as u32 >= parties {
            self.release_barrier(pi, tid, now);
            true
        } else {
            self.threads[tid as usize].blocked_at = now;
            self.set_status(tid, Status::AtBarrier);
            self.thread_changed(tid, ThreadChange::Blocked, now);
            false
        }
    }

    pub(super) fn release_barrier(&mut self, pi: usize, except: u32, now: Ns) {
        let waiting = std::mem::take(&mut self.progs[pi].barrier_waiting);
        for &w in &waiting {
            if w != except {
                self.unblock(w, now);
            }
        }
        let mut waiting = waiting;
        waiting.clear();
        self.progs[pi].barrier_waiting = waiting;
    }

    pub(super) fn lock_slot(&mut self, tid: u32, l: u32) -> (usize, usize) {
        let pi = self.threads[tid as usize].prog as usize;
        let locks = &mut self.progs[pi].locks;
        if locks.len() <= l as usize {
            locks.resize_with(l as usize + 1, || (None, VecDeque::new()));
        }
        (pi, l as usize)
    }

    pub(super) fn lock(&mut self, tid: u32, l: u32, now: Ns) -> bool {
        let (pi, li) = self.lock_slot(tid, l);
        let slot = &mut self.progs[pi].locks[li];
        if slot.0.is_none() {
            slot.0 = Some(tid);
            true
        } else {
            slot.1.push_back(tid);
            self.threads[tid as usize].blocked_at = now;
            self.set_status(tid, Status::AtLock);
            self.thread_changed(tid, ThreadChange::Blocked, now);
            false
        }
    }

    pub(super) fn unlock(&mut self, tid: u32, l: u32, now: Ns) {
        let (pi, li) = self.lock_slot(tid, l);
        let slot = &mut self.progs[pi].locks[li];
        if slot.0 != Some(tid) {
            return;
        }
        slot.0 = slot.1.pop_front();
        if let Some(next) = slot.0 {
            self.unblock(next, now);
        }
    }

    /// [`Op::Await`]: whether the thread continues now (the count has the value already);
    /// otherwise it blocks until an advance reaches it.
    pub(super) fn await_event(&mut self, tid: u32, event: u32, at_least: u32, now: Ns) -> bool {
        let prog = self.threads[tid as usize].prog;
        if self.event_value(prog, event) >= at_least {
            return true;
        }
        self.progs[prog as usize]
            .awaiting
            .push((tid, event, at_least));
        self.threads[tid as usize].blocked_at = now;
        self.set_status(tid, Status::AtEvent);
        self.thread_changed(tid, ThreadChange::Blocked, now);
        false
    }

    /// After program `pi`'s event count `event` advanced: releases the threads awaiting
    /// the value it reached, in the order they began to wait.
    pub(super) fn release_awaiting(&mut self, pi: usize, event: u32, now: Ns) {
        let value = self.progs[pi].events[event as usize];
        let mut i = 0;
        while i < self.progs[pi].awaiting.len() {
            let (t, e, v) = self.progs[pi].awaiting[i];
            if e == event && value >= v {
                self.progs[pi].awaiting.remove(i);
                self.unblock(t, now);
            } else {
                i += 1;
            }
        }
    }

    /// The thread waits for input or output until `now + d` ([`Op::Sleep`]): it is not
    /// runnable meanwhile; the scheduler is told, and may give its processor away.
    pub(super) fn sleep(&mut self, tid: u32, d: Ns, now: Ns) {
        self.threads[tid as usize].blocked_at = now;
        self.set_status(tid, Status::Sleeping);
        self.queue_thread(tid, now + d);
        self.thread_changed(tid, ThreadChange::Sleeps, now);
    }

    /// A sleeping thread's wait is over (its queued event came): it is runnable again
    /// and the scheduler is told.
    pub(super) fn wake(&mut self, tid: u32, now: Ns) {
        let th = &mut self.threads[tid as usize];
        th.stats.sync_wait_ns += (now - th.blocked_at).0;
        self.set_status(tid, Status::Ready);
        self.thread_changed(tid, ThreadChange::Wakes, now);
    }

    /// A blocked thread is released: it may run again (queued if it has a processor),
    /// and the scheduler is told.
    fn unblock(&mut self, tid: u32, now: Ns) {
        let th = &mut self.threads[tid as usize];
        th.stats.sync_wait_ns += (now - th.blocked_at).0;
        self.set_status(tid, Status::Ready);
        if self.threads[tid as usize].proc.is_some() {
            self.queue_thread(tid, now);
        }
        self.thread_changed(tid, ThreadChange::Unblocked, now);
    }
}
