//! The policy search `tune` and `robustness` both run: its options, objective and files.

use crate::failure::Failure;
use crate::limits::host_limits;
use crate::progress::bar;
use anyhow::Context;
use clap::Args;
use numaplace_core::component::WorkloadConfig;
use numaplace_core::tune::{Space, Value};
use numaplace_core::PolicyConfig;
use numaplace_harness::tune::sim::{self, Cache, Cached, Metric, Recorder, SimObjective};
use numaplace_harness::tune::{self, Method, Options, Outcome};
use numaplace_harness::{presets, Overrides, UserError};
use serde_json::json;
use std::path::Path;

/// What `tune` and `robustness` share: how to search.
#[derive(Args, Debug)]
pub struct SearchArgs {
    /// Simulation runs the search may use.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..))]
    pub budget: u64,
    /// Trials (seeds) each candidate runs first; survivors of a race run more.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub trials: u32,
    /// Seed of the search (its proposals); runs use seeds --seed-base + trial.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Seed of a candidate's trial 0 (trial t runs with seed-base + t; held-out runs
    /// with seed-base + 1000000 + i).
    #[arg(long, default_value_t = 1)]
    pub seed_base: u64,
    /// Search method: tpe (the defaults first, then TPE proposals, local moves and random
    /// draws, and a final race), halving (successive halving over random search), random,
    /// or random-race (tpe without its proposals: the defaults, random draws and the same
    /// race; the control that isolates what tpe's proposals are worth).
    #[arg(long, default_value = "tpe", value_parser = parse_method)]
    pub method: Method,
    /// What a run is scored by: makespan or mean-completion.
    #[arg(long, default_value = "makespan", value_parser = parse_metric)]
    pub objective: Metric,
    /// Narrow a parameter's numeric range: `--range freeze_window_ns=1e7..1e9` (its
    /// special values stay).
    #[arg(long = "range", value_name = "PARAM=LO..HI")]
    pub ranges: Vec<String>,
    /// Override any field; a policy parameter set here is fixed, not searched.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Held-out runs of the winner (and of the policy's defaults) on seeds no search
    /// used; 0: none.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(0..=10000))]
    pub holdout: u32,
    /// Parallel runs (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
    /// Continue an interrupted search in the same directory: runs already in its
    /// runs.jsonl are not run again.
    #[arg(long)]
    pub resume: bool,
}

/// `--method`: a search method by name.
pub fn parse_method(s: &str) -> Result<Method, String> {
    s.parse()
}

fn parse_metric(s: &str) -> Result<Metric, String> {
    s.parse()
}

/// Checks that every name is a known workload, machine preset or policy.
pub fn check_names(
    workloads: &[String],
    machines: &[String],
    policy: &str,
) -> Result<(), UserError> {
    /// `name` among `known`, else an error naming the option `--what` and listing them.
    fn known(what: &str, name: &str, known: &[&str]) -> Result<(), UserError> {
        if known.contains(&name) {
            return Ok(());
        }
        Err(UserError::new(format!(
            "--{what} `{name}`: unknown {what}; known: {}",
            known.join(", ")
        )))
    }
    let kinds = WorkloadConfig::kinds();
    for w in workloads {
        known("workload", w, &kinds)?;
    }
    let names = presets::names();
    for m in machines {
        known("machine", m, &names)?;
    }
    known("policy", policy, &PolicyConfig::kinds())
}

/// The objective of one cell, its base configuration and every candidate extreme
/// (each range's ends, each special value) resolved once, so a bad value fails now.
pub fn cell_objective(
    workload: &str,
    machine: &str,
    policy: &str,
    a: &SearchArgs,
) -> Result<SimObjective, Failure> {
    let base = Overrides {
        machine: Some(machine.to_string()),
        workload: Some(workload.to_string()),
        policy: Some(policy.to_string()),
        seed: None,
        sets: a.sets.clone(),
    };
    let probe = SimObjective {
        base: base.clone(),
        space: Space::default(),
        metric: a.objective,
        seed_base: a.seed_base,
    };
    let cfg = probe.config(None, 0)?;
    let space = sim::search_space(&cfg.policy, &a.ranges, &a.sets)?;
    let obj = SimObjective { space, ..probe };
    for (i, d) in obj.space.dims.iter().enumerate() {
        let mut extremes = vec![d.at(0.0), d.at(1.0)];
        extremes.extend(d.specials.iter().copied());
        for v in extremes {
            let mut values: Vec<Value> = obj.space.dims.iter().map(|d| d.at(0.5)).collect();
            values[i] = v;
            obj.config(Some(&values), 0).map_err(|e| {
                UserError::new(format!(
                    "search space of {policy}: {} = {v} is refused: {e}",
                    d.field
                ))
            })?;
        }
    }
    numaplace_harness::admit(&cfg, &host_limits(false, None))?;
    Ok(obj)
}

/// A pool of `jobs` worker threads (0: one per core).
pub fn pool(jobs: usize) -> Result<rayon::ThreadPool, Failure> {
    Ok(rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("cannot start worker threads")?)
}

/// One search's results.
pub struct Tuned {
    pub outcome: Outcome,
    pub best: Vec<Value>,
    /// The winner's held-out objectives.
    pub holdout: Vec<f64>,
}

