//! Running a spec's points in parallel, recording each result as it
//! finishes, resuming interrupted sweeps and merging shards.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context};
use rayon::prelude::*;
use serde_json::{Map, Value};

use crate::spec::{count_breakdown, Expansion, RunPoint, Spec};
use crate::store::{self, Record, ResultWriter};
use crate::value::{toml_to_json, values_equal};

/// Most runs one sweep (or one shard of it) may have unless the caller raises
/// the limit ([`SweepOptions::max_runs`]): a guard against typos such as a
/// small range step that would turn an afternoon into a month.
pub const DEFAULT_MAX_RUNS: usize = 100_000;

/// Something that can execute one run point. Implemented by the simulator
/// harness; tests use fakes. Each call runs single-threaded; calls happen
/// concurrently from several threads.
pub trait Runner: Sync {
    /// Executes one run and returns its result JSON.
    fn run(&self, point: &RunPoint) -> anyhow::Result<Value>;

    /// Checks a point without running it: everything [`Runner::run`] would
    /// reject before doing any work (unknown fields, bad values, unknown
    /// names). A sweep checks its points before the first run starts, so a
    /// typo anywhere in a spec fails at once; the trials of one axis
    /// combination differ only in their seed, so only the first trial of each
    /// combination is checked. The default accepts every point.
    fn check(&self, point: &RunPoint) -> anyhow::Result<()> {
        let _ = point;
        Ok(())
    }
}

impl<F> Runner for F
where
    F: Fn(&RunPoint) -> anyhow::Result<Value> + Sync,
{
    fn run(&self, point: &RunPoint) -> anyhow::Result<Value> {
        self(point)
    }
}

/// How to run a sweep.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// Worker threads; 0 means one per core.
    pub jobs: usize,
    /// Continue an existing results file instead of refusing to touch it.
    pub resume: bool,
    /// Run only the points with `index % n == i` (`Some((i, n))`, 0-based).
    pub shard: Option<(usize, usize)>,
    /// Results file (JSON Lines).
    pub out: PathBuf,
    /// Use the spec's `[quick]` overrides.
    pub quick: bool,
    /// Show a progress bar (only ever drawn when stderr is a terminal).
    pub progress: bool,
    /// When set to `true` (e.g. by a Ctrl-C handler), no new runs start;
    /// runs in flight finish and are recorded, then the sweep returns with
    /// `interrupted = true`.
    pub stop: Option<Arc<AtomicBool>>,
    /// Most runs the sweep (or the shard) may have; `None`: no limit.
    pub max_runs: Option<usize>,
    /// Dotted paths of each result to keep in [`SweepOutcome::records`]
    /// (e.g. the metric, and `config.F` for a field `F` a table groups by);
    /// `None` keeps whole results. The results file always gets whole records:
    /// this only bounds what the sweep holds in memory.
    pub keep: Option<Vec<String>>,
}

impl SweepOptions {
    /// Options writing to `out` with all cores, no resume, no shard, full
    /// mode and a progress bar.
    pub fn new(out: impl Into<PathBuf>) -> Self {
        SweepOptions {
            jobs: 0,
            resume: false,
            shard: None,
            out: out.into(),
            quick: false,
            progress: true,
            stop: None,
            max_runs: Some(DEFAULT_MAX_RUNS),
            keep: None,
        }
    }
}

/// What a sweep did.
#[derive(Debug, Clone, Default)]
pub struct SweepOutcome {
    /// All records of this shard known after the sweep (previously stored
    /// ones included), sorted by index; with [`SweepOptions::keep`], their
    /// results hold only the paths asked for and no `spec_config`.
    pub records: Vec<Record>,
    /// Points this shard covers.
    pub total: usize,
    /// Runs executed by this call.
    pub executed: usize,
    /// Runs skipped because a stored result existed (resume).
    pub skipped: usize,
    /// `(id, message)` of runs that failed during this call.
    pub failures: Vec<(String, String)>,
    /// Whether the stop flag ended the sweep early.
    pub interrupted: bool,
}

