//! Analyses that need a machine's costs but no simulation: the break-even computations of
//! PLATINUM §4.1 and LaRowe et al. §3 ([`numaplace_core::breakeven`]), as JSON records the
//! experiment machinery can sweep and check, and as the text tables of `numaplace
//! breakeven`.

use numaplace_core::breakeven::{
    larowe_counts, min_page_words, min_page_words_range, MigrationCoefficients, TABLE1_G,
    TABLE1_RHO,
};
use numaplace_core::{Machine, MachineConfig};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::fmt::Write;

use crate::UserError;

/// One break-even evaluation (`[analysis]` with `kind = "breakeven"` in a run point).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum AnalysisConfig {
    /// Inequality (2) at one (ρ, g) and LaRowe's counts, from the machine's costs.
    Breakeven(BreakevenPoint),
}

/// The point of inequality (2) to evaluate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BreakevenPoint {
    /// Reference density ρ. Default 1.
    pub rho: f64,
    /// Data movements per saved remote operation, g(p). Default 1.
    pub g: f64,
    /// Inequality (2)'s numerator `A` as given (e.g. the paper's printed 107) instead of
    /// the machine's `F / (T_r − T_l)`.
    pub numerator: Option<f64>,
    /// Inequality (2)'s slope `B` as given (e.g. the paper's printed 0.24) instead of the
    /// machine's `T_b / (T_r − T_l)`.
    pub slope: Option<f64>,
    /// Half the last printed unit of `A` (the paper prints an integer: 0.5).
    pub numerator_half_unit: f64,
    /// Half the last printed unit of `B` (the paper prints two decimals: 0.005).
    pub slope_half_unit: f64,
}

impl Default for BreakevenPoint {
    fn default() -> Self {
        BreakevenPoint {
            rho: 1.0,
            g: 1.0,
            numerator: None,
            slope: None,
            numerator_half_unit: 0.5,
            slope_half_unit: 0.005,
        }
    }
}

fn coefficients(machine: &Machine, p: &BreakevenPoint) -> Result<(f64, f64), UserError> {
    let k = MigrationCoefficients::from_machine(machine).ok_or_else(|| {
        UserError::new(
            "machine.costs.remote_read_ns: must exceed local_read_ns for a break-even analysis",
        )
    })?;
    Ok((
        p.numerator.unwrap_or(k.numerator),
        p.slope.unwrap_or(k.slope),
    ))
}

/// Evaluates `analysis` on `machine` as a JSON record (`config` is the resolved input).
pub fn run_analysis(
    machine: &MachineConfig,
    analysis: &AnalysisConfig,
) -> Result<Value, UserError> {
    let m = Machine::new(machine.clone())
        .map_err(|e| UserError::new(format!("invalid machine: {e}")))?;
    match analysis {
        AnalysisConfig::Breakeven(p) => {
            if !(p.rho > 0.0 && p.g > 0.0) {
                return Err(UserError::new(
                    "analysis.rho and analysis.g must be positive",
                ));
            }
            let (a, b) = coefficients(&m, p)?;
            let s = min_page_words(a, b, p.rho, p.g);
            // The rounding range, widened by one word for the rounding of the result.
            let (lo, hi) =
                min_page_words_range(a, b, p.numerator_half_unit, p.slope_half_unit, p.rho, p.g);
            let k = larowe_counts(&m);
            Ok(json!({
                "numerator": a,
                "slope": b,
                "s_min_words": s,
                "never": s.is_none() as u8,
                "s_min_low": lo.map(|x| x - 1.0),
                "s_min_high": hi.map(|x| x + 1.0),
                "never_possible": hi.is_none() as u8,
                "migration_breakeven_refs": k.migration_refs,
                "replication_breakeven_refs": k.replication_refs,
                "config": { "machine": machine, "analysis": analysis },
            }))
        }
    }
}

fn fmt_words(s: Option<f64>) -> String {
    match s {
        Some(x) => format!("{:.0}", x),
        None => "never".into(),
    }
}

