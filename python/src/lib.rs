//! `numaplace._numaplace`: the native part of the `numaplace` Python package.
//!
//! It only translates: configurations are resolved by the harness as `numaplace run`
//! resolves them (`resolve`, `resolve_text`, `--set` overrides), runs are admitted and
//! made by the harness's functions the CLI calls, the record is the harness's
//! (`record_without_pages`, `record_text`), sweeps are the study crate's `run_sweep` with
//! the harness's runner. What it adds is the crossing: errors as Python exceptions with
//! their field, file and line; the GIL released while a simulation runs; progress handed
//! to a Python callable; the record's lists as Arrow record batches handed to pyarrow
//! through the C data interface. The pure-Python part (`numaplace/__init__.py`) turns
//! those into polars frames and gives them their types.

use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_pyarrow::ToPyArrow;
use arrow_schema::{DataType, Field, FieldRef, Schema};
use numaplace_core::memory::PageNames;
use numaplace_core::{Monitor, Progress, RunConfig, SimError, Stats};
use numaplace_harness::limits::Record;
use numaplace_harness::tune::sim::{self as tune_sim, Metric};
use numaplace_harness::{Limits, Overrides, UserError, ValueSource};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use serde_arrow::schema::{SchemaLike, TracingOptions};
use serde_json::Value;
use std::sync::{Arc, Mutex};

create_exception!(
    _numaplace,
    ConfigError,
    PyValueError,
    "Bad input: a configuration, a name, a file or a value numaplace cannot use. \
     `field` is the dotted path of the field at fault (None when the error is not about \
     one field), `file` and `line` where it was written (None when it was not written in \
     a file), `given` where the value came from (`file`, `set`, `config` or None) and \
     `reason` the message without its location."
);
create_exception!(
    _numaplace,
    LimitError,
    ConfigError,
    "A run larger than a resource limit (memory or operations): `field` drives the \
     estimate; pass force=True to run it anyway."
);
create_exception!(
    _numaplace,
    SimulationError,
    PyRuntimeError,
    "A simulation that failed for a reason other than its input (a deadlock, a policy \
     that broke its contract)."
);

