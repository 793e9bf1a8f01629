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
        // Threads' steps first: nearly every event is one.
        match c {
            t if t < DAEMON_BASE => Event::Thread(t),
            c if c < START_BASE => Event::Daemon(c - DAEMON_BASE),
            SCHED => Event::Sched,
            TICK => Event::Tick,
            c => Event::Start(c - START_BASE),
        }
    }
}

/// The thread of an event code, if it is a thread's step.
#[inline]
pub(super) fn thread_of(code: u32) -> Option<u32> {
    (code < DAEMON_BASE).then_some(code)
}

/// An event's key: time in the high 64 bits, then the sequence number, then the code, so
/// one integer comparison orders by (time, sequence).
#[inline]
pub(super) fn key(at: Ns, seq: u64, code: u32) -> u128 {
    ((at.0 as u128) << 64) | ((seq as u128) << CODE_BITS) | code as u128
}

#[inline]
pub(super) fn time_of(k: u128) -> Ns {
    Ns((k >> 64) as u64)
}

#[inline]
pub(super) fn code_of(k: u128) -> u32 {
    (k as u32) & ((1 << CODE_BITS) - 1)
}

/// Where the event being handled sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Held {
    /// No event is being handled (or it was scheduled again).
    No,
    /// At the front of the run of ascending keys.
    Run,
    /// At the top of the heap.
    Heap,
}

/// The pending events, earliest first.
///
/// Most events are scheduled later than every pending one: threads that take turns at
/// the same pace (one reference each, a poll each) schedule their next steps in the order
/// they run. Such keys are appended to `run`, a vector of ascending keys, in constant
/// time; while `run` is short an earlier key is inserted in its place (the keys on its
/// shorter side move by one), so a run with few events keeps them all in order, where
/// the bulk steps (`spin.rs`, `rounds.rs`) see them. Beyond that,
/// a key earlier than the last keys of `run` sends those to `heap`, a binary min-heap of
/// integer keys, and takes their place (each key goes to the heap at most once, and a
/// late key stays near the heap's bottom). The earliest event is the smaller of the two
/// fronts.
///
/// The event being handled stays at its front while it is handled ([`EventQueue::take`]):
/// most handlers schedule the same event again (a thread's next step, a daemon's next
/// wake-up), and then it leaves its place and the new key is inserted, with no separate
/// removal. Every other event is later than the held one (nothing is scheduled in the
/// past, and a later push has a larger sequence number), so the held event stays the
/// earliest while it is handled.
#[derive(Debug)]
pub(crate) struct EventQueue {
    run: Ring,
    heap: Vec<u128>,
    seq: u64,
    held: Held,
    /// The code of the event being handled, while `held` is not `No`.
    held_code: u32,
    /// The earliest key but the held one's, `STALE` once the queue changed: a thread
    /// running ahead asks after every operation, and nothing is scheduled meanwhile.
    next: u128,
}

/// `EventQueue::next` when there is no other event. No key is this large or the next
/// one down: their code bits are below the top codes.
const NONE: u128 = u128::MAX;
/// `EventQueue::next` when it is to be found again.
const STALE: u128 = u128::MAX - 1;

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            run: Ring::default(),
            heap: Vec::new(),
            seq: 0,
            held: Held::No,
            held_code: 0,
            next: STALE,
        }
    }
}

impl EventQueue {
    /// Schedules `event` at `at`, after every event already scheduled for `at`.
    #[inline]
    pub(crate) fn push(&mut self, at: Ns, event: Event) {
        self.next = STALE;
        if self.seq + 1 >= 1 << SEQ_BITS {
            self.renumber();
        }
        self.seq += 1;
        let code = event.code();
        let k = key(at, self.seq, code);
        if self.held != Held::No && self.held_code == code {
            // The held event scheduled again: it leaves its place for its new key.
            if self.held == Held::Run {
                self.held = Held::No;
                self.run.pop_front();
            } else if self.run.len() >= SORTED_AT_MOST && self.run.back().is_some_and(|b| b > k) {
                // Into the heap, from its top: the new key takes the top's place.
                self.held = Held::No;
                self.heap[0] = k;
                self.sift_down(0);
                return;
            } else {
                self.release();
            }
        }
        self.add(k);
    }

