//! The discrete-event engine: threads issue operations over integer time, references cost
//! latency by the mapping they find, missing mappings fault into the policy, daemons run
//! periodically, barriers and locks make threads wait.
//!
//! Events are ordered by (time, sequence number), so simultaneous events run in the order
//! they were scheduled and a run is reproducible bit for bit. A thread keeps executing
//! operations without touching the event queue for as long as its next operation starts
//! strictly before every queued event: the result is the same as queueing it, only faster.

use crate::error::ConfigError;
use crate::history::RefHistory;
use crate::machine::Machine;
use crate::memory::{Access, Memory, UserRun};
use crate::mm::{Mm, SimMm};
use crate::policy::{
    default_fault, DaemonNext, DaemonPlacement, DaemonSpec, Fault, Policy, SchedEvent,
};
use crate::sched::{SchedChange, Scheduler};
use crate::stats::{EventCounts, PageReport, RefClass, RefCounts, SeriesPoint, Stats, ThreadStats};
use crate::types::{NodeId, Ns, ProcId, ThreadId, Vpn};
use crate::workload::{Op, Program};
use rand::SeedableRng;
use rand_pcg::Pcg64;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use thiserror::Error;

/// Why a run could not complete.
#[derive(Debug, Error)]
pub enum SimError {
    /// The configuration cannot be run.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Threads wait for each other forever (a barrier or lock never released).
    #[error("deadlock at {at}: threads {threads:?} wait forever")]
    Deadlock {
        /// When it was detected.
        at: Ns,
        /// The waiting threads.
        threads: Vec<u32>,
    },
    /// Simulated time ran past [`TIME_LIMIT`]: some cost or count is too large to be
    /// meaningful (the arithmetic saturates rather than wraps, and this catches it).
    #[error("simulated time passed {} ns (about 146 years) at {at}: a cost, count or duration in the configuration is too large", TIME_LIMIT)]
    TimeOverflow {
        /// The last time reached before the limit.
        at: Ns,
    },
    /// A policy broke its contract.
    #[error("policy `{policy}`: {message}")]
    Policy {
        /// The policy.
        policy: String,
        /// What it did wrong.
        message: String,
    },
}

/// Options of a run that are not part of the model.
#[derive(Clone, Debug, Default)]
pub struct EngineOptions {
    /// Seed of the run's random number generator.
    pub seed: u64,
    /// Keep a per-page report.
    pub per_page: bool,
    /// Also record a series point every this many ns (besides iteration ends).
    pub series_interval: Option<Ns>,
}

/// Simulated time a run may reach (2^62 ns, about 146 years); beyond it a result would
/// be meaningless, so the run stops with [`SimError::TimeOverflow`].
pub const TIME_LIMIT: u64 = 1 << 62;

/// Where a run is, as reported to a [`Monitor`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Simulated time of the event being handled.
    pub now: Ns,
    /// Operations executed so far.
    pub ops: u64,
    /// Events handled so far (thread steps, daemon wake-ups, scheduler changes, ticks).
    pub events: u64,
}

/// Watches a run: called every [`Engine::set_monitor`]'s interval of work, it may show
/// progress and may stop the run (the statistics so far are returned, marked partial).
pub trait Monitor {
    /// Reports progress; returns `false` to stop the run.
    fn progress(&mut self, p: Progress) -> bool;
}

/// Heap bytes one thread of a run takes besides its buffered operations (resource
/// estimates use it).
pub(crate) fn bytes_per_thread() -> u64 {
    (std::mem::size_of::<ThreadRt>() + 64) as u64
}

const DAEMON_BASE: u32 = 1 << 30;
const SCHED_EVENT: u32 = u32::MAX;
const TICK_EVENT: u32 = u32::MAX - 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Ready,
    AtBarrier,
    AtLock,
    Done,
}

