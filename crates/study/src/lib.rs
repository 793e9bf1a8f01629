//! Experiment machinery for numaplace, independent of the simulator:
//!
//! * [`spec`] — experiment specs (TOML) and their expansion into run points;
//! * [`store`] — results as JSON Lines, resumable after a kill;
//! * [`sweep`] — running points in parallel through a [`Runner`];
//! * [`stats`] — means, deviations and Student-t confidence intervals;
//! * [`table`] — summary tables (text, Markdown, CSV);
//! * [`plot`] — SVG and PNG plots (text drawn with an embedded Noto Sans);
//! * [`html`] — self-contained HTML pages of reproductions, results and runs;
//! * [`claims`] and [`reproduce`] — checking a paper's claims;
//! * [`report`] — tables and plots from a stored results file.

pub mod claims;
pub mod html;
pub mod plot;
pub mod report;
pub mod reproduce;
pub mod spec;
pub mod stats;
pub mod store;
pub mod sweep;
pub mod table;
pub mod unit;
pub mod value;

pub use claims::{evaluate, Check, Claim, ClaimKind, ClaimResult, Status};
pub use report::{report, ReportOptions, ReportOutput};
pub use reproduce::{
    list_papers, reproduce, reproduce_from, Experiments, InlineFigure, PaperInfo, PaperSource,
    ReproReport, ReproduceOptions,
};
pub use spec::{expand, load_spec, parse_spec, Expansion, RunPoint, Spec, SpecError};
pub use stats::Summary;
pub use store::{load, Record};
pub use sweep::{
    merge, plan_sweep, run_plan, run_sweep, Runner, SweepOptions, SweepOutcome, SweepPlan,
    DEFAULT_MAX_RUNS,
};
pub use table::{summarize, SummaryTable, TableOptions};
pub use value::{get_dotted, path_segments, set_dotted};