    /// Adds key `k` (not the held event's): appended to `run` when it is the latest, in
    /// its place while `run` is short (here, without a call), else through
    /// [`EventQueue::insert_early`].
    #[inline]
    fn add(&mut self, k: u128) {
        match self.run.back() {
            Some(b) if b > k && self.run.len() < SORTED_AT_MOST => self.run.insert(k),
            Some(b) if b > k => self.insert_early(k),
            _ => self.run.push_back(k),
        }
    }

    /// Inserts `k`, earlier than the last key of a `run` too long to insert into: when
    /// only a few keys of `run` are later (events scheduled far ahead), those move to the
    /// heap and `k` joins `run` after them, else `k` goes to the heap.
    #[inline(never)]
    fn insert_early(&mut self, k: u128) {
        let n = self.run.len();
        let later = (1..=n.min(DEMOTE_AT_MOST + 1))
            .take_while(|&i| self.run.keys[self.run.keys.len() - i] > k)
            .count();
        if later <= DEMOTE_AT_MOST {
            for _ in 0..later {
                let b = self.run.pop_back();
                self.heap_push(b);
            }
            self.run.push_back(k);
        } else {
            self.heap_push(k);
        }
    }

    /// The earliest event and its time, left in place while it is handled: scheduling
    /// it again moves it; [`EventQueue::release`] removes it otherwise.
    #[inline]
    pub(crate) fn take(&mut self) -> Option<(Ns, Event)> {
        self.release();
        self.next = STALE;
        let k = match (self.run.front(), self.heap.first()) {
            (Some(r), Some(&h)) if h < r => {
                self.held = Held::Heap;
                h
            }
            (Some(r), _) => {
                self.held = Held::Run;
                r
            }
            (None, Some(&h)) => {
                self.held = Held::Heap;
                h
            }
            (None, None) => return None,
        };
        self.held_code = code_of(k);
        Some((time_of(k), Event::from_code(code_of(k))))
    }

    /// Removes the event handled last unless it was scheduled again.
    #[inline]
    pub(crate) fn release(&mut self) {
        self.next = STALE;
        match std::mem::replace(&mut self.held, Held::No) {
            Held::No => {}
            Held::Run => {
                self.run.pop_front();
            }
            Held::Heap => self.pop_heap(),
        }
    }

    /// When the earliest event other than the one being handled happens.
    #[inline]
    pub(crate) fn next_time(&mut self) -> Option<Ns> {
        if self.next == STALE {
            self.next = self.next_key();
        }
        (self.next != NONE).then(|| time_of(self.next))
    }

    /// The earliest key other than the held one's, `NONE` when there is none.
    #[inline]
    fn next_key(&self) -> u128 {
        let skip = (self.held == Held::Run) as usize;
        let r = self
            .run
            .keys
            .get(self.run.head + skip)
            .copied()
            .unwrap_or(NONE);
        let h = if self.held == Held::Heap {
            // The second smallest key of a heap is one of the top's children.
            let a = self.heap.get(1).copied().unwrap_or(NONE);
            let b = self.heap.get(2).copied().unwrap_or(NONE);
            a.min(b)
        } else {
            self.heap.first().copied().unwrap_or(NONE)
        };
        r.min(h)
    }

    /// While the event being handled is the first of `run`: the keys of `run` (that
    /// event first) and the earliest key of the heap. The earliest events of the queue
    /// are the keys of `run` that come before the heap's earliest.
    pub(super) fn held_run(&self) -> Option<(&[u128], Option<u128>)> {
        (self.held == Held::Run)
            .then(|| (&self.run.keys[self.run.head..], self.heap.first().copied()))
    }

    /// When thread `t`'s pending step is due, if one is queued (a scan of the queue: for
    /// scheduler changes, not for every step).
    pub(super) fn pending_step(&self, t: u32) -> Option<Ns> {
        self.run.keys[self.run.head..]
            .iter()
            .chain(&self.heap)
            .find(|&&k| thread_of(code_of(k)) == Some(t))
            .map(|&k| time_of(k))
    }

    /// The last sequence number given.
    pub(super) fn seq(&self) -> u64 {
        self.seq
    }

    /// Whether `n` more sequence numbers can be given without renumbering.
    pub(super) fn has_seq_room(&self, n: u64) -> bool {
        self.seq.saturating_add(n) < (1 << SEQ_BITS) - 1
    }

