//! The scheduler interface: which thread runs on which processor, and when that changes.
//!
//! A scheduler gives every thread its first processor and may later emit changes
//! (preempt, resume, move), at times it announces or in answer to what happens to the
//! run's threads (created, finished, blocked, unblocked, entering and leaving parallel
//! constructs); the engine applies them and tells the policy. It reads the run through
//! [`SchedView`]: per program, the live, runnable and running thread counts; per thread,
//! its processor and state. The schedulers themselves are in [`crate::sched`], one file
//! each.

use crate::error::ConfigError;
use crate::machine::Machine;
use crate::registry::{Component, Describe, Meta, Params};
use crate::stats::Counter;
use crate::types::{Ns, ProcId, ThreadId};

/// A change of where a thread runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedChange {
    /// The thread stops running.
    Preempt(ThreadId),
    /// The thread runs again, on this processor.
    Resume(ThreadId, ProcId),
    /// The running thread moves to this processor.
    Move(ThreadId, ProcId),
}

/// A program of a run as the scheduler is told of it before the run starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramShape {
    /// Its threads; the run numbers all threads globally, program after program.
    pub threads: u32,
    /// Global id of its first thread.
    pub first_thread: u32,
    /// When its threads are created (ns).
    pub start: Ns,
}

/// What happened to a thread, as the scheduler is told of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadChange {
    /// The thread exists from now on (its program started). It runs on the processor
    /// [`Scheduler::start`] gave it, if any.
    Created,
    /// The thread issued its last operation.
    Finished,
    /// The thread waits at a barrier or a lock (it keeps its processor unless the
    /// scheduler moves something).
    Blocked,
    /// The barrier or lock released the thread.
    Unblocked,
    /// The thread waits for input or output ([`crate::component::Op::Sleep`]); it keeps
    /// its processor unless the scheduler moves something.
    Sleeps,
    /// The thread's input or output is done: it can run again.
    Wakes,
}

/// A thread's state, as a scheduler sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadState {
    /// Its program has not started yet.
    NotStarted,
    /// It can execute (whether or not it has a processor).
    Runnable,
    /// It waits at a barrier or a lock.
    Blocked,
    /// It waits for input or output.
    Sleeping,
    /// It finished.
    Finished,
}

/// One thread, as a scheduler sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadView {
    /// The program it belongs to.
    pub program: u32,
    /// Its number within the program.
    pub local: u32,
    /// Its processor, while it has one.
    pub proc: Option<ProcId>,
    /// Its state.
    pub state: ThreadState,
}

/// One program, as a scheduler sees it: the counts a scheduler allocates processors by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramView {
    /// Its shape (threads, first thread, start time).
    pub shape: ProgramShape,
    /// Threads created and not finished.
    pub live: u32,
    /// Live threads that are not blocked: those that could use a processor now.
    pub runnable: u32,
    /// Runnable threads that have a processor.
    pub running: u32,
    /// Threads inside a parallel construct (between its entry and its exit).
    pub in_parallel: u32,
    /// Whether it adapts its thread count to its processors at each parallel construct
    /// (process control, [`crate::component::Program::adapts_threads`]).
    pub adaptive: bool,
}

/// Whether a thread enters or leaves a parallel construct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boundary {
    /// The thread starts its part of the construct.
    Enter,
    /// The thread left the construct (after its closing barrier).
    Exit,
}

/// A thread crossing a parallel construct's boundary (a fork-join loop's iteration is one
/// construct): the points where an OpenMP-style runtime asks the scheduler for processors
/// and where a scheduler-aware policy polls thread states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parallel {
    /// The thread.
    pub thread: ThreadId,
    /// Its program.
    pub program: u32,
    /// The construct's number within the program (the loop iteration).
    pub construct: u32,
    /// Entry or exit.
    pub boundary: Boundary,
}

