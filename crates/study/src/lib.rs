//! Experiment machinery for numaplace, independent of the simulator:
//!
//! * [`spec`] — experiment specs (TOML) and their expansion into run points;
//! * [`store`] — results as JSON Lines, resumable after a kill;
//! * [`sweep`] — running points in parallel through a [`Runner`];
//! * [`stats`] — means, deviations and Student-t confidence intervals;
//! * [`table`] — summary tables (text, Markdown, CSV);
//! * [`plot`] — SVG and PNG plots;
//! * [`claims`] and [`reproduce`] — checking a paper's claims;
//! * [`report`] — tables and plots from a stored results file.

pub mod spec;
pub mod stats;
pub mod store;
pub mod sweep;
pub mod value;

pub use spec::{expand, parse_spec, RunPoint, Spec, SpecError};
pub use store::{load, Record};
pub use sweep::{merge, run_sweep, Runner, SweepOptions, SweepOutcome};
pub use value::{get_dotted, set_dotted};