    /// Replaces the first `m` keys of `run`, the held event's among them, by `keys`
    /// (ascending, with sequence numbers after the last one given, the last of them
    /// `seq() + used`): the same queue as handling those events one by one would leave
    /// when each was scheduled again with those keys.
    pub(super) fn replace_held_run(&mut self, m: usize, keys: &[u128], used: u64) {
        debug_assert_eq!(self.held, Held::Run);
        debug_assert!(self.has_seq_room(used));
        self.next = STALE;
        self.held = Held::No;
        self.seq += used;
        let (head, len) = (self.run.head, self.run.len());
        let ascending = keys.windows(2).all(|w| w[0] < w[1]);
        if keys.len() == m
            && ascending
            && (len == m || keys.last().is_some_and(|&k| k < self.run.keys[head + m]))
        {
            // The new keys take the old ones' places, before the rest of `run`.
            self.run.keys[head..head + m].copy_from_slice(keys);
            return;
        }
        for _ in 0..m {
            self.run.pop_front();
        }
        for &k in keys {
            self.add(k);
        }
    }

    #[inline]
    fn heap_push(&mut self, k: u128) {
        self.heap.push(k);
        self.sift_up(self.heap.len() - 1);
    }

    /// Removes the heap's top.
    #[inline]
    fn pop_heap(&mut self) {
        let last = self.heap.pop().expect("the heap is not empty");
        if !self.heap.is_empty() {
            self.heap[0] = last;
            self.sift_down(0);
        }
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
        // Every key in order, renumbered from 1: ascending keys are a valid `run`, and the
        // held event, the earliest, is still at its front.
        let mut all: Vec<u128> = self.run.drain();
        all.append(&mut self.heap);
        all.sort_unstable();
        for (i, k) in all.iter_mut().enumerate() {
            *k = key(time_of(*k), i as u64 + 1, code_of(*k));
        }
        self.seq = all.len() as u64;
        if self.held != Held::No {
            debug_assert_eq!(all.first().map(|&k| code_of(k)), Some(self.held_code));
            self.held = Held::Run;
        }
        for k in all {
            self.run.push_back(k);
        }
    }
}

/// Most keys moved from the end of `run` to the heap for one earlier key.
const DEMOTE_AT_MOST: usize = 16;

/// Longest `run` into which a key is inserted in its place (beyond it, earlier keys go
/// through the heap).
const SORTED_AT_MOST: usize = 64;

/// The queue's `run`: ascending keys in `keys[head..]`. The front leaves by advancing
/// `head`; the space before it is reclaimed once it is as large as what is left, so
/// every operation is a constant amount of work on average.
#[derive(Debug, Default)]
struct Ring {
    keys: Vec<u128>,
    head: usize,
}

impl Ring {
    #[inline]
    fn len(&self) -> usize {
        self.keys.len() - self.head
    }

    /// Inserts `k` in its place, moving the keys on the shorter side of it by one: the
    /// earlier ones down into the space before `head` when `k` is in the first half and
    /// there is space, else the later ones up.
    #[inline]
    fn insert(&mut self, k: u128) {
        let (head, n) = (self.head, self.len());
        if head > 0 && k < self.keys[head + n / 2] {
            let keys = &mut self.keys[head - 1..];
            let mut i = 0;
            while keys[i + 1] < k {
                keys[i] = keys[i + 1];
                i += 1;
            }
            keys[i] = k;
            self.head -= 1;
            return;
        }
        self.keys.push(k);
        let keys = &mut self.keys[head..];
        let mut i = keys.len() - 1;
        while i > 0 && keys[i - 1] > k {
            keys[i] = keys[i - 1];
            i -= 1;
        }
        keys[i] = k;
    }

    #[inline]
    fn front(&self) -> Option<u128> {
        self.keys.get(self.head).copied()
    }

    /// The last key (the vector is empty whenever `run` is: see `pop_front`).
    #[inline]
    fn back(&self) -> Option<u128> {
        self.keys.last().copied()
    }

    #[inline]
    fn push_back(&mut self, k: u128) {
        self.keys.push(k);
    }

