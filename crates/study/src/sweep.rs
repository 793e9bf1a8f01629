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

use crate::spec::{expand, RunPoint, Spec};
use crate::store::{self, Record, ResultWriter};
use crate::value::{toml_to_json, values_equal};

/// Something that can execute one run point. Implemented by the simulator
/// harness; tests use fakes. Each call runs single-threaded; calls happen
/// concurrently from several threads.
pub trait Runner: Sync {
    /// Executes one run and returns its result JSON.
    fn run(&self, point: &RunPoint) -> anyhow::Result<Value>;
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
        }
    }
}

/// What a sweep did.
#[derive(Debug, Clone, Default)]
pub struct SweepOutcome {
    /// All records of this shard known after the sweep (previously stored
    /// ones included), sorted by index.
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
    if let Some((i, n)) = shard {
        if n == 0 || i >= n {
            bail!("invalid shard {i}/{n}: need 0 <= i < n");
        }
    }
    Ok(expand(spec, quick)
        .into_iter()
        .filter(|p| match shard {
            Some((i, n)) => p.index % n == i,
            None => true,
        })
        .collect())
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

/// Runs (the shard of) a spec, appending one record per finished run to
/// `opts.out`. Returns all records of the shard sorted by index.
pub fn run_sweep(
    spec: &Spec,
    runner: &dyn Runner,
    opts: &SweepOptions,
) -> anyhow::Result<SweepOutcome> {
    let points = shard_points(spec, opts.quick, opts.shard)?;
    let out = &opts.out;

    let (writer, stored) = if opts.resume {
        let (w, loaded) = ResultWriter::resume(out)?;
        (w, loaded.records)
    } else {
        let nonempty = std::fs::metadata(out).map(|m| m.len() > 0).unwrap_or(false);
        if nonempty {
            bail!("{}: exists; use --resume or remove it", out.display());
        }
        (ResultWriter::create(out)?, Vec::new())
    };

    // Check stored records against the spec before running anything.
    let by_index: BTreeMap<usize, &RunPoint> = points.iter().map(|p| (p.index, p)).collect();
    let mut done: BTreeMap<usize, Record> = BTreeMap::new();
    for rec in stored {
        let Some(p) = by_index.get(&rec.index) else {
            bail!(
                "{}: stored run {} (index {}) is not part of this sweep{}; the spec changed — use a new results file",
                out.display(),
                rec.id,
                rec.index,
                if opts.shard.is_some() { " or shard" } else { "" }
            );
        };
        if p.id != rec.id || p.seed != rec.seed || !settings_match(&settings_json(p), &rec.settings)
        {
            bail!(
                "{}: stored run {} has settings {} seed {}, but the spec now gives {} seed {}; the spec changed — use a new results file",
                out.display(),
                rec.id,
                Value::Object(rec.settings.clone()),
                rec.seed,
                Value::Object(settings_json(p)),
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
        done.insert(rec.index, rec);
    }
    let todo: Vec<&RunPoint> = points
        .iter()
        .filter(|p| !done.contains_key(&p.index))
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

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs)
        .thread_name(|i| format!("sweep-{i}"))
        .build()
        .context("cannot start worker threads")?;

    let stop = opts.stop.clone().unwrap_or_default();
    let interrupted = AtomicBool::new(false);
    let executed = AtomicUsize::new(0);
    let failures: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
    let new_records: Mutex<Vec<Record>> = Mutex::new(Vec::new());
    let write_error: Mutex<Option<anyhow::Error>> = Mutex::new(None);

    pool.install(|| {
        todo.par_iter().with_max_len(1).for_each(|p| {
            if stop.load(Ordering::SeqCst) {
                interrupted.store(true, Ordering::SeqCst);
                return;
            }
            if write_error.lock().map(|e| e.is_some()).unwrap_or(true) {
                return;
            }
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runner.run(p)));
            let (result, error) = match outcome {
                Ok(Ok(v)) => (v, None),
                Ok(Err(e)) => (Value::Null, Some(format!("{e:#}"))),
                Err(payload) => (
                    Value::Null,
                    Some(format!("run panicked: {}", panic_message(payload.as_ref()))),
                ),
            };
            let rec = Record {
                id: p.id.clone(),
                index: p.index,
                seed: p.seed,
                settings: settings_json(p),
                result,
                error,
                spec_config: Value::Object(toml_table_json(&p.config)),
            };
            if let Some(msg) = &rec.error {
                bar.println(format!("run {} failed: {msg}", rec.id));
                if let Ok(mut f) = failures.lock() {
                    f.push((rec.id.clone(), msg.clone()));
                }
            }
            if let Err(e) = writer.append(&rec) {
                if let Ok(mut slot) = write_error.lock() {
                    slot.get_or_insert(e.into());
                }
                return;
            }
            executed.fetch_add(1, Ordering::SeqCst);
            if let Ok(mut v) = new_records.lock() {
                v.push(rec);
            }
            bar.inc(1);
        });
    });
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
        total: points.len(),
        executed: executed.into_inner(),
        skipped,
        failures,
        interrupted: interrupted.into_inner(),
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
