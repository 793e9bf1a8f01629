//! `numaplace tune` and `numaplace robustness`.

use crate::failure::Failure;
use crate::limits::host_limits;
use crate::output::out;
use crate::progress::bar;
use anyhow::Context;
use clap::Args;
use numaplace_core::tune::{Space, Value};
use numaplace_core::workload::WorkloadConfig;
use numaplace_core::PolicyConfig;
use numaplace_harness::tune::robust::{self, Cell, Setting};
use numaplace_harness::tune::sim::{self, Cache, Cached, Metric, Recorder, SimObjective};
use numaplace_harness::tune::{self, Method, Options, Outcome};
use numaplace_harness::{presets, Overrides, UserError};
use serde_json::json;
use std::path::{Path, PathBuf};

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

/// What `tune` and `robustness` share: how to search.
#[derive(Args, Debug)]
pub struct SearchArgs {
    /// Simulation runs the search may use.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..))]
    budget: u64,
    /// Trials (seeds) each candidate runs first; survivors of a race run more.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=1000))]
    trials: u32,
    /// Seed of the search (its proposals); runs use seeds --seed-base + trial.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Seed of a candidate's trial 0 (trial t runs with seed-base + t; held-out runs
    /// with seed-base + 1000000 + i).
    #[arg(long, default_value_t = 1)]
    seed_base: u64,
    /// Search method: tpe (the defaults first, then TPE proposals, local moves and random
    /// draws, and a final race), halving (successive halving over random search) or random.
    #[arg(long, default_value = "tpe", value_parser = parse_method)]
    method: Method,
    /// What a run is scored by: makespan or mean-completion.
    #[arg(long, default_value = "makespan", value_parser = parse_metric)]
    objective: Metric,
    /// Narrow a parameter's numeric range: `--range freeze_window_ns=1e7..1e9` (its
    /// special values stay).
    #[arg(long = "range", value_name = "PARAM=LO..HI")]
    ranges: Vec<String>,
    /// Override any field; a policy parameter set here is fixed, not searched.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    sets: Vec<String>,
    /// Held-out runs of the winner (and of the policy's defaults) on seeds no search
    /// used; 0: none.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(0..=10000))]
    holdout: u32,
    /// Parallel runs (0: one per core).
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// Continue an interrupted search in the same directory: runs already in its
    /// runs.jsonl are not run again.
    #[arg(long)]
    resume: bool,
}

/// `numaplace robustness`.
#[derive(Args, Debug)]
pub struct RobustnessArgs {
    /// Workload kinds (comma separated).
    #[arg(long, value_delimiter = ',', required = true)]
    workloads: Vec<String>,
    /// Machine presets (comma separated).
    #[arg(long, value_delimiter = ',', required = true)]
    machines: Vec<String>,
    /// Policy kind.
    #[arg(long)]
    policy: String,
    /// The settings compared (comma separated): default (the policy's defaults),
    /// presets (each named setting the policy has), preset:NAME, tuned (each cell's
    /// tuned best: tunes every cell), sampled:N (N settings drawn from the search
    /// space), or a TOML file with a [policy] table (as `tune` writes best.toml).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "default,presets,tuned,sampled:20"
    )]
    candidates: Vec<String>,
    /// Runs of every setting in every cell (held-out seeds, the same for every setting).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    eval_trials: u32,
    #[command(flatten)]
    search: SearchArgs,
    /// Output directory (default: robustness-POLICY).
    #[arg(long)]
    out: Option<PathBuf>,
}

fn parse_method(s: &str) -> Result<Method, String> {
    s.parse()
}

fn parse_metric(s: &str) -> Result<Metric, String> {
    s.parse()
}

/// A number such as `150000000`, `1.5e8` or `-1`.
fn parse_number(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|x| x.is_finite())
}

