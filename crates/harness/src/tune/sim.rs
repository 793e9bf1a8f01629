//! The simulator as a tuning objective, and what a tuning run writes.
//!
//! A candidate's values go into the policy's table as `--set policy.FIELD=VALUE`
//! overrides after the user's, so a candidate is resolved and validated exactly as
//! `numaplace run` resolves a configuration. Trial `t` runs with seed `seed_base + t`;
//! held-out trials (measuring a winner on seeds it was not chosen on) start at
//! [`HOLDOUT`].

use super::{Candidate, Eval, Objective, Observer, Outcome};
use crate::{resolve, Overrides, UserError};
use numaplace_core::tune::{Space, Value};
use numaplace_core::{PolicyConfig, RunConfig};
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The first trial index of held-out evaluations: trial `HOLDOUT + i` runs with seed
/// `seed_base + HOLDOUT + i`, never a seed a search uses (its trials stay far below).
pub const HOLDOUT: u32 = 1_000_000;

/// What a run is scored by (lower is better), in seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// The run's makespan: the simulated completion time.
    Makespan,
    /// The mean of the threads' completion times.
    MeanCompletion,
}

impl Metric {
    /// Every metric's name.
    pub const NAMES: [&'static str; 2] = ["makespan", "mean-completion"];

    /// The metric's name.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Makespan => "makespan",
            Metric::MeanCompletion => "mean-completion",
        }
    }

    /// The metric of a run's statistics, in seconds.
    pub fn of(self, s: &numaplace_core::Stats) -> f64 {
        match self {
            Metric::Makespan => s.makespan_ns as f64 * 1e-9,
            Metric::MeanCompletion => crate::result::mean_completion_ns(s) * 1e-9,
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Metric {
    type Err = String;
    fn from_str(s: &str) -> Result<Metric, String> {
        match s {
            "makespan" => Ok(Metric::Makespan),
            "mean-completion" => Ok(Metric::MeanCompletion),
            _ => Err(format!(
                "unknown objective `{s}`; known: {}",
                Metric::NAMES.join(", ")
            )),
        }
    }
}

/// A `--set` override of the policy's `field` to `v`.
pub fn set_of(field: &str, v: Value) -> String {
    match v {
        Value::Int(i) => format!("policy.{field}={i}"),
        Value::Float(x) => format!("policy.{field}={x:?}"),
        Value::Inf => format!("policy.{field}=inf"),
    }
}

/// A number such as `150000000`, `1.5e8` or `-1`.
fn parse_number(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|x| x.is_finite())
}

/// The space `numaplace tune` searches for `policy`: the one it declares, each
/// `PARAM=LO..HI` of `ranges` narrowing a numeric range (`--range`; its special values
/// stay), each `policy.F=V` of `sets` fixing F (a `--set` of a tuned parameter takes it
/// out of the search), validated against the policy's fields. Errors name the option as
/// the command line spells it.
pub fn search_space(
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

/// The values `cfg` gives the space's parameters (its policy's own setting), in the
/// space's order; none if one of them is not a number or `inf`.
pub fn policy_values(space: &Space, cfg: &RunConfig) -> Option<Vec<Value>> {
    let t = policy_table(cfg).ok()?;
    space
        .dims
        .iter()
        .map(|d| match t.get(d.field)? {
            toml::Value::Integer(i) => Some(Value::Int(*i)),
            toml::Value::Float(x) if x.is_finite() => Some(Value::Float(*x)),
            toml::Value::String(s) if s == "inf" => Some(Value::Inf),
            _ => None,
        })
        .collect()
}

/// The policy table of `cfg` (all its parameters, as `run --config` reads them), without
/// its preset's name (the values are written out: the name would only repeat them).
pub fn policy_table(cfg: &RunConfig) -> Result<toml::Table, UserError> {
    let mut t = toml::Table::try_from(&cfg.policy)
        .map_err(|e| UserError::new(format!("the policy as TOML: {e}")))?;
    t.remove("preset");
    Ok(t)
}

/// A value as JSON: a number, or `"inf"`.
pub fn value_json(v: Value) -> Json {
    match v {
        Value::Int(i) => json!(i),
        Value::Float(x) => json!(x),
        Value::Inf => json!("inf"),
    }
}

/// The space's dimensions as JSON, as `summary.json` lists them: field, the numeric
/// range (`lo`, `hi`, `integer`, `scale` `linear` or `log`), the special values beyond
/// it (as text) and where the range comes from.
pub fn space_json(space: &Space) -> Json {
    Json::Array(
        space
            .dims
            .iter()
            .map(|d| {
                json!({
                    "field": d.field, "lo": d.lo, "hi": d.hi, "integer": d.integer,
                    "scale": format!("{:?}", d.scale).to_lowercase(),
                    "specials": d.specials.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
                    "source": d.source,
                })
            })
            .collect(),
    )
}

/// A candidate's values as a JSON object by field.
pub fn params_json(space: &Space, values: &[Value]) -> Json {
    let m: serde_json::Map<String, Json> = space
        .dims
        .iter()
        .zip(values)
        .map(|(d, &v)| (d.field.to_string(), value_json(v)))
        .collect();
    Json::Object(m)
}

/// A candidate's values as `field=value` pairs, for tables and messages.
pub fn params_text(space: &Space, values: &[Value]) -> String {
    space
        .dims
        .iter()
        .zip(values)
        .map(|(d, v)| format!("{}={v}", d.field))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Simulation runs of one machine, workload and policy with a candidate's values.
#[derive(Clone, Debug)]
pub struct SimObjective {
    /// The base configuration: machine, workload, policy and the user's `--set`s (its
    /// seed is replaced per trial).
    pub base: Overrides,
    /// The space the candidates come from (their values, in its order).
    pub space: Space,
    /// What a run is scored by.
    pub metric: Metric,
    /// Trial `t` runs with seed `seed_base + t`.
    pub seed_base: u64,
}

impl SimObjective {
    /// The configuration of `values` (None: the base's own policy settings) at `trial`,
    /// resolved and validated as `numaplace run` would.
    pub fn config(&self, values: Option<&[Value]>, trial: u32) -> Result<RunConfig, UserError> {
        let sets = values.map(|v| self.sets(v)).unwrap_or_default();
        self.config_with(&sets, trial)
    }

    /// The `--set` overrides of `values`.
    pub fn sets(&self, values: &[Value]) -> Vec<String> {
        self.space
            .dims
            .iter()
            .zip(values)
            .map(|(d, &v)| set_of(d.field, v))
            .collect()
    }

    /// The configuration with `sets` after the base's own, at `trial`.
    pub fn config_with(&self, sets: &[String], trial: u32) -> Result<RunConfig, UserError> {
        let mut ov = self.base.clone();
        ov.seed = Some(self.seed_base.wrapping_add(trial as u64));
        // Tuning needs the statistics only: no per-page report unless asked.
        ov.sets.insert(0, "report.per_page=false".into());
        ov.sets.extend(sets.iter().cloned());
        resolve(None, &ov)
    }

    /// One run of `cfg`, scored.
    pub fn score(&self, cfg: &RunConfig) -> Result<f64, String> {
        let (stats, _) = crate::run_monitored(cfg, None).map_err(|e| e.to_string())?;
        Ok(self.metric.of(&stats))
    }

    /// The policy's registry name.
    pub fn policy_kind(&self) -> &str {
        self.base.policy.as_deref().unwrap_or("")
    }

    /// The values the base configuration gives the space's parameters (the policy's
    /// own setting, under the user's `--set`s), in the space's order; none if one of
    /// them is not a number or `inf`.
    pub fn base_values(&self) -> Option<Vec<Value>> {
        policy_values(&self.space, &self.config_with(&[], 0).ok()?)
    }

    /// The policy table of `values` (all its parameters, as `run --config` reads them).
    pub fn policy_toml(&self, sets: &[String]) -> Result<toml::Table, UserError> {
        policy_table(&self.config_with(sets, 0)?)
    }
}

impl Objective for SimObjective {
    fn eval(&self, values: &[Value], trial: u32) -> Result<f64, String> {
        let cfg = self
            .config(Some(values), trial)
            .map_err(|e| e.to_string())?;
        self.score(&cfg)
    }
}

/// Runs of an earlier, interrupted tuning run, by candidate values and trial: a search
/// replayed with the same seed asks for them again and gets them without running.
#[derive(Default)]
pub struct Cache {
    runs: HashMap<(String, u32), Result<f64, String>>,
}

impl Cache {
    /// The runs recorded in `runs.jsonl` (absent: none).
    pub fn load(path: &Path) -> Result<Cache, UserError> {
        let mut c = Cache::default();
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(c),
            Err(e) => {
                return Err(UserError::new(format!(
                    "{}: cannot read: {e}",
                    path.display()
                )))
            }
        };
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let Ok(v) = serde_json::from_str::<Json>(line) else {
                // A line cut by an interruption: the run is done again.
                continue;
            };
            let key = v["params"].to_string();
            let Some(trial) = v["trial"].as_u64().and_then(|t| u32::try_from(t).ok()) else {
                return Err(UserError::new(format!(
                    "{}:{}: a run without its trial",
                    path.display(),
                    i + 1
                )));
            };
            let r = match v["objective"].as_f64() {
                Some(x) => Ok(x),
                None => Err(v["error"].as_str().unwrap_or("failed").to_string()),
            };
            c.runs.insert((key, trial), r);
        }
        Ok(c)
    }

    /// Runs held.
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// Whether it holds no run.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    fn get(&self, params: &Json, trial: u32) -> Option<&Result<f64, String>> {
        self.runs.get(&(params.to_string(), trial))
    }
}

