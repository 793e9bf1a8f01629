//! `numaplace robustness`: settings of a policy across a grid of workloads x machines,
//! and each one's regret.

use crate::failure::Failure;
use crate::output::out;
use crate::progress::bar;
use crate::search::{cell_objective, check_names, pool, tune_one, SearchArgs};
use anyhow::Context;
use clap::Args;
use numaplace_harness::tune::robust::{self, Cell, Setting};
use numaplace_harness::tune::sim;
use numaplace_harness::UserError;
use serde_json::json;
use std::path::{Path, PathBuf};

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

/// Evaluates the settings `a` asks for in every cell of its grid and prints their regrets.
pub fn run(a: RobustnessArgs) -> Result<(), Failure> {
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
