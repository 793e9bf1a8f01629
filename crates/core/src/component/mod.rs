//! The vocabulary the engine speaks with the components it runs: a thread's operations
//! ([`Op`]), and what a program ([`Program`]), a placement policy ([`Policy`]) and a
//! scheduler ([`Scheduler`]) are, with the types their hooks take and the registry entries
//! through which a configuration builds them.
//!
//! Layering: this module depends only on the plain types, the machine and the mechanism
//! ([`crate::mm`]); the engine depends on it, and the implementations (`workload/`,
//! `policy/`, `sched/`, one file each) implement it without ever naming the engine.

pub mod op;
pub mod policy;
pub mod program;
pub mod scheduler;

pub use op::Op;
pub use policy::{
    default_fault, DaemonNext, DaemonPlacement, DaemonSpec, Fault, Policies, Policy, PolicyConfig,
    PolicyEntry, PolicyParams, SchedEvent,
};
pub use program::{Program, WorkloadConfig, WorkloadEntry, WorkloadParams, Workloads};
pub use scheduler::{
    Boundary, Parallel, ProgramShape, ProgramView, SchedChange, SchedView, Scheduler,
    SchedulerConfig, SchedulerEntry, SchedulerParams, Schedulers, ThreadChange, ThreadState,
    ThreadView,
};