/// An objective that answers from a [`Cache`] where it can.
pub struct Cached<'a, O> {
    /// The objective.
    pub inner: &'a O,
    /// The runs already made.
    pub cache: &'a Cache,
    /// The space (to key the cache by field).
    pub space: &'a Space,
}

impl<O: Objective> Objective for Cached<'_, O> {
    fn eval(&self, values: &[Value], trial: u32) -> Result<f64, String> {
        match self.cache.get(&params_json(self.space, values), trial) {
            Some(r) => r.clone(),
            None => self.inner.eval(values, trial),
        }
    }
}

/// Appends each batch's runs to `runs.jsonl` as they finish (runs a resumed search got
/// from the cache are there already), and passes progress on.
pub struct Recorder<'a> {
    file: std::fs::File,
    path: PathBuf,
    space: &'a Space,
    seed_base: u64,
    cache: &'a Cache,
    progress: Box<dyn FnMut(u64, Option<f64>) + 'a>,
    /// The first write error, reported at the end.
    pub error: Option<String>,
}

impl<'a> Recorder<'a> {
    /// A recorder appending to `path`.
    pub fn new(
        path: &Path,
        space: &'a Space,
        seed_base: u64,
        cache: &'a Cache,
        progress: Box<dyn FnMut(u64, Option<f64>) + 'a>,
    ) -> Result<Recorder<'a>, UserError> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| UserError::new(format!("{}: cannot open: {e}", path.display())))?;
        Ok(Recorder {
            file,
            path: path.to_path_buf(),
            space,
            seed_base,
            cache,
            progress,
            error: None,
        })
    }
}