/// `e` as the Python exception the package raises for bad input, its message the one
/// the CLI prints and its attributes the parts of it.
fn user_err(py: Python<'_>, e: &UserError) -> PyErr {
    let (field, file, line, given, reason) = match e {
        UserError::Field {
            given,
            field,
            message,
        } => {
            let (file, line, source) = match given {
                ValueSource::File { origin, line } => (Some(origin.clone()), *line, "file"),
                ValueSource::Set => (None, None, "set"),
                ValueSource::Config => (None, None, "config"),
            };
            (
                Some(field.clone()),
                file,
                line,
                Some(source),
                message.clone(),
            )
        }
        UserError::Limit { field, message } => {
            (Some(field.clone()), None, None, None, message.clone())
        }
        UserError::Other(m) => (None, None, None, None, m.clone()),
    };
    let err = if matches!(e, UserError::Limit { .. }) {
        LimitError::new_err(e.to_string())
    } else {
        ConfigError::new_err(e.to_string())
    };
    let value = err.value(py);
    let set = || -> PyResult<()> {
        value.setattr("field", field)?;
        value.setattr("file", file)?;
        value.setattr("line", line)?;
        value.setattr("given", given)?;
        value.setattr("reason", reason)?;
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// A simulation's error: the user's input (ConfigError, as the CLI's exit code 2) or the
/// simulation's own failure (SimulationError, exit code 1).
fn sim_err(py: Python<'_>, e: SimError) -> PyErr {
    match numaplace_harness::error::input_error(e) {
        Ok(input) => user_err(py, &input),
        Err(other) => SimulationError::new_err(format!("simulation failed: {other}")),
    }
}

/// Anything else that went wrong on the Rust side (serialising, converting).
fn internal(e: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

/// Where a configuration comes from, as the Python side tells it.
enum Source {
    /// None: a bare `numaplace run`.
    Nothing,
    /// A file's path.
    Path(String),
    /// TOML text.
    Toml(String),
    /// A mapping, as JSON text (the Python side writes it).
    Json(String),
}

impl Source {
    fn of(kind: &str, text: Option<String>) -> PyResult<Source> {
        Ok(match (kind, text) {
            ("none", _) => Source::Nothing,
            ("path", Some(t)) => Source::Path(t),
            ("toml", Some(t)) => Source::Toml(t),
            ("json", Some(t)) => Source::Json(t),
            (k, _) => return Err(internal(format!("unknown configuration source `{k}`"))),
        })
    }
}

/// A run's configuration resolved as `numaplace run [--config FILE] --set ...` resolves
/// it; a mapping resolves as a file would, its errors naming `<dict>` and the field.
fn resolve(source: Source, ov: &Overrides) -> Result<RunConfig, UserError> {
    match source {
        Source::Nothing => numaplace_harness::resolve(None, ov),
        Source::Path(path) => {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| UserError::new(format!("{path}: cannot read: {e}")))?;
            numaplace_harness::resolve_text(&path, &text, ov)
        }
        Source::Toml(text) => numaplace_harness::resolve_text("<string>", &text, ov),
        Source::Json(text) => {
            let table: toml::Table = serde_json::from_str(&text)
                .map_err(|e| UserError::new(format!("<dict>: not a configuration: {e}")))?;
            numaplace_harness::resolve(Some(("<dict>", table)), ov)
        }
    }
}

/// The command line's choices beside the configuration.
fn overrides(
    machine: Option<String>,
    workload: Option<String>,
    policy: Option<String>,
    seed: Option<u64>,
    sets: Vec<String>,
) -> Overrides {
    Overrides {
        machine,
        workload,
        policy,
        seed,
        sets,
    }
}

/// Hands a run's progress to a Python callable `progress(done, total)` (operations
/// simulated and the estimate, raised when the run outgrows it) and stops the run when
/// the callable raises or the interpreter has a signal pending (Ctrl-C); the exception
/// is kept for the caller to raise.
struct PyMonitor {
    callback: Option<Py<PyAny>>,
    total: u64,
    raised: Arc<Mutex<Option<PyErr>>>,
}

impl Monitor for PyMonitor {
    fn progress(&mut self, p: Progress) -> bool {
        self.total = self.total.max(p.ops);
        Python::attach(|py| {
            let called = py.check_signals().and_then(|()| match &self.callback {
                Some(f) => f.call1(py, (p.ops, self.total)).map(drop),
                None => Ok(()),
            });
            match called {
                Ok(()) => true,
                Err(e) => {
                    if let Ok(mut slot) = self.raised.lock() {
                        *slot = Some(e);
                    }
                    false
                }
            }
        })
    }
}

/// A run made: its statistics and the record the CLI writes of them.
#[pyclass(module = "numaplace._numaplace", frozen)]
struct Run {
    /// The record without its per-page list (`pages`).
    rest: Value,
    stats: Stats,
    page_data: PageNames,
}

#[pymethods]
impl Run {
    /// The record as `numaplace run --json FILE` writes it (pretty JSON, a final newline).
    fn json(&self) -> PyResult<String> {
        numaplace_harness::result::record_text(&self.rest, &self.stats, &self.page_data)
            .map_err(internal)
    }

    /// The record without its lists (`pages`, `series`, `threads`, `programs`), as JSON.
    fn summary(&self) -> PyResult<String> {
        let mut v = self.rest.clone();
        if let Some(o) = v.as_object_mut() {
            for k in ["series", "threads", "programs"] {
                o.remove(k);
            }
        }
        serde_json::to_string(&v).map_err(internal)
    }

    /// The run scored as `numaplace tune` scores it, in seconds: `name` is one of its
    /// `--objective` metrics (`makespan`, `mean-completion`).
    fn metric(&self, py: Python<'_>, name: &str) -> PyResult<f64> {
        let m: Metric = name
            .parse()
            .map_err(|e: String| user_err(py, &UserError::new(e)))?;
        Ok(m.of(&self.stats))
    }

    /// The per-page report as a pyarrow RecordBatch: the record's `pages` entries, one
    /// row each, with `data` (the arrays on the page).
    fn pages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // The per-page report is the one list that grows to millions of rows: its
        // columns are filled field by field (a test holds them to the record's keys).
        let batch = batch_from(page_columns(&self.stats.pages, &self.page_data)?)?;
        batch.to_pyarrow(py)
    }

    /// The series as a pyarrow RecordBatch: one row per point.
    fn series<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        batch_of(py, &self.stats.series)
    }

    /// The threads as a pyarrow RecordBatch: one row per thread.
    fn threads<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        batch_of(py, &self.stats.threads)
    }

    /// The programs as a pyarrow RecordBatch: one row per program.
    fn programs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        batch_of(py, &self.stats.programs)
    }
}

