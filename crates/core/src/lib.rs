//! numaplace-core: a fast, deterministic simulator of a NUMA or tiered-memory machine
//! running parallel programs under a page-placement policy.
//!
//! Architecture invariant: this crate does no IO and knows no file format. Configurations
//! arrive as typed values (serde derives only); results leave as plain structs.
//!
//! Flow: [`RunConfig`] → [`Machine`] + programs ([`workload`]) + [`Policy`] +
//! scheduler ([`sched`]) → [`Engine`] → [`Stats`].

#![warn(missing_docs)]

// The derive macros name this crate by its path, also from inside it.
extern crate self as numaplace_core;

pub mod bigvec;
pub mod breakeven;
pub mod cache;
pub mod config;
pub mod engine;
pub mod error;
pub mod estimate;
pub mod fields;
pub mod history;
pub mod machine;
pub mod memory;
pub mod mm;
pub mod observe;
pub mod policy;
pub mod registry;
pub mod sched;
pub mod stats;
pub mod tune;
pub mod types;
pub mod workload;

pub use config::{ReportConfig, RunConfig};
pub use engine::{Engine, EngineOptions, Monitor, Progress, SimError, TIME_LIMIT};
pub use error::ConfigError;
pub use estimate::{Estimate, Footprint};
pub use history::{HistoryMode, RefHistory};
// Components register with `inventory::submit!`; re-exported so a crate using the core
// registers its own without naming the same version of inventory.
pub use inventory;
pub use machine::{Costs, Machine, MachineConfig, Topology};
pub use mm::{Mm, Recording, SimMm};
pub use observe::{ObservedRun, RefObserver};
pub use policy::{Policy, PolicyConfig};
pub use stats::Stats;
pub use types::{NodeId, NodeSet, Ns, NsOrInf, ProcId, ThreadId, Vpn};
