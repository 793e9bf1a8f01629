//! Run results as JSON: the statistics with the fully resolved configuration.

use numaplace_core::memory::PageNames;
use numaplace_core::{Monitor, RunConfig, SimError, Stats};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The outcome of one run.
#[derive(Debug)]
pub struct RunOutput {
    /// The statistics.
    pub stats: Stats,
    /// The arrays on each page (empty without the per-page report).
    pub page_data: PageNames,
    /// The JSON record (deterministic: nothing in it depends on the host or the clock).
    pub json: Value,
}

/// The per-page report as JSON: each page's counters with `data`, the arrays on it.
pub(crate) fn pages_json(s: &Stats, data: &PageNames) -> Value {
    Value::Array(s.pages.iter().map(|p| page_json(p, data)).collect())
}

/// A page's entry of the record.
fn page_json(p: &numaplace_core::stats::PageReport, data: &PageNames) -> Value {
    let mut v = serde_json::to_value(p).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        let name = data.get(p.vpn as usize).unwrap_or("").to_string();
        o.insert("data".into(), Value::String(name));
    }
    v
}

/// The per-page list, serialised a page at a time.
struct PagesJson<'a>(&'a Stats, &'a PageNames);

impl serde::Serialize for PagesJson<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = ser.serialize_seq(Some(self.0.pages.len()))?;
        for p in &self.0.pages {
            let data = self.1.get(p.vpn as usize).unwrap_or("");
            seq.serialize_element(&PageEntry { p, data })?;
        }
        seq.end()
    }
}

/// A page's entry of the record written in place: the members [`page_json`] gives, in the
/// order its sorted map writes them (the same bytes, without a map per page).
struct PageEntry<'a> {
    p: &'a numaplace_core::stats::PageReport,
    data: &'a str,
}

impl serde::Serialize for PageEntry<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let p = self.p;
        let mut map = ser.serialize_map(Some(15))?;
        map.serialize_entry("coherency_faults", &p.coherency_faults)?;
        map.serialize_entry("contended_faults", &p.contended_faults)?;
        map.serialize_entry("copies", &p.copies)?;
        map.serialize_entry("data", self.data)?;
        map.serialize_entry("fault_ns", &p.fault_ns)?;
        map.serialize_entry("fault_wait_ns", &p.fault_wait_ns)?;
        map.serialize_entry("faults", &p.faults)?;
        map.serialize_entry("freezes", &p.freezes)?;
        map.serialize_entry("frozen_at_end", &p.frozen_at_end)?;
        map.serialize_entry("frozen_ns", &p.frozen_ns)?;
        map.serialize_entry("home", &p.home)?;
        map.serialize_entry("migrations", &p.migrations)?;
        map.serialize_entry("refs", &Refs(&p.refs))?;
        map.serialize_entry("replications", &p.replications)?;
        map.serialize_entry("vpn", &p.vpn)?;
        map.end()
    }
}

/// A page's reference counts, members sorted as a map of them writes them.
struct Refs<'a>(&'a numaplace_core::stats::RefCounts);

impl serde::Serialize for Refs<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let r = self.0;
        let mut map = ser.serialize_map(Some(4))?;
        map.serialize_entry("cached", &r.cached)?;
        map.serialize_entry("local", &r.local)?;
        map.serialize_entry("remote", &r.remote)?;
        map.serialize_entry("total", &r.total)?;
        map.end()
    }
}

/// A list serialised an element at a time, each element as its JSON value (so its keys
/// come sorted, as in a list built whole as values).
pub struct ValueList<'a, T>(pub &'a [T]);

impl<T: serde::Serialize> serde::Serialize for ValueList<'_, T> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = ser.serialize_seq(Some(self.0.len()))?;
        for e in self.0 {
            seq.serialize_element(&serde_json::to_value(e).map_err(S::Error::custom)?)?;
        }
        seq.end()
    }
}