/// What a scheduler may read of the run: the machine, and every program and thread.
/// The engine implements it over its own state; a scheduler's unit tests can implement
/// it over plain vectors.
pub trait SchedView {
    /// The machine.
    fn machine(&self) -> &Machine;
    /// The run's seed: a scheduler that draws random numbers seeds its own generator
    /// from it, so a run stays reproducible. Default 0.
    fn seed(&self) -> u64 {
        0
    }
    /// Number of programs.
    fn programs(&self) -> u32;
    /// Program `p` (`p < programs()`).
    fn program(&self, p: u32) -> ProgramView;
    /// Number of threads of the run.
    fn threads(&self) -> u32;
    /// Thread `t` (`t < threads()`).
    fn thread(&self, t: ThreadId) -> ThreadView;
}

/// The scheduler interface. The hooks other than [`Scheduler::start`] do nothing by
/// default; each may append changes to `out`, which the engine applies at once (and
/// tells the policy of), in order.
pub trait Scheduler {
    /// Validates the run's programs against the machine and gives every thread (global
    /// numbering) the processor it runs on when created (`None`: created not running).
    fn start(
        &mut self,
        machine: &Machine,
        programs: &[ProgramShape],
    ) -> Result<Vec<Option<ProcId>>, ConfigError>;
    /// When the next timed change happens, if any.
    fn next_event(&self) -> Option<Ns> {
        None
    }
    /// The timed changes due at `now`.
    fn on_event(&mut self, _now: Ns, _view: &dyn SchedView, _out: &mut Vec<SchedChange>) {}
    /// A thread was created, finished, blocked or unblocked.
    fn on_thread(
        &mut self,
        _now: Ns,
        _view: &dyn SchedView,
        _thread: ThreadId,
        _change: ThreadChange,
        _out: &mut Vec<SchedChange>,
    ) {
    }
    /// A thread entered or left a parallel construct.
    fn on_parallel(
        &mut self,
        _now: Ns,
        _view: &dyn SchedView,
        _event: Parallel,
        _out: &mut Vec<SchedChange>,
    ) {
    }
    /// Counts of the scheduler's own (preemptions, thread migrations), read once at the
    /// end of the run; each becomes a key of the record. Default: none.
    fn counters(&self) -> Vec<Counter> {
        Vec::new()
    }
}

/// What a scheduler's configuration type declares besides its name and description (in
/// [`Describe`]): how to build the scheduler. A scheduler registers itself in its own
/// file with `inventory::submit!(SchedulerEntry::of::<ItsConfig>())`.
pub trait SchedulerParams: Describe {
    /// Builds the scheduler.
    fn build(&self) -> Box<dyn Scheduler>;
}

/// A scheduler's registry entry.
pub struct SchedulerEntry {
    /// Name, description, fields, defaults and parsing.
    pub meta: Meta,
    /// The constructor.
    pub build: fn(&dyn Params) -> Box<dyn Scheduler>,
}

impl SchedulerEntry {
    /// The entry of configuration type `C`.
    pub const fn of<C: SchedulerParams>() -> SchedulerEntry {
        SchedulerEntry {
            meta: Meta::of::<C>(),
            build: |p| {
                let c: &C = p
                    .as_any()
                    .downcast_ref()
                    .expect("an entry builds its own type");
                c.build()
            },
        }
    }
}

crate::registry::family! {
    /// The scheduler family of the registry.
    Schedulers: SchedulerEntry, SchedulerParams, section "scheduler", default "dedicated"
}

/// A registered scheduler with its parameters (serialized as a table with `kind`).
pub type SchedulerConfig = Component<Schedulers>;

impl SchedulerConfig {
    /// Validates the scheduler for `programs` on `machine` (what the engine would refuse
    /// at start, checked before anything else is built).
    pub fn check(&self, machine: &Machine, programs: &[ProgramShape]) -> Result<(), ConfigError> {
        self.check_ranges("scheduler")?;
        self.build().start(machine, programs).map(|_| ())
    }

    /// Builds the scheduler.
    pub fn build(&self) -> Box<dyn Scheduler> {
        (self.entry().build)(self.params())
    }
}
