//! Schedulers (one file each): which thread runs on which processor, and when that changes.
//!
//! A scheduler gives every thread its first processor and may later emit changes
//! (preempt, resume, move) at times it announces; the engine applies them and tells the
//! policy. `dedicated` never changes anything; `scripted` replays a list of timed changes
//! (e.g. "at 5 ms preempt threads 8..15").

pub mod dedicated;
pub mod scripted;

use crate::error::ConfigError;
use crate::machine::Machine;
use crate::registry::{Component, Describe, Meta, Params};
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

/// The scheduler interface.
pub trait Scheduler {
    /// The first processor of each of `threads` threads (`None`: not running at start).
    fn start(
        &mut self,
        machine: &Machine,
        threads: u32,
    ) -> Result<Vec<Option<ProcId>>, ConfigError>;
    /// When the next change happens, if any.
    fn next_event(&self) -> Option<Ns> {
        None
    }
    /// Appends the changes due at `now` to `out`.
    fn on_event(&mut self, _now: Ns, _out: &mut Vec<SchedChange>) {}
}

pub use dedicated::DedicatedConfig;
pub use scripted::{ScriptAction, ScriptEvent, Scripted, ScriptedConfig};

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
    /// Validates the scheduler for `threads` threads on `machine` (what the engine would
    /// refuse at start, checked before anything else is built).
    pub fn check(&self, machine: &Machine, threads: u32) -> Result<(), ConfigError> {
        self.check_ranges("scheduler")?;
        self.build().start(machine, threads).map(|_| ())
    }

    /// Builds the scheduler.
    pub fn build(&self) -> Box<dyn Scheduler> {
        (self.entry().build)(self.params())
    }
}