/// `rows` (entries of the record's lists) as a record batch, nested tables flattened into `outer_inner` columns, handed to pyarrow. The
/// columns follow the rows' serialisation, which is the record's, so a field the record
/// gains is a column without a change here.
fn batch_of<'py, T>(py: Python<'py>, rows: &[T]) -> PyResult<Bound<'py, PyAny>>
where
    T: serde::Serialize + for<'de> serde::Deserialize<'de>,
{
    let fields = Vec::<FieldRef>::from_type::<T>(TracingOptions::default()).map_err(internal)?;
    // Lists left out of a row when empty (`series_by_array`'s `arrays`) are read as
    // absent from every row that lacks them.
    let fields: Vec<FieldRef> = fields
        .into_iter()
        .map(|f| match f.data_type() {
            DataType::List(_) | DataType::LargeList(_) => {
                Arc::new(f.as_ref().clone().with_nullable(true))
            }
            _ => f,
        })
        .collect();
    let batch = serde_arrow::to_record_batch(&fields, &rows).map_err(internal)?;
    let mut columns: Vec<(String, ArrayRef)> = Vec::new();
    for (f, a) in batch.schema().fields().iter().zip(batch.columns()) {
        let list = matches!(f.data_type(), DataType::List(_) | DataType::LargeList(_));
        if list && a.null_count() == a.len() && !rows.is_empty() {
            // A list no row has (as the record leaves it out of every entry).
            continue;
        }
        flatten(f.name(), a, &mut columns);
    }
    batch_from(columns)?.to_pyarrow(py)
}

/// The columns of the per-page report, as [`batch_of`] would make them from the
/// record's `pages` entries, filled in one pass over the pages (a pass per column would
/// read the whole report once per column), and `data`, the arrays on each page, as a
/// dictionary column (a workload has a few arrays and many pages; polars reads it as a
/// categorical column).
fn page_columns(
    pages: &[numaplace_core::stats::PageReport],
    page_data: &PageNames,
) -> PyResult<Vec<(String, ArrayRef)>> {
    use arrow_array::types::UInt32Type;
    use arrow_array::{BooleanArray, DictionaryArray, UInt16Array, UInt32Array, UInt64Array};
    const WIDE: [&str; 13] = [
        "refs_local",
        "refs_remote",
        "refs_cached",
        "refs_total",
        "faults",
        "fault_ns",
        "contended_faults",
        "fault_wait_ns",
        "migrations",
        "replications",
        "coherency_faults",
        "freezes",
        "frozen_ns",
    ];
    let n = pages.len();
    let mut vpn = Vec::with_capacity(n);
    let mut wide: Vec<Vec<u64>> = (0..WIDE.len()).map(|_| Vec::with_capacity(n)).collect();
    let mut frozen_at_end = Vec::with_capacity(n);
    let mut home = Vec::with_capacity(n);
    let mut copies = Vec::with_capacity(n);
    let mut names: Vec<&str> = Vec::new();
    let mut keys: Vec<u32> = Vec::with_capacity(n);
    let mut last: Option<(&str, u32)> = None;
    for p in pages {
        vpn.push(p.vpn);
        let values = [
            p.refs.local,
            p.refs.remote,
            p.refs.cached,
            p.refs.total,
            p.faults,
            p.fault_ns,
            p.contended_faults,
            p.fault_wait_ns,
            p.migrations,
            p.replications,
            p.coherency_faults,
            p.freezes,
            p.frozen_ns,
        ];
        for (column, v) in wide.iter_mut().zip(values) {
            column.push(v);
        }
        frozen_at_end.push(p.frozen_at_end);
        home.push(p.home);
        copies.push(p.copies);
        let name = page_data.get(p.vpn as usize).unwrap_or("");
        let key = match last {
            Some((l, k)) if l == name => k,
            _ => {
                let k = match names.iter().position(|&x| x == name) {
                    Some(k) => k as u32,
                    None => {
                        names.push(name);
                        (names.len() - 1) as u32
                    }
                };
                last = Some((name, k));
                k
            }
        };
        keys.push(key);
    }
    let mut columns: Vec<(String, ArrayRef)> =
        vec![("vpn".into(), Arc::new(UInt32Array::from(vpn)))];
    for (name, values) in WIDE.iter().zip(wide) {
        columns.push((name.to_string(), Arc::new(UInt64Array::from(values))));
    }
    columns.push((
        "frozen_at_end".into(),
        Arc::new(BooleanArray::from(frozen_at_end)),
    ));
    columns.push(("home".into(), Arc::new(UInt16Array::from(home))));
    columns.push(("copies".into(), Arc::new(UInt32Array::from(copies))));
    let data = DictionaryArray::<UInt32Type>::try_new(
        UInt32Array::from(keys),
        Arc::new(StringArray::from(names)),
    )
    .map_err(internal)?;
    columns.push(("data".into(), Arc::new(data)));
    Ok(columns)
}

