//! The engine's events and their queue.
//!
//! Events are ordered by (time, sequence number): simultaneous events run in the order
//! they were scheduled, so a run is reproducible bit for bit. The event itself never
//! takes part in the order (sequence numbers are unique). Inside the queue an event is
//! one `u128` key (time, sequence, code): the heap's comparisons and moves are those of
//! plain integers (the queue is the engine's hottest structure).

use crate::types::Ns;

/// Something that happens at a point in simulated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// Thread `0` executes its next operation (ops, faults and synchronisation happen
    /// inside it).
    Thread(u32),
    /// A policy daemon wakes for a step.
    Daemon(u32),
    /// The scheduler's next change is due.
    Sched,
    /// Program `0` starts: its threads are created.
    Start(u32),
    /// A fixed-interval series point is due.
    Tick,
}

// Codes fit in the key's low 24 bits: threads below 2^16 (a run has at most 65,536),
// daemons from 2^16, program starts from 2^22, the scheduler and the tick at the top.
const DAEMON_BASE: u32 = 1 << 16;
const START_BASE: u32 = 1 << 22;
const SCHED: u32 = (1 << CODE_BITS) - 1;
const TICK: u32 = (1 << CODE_BITS) - 2;
const CODE_BITS: u32 = 24;
/// Most daemons a policy may run (their codes lie between the threads' and the starts').
pub(crate) const MAX_DAEMONS: usize = (START_BASE - DAEMON_BASE) as usize;
const SEQ_BITS: u32 = 40;

impl Event {
    /// The queue's code (see the constants above).
    #[inline]
    fn code(self) -> u32 {
        match self {
            Event::Thread(t) => t,
            Event::Daemon(d) => DAEMON_BASE + d,
            Event::Start(p) => START_BASE + p,
            Event::Sched => SCHED,
            Event::Tick => TICK,
        }
    }

    #[inline]
    fn from_code(c: u32) -> Event {
        match c {
            SCHED => Event::Sched,
            TICK => Event::Tick,
            c if c >= START_BASE => Event::Start(c - START_BASE),
            c if c >= DAEMON_BASE => Event::Daemon(c - DAEMON_BASE),
            t => Event::Thread(t),
        }
    }
}

/// An event's key: time in the high 64 bits, then the sequence number, then the code, so
/// one integer comparison orders by (time, sequence).
#[inline]
fn key(at: Ns, seq: u64, code: u32) -> u128 {
    ((at.0 as u128) << 64) | ((seq as u128) << CODE_BITS) | code as u128
}

#[inline]
fn time_of(k: u128) -> Ns {
    Ns((k >> 64) as u64)
}

#[inline]
fn code_of(k: u128) -> u32 {
    (k as u32) & ((1 << CODE_BITS) - 1)
}

/// The pending events, earliest first: a binary min-heap of integer keys.
///
/// The event being handled stays at the top while it is handled ([`EventQueue::take`]):
/// most handlers schedule the same event again (a thread's next step, a daemon's next
/// wake-up), and then its key is replaced in place and sifted down once, instead of a
/// removal and an insertion. Every other event is later than the held one (nothing is
/// scheduled in the past, and a later push has a larger sequence number), so the held
/// event stays at the top while it is handled.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: Vec<u128>,
    seq: u64,
    /// The code of the event at the top that is being handled.
    held: Option<u32>,
}

impl EventQueue {
    /// Schedules `event` at `at`, after every event already scheduled for `at`.
    #[inline]
    pub(crate) fn push(&mut self, at: Ns, event: Event) {
        if self.seq + 1 >= 1 << SEQ_BITS {
            self.renumber();
        }
        self.seq += 1;
        let code = event.code();
        let k = key(at, self.seq, code);
        if self.held == Some(code) {
            self.held = None;
            self.heap[0] = k;
            self.sift_down(0);
        } else {
            self.heap.push(k);
            self.sift_up(self.heap.len() - 1);
        }
    }

    /// The earliest event and its time, left at the top while it is handled: scheduling
    /// it again replaces it there; [`EventQueue::release`] removes it otherwise.
    #[inline]
    pub(crate) fn take(&mut self) -> Option<(Ns, Event)> {
        self.release();
        let &k = self.heap.first()?;
        self.held = Some(code_of(k));
        Some((time_of(k), Event::from_code(code_of(k))))
    }

    /// Removes the event handled last unless it was scheduled again.
    #[inline]
    pub(crate) fn release(&mut self) {
        if self.held.take().is_some() {
            let last = self.heap.pop().expect("a held event is in the heap");
            if !self.heap.is_empty() {
                self.heap[0] = last;
                self.sift_down(0);
            }
        }
    }

