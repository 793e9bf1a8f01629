//! `time-sharing`: an IRIX-like time-sharing scheduler (Nikolopoulos et al., JPDC 2002,
//! sec. 6.3; Barton & Bitar's IRIX scheduler): every processor has a run queue; a thread
//! runs for a time quantum and goes to the back of its processor's queue when others wait
//! there; a thread keeps the processor it last ran on (its affinity link) unless load
//! balancing moves it: an idle processor takes a waiting thread from the longest queue
//! (its own node first), and every balance interval a thread moves from the longest
//! queue to the shortest when they differ by two or more. A thread waking from input or
//! output has priority (IRIX's earnings favour I/O-bound jobs): it takes its own
//! processor if idle, otherwise a processor drawn at random, whose running thread is
//! preempted. That is how the paper's background `make` interferes with the parallel
//! programs "in a random manner".
//!
//! Left out: IRIX's earnings arithmetic itself (priorities are two levels: a waking I/O
//! thread and everything else), gang scheduling, and the cost of a context switch.

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
    /// Time quantum (ns): how long a thread runs before a thread waiting on its processor
    /// gets it. The paper gives none; IRIX's default slice is 100 ms for batch and 20 ms
    /// for others, 20 ms here. Default 20,000,000.
    #[field(min = 1_000, max = 10_000_000_000, unit = "ns")]
    pub quantum_ns: u64,
    /// Interval between load-balancing passes (ns), which move a waiting thread from the
    /// longest run queue to the shortest when they differ by two or more. Default
    /// 100,000,000 (100 ms).
    #[field(min = 1_000, max = 100_000_000_000, unit = "ns")]
    pub balance_ns: u64,
    /// Whether a thread that waits at a barrier or lock yields its processor to a thread
    /// waiting there (OpenMP threads spin briefly and then yield). Default true.
    pub yield_when_blocked: bool,
    /// Whether a thread waking from input or output preempts the thread running on a
    /// processor drawn at random when its own is busy. Default true.
    pub io_priority: bool,
    /// Whether threads are bound to the processor they were first given (the paper's
    /// synthetic run "after binding threads to processors", sec. 6.3): an idle processor
    /// takes no thread from another processor's queue and load balancing is off. Default
    /// false.
    pub bind: bool,
}

impl Default for TimeSharingConfig {
    fn default() -> Self {
        TimeSharingConfig {
            quantum_ns: 20_000_000,
            balance_ns: 100_000_000,
            yield_when_blocked: true,
            io_priority: true,
            bind: false,
        }
    }
}

impl crate::registry::Describe for TimeSharingConfig {
    const KIND: &'static str = "time-sharing";
    const DESCRIPTION: &'static str = "IRIX-like: quanta, per-processor run queues, affinity, \
         load balancing between nodes, I/O-bound threads preempt at random";
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
    /// Per thread: the processor it last ran on or waits for (its affinity link).
    home: Vec<u32>,
    /// Per thread: the processor it last ran on (a resumption on another node is a
    /// thread migration).
    last_ran: Vec<Option<u32>>,
    /// Processor where the next new thread is placed from (round robin).
    cursor: usize,
    next_tick: Ns,
    next_balance: Ns,
    /// Whether the timer runs (there is something to rotate or balance).
    ticking: bool,
    rng: Option<Pcg64>,
    procs_per_node: u16,
    preemptions: u64,
    migrations: u64,
    yields: u64,
    io_preemptions: u64,
}

impl TimeSharing {
    /// A scheduler with these parameters.
    pub fn new(cfg: TimeSharingConfig) -> TimeSharing {
        TimeSharing {
            next_tick: Ns(cfg.quantum_ns),
            next_balance: Ns(cfg.balance_ns),
            cfg,
            current: Vec::new(),
            queue: Vec::new(),
            home: Vec::new(),
            last_ran: Vec::new(),
            cursor: 0,
            ticking: false,
            rng: None,
            procs_per_node: 1,
            preemptions: 0,
            migrations: 0,
            yields: 0,
            io_preemptions: 0,
        }
    }

    fn node(&self, p: u32) -> u32 {
        p / self.procs_per_node as u32
    }

    /// Gives processor `p`, which has no thread, to the first runnable thread waiting for
    /// it, or else to one taken from the longest queue (its own node's first).
    fn dispatch(&mut self, p: u32, view: &dyn SchedView, out: &mut Vec<SchedChange>) {
        debug_assert!(self.current[p as usize].is_none());
        let runnable = |t: u32| view.thread(ThreadId(t)).state == ThreadState::Runnable;
        let q = &mut self.queue[p as usize];
        let pick = q
            .iter()
            .position(|&t| runnable(t))
            .and_then(|i| q.remove(i));
        let pick = if self.cfg.bind {
            pick
        } else {
            pick.or_else(|| self.steal(p, view))
        };
        if let Some(t) = pick {
            self.run(t, p, out);
        }
    }

