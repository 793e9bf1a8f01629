//! Robustness of policy settings across a grid of workloads x machines: each setting's
//! regret (relative excess of its mean objective over a cell's reference) in every cell,
//! its worst and mean regret, and the setting with the least worst-case regret (the
//! minimax-regret default).

use super::sim::{finite_or_null, SimObjective};
use numaplace_core::tune::Value;
use serde_json::{json, Value as Json};

/// Regrets of candidates (rows) over cells (columns).
#[derive(Clone, Debug, PartialEq)]
pub struct Regrets {
    /// `regret[c][k]` = mean of candidate `c` in cell `k` / the cell's reference - 1.
    pub regret: Vec<Vec<f64>>,
    /// The largest regret of each candidate over the cells.
    pub worst: Vec<f64>,
    /// The mean regret of each candidate over the cells.
    pub mean: Vec<f64>,
    /// The candidate with the least worst regret (ties: the least mean regret, then the
    /// first); none without candidates or cells.
    pub minimax: Option<usize>,
}

/// Regrets of `means[c][k]` (candidate `c`'s mean objective in cell `k`, lower is
/// better) against `reference[k]`. A failed candidate (infinite mean) has infinite
/// regret; a candidate better than the reference has a negative one.
pub fn regrets(means: &[Vec<f64>], reference: &[f64]) -> Regrets {
    let regret: Vec<Vec<f64>> = means
        .iter()
        .map(|row| {
            row.iter()
                .zip(reference)
                .map(|(&m, &r)| {
                    if m.is_finite() {
                        m / r - 1.0
                    } else {
                        f64::INFINITY
                    }
                })
                .collect()
        })
        .collect();
    let worst: Vec<f64> = regret
        .iter()
        .map(|r| r.iter().copied().fold(f64::NEG_INFINITY, f64::max))
        .collect();
    let mean: Vec<f64> = regret
        .iter()
        .map(|r| r.iter().sum::<f64>() / r.len() as f64)
        .collect();
    let minimax = if reference.is_empty() {
        None
    } else {
        (0..means.len()).min_by(|&a, &b| {
            worst[a]
                .total_cmp(&worst[b])
                .then(mean[a].total_cmp(&mean[b]))
                .then(a.cmp(&b))
        })
    };
    Regrets {
        regret,
        worst,
        mean,
        minimax,
    }
}

/// A setting compared across the grid: a label and the `--set` overrides that make it.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    /// How the tables name it: `default`, `preset:NAME`, `tuned:W/M`, `sampled:I`,
    /// `file:PATH`.
    pub label: String,
    /// Overrides after the cell's base configuration.
    pub sets: Vec<String>,
    /// Its tuned parameters' values, when it has them (tuned and sampled settings).
    pub values: Option<Vec<Value>>,
}

/// One cell of the grid.
#[derive(Clone, Debug)]
pub struct Cell {
    /// `WORKLOAD/MACHINE`.
    pub name: String,
    /// Its runs.
    pub objective: SimObjective,
    /// Its tuned best's label, when it was tuned.
    pub tuned: Option<String>,
}

/// Every setting's mean in every cell over `trials` (the trial indices run for every
/// setting: common seeds), run in parallel and collected in a fixed order;
/// `progress(done, total)` after each cell. A setting whose run fails has an infinite
/// mean there.
pub fn evaluate_grid(
    cells: &[Cell],
    settings: &[Setting],
    trials: &[u32],
    mut progress: impl FnMut(usize, usize, &[Vec<f64>]),
) -> Vec<Vec<Vec<f64>>> {
    use rayon::prelude::*;
    // results[k][c] = the objectives of setting c in cell k, trial by trial.
    let mut results: Vec<Vec<Vec<f64>>> = Vec::with_capacity(cells.len());
    let total = cells.len() * settings.len() * trials.len();
    for cell in cells {
        let jobs: Vec<(usize, u32)> = (0..settings.len())
            .flat_map(|c| trials.iter().map(move |&t| (c, t)))
            .collect();
        let values: Vec<f64> = jobs
            .par_iter()
            .map(|&(c, t)| {
                cell.objective
                    .config_with(&settings[c].sets, t)
                    .map_err(|e| e.to_string())
                    .and_then(|cfg| cell.objective.score(&cfg))
                    .ok()
                    .filter(|v| v.is_finite())
                    .unwrap_or(f64::INFINITY)
            })
            .collect();
        let per: Vec<Vec<f64>> = values.chunks(trials.len()).map(|c| c.to_vec()).collect();
        progress(
            (results.len() + 1) * settings.len() * trials.len(),
            total,
            &per,
        );
        results.push(per);
    }
    results
}