/// A record batch of named columns.
fn batch_from(columns: Vec<(String, ArrayRef)>) -> PyResult<RecordBatch> {
    let schema = Schema::new(
        columns
            .iter()
            .map(|(n, a)| Field::new(n, a.data_type().clone(), a.null_count() > 0))
            .collect::<Vec<_>>(),
    );
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(schema), arrays).map_err(internal)
}

/// A column, or a struct column's children as `name_child` (recursively): the arrays are
/// shared, not copied.
fn flatten(name: &str, a: &ArrayRef, out: &mut Vec<(String, ArrayRef)>) {
    match a.as_any().downcast_ref::<arrow_array::StructArray>() {
        Some(s) if s.null_count() == 0 => {
            for (f, child) in s.fields().iter().zip(s.columns()) {
                flatten(&format!("{name}_{}", f.name()), child, out);
            }
        }
        _ => out.push((name.to_string(), a.clone())),
    }
}

/// Runs a configuration as `numaplace run --json -` does and returns the run: resolved,
/// admitted against the host's limits (none with `force`), simulated with the GIL
/// released.
#[pyfunction]
#[pyo3(signature = (kind, text, machine, workload, policy, seed, sets, progress, force, max_ops))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    kind: &str,
    text: Option<String>,
    machine: Option<String>,
    workload: Option<String>,
    policy: Option<String>,
    seed: Option<u64>,
    sets: Vec<String>,
    progress: Option<Py<PyAny>>,
    force: bool,
    max_ops: Option<u64>,
) -> PyResult<Run> {
    let source = Source::of(kind, text)?;
    let ov = overrides(machine, workload, policy, seed, sets);
    let cfg = py
        .detach(|| resolve(source, &ov))
        .map_err(|e| user_err(py, &e))?;
    let mut limits = if force {
        Limits::none()
    } else {
        Limits::from_host()
    };
    if let Some(n) = max_ops {
        limits.max_ops = n;
    }
    let est = numaplace_harness::limits::admit_with(&cfg, &limits, Record::Streamed)
        .map_err(|e| user_err(py, &e))?;
    let raised = Arc::new(Mutex::new(None));
    let monitor = Box::new(PyMonitor {
        callback: progress.as_ref().map(|p| p.clone_ref(py)),
        total: est.ops.max(1),
        raised: raised.clone(),
    });
    let result = py.detach(move || {
        numaplace_harness::locations::run_maybe_located(&cfg, Some((monitor, 1 << 16)), false).map(
            |(stats, page_data, _)| {
                let rest =
                    numaplace_harness::result::record_without_pages(&cfg, &stats, &page_data);
                (stats, page_data, rest)
            },
        )
    });
    if let Some(e) = raised.lock().ok().and_then(|mut r| r.take()) {
        return Err(e);
    }
    let (stats, page_data, rest) = result.map_err(|e| sim_err(py, e))?;
    if let Some(f) = &progress {
        f.call1(py, (stats.ops, stats.ops))?;
    }
    Ok(Run {
        rest,
        stats,
        page_data,
    })
}

