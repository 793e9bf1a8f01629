//! `time-sharing`: IRIX's time sharing as Nikolopoulos et al. (JPDC 2002, sec. 6.3) ran it,
//! with the SGI MP runtime's waiting (Barton & Bitar's IRIX scheduler; the IRIX and
//! MIPSpro manuals cited at each parameter).
//!
//! Every processor has a run queue. A thread runs for a time slice counted in ticks of the
//! 100 Hz scheduling clock and goes to the back of its processor's queue when the slice
//! ends and another thread waits there. A thread keeps the processor it last ran on (its
//! affinity link) unless load balancing moves it: an idle processor takes a waiting thread
//! from the longest queue (its own node first), and every balance interval a thread moves
//! from the longest queue to the shortest when they differ by two or more.
//!
//! A thread waiting at a barrier or a lock spins on its processor, as the MP runtime's
//! threads do, for at most the runtime's block time of its own processor time (a spinning
//! thread is runnable to the scheduler: its slice ends and it waits its turn like any
//! other, and its spinning goes on when it runs again); then it blocks, giving up its
//! processor. A thread woken from a block has priority over threads that used their
//! processor (IRIX's earnings favour threads that slept) and goes to its affinity
//! processor: it takes it if idle, else an idle processor of the same node, else preempts
//! the thread running there unless that one too runs on a wake-up's priority, else any
//! idle processor, else it waits at the front of its processor's queue.
//!
//! A thread waking from input or output also has priority: it takes its own processor if
//! idle, otherwise a processor drawn at random, whose running thread is preempted. That
//! stands for the paper's background `make`, whose many short compiler processes each
//! start where IRIX puts them and "interfere in a random manner" with the parallel
//! programs; the model's background is one thread per stream.
//!
//! Left out: IRIX's earnings arithmetic itself (priorities are two levels: a thread on a
//! wake-up's priority and everything else), gang scheduling, and the cost of a context
//! switch.

use crate::component::{
    ProgramShape, SchedChange, SchedView, Scheduler, SchedulerParams, ThreadState,
};
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::machine::Machine;
use crate::stats::Counter;
use crate::types::{Ns, ProcId, ThreadId};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Parameters of `time-sharing`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct TimeSharingConfig {
    /// Time slice (ns): how long a thread runs before a thread waiting on its processor
    /// gets it, rounded up to whole ticks and counted from the tick before the thread got
    /// the processor. IRIX's default: the `slice_size` tunable is 3 ticks of the 100 Hz
    /// clock, 30 ms (IRIX Admin: System Configuration and Operation, "slice_size"; the
    /// REACT/Pro programmer's guide, "Changing the Time Slice Duration": "its default
    /// 30ms"). The paper gives none. Default 30,000,000.
    #[field(min = 1_000, max = 10_000_000_000, unit = "ns")]
    pub quantum_ns: u64,
    /// Interval of the scheduling clock (ns), whose ticks end time slices: IRIX's clock
    /// interrupts every processor every 10 ms (Hz = 100; timers(5)). Default 10,000,000.
    #[field(min = 1_000, max = 10_000_000_000, unit = "ns")]
    pub tick_ns: u64,
    /// Interval between load-balancing passes (ns), which move a waiting thread from the
    /// longest run queue to the shortest when they differ by two or more. An estimate (the
    /// paper and IRIX's manuals give none): ten ticks. Default 100,000,000 (100 ms).
    #[field(min = 1_000, max = 100_000_000_000, unit = "ns")]
    pub balance_ns: u64,
    /// How long a thread waiting at a barrier or lock spins before it blocks (ns of its own
    /// processor time; 0: it blocks at once). The SGI MP runtime's block time: slave
    /// threads spin `mp_blocktime` times before blocking, "by default, it is set to
    /// 10,000,000; this takes roughly 3 seconds" (SGI Fortran 77 Programmer's Guide,
    /// "Fortran Enhancements for Multiprocessors": `mp_blocktime`, the MP_BLOCKTIME
    /// environment variable). Default 3,000,000,000.
    #[field(min = 0, max = 1_000_000_000_000, unit = "ns")]
    pub block_spin_ns: u64,
    /// Whether a thread waking from input or output preempts the thread running on a
    /// processor drawn at random when its own is busy. Default true.
    pub io_priority: bool,
    /// Whether threads are bound to the processor they were first given (the paper's
    /// synthetic run "after binding threads to processors", sec. 6.3): an idle processor
    /// takes no thread from another processor's queue, a woken thread takes no other
    /// processor, and load balancing is off. Default false.
    pub bind: bool,
}

