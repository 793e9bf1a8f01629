//! The engine's events and their queue.
//!
//! Events are ordered by (time, sequence number): simultaneous events run in the order
//! they were scheduled, so a run is reproducible bit for bit. The event itself never
//! takes part in the order (sequence numbers are unique). Inside the queue an event is
//! a `u32` code: the heap's comparisons and moves stay those of plain integers, which
//! measurably beats storing the enum (the queue is the engine's hottest structure).

use crate::types::Ns;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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

const DAEMON_BASE: u32 = 1 << 30;
const START_BASE: u32 = 1 << 31;
const SCHED: u32 = u32::MAX;
const TICK: u32 = u32::MAX - 1;

impl Event {
    /// The queue's code: threads below 2^30 (a run has at most 65,536 threads), daemons
    /// from 2^30, program starts from 2^31, the scheduler and the tick at the top.
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

/// The pending events, earliest first.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: BinaryHeap<Reverse<(Ns, u64, u32)>>,
    seq: u64,
}

impl EventQueue {
    /// Schedules `event` at `at`, after every event already scheduled for `at`.
    #[inline]
    pub(crate) fn push(&mut self, at: Ns, event: Event) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, event.code())));
    }

    /// The earliest event and its time.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(Ns, Event)> {
        self.heap
            .pop()
            .map(|Reverse((t, _, c))| (t, Event::from_code(c)))
    }

    /// When the earliest event happens.
    #[inline]
    pub(crate) fn next_time(&self) -> Option<Ns> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
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
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
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
}