fn check_names(workloads: &[String], machines: &[String], policy: &str) -> Result<(), UserError> {
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

/// The policy's search space with `--range` narrowing it and `--set policy.F=...` fixing
/// F, validated against the policy's fields.
fn search_space(
    policy: &PolicyConfig,
    ranges: &[String],
    sets: &[String],
) -> Result<Space, UserError> {
    let mut space = policy.search_space();
    if space.dims.is_empty() {
        let tunable: Vec<&str> = PolicyConfig::all()
            .into_iter()
            .filter(|p| !p.search_space().dims.is_empty())
            .map(|p| p.kind())
            .collect();
        return Err(UserError::new(format!(
            "--policy {}: the policy declares no search space; tunable: {}",
            policy.kind(),
            tunable.join(", ")
        )));
    }
    for r in ranges {
        let bad = |m: String| UserError::new(format!("--range {r}: {m}"));
        let (field, span) = r
            .split_once('=')
            .ok_or_else(|| bad("expected PARAM=LO..HI".into()))?;
        let field = field.trim().trim_start_matches("policy.");
        let (lo, hi) = span
            .split_once("..")
            .ok_or_else(|| bad("expected PARAM=LO..HI".into()))?;
        let (Some(lo), Some(hi)) = (parse_number(lo), parse_number(hi)) else {
            return Err(bad(format!("`{span}`: expected two finite numbers LO..HI")));
        };
        space.narrow(field, lo, hi).map_err(|e| {
            let known: Vec<&str> = policy.search_space().dims.iter().map(|d| d.field).collect();
            bad(format!("{}; tuned: {}", e.message, known.join(", ")))
        })?;
        space
            .validate(policy.fields())
            .map_err(|e| bad(e.message))?;
    }
    for s in sets {
        if let Some((path, _)) = s.split_once('=') {
            if let Some(field) = path.trim().strip_prefix("policy.") {
                space.fix(field);
            }
        }
    }
    space
        .validate(policy.fields())
        .map_err(|e| UserError::new(format!("search space of {}: {e}", policy.kind())))?;
    if space.dims.is_empty() {
        return Err(UserError::new(
            "every parameter of the search space is fixed by --set: nothing to tune",
        ));
    }
    Ok(space)
}

/// The objective of one cell, its base configuration and every candidate extreme
/// (each range's ends, each special value) resolved once, so a bad value fails now.
fn cell_objective(
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
    let space = search_space(&cfg.policy, &a.ranges, &a.sets)?;
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

fn pool(jobs: usize) -> Result<rayon::ThreadPool, Failure> {
    Ok(rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("cannot start worker threads")?)
}

/// One search's results.
struct Tuned {
    outcome: Outcome,
    best: Vec<Value>,
    /// The winner's held-out objectives.
    holdout: Vec<f64>,
}

/// Runs one search into `dir` (runs.jsonl as it goes, then candidates, best.toml, plot,
/// summary) and measures the winner on the held-out seeds.
fn tune_one(
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
        "space": space.dims.iter().map(|d| json!({
            "field": d.field, "lo": d.lo, "hi": d.hi, "integer": d.integer,
            "scale": format!("{:?}", d.scale).to_lowercase(),
            "specials": d.specials.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
            "source": d.source,
        })).collect::<Vec<_>>(),
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

fn fmt_s(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.6}")
    } else {
        "failed".into()
    }
}

pub fn tune(a: TuneArgs) -> Result<(), Failure> {
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

pub fn robustness(a: RobustnessArgs) -> Result<(), Failure> {
    check_names(&a.workloads, &a.machines, &a.policy)?;
    let s = &a.search;
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("robustness-{}", a.policy)));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    // The settings asked for, checked before anything runs.
    let mut want_tuned = false;
    let mut sampled = 0usize;
    let mut explicit: Vec<Setting> = Vec::new();
    let mut cells: Vec<Cell> = Vec::new();
    for m in &a.machines {
        for w in &a.workloads {
            cells.push(Cell {
                name: format!("{w}/{m}"),
                objective: cell_objective(w, m, &a.policy, s)?,
                tuned: None,
            });
        }
    }
    let first = cells[0].objective.clone();
    let policy = first.config(None, 0)?.policy;
    for c in &a.candidates {
        let c = c.trim();
        match c {
            "default" => explicit.push(Setting {
                label: "default".into(),
                sets: Vec::new(),
                values: None,
            }),
            "presets" => {
                for (name, _) in policy.presets() {
                    explicit.push(preset_setting(name));
                }
            }
            "tuned" => want_tuned = true,
            _ => {
                if let Some(name) = c.strip_prefix("preset:") {
                    if !policy.presets().iter().any(|p| p.0 == name) {
                        let known: Vec<&str> = policy.presets().iter().map(|p| p.0).collect();
                        return Err(UserError::new(format!(
                            "--candidates preset:{name}: {} has no such preset; known: {}",
                            a.policy,
                            known.join(", ")
                        ))
                        .into());
                    }
                    explicit.push(preset_setting(name));
                } else if let Some(n) = c.strip_prefix("sampled:") {
                    sampled = n.parse().map_err(|_| {
                        UserError::new(format!("--candidates {c}: expected sampled:N, N a count"))
                    })?;
                } else {
                    explicit.push(file_setting(Path::new(c), &a.policy)?);
                }
            }
        }
    }
    let pool = pool(s.jobs)?;
    pool.install(|| -> Result<(), Failure> {
        let mut settings = explicit;
        if want_tuned {
            for cell in cells.iter_mut() {
                let sub = dir.join("cells").join(cell.name.replace('/', "-"));
                eprintln!("robustness: tuning {} ({} runs)", cell.name, s.budget);
                let t = tune_one(&cell.objective, s, s.method, s.seed, &sub, &cell.name)?;
                let label = format!("tuned:{}", cell.name);
                cell.tuned = Some(label.clone());
                settings.push(Setting {
                    label,
                    sets: cell.objective.sets(&t.best),
                    values: Some(t.best),
                });
            }
        }
        {
            use rand::SeedableRng as _;
            let mut rng = rand_pcg::Pcg64::seed_from_u64(s.seed ^ 0x726f_6275_7374);
            for i in 0..sampled {
                let values = first.space.sample(&mut rng);
                settings.push(Setting {
                    label: format!("sampled:{i}"),
                    sets: first.sets(&values),
                    values: Some(values),
                });
            }
        }
        // One row per distinct setting: later duplicates are named beside the first.
        let mut distinct: Vec<(Setting, toml::Table, Vec<String>)> = Vec::new();
        for st in settings {
            let t = first.policy_toml(&st.sets)?;
            match distinct.iter_mut().find(|(_, u, _)| *u == t) {
                Some((_, _, names)) => names.push(st.label),
                None => {
                    let names = vec![st.label.clone()];
                    distinct.push((st, t, names));
                }
            }
        }
        // Every name of each distinct setting, the first one its label.
        let names_of: Vec<Vec<String>> = distinct.iter().map(|d| d.2.clone()).collect();
        let settings: Vec<Setting> = distinct
            .into_iter()
            .map(|(mut st, _, names)| {
                if names.len() > 1 {
                    st.label = format!("{} (= {})", names[0], names[1..].join(", "));
                }
                st
            })
            .collect();
        let trials = sim::holdout_trials(a.eval_trials);
        let total = (cells.len() * settings.len() * trials.len()) as u64;
        eprintln!(
            "robustness: {} settings x {} cells x {} held-out seeds = {total} runs",
            settings.len(),
            cells.len(),
            trials.len()
        );
        let progress = bar(total, "runs");
        let evals_path = dir.join("evals.jsonl");
        let mut evals_file = std::fs::File::create(&evals_path)
            .with_context(|| format!("creating {}", evals_path.display()))?;
        let mut write_error = None;
        let mut k = 0usize;
        let grid = robust::evaluate_grid(&cells, &settings, &trials, |done, _, per| {
            use std::io::Write as _;
            progress.set_position(done as u64);
            let mut text = String::new();
            for (c, xs) in per.iter().enumerate() {
                let line = json!({
                    "cell": cells[k].name,
                    "setting": settings[c].label,
                    "sets": settings[c].sets,
                    "seeds": trials.iter().map(|&t| s.seed_base.wrapping_add(t as u64)).collect::<Vec<_>>(),
                    "objective": xs.iter().map(|&x| sim::finite_or_null(x)).collect::<Vec<_>>(),
                });
                text.push_str(&line.to_string());
                text.push('\n');
            }
            if let Err(e) = evals_file.write_all(text.as_bytes()) {
                write_error.get_or_insert(e.to_string());
            }
            k += 1;
        });
        progress.finish_and_clear();
        if let Some(e) = write_error {
            return Err(anyhow::anyhow!("writing {}: {e}", evals_path.display()).into());
        }
        // means[c][k]
        let means: Vec<Vec<f64>> = (0..settings.len())
            .map(|c| {
                (0..cells.len())
                    .map(|k| sim::mean_sd(&grid[k][c]).0)
                    .collect()
            })
            .collect();
        let reference: Vec<f64> = cells
            .iter()
            .enumerate()
            .map(|(k, cell)| match &cell.tuned {
                Some(label) => names_of
                    .iter()
                    .position(|names| names.contains(label))
                    .map(|c| means[c][k])
                    .unwrap_or(f64::NAN),
                None => means.iter().map(|row| row[k]).fold(f64::INFINITY, f64::min),
            })
            .collect();
        let r = robust::regrets(&means, &reference);
        let labels: Vec<String> = settings.iter().map(|s| s.label.clone()).collect();
        let names: Vec<String> = cells.iter().map(|c| c.name.clone()).collect();
        let against = if want_tuned {
            "each cell's tuned best"
        } else {
            "the best setting in each cell"
        };
        let mut report = format!(
            "{} {} regret against {against}, {} held-out seeds a setting and cell \
             (worst and mean over {} cells; * least worst regret)\n",
            a.policy,
            s.objective,
            a.eval_trials,
            cells.len()
        );
        report.push_str(&robust::regret_text(&labels, &names, &r));
        if let Some(i) = r.minimax {
            report.push_str(&format!(
                "minimax-regret setting: {} (worst {:+.2}%, mean {:+.2}%)\n",
                labels[i],
                100.0 * r.worst[i],
                100.0 * r.mean[i]
            ));
            if let Some(d) = names_of.iter().position(|n| n.iter().any(|l| l == "default")) {
                let rank = r.worst.iter().filter(|&&w| w < r.worst[d]).count() + 1;
                report.push_str(&format!(
                    "the policy's default: worst {:+.2}%, mean {:+.2}%, rank {rank} of {} by worst regret{}\n",
                    100.0 * r.worst[d],
                    100.0 * r.mean[d],
                    labels.len(),
                    if d == i { " (the most robust)" } else { "" }
                ));
            }
        }
        let mut j = robust::regret_json(&labels, &names, &means, &r);
        j["reference"] = json!(reference
            .iter()
            .map(|&x| sim::finite_or_null(x))
            .collect::<Vec<_>>());
        j["against"] = json!(against);
        j["policy"] = json!(a.policy);
        j["sets"] = json!(settings.iter().map(|s| s.sets.clone()).collect::<Vec<_>>());
        sim::write_file(
            &dir.join("robustness.json"),
            &(serde_json::to_string_pretty(&j).context("serialising")? + "\n"),
        )?;
        sim::write_file(&dir.join("robustness.txt"), &report)?;
        report.push_str(&format!(
            "wrote {}/: robustness.txt, robustness.json, evals.jsonl{}\n",
            dir.display(),
            if want_tuned { ", cells/ (each cell's search)" } else { "" }
        ));
        out(&report)
    })
}