impl SweepOutcome {
    /// Whether every point of the shard has a stored record.
    pub fn complete(&self) -> bool {
        !self.interrupted && self.records.len() == self.total
    }
}

/// The settings of a point as a JSON map (the form stored in records).
pub fn settings_json(point: &RunPoint) -> Map<String, Value> {
    point
        .settings
        .iter()
        .map(|(k, v)| (k.clone(), toml_to_json(v)))
        .collect()
}

fn toml_table_json(t: &toml::Table) -> Map<String, Value> {
    t.iter()
        .map(|(k, v)| (k.clone(), toml_to_json(v)))
        .collect()
}

fn settings_match(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, v)| b.get(k).is_some_and(|w| values_equal(v, w)))
}

/// Points of a spec covered by a shard.
pub fn shard_points(
    spec: &Spec,
    quick: bool,
    shard: Option<(usize, usize)>,
) -> anyhow::Result<Vec<RunPoint>> {
    check_shard(shard)?;
    let expansion = Expansion::new(spec, quick)?;
    Ok(shard_indices(expansion.len(), shard)
        .filter_map(|i| expansion.point(i))
        .collect())
}

fn check_shard(shard: Option<(usize, usize)>) -> anyhow::Result<()> {
    if let Some((i, n)) = shard {
        if n == 0 || i >= n {
            bail!("invalid shard {i}/{n}: need 0 <= i < n");
        }
    }
    Ok(())
}

/// Indices `index % n == i` of a shard (all indices without one), in order.
fn shard_indices(
    total: usize,
    shard: Option<(usize, usize)>,
) -> std::iter::StepBy<std::ops::Range<usize>> {
    let (i, n) = shard.unwrap_or((0, 1));
    (i.min(total)..total).step_by(n.max(1))
}

fn in_shard(index: usize, shard: Option<(usize, usize)>) -> bool {
    match shard {
        Some((i, n)) => index % n == i,
        None => true,
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

fn pool(jobs: usize) -> anyhow::Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .thread_name(|i| format!("sweep-{i}"))
        .build()
        .context("cannot start worker threads")
}

/// A point's axis values as `field = value, ...` for messages.
fn settings_text(point: &RunPoint) -> String {
    if point.settings.is_empty() {
        return "the base configuration".to_string();
    }
    point
        .settings
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A sweep resolved completely before anything runs: its size checked
/// against the limit (before anything is expanded) and every axis
/// combination it covers checked by the runner. Points are generated from
/// their index when needed, so a plan is small whatever the size of the
/// sweep.
#[derive(Debug)]
pub struct SweepPlan<'a> {
    spec: &'a Spec,
    expansion: Expansion,
    shard: Option<(usize, usize)>,
    runs: usize,
}

impl SweepPlan<'_> {
    /// Runs the plan covers (the shard's, with a shard).
    pub fn runs(&self) -> usize {
        self.runs
    }

    /// The spec planned.
    pub fn spec(&self) -> &Spec {
        self.spec
    }

    /// The spec's points in the mode planned.
    pub fn expansion(&self) -> &Expansion {
        &self.expansion
    }
}