/// The text of `numaplace breakeven`: inequality (2)'s coefficients and Table 1 from the
/// machine's costs (or from the coefficients given), then LaRowe's counts.
pub fn breakeven_text(
    m: &Machine,
    numerator: Option<f64>,
    slope: Option<f64>,
) -> Result<String, UserError> {
    let point = BreakevenPoint {
        numerator,
        slope,
        ..Default::default()
    };
    let (a, b) = coefficients(m, &point)?;
    let k = MigrationCoefficients::from_machine(m).expect("checked by coefficients");
    let mut o = String::new();
    let c = &m.config;
    let _ = writeln!(o, "machine {}: {}", c.preset, c.description);
    let _ = writeln!(
        o,
        "\nWhen does it pay to migrate a page? (PLATINUM, Cox & Fowler 1989, sec. 4.1)"
    );
    let _ = writeln!(
        o,
        "  T_l {} ns, T_r {} ns, T_b {} ns per word, fixed overhead F {:.3} ms, page {} words",
        k.t_local_ns,
        k.t_remote_ns,
        k.t_block_ns,
        k.fixed_ns / 1e6,
        m.words_per_page()
    );
    let _ = writeln!(
        o,
        "  machine: A = F/(T_r-T_l) = {:.2}, B = T_b/(T_r-T_l) = {:.4}",
        k.numerator, k.slope
    );
    let source = if numerator.is_some() || slope.is_some() {
        "as given"
    } else {
        "from the machine"
    };
    let _ = writeln!(
        o,
        "  inequality (2), coefficients {source}: migrate when s > {a:.2} g(p) / (rho - {b:.4} g(p))"
    );
    let _ = writeln!(o, "\n  Table 1: S_min, minimum page size in words");
    let _ = writeln!(
        o,
        "  {:>6} {:>12} {:>12} {:>12}",
        "rho", "g(p) = 0.5", "g(p) = 1", "g(p) = 2"
    );
    for rho in TABLE1_RHO {
        let cells: Vec<String> = TABLE1_G
            .iter()
            .map(|&g| fmt_words(min_page_words(a, b, rho, g)))
            .collect();
        let _ = writeln!(
            o,
            "  {:>6.2} {:>12} {:>12} {:>12}",
            rho, cells[0], cells[1], cells[2]
        );
    }
    let l = larowe_counts(m);
    let _ = writeln!(
        o,
        "\nBreak-even reference counts (LaRowe, Ellis & Kaplan 1991, sec. 3)"
    );
    let _ = writeln!(
        o,
        "  migration   M = {:.3} ms: pays above {} references (a t_l + M < a t_r)",
        l.migration_ns / 1e6,
        l.migration_refs
            .map(|x| format!("{x:.1}"))
            .unwrap_or_else(|| "no number of".into())
    );
    let _ = writeln!(
        o,
        "  replication R = {:.3} ms: pays above {} references (a {} + R < a t_r)",
        l.replication_ns / 1e6,
        l.replication_refs
            .map(|x| format!("{x:.1}"))
            .unwrap_or_else(|| "no number of".into()),
        if l.cached { "t_cached" } else { "t_l" }
    );
    let delay = m.costs().operation_delay_ns;
    if delay > 0 {
        let _ = writeln!(
            o,
            "  (M and R include the operation delay of {:.3} ms: costs.operation_delay_ns)",
            delay as f64 / 1e6
        );
    }
    Ok(o)
}

/// The JSON of `numaplace breakeven --json`: the coefficients, the Table 1 grid and the
/// counts.
pub fn breakeven_json(
    m: &Machine,
    numerator: Option<f64>,
    slope: Option<f64>,
) -> Result<Value, UserError> {
    let point = BreakevenPoint {
        numerator,
        slope,
        ..Default::default()
    };
    let (a, b) = coefficients(m, &point)?;
    let k = MigrationCoefficients::from_machine(m).expect("checked by coefficients");
    let table: Vec<Value> = TABLE1_RHO
        .iter()
        .map(|&rho| {
            json!({
                "rho": rho,
                "s_min_words": TABLE1_G.iter().map(|&g| min_page_words(a, b, rho, g)).collect::<Vec<_>>(),
            })
        })
        .collect();
    Ok(json!({
        "machine": m.config.preset,
        "machine_coefficients": k,
        "numerator": a,
        "slope": b,
        "g": TABLE1_G,
        "table1": table,
        "larowe": larowe_counts(m),
    }))
}
