//! `numaplace breakeven`: when moving a page pays, from a machine's costs.

use crate::config::machine_from_table;
use crate::failure::Failure;
use crate::output::out;
use anyhow::Context;
use clap::Args;
use numaplace_core::{Machine, MachineConfig};
use numaplace_harness::{presets, UserError};

/// `numaplace breakeven`.
#[derive(Args, Debug)]
pub struct BreakevenArgs {
    /// Machine preset (default: butterfly-plus).
    #[arg(long, default_value = "butterfly-plus")]
    machine: String,
    /// Override machine fields, e.g. `--set costs.block_transfer_per_word_ns=1100`.
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    sets: Vec<String>,
    /// Use this numerator A of inequality (2) instead of the machine's F/(T_r-T_l)
    /// (the paper prints 107).
    #[arg(long)]
    numerator: Option<f64>,
    /// Use this slope B of inequality (2) instead of the machine's T_b/(T_r-T_l)
    /// (the paper prints 0.24).
    #[arg(long)]
    slope: Option<f64>,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
}

/// Prints the break-even analyses of `a`'s machine.
pub fn run(a: BreakevenArgs) -> Result<(), Failure> {
    let mut table = presets::preset_table(&a.machine)?;
    for s in &a.sets {
        numaplace_harness::resolve::apply_set(&mut table, s)?;
    }
    let cfg: MachineConfig = machine_from_table(table)?;
    let m = Machine::new(cfg).map_err(|e| UserError::new(format!("machine {}: {e}", a.machine)))?;
    for (name, v) in [("--numerator", a.numerator), ("--slope", a.slope)] {
        if v.is_some_and(|x| !x.is_finite() || x < 0.0) {
            return Err(UserError::new(format!("{name}: must be a non-negative number")).into());
        }
    }
    if a.json {
        let v = numaplace_harness::analysis::breakeven_json(&m, a.numerator, a.slope)?;
        let body = serde_json::to_string_pretty(&v).context("serialising the analysis")?;
        out(&(body + "\n"))
    } else {
        out(&numaplace_harness::analysis::breakeven_text(
            &m,
            a.numerator,
            a.slope,
        )?)
    }
}
