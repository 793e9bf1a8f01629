//! The simulator as a [`Runner`] of the experiment machinery: each run point's
//! configuration is resolved exactly like a `numaplace run --config` file.

use crate::analysis::{run_analysis, AnalysisConfig};
use crate::{resolve, run_to_json, Overrides, UserError};
use numaplace_study::{RunPoint, Runner};
use serde_json::Value;

/// Runs sweep points through the simulator.
#[derive(Clone, Copy, Debug, Default)]
pub struct SimRunner;

impl Runner for SimRunner {
    fn run(&self, point: &RunPoint) -> anyhow::Result<Value> {
        let mut table = point.config.clone();
        // A point with an `[analysis]` table evaluates a cost analysis on its machine
        // instead of simulating (e.g. PLATINUM's Table 1).
        if let Some(a) = table.remove("analysis") {
            let analysis: AnalysisConfig = a.try_into().map_err(|e: toml::de::Error| {
                UserError::new(format!("{}: analysis: {}", point.id, e.message()))
            })?;
            let cfg = resolve(Some((&point.id, table)), &Overrides::default())?;
            return Ok(run_analysis(&cfg.machine, &analysis)?);
        }
        let cfg = resolve(Some((&point.id, table)), &Overrides::default())?;
        let mut out = run_to_json(&cfg)?;
        // Per-page reports are large; a sweep record keeps them only when asked for.
        if !cfg.report.per_page {
            if let Some(o) = out.json.as_object_mut() {
                o.remove("pages");
            }
        }
        Ok(out.json)
    }
}