impl Default for TimeSharingConfig {
    fn default() -> Self {
        TimeSharingConfig {
            quantum_ns: 30_000_000,
            tick_ns: 10_000_000,
            balance_ns: 100_000_000,
            block_spin_ns: 3_000_000_000,
            io_priority: true,
            bind: false,
        }
    }
}

impl crate::registry::Describe for TimeSharingConfig {
    const KIND: &'static str = "time-sharing";
    const DESCRIPTION: &'static str = "IRIX's: time slices, per-processor run queues, affinity, \
         load balancing between nodes, waits that spin then block, woken threads first";
}

impl SchedulerParams for TimeSharingConfig {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(TimeSharing::new(self.clone()))
    }
}

inventory::submit!(crate::component::SchedulerEntry::of::<TimeSharingConfig>());

/// Salt of the scheduler's random stream, so it differs from the mechanism's stream of
/// the same seed.
const STREAM: u64 = 0x7453_6368_6564_0001;

/// The time-sharing scheduler's state.
#[derive(Debug)]
pub struct TimeSharing {
    cfg: TimeSharingConfig,
    /// Per processor: the thread holding it.
    current: Vec<Option<u32>>,
    /// Per processor: threads waiting for it, in order.
    queue: Vec<VecDeque<u32>>,
    /// Per processor: the tick at or after which its thread's slice ends.
    slice_end: Vec<Ns>,
    /// Per processor: whether its thread runs on a wake-up's priority (until its slice
    /// ends or it gives the processor up).
    boosted: Vec<bool>,
    /// Per processor: when its thread, spinning at a barrier or lock, blocks.
    spin_until: Vec<Option<Ns>>,
    /// Per thread: the processor it last ran on or waits for (its affinity link).
    home: Vec<u32>,
    /// Per thread: the processor it last ran on (a resumption on another node is a
    /// thread migration).
    last_ran: Vec<Option<u32>>,
    /// Per thread: spinning it has left while it waits at a barrier or lock (ns).
    spin_left: Vec<u64>,
    /// Per thread: it blocked after spinning, and has no processor until released.
    asleep: Vec<bool>,
    /// Processor where the next new thread is placed from (round robin).
    cursor: usize,
    next_tick: Ns,
    next_balance: Ns,
    /// Whether the clock runs (some thread waits for a processor).
    ticking: bool,
    rng: Option<Pcg64>,
    procs_per_node: u16,
    preemptions: u64,
    migrations: u64,
    blocks: u64,
    io_preemptions: u64,
    wake_preemptions: u64,
}

impl TimeSharing {
    /// A scheduler with these parameters.
    pub fn new(cfg: TimeSharingConfig) -> TimeSharing {
        TimeSharing {
            next_tick: Ns(cfg.tick_ns),
            next_balance: Ns(cfg.balance_ns),
            cfg,
            current: Vec::new(),
            queue: Vec::new(),
            slice_end: Vec::new(),
            boosted: Vec::new(),
            spin_until: Vec::new(),
            home: Vec::new(),
            last_ran: Vec::new(),
            spin_left: Vec::new(),
            asleep: Vec::new(),
            cursor: 0,
            ticking: false,
            rng: None,
            procs_per_node: 1,
            preemptions: 0,
            migrations: 0,
            blocks: 0,
            io_preemptions: 0,
            wake_preemptions: 0,
        }
    }

    fn node(&self, p: u32) -> u32 {
        p / self.procs_per_node as u32
    }

    /// A slice's length (ns): the quantum rounded up to whole ticks.
    fn slice(&self) -> u64 {
        self.cfg.quantum_ns.div_ceil(self.cfg.tick_ns) * self.cfg.tick_ns
    }

    /// Whether thread `t` wants a processor: it can execute, or it spins at a barrier or
    /// lock (it has not blocked).
    fn wants_cpu(&self, view: &dyn SchedView, t: u32) -> bool {
        match view.thread(ThreadId(t)).state {
            ThreadState::Runnable => true,
            ThreadState::Blocked => !self.asleep[t as usize],
            _ => false,
        }
    }

    /// Whether a thread waiting for processor `p` wants it.
    fn contended(&self, view: &dyn SchedView, p: u32) -> bool {
        self.queue[p as usize]
            .iter()
            .any(|&t| self.wants_cpu(view, t))
    }

    /// Gives processor `p`, which has no thread, to the first waiting thread that wants
    /// it, or else to one taken from the longest queue (its own node's first).
    fn dispatch(&mut self, p: u32, now: Ns, view: &dyn SchedView, out: &mut Vec<SchedChange>) {
        debug_assert!(self.current[p as usize].is_none());
        let pick = self.queue[p as usize]
            .iter()
            .position(|&t| self.wants_cpu(view, t))
            .and_then(|i| self.queue[p as usize].remove(i));
        let pick = if self.cfg.bind {
            pick
        } else {
            pick.or_else(|| self.steal(p, view))
        };
        if let Some(t) = pick {
            self.run(t, p, now, false, view, out);
        }
    }

