//! numaplace-oracle: the offline optimum of page placement.
//!
//! A run's references are recorded ([`trace`]) as a compact binary stream, never held
//! whole in memory, with the machine's cost table and the policy's own movements. The
//! solvers ([`dp`]) give, page by page, the cheapest schedule of moves for the page's
//! actual reference sequence in two models: migration only, and migration plus
//! replication with write-invalidate coherency. [`solve`] streams a trace through them
//! in parallel over pages and sets the policy's cost in the same model beside the
//! optimum. [`replay`] feeds the optimal schedule back into the simulator as a policy.
//!
//! The model prices reference runs by where they are served and moves by the machine's
//! migration, replication and coherency costs. It leaves out what couples pages and
//! threads: fault-handling time, TLB shootdowns, page-table-entry locks, memory-module
//! contention and synchronisation. The optimum is a lower bound on every policy's cost
//! in this model, not a makespan; replaying it measures the makespan.

pub mod brute;
pub mod capacity;
pub mod dp;
pub mod error;
pub mod model;
pub mod record;
pub mod replay;
pub mod solve;
pub mod trace;

pub use dp::{Cost, MAX_REPLICATION_NODES};
pub use model::CostModel;
