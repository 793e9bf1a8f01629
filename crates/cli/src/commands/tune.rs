//! `numaplace tune`: a noise-aware search of a policy's parameters for one workload on one
//! machine.

use crate::failure::Failure;
use crate::output::out;
use crate::search::{cell_objective, check_names, parse_method, pool, tune_one, SearchArgs};
use anyhow::Context;
use clap::Args;
use numaplace_harness::tune::sim::{self, SimObjective};
use numaplace_harness::tune::{Method, Outcome};
use serde_json::json;
use std::path::PathBuf;

/// `numaplace tune`.
#[derive(Args, Debug)]
pub struct TuneArgs {
    /// Workload kind.
    #[arg(long)]
    workload: String,
    /// Machine preset.
    #[arg(long)]
    machine: String,
    /// Policy kind (one that declares a search space, e.g. larowe).
    #[arg(long)]
    policy: String,
    #[command(flatten)]
    search: SearchArgs,
    /// Also run this method at the same budget and compare the two winners on the
    /// held-out seeds, over --repeats tuner seeds.
    #[arg(long, value_name = "METHOD", value_parser = parse_method)]
    versus: Option<Method>,
    /// Tuner seeds (--seed, --seed + 1, ...) compared with --versus.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000), requires = "versus")]
    repeats: u64,
    /// Output directory (default: tune-WORKLOAD-MACHINE-POLICY).
    #[arg(long)]
    out: Option<PathBuf>,
}

fn fmt_s(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.6}")
    } else {
        "failed".into()
    }
}