    /// Takes a waiting thread that wants a processor from the longest queue, preferring
    /// `p`'s node.
    fn steal(&mut self, p: u32, view: &dyn SchedView) -> Option<u32> {
        let my_node = self.node(p);
        let mut best: Option<(bool, usize, u32)> = None;
        for (q, waiting) in self.queue.iter().enumerate() {
            let n = waiting.iter().filter(|&&t| self.wants_cpu(view, t)).count();
            if n == 0 {
                continue;
            }
            let key = (self.node(q as u32) == my_node, n, q as u32);
            if best.is_none_or(|b| (key.0, key.1) > (b.0, b.1)) {
                best = Some(key);
            }
        }
        let (_, _, q) = best?;
        let i = self.queue[q as usize]
            .iter()
            .rposition(|&t| self.wants_cpu(view, t))?;
        self.queue[q as usize].remove(i)
    }

    /// Runs thread `t` on processor `p` (which is free) from `now`, on a wake-up's
    /// priority if `boost`; a thread still waiting at a barrier or lock spins on.
    fn run(
        &mut self,
        t: u32,
        p: u32,
        now: Ns,
        boost: bool,
        view: &dyn SchedView,
        out: &mut Vec<SchedChange>,
    ) {
        let (ti, pi) = (t as usize, p as usize);
        if self.last_ran[ti].is_some_and(|q| self.node(q) != self.node(p)) {
            self.migrations += 1;
        }
        self.last_ran[ti] = Some(p);
        self.home[ti] = p;
        self.current[pi] = Some(t);
        // The slice counts from the tick before: it ends at the slice's ticks after it.
        self.slice_end[pi] = Ns(now.0 / self.cfg.tick_ns * self.cfg.tick_ns + self.slice());
        self.boosted[pi] = boost;
        self.spin_until[pi] = (view.thread(ThreadId(t)).state == ThreadState::Blocked)
            .then(|| now + Ns(self.spin_left[ti]));
        out.push(SchedChange::Resume(ThreadId(t), ProcId(p as u16)));
    }

    /// Takes processor `p` from its thread at `now`, which waits at the back (or front) of
    /// `p`'s queue; a spinning thread keeps the spinning it has left.
    fn take(&mut self, p: u32, now: Ns, front: bool, out: &mut Vec<SchedChange>) -> Option<u32> {
        let pi = p as usize;
        let t = self.current[pi].take()?;
        if let Some(until) = self.spin_until[pi].take() {
            self.spin_left[t as usize] = until.0.saturating_sub(now.0);
        }
        self.boosted[pi] = false;
        out.push(SchedChange::Preempt(ThreadId(t)));
        if front {
            self.queue[pi].push_front(t);
        } else {
            self.queue[pi].push_back(t);
        }
        Some(t)
    }

    /// The thread spinning on processor `p` blocks: it gives the processor up until it is
    /// released.
    fn block(&mut self, p: u32, now: Ns, view: &dyn SchedView, out: &mut Vec<SchedChange>) {
        let pi = p as usize;
        let Some(t) = self.current[pi].take() else {
            return;
        };
        self.spin_until[pi] = None;
        self.boosted[pi] = false;
        self.asleep[t as usize] = true;
        self.blocks += 1;
        out.push(SchedChange::Preempt(ThreadId(t)));
        self.dispatch(p, now, view, out);
    }

    /// Processor `p` loses its thread, which gave it up (finished or sleeps).
    fn vacate(&mut self, p: u32) {
        let pi = p as usize;
        self.current[pi] = None;
        self.spin_until[pi] = None;
        self.boosted[pi] = false;
    }

    /// Removes thread `t` from whatever queue holds it.
    fn unqueue(&mut self, t: u32) {
        let q = &mut self.queue[self.home[t as usize] as usize];
        if let Some(i) = q.iter().position(|&x| x == t) {
            q.remove(i);
        }
    }

    /// An idle processor: on `node` if given, else any; the lowest-numbered.
    fn idle(&self, node: Option<u32>) -> Option<u32> {
        (0..self.current.len() as u32)
            .find(|&p| self.current[p as usize].is_none() && node.is_none_or(|n| self.node(p) == n))
    }