/// The regret table as text: one row per setting (worst, mean, then each cell), sorted
/// by worst regret, the minimax one marked.
pub fn regret_text(labels: &[String], cells: &[String], r: &Regrets) -> String {
    let pct = |x: f64| {
        if x.is_finite() {
            format!("{:+.2}%", 100.0 * x)
        } else {
            "failed".to_string()
        }
    };
    let mut order: Vec<usize> = (0..labels.len()).collect();
    order.sort_by(|&a, &b| {
        r.worst[a]
            .total_cmp(&r.worst[b])
            .then(r.mean[a].total_cmp(&r.mean[b]))
            .then(a.cmp(&b))
    });
    let w0 = labels.iter().map(|l| l.len()).max().unwrap_or(0).max(7) + 2;
    let cw = cells.iter().map(|c| c.len()).max().unwrap_or(0).max(8);
    let mut s = format!("{:<w0$} {:>9} {:>9}", "setting", "worst", "mean");
    for c in cells {
        s.push_str(&format!(" {c:>cw$}"));
    }
    s.push('\n');
    for &i in &order {
        let mark = if Some(i) == r.minimax { "* " } else { "  " };
        s.push_str(&format!(
            "{:<w0$} {:>9} {:>9}",
            format!("{mark}{}", labels[i]),
            pct(r.worst[i]),
            pct(r.mean[i])
        ));
        for &x in &r.regret[i] {
            s.push_str(&format!(" {:>cw$}", pct(x)));
        }
        s.push('\n');
    }
    s
}

/// The regret table as JSON.
pub fn regret_json(labels: &[String], cells: &[String], means: &[Vec<f64>], r: &Regrets) -> Json {
    json!({
        "cells": cells,
        "settings": labels.iter().enumerate().map(|(i, l)| json!({
            "setting": l,
            "worst_regret": finite_or_null(r.worst[i]),
            "mean_regret": finite_or_null(r.mean[i]),
            "regret": r.regret[i].iter().map(|&x| finite_or_null(x)).collect::<Vec<_>>(),
            "mean": means[i].iter().map(|&x| finite_or_null(x)).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "minimax": r.minimax.map(|i| labels[i].clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three settings over two cells, references 100 and 10.
    fn table() -> Regrets {
        let means = vec![
            vec![110.0, 10.0],          // +10%, 0%
            vec![105.0, 10.6],          // +5%, +6%
            vec![100.0, f64::INFINITY], // 0%, failed
        ];
        regrets(&means, &[100.0, 10.0])
    }

    #[test]
    fn regret_is_the_relative_excess_over_the_cells_reference() {
        let r = table();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(r.regret[0][0], 0.10) && close(r.regret[0][1], 0.0));
        assert!(close(r.regret[1][0], 0.05) && close(r.regret[1][1], 0.06));
        assert!(close(r.worst[0], 0.10) && close(r.mean[0], 0.05));
        assert!(close(r.worst[1], 0.06) && close(r.mean[1], 0.055));
    }

    #[test]
    fn a_failed_setting_has_infinite_regret_and_is_never_the_minimax() {
        let r = table();
        assert_eq!(r.regret[2][1], f64::INFINITY);
        assert_eq!(r.worst[2], f64::INFINITY);
        assert_eq!(r.minimax, Some(1));
    }

    #[test]
    fn the_minimax_is_the_least_worst_regret_even_with_a_larger_mean() {
        // Setting 0: worst 8%, mean 8%; setting 1: worst 9%, mean 4.5%.
        let r = regrets(&[vec![108.0, 108.0], vec![100.0, 109.0]], &[100.0, 100.0]);
        assert_eq!(r.minimax, Some(0));
    }

    #[test]
    fn equal_worst_regrets_go_to_the_smaller_mean_then_the_first() {
        let r = regrets(&[vec![110.0, 110.0], vec![100.0, 110.0]], &[100.0, 100.0]);
        assert_eq!(r.minimax, Some(1));
        let r = regrets(&[vec![110.0], vec![110.0]], &[100.0]);
        assert_eq!(r.minimax, Some(0));
    }

    #[test]
    fn a_setting_better_than_the_reference_has_negative_regret() {
        let r = regrets(&[vec![95.0]], &[100.0]);
        assert!((r.regret[0][0] + 0.05).abs() < 1e-12);
    }
}
