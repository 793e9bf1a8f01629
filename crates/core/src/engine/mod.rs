//! The discrete-event engine: threads issue operations over integer time, references cost
//! latency by the mapping they find, missing mappings fault into the policy, daemons run
//! periodically, barriers and locks make threads wait.
//!
//! Events are ordered by (time, sequence number), so simultaneous events run in the order
//! they were scheduled and a run is reproducible bit for bit. A thread keeps executing
//! operations without touching the event queue for as long as its next operation starts
//! strictly before every queued event: the result is the same as queueing it, only faster.

use crate::component::{
    Boundary, DaemonNext, DaemonPlacement, DaemonSpec, Op, Parallel, Policy, Program, ProgramShape,
    ProgramView, SchedChange, SchedEvent, SchedView, Scheduler, ThreadChange, ThreadState,
    ThreadView,
};
use crate::error::ConfigError;
use crate::machine::Machine;
use crate::mm::{MemSystem, SimMm};
use crate::stats::{
    EventCounts, PageReport, ProgramStats, RefCounts, SeriesPoint, Stats, ThreadStats,
};
use crate::types::{NodeId, Ns, ProcId, ThreadId, Vpn, TIME_LIMIT};
use event::{Event, EventQueue};
use std::collections::VecDeque;
use thiserror::Error;
use variation::{Ticks, VariationRt};

mod daemon;
mod event;
mod interleave;
mod ops;
mod reference;
mod rounds;
mod sched;
mod setup;
mod spin;
mod sync;
mod variation;

/// The event queue driven in the engine's pattern, for its criterion benchmark (the
/// queue itself stays private to the engine).
#[doc(hidden)]
pub mod queue_bench {
    use super::event::{Event, EventQueue};
    use crate::types::Ns;

    /// `threads` threads each take their turn and schedule their next step a
    /// pseudo-random 1-1024 ns later, `steps` times in all; returns the last time (so
    /// the work cannot be optimised away).
    pub fn churn(threads: u32, steps: u64) -> u64 {
        let mut q = EventQueue::default();
        for t in 0..threads {
            q.push(Ns(t as u64), Event::Thread(t));
        }
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut last = 0;
        for _ in 0..steps {
            let Some((now, Event::Thread(t))) = q.take() else {
                break;
            };
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            last = now.0;
            q.push(Ns(now.0 + 1 + (x & 1023)), Event::Thread(t));
        }
        last
    }
}

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
    /// A program could not go on (a replayed trace that became unreadable mid-run).
    #[error("program `{program}`: {message}")]
    Program {
        /// The program.
        program: String,
        /// Why.
        message: String,
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
    /// At iteration ends, also the references to each array of the program (needs
    /// `per_page`).
    pub series_by_array: bool,
    /// A simulated-time budget: a run still going when its next event is due after this
    /// time stops there, its statistics marked partial and [`Stats::budget_exceeded`]; a
    /// run that ends after it (a thread that ran ahead past it with nothing else queued)
    /// is marked exceeded too. `None`: no budget.
    pub budget: Option<Ns>,
}

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
/// estimates use it). A program has at least one thread, so a thread's share bounds its
/// program's runtime state and result too.
pub(crate) fn bytes_per_thread() -> u64 {
    (std::mem::size_of::<ThreadRt>()
        + std::mem::size_of::<ProgRt>()
        + std::mem::size_of::<ProgramStats>()
        + 64) as u64
}

/// A program of a run and when it starts: its threads are created at `start` (a run's
/// programs may arrive one after another, as jobs on a shared machine do).
pub struct Launch {
    /// The program.
    pub program: Box<dyn Program>,
    /// When its threads are created.
    pub start: Ns,
}

