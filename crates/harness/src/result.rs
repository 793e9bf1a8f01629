//! Run results as JSON: the statistics with the fully resolved configuration.

use numaplace_core::{Monitor, RunConfig, SimError, Stats};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The outcome of one run.
#[derive(Debug)]
pub struct RunOutput {
    /// The statistics.
    pub stats: Stats,
    /// The arrays on each page (empty without the per-page report).
    pub page_data: Vec<String>,
    /// The JSON record (deterministic: nothing in it depends on the host or the clock).
    pub json: Value,
}

/// The per-page report as JSON: each page's counters with `data`, the arrays on it.
fn pages_json(s: &Stats, data: &[String]) -> Value {
    Value::Array(s.pages.iter().map(|p| page_json(p, data)).collect())
}

/// A page's entry of the record.
fn page_json(p: &numaplace_core::stats::PageReport, data: &[String]) -> Value {
    let mut v = serde_json::to_value(p).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        let name = data.get(p.vpn as usize).cloned().unwrap_or_default();
        o.insert("data".into(), Value::String(name));
    }
    v
}

/// The per-page list, serialised a page at a time.
struct PagesJson<'a>(&'a Stats, &'a [String]);

impl serde::Serialize for PagesJson<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = ser.serialize_seq(Some(self.0.pages.len()))?;
        for p in &self.0.pages {
            seq.serialize_element(&page_json(p, self.1))?;
        }
        seq.end()
    }
}

/// A record without its `pages` and the per-page list beside it, serialised as the one
/// record they make, keys in the order a `serde_json` map keeps them (sorted): the same
/// bytes as the whole record built in memory, without holding a value per page.
struct RecordJson<'a> {
    rest: &'a serde_json::Map<String, Value>,
    pages: PagesJson<'a>,
}

impl serde::Serialize for RecordJson<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = ser.serialize_map(Some(self.rest.len() + 1))?;
        let mut pages_done = false;
        for (k, v) in self.rest {
            if !pages_done && k.as_str() > "pages" {
                map.serialize_entry("pages", &self.pages)?;
                pages_done = true;
            }
            map.serialize_entry(k, v)?;
        }
        if !pages_done {
            map.serialize_entry("pages", &self.pages)?;
        }
        map.end()
    }
}

/// The run's record without its per-page list (`pages`), for [`write_record`]: what
/// [`stats_json`] gives, less that list.
pub fn record_without_pages(cfg: &RunConfig, s: &Stats, data: &[String]) -> Value {
    let empty = Stats {
        pages: Vec::new(),
        ..Stats::default()
    };
    let mut v = stats_json_with(cfg, s, data, &empty);
    if let Some(o) = v.as_object_mut() {
        o.remove("pages");
    }
    v
}

/// Writes the record `rest` (from [`record_without_pages`], perhaps amended) with the
/// per-page list of `s` put back, as pretty JSON, a page at a time: byte for byte what
/// the whole record built by [`stats_json`] prints, in a fraction of the memory.
pub fn write_record(
    w: impl std::io::Write,
    rest: &Value,
    s: &Stats,
    data: &[String],
) -> serde_json::Result<()> {
    let empty = serde_json::Map::new();
    let rec = RecordJson {
        rest: rest.as_object().unwrap_or(&empty),
        pages: PagesJson(s, data),
    };
    let mut ser = serde_json::Serializer::pretty(w);
    serde::Serialize::serialize(&rec, &mut ser)
}

/// The record `rest` with the per-page list of `s` put back, as `numaplace run --json`
/// writes it to a file or standard output: [`write_record`]'s text and a final newline.
pub fn record_text(rest: &Value, s: &Stats, data: &[String]) -> serde_json::Result<String> {
    let mut bytes = Vec::new();
    write_record(&mut bytes, rest, s, data)?;
    bytes.push(b'\n');
    // serde_json writes UTF-8 only.
    String::from_utf8(bytes).map_err(|e| serde::ser::Error::custom(e.to_string()))
}

/// Pages counted by the arrays they hold, for the pages that satisfy `pred`.
fn count_by_data(
    s: &Stats,
    data: &[String],
    pred: impl Fn(&numaplace_core::stats::PageReport) -> bool,
) -> Value {
    let mut by: BTreeMap<String, u64> = BTreeMap::new();
    for p in s.pages.iter().filter(|p| pred(p)) {
        let name = data.get(p.vpn as usize).cloned().unwrap_or_default();
        *by.entry(name).or_default() += 1;
    }
    json!(by)
}

/// The average of the threads' completion times (ns; 0 without threads): Holliday
/// reports it rather than the makespan.
pub fn mean_completion_ns(s: &Stats) -> f64 {
    if s.threads.is_empty() {
        return 0.0;
    }
    s.threads
        .iter()
        .map(|t| t.completion_ns as f64)
        .sum::<f64>()
        / s.threads.len() as f64
}