#[derive(Debug)]
struct ThreadRt {
    prog: u32,
    local: u32,
    proc: Option<ProcId>,
    node: NodeId,
    buf: Vec<Op>,
    pos: usize,
    status: Status,
    queued: bool,
    /// Time the thread still owes to daemons that took a page-table entry in the
    /// middle of its last run.
    delay: Ns,
    /// When it started waiting at a barrier or lock.
    blocked_at: Ns,
    /// The event count and value it polls for, while it has not seen them yet.
    spin_on: Option<(u32, u32)>,
    stats: ThreadStats,
}

struct ProgRt {
    prog: Box<dyn Program>,
    base_vpn: u32,
    first_thread: u32,
    threads: u32,
    running: Vec<bool>,
    barrier_waiting: Vec<u32>,
    live: u32,
    locks: Vec<(Option<u32>, VecDeque<u32>)>,
    iter_arrivals: Vec<u32>,
    events: Vec<u32>,
}

struct DaemonRt {
    node: NodeId,
    steal_proc: Option<ProcId>,
}

/// One simulation: build it with [`Engine::new`], run it with [`Engine::run`].
pub struct Engine {
    machine: Machine,
    mem: Memory,
    hist: RefHistory,
    stats: Stats,
    modules: Vec<Ns>,
    rng: Pcg64,
    policy: Box<dyn Policy>,
    scheduler: Box<dyn Scheduler>,
    progs: Vec<ProgRt>,
    threads: Vec<ThreadRt>,
    thread_nodes: Vec<Option<NodeId>>,
    proc_busy_until: Vec<Ns>,
    daemons: Vec<DaemonRt>,
    heap: BinaryHeap<Reverse<(Ns, u64, u32)>>,
    seq: u64,
    queued_threads: usize,
    done: usize,
    series_interval: Option<Ns>,
    last_point: (RefCounts, EventCounts),
    changes: Vec<SchedChange>,
    /// Until when each page's fault handler is busy: faults on one page serialise.
    fault_busy: Vec<Ns>,
    /// Time of the event being handled (for errors that happen between events).
    now: Ns,
    /// Events handled.
    events: u64,
    /// Interval points recorded so far.
    interval_points: u64,
    /// The watcher, and the work count (ops + events) at which it is next called.
    monitor: Option<(Box<dyn Monitor>, u64)>,
    next_poll: u64,
}