    /// Thread `t`, woken from a block, is placed by priority and affinity: its own
    /// processor if idle, else an idle one of its node, else its own by preempting a
    /// thread without a wake-up's priority, else any idle one, else the front of its own
    /// processor's queue.
    fn wake(&mut self, t: u32, now: Ns, view: &dyn SchedView, out: &mut Vec<SchedChange>) {
        let own = self.home[t as usize];
        let free = if self.current[own as usize].is_none() {
            Some(own)
        } else if self.cfg.bind {
            None
        } else {
            self.idle(Some(self.node(own)))
        };
        if let Some(p) = free {
            self.run(t, p, now, true, view, out);
        } else if !self.boosted[own as usize] {
            self.take(own, now, true, out);
            self.wake_preemptions += 1;
            self.run(t, own, now, true, view, out);
        } else if let Some(p) = self.idle(None).filter(|_| !self.cfg.bind) {
            self.run(t, p, now, true, view, out);
        } else {
            self.queue[own as usize].push_front(t);
        }
    }

    /// A new thread: the next idle processor round robin, else the shortest queue.
    fn place(&mut self, t: u32, now: Ns, view: &dyn SchedView, out: &mut Vec<SchedChange>) {
        let n = self.current.len();
        let idle = (0..n)
            .map(|i| (self.cursor + i) % n)
            .find(|&p| self.current[p].is_none() && self.queue[p].is_empty());
        match idle {
            Some(p) => {
                self.cursor = (p + 1) % n;
                self.home[t as usize] = p as u32;
                self.run(t, p as u32, now, false, view, out);
            }
            None => {
                let p = (0..n)
                    .map(|i| (self.cursor + i) % n)
                    .min_by_key(|&p| self.queue[p].len())
                    .unwrap_or(0);
                self.cursor = (p + 1) % n;
                self.home[t as usize] = p as u32;
                self.queue[p].push_back(t);
            }
        }
    }

    fn rng(&mut self, view: &dyn SchedView) -> &mut Pcg64 {
        self.rng
            .get_or_insert_with(|| Pcg64::seed_from_u64(view.seed() ^ STREAM))
    }

    /// Moves waiting threads from the longest queue to the shortest while they differ by
    /// two or more (the moved thread loses its affinity).
    fn balance(&mut self) {
        loop {
            let load = |q: usize| self.queue[q].len() + self.current[q].is_some() as usize;
            let n = self.queue.len();
            let (Some(long), Some(short)) = (
                (0..n).max_by_key(|&q| (load(q), std::cmp::Reverse(q))),
                (0..n).min_by_key(|&q| (load(q), q)),
            ) else {
                return;
            };
            if load(long) < load(short) + 2 || self.queue[long].is_empty() {
                return;
            }
            let t = self.queue[long].pop_back().expect("not empty");
            self.home[t as usize] = short as u32;
            self.queue[short].push_back(t);
        }
    }

    /// Starts the clock when a thread waits for a processor and stops it when none does.
    /// The clock ticks at whole multiples of the tick from time 0; slices that ended while
    /// it stood still were renewed, as IRIX renews the slice of a thread nobody waits for.
    fn clock(&mut self, now: Ns) {
        let waiting = self.queue.iter().any(|q| !q.is_empty());
        if waiting && !self.ticking {
            let tick = self.cfg.tick_ns;
            self.next_tick = Ns((now.0 / tick + 1) * tick);
            self.next_balance = now + Ns(self.cfg.balance_ns);
            let slice = self.slice();
            for p in 0..self.current.len() {
                let end = self.slice_end[p].0;
                if self.current[p].is_some() && end <= now.0 {
                    self.slice_end[p] = Ns(end + ((now.0 - end) / slice + 1) * slice);
                }
            }
        }
        self.ticking = waiting;
    }
}

impl Scheduler for TimeSharing {
    fn start(
        &mut self,
        machine: &Machine,
        programs: &[ProgramShape],
    ) -> Result<Vec<Option<ProcId>>, ConfigError> {
        let threads = programs.iter().map(|p| p.threads).sum::<u32>() as usize;
        let procs = machine.procs();
        self.current = vec![None; procs];
        self.queue = vec![VecDeque::new(); procs];
        self.slice_end = vec![Ns::ZERO; procs];
        self.boosted = vec![false; procs];
        self.spin_until = vec![None; procs];
        self.home = vec![0; threads];
        self.last_ran = vec![None; threads];
        self.spin_left = vec![0; threads];
        self.asleep = vec![false; threads];
        self.procs_per_node = machine.config.procs_per_node;
        // Threads get their processors as they are created.
        Ok(vec![None; threads])
    }