/// What `numaplace run --estimate` reports, as JSON: the estimate (pages, threads,
/// operations, bytes and their parts) and the host's limits it is held to.
#[pyfunction]
#[pyo3(signature = (kind, text, machine, workload, policy, seed, sets))]
#[allow(clippy::too_many_arguments)]
fn estimate(
    py: Python<'_>,
    kind: &str,
    text: Option<String>,
    machine: Option<String>,
    workload: Option<String>,
    policy: Option<String>,
    seed: Option<u64>,
    sets: Vec<String>,
) -> PyResult<String> {
    let source = Source::of(kind, text)?;
    let ov = overrides(machine, workload, policy, seed, sets);
    let cfg = resolve(source, &ov).map_err(|e| user_err(py, &e))?;
    let est = numaplace_harness::limits::estimate_with(&cfg, Record::Streamed)
        .map_err(|e| user_err(py, &e))?;
    let limits = Limits::from_host();
    let mut v = serde_json::to_value(&est).map_err(internal)?;
    if let Some(o) = v.as_object_mut() {
        o.insert("max_bytes".into(), limits.max_bytes.into());
        o.insert("max_bytes_source".into(), limits.bytes_source.into());
        o.insert("max_ops".into(), limits.max_ops.into());
        o.insert(
            "fits".into(),
            (est.bytes <= limits.max_bytes && est.ops <= limits.max_ops).into(),
        );
    }
    serde_json::to_string(&v).map_err(internal)
}

/// The space `numaplace tune` searches for the configuration's policy (resolved as `run`
/// resolves it), as JSON: the policy's kind and, per parameter in the tuner's order, its
/// field, the numeric range (`lo`, `hi`, `integer`, `scale`), the special values beyond it
/// (numbers, `"inf"`), where the range comes from, and the value the configuration gives
/// it (`default`, the tuner's first candidate; null if not a number). `ranges` narrow
/// numeric ranges as `--range` does; a policy parameter among `sets` is fixed, as `tune
/// --set` fixes it.
#[pyfunction]
#[pyo3(signature = (kind, text, machine, workload, policy, sets, ranges))]
#[allow(clippy::too_many_arguments)]
fn search_space(
    py: Python<'_>,
    kind: &str,
    text: Option<String>,
    machine: Option<String>,
    workload: Option<String>,
    policy: Option<String>,
    sets: Vec<String>,
    ranges: Vec<String>,
) -> PyResult<String> {
    let source = Source::of(kind, text)?;
    let ov = overrides(machine, workload, policy, None, sets.clone());
    let cfg = resolve(source, &ov).map_err(|e| user_err(py, &e))?;
    let space =
        tune_sim::search_space(&cfg.policy, &ranges, &sets).map_err(|e| user_err(py, &e))?;
    let defaults = tune_sim::policy_values(&space, &cfg);
    let Value::Array(mut dims) = tune_sim::space_json(&space) else {
        return Err(internal("the space as JSON is a list"));
    };
    for (i, (j, d)) in dims.iter_mut().zip(&space.dims).enumerate() {
        if let Some(o) = j.as_object_mut() {
            let specials = d.specials.iter().map(|&v| tune_sim::value_json(v));
            o.insert("specials".into(), Value::Array(specials.collect()));
            let default = defaults.as_ref().map(|v| tune_sim::value_json(v[i]));
            o.insert("default".into(), default.unwrap_or(Value::Null));
        }
    }
    let out = serde_json::json!({"policy": cfg.policy.kind(), "params": dims});
    serde_json::to_string(&out).map_err(internal)
}

/// The half-width of the two-sided Student-t interval of the mean of `xs` at `level`
/// (`numaplace_study::stats::ci_half_width`, the one the sweeps' tables use); None for
/// fewer than two values or a level outside (0, 1).
#[pyfunction]
fn ci_half_width(xs: Vec<f64>, level: f64) -> Option<f64> {
    numaplace_study::stats::ci_half_width(&xs, level)
}