/// A JSON object whose members are `rest`'s and one or two more serialised in place
/// (a per-page list a page at a time, say), keys in the order a `serde_json` map keeps
/// them (sorted): the same bytes as the whole object built in memory, without holding a
/// value per element.
pub struct Spliced<'a, A, B> {
    /// The members held as values.
    pub rest: &'a serde_json::Map<String, Value>,
    /// A member serialised in place.
    pub first: (&'a str, A),
    /// Another, if any.
    pub second: Option<(&'a str, B)>,
}

impl<A: serde::Serialize, B: serde::Serialize> serde::Serialize for Spliced<'_, A, B> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let extra = 1 + self.second.is_some() as usize;
        let mut map = ser.serialize_map(Some(self.rest.len() + extra))?;
        let (mut first, mut second) = (Some(&self.first), self.second.as_ref());
        for (k, v) in self.rest {
            // The spliced members before `k`, in key order.
            loop {
                let f = first.filter(|(fk, _)| *fk < k.as_str());
                let s = second.filter(|(sk, _)| *sk < k.as_str());
                match (f, s) {
                    (Some((fk, fv)), Some((sk, _))) if fk <= sk => {
                        map.serialize_entry(fk, fv)?;
                        first = None;
                    }
                    (_, Some((sk, sv))) => {
                        map.serialize_entry(sk, sv)?;
                        second = None;
                    }
                    (Some((fk, fv)), None) => {
                        map.serialize_entry(fk, fv)?;
                        first = None;
                    }
                    (None, None) => break,
                }
            }
            map.serialize_entry(k, v)?;
        }
        // Those after every held member.
        match (first, second) {
            (Some((fk, fv)), Some((sk, sv))) if sk < fk => {
                map.serialize_entry(sk, sv)?;
                map.serialize_entry(fk, fv)?;
            }
            (f, s) => {
                if let Some((fk, fv)) = f {
                    map.serialize_entry(fk, fv)?;
                }
                if let Some((sk, sv)) = s {
                    map.serialize_entry(sk, sv)?;
                }
            }
        }
        map.end()
    }
}

/// The run's record without its per-page list (`pages`), for [`write_record`]: what
/// [`stats_json`] gives, less that list.
pub fn record_without_pages(cfg: &RunConfig, s: &Stats, data: &PageNames) -> Value {
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
    data: &PageNames,
) -> serde_json::Result<()> {
    write_record_with::<()>(w, rest, s, data, None)
}

/// [`write_record`] with one more member serialised in place (`extra`: its key and
/// value), such as the oracle's report with its own per-page list.
pub fn write_record_with<T: serde::Serialize>(
    w: impl std::io::Write,
    rest: &Value,
    s: &Stats,
    data: &PageNames,
    extra: Option<(&str, &T)>,
) -> serde_json::Result<()> {
    let empty = serde_json::Map::new();
    let rec = Spliced {
        rest: rest.as_object().unwrap_or(&empty),
        first: ("pages", PagesJson(s, data)),
        second: extra,
    };
    let mut ser = serde_json::Serializer::pretty(w);
    serde::Serialize::serialize(&rec, &mut ser)
}

/// The record `rest` with the per-page list of `s` put back, as `numaplace run --json`
/// writes it to a file or standard output: [`write_record`]'s text and a final newline.
pub fn record_text(rest: &Value, s: &Stats, data: &PageNames) -> serde_json::Result<String> {
    let mut bytes = Vec::new();
    write_record(&mut bytes, rest, s, data)?;
    bytes.push(b'\n');
    // serde_json writes UTF-8 only.
    String::from_utf8(bytes).map_err(|e| serde::ser::Error::custom(e.to_string()))
}