impl From<Box<dyn Program>> for Launch {
    /// A program that starts with the run.
    fn from(program: Box<dyn Program>) -> Launch {
        Launch {
            program,
            start: Ns::ZERO,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// Its program has not started yet.
    NotStarted,
    Ready,
    AtBarrier,
    AtLock,
    /// Waiting for an event count ([`Op::Await`]).
    AtEvent,
    /// Waiting for input or output ([`Op::Sleep`]) until the time it is queued for.
    Sleeping,
    Done,
}

#[derive(Debug)]
struct ThreadRt {
    prog: u32,
    local: u32,
    /// The run's page of its program's page 0.
    base_vpn: u32,
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
    /// The last parallel construct it entered.
    construct: Option<u32>,
    /// Its own steps to let pass before its polls are tried in bulk again, after an
    /// attempt that found no group (a poll that waits at a busy switch port finds none
    /// for a while; the results do not depend on it).
    spin_backoff: Backoff,
    stats: ThreadStats,
}

/// Steps to let pass before a bulk attempt is made again: none after an attempt that
/// made something, twice as many plus one (up to a bound) after each that did not.
#[derive(Clone, Copy, Debug, Default)]
struct Backoff {
    skip: u8,
    wait: u8,
}

impl Backoff {
    /// Whether the last attempts made nothing, enough of them to wait `at_most` steps.
    #[inline]
    fn saturated(&self, at_most: u8) -> bool {
        self.wait == at_most
    }

    /// Whether this step is one to let pass (counting it).
    #[inline]
    fn waiting(&mut self) -> bool {
        if self.skip == 0 {
            return false;
        }
        self.skip -= 1;
        true
    }

    /// After an attempt: whether it made something, and the longest wait.
    #[inline]
    fn after(&mut self, made: bool, at_most: u8) {
        self.wait = if made {
            0
        } else {
            (2 * self.wait + 1).min(at_most)
        };
        self.skip = self.wait;
    }
}

struct ProgRt {
    prog: Box<dyn Program>,
    base_vpn: u32,
    first_thread: u32,
    threads: u32,
    start: Ns,
    started: bool,
    /// Threads with status `Ready`, and those of them with a processor (what schedulers
    /// allocate by, kept up to date at every change rather than counted on demand).
    runnable: u32,
    running_ready: u32,
    /// Threads between a parallel construct's entry and exit.
    in_parallel: u32,
    /// Whether each thread has a processor (what fork-join programs deal chunks by).
    running: Vec<bool>,
    /// Whether the program adapts its thread count ([`Program::adapts_threads`]).
    adaptive: bool,
    /// Bytes one of its references stands for ([`Program::ref_bytes`]).
    ref_bytes: u64,
    barrier_waiting: Vec<u32>,
    live: u32,
    locks: Vec<(Option<u32>, VecDeque<u32>)>,
    iter_arrivals: Vec<u32>,
    /// Its threads' references at its last iteration end (for the series' per-program
    /// deltas).
    last_refs: RefCounts,
    /// Its arrays (name and page range, global page numbers) and their references at its
    /// last iteration end, when the series counts references per array.
    arrays: Vec<(String, u32, u32, RefCounts)>,
    events: Vec<u32>,
    /// Threads blocked in [`Op::Await`]: (thread, event, value that releases it).
    awaiting: Vec<(u32, u32, u32)>,
}

struct DaemonRt {
    node: NodeId,
    steal_proc: Option<ProcId>,
}

/// One simulation: build it with [`Engine::new`], run it with [`Engine::run`].
pub struct Engine {
    /// The mechanism: memory, history, modules, fault handlers, thread placement, RNG.
    mm: MemSystem,
    stats: Stats,
    policy: Box<dyn Policy>,
    scheduler: Box<dyn Scheduler>,
    progs: Vec<ProgRt>,
    threads: Vec<ThreadRt>,
    proc_busy_until: Vec<Ns>,
    daemons: Vec<DaemonRt>,
    queue: EventQueue,
    queued_threads: usize,
    done: usize,
    series_interval: Option<Ns>,
    last_point: (RefCounts, EventCounts),
    changes: Vec<SchedChange>,
    /// When the queued scheduler event is due, once the run is set up (a hook may start
    /// the scheduler's timer again, and the event is queued then).
    sched_at: Option<Ns>,
    sched_armed: bool,
    /// The run's seed (schedulers derive their own random streams from it).
    seed: u64,
    /// Programs whose start is still to come (their threads are not created yet).
    pending_starts: u32,
    /// Time of the event being handled (for errors that happen between events).
    now: Ns,
    /// Events handled.
    events: u64,
    /// Interval points recorded so far.
    interval_points: u64,
    /// The watcher, and the work count (ops + events) at which it is next called.
    monitor: Option<(Box<dyn Monitor>, u64)>,
    next_poll: u64,
    /// Told of every completed reference run (trace recording); usually absent.
    observer: Option<Box<dyn crate::observe::RefObserver>>,
    /// Run-to-run variation's start skews and daemon phases (absent: none).
    variation: Option<VariationRt>,
    /// Computation time as a percentage of the workloads' figures
    /// ([`crate::machine::MachineConfig::compute_time_pct`]).
    compute_pct: u64,
    /// Just past the simulated-time budget ([`EngineOptions::budget`]), or [`TIME_LIMIT`]
    /// without one: the first event due at or after it ends the run.
    stop_at: u64,
    /// Clock interrupts (absent: none).
    ticks: Option<Ticks>,
    /// Scratch of the polls made in bulk (`spin.rs`), kept to stay allocation-free.
    spin_group: Vec<spin::Poll>,
    spin_keys: Vec<u128>,
    spin_claims: Vec<u64>,
    spin_gen: u64,
    /// Scratch of the reference runs made in rounds (`rounds.rs`).
    turns: Vec<rounds::Turn>,
    /// Thread steps to let pass before rounds are tried again, after attempts that found
    /// no group (the wait doubles with each, so runs without groups pay little for
    /// trying; the results do not depend on it).
    rounds_backoff: Backoff,
    /// Thread steps to let pass before threads are interleaved again (`interleave.rs`),
    /// as `rounds_backoff`.
    interleave_backoff: Backoff,
    /// Whether a thread's page state is fetched a few operations ahead (runs with many
    /// pages: see `ops.rs`).
    prefetch: bool,
    /// [`Engine::bare_reference_path`], found once.
    bare: bool,
    /// Whether polls and reference runs of threads taking turns are made in bulk
    /// (`spin.rs`, `rounds.rs`, `interleave.rs`); off only to test that it changes
    /// nothing.
    bulk: bool,
}

impl Engine {
    pub(super) fn ctx(&mut self, now: Ns, actor: NodeId) -> (&mut dyn Policy, SimMm<'_>) {
        (
            self.policy.as_mut(),
            self.mm.sim(&mut self.stats, now, actor),
        )
    }

    /// Thread `t`'s step, taken from the queue, handled from `now`.
    #[inline(always)]
    pub(super) fn step_taken(&mut self, t: u32, now: Ns) -> Result<(), SimError> {
        let th = &mut self.threads[t as usize];
        th.queued = false;
        self.queued_threads -= 1;
        self.step_thread(t, now)
    }

    pub(super) fn queue_thread(&mut self, t: u32, at: Ns) {
        let th = &mut self.threads[t as usize];
        if !th.queued {
            th.queued = true;
            self.queued_threads += 1;
            self.queue.push(at, Event::Thread(t));
        }
    }

    /// Whether the polls and reference runs of threads taking turns are made in bulk (on
    /// by default; the results are the same either way, which tests hold it to).
    #[doc(hidden)]
    pub fn set_bulk(&mut self, on: bool) {
        self.bulk = on;
    }

    /// Calls `monitor` about every `every` operations or events while the run goes on.
    pub fn set_monitor(&mut self, monitor: Box<dyn Monitor>, every: u64) {
        let every = every.max(1);
        self.monitor = Some((monitor, every));
        self.next_poll = every;
    }

    /// Tells `observer` of every reference run from now on (see
    /// [`RefObserver`](crate::observe::RefObserver)).
    pub fn set_observer(&mut self, observer: Box<dyn crate::observe::RefObserver>) {
        self.observer = Some(observer);
    }

    /// Whether steps in bulk are ruled out: an observer, processor caches, page
    /// counters or entry copies, which the bulk steps do not model, are present.
    #[inline]
    fn bulk_ruled_out(&self) -> bool {
        self.observer.is_some()
            || self.mm.caches.is_some()
            || self.mm.counters.is_some()
            || self.mm.mem.has_entries()
    }

    /// Thread `t`, when nothing stands in the way of its next step at `at`: it is ready,
    /// owes no delay, and its processor is free (what a step made in bulk requires); and
    /// that processor.
    #[inline]
    fn unhindered(&self, t: u32, at: Ns) -> Option<(&ThreadRt, ProcId)> {
        let th = &self.threads[t as usize];
        let proc = th.proc?;
        (th.status == Status::Ready
            && th.delay == Ns::ZERO
            && self.proc_busy_until[proc.idx()] <= at)
            .then_some((th, proc))
    }

    /// Calls the monitor; `false` when it asks to stop.
    #[cold]
    pub(super) fn poll(&mut self, now: Ns) -> bool {
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

    /// For every page of the run, the names of the arrays it holds, from the programs
    /// the engine was built with (what [`crate::RunConfig::page_data`] gives without
    /// building them again).
    pub fn page_data(&self) -> crate::memory::PageNames {
        crate::memory::page_names(
            self.progs.iter().map(|p| p.prog.layout()),
            self.mm.machine.page_size(),
        )
    }

    /// Runs to completion and returns the statistics (marked partial when a monitor
    /// stopped the run).
    pub fn run(mut self) -> Result<Stats, SimError> {
        let total = self.threads.len();
        while self.done < total {
            let Some((now, event)) = self.queue.take() else {
                return Err(self.deadlock(self.now));
            };
            if now.0 >= self.stop_at {
                if now.0 >= TIME_LIMIT {
                    return Err(SimError::TimeOverflow { at: self.now });
                }
                // Out of budget: the event is not handled; the run is reported as far as
                // it got, not finished.
                self.stats.partial = true;
                self.stats.budget_exceeded = true;
                self.stats.makespan_ns = self.stats.makespan_ns.max(now.0);
                return Ok(self.finish());
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
            match event {
                Event::Thread(who) => {
                    // Polls, or reference runs, of threads taking turns or interleaving:
                    // made in bulk.
                    if !self.bulk {
                    } else if self.threads[who as usize].spin_on.is_some() {
                        if self.try_spin_rounds(who, now) {
                            continue;
                        }
                    } else if (!self.rounds_backoff.waiting() && self.run_rounds(who, now))
                        || (self.rounds_failing() && self.run_interleaved(who, now)?)
                    {
                        continue;
                    }
                    self.step_taken(who, now)?;
                }
                Event::Sched => self.sched_event(now),
                Event::Start(p) => self.start_program(p as usize, now),
                Event::Tick => {
                    self.tick(now)?;
                    self.check_progress(now)?;
                }
                Event::Daemon(id) => self.daemon_step(id as usize, now)?,
            }
        }
        // A thread that ran ahead to its end past the limit leaves a makespan beyond it.
        if self.stats.makespan_ns >= TIME_LIMIT {
            return Err(SimError::TimeOverflow { at: self.now });
        }
        if self.stats.makespan_ns >= self.stop_at {
            self.stats.budget_exceeded = true;
        }
        if let Some(e) = self.program_failure() {
            return Err(e);
        }
        Ok(self.finish())
    }

    /// The first program that could not go on, as the run's error.
    fn program_failure(&self) -> Option<SimError> {
        self.progs.iter().find_map(|p| {
            p.prog.failure().map(|message| SimError::Program {
                program: p.prog.name().to_string(),
                message,
            })
        })
    }

    /// A fixed-interval series point, and the next one scheduled.
    pub(super) fn tick(&mut self, now: Ns) -> Result<(), SimError> {
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
        let interval = self.series_interval.unwrap_or(Ns(1));
        self.series_point(u32::MAX, (now.0 / interval.0) as u32, now);
        self.queue.push(now + interval, Event::Tick);
        Ok(())
    }

    /// With no thread queued and no scheduler change to come, waiting threads can never
    /// run again.
    pub(super) fn check_progress(&self, now: Ns) -> Result<(), SimError> {
        if self.queued_threads == 0
            && self.done < self.threads.len()
            && self.pending_starts == 0
            && self.scheduler.next_event().is_none()
        {
            return Err(self.deadlock(now));
        }
        Ok(())
    }

    pub(super) fn deadlock(&self, at: Ns) -> SimError {
        // Threads of a program that stopped early wait for it: its failure is the cause.
        if let Some(e) = self.program_failure() {
            return e;
        }
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

    fn finish(mut self) -> Stats {
        let end = Ns(self.stats.makespan_ns);
        self.stats.npages = self.mm.mem.npages() as u64;
        self.stats.cache = self.mm.caches.as_ref().map(|c| c.stats);
        self.stats.own_counters = self.policy.counters();
        self.stats.own_counters.extend(self.scheduler.counters());
        for p in &self.progs {
            self.stats.own_counters.extend(p.prog.counters());
        }
        for r in self.stats.pages.iter_mut() {
            let p = self.mm.mem.page(Vpn(r.vpn));
            r.home = p.home.0;
            r.copies = p.copies.len();
            if let Some(since) = r.frozen_since.take() {
                r.frozen_at_end = true;
                r.frozen_ns += end.0.saturating_sub(since);
            }
        }
        self.stats.threads = self.threads.into_iter().map(|t| t.stats).collect();
        let npages = self.stats.npages as u32;
        let during = std::mem::take(&mut self.stats.programs);
        self.stats.programs = (0..self.progs.len())
            .map(|pi| {
                let p = &self.progs[pi];
                let end_vpn = self.progs.get(pi + 1).map_or(npages, |q| q.base_vpn);
                let mut out = ProgramStats {
                    name: p.prog.name().to_string(),
                    threads: p.threads,
                    first_thread: p.first_thread,
                    pages: (end_vpn - p.base_vpn) as u64,
                    first_vpn: p.base_vpn,
                    start_ns: p.start.0,
                    migrations: during.get(pi).map_or(0, |d| d.migrations),
                    resident_pages: (p.base_vpn..end_vpn)
                        .filter(|&v| self.mm.mem.copy_count(Vpn(v)) > 0)
                        .count() as u64,
                    ..Default::default()
                };
                let first = p.first_thread as usize;
                for t in &self.stats.threads[first..first + p.threads as usize] {
                    out.completion_ns = out.completion_ns.max(t.completion_ns);
                    out.refs.add_all(&t.refs);
                    out.faults += t.faults;
                    out.sync_wait_ns += t.sync_wait_ns;
                    out.fault_ns += t.fault_ns;
                }
                // A program that never started (a run stopped early) has no turnaround.
                out.turnaround_ns = out.completion_ns.saturating_sub(p.start.0);
                out
            })
            .collect();
        self.stats
    }
}