/// Every machine, workload, policy and scheduler (`numaplace list`) as a record batch:
/// `family`, `name`, `description`, `presets` (the component's named settings).
#[pyfunction]
fn components<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
    use numaplace_core::component::{SchedulerConfig, WorkloadConfig};
    use numaplace_core::PolicyConfig;
    #[derive(serde::Serialize, serde::Deserialize)]
    struct Row {
        family: String,
        name: String,
        description: String,
        presets: Vec<String>,
    }
    let mut rows = Vec::new();
    for name in numaplace_harness::presets::names() {
        let t = numaplace_harness::presets::preset_table(name).map_err(|e| user_err(py, &e))?;
        let d = t.get("description").and_then(|d| d.as_str()).unwrap_or("");
        rows.push(Row {
            family: "machine".into(),
            name: name.into(),
            description: d.into(),
            presets: Vec::new(),
        });
    }
    let row = |family: &str, kind: &str, desc: &str, presets: &[(&str, &str)]| Row {
        family: family.into(),
        name: kind.into(),
        description: desc.into(),
        presets: presets.iter().map(|p| p.0.to_string()).collect(),
    };
    for c in WorkloadConfig::all() {
        rows.push(row("workload", c.kind(), c.describe(), c.presets()));
    }
    for c in PolicyConfig::all() {
        rows.push(row("policy", c.kind(), c.describe(), c.presets()));
    }
    for c in SchedulerConfig::all() {
        rows.push(row("scheduler", c.kind(), c.describe(), c.presets()));
    }
    batch_of(py, &rows)
}

/// The machine preset `name` with `sets` applied (`machine show NAME --set ...`), as
/// JSON: every parameter with its value.
#[pyfunction]
fn machine(py: Python<'_>, name: &str, sets: Vec<String>) -> PyResult<String> {
    let cfg =
        numaplace_harness::resolve::machine_preset(name, &sets).map_err(|e| user_err(py, &e))?;
    serde_json::to_string(&cfg).map_err(internal)
}

/// A sweep's records (a record batch), its store's path, the runs made now and those
/// found stored, the failures (id, message), and the summary table `numaplace sweep`
/// prints.
type SweepOut<'py> = (
    Bound<'py, PyAny>,
    String,
    usize,
    usize,
    Vec<(String, String)>,
    String,
);

/// The runner of a sweep's points: the harness's, held to this host's limits shared by
/// `jobs` parallel runs (none with `force`), as `numaplace sweep` makes it.
fn sweep_runner(jobs: usize, force: bool) -> numaplace_harness::SimRunner {
    let limits = if force {
        Limits::none()
    } else {
        let jobs = match jobs {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        Limits::from_host().shared(jobs)
    };
    numaplace_harness::SimRunner::with_limits(limits)
}

/// A sweep's points made by a Python callable: `submit(indices)` returns an iterable of
/// the points' records as JSON text (each made by [`sweep_point`] wherever it runs), in
/// any order; each is stored as it arrives. An exception it raises is kept for the
/// caller to raise.
struct PyExecutor<'py> {
    submit: Bound<'py, PyAny>,
    raised: std::cell::RefCell<Option<PyErr>>,
}

impl numaplace_study::sweep::Executor for PyExecutor<'_> {
    fn execute(
        &self,
        _plan: &numaplace_study::sweep::SweepPlan<'_>,
        todo: &[usize],
        store: &(dyn Fn(numaplace_study::Record) -> bool + Sync),
    ) -> anyhow::Result<bool> {
        let made = || -> PyResult<()> {
            for item in self.submit.call1((todo.to_vec(),))?.try_iter()? {
                let text: String = item?.extract()?;
                let rec: numaplace_study::Record = serde_json::from_str(&text)
                    .map_err(|e| internal(format!("a point's record: {e}")))?;
                if !store(rec) {
                    break;
                }
            }
            Ok(())
        };
        made().map_err(|e| {
            let message = e.to_string();
            *self.raised.borrow_mut() = Some(e);
            anyhow::anyhow!(message)
        })?;
        Ok(false)
    }
}