/// One run's line of `runs.jsonl`.
pub fn run_json(space: &Space, seed_base: u64, c: &Candidate, e: &Eval) -> Json {
    let mut v = json!({
        "run": e.run,
        "candidate": e.candidate,
        "origin": c.origin,
        "trial": e.trial,
        "seed": seed_base.wrapping_add(e.trial as u64),
        "params": params_json(space, &c.values),
    });
    match &e.result {
        Ok(x) => v["objective"] = json!(x),
        Err(m) => {
            v["objective"] = Json::Null;
            v["error"] = json!(m);
        }
    }
    v
}

impl Observer for Recorder<'_> {
    fn batch(&mut self, candidates: &[Candidate], evals: &[Eval], incumbent: Option<usize>) {
        let mut text = String::new();
        for e in evals {
            let c = &candidates[e.candidate];
            if self
                .cache
                .get(&params_json(self.space, &c.values), e.trial)
                .is_some()
            {
                continue;
            }
            text.push_str(&run_json(self.space, self.seed_base, c, e).to_string());
            text.push('\n');
        }
        if !text.is_empty() && self.error.is_none() {
            if let Err(e) = self
                .file
                .write_all(text.as_bytes())
                .and_then(|()| self.file.flush())
            {
                self.error = Some(format!("{}: {e}", self.path.display()));
            }
        }
        let runs = evals.last().map_or(0, |e| e.run);
        (self.progress)(runs, incumbent.map(|i| candidates[i].mean()))
    }
}

/// Mean and sample standard deviation.
pub fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let m = numaplace_study::stats::mean(xs).unwrap_or(f64::NAN);
    let sd = numaplace_study::stats::sample_sd(xs).unwrap_or(0.0);
    (m, sd)
}