/// The average turnaround of a multiprogrammed run's measured programs (Nikolopoulos et
/// al. 2002 report it per workload): every program but the `background` load, which is
/// the noise beside them rather than a job measured. `None` for a run of one program or
/// of background load alone.
pub fn mean_turnaround_ns(s: &Stats) -> Option<f64> {
    if s.programs.len() < 2 {
        return None;
    }
    let measured: Vec<u64> = s
        .programs
        .iter()
        .filter(|p| p.name != "background")
        .map(|p| p.turnaround_ns)
        .collect();
    if measured.is_empty() {
        return None;
    }
    Some(measured.iter().map(|&t| t as f64).sum::<f64>() / measured.len() as f64)
}

/// The JSON record of a run; `data` names the arrays on each page (see
/// [`RunConfig::page_data`]).
pub fn stats_json(cfg: &RunConfig, s: &Stats, data: &[String]) -> Value {
    stats_json_with(cfg, s, data, s)
}

/// [`stats_json`] with the per-page list taken from `pages` (the summaries of the
/// per-page report from `s`).
fn stats_json_with(cfg: &RunConfig, s: &Stats, data: &[String], pages: &Stats) -> Value {
    let e = &s.events;
    let mean_completion_ns = mean_completion_ns(s);
    let mut v = json!({
        "makespan_ns": s.makespan_ns,
        "mean_completion_ns": mean_completion_ns,
        "refs": s.refs,
        "migrations_per_page": if s.npages == 0 { 0.0 } else { e.migrations as f64 / s.npages as f64 },
        "daemon_busy_ns": s.daemon_busy_ns,
        "daemon_passes": s.daemon_passes,
        "ops": s.ops,
        "programs": s.programs,
        "threads": s.threads,
        "series": s.series,
        "pages": pages_json(pages, data),
        "config": cfg,
    });
    if let Some(o) = v.as_object_mut() {
        // Every event counter is a top-level key, as declared in `EventCounts`.
        for c in e.counters() {
            o.insert(c.name.into(), json!(c.value));
        }
        // The policy's and programs' own counts (most keep none: their records are unchanged).
        for c in &s.own_counters {
            o.insert(c.name.into(), json!(c.value));
        }
    }
    if let Some(t) = mean_turnaround_ns(s) {
        // Only runs of several programs carry it, so one-program records stay as they were.
        if let Some(o) = v.as_object_mut() {
            o.insert("mean_turnaround_ns".into(), json!(t));
        }
    }
    if let Some(c) = &s.cache {
        // Only runs on a machine with processor caches carry it.
        if let Some(o) = v.as_object_mut() {
            o.insert("cache".into(), json!(c));
        }
    }
    if s.partial {
        // Only a stopped run carries the mark, so complete records stay as they were.
        if let Some(o) = v.as_object_mut() {
            o.insert("partial".into(), json!(true));
        }
    }
    if cfg.budget_ns > 0 {
        // A run with a simulated-time budget says whether it finished within it (only
        // those runs: the records of others stay as they were).
        if let Some(o) = v.as_object_mut() {
            o.insert("finished".into(), json!(!s.budget_exceeded));
        }
    }
    // Summaries of the per-page report, present only when there is one (so a claim over
    // them fails loudly instead of reading zeros).
    if cfg.report.per_page {
        if let Some(o) = v.as_object_mut() {
            let frozen = s.pages.iter().filter(|p| p.freezes > 0).count();
            let at_end = s.pages.iter().filter(|p| p.frozen_at_end).count();
            let contended: u64 = s.pages.iter().map(|p| p.contended_faults).sum();
            o.insert("pages_frozen".into(), json!(frozen));
            o.insert("pages_frozen_at_end".into(), json!(at_end));
            o.insert(
                "frozen_by_data".into(),
                count_by_data(s, data, |p| p.freezes > 0),
            );
            o.insert(
                "frozen_at_end_by_data".into(),
                count_by_data(s, data, |p| p.frozen_at_end),
            );
            o.insert("contended_faults".into(), json!(contended));
        }
    }
    v
}

/// Runs `cfg` and returns its statistics and JSON record.
pub fn run_to_json(cfg: &RunConfig) -> Result<RunOutput, SimError> {
    run_to_json_monitored(cfg, None)
}

/// Runs `cfg` with a monitor called about every `every` operations or events (progress,
/// and a stop that returns the statistics so far, marked partial).
pub fn run_to_json_monitored(
    cfg: &RunConfig,
    monitor: Option<(Box<dyn Monitor>, u64)>,
) -> Result<RunOutput, SimError> {
    let (stats, data) = run_monitored(cfg, monitor)?;
    let json = stats_json(cfg, &stats, &data);
    Ok(RunOutput {
        stats,
        json,
        page_data: data,
    })
}

/// Runs `cfg` like [`run_to_json_monitored`] without building its JSON record (which,
/// with the per-page report of a large address space, takes far more memory than the
/// run): the statistics and the arrays on each page (empty without the per-page report).
pub fn run_monitored(
    cfg: &RunConfig,
    monitor: Option<(Box<dyn Monitor>, u64)>,
) -> Result<(numaplace_core::Stats, Vec<String>), SimError> {
    let mut engine = cfg.engine()?;
    if let Some((m, every)) = monitor {
        engine.set_monitor(m, every);
    }
    let stats = engine.run()?;
    let data = if cfg.report.per_page {
        cfg.page_data()?
    } else {
        Vec::new()
    };
    Ok((stats, data))
}