/// Runs the sweep of an experiment spec (its TOML text, and its file's name for
/// messages) as `numaplace sweep` does, its records appended to the JSON Lines store
/// `out` (default: the spec's name with `.jsonl`; `resume`: only what it lacks): on this
/// host's cores with the GIL released, or, given `submit`, by handing the points to it
/// (see [`PyExecutor`]). Returns the records flattened for a frame: `id`, `index`,
/// `seed`, each axis by its dotted field, `error`, and each number of the result by its
/// dotted path (the configuration and the record's lists left out).
#[pyfunction]
#[pyo3(signature = (text, origin, out, quick, resume, jobs, force, submit))]
#[allow(clippy::too_many_arguments)]
fn sweep<'py>(
    py: Python<'py>,
    text: &str,
    origin: &str,
    out: Option<&str>,
    quick: bool,
    resume: bool,
    jobs: usize,
    force: bool,
    submit: Option<Bound<'py, PyAny>>,
) -> PyResult<SweepOut<'py>> {
    use numaplace_study::sweep::{plan_sweep, run_plan, run_plan_on, SweepOptions};
    let spec = numaplace_study::parse_spec(text, origin)
        .map_err(|e| user_err(py, &UserError::new(e.to_string())))?;
    // The default store is named after the spec, as `numaplace sweep` names it.
    let out = out.map_or_else(
        || std::path::PathBuf::from(format!("{}.jsonl", spec.name)),
        std::path::PathBuf::from,
    );
    let mut opts = SweepOptions::new(&out);
    opts.jobs = jobs;
    opts.resume = resume;
    opts.quick = quick;
    opts.progress = false;
    opts.max_runs = (!force).then_some(numaplace_study::DEFAULT_MAX_RUNS);
    let runner = sweep_runner(jobs, force);
    let plan = py
        .detach(|| plan_sweep(&spec, &runner, &opts))
        .map_err(|e| user_err(py, &UserError::new(format!("{e:#}"))))?;
    let outcome = match submit {
        None => {
            // The runs go on a thread of their own while this one, the interpreter's,
            // looks for a pending signal every 100 ms: Ctrl-C stops the sweep as it
            // stops `numaplace sweep` (no new run starts, those in flight are stored),
            // then is raised.
            let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
            opts.stop = Some(stop.clone());
            let mut signal = None;
            let outcome = std::thread::scope(|scope| {
                let sweep = scope.spawn(|| run_plan(&plan, &runner, &opts));
                while !sweep.is_finished() {
                    py.detach(|| std::thread::sleep(std::time::Duration::from_millis(100)));
                    if signal.is_none() {
                        if let Err(e) = py.check_signals() {
                            stop.store(true, std::sync::atomic::Ordering::SeqCst);
                            signal = Some(e);
                        }
                    }
                }
                sweep.join()
            });
            if let Some(e) = signal {
                return Err(e);
            }
            outcome.map_err(|_| internal("the sweep's thread panicked"))?
        }
        Some(submit) => {
            let executor = PyExecutor {
                submit,
                raised: std::cell::RefCell::new(None),
            };
            let outcome = run_plan_on(&plan, &executor, &opts);
            if let Some(e) = executor.raised.into_inner() {
                return Err(e);
            }
            outcome
        }
    }
    .map_err(|e| user_err(py, &UserError::new(format!("{e:#}"))))?;
    let rows: Vec<serde_json::Map<String, Value>> =
        outcome.records.iter().map(flat_record).collect();
    let batch = json_batch(py, &rows)?;
    let table_opts = numaplace_study::reproduce::table_options(&spec);
    let table = numaplace_study::table::summarize(&outcome.records, &table_opts).render_text();
    Ok((
        batch,
        out.display().to_string(),
        outcome.executed,
        outcome.skipped,
        outcome.failures,
        table,
    ))
}

/// The record of one point of a sweep, as JSON text: the point `index` of the spec
/// (its TOML text and its file's name) in the mode asked, run by the harness's runner as
/// a local sweep runs it, with the GIL released. A Ray task calls this.
#[pyfunction]
#[pyo3(signature = (text, origin, quick, index, force))]
fn sweep_point(
    py: Python<'_>,
    text: &str,
    origin: &str,
    quick: bool,
    index: usize,
    force: bool,
) -> PyResult<String> {
    let spec = numaplace_study::parse_spec(text, origin)
        .map_err(|e| user_err(py, &UserError::new(e.to_string())))?;
    let expansion = numaplace_study::Expansion::new(&spec, quick)
        .map_err(|e| user_err(py, &UserError::new(e.to_string())))?;
    let runner = sweep_runner(1, force);
    let rec = py
        .detach(|| numaplace_study::sweep::point_record(&expansion, &runner, index))
        .ok_or_else(|| {
            user_err(
                py,
                &UserError::new(format!("{origin}: the sweep has no point {index}")),
            )
        })?;
    serde_json::to_string(&rec).map_err(internal)
}