    /// Takes a runnable waiting thread from the longest queue, preferring `p`'s node.
    fn steal(&mut self, p: u32, view: &dyn SchedView) -> Option<u32> {
        let runnable = |t: u32| view.thread(ThreadId(t)).state == ThreadState::Runnable;
        let my_node = self.node(p);
        let mut best: Option<(bool, usize, u32)> = None;
        for (q, waiting) in self.queue.iter().enumerate() {
            let n = waiting.iter().filter(|&&t| runnable(t)).count();
            if n == 0 {
                continue;
            }
            let key = (self.node(q as u32) == my_node, n, q as u32);
            if best.is_none_or(|b| (key.0, key.1) > (b.0, b.1)) {
                best = Some(key);
            }
        }
        let (_, _, q) = best?;
        let waiting = &mut self.queue[q as usize];
        let i = waiting.iter().rposition(|&t| runnable(t))?;
        waiting.remove(i)
    }

    /// Runs thread `t` on processor `p` (which is free).
    fn run(&mut self, t: u32, p: u32, out: &mut Vec<SchedChange>) {
        if self.last_ran[t as usize].is_some_and(|q| self.node(q) != self.node(p)) {
            self.migrations += 1;
        }
        self.last_ran[t as usize] = Some(p);
        self.home[t as usize] = p;
        self.current[p as usize] = Some(t);
        out.push(SchedChange::Resume(ThreadId(t), ProcId(p as u16)));
    }

    /// Takes processor `p` from its thread, which waits at the back (or front) of `p`'s
    /// queue.
    fn take(&mut self, p: u32, front: bool, out: &mut Vec<SchedChange>) -> Option<u32> {
        let t = self.current[p as usize].take()?;
        out.push(SchedChange::Preempt(ThreadId(t)));
        if front {
            self.queue[p as usize].push_front(t);
        } else {
            self.queue[p as usize].push_back(t);
        }
        Some(t)
    }

    /// Removes thread `t` from whatever queue holds it.
    fn unqueue(&mut self, t: u32) {
        let q = &mut self.queue[self.home[t as usize] as usize];
        if let Some(i) = q.iter().position(|&x| x == t) {
            q.remove(i);
        }
    }