/// Runs `a`'s search (or, with `--versus`, both methods' searches) and prints the result.
pub fn run(a: TuneArgs) -> Result<(), Failure> {
    check_names(
        std::slice::from_ref(&a.workload),
        std::slice::from_ref(&a.machine),
        &a.policy,
    )?;
    let s = &a.search;
    let obj = cell_objective(&a.workload, &a.machine, &a.policy, s)?;
    let dir = a.out.clone().unwrap_or_else(|| {
        PathBuf::from(format!("tune-{}-{}-{}", a.workload, a.machine, a.policy))
    });
    let title = format!("{} on {}", a.workload, a.machine);
    let pool = pool(s.jobs)?;
    pool.install(|| -> Result<(), Failure> {
        let default_holdout = sim::evaluate_default(&obj, &sim::holdout_trials(s.holdout));
        let (dm, _) = sim::mean_sd(&default_holdout);
        let Some(other) = a.versus else {
            let t = tune_one(&obj, s, s.method, s.seed, &dir, &title)?;
            let mut report = format!(
                "{} {} of {} on {}: {} runs ({} candidates), method {}, seed {}\n",
                a.policy,
                obj.metric,
                a.workload,
                a.machine,
                t.outcome.runs(),
                t.outcome.candidates.len(),
                s.method,
                s.seed
            );
            report.push_str(&top_table(&obj, &t.outcome, 10));
            let c = &t.outcome.candidates[t.outcome.best.unwrap_or(0)];
            report.push_str(&format!(
                "best: {} (mean {} s over {} trials)\n",
                sim::params_text(&obj.space, &t.best),
                fmt_s(c.mean()),
                c.results.len()
            ));
            if s.holdout > 0 {
                let (hm, hsd) = sim::mean_sd(&t.holdout);
                report.push_str(&format!(
                    "held out ({} seeds): best {} s (sd {:.6}), the policy's defaults {} s: {:+.2}%\n",
                    s.holdout,
                    fmt_s(hm),
                    hsd,
                    fmt_s(dm),
                    100.0 * (hm / dm - 1.0)
                ));
            }
            report.push_str(&format!(
                "wrote {}/: runs.jsonl, candidates.json, candidates.csv, best.toml, convergence.svg/png, summary.json\n",
                dir.display()
            ));
            return out(&report);
        };
        // Both methods at the same budget, over several tuner seeds, each winner measured
        // on the same held-out seeds.
        let mut rows = Vec::new();
        let mut traces = Vec::new();
        for r in 0..a.repeats {
            let seed = s.seed.wrapping_add(r);
            let mut row = Vec::new();
            for m in [s.method, other] {
                let sub = dir.join(format!("{m}-seed{seed}"));
                let t = tune_one(&obj, s, m, seed, &sub, &title)?;
                let (hm, _) = sim::mean_sd(&t.holdout);
                traces.push((format!("{m}, seed {seed}"), t.outcome.trace.clone()));
                row.push((hm, t.outcome.runs(), sim::params_text(&obj.space, &t.best)));
            }
            rows.push((seed, row));
        }
        sim::convergence_plot(
            &format!("{title}: {} against {other}", s.method),
            obj.metric,
            &traces,
            &dir.join("convergence"),
        )?;
        let (ma, mb) = (s.method.name(), other.name());
        let mut report = format!(
            "{} {} of {} on {}: {ma} against {mb}, budget {} runs, {} trials a candidate first; \
             winners measured on {} held-out seeds (s)\n",
            a.policy, obj.metric, a.workload, a.machine, s.budget, s.trials, s.holdout
        );
        report.push_str(&format!("{:>6} {:>14} {:>14} {:>9}\n", "seed", ma, mb, "better"));
        let (mut wins, mut sa, mut sb) = (0, Vec::new(), Vec::new());
        for (seed, row) in &rows {
            let (x, y) = (row[0].0, row[1].0);
            let better = if x < y {
                wins += 1;
                ma
            } else if y < x {
                mb
            } else {
                "tie"
            };
            sa.push(x);
            sb.push(y);
            report.push_str(&format!(
                "{seed:>6} {:>14} {:>14} {better:>9}\n",
                fmt_s(x),
                fmt_s(y)
            ));
        }
        let (mean_a, _) = sim::mean_sd(&sa);
        let (mean_b, _) = sim::mean_sd(&sb);
        report.push_str(&format!(
            "{:>6} {:>14} {:>14}\n{ma} better in {wins} of {}; mean {ma} {:+.3}% against {mb}; the policy's defaults: {} s ({ma} {:+.3}%, {mb} {:+.3}%)\n",
            "mean",
            fmt_s(mean_a),
            fmt_s(mean_b),
            rows.len(),
            100.0 * (mean_a / mean_b - 1.0),
            fmt_s(dm),
            100.0 * (mean_a / dm - 1.0),
            100.0 * (mean_b / dm - 1.0),
        ));
        let versus = json!({
            "workload": a.workload, "machine": a.machine, "policy": a.policy,
            "objective": obj.metric.name(), "budget": s.budget, "trials": s.trials,
            "holdout": s.holdout, "methods": [ma, mb],
            "default_holdout_mean": sim::finite_or_null(dm),
            "repeats": rows.iter().map(|(seed, row)| json!({
                "seed": seed,
                ma: {"holdout_mean": sim::finite_or_null(row[0].0), "runs": row[0].1, "best": row[0].2},
                mb: {"holdout_mean": sim::finite_or_null(row[1].0), "runs": row[1].1, "best": row[1].2},
            })).collect::<Vec<_>>(),
            "mean": {ma: sim::finite_or_null(mean_a), mb: sim::finite_or_null(mean_b)},
            "wins": wins,
        });
        sim::write_file(
            &dir.join("versus.json"),
            &(serde_json::to_string_pretty(&versus).context("serialising")? + "\n"),
        )?;
        report.push_str(&format!(
            "wrote {}/: versus.json, convergence.svg/png, one directory per search\n",
            dir.display()
        ));
        out(&report)
    })
}

/// The `n` candidates with the lowest means among those with the most trials first.
fn top_table(obj: &SimObjective, o: &Outcome, n: usize) -> String {
    let mut order: Vec<usize> = (0..o.candidates.len()).collect();
    order.sort_by(|&a, &b| {
        let (ca, cb) = (&o.candidates[a], &o.candidates[b]);
        cb.results
            .len()
            .cmp(&ca.results.len())
            .then(ca.mean().total_cmp(&cb.mean()))
            .then(a.cmp(&b))
    });
    let mut s = format!(
        "{:>5} {:>6} {:>7} {:>12}  setting\n",
        "id", "origin", "trials", "mean (s)"
    );
    for &i in order.iter().take(n) {
        let c = &o.candidates[i];
        s.push_str(&format!(
            "{:>5} {:>6} {:>7} {:>12}  {}\n",
            c.id,
            c.origin,
            c.results.len(),
            fmt_s(c.mean()),
            sim::params_text(&obj.space, &c.values)
        ));
    }
    s
}
