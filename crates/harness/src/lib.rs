//! numaplace-harness: everything between the user and the core. It resolves run
//! configurations (presets, TOML files, `--set` overrides) into typed, validated
//! [`RunConfig`]s, runs them, and turns [`Stats`] into JSON results and tables.
//!
//! Architecture invariant: the core never sees a file; every file and format is handled
//! here.

pub mod analysis;
pub mod bench;
pub mod error;
pub mod inputs;
pub mod limits;
pub mod locations;
pub mod oracle;
pub mod presets;
pub mod resolve;
pub mod result;
pub mod run_page;
pub mod slowdown;
pub mod study_runner;
pub mod text;
pub mod tune;

pub use error::{UserError, ValueSource};
pub use limits::{admit, Limits};
pub use numaplace_core::{RunConfig, Stats};
/// Recorded programs: the trace format and the `trace` workload, registered wherever the
/// harness is (as `oracle-replay` is through [`oracle`]).
pub use numaplace_trace as trace;
pub use resolve::{resolve, resolve_text, Overrides};
pub use result::{run_monitored, run_to_json, run_to_json_monitored, RunOutput};
pub use study_runner::SimRunner;