/// Resolves (the shard of) a spec without running anything: counts its runs
/// with checked arithmetic and refuses more than `opts.max_runs`, refuses an
/// existing results file without `opts.resume`, then checks the first trial
/// of every axis combination with [`Runner::check`] (on `opts.jobs` worker
/// threads, or on the calling thread with one job). Errors name the spec
/// file; a point that fails its check is named with its axis values.
pub fn plan_sweep<'a>(
    spec: &'a Spec,
    runner: &dyn Runner,
    opts: &SweepOptions,
) -> anyhow::Result<SweepPlan<'a>> {
    check_shard(opts.shard)?;
    let Some(total) = crate::spec::point_count(spec, opts.quick) else {
        bail!(
            "{}: the number of runs overflows ({})",
            spec.origin,
            count_breakdown(spec, opts.quick)
        );
    };
    let runs = shard_indices(total, opts.shard).len();
    if let Some(limit) = opts.max_runs {
        if runs > limit {
            let shard = match opts.shard {
                Some((i, n)) => format!("; shard {i}/{n} has {runs}"),
                None => String::new(),
            };
            bail!(
                "{}: the sweep{} has {total} runs ({}){shard}, more than the limit of {limit}; \
                 check the axes for a typo, or pass --force to run them all (or --max-runs N to \
                 raise the limit)",
                spec.origin,
                if opts.quick { " (quick)" } else { "" },
                count_breakdown(spec, opts.quick)
            );
        }
    }
    if !opts.resume && std::fs::metadata(&opts.out).is_ok_and(|m| m.len() > 0) {
        bail!("{}: exists; use --resume or remove it", opts.out.display());
    }
    let expansion = Expansion::new(spec, opts.quick)?;

    // One point per axis combination: the shard's first trial of it.
    let trials = expansion.trials() as usize;
    let mut firsts: Vec<usize> = Vec::new();
    for i in shard_indices(total, opts.shard) {
        match firsts.last() {
            Some(&last) if last / trials == i / trials => {}
            _ => firsts.push(i),
        }
    }
    let check = |i: usize| {
        let point = expansion.point(i)?;
        let checked =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runner.check(&point)));
        let message = match checked {
            Ok(Ok(())) => return None,
            Ok(Err(e)) => format!("{e:#}"),
            Err(payload) => format!("check panicked: {}", panic_message(payload.as_ref())),
        };
        Some((point, message))
    };
    // With one job the points are checked on the calling thread: a worker thread
    // would add nothing, and none is left behind still exiting when the plan returns
    // (dropping a pool does not wait for its threads).
    let failure = if opts.jobs == 1 {
        firsts.iter().find_map(|&i| check(i))
    } else {
        pool(opts.jobs)?.install(|| {
            firsts
                .par_iter()
                .with_max_len(1)
                .find_map_first(|&i| check(i))
        })
    };
    if let Some((point, message)) = failure {
        // Runners often start their messages with the run id; it is named here.
        let message = message
            .strip_prefix(&format!("{}: ", point.id))
            .unwrap_or(&message);
        bail!(
            "{}: run {} ({}) is invalid: {message}; nothing was run",
            spec.origin,
            point.id,
            settings_text(&point)
        );
    }
    Ok(SweepPlan {
        spec,
        expansion,
        shard: opts.shard,
        runs,
    })
}

/// Runs (the shard of) a spec, appending one record per finished run to
/// `opts.out`. Returns all records of the shard sorted by index. Plans the
/// sweep first ([`plan_sweep`]): nothing runs unless every point checks.
pub fn run_sweep(
    spec: &Spec,
    runner: &dyn Runner,
    opts: &SweepOptions,
) -> anyhow::Result<SweepOutcome> {
    let plan = plan_sweep(spec, runner, opts)?;
    run_plan(&plan, runner, opts)
}

/// Runs a planned sweep (see [`run_sweep`]); `opts` should be the options it
/// was planned with.
pub fn run_plan(
    plan: &SweepPlan<'_>,
    runner: &dyn Runner,
    opts: &SweepOptions,
) -> anyhow::Result<SweepOutcome> {
    let local = Local {
        runner,
        jobs: opts.jobs,
        stop: opts.stop.clone().unwrap_or_default(),
    };
    run_plan_on(plan, &local, opts)
}

/// Where a sweep's runs are made: the points to run are handed to [`Executor::execute`]
/// by index, and each record it hands back, in any order, is stored at once. The local
/// executor runs them on this host's threads ([`run_plan`]); another may hand them to
/// other processes or machines, each making its record with [`point_record`], so the
/// records are the same wherever they are made.
pub trait Executor {
    /// Makes the record of every point of `todo` (indices into `plan`'s expansion) and
    /// hands each to `store` as it is made; `store` returns `false` once nothing more
    /// should be made (the results file cannot be written). Returns whether the sweep
    /// was stopped before every point was made (interrupted).
    fn execute(
        &self,
        plan: &SweepPlan<'_>,
        todo: &[usize],
        store: &(dyn Fn(Record) -> bool + Sync),
    ) -> anyhow::Result<bool>;
}

