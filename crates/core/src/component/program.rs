//! Programs: threads, an address space and lazily generated operations, and how a
//! workload's configuration builds them (its registry entry).

use super::op::Op;
use crate::error::ConfigError;
use crate::estimate::Footprint;
use crate::machine::Machine;
use crate::memory::Layout;
use crate::registry::{Component, Describe, Meta, Params};

/// A program: threads, an address space, and lazily generated operations.
pub trait Program {
    /// Name, for reports.
    fn name(&self) -> &str;
    /// Number of threads.
    fn threads(&self) -> u32;
    /// The address space.
    fn layout(&self) -> &Layout;
    /// Program-directed placement: for each page, the (program-local) thread whose node
    /// should hold it; empty when the program does not place its data (UMA variants).
    fn placement_hints(&self) -> &[Option<u32>];
    /// Appends the next operations of thread `t` to `out` (which is empty on entry);
    /// leaving it empty means the thread is done. `running[i]` says whether thread `i` runs.
    fn next_ops(&mut self, t: u32, running: &[bool], out: &mut Vec<Op>);
    /// Counts of the program's own, read once at the end of the run (e.g. psolu's
    /// iterations to convergence); each becomes a top-level key of the run's record.
    /// Default: none.
    fn counters(&self) -> Vec<crate::stats::Counter> {
        Vec::new()
    }
    /// Whether the program adapts its thread count to the processors it has at each
    /// parallel construct (process control): a thread not running when a construct's work
    /// is dealt sits the construct out, and the construct's barrier and iteration end wait
    /// only for the team. Default: no (every live thread takes part in every barrier).
    fn adapts_threads(&self) -> bool {
        false
    }
    /// How many threads the barrier thread `t` has just reached waits for; `None`: every
    /// live thread of the program (the default).
    fn barrier_parties(&self, _t: u32) -> Option<u32> {
        None
    }
    /// How many threads end iteration `k`; `None`: every thread (the default).
    fn iteration_parties(&self, _k: u32) -> Option<u32> {
        None
    }
    /// Why the program could not go on, if it stopped early (a replayed trace that
    /// became unreadable mid-run): the run then fails with it instead of reporting a
    /// shorter program. Read when the run ends or stalls. Default: never.
    fn failure(&self) -> Option<String> {
        None
    }
    /// Bytes one reference of the program's runs stands for, where it is not a machine
    /// word (a model that counts one reference per cache line); `None`: a word. The
    /// processor caches turn a run's references into the lines it walks by it.
    fn ref_bytes(&self) -> Option<u64> {
        None
    }
}

/// What a workload's configuration type declares besides its name and description (in
/// [`Describe`]): its size and how to build it. A workload registers itself in its own
/// file with `inventory::submit!(WorkloadEntry::of::<ItsConfig>())`.
pub trait WorkloadParams: Describe {
    /// Validates the parameters and sizes the programs without allocating them.
    fn footprint(&self, machine: &Machine) -> Result<Footprint, ConfigError>;
    /// Builds the programs for `machine`.
    fn build(&self, machine: &Machine) -> Result<Vec<Box<dyn Program>>, ConfigError>;
}

type FootprintFn = fn(&dyn Params, &Machine) -> Result<Footprint, ConfigError>;
type BuildFn = fn(&dyn Params, &Machine) -> Result<Vec<Box<dyn Program>>, ConfigError>;

/// A workload's registry entry.
pub struct WorkloadEntry {
    /// Name, description, fields, defaults and parsing.
    pub meta: Meta,
    /// The sizing.
    pub footprint: FootprintFn,
    /// The constructor.
    pub build: BuildFn,
}

fn params_of<C: WorkloadParams>(p: &dyn Params) -> &C {
    p.as_any()
        .downcast_ref()
        .expect("an entry reads its own type")
}

impl WorkloadEntry {
    /// The entry of configuration type `C`.
    pub const fn of<C: WorkloadParams>() -> WorkloadEntry {
        WorkloadEntry {
            meta: Meta::of::<C>(),
            footprint: |p, m| params_of::<C>(p).footprint(m),
            build: |p, m| params_of::<C>(p).build(m),
        }
    }
}

crate::registry::family! {
    /// The workload family of the registry.
    Workloads: WorkloadEntry, WorkloadParams, section "workload", default "jacobi"
}

/// A registered workload with its parameters (serialized as a table with `kind`).
pub type WorkloadConfig = Component<Workloads>;

impl WorkloadConfig {
    /// Validates the parameters (declared ranges first, so no registered workload can
    /// skip them) and sizes the programs without allocating them.
    pub fn footprint(&self, machine: &Machine) -> Result<Footprint, ConfigError> {
        self.check_ranges("workload")?;
        (self.entry().footprint)(self.params(), machine)
    }

    /// Builds the programs for `machine`, declared ranges checked first.
    pub fn build(&self, machine: &Machine) -> Result<Vec<Box<dyn Program>>, ConfigError> {
        self.check_ranges("workload")?;
        (self.entry().build)(self.params(), machine)
    }
}
