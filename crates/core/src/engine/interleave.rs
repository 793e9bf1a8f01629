//! Threads interleaving at reference runs and computation of any length, in the event
//! loop's order without the queue.
//!
//! A thread runs ahead through its operations until the next event comes at or before an
//! operation's end ([`Engine::lane`]). When several threads work side by side whose clocks
//! are a few nanoseconds apart (a recorded program's threads, with a run of references
//! and a nanosecond of computation between them), that is after nearly every operation:
//! each operation is an event, and each event a queue removal and insertion and a pass
//! through the event loop around a few dozen instructions of work. `rounds.rs` makes such
//! turns in bulk when every run takes the same time; here they may take any time.
//!
//! The *group* is the run of earliest events (the front of the queue's `run`) that are
//! steps of threads nothing stands in the way of (ready, owing no delay, their processors
//! free, not spinning), up to [`GROUP_AT_MOST`] of them; `Y` is the earliest other event.
//! The group's keys are kept here, in order, and handled as the event loop would handle
//! them: the earliest is the event, its thread runs its lane up to the next key's time
//! (the group's next or `Y`), and when it yields its next step gets the key the queue
//! would give it (the next sequence number). This goes on until `Y` or the run's stop
//! comes first, the monitor is due, or a thread needs what only the event loop does (a
//! new buffer of operations, an operation its lane does not take, a fault). Only
//! reference runs and computation happen meanwhile, which change no thread's status,
//! processor or delay, schedule no event and touch no other thread's operations; so the
//! group's keys are all the queue's order needs. The queue is then left as the events one by one leave it: the group's
//! keys, in place of theirs, with the sequence numbers they used. A thread that stopped
//! at an operation its lane does not take is the event being handled then, and goes on
//! through the general loop from where its lane stopped.
//!
//! A round of `rounds.rs` costs less than a step here, so this is tried only while rounds
//! keep finding no group (their wait is the longest), and then, like them, waits longer
//! after each attempt that makes nothing.

use super::event::{code_of, key, thread_of, time_of};
use super::ops::Lane;
use super::*;

/// Most threads a group holds: with many threads `Y` (the next thread's step) comes
/// soon anyway. A power of two, the slots of the group's ring.
const GROUP_AT_MOST: usize = 16;
const _: () = assert!(GROUP_AT_MOST.is_power_of_two());

/// Most events one interleaving handles (so it can check once that the queue's sequence
/// numbers last).
const EVENTS_AT_MOST: u64 = 1 << 24;

/// Most thread steps let pass between attempts that make nothing.
const BACKOFF_AT_MOST: u8 = 63;

/// The group's keys in order, in a ring: the handled key leaves the front and the
/// thread's next one is inserted from the back, past the keys later than it (threads
/// taking turns at one pace move none).
struct Group {
    keys: [u128; GROUP_AT_MOST],
    head: usize,
    len: usize,
}

/// Slot of a ring position.
const MASK: usize = GROUP_AT_MOST - 1;

impl Group {
    #[inline(always)]
    fn at(&self, i: usize) -> u128 {
        self.keys[(self.head + i) & MASK]
    }

    /// Replaces the earliest key by `k`, which is later than it.
    #[inline(always)]
    fn replace_front(&mut self, k: u128) {
        self.head = (self.head + 1) & MASK;
        let mut i = self.len - 1;
        while i > 0 {
            let earlier = self.at(i - 1);
            if earlier < k {
                break;
            }
            self.keys[(self.head + i) & MASK] = earlier;
            i -= 1;
        }
        self.keys[(self.head + i) & MASK] = k;
    }
}

impl Engine {
    /// Handles the events of the group led by thread `tid`'s step at `now` (the event
    /// being handled) while it leads; returns whether it did (else nothing changed and the
    /// event is handled as usual).
    pub(super) fn run_interleaved(&mut self, tid: u32, now: Ns) -> Result<bool, SimError> {
        if self.interleave_backoff.waiting() {
            return Ok(false);
        }
        let handled = self.interleave(tid, now)?;
        self.interleave_backoff
            .after(handled == Some(true), BACKOFF_AT_MOST);
        Ok(handled.is_some())
    }

    /// `None` when the group has fewer than two threads (nothing done); else whether
    /// steps were made beyond the leader's first lane (the event is handled either way).
    fn interleave(&mut self, tid: u32, now: Ns) -> Result<Option<bool>, SimError> {
        if !self.plain_allowed() || !self.queue.has_seq_room(EVENTS_AT_MOST) {
            return Ok(None);
        }
        let th = &self.threads[tid as usize];
        if th.spin_on.is_some() || th.pos >= th.buf.len() {
            return Ok(None);
        }
        let Some((run, heap_first)) = self.queue.held_run() else {
            return Ok(None);
        };
        let mut g = Group {
            keys: [0; GROUP_AT_MOST],
            head: 0,
            len: 0,
        };
        for &k in run.iter().take(GROUP_AT_MOST) {
            if heap_first.is_some_and(|h| h < k) {
                break;
            }
            let Some(t) = thread_of(code_of(k)) else {
                break;
            };
            match self.unhindered(t, time_of(k)) {
                Some((th, _)) if th.spin_on.is_none() => {
                    g.keys[g.len] = k;
                    g.len += 1;
                }
                _ => break,
            }
        }
        let m = g.len;
        if m < 2 {
            return Ok(None);
        }
        let y = match (run.get(m), heap_first) {
            (Some(&r), Some(h)) => r.min(h),
            (r, h) => r.copied().or(h).unwrap_or(u128::MAX),
        };
        debug_assert_eq!(thread_of(code_of(g.at(0))), Some(tid));
        debug_assert_eq!(time_of(g.at(0)), now);

        let base = self.queue.seq();
        let mut used = 0u64;
        // The first event was taken (and counted) by the event loop.
        let mut first = true;
        let stopped = loop {
            let k = g.at(0);
            let (t, x) = (time_of(k), code_of(k));
            if !first {
                let th = &self.threads[x as usize];
                if k > y
                    || t.0 >= self.stop_at
                    || self.stats.ops + self.events + 1 >= self.next_poll
                    || used == EVENTS_AT_MOST
                    || th.pos >= th.buf.len()
                {
                    break None;
                }
                self.events += 1;
                self.now = t;
            }
            first = false;
            let limit = time_of(g.at(1).min(y)).0.min(self.stop_at);
            let proc = self.threads[x as usize]
                .proc
                .expect("an unhindered thread")
                .idx();
            let lane = if self.bare {
                self.lane::<true>(x, proc, t, limit)
            } else {
                self.lane::<false>(x, proc, t, limit)
            };
            match lane {
                Lane::Yields(next) => {
                    used += 1;
                    g.replace_front(key(next, base + used, x));
                }
                Lane::At(at) | Lane::Faults(at, ..) => break Some((x, at)),
            }
        };
        if used > 0 {
            let keys: [u128; GROUP_AT_MOST] = std::array::from_fn(|i| g.at(i));
            self.queue.replace_held_run(m, &keys[..m], used);
        }
        let Some((x, at)) = stopped else {
            return Ok(Some(true));
        };
        // Thread `x` is the event being handled, stopped at an operation its lane does
        // not take (or one that faults, or its buffer's end): it goes on through the
        // general loop from there, as after its lane. (When it is the leader and nothing
        // else was made, the queue is as the event loop left it, with its event held.)
        if used > 0 {
            let taken = self.queue.take();
            debug_assert_eq!(taken.map(|(_, e)| e), Some(Event::Thread(x)));
        }
        self.step_taken(x, at)?;
        Ok(Some(used > 0))
    }
}