/// The runs on this host: a pool of `jobs` threads (0: one per core), each run made by
/// [`point_record`] with `runner`; no new run starts once `stop` is set.
struct Local<'r> {
    runner: &'r dyn Runner,
    jobs: usize,
    stop: Arc<AtomicBool>,
}

impl Executor for Local<'_> {
    fn execute(
        &self,
        plan: &SweepPlan<'_>,
        todo: &[usize],
        store: &(dyn Fn(Record) -> bool + Sync),
    ) -> anyhow::Result<bool> {
        let pool = pool(self.jobs)?;
        let interrupted = AtomicBool::new(false);
        let failed = AtomicBool::new(false);
        pool.install(|| {
            todo.par_iter().with_max_len(1).for_each(|&index| {
                if self.stop.load(Ordering::SeqCst) {
                    interrupted.store(true, Ordering::SeqCst);
                    return;
                }
                if failed.load(Ordering::SeqCst) {
                    return;
                }
                if let Some(rec) = point_record(&plan.expansion, self.runner, index) {
                    if !store(rec) {
                        failed.store(true, Ordering::SeqCst);
                    }
                }
            });
        });
        Ok(interrupted.into_inner())
    }
}

/// The record of the point `index` of `expansion` (None past its end): the run made by
/// `runner`, its failure or panic as the record's error.
pub fn point_record(expansion: &Expansion, runner: &dyn Runner, index: usize) -> Option<Record> {
    let p = expansion.point(index)?;
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runner.run(&p)));
    let (result, error) = match outcome {
        Ok(Ok(v)) => (v, None),
        Ok(Err(e)) => (Value::Null, Some(format!("{e:#}"))),
        Err(payload) => (
            Value::Null,
            Some(format!("run panicked: {}", panic_message(payload.as_ref()))),
        ),
    };
    Some(Record {
        id: p.id.clone(),
        index: p.index,
        seed: p.seed,
        settings: settings_json(&p),
        result,
        error,
        spec_config: Value::Object(toml_table_json(&p.config)),
    })
}