/// A sweep's record as one flat row.
fn flat_record(r: &numaplace_study::store::Record) -> serde_json::Map<String, Value> {
    let mut row = serde_json::Map::new();
    row.insert("id".into(), r.id.clone().into());
    row.insert("index".into(), (r.index as u64).into());
    row.insert("seed".into(), r.seed.into());
    for (k, v) in &r.settings {
        row.insert(k.clone(), scalar(v));
    }
    row.insert(
        "error".into(),
        r.error.clone().map_or(Value::Null, Value::String),
    );
    fn walk(prefix: &str, v: &Value, row: &mut serde_json::Map<String, Value>) {
        match v {
            Value::Object(o) => {
                for (k, v) in o {
                    if prefix.is_empty() && k == "config" {
                        continue;
                    }
                    let path = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&path, v, row);
                }
            }
            Value::Array(_) | Value::Null => {}
            v => {
                row.entry(prefix.to_string()).or_insert_with(|| v.clone());
            }
        }
    }
    walk("", &r.result, &mut row);
    row
}

/// An axis value for a column: a scalar as it is, anything else as its JSON text.
fn scalar(v: &Value) -> Value {
    match v {
        Value::Array(_) | Value::Object(_) => Value::String(v.to_string()),
        v => v.clone(),
    }
}

/// Flat JSON rows as a record batch (columns the union of the rows' keys, in first-seen
/// order; integers and reals in one column read as reals), handed to pyarrow.
fn json_batch<'py>(
    py: Python<'py>,
    rows: &[serde_json::Map<String, Value>],
) -> PyResult<Bound<'py, PyAny>> {
    let mut names: Vec<String> = Vec::new();
    for r in rows {
        for k in r.keys() {
            if !names.contains(k) {
                names.push(k.clone());
            }
        }
    }
    let mut columns = Vec::new();
    for name in &names {
        let values: Vec<&Value> = rows
            .iter()
            .map(|r| r.get(name).unwrap_or(&Value::Null))
            .collect();
        columns.push((name.clone(), json_column(&values)));
    }
    let schema = Schema::new(
        columns
            .iter()
            .map(|(n, a)| Field::new(n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    );
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    let batch = RecordBatch::try_new(Arc::new(schema), arrays).map_err(internal)?;
    batch.to_pyarrow(py)
}

/// One column of JSON scalars: booleans, integers, reals (any real among integers), or
/// else text.
fn json_column(values: &[&Value]) -> ArrayRef {
    use arrow_array::{BooleanArray, Float64Array, Int64Array, UInt64Array};
    let present = || values.iter().filter(|v| !v.is_null());
    if present().all(|v| v.is_boolean()) {
        return Arc::new(BooleanArray::from(
            values.iter().map(|v| v.as_bool()).collect::<Vec<_>>(),
        ));
    }
    if present().all(|v| v.is_u64()) {
        return Arc::new(UInt64Array::from(
            values.iter().map(|v| v.as_u64()).collect::<Vec<_>>(),
        ));
    }
    if present().all(|v| v.is_i64()) {
        return Arc::new(Int64Array::from(
            values.iter().map(|v| v.as_i64()).collect::<Vec<_>>(),
        ));
    }
    if present().all(|v| v.is_number()) {
        return Arc::new(Float64Array::from(
            values.iter().map(|v| v.as_f64()).collect::<Vec<_>>(),
        ));
    }
    Arc::new(StringArray::from(
        values
            .iter()
            .map(|v| match v {
                Value::Null => None,
                Value::String(s) => Some(s.clone()),
                v => Some(v.to_string()),
            })
            .collect::<Vec<_>>(),
    ))
}

/// The native module.
#[pymodule]
fn _numaplace(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("LimitError", py.get_type::<LimitError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add_class::<Run>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(components, m)?)?;
    m.add_function(wrap_pyfunction!(machine, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_point, m)?)?;
    m.add_function(wrap_pyfunction!(search_space, m)?)?;
    m.add_function(wrap_pyfunction!(ci_half_width, m)?)?;
    m.add("METRICS", Metric::NAMES.to_vec())?;
    m.add("HOLDOUT", tune_sim::HOLDOUT)?;
    Ok(())
}