    /// When the earliest event other than the one being handled happens.
    #[inline]
    pub(crate) fn next_time(&self) -> Option<Ns> {
        let k = if self.held.is_some() {
            // The second smallest key of a heap is one of the top's children.
            match (self.heap.get(1), self.heap.get(2)) {
                (Some(&a), Some(&b)) => a.min(b),
                (Some(&a), None) => a,
                _ => return None,
            }
        } else {
            *self.heap.first()?
        };
        Some(time_of(k))
    }

    #[inline]
    fn sift_up(&mut self, mut i: usize) {
        let k = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[parent] <= k {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = k;
    }

    #[inline]
    fn sift_down(&mut self, mut i: usize) {
        // On a local slice the compiler knows the length stays put, so the checks of
        // the indices below fold into the loop's own bounds.
        let heap = &mut self.heap[..];
        let n = heap.len();
        let k = heap[i];
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let mut c = l;
            if l + 1 < n && heap[l + 1] < heap[l] {
                c = l + 1;
            }
            let kc = heap[c];
            if kc >= k {
                break;
            }
            heap[i] = kc;
            i = c;
        }
        heap[i] = k;
    }

    #[cold]
    fn renumber(&mut self) {
        self.heap.sort_unstable();
        let held = self.held.is_some();
        for (i, k) in self.heap.iter_mut().enumerate() {
            *k = key(time_of(*k), i as u64 + 1, code_of(*k));
        }
        self.seq = self.heap.len() as u64;
        // A sorted vector is a heap, and the held event is still its first element.
        debug_assert!(!held || self.heap.first().map(|&k| Some(code_of(k))) == Some(self.held));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_survives_its_queue_code() {
        for e in [
            Event::Thread(0),
            Event::Thread(65_535),
            Event::Daemon(0),
            Event::Daemon(7),
            Event::Start(0),
            Event::Start(65_535),
            Event::Sched,
            Event::Tick,
        ] {
            assert_eq!(Event::from_code(e.code()), e);
        }
    }

    #[test]
    fn simultaneous_events_leave_the_queue_in_the_order_they_entered() {
        let mut q = EventQueue::default();
        q.push(Ns(5), Event::Tick);
        q.push(Ns(3), Event::Daemon(1));
        q.push(Ns(5), Event::Thread(2));
        q.push(Ns(5), Event::Sched);
        let order: Vec<_> = std::iter::from_fn(|| q.take()).collect();
        assert_eq!(
            order,
            [
                (Ns(3), Event::Daemon(1)),
                (Ns(5), Event::Tick),
                (Ns(5), Event::Thread(2)),
                (Ns(5), Event::Sched),
            ]
        );
    }

    #[test]
    fn an_event_scheduled_again_while_handled_takes_its_new_place() {
        let mut q = EventQueue::default();
        q.push(Ns(1), Event::Thread(0));
        q.push(Ns(4), Event::Thread(1));
        assert_eq!(q.take(), Some((Ns(1), Event::Thread(0))));
        q.push(Ns(6), Event::Thread(0));
        let order: Vec<_> = std::iter::from_fn(|| q.take()).collect();
        assert_eq!(
            order,
            [(Ns(4), Event::Thread(1)), (Ns(6), Event::Thread(0))]
        );
    }

    #[test]
    fn an_event_not_scheduled_again_leaves_the_queue() {
        let mut q = EventQueue::default();
        q.push(Ns(1), Event::Daemon(0));
        q.push(Ns(2), Event::Tick);
        q.take();
        assert_eq!(q.take(), Some((Ns(2), Event::Tick)));
        assert_eq!(q.take(), None);
    }

    #[test]
    fn the_next_time_skips_the_event_being_handled() {
        let mut q = EventQueue::default();
        q.push(Ns(1), Event::Thread(0));
        q.push(Ns(9), Event::Thread(1));
        q.push(Ns(5), Event::Thread(2));
        q.take();
        assert_eq!(q.next_time(), Some(Ns(5)));
        q.release();
        assert_eq!(q.next_time(), Some(Ns(5)));
    }

    #[test]
    fn renumbering_keeps_the_order_of_simultaneous_events() {
        let mut q = EventQueue::default();
        q.push(Ns(5), Event::Thread(3));
        q.push(Ns(5), Event::Thread(1));
        q.push(Ns(2), Event::Thread(2));
        q.seq = (1 << SEQ_BITS) - 2;
        q.push(Ns(5), Event::Thread(0));
        let order: Vec<_> = std::iter::from_fn(|| q.take()).map(|(_, e)| e).collect();
        assert_eq!(
            order,
            [
                Event::Thread(2),
                Event::Thread(3),
                Event::Thread(1),
                Event::Thread(0)
            ]
        );
    }
}
