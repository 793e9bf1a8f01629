//! Run results as JSON: the statistics with the fully resolved configuration.

use numaplace_core::{RunConfig, SimError, Stats};
use serde_json::{json, Value};

/// The outcome of one run.
#[derive(Debug)]
pub struct RunOutput {
    /// The statistics.
    pub stats: Stats,
    /// The JSON record (deterministic: nothing in it depends on the host or the clock).
    pub json: Value,
}

/// The JSON record of a run.
pub fn stats_json(cfg: &RunConfig, s: &Stats) -> Value {
    let e = &s.events;
    // Holliday reports the average of the processors' completion times.
    let mean_completion_ns = if s.threads.is_empty() {
        0.0
    } else {
        s.threads
            .iter()
            .map(|t| t.completion_ns as f64)
            .sum::<f64>()
            / s.threads.len() as f64
    };
    json!({
        "makespan_ns": s.makespan_ns,
        "mean_completion_ns": mean_completion_ns,
        "refs": s.refs,
        "faults": e.faults,
        "migrations": e.migrations,
        "migrations_per_page": if s.npages == 0 { 0.0 } else { e.migrations as f64 / s.npages as f64 },
        "replications": e.replications,
        "coherency_faults": e.coherency_faults,
        "invalidations": e.invalidations,
        "freezes": e.freezes,
        "defrosts": e.defrosts,
        "refused": e.refused,
        "daemon_busy_ns": s.daemon_busy_ns,
        "daemon_passes": s.daemon_passes,
        "ops": s.ops,
        "threads": s.threads,
        "series": s.series,
        "pages": s.pages,
        "config": cfg,
    })
}

/// Runs `cfg` and returns its statistics and JSON record.
pub fn run_to_json(cfg: &RunConfig) -> Result<RunOutput, SimError> {
    let stats = cfg.run()?;
    let json = stats_json(cfg, &stats);
    Ok(RunOutput { stats, json })
}