/// [`run_plan`] with the runs made by `executor`: the results file opened (or resumed,
/// its records checked against the spec), the points it lacks handed to the executor,
/// each record stored as it arrives.
pub fn run_plan_on(
    plan: &SweepPlan<'_>,
    executor: &dyn Executor,
    opts: &SweepOptions,
) -> anyhow::Result<SweepOutcome> {
    let spec = plan.spec;
    let expansion = &plan.expansion;
    let out = &opts.out;
    let slim = |rec: Record| match &opts.keep {
        Some(paths) => rec.keep_only(paths),
        None => rec,
    };

    let (writer, stored) = if opts.resume {
        // Stored records are slimmed as they are read, keeping `spec_config` until
        // they are checked against the spec below.
        let (w, loaded) = ResultWriter::resume(out, |mut rec| match &opts.keep {
            Some(paths) => {
                let spec_config = std::mem::take(&mut rec.spec_config);
                Record {
                    spec_config,
                    ..rec.keep_only(paths)
                }
            }
            None => rec,
        })?;
        (w, loaded.records)
    } else {
        let nonempty = std::fs::metadata(out).map(|m| m.len() > 0).unwrap_or(false);
        if nonempty {
            bail!("{}: exists; use --resume or remove it", out.display());
        }
        (ResultWriter::create(out)?, Vec::new())
    };

    // Check stored records against the spec before running anything.
    let mut done: BTreeMap<usize, Record> = BTreeMap::new();
    for rec in stored {
        let point = expansion
            .point(rec.index)
            .filter(|_| in_shard(rec.index, plan.shard));
        let Some(p) = point else {
            bail!(
                "{}: stored run {} (index {}) is not part of this sweep{}; the spec changed — use a new results file",
                out.display(),
                rec.id,
                rec.index,
                if plan.shard.is_some() { " or shard" } else { "" }
            );
        };
        if p.id != rec.id
            || p.seed != rec.seed
            || !settings_match(&settings_json(&p), &rec.settings)
        {
            bail!(
                "{}: stored run {} has settings {} seed {}, but the spec now gives {} seed {}; the spec changed — use a new results file",
                out.display(),
                rec.id,
                Value::Object(rec.settings.clone()),
                rec.seed,
                Value::Object(settings_json(&p)),
                p.seed
            );
        }
        if !rec.spec_config.is_null()
            && !values_equal(&rec.spec_config, &Value::Object(toml_table_json(&p.config)))
        {
            bail!(
                "{}: stored run {} was made with another configuration than the spec now gives (its base changed); use a new results file",
                out.display(),
                rec.id
            );
        }
        done.insert(rec.index, slim(rec));
    }
    let todo: Vec<usize> = shard_indices(expansion.len(), plan.shard)
        .filter(|i| !done.contains_key(i))
        .collect();
    let skipped = done.len();

    let bar = if opts.progress && std::io::stderr().is_terminal() {
        let pb = indicatif::ProgressBar::new(todo.len() as u64);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} runs (ETA {eta})",
        ) {
            pb.set_style(style);
        }
        pb.set_prefix(spec.name.clone());
        pb
    } else {
        indicatif::ProgressBar::hidden()
    };

    let executed = AtomicUsize::new(0);
    let failures: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
    let new_records: Mutex<Vec<Record>> = Mutex::new(Vec::new());
    let write_error: Mutex<Option<anyhow::Error>> = Mutex::new(None);

    let store = |rec: Record| -> bool {
        if let Some(msg) = &rec.error {
            bar.println(format!("run {} failed: {msg}", rec.id));
            if let Ok(mut f) = failures.lock() {
                f.push((rec.id.clone(), msg.clone()));
            }
        }
        // The record is on disk before anything else happens to it.
        if let Err(e) = writer.append(&rec) {
            if let Ok(mut slot) = write_error.lock() {
                slot.get_or_insert(e.into());
            }
            return false;
        }
        executed.fetch_add(1, Ordering::SeqCst);
        let rec = slim(rec);
        if let Ok(mut v) = new_records.lock() {
            v.push(rec);
        }
        bar.inc(1);
        true
    };
    let interrupted = executor.execute(plan, &todo, &store);
    bar.finish_and_clear();

    if let Some(e) = write_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e.context(format!("writing {}", out.display())));
    }
    for rec in new_records.into_inner().unwrap_or_else(|p| p.into_inner()) {
        done.insert(rec.index, rec);
    }
    let mut failures = failures.into_inner().unwrap_or_else(|p| p.into_inner());
    failures.sort();
    Ok(SweepOutcome {
        records: done.into_values().collect(),
        total: plan.runs,
        executed: executed.into_inner(),
        skipped,
        failures,
        interrupted: interrupted?,
    })
}

/// Merges results files (e.g. shards) into one list sorted by index.
/// Identical duplicates are kept once; the same id with different contents
/// is an error.
pub fn merge(paths: &[PathBuf]) -> anyhow::Result<Vec<Record>> {
    let mut all: BTreeMap<usize, (Record, &Path)> = BTreeMap::new();
    for path in paths {
        for rec in store::load(path)? {
            match all.get(&rec.index) {
                Some((existing, from)) if existing != &rec => bail!(
                    "run {} differs between {} and {}",
                    rec.id,
                    from.display(),
                    path.display()
                ),
                Some(_) => {}
                None => {
                    all.insert(rec.index, (rec, path.as_path()));
                }
            }
        }
    }
    Ok(all.into_values().map(|(r, _)| r).collect())
}