/// Every candidate as JSON (id, origin, params, trials, mean, sd, objectives).
pub fn candidates_json(space: &Space, out: &Outcome) -> Json {
    Json::Array(
        out.candidates
            .iter()
            .map(|c| {
                let (m, sd) = mean_sd(&c.results);
                json!({
                    "id": c.id,
                    "origin": c.origin,
                    "params": params_json(space, &c.values),
                    "trials": c.results.len(),
                    "mean": finite_or_null(m),
                    "sd": finite_or_null(sd),
                    "objectives": c.results.iter().map(|&x| finite_or_null(x)).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

/// A number, or null when it is not finite (JSON has no infinity).
pub fn finite_or_null(x: f64) -> Json {
    if x.is_finite() {
        json!(x)
    } else {
        Json::Null
    }
}

/// Every candidate as CSV: id, origin, one column per parameter, trials, mean, sd.
pub fn candidates_csv(space: &Space, out: &Outcome) -> String {
    let mut s = String::from("id,origin");
    for d in &space.dims {
        s.push(',');
        s.push_str(d.field);
    }
    s.push_str(",trials,mean,sd\n");
    for c in &out.candidates {
        let (m, sd) = mean_sd(&c.results);
        s.push_str(&format!("{},{}", c.id, c.origin));
        for v in &c.values {
            s.push_str(&format!(",{v}"));
        }
        s.push_str(&format!(",{},{m},{sd}\n", c.results.len()));
    }
    s
}

/// Runs `values` at each of `trials` (in parallel, collected in order).
pub fn evaluate<O: Objective>(objective: &O, values: &[Value], trials: &[u32]) -> Vec<f64> {
    use rayon::prelude::*;
    trials
        .par_iter()
        .map(|&t| {
            objective
                .eval(values, t)
                .ok()
                .filter(|v| v.is_finite())
                .unwrap_or(f64::INFINITY)
        })
        .collect()
}

/// Runs the base configuration (the policy's own settings, no candidate) at each of
/// `trials`, in parallel, collected in order.
pub fn evaluate_default(objective: &SimObjective, trials: &[u32]) -> Vec<f64> {
    use rayon::prelude::*;
    trials
        .par_iter()
        .map(|&t| {
            objective
                .config(None, t)
                .map_err(|e| e.to_string())
                .and_then(|cfg| objective.score(&cfg))
                .ok()
                .filter(|v| v.is_finite())
                .unwrap_or(f64::INFINITY)
        })
        .collect()
}

/// The held-out trials `HOLDOUT .. HOLDOUT + n`.
pub fn holdout_trials(n: u32) -> Vec<u32> {
    (0..n).map(|i| HOLDOUT + i).collect()
}

/// Writes `text` to `path`, naming the file in the error.
pub fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    use anyhow::Context as _;
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// Draws the traces `(label, [(runs, best)])` as `STEM.svg` and `STEM.png`.
pub fn convergence_plot(
    title: &str,
    metric: Metric,
    lines: &[(String, Vec<(u64, f64)>)],
    stem: &Path,
) -> anyhow::Result<Vec<PathBuf>> {
    use numaplace_study::plot::{write_figure, Figure, PlotLine, DEFAULT_SIZE};
    let fig = Figure {
        title: title.to_string(),
        x_desc: "simulation runs used".into(),
        y_desc: format!("best {} so far (s, mean of its trials)", metric.name()),
        lines: lines
            .iter()
            .map(|(label, pts)| PlotLine {
                label: label.clone(),
                points: pts
                    .iter()
                    .filter(|p| p.1.is_finite())
                    .map(|&(x, y)| (x as f64, y, y, y))
                    .collect(),
            })
            .filter(|l| !l.points.is_empty())
            .collect(),
        band: false,
        bars: false,
        x_labels: Vec::new(),
        levels: Vec::new(),
    };
    write_figure(&fig, DEFAULT_SIZE, stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn larowe(sets: &[&str]) -> RunConfig {
        let ov = Overrides {
            policy: Some("larowe".into()),
            sets: sets.iter().map(|s| s.to_string()).collect(),
            ..Overrides::default()
        };
        resolve(None, &ov).expect("larowe resolves")
    }

    #[test]
    fn a_set_parameter_leaves_the_space_and_a_range_narrows_one() {
        let sets = ["policy.scan_delay_ns=inf".to_string()];
        let ranges = ["freeze_window_ns=1e7..1e9".to_string()];
        let cfg = larowe(&[]);
        let space = search_space(&cfg.policy, &ranges, &sets).expect("a space");
        assert!(space.dim("scan_delay_ns").is_none());
        let d = space.dim("freeze_window_ns").expect("still searched");
        assert_eq!((d.lo, d.hi, d.specials.len()), (1e7, 1e9, 2));
        assert_eq!(space.dims.len(), cfg.policy.search_space().dims.len() - 1);
    }

    #[test]
    fn a_policy_without_a_space_is_refused_naming_the_tunable_ones() {
        let ov = Overrides {
            policy: Some("static".into()),
            ..Overrides::default()
        };
        let cfg = resolve(None, &ov).expect("static resolves");
        let e = search_space(&cfg.policy, &[], &[]).expect_err("static has no space");
        assert!(e.to_string().contains("tunable: "), "{e}");
        assert!(e.to_string().contains("larowe"), "{e}");
    }

    #[test]
    fn policy_values_are_the_configuration_s_own_setting() {
        let cfg = larowe(&["policy.preset=\"msort\"", "policy.sample_passes=3"]);
        let space = cfg.policy.search_space();
        let values = policy_values(&space, &cfg).expect("every value a number");
        let json = params_json(&space, &values);
        assert_eq!(json["freeze_window_ns"], 50_000_000);
        assert_eq!(json["recent_mod"], 0);
        assert_eq!(json["sample_passes"], 3);
        let inf = larowe(&["policy.scan_delay_ns=inf"]);
        let values = policy_values(&space, &inf).expect("inf is a value");
        assert_eq!(params_json(&space, &values)["scan_delay_ns"], "inf");
    }
}