impl Engine {
    /// Lays out the programs' address spaces one after another, assigns threads to
    /// processors, places pages as the policy says, and prepares daemons.
    pub fn new(
        machine: Machine,
        programs: Vec<Box<dyn Program>>,
        mut policy: Box<dyn Policy>,
        mut scheduler: Box<dyn Scheduler>,
        opts: EngineOptions,
    ) -> Result<Engine, SimError> {
        let ps = machine.page_size();
        let mut progs = Vec::new();
        let mut base = 0u64;
        let mut first_thread = 0u32;
        for p in programs {
            let pages = p.layout().pages(ps);
            let threads = p.threads();
            progs.push(ProgRt {
                base_vpn: base as u32,
                first_thread,
                threads,
                running: vec![true; threads as usize],
                barrier_waiting: Vec::new(),
                live: threads,
                locks: Vec::new(),
                iter_arrivals: Vec::new(),
                events: Vec::new(),
                prog: p,
            });
            base += pages;
            first_thread += threads;
        }
        let npages = base;
        if npages > u32::MAX as u64 / 2 {
            return Err(
                ConfigError::new("workload", format!("{npages} pages are too many")).into(),
            );
        }
        let frames = machine.config.frames_per_node as u64 * machine.nodes() as u64;
        if npages > frames {
            return Err(ConfigError::new(
                "machine.frames_per_node",
                format!(
                    "the workload needs {npages} pages but the machine has only {frames} frames"
                ),
            )
            .into());
        }
        let nthreads = first_thread;
        let procs = scheduler.start(&machine, nthreads)?;
        let mut used = vec![false; machine.procs()];
        let mut threads = Vec::with_capacity(nthreads as usize);
        for (pi, p) in progs.iter_mut().enumerate() {
            for local in 0..p.threads {
                let g = p.first_thread + local;
                let proc = procs.get(g as usize).copied().flatten();
                if let Some(pr) = proc {
                    used[pr.idx()] = true;
                }
                p.running[local as usize] = proc.is_some();
                threads.push(ThreadRt {
                    prog: pi as u32,
                    local,
                    proc,
                    node: proc.map(|pr| machine.node_of(pr)).unwrap_or(NodeId(0)),
                    buf: Vec::new(),
                    pos: 0,
                    status: Status::Ready,
                    queued: false,
                    delay: Ns::ZERO,
                    blocked_at: Ns::ZERO,
                    spin_on: None,
                    stats: ThreadStats {
                        id: g,
                        program: pi as u32,
                        ..Default::default()
                    },
                });
            }
        }
        let thread_nodes = threads.iter().map(|t| t.proc.map(|_| t.node)).collect();
        let hist = RefHistory::new(policy.history(), npages as usize, machine.nodes());
        let mut mem = Memory::new(
            npages as usize,
            machine.nodes(),
            machine.config.frames_per_node,
        );
        if policy.acquires_ptes() {
            mem.track_user_runs();
        }
        let mut stats = Stats::default();
        if opts.per_page {
            stats.pages = (0..npages)
                .map(|v| PageReport {
                    vpn: v as u32,
                    ..Default::default()
                })
                .collect();
        }
        // Initial placement at time 0, free of charge.
        for p in &progs {
            let hints = p.prog.placement_hints();
            let pages = p.prog.layout().pages(ps);
            for local in 0..pages {
                let vpn = Vpn(p.base_vpn + local as u32);
                let hint = hints
                    .get(local as usize)
                    .copied()
                    .flatten()
                    .and_then(|t| procs.get((p.first_thread + t) as usize).copied().flatten())
                    .map(|pr| machine.node_of(pr));
                if let Some(n) = policy.initial_placement(&machine, vpn, hint) {
                    if n.idx() >= machine.nodes() {
                        return Err(SimError::Policy {
                            policy: policy.name().into(),
                            message: format!(
                                "placed page {} on node {n}, which does not exist",
                                vpn.0
                            ),
                        });
                    }
                    let target = crate::mm::nearest_with_frame(&machine, &mem, n).unwrap_or(n);
                    if mem.take_frame(target) {
                        let page = mem.page_mut(vpn);
                        page.copies = crate::types::NodeSet::single(target);
                        page.home = target;
                    }
                }
            }
        }
        let specs: Vec<DaemonSpec> = policy.daemons(&machine);
        let mut daemons = Vec::new();
        for s in &specs {
            match s.placement {
                DaemonPlacement::OwnProcessor => {
                    let free = used.iter().position(|u| !u).ok_or_else(|| {
                        ConfigError::new(
                            "policy",
                            format!(
                                "daemon `{}` needs a processor of its own, but threads use all {}",
                                s.name,
                                machine.procs()
                            ),
                        )
                    })?;
                    used[free] = true;
                    daemons.push(DaemonRt {
                        node: machine.node_of(ProcId(free as u16)),
                        steal_proc: None,
                    });
                }
                DaemonPlacement::StealOn(n) => {
                    if n.idx() >= machine.nodes() {
                        return Err(ConfigError::new(
                            "policy",
                            format!("daemon `{}` on node {n}, which does not exist", s.name),
                        )
                        .into());
                    }
                    daemons.push(DaemonRt {
                        node: n,
                        steal_proc: Some(ProcId(n.0 * machine.config.procs_per_node)),
                    });
                }
            }
        }
        let nodes = machine.nodes();
        let nprocs = machine.procs();
        let mut engine = Engine {
            mem,
            hist,
            stats,
            modules: vec![Ns::ZERO; nodes],
            rng: Pcg64::seed_from_u64(opts.seed),
            policy,
            scheduler,
            progs,
            threads,
            thread_nodes,
            proc_busy_until: vec![Ns::ZERO; nprocs],
            daemons,
            heap: BinaryHeap::new(),
            seq: 0,
            queued_threads: 0,
            done: 0,
            series_interval: opts.series_interval.filter(|i| i.0 > 0),
            last_point: Default::default(),
            changes: Vec::new(),
            fault_busy: vec![Ns::ZERO; npages as usize],
            now: Ns::ZERO,
            events: 0,
            interval_points: 0,
            monitor: None,
            next_poll: u64::MAX,
            machine,
        };
        {
            let (policy, mut ctx) = engine.ctx(Ns::ZERO, NodeId(0));
            policy.init(&mut ctx);
        }
        // Scheduler changes due at time 0 apply before any thread starts, so a thread
        // preempted at 0 is not running when the first iteration's chunks are dealt.
        match engine.scheduler.next_event() {
            Some(Ns::ZERO) => engine.sched_event(Ns::ZERO),
            Some(t) => engine.push(t, SCHED_EVENT),
            None => {}
        }
        for t in 0..nthreads {
            if engine.threads[t as usize].proc.is_some() {
                engine.queue_thread(t, Ns::ZERO);
            }
        }
        for (i, s) in specs.iter().enumerate() {
            engine.push(s.first_wake, DAEMON_BASE + i as u32);
        }
        if let Some(i) = engine.series_interval {
            engine.push(i, TICK_EVENT);
        }
        Ok(engine)
    }