/// Pages counted by the arrays they hold, for the pages that satisfy `pred`.
fn count_by_data(
    s: &Stats,
    data: &PageNames,
    pred: impl Fn(&numaplace_core::stats::PageReport) -> bool,
) -> Value {
    let mut by: BTreeMap<String, u64> = BTreeMap::new();
    for p in s.pages.iter().filter(|p| pred(p)) {
        let name = data.get(p.vpn as usize).unwrap_or("").to_string();
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
pub fn stats_json(cfg: &RunConfig, s: &Stats, data: &PageNames) -> Value {
    stats_json_with(cfg, s, data, s)
}

/// [`stats_json`] with the per-page list taken from `pages` (the summaries of the
/// per-page report from `s`).
fn stats_json_with(cfg: &RunConfig, s: &Stats, data: &PageNames, pages: &Stats) -> Value {
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
) -> Result<(numaplace_core::Stats, PageNames), SimError> {
    let mut engine = cfg.engine()?;
    if let Some((m, every)) = monitor {
        engine.set_monitor(m, every);
    }
    let data = if cfg.report.per_page {
        engine.page_data()
    } else {
        PageNames::default()
    };
    let stats = engine.run()?;
    Ok((stats, data))
}

#[cfg(test)]
mod tests {
    use super::{page_json, PageEntry, Spliced};
    use numaplace_core::memory::PageNames;
    use numaplace_core::stats::{PageReport, RefCounts};

    #[test]
    fn a_page_entry_written_in_place_is_the_bytes_of_its_value() {
        // Every member set to a distinct value, the largest ones included.
        let p = PageReport {
            vpn: 7,
            refs: RefCounts {
                local: 1,
                remote: 2,
                cached: 3,
                total: 6,
            },
            faults: 4,
            fault_ns: 5,
            contended_faults: 6,
            fault_wait_ns: u64::MAX,
            migrations: 8,
            replications: 9,
            coherency_faults: 10,
            freezes: 11,
            frozen_ns: 12,
            frozen_at_end: true,
            frozen_since: Some(13),
            home: 14,
            copies: 15,
        };
        let names = PageNames::default();
        let value = page_json(&p, &names);
        for data in ["", "u+rhs \"quoted\""] {
            let mut whole = value.clone();
            whole["data"] = serde_json::Value::String(data.into());
            let entry = PageEntry { p: &p, data };
            assert_eq!(
                serde_json::to_string(&entry).unwrap(),
                serde_json::to_string(&whole).unwrap()
            );
            assert_eq!(
                serde_json::to_string_pretty(&entry).unwrap(),
                serde_json::to_string_pretty(&whole).unwrap()
            );
        }
    }
    use serde_json::{json, Value};

    /// `members` spliced into `rest` and written, against the whole object built in memory.
    fn spliced_and_whole(rest: Value, first: (&str, Value), second: Option<(&str, Value)>) {
        let mut whole = rest.clone();
        let o = whole.as_object_mut().unwrap();
        o.insert(first.0.into(), first.1.clone());
        if let Some((k, v)) = &second {
            o.insert((*k).into(), v.clone());
        }
        let s = Spliced {
            rest: rest.as_object().unwrap(),
            first: (first.0, &first.1),
            second: second.as_ref().map(|(k, v)| (*k, v)),
        };
        assert_eq!(
            serde_json::to_string_pretty(&s).unwrap(),
            serde_json::to_string_pretty(&whole).unwrap()
        );
    }

    #[test]
    fn spliced_members_take_their_places_in_key_order_wherever_they_fall() {
        let rest = json!({"b": 1, "d": [2, 3], "f": {"x": 4}});
        for (k1, k2) in [
            ("a", "c"),
            ("c", "a"),
            ("c", "e"),
            ("e", "g"),
            ("g", "e"),
            ("a", "z"),
        ] {
            spliced_and_whole(
                rest.clone(),
                (k1, json!([k1])),
                Some((k2, json!({"k": k2}))),
            );
        }
        for k in ["a", "c", "z"] {
            spliced_and_whole(rest.clone(), (k, json!(7)), None);
        }
        spliced_and_whole(json!({}), ("m", json!(1)), Some(("a", json!(2))));
    }
}
