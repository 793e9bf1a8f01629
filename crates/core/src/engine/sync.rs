//! Synchronisation: barriers and locks, where threads block until released.

use super::*;

impl Engine {
    /// Arrival at the program's barrier; returns whether the thread continues now.
    pub(super) fn barrier(&mut self, tid: u32, now: Ns) -> bool {
        let pi = self.threads[tid as usize].prog as usize;
        self.progs[pi].barrier_waiting.push(tid);
        if self.progs[pi].barrier_waiting.len() as u32 >= self.progs[pi].live {
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