    fn next_event(&self) -> Option<Ns> {
        let clock = self.ticking.then(|| {
            if self.cfg.bind {
                self.next_tick
            } else {
                self.next_tick.min(self.next_balance)
            }
        });
        let spin = self.spin_until.iter().flatten().min().copied();
        match (clock, spin) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn on_event(&mut self, now: Ns, view: &dyn SchedView, out: &mut Vec<SchedChange>) {
        // Spinning threads whose block time is over block.
        for p in 0..self.current.len() as u32 {
            if self.spin_until[p as usize].is_some_and(|u| u <= now) {
                self.block(p, now, view, out);
            }
        }
        if self.ticking && now >= self.next_balance {
            if !self.cfg.bind {
                self.balance();
            }
            self.next_balance = now + Ns(self.cfg.balance_ns);
        }
        if self.ticking && now >= self.next_tick {
            let slice = self.slice();
            for p in 0..self.current.len() as u32 {
                let pi = p as usize;
                if self.current[pi].is_some() && now >= self.slice_end[pi] {
                    self.boosted[pi] = false;
                    if self.contended(view, p) {
                        self.take(p, now, false, out);
                        self.preemptions += 1;
                    } else {
                        self.slice_end[pi] += Ns(slice);
                    }
                }
                if self.current[pi].is_none() {
                    self.dispatch(p, now, view, out);
                }
            }
            self.next_tick = now + Ns(self.cfg.tick_ns);
        }
        self.clock(now);
    }

    fn on_thread(
        &mut self,
        now: Ns,
        view: &dyn SchedView,
        thread: ThreadId,
        change: crate::component::ThreadChange,
        out: &mut Vec<SchedChange>,
    ) {
        use crate::component::ThreadChange::*;
        let t = thread.0;
        let holds = |s: &Self| {
            let p = s.home[t as usize];
            (s.current[p as usize] == Some(t)).then_some(p)
        };
        match change {
            Created => self.place(t, now, view, out),
            Finished | Sleeps => {
                if let Some(p) = holds(self) {
                    self.vacate(p);
                    if change == Sleeps {
                        out.push(SchedChange::Preempt(thread));
                    }
                    self.dispatch(p, now, view, out);
                } else {
                    self.unqueue(t);
                }
            }
            Blocked => {
                let Some(p) = holds(self) else { return };
                self.spin_left[t as usize] = self.cfg.block_spin_ns;
                if self.cfg.block_spin_ns == 0 {
                    self.block(p, now, view, out);
                } else {
                    self.spin_until[p as usize] = Some(now + Ns(self.cfg.block_spin_ns));
                }
            }
            Unblocked => {
                if let Some(p) = holds(self) {
                    // It was spinning: it goes on at once.
                    self.spin_until[p as usize] = None;
                } else if std::mem::take(&mut self.asleep[t as usize]) {
                    self.wake(t, now, view, out);
                } else {
                    // Preempted while it spun: it waits its turn in its queue.
                    let p = self.home[t as usize];
                    if self.current[p as usize].is_none() {
                        self.dispatch(p, now, view, out);
                    }
                }
            }
            Wakes => {
                let own = self.home[t as usize];
                if self.current[own as usize].is_none() {
                    self.unqueue(t);
                    self.run(t, own, now, true, view, out);
                } else if self.cfg.io_priority {
                    let n = self.current.len() as u32;
                    let p = self.rng(view).gen_range(0..n);
                    self.unqueue(t);
                    if self.take(p, now, true, out).is_some() {
                        self.io_preemptions += 1;
                    }
                    self.run(t, p, now, true, view, out);
                } else {
                    self.unqueue(t);
                    self.queue[own as usize].push_back(t);
                }
            }
        }
        self.clock(now);
    }

    fn counters(&self) -> Vec<Counter> {
        vec![
            Counter {
                name: "sched_preemptions",
                label: "preemptions at the end of a time slice",
                value: self.preemptions,
            },
            Counter {
                name: "sched_io_preemptions",
                label: "preemptions by waking I/O threads",
                value: self.io_preemptions,
            },
            Counter {
                name: "sched_wake_preemptions",
                label: "preemptions by threads woken from a block",
                value: self.wake_preemptions,
            },
            Counter {
                name: "sched_blocks",
                label: "threads that blocked after spinning at a barrier or lock",
                value: self.blocks,
            },
            Counter {
                name: "sched_thread_migrations",
                label: "threads resumed on another node",
                value: self.migrations,
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::ThreadChange;
    use crate::sched::fake::FakeView;

    const MS: u64 = 1_000_000;

    /// A scheduler on `view`'s machine with every thread created (runnable) at 0.
    fn started(cfg: TimeSharingConfig, view: &mut FakeView) -> TimeSharing {
        let mut s = TimeSharing::new(cfg);
        s.start(&view.machine, &view.shapes).unwrap();
        for t in 0..view.threads.len() as u32 {
            view.set(t, ThreadState::Runnable);
            tell(&mut s, view, t, ThreadChange::Created, 0);
        }
        s
    }

    fn tell(s: &mut TimeSharing, view: &mut FakeView, t: u32, c: ThreadChange, now: u64) {
        let mut out = Vec::new();
        s.on_thread(Ns(now), view, ThreadId(t), c, &mut out);
        view.apply(&out);
    }

    /// Thread `t` arrives at a barrier at `now` and waits there.
    fn wait(s: &mut TimeSharing, view: &mut FakeView, t: u32, now: u64) {
        view.set(t, ThreadState::Blocked);
        tell(s, view, t, ThreadChange::Blocked, now);
    }

    /// The barrier releases thread `t` at `now`.
    fn release(s: &mut TimeSharing, view: &mut FakeView, t: u32, now: u64) {
        view.set(t, ThreadState::Runnable);
        tell(s, view, t, ThreadChange::Unblocked, now);
    }

    /// The scheduler's next timed change, applied; returns its time.
    fn tick(s: &mut TimeSharing, view: &mut FakeView) -> u64 {
        let now = s.next_event().expect("a timed change is due");
        let mut out = Vec::new();
        s.on_event(now, view, &mut out);
        view.apply(&out);
        now.0
    }

    /// Applies every timed change up to and including `to` (ns).
    fn until(s: &mut TimeSharing, view: &mut FakeView, to: u64) {
        while s.next_event().is_some_and(|t| t.0 <= to) {
            tick(s, view);
        }
    }

    /// One node of one processor with threads 0 and 1, thread 0 running and thread 1
    /// waiting, spinning for `spin_ms` at barriers.
    fn two_on_one(spin_ms: u64) -> (TimeSharing, FakeView) {
        let mut view = FakeView::new(1, 1, &[2]);
        let cfg = TimeSharingConfig {
            block_spin_ns: spin_ms * MS,
            ..Default::default()
        };
        let s = started(cfg, &mut view);
        (s, view)
    }

    #[test]
    fn threads_beyond_the_processors_wait_in_run_queues() {
        let mut view = FakeView::new(2, 1, &[3]);
        let _s = started(TimeSharingConfig::default(), &mut view);
        assert_eq!(view.running(), vec![0, 1]);
        assert_eq!(view.proc(2), None);
    }

    #[test]
    fn the_clock_ticks_every_10_ms() {
        let mut view = FakeView::new(2, 1, &[3]);
        let mut s = started(TimeSharingConfig::default(), &mut view);
        assert_eq!(s.next_event(), Some(Ns(10 * MS)));
        assert_eq!(tick(&mut s, &mut view), 10 * MS);
        assert_eq!(s.next_event(), Some(Ns(20 * MS)));
    }

    #[test]
    fn a_waiting_thread_runs_when_the_slice_of_three_ticks_ends() {
        let mut view = FakeView::new(2, 1, &[3]);
        let mut s = started(TimeSharingConfig::default(), &mut view);
        until(&mut s, &mut view, 29 * MS);
        assert_eq!(view.proc(2), None);
        until(&mut s, &mut view, 30 * MS);
        // Thread 2 waited on processor 0's queue; thread 0 goes to its back.
        assert_eq!(view.proc(2), Some(0));
        assert_eq!(view.proc(0), None);
        assert_eq!(s.preemptions, 1);
    }

    #[test]
    fn a_slice_counts_from_the_tick_before_the_thread_got_the_processor() {
        let mut view = FakeView::new(1, 1, &[3]);
        let mut s = started(TimeSharingConfig::default(), &mut view);
        // Thread 1 gets the processor at 30 ms and sleeps at 35 ms; thread 2 gets it then,
        // and its slice ends at the third tick after 30 ms, not 30 ms after 35 ms.
        until(&mut s, &mut view, 30 * MS);
        view.set(1, ThreadState::Sleeping);
        tell(&mut s, &mut view, 1, ThreadChange::Sleeps, 35 * MS);
        assert_eq!(view.proc(2), Some(0));
        until(&mut s, &mut view, 59 * MS);
        assert_eq!(view.proc(2), Some(0));
        until(&mut s, &mut view, 60 * MS);
        assert_eq!(view.proc(0), Some(0));
    }

    #[test]
    fn a_preempted_thread_resumes_on_its_last_processor() {
        let mut view = FakeView::new(2, 1, &[3]);
        let mut s = started(TimeSharingConfig::default(), &mut view);
        until(&mut s, &mut view, 60 * MS);
        // Affinity: thread 0 waited on processor 0 and got it back.
        assert_eq!(view.proc(0), Some(0));
        assert_eq!(view.proc(1), Some(1));
        assert_eq!(s.migrations, 0);
    }

    #[test]
    fn an_idle_processor_takes_a_waiting_thread_from_another_node() {
        let mut view = FakeView::new(2, 1, &[3]);
        let mut s = started(TimeSharingConfig::default(), &mut view);
        // Thread 1 finishes on processor 1; thread 2 waits on processor 0's queue.
        view.set(1, ThreadState::Finished);
        tell(&mut s, &mut view, 1, ThreadChange::Finished, 5);
        assert_eq!(view.proc(2), Some(1));
    }

    #[test]
    fn load_balancing_moves_a_thread_from_the_longest_queue() {
        let mut view = FakeView::new(2, 1, &[4]);
        let cfg = TimeSharingConfig {
            balance_ns: 1_000,
            ..Default::default()
        };
        let mut s = started(cfg, &mut view);
        // Queues: processor 0 holds 0 and waits 2; processor 1 holds 1 and waits 3.
        // Pile both waiters on processor 0 and let balancing spread them.
        s.queue[1].clear();
        s.queue[0].push_back(3);
        s.home[3] = 0;
        tick(&mut s, &mut view);
        assert_eq!(s.queue[0].len() + 1, s.queue[1].len() + 1);
    }

    #[test]
    fn a_bound_thread_is_not_taken_by_an_idle_processor() {
        let mut view = FakeView::new(2, 1, &[3]);
        let cfg = TimeSharingConfig {
            bind: true,
            ..Default::default()
        };
        let mut s = started(cfg, &mut view);
        view.set(1, ThreadState::Finished);
        tell(&mut s, &mut view, 1, ThreadChange::Finished, 5);
        assert_eq!(view.proc(2), None);
    }

    #[test]
    fn bound_threads_are_not_balanced() {
        let mut view = FakeView::new(2, 1, &[4]);
        let cfg = TimeSharingConfig {
            balance_ns: 1_000,
            bind: true,
            ..Default::default()
        };
        let mut s = started(cfg, &mut view);
        s.queue[1].clear();
        s.queue[0].push_back(3);
        s.home[3] = 0;
        tick(&mut s, &mut view);
        assert_eq!((s.queue[0].len(), s.queue[1].len()), (2, 0));
    }

    #[test]
    fn a_thread_waking_from_io_preempts_a_running_thread() {
        let mut view = FakeView::new(2, 1, &[2, 1]);
        let mut s = started(TimeSharingConfig::default(), &mut view);
        // Thread 2 (the I/O job) waits on processor 0; it sleeps, then wakes.
        view.set(2, ThreadState::Sleeping);
        tell(&mut s, &mut view, 2, ThreadChange::Sleeps, 10);
        view.set(2, ThreadState::Runnable);
        tell(&mut s, &mut view, 2, ThreadChange::Wakes, 20);
        assert!(view.proc(2).is_some());
        assert_eq!(view.running().len(), 2);
        assert_eq!(s.io_preemptions, 1);
    }

    #[test]
    fn a_thread_waiting_at_a_barrier_spins_on_its_processor() {
        let (mut s, mut view) = two_on_one(3_000);
        wait(&mut s, &mut view, 0, 5 * MS);
        // Thread 1 waits for the processor, but thread 0 keeps it while it spins.
        assert_eq!(view.proc(0), Some(0));
        assert_eq!(view.proc(1), None);
        assert_eq!(s.next_event(), Some(Ns(10 * MS)));
    }

    #[test]
    fn a_spinning_thread_is_preempted_when_its_slice_ends() {
        let (mut s, mut view) = two_on_one(3_000);
        wait(&mut s, &mut view, 0, 5 * MS);
        until(&mut s, &mut view, 30 * MS);
        assert_eq!(view.proc(1), Some(0));
        assert_eq!(s.preemptions, 1);
        assert_eq!(s.blocks, 0);
    }

    #[test]
    fn a_spinning_thread_blocks_when_its_block_time_is_over() {
        let (mut s, mut view) = two_on_one(2);
        wait(&mut s, &mut view, 0, 5 * MS);
        assert_eq!(s.next_event(), Some(Ns(7 * MS)));
        tick(&mut s, &mut view);
        assert_eq!(view.proc(0), None);
        assert_eq!(view.proc(1), Some(0));
        assert_eq!(s.blocks, 1);
    }

    #[test]
    fn a_blocked_thread_leaves_its_processor_idle_when_no_thread_waits() {
        let mut view = FakeView::new(1, 1, &[1]);
        let cfg = TimeSharingConfig {
            block_spin_ns: 2 * MS,
            ..Default::default()
        };
        let mut s = started(cfg, &mut view);
        wait(&mut s, &mut view, 0, 0);
        tick(&mut s, &mut view);
        assert_eq!(view.proc(0), None);
        assert_eq!(s.next_event(), None);
    }

    #[test]
    fn a_thread_spins_only_while_it_has_its_processor() {
        // Thread 0 waits at 25 ms with 12 ms to spin, is preempted at 30 ms with 7 ms
        // left, runs again at 60 ms and blocks 7 ms later.
        let (mut s, mut view) = two_on_one(12);
        wait(&mut s, &mut view, 0, 25 * MS);
        until(&mut s, &mut view, 30 * MS);
        assert_eq!(view.proc(0), None);
        until(&mut s, &mut view, 60 * MS);
        assert_eq!(view.proc(0), Some(0));
        until(&mut s, &mut view, 66 * MS);
        assert_eq!(s.blocks, 0);
        until(&mut s, &mut view, 67 * MS);
        assert_eq!(s.blocks, 1);
        assert_eq!(view.proc(1), Some(0));
    }

    #[test]
    fn a_thread_released_while_it_spins_runs_on_at_once() {
        let (mut s, mut view) = two_on_one(3_000);
        wait(&mut s, &mut view, 0, 5 * MS);
        release(&mut s, &mut view, 0, 6 * MS);
        assert_eq!(view.proc(0), Some(0));
        // No block is due any more: the next change is the clock's.
        assert_eq!(s.next_event(), Some(Ns(10 * MS)));
    }

    #[test]
    fn a_zero_block_time_gives_the_processor_up_at_once() {
        let (mut s, mut view) = two_on_one(0);
        wait(&mut s, &mut view, 0, 5 * MS);
        assert_eq!(view.proc(1), Some(0));
        assert_eq!(s.blocks, 1);
    }

    #[test]
    fn a_thread_woken_from_a_block_preempts_the_thread_on_its_processor() {
        let (mut s, mut view) = two_on_one(0);
        wait(&mut s, &mut view, 0, 5 * MS);
        release(&mut s, &mut view, 0, 6 * MS);
        assert_eq!(view.proc(0), Some(0));
        assert_eq!(view.proc(1), None);
        assert_eq!(s.wake_preemptions, 1);
    }

    #[test]
    fn a_thread_woken_from_a_block_takes_an_idle_processor_of_its_node_first() {
        // Processors 0 and 1 on node 0, 2 and 3 on node 1; threads 0-3 on them and thread
        // 4, of another program, waiting on processor 0.
        let mut view = FakeView::new(2, 2, &[4, 1]);
        let cfg = TimeSharingConfig {
            block_spin_ns: 0,
            ..Default::default()
        };
        let mut s = started(cfg, &mut view);
        // Thread 1 blocks and processor 1 takes thread 4; threads 0 and 3 block, leaving
        // processors 0 (node 0) and 3 (node 1) idle.
        wait(&mut s, &mut view, 1, MS);
        assert_eq!(view.proc(4), Some(1));
        wait(&mut s, &mut view, 0, MS);
        wait(&mut s, &mut view, 3, MS);
        // Thread 1's own processor runs thread 4: it takes processor 0, on its node.
        release(&mut s, &mut view, 1, 2 * MS);
        assert_eq!(view.proc(1), Some(0));
        assert_eq!(view.proc(4), Some(1));
        assert_eq!(s.wake_preemptions, 0);
    }

    #[test]
    fn a_woken_thread_does_not_preempt_a_thread_woken_before_it() {
        // One processor: threads 0 and 1 of one program, thread 2 of another.
        let mut view = FakeView::new(1, 1, &[2, 1]);
        let cfg = TimeSharingConfig {
            block_spin_ns: 0,
            ..Default::default()
        };
        let mut s = started(cfg, &mut view);
        // Thread 0 blocks (thread 1 runs), thread 1 blocks (thread 2 runs).
        wait(&mut s, &mut view, 0, MS);
        wait(&mut s, &mut view, 1, 2 * MS);
        assert_eq!(view.proc(2), Some(0));
        // Thread 0 wakes and preempts thread 2; thread 1 wakes and waits first in line.
        release(&mut s, &mut view, 0, 3 * MS);
        release(&mut s, &mut view, 1, 3 * MS);
        assert_eq!(view.proc(0), Some(0));
        assert_eq!(view.proc(1), None);
        assert_eq!(s.queue[0].front(), Some(&1));
        assert_eq!(s.wake_preemptions, 1);
    }

    #[test]
    fn the_same_seed_draws_the_same_processors() {
        let run = || {
            let mut view = FakeView::new(4, 1, &[4, 1]);
            let mut s = started(TimeSharingConfig::default(), &mut view);
            let mut procs = Vec::new();
            for k in 0..5 {
                view.set(4, ThreadState::Sleeping);
                tell(&mut s, &mut view, 4, ThreadChange::Sleeps, 10 + k);
                view.set(4, ThreadState::Runnable);
                tell(&mut s, &mut view, 4, ThreadChange::Wakes, 20 + k);
                procs.push(view.proc(4));
            }
            procs
        };
        assert_eq!(run(), run());
    }
}