fn preset_setting(name: &str) -> Setting {
    Setting {
        label: format!("preset:{name}"),
        sets: vec![format!("policy.preset=\"{name}\"")],
        values: None,
    }
}

/// A setting from a TOML file's `[policy]` table (e.g. a best.toml), as `--set`s.
fn file_setting(path: &Path, policy: &str) -> Result<Setting, Failure> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        UserError::new(format!(
            "--candidates {origin}: not default, presets, preset:NAME, tuned or sampled:N, \
             and not a readable file: {e}"
        ))
    })?;
    let doc = numaplace_harness::resolve::parse_file(&origin, &text)?;
    let Some(toml::Value::Table(t)) = doc.get("policy") else {
        return Err(UserError::new(format!("{origin}: no [policy] table")).into());
    };
    if let Some(k) = t.get("kind").and_then(|k| k.as_str()) {
        if k != policy {
            return Err(UserError::new(format!(
                "{origin}: policy.kind = \"{k}\", not the --policy {policy} compared"
            ))
            .into());
        }
    }
    let sets = t
        .iter()
        .filter(|(k, _)| k.as_str() != "kind")
        .map(|(k, v)| format!("policy.{k}={v}"))
        .collect();
    Ok(Setting {
        label: format!("file:{origin}"),
        sets,
        values: None,
    })
}
