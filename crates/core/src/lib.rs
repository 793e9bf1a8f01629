//! numaplace-core: a fast, deterministic simulator of a NUMA or tiered-memory machine
//! running parallel programs under a page-placement policy.
//!
//! Architecture invariant: this crate does no IO and knows no file format. Configurations
//! arrive as typed values (serde derives only); results leave as plain structs.
//!
//! Flow: [`RunConfig`] → [`Machine`] + programs ([`workload`]) + [`Policy`] +
//! scheduler ([`sched`]) → [`Engine`] → [`Stats`].
//!
//! Layers, bottom-up (a module uses its own layer and those below it only; ARCHITECTURE.md
//! draws them and a test holds the code to them): plain types ([`types`], [`error`],
//! [`fields`], [`bigvec`], [`registry`], [`tune`], [`estimate`], [`observe`]); the machine
//! ([`machine`], [`cache`], [`stats`], [`breakeven`]); the mechanism ([`memory`],
//! [`history`], [`mm`]); the vocabulary of components ([`component`]); the [`engine`]; the
//! implementations ([`policy`], [`workload`], [`sched`]); the configuration ([`config`]).

#![warn(missing_docs)]

// The derive macros name this crate by its path, also from inside it.
extern crate self as numaplace_core;

// Plain types.
pub mod bigvec;
pub mod error;
pub mod estimate;
pub mod fields;
pub mod observe;
pub mod registry;
pub mod tune;
pub mod types;

// The machine.
pub mod bandwidth;
pub mod breakeven;
pub mod cache;
pub mod machine;
pub mod stats;

// The mechanism.
pub mod history;
pub mod memory;
pub mod mm;

// The vocabulary of components.
pub mod component;

// The engine.
pub mod engine;

// The implementations, one file each.
pub mod policy;
pub mod sched;
pub mod workload;

// The configuration.
pub mod config;

pub use config::{ReportConfig, RunConfig};
pub use engine::{Engine, EngineOptions, Monitor, Progress, SimError};
pub use error::ConfigError;
pub use estimate::{Estimate, Footprint};
pub use history::{HistoryMode, RefHistory};
// Components register with `inventory::submit!`; re-exported so a crate using the core
// registers its own without naming the same version of inventory.
pub use component::{
    Op, Policy, PolicyConfig, Program, Scheduler, SchedulerConfig, WorkloadConfig,
};
pub use inventory;
pub use machine::{Costs, Machine, MachineConfig, Topology};
pub use mm::{Mm, Recording, SimMm};
pub use observe::{ObservedRun, RefObserver};
pub use stats::Stats;
pub use types::{NodeId, NodeSet, Ns, NsOrInf, ProcId, ThreadId, Vpn, TIME_LIMIT};