    #[inline]
    fn pop_front(&mut self) {
        self.head += 1;
        if self.head == self.keys.len() {
            self.keys.clear();
            self.head = 0;
        } else if self.head >= 32 && 2 * self.head >= self.keys.len() {
            self.compact();
        }
    }

    #[cold]
    fn compact(&mut self) {
        self.keys.drain(..self.head);
        self.head = 0;
    }

    #[inline]
    fn pop_back(&mut self) -> u128 {
        let k = self.keys.pop().expect("run is not empty");
        if self.head == self.keys.len() {
            self.keys.clear();
            self.head = 0;
        }
        k
    }

    /// Takes every key out, in order.
    fn drain(&mut self) -> Vec<u128> {
        let keys = self.keys.split_off(self.head);
        self.keys.clear();
        self.head = 0;
        keys
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
    fn a_threads_pending_step_is_found_in_the_run_or_the_heap() {
        let mut q = EventQueue::default();
        q.push(Ns(5), Event::Thread(1));
        q.push(Ns(9), Event::Thread(2));
        // Earlier than the run's last: the run's tail goes to the heap.
        q.push(Ns(2), Event::Daemon(0));
        q.push(Ns(7), Event::Thread(3));
        assert_eq!(q.pending_step(1), Some(Ns(5)));
        assert_eq!(q.pending_step(2), Some(Ns(9)));
        assert_eq!(q.pending_step(3), Some(Ns(7)));
        assert_eq!(q.pending_step(4), None);
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
    fn an_early_key_in_a_short_run_moves_the_earlier_keys_down() {
        let mut q = EventQueue::default();
        for (t, at) in [(0, 1), (1, 10), (2, 20), (3, 30), (4, 40)] {
            q.push(Ns(at), Event::Thread(t));
        }
        // Thread 0 runs and schedules its next step between threads 1 and 2: the front
        // half moves down into the space its old key left.
        assert_eq!(q.take(), Some((Ns(1), Event::Thread(0))));
        q.push(Ns(15), Event::Thread(0));
        assert!(q.heap.is_empty());
        let order: Vec<_> = std::iter::from_fn(|| q.take())
            .map(|(t, e)| (t.0, e))
            .collect();
        assert_eq!(
            order,
            [
                (10, Event::Thread(1)),
                (15, Event::Thread(0)),
                (20, Event::Thread(2)),
                (30, Event::Thread(3)),
                (40, Event::Thread(4)),
            ]
        );
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

    #[test]
    fn events_leave_in_the_order_of_a_sorted_set_of_keys() {
        // Threads take turns at paces mixed so that both `run` and the heap are used: the
        // held event is scheduled again or not, other events are scheduled meanwhile.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut draw = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for _ in 0..200 {
            // Up to 100 threads: short runs keep every key in order, long ones use the heap.
            let n = 1 + draw(100) as u32;
            let mut q = EventQueue::default();
            let mut model = std::collections::BTreeSet::new();
            let mut pending = vec![false; n as usize];
            let mut seq = 0u64;
            let mut push =
                |q: &mut EventQueue, model: &mut std::collections::BTreeSet<_>, at: u64, t: u32| {
                    seq += 1;
                    q.push(Ns(at), Event::Thread(t));
                    model.insert((at, seq, t));
                };
            for t in 0..n {
                push(&mut q, &mut model, draw(1000), t);
                pending[t as usize] = true;
            }
            for _ in 0..2000 {
                let Some((now, Event::Thread(t))) = q.take() else {
                    assert!(model.is_empty());
                    break;
                };
                let first = model.pop_first().unwrap();
                assert_eq!((now.0, t), (first.0, first.2));
                pending[t as usize] = false;
                assert_eq!(q.next_time().map(|t| t.0), model.first().map(|k| k.0));
                // Others scheduled meanwhile, then (usually) the held thread again.
                for _ in 0..draw(3) {
                    let o = draw(n as u64) as u32;
                    if !pending[o as usize] && o != t {
                        pending[o as usize] = true;
                        push(&mut q, &mut model, now.0 + draw(3000), o);
                    }
                }
                if draw(10) > 0 {
                    let pace = if draw(4) == 0 { draw(5000) } else { 320 };
                    pending[t as usize] = true;
                    push(&mut q, &mut model, now.0 + pace, t);
                }
            }
        }
    }
}