    fn ctx(&mut self, now: Ns, actor: NodeId) -> (&mut dyn Policy, SimMm<'_>) {
        (
            self.policy.as_mut(),
            SimMm {
                machine: &self.machine,
                mem: &mut self.mem,
                hist: &mut self.hist,
                stats: &mut self.stats,
                modules: &mut self.modules,
                thread_nodes: &self.thread_nodes,
                rng: &mut self.rng,
                now,
                actor,
                cost: Ns::ZERO,
            },
        )
    }

    #[inline]
    fn push(&mut self, t: Ns, who: u32) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, who)));
    }

    fn queue_thread(&mut self, t: u32, at: Ns) {
        let th = &mut self.threads[t as usize];
        if !th.queued {
            th.queued = true;
            self.queued_threads += 1;
            self.push(at, t);
        }
    }

    /// Calls `monitor` about every `every` operations or events while the run goes on.
    pub fn set_monitor(&mut self, monitor: Box<dyn Monitor>, every: u64) {
        let every = every.max(1);
        self.monitor = Some((monitor, every));
        self.next_poll = every;
    }

    /// Calls the monitor; `false` when it asks to stop.
    #[cold]
    fn poll(&mut self, now: Ns) -> bool {
        // Only `set_monitor` lowers `next_poll` below u64::MAX, so a monitor is there.
        let Some((m, every)) = &mut self.monitor else {
            return true;
        };
        self.next_poll = (self.stats.ops + self.events).saturating_add(*every);
        m.progress(Progress {
            now,
            ops: self.stats.ops,
            events: self.events,
        })
    }

    /// Runs to completion and returns the statistics (marked partial when a monitor
    /// stopped the run).
    pub fn run(mut self) -> Result<Stats, SimError> {
        let total = self.threads.len();
        while self.done < total {
            let Some(Reverse((now, _, who))) = self.heap.pop() else {
                return Err(self.deadlock(self.now));
            };
            if now.0 >= TIME_LIMIT {
                return Err(SimError::TimeOverflow { at: self.now });
            }
            self.now = now;
            self.events += 1;
            if self.stats.ops + self.events >= self.next_poll && !self.poll(now) {
                // The event just taken is not handled: what is reported is the run up
                // to `now`.
                self.stats.partial = true;
                self.stats.makespan_ns = self.stats.makespan_ns.max(now.0);
                return Ok(self.finish());
            }
            if who < DAEMON_BASE {
                let th = &mut self.threads[who as usize];
                th.queued = false;
                self.queued_threads -= 1;
                self.step_thread(who, now)?;
            } else if who == SCHED_EVENT {
                self.sched_event(now);
            } else if who == TICK_EVENT {
                self.interval_points += 1;
                if self.interval_points > crate::estimate::MAX_INTERVAL_POINTS {
                    return Err(ConfigError::new(
                        "report.series_interval_ns",
                        format!(
                            "more than {} interval points by {now}; choose a longer interval",
                            crate::estimate::MAX_INTERVAL_POINTS
                        ),
                    )
                    .into());
                }
                self.series_point(
                    u32::MAX,
                    (now.0 / self.series_interval.unwrap_or(Ns(1)).0) as u32,
                    now,
                );
                if let Some(i) = self.series_interval {
                    self.push(now + i, TICK_EVENT);
                }
                self.check_progress(now)?;
            } else {
                self.daemon_step((who - DAEMON_BASE) as usize, now);
                self.check_progress(now)?;
            }
        }
        // A thread that ran ahead to its end past the limit leaves a makespan beyond it.
        if self.stats.makespan_ns >= TIME_LIMIT {
            return Err(SimError::TimeOverflow { at: self.now });
        }
        Ok(self.finish())
    }

    /// With no thread queued and no scheduler change to come, waiting threads can never
    /// run again.
    fn check_progress(&self, now: Ns) -> Result<(), SimError> {
        if self.queued_threads == 0
            && self.done < self.threads.len()
            && self.scheduler.next_event().is_none()
        {
            return Err(self.deadlock(now));
        }
        Ok(())
    }

    fn deadlock(&self, at: Ns) -> SimError {
        SimError::Deadlock {
            at,
            threads: self
                .threads
                .iter()
                .filter(|t| t.status != Status::Done)
                .map(|t| t.stats.id)
                .collect(),
        }
    }

    fn step_thread(&mut self, tid: u32, mut now: Ns) -> Result<(), SimError> {
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
            let op = th.buf[th.pos];
            th.pos += 1;
            self.stats.ops += 1;
            let next = match op {
                Op::Ref { vpn, write, count } => self.reference(tid, now, vpn, write, count)?,
                Op::Compute(d) => now + d,
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
                    let end = self.reference(tid, now, vpn, write, count.max(1))?;
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
                    now
                }
            };
            match self.heap.peek() {
                Some(Reverse((t, _, _))) if *t <= next => {
                    self.queue_thread(tid, next);
                    return Ok(());
                }
                // Running ahead yields to the event loop when a monitor is due, so
                // progress shows and a stop request is honoured. (Time past the limit is
                // caught when the thread's next event is taken or when the run ends.)
                _ if self.stats.ops + self.events >= self.next_poll => {
                    self.queue_thread(tid, next);
                    return Ok(());
                }
                _ => now = next,
            }
        }
    }

    /// Whether no thread can ever make progress: every unfinished thread spins on an event
    /// count or waits at a barrier or lock, and no scheduler change is to come. (Waiting
    /// threads alone are caught when the event queue runs dry; spinning threads keep it
    /// busy, so they are checked here.)
    fn stuck(&self) -> bool {
        self.scheduler.next_event().is_none()
            && self.threads.iter().all(|t| {
                let spins_in_vain = t
                    .spin_on
                    .is_some_and(|(e, v)| self.event_value(t.prog, e) < v);
                t.status != Status::Ready || spins_in_vain || t.proc.is_none()
            })
    }

    /// After a thread blocked: a deadlock error if spinning threads now wait forever.
    fn unless_stuck(&self, now: Ns) -> Result<(), SimError> {
        if self.threads.iter().any(|t| t.spin_on.is_some()) && self.stuck() {
            return Err(self.deadlock(now));
        }
        Ok(())
    }

    /// Program `prog`'s event count `event` (0 until first advanced).
    fn event_value(&self, prog: u32, event: u32) -> u32 {
        self.progs[prog as usize]
            .events
            .get(event as usize)
            .copied()
            .unwrap_or(0)
    }

    /// A run of `count` references; returns when it ends.
    #[inline]
    fn reference(
        &mut self,
        tid: u32,
        now: Ns,
        local_vpn: Vpn,
        write: bool,
        count: u32,
    ) -> Result<Ns, SimError> {
        let th = &self.threads[tid as usize];
        let node = th.node;
        let vpn = Vpn(self.progs[th.prog as usize].base_vpn + local_vpn.0);
        if vpn.idx() >= self.mem.npages() {
            return Err(SimError::Policy {
                policy: "workload".into(),
                message: format!(
                    "thread {tid} referenced page {} outside its address space",
                    local_vpn.0
                ),
            });
        }
        let needed = if write { Access::Write } else { Access::Read };
        let mut t = now;
        let mut m = self.mem.mapping(vpn, node);
        if m.access < needed {
            // Faults on one page serialise on its fault handler (PLATINUM's Cpage lock):
            // a fault arriving while another is handled waits, then finds the page as
            // the earlier fault left it.
            let busy = self.fault_busy[vpn.idx()];
            if busy > t {
                let wait = busy - t;
                self.threads[tid as usize].stats.fault_wait_ns += wait.0;
                if let Some(r) = self.stats.pages.get_mut(vpn.idx()) {
                    r.contended_faults += 1;
                    r.fault_wait_ns += wait.0;
                }
                t = busy;
                m = self.mem.mapping(vpn, node);
            }
        }
        if m.access < needed {
            let now = t;
            let fault = Fault {
                thread: ThreadId(tid),
                node,
                vpn,
                write,
            };
            let fault_cost = Ns(self.machine.costs().page_fault_ns);
            let (policy, mut ctx) = self.ctx(now, node);
            ctx.cost = fault_cost;
            policy.on_fault(&mut ctx, fault);
            if ctx.mapping(vpn, node).access < needed {
                default_fault(&mut ctx, fault);
            }
            let cost = ctx.cost;
            t += cost;
            self.apply_delays();
            self.fault_busy[vpn.idx()] = t;
            m = self.mem.mapping(vpn, node);
            if m.access < needed {
                return Err(SimError::Policy {
                    policy: self.policy.name().into(),
                    message: format!("page {} left unmapped on node {node} after a fault", vpn.0),
                });
            }
            self.stats.events.faults += 1;
            let ts = &mut self.threads[tid as usize].stats;
            ts.faults += 1;
            ts.fault_ns += cost.0;
            if let Some(r) = self.stats.pages.get_mut(vpn.idx()) {
                r.faults += 1;
                r.fault_ns += cost.0;
            }
        }
        let locked = self.mem.pte_locked_until(vpn, node);
        let ts = &mut self.threads[tid as usize].stats;
        if locked > t {
            ts.pte_wait_ns += (locked - t).0;
            t = locked;
        }
        let costs = self.machine.costs();
        let (per_word, class) = if m.target == node {
            match costs.cached_read_ns {
                Some(c) if !write && self.mem.page(vpn).copies.len() > 1 => (c, RefClass::Cached),
                _ => (
                    if write {
                        costs.local_write_ns
                    } else {
                        costs.local_read_ns
                    },
                    RefClass::Local,
                ),
            }
        } else if write {
            (self.machine.write_ns(node, m.target), RefClass::Remote)
        } else {
            (self.machine.read_ns(node, m.target), RefClass::Remote)
        };
        if self.machine.config.contention && class != RefClass::Cached {
            let busy = &mut self.modules[m.target.idx()];
            let start = t.max(*busy);
            ts.contention_wait_ns += (start - t).0;
            *busy = start + Ns(costs.module_service_ns.saturating_mul(count as u64));
            t = start;
        }
        let start = t;
        // Saturating: an absurd cost reaches TIME_LIMIT and is reported, never wraps.
        t += Ns(per_word.saturating_mul(count as u64));
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
        let ts = &mut self.threads[tid as usize].stats;
        ts.refs.add(class, count as u64);
        self.stats.refs.add(class, count as u64);
        if let Some(r) = self.stats.pages.get_mut(vpn.idx()) {
            r.refs.add(class, count as u64);
        }
        self.hist.record(vpn, node, count);
        if write {
            let p = self.mem.page_mut(vpn);
            p.dirty = true;
            p.written_since_age = true;
        }
        Ok(t)
    }

    fn advise(&mut self, tid: u32, local_vpn: Vpn, now: Ns) -> Result<Ns, SimError> {
        let th = &self.threads[tid as usize];
        let node = th.node;
        let vpn = Vpn(self.progs[th.prog as usize].base_vpn + local_vpn.0);
        if vpn.idx() >= self.mem.npages() {
            return Err(SimError::Policy {
                policy: "workload".into(),
                message: format!(
                    "thread {tid} advised page {} outside its address space",
                    local_vpn.0
                ),
            });
        }
        let (policy, mut ctx) = self.ctx(now, node);
        policy.on_advise(&mut ctx, ThreadId(tid), vpn);
        let end = now + ctx.cost;
        self.apply_delays();
        Ok(end)
    }

    /// Hands pending page-table-entry delays to the threads they hold up.
    fn apply_delays(&mut self) {
        if !self.mem.has_delays() {
            return;
        }
        for (t, d) in self.mem.take_delays() {
            if let Some(th) = self.threads.get_mut(t as usize) {
                th.delay += d;
            }
        }
    }

    /// Arrival at the program's barrier; returns whether the thread continues now.
    fn barrier(&mut self, tid: u32, now: Ns) -> bool {
        let pi = self.threads[tid as usize].prog as usize;
        self.progs[pi].barrier_waiting.push(tid);
        if self.progs[pi].barrier_waiting.len() as u32 >= self.progs[pi].live {
            self.release_barrier(pi, tid, now);
            true
        } else {
            let th = &mut self.threads[tid as usize];
            th.status = Status::AtBarrier;
            th.blocked_at = now;
            false
        }
    }

    fn release_barrier(&mut self, pi: usize, except: u32, now: Ns) {
        let waiting = std::mem::take(&mut self.progs[pi].barrier_waiting);
        for &w in &waiting {
            if w != except {
                let th = &mut self.threads[w as usize];
                th.stats.sync_wait_ns += (now - th.blocked_at).0;
                th.status = Status::Ready;
                if self.threads[w as usize].proc.is_some() {
                    self.queue_thread(w, now);
                }
            }
        }
        let mut waiting = waiting;
        waiting.clear();
        self.progs[pi].barrier_waiting = waiting;
    }

    fn lock_slot(&mut self, tid: u32, l: u32) -> (usize, usize) {
        let pi = self.threads[tid as usize].prog as usize;
        let locks = &mut self.progs[pi].locks;
        if locks.len() <= l as usize {
            locks.resize_with(l as usize + 1, || (None, VecDeque::new()));
        }
        (pi, l as usize)
    }

    fn lock(&mut self, tid: u32, l: u32, now: Ns) -> bool {
        let (pi, li) = self.lock_slot(tid, l);
        let slot = &mut self.progs[pi].locks[li];
        if slot.0.is_none() {
            slot.0 = Some(tid);
            true
        } else {
            slot.1.push_back(tid);
            self.threads[tid as usize].status = Status::AtLock;
            self.threads[tid as usize].blocked_at = now;
            false
        }
    }

    fn unlock(&mut self, tid: u32, l: u32, now: Ns) {
        let (pi, li) = self.lock_slot(tid, l);
        let slot = &mut self.progs[pi].locks[li];
        if slot.0 != Some(tid) {
            return;
        }
        slot.0 = slot.1.pop_front();
        if let Some(next) = slot.0 {
            let th = &mut self.threads[next as usize];
            th.stats.sync_wait_ns += (now - th.blocked_at).0;
            th.status = Status::Ready;
            if self.threads[next as usize].proc.is_some() {
                self.queue_thread(next, now);
            }
        }
    }

    fn iteration_end(&mut self, tid: u32, k: u32, now: Ns) -> Ns {
        let th = &self.threads[tid as usize];
        let (pi, node) = (th.prog as usize, th.node);
        let p = &mut self.progs[pi];
        if p.iter_arrivals.len() <= k as usize {
            p.iter_arrivals.resize(k as usize + 1, 0);
        }
        p.iter_arrivals[k as usize] += 1;
        if p.iter_arrivals[k as usize] < p.threads {
            return now;
        }
        self.series_point(pi as u32, k, now);
        let (policy, mut ctx) = self.ctx(now, node);
        policy.on_iteration_end(&mut ctx, pi as u32, k);
        let end = now + ctx.cost;
        self.apply_delays();
        end
    }

    fn series_point(&mut self, program: u32, iteration: u32, now: Ns) {
        let (refs0, ev0) = self.last_point;
        self.stats.series.push(SeriesPoint {
            program,
            iteration,
            time_ns: now.0,
            refs: self.stats.refs.minus(&refs0),
            events: self.stats.events.minus(&ev0),
        });
        self.last_point = (self.stats.refs, self.stats.events);
    }

    fn finish_thread(&mut self, tid: u32, now: Ns) {
        let th = &mut self.threads[tid as usize];
        th.status = Status::Done;
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
    }

    fn daemon_step(&mut self, id: usize, now: Ns) {
        let (node, steal) = (self.daemons[id].node, self.daemons[id].steal_proc);
        let (policy, mut ctx) = self.ctx(now, node);
        let next = policy.on_daemon(&mut ctx, id);
        let busy = ctx.cost;
        self.apply_delays();
        self.stats.daemon_busy_ns += busy.0;
        if let Some(p) = steal {
            let b = &mut self.proc_busy_until[p.idx()];
            *b = (*b).max(now + busy);
        }
        if let DaemonNext::After(wait) = next {
            // A daemon that neither works nor waits would spin at one instant forever.
            let at = (now + busy + wait).max(now + Ns(1));
            self.push(at, DAEMON_BASE + id as u32);
        }
    }

    fn sched_event(&mut self, now: Ns) {
        let mut changes = std::mem::take(&mut self.changes);
        changes.clear();
        self.scheduler.on_event(now, &mut changes);
        for &c in &changes {
            let (tid, ev) = match c {
                SchedChange::Preempt(t) => (t, SchedEvent::Preempted(t)),
                SchedChange::Resume(t, p) => (t, SchedEvent::Resumed(t, p)),
                SchedChange::Move(t, p) => {
                    let from = self.threads[t.idx()].proc.unwrap_or(p);
                    (
                        t,
                        SchedEvent::Migrated {
                            thread: t,
                            from,
                            to: p,
                        },
                    )
                }
            };
            let Some(th) = self.threads.get_mut(tid.idx()) else {
                continue;
            };
            if th.status == Status::Done {
                continue;
            }
            match c {
                SchedChange::Preempt(_) => th.proc = None,
                SchedChange::Resume(_, p) | SchedChange::Move(_, p) => {
                    th.proc = Some(p);
                    th.node = self.machine.node_of(p);
                }
            }
            let running = th.proc.is_some();
            let (pi, local, node) = (th.prog as usize, th.local as usize, th.node);
            self.progs[pi].running[local] = running;
            self.thread_nodes[tid.idx()] = th.proc.map(|_| node);
            if running && th.status == Status::Ready {
                self.queue_thread(tid.0, now);
            }
            let (policy, mut ctx) = self.ctx(now, node);
            policy.on_sched_event(&mut ctx, ev);
            self.stats.daemon_busy_ns += ctx.cost.0;
        }
        self.changes = changes;
        if let Some(t) = self.scheduler.next_event() {
            self.push(t.max(now), SCHED_EVENT);
        }
    }

    fn finish(mut self) -> Stats {
        let end = Ns(self.stats.makespan_ns);
        self.stats.npages = self.mem.npages() as u64;
        for r in self.stats.pages.iter_mut() {
            let p = self.mem.page(Vpn(r.vpn));
            r.home = p.home.0;
            r.copies = p.copies.len();
            if let Some(since) = r.frozen_since.take() {
                r.frozen_at_end = true;
                r.frozen_ns += end.0.saturating_sub(since);
            }
        }
        self.stats.threads = self.threads.into_iter().map(|t| t.stats).collect();
        self.stats
    }
}
