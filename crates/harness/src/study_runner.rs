//! The simulator as a [`Runner`] of the experiment machinery: each run point's
//! configuration is resolved exactly like a `numaplace run --config` file.

use crate::{resolve, run_to_json, Overrides};
use numaplace_study::{RunPoint, Runner};
use serde_json::Value;

/// Runs sweep points through the simulator.
#[derive(Clone, Copy, Debug, Default)]
pub struct SimRunner;

impl Runner for SimRunner {
    fn run(&self, point: &RunPoint) -> anyhow::Result<Value> {
        let cfg = resolve(
            Some((&point.id, point.config.clone())),
            &Overrides::default(),
        )?;
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