    /// A new thread: the next idle processor round robin, else the shortest queue.
    fn place(&mut self, t: u32, out: &mut Vec<SchedChange>) {
        let n = self.current.len();
        let idle = (0..n)
            .map(|i| (self.cursor + i) % n)
            .find(|&p| self.current[p].is_none() && self.queue[p].is_empty());
        match idle {
            Some(p) => {
                self.cursor = (p + 1) % n;
                self.home[t as usize] = p as u32;
                self.run(t, p as u32, out);
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
        self.ticking = true;
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
}

impl Scheduler for TimeSharing {
    fn start(
        &mut self,
        machine: &Machine,
        programs: &[ProgramShape],
    ) -> Result<Vec<Option<ProcId>>, ConfigError> {
        let threads: u32 = programs.iter().map(|p| p.threads).sum();
        let procs = machine.procs();
        self.current = vec![None; procs];
        self.queue = vec![VecDeque::new(); procs];
        self.home = vec![0; threads as usize];
        self.last_ran = vec![None; threads as usize];
        self.procs_per_node = machine.config.procs_per_node;
        // Threads get their processors as they are created.
        Ok(vec![None; threads as usize])
    }

    fn next_event(&self) -> Option<Ns> {
        self.ticking
            .then_some(self.next_tick.min(self.next_balance))
    }

    fn on_event(&mut self, now: Ns, view: &dyn SchedView, out: &mut Vec<SchedChange>) {
        if now >= self.next_balance {
            if !self.cfg.bind {
                self.balance();
            }
            self.next_balance = now + Ns(self.cfg.balance_ns);
        }
        if now >= self.next_tick {
            for p in 0..self.current.len() as u32 {
                let waiting = self.queue[p as usize]
                    .iter()
                    .any(|&t| view.thread(ThreadId(t)).state == ThreadState::Runnable);
                if waiting && self.take(p, false, out).is_some() {
                    self.preemptions += 1;
                }
                if self.current[p as usize].is_none() {
                    self.dispatch(p, view, out);
                }
            }
            self.next_tick = now + Ns(self.cfg.quantum_ns);
        }
        // The timer stops when no thread waits for a processor; a new or woken thread
        // starts it again.
        self.ticking = self.queue.iter().any(|q| !q.is_empty());
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
            Created => {
                if !self.ticking {
                    self.next_tick = now + Ns(self.cfg.quantum_ns);
                    self.next_balance = now + Ns(self.cfg.balance_ns);
                }
                self.place(t, out);
            }
            Finished | Sleeps => {
                if let Some(p) = holds(self) {
                    self.current[p as usize] = None;
                    if change == Sleeps {
                        out.push(SchedChange::Preempt(thread));
                    }
                    self.dispatch(p, view, out);
                } else {
                    self.unqueue(t);
                }
            }
            Blocked => {
                let Some(p) = holds(self) else { return };
                let waiting = self.queue[p as usize]
                    .iter()
                    .any(|&w| view.thread(ThreadId(w)).state == ThreadState::Runnable);
                if self.cfg.yield_when_blocked && waiting {
                    self.take(p, false, out);
                    self.yields += 1;
                    self.dispatch(p, view, out);
                }
            }
            Unblocked => {
                if holds(self).is_none() {
                    let p = self.home[t as usize];
                    if self.current[p as usize].is_none() {
                        self.dispatch(p, view, out);
                    }
                }
            }
            Wakes => {
                let own = self.home[t as usize];
                if self.current[own as usize].is_none() {
                    self.unqueue(t);
                    self.run(t, own, out);
                } else if self.cfg.io_priority {
                    let n = self.current.len() as u32;
                    let p = self.rng(view).gen_range(0..n);
                    self.unqueue(t);
                    if self.take(p, true, out).is_some() {
                        self.io_preemptions += 1;
                    }
                    self.run(t, p, out);
                } else {
                    self.unqueue(t);
                    self.queue[own as usize].push_back(t);
                }
                if !self.ticking {
                    self.next_tick = now + Ns(self.cfg.quantum_ns);
                    self.next_balance = now + Ns(self.cfg.balance_ns);
                }
                self.ticking = true;
            }
        }
        if self.queue.iter().any(|q| !q.is_empty()) && !self.ticking {
            self.next_tick = now + Ns(self.cfg.quantum_ns);
            self.next_balance = now + Ns(self.cfg.balance_ns);
            self.ticking = true;
        }
    }

    fn counters(&self) -> Vec<Counter> {
        vec![
            Counter {
                name: "sched_preemptions",
                label: "quantum preemptions",
                value: self.preemptions,
            },
            Counter {
                name: "sched_io_preemptions",
                label: "preemptions by waking I/O threads",
                value: self.io_preemptions,
            },
            Counter {
                name: "sched_yields",
                label: "processors yielded at a barrier or lock",
                value: self.yields,
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

    fn tick(s: &mut TimeSharing, view: &mut FakeView) {
        let now = s.next_event().expect("the timer runs");
        let mut out = Vec::new();
        s.on_event(now, view, &mut out);
        view.apply(&out);
    }

    #[test]
    fn threads_beyond_the_processors_wait_in_run_queues() {
        let mut view = FakeView::new(2, 1, &[3]);
        let _s = started(TimeSharingConfig::default(), &mut view);
        assert_eq!(view.running(), vec![0, 1]);
        assert_eq!(view.proc(2), None);
    }

    #[test]
    fn a_waiting_thread_runs_when_the_quantum_expires() {
        let mut view = FakeView::new(2, 1, &[3]);
        let mut s = started(TimeSharingConfig::default(), &mut view);
        assert_eq!(s.next_event(), Some(Ns(20_000_000)));
        tick(&mut s, &mut view);
        // Thread 2 waited on processor 0's queue; thread 0 goes to its back.
        assert_eq!(view.proc(2), Some(0));
        assert_eq!(view.proc(0), None);
        assert_eq!(s.preemptions, 1);
    }

    #[test]
    fn a_preempted_thread_resumes_on_its_last_processor() {
        let mut view = FakeView::new(2, 1, &[3]);
        let mut s = started(TimeSharingConfig::default(), &mut view);
        tick(&mut s, &mut view);
        tick(&mut s, &mut view);
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
    fn a_thread_blocked_at_a_barrier_yields_to_a_waiting_thread() {
        let mut view = FakeView::new(2, 1, &[3]);
        let mut s = started(TimeSharingConfig::default(), &mut view);
        view.set(0, ThreadState::Blocked);
        tell(&mut s, &mut view, 0, ThreadChange::Blocked, 10);
        assert_eq!(view.proc(2), Some(0));
        assert_eq!(s.yields, 1);
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