/// Runs one search into `dir` (runs.jsonl as it goes, then candidates, best.toml, plot,
/// summary) and measures the winner on the held-out seeds.
pub fn tune_one(
    obj: &SimObjective,
    a: &SearchArgs,
    method: Method,
    seed: u64,
    dir: &Path,
    title: &str,
) -> Result<Tuned, Failure> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let runs_path = dir.join("runs.jsonl");
    if runs_path.exists() && !a.resume {
        return Err(UserError::new(format!(
            "{} exists: --resume continues that search, or choose another --out",
            runs_path.display()
        ))
        .into());
    }
    let cache = if a.resume {
        Cache::load(&runs_path)?
    } else {
        Cache::default()
    };
    let progress = bar(a.budget, "runs");
    progress.set_message(format!("{method} {title}"));
    let p = progress.clone();
    let label = format!("{method} {title}");
    let mut rec = Recorder::new(
        &runs_path,
        &obj.space,
        obj.seed_base,
        &cache,
        Box::new(move |runs, best| {
            p.set_position(runs);
            if let Some(b) = best {
                p.set_message(format!("{label}: best {b:.6} s"));
            }
        }),
    )?;
    let cached = Cached {
        inner: obj,
        cache: &cache,
        space: &obj.space,
    };
    let opts = Options {
        method,
        budget: a.budget,
        trials: a.trials,
        seed,
        defaults: obj.base_values(),
    };
    let outcome = tune::tune(&obj.space, &cached, &opts, &mut rec)
        .map_err(|e| UserError::new(e.to_string()))?;
    progress.finish_and_clear();
    if let Some(e) = rec.error.take() {
        return Err(anyhow::anyhow!("writing the runs: {e}").into());
    }
    let best_id = outcome
        .best
        .ok_or_else(|| anyhow::anyhow!("the search evaluated no candidate"))?;
    let best = outcome.candidates[best_id].values.clone();
    let holdout = sim::evaluate(obj, &best, &sim::holdout_trials(a.holdout));
    let tuned = Tuned {
        outcome,
        best,
        holdout,
    };
    write_search(obj, a, method, seed, dir, title, &tuned)?;
    Ok(tuned)
}

/// Writes a finished search's files into `dir`: best.toml, the plot and the summary.
fn write_search(
    obj: &SimObjective,
    a: &SearchArgs,
    method: Method,
    seed: u64,
    dir: &Path,
    title: &str,
    tuned: &Tuned,
) -> Result<(), Failure> {
    let Tuned {
        outcome: o,
        best,
        holdout,
    } = tuned;
    let space = &obj.space;
    let c = &o.candidates[o.best.unwrap_or(0)];
    sim::write_file(
        &dir.join("candidates.json"),
        &(serde_json::to_string_pretty(&sim::candidates_json(space, o))
            .context("serialising the candidates")?
            + "\n"),
    )?;
    sim::write_file(&dir.join("candidates.csv"), &sim::candidates_csv(space, o))?;
    let policy = obj.policy_toml(&obj.sets(best))?;
    let (hm, hsd) = sim::mean_sd(holdout);
    let mut text = format!(
        "# numaplace tune: the best {} setting found for {title}\n\
         # method {method}, seed {seed}, {} runs of a budget of {}, {} trials a candidate first\n\
         # {}: mean {:.6} s over its {} search trials",
        obj.policy_kind(),
        o.runs(),
        a.budget,
        a.trials,
        obj.metric,
        c.mean(),
        c.results.len()
    );
    if !holdout.is_empty() {
        text.push_str(&format!(
            "; {:.6} s (sd {:.6}) over {} held-out seeds",
            hm,
            hsd,
            holdout.len()
        ));
    }
    text.push_str("\n# numaplace run --config best.toml --workload W --machine M reads it\n\n");
    let mut doc = toml::Table::new();
    doc.insert("policy".into(), toml::Value::Table(policy));
    text.push_str(&toml::to_string(&doc).context("the best setting as TOML")?);
    sim::write_file(&dir.join("best.toml"), &text)?;
    sim::convergence_plot(
        &format!("{title}: {method}"),
        obj.metric,
        &[(format!("{method}, seed {seed}"), o.trace.clone())],
        &dir.join("convergence"),
    )?;
    let summary = json!({
        "method": method.name(),
        "seed": seed,
        "seed_base": obj.seed_base,
        "budget": a.budget,
        "runs": o.runs(),
        "trials": a.trials,
        "objective": obj.metric.name(),
        "space": sim::space_json(space),
        "best": {
            "candidate": c.id,
            "params": sim::params_json(space, best),
            "mean": sim::finite_or_null(c.mean()),
            "trials": c.results.len(),
            "holdout": holdout.iter().map(|&x| sim::finite_or_null(x)).collect::<Vec<_>>(),
            "holdout_mean": sim::finite_or_null(hm),
        },
        "trace": o.trace.iter().map(|&(r, b)| json!([r, sim::finite_or_null(b)])).collect::<Vec<_>>(),
    });
    sim::write_file(
        &dir.join("summary.json"),
        &(serde_json::to_string_pretty(&summary).context("serialising the summary")? + "\n"),
    )?;
    Ok(())
}
