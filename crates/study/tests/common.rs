//! A deterministic fake runner shared by the integration tests.
#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use numaplace_study::sweep::settings_json;
use numaplace_study::value::table_to_json;
use numaplace_study::{Record, RunPoint, Runner};
use serde_json::{json, Value};

/// Result = a function of the settings and seed; counts calls and
/// concurrency; can raise a stop flag after `stop_after` calls.
#[derive(Default)]
pub struct FakeRunner {
    pub calls: Mutex<HashMap<String, usize>>,
    pub threads: Mutex<HashSet<std::thread::ThreadId>>,
    pub in_flight: AtomicUsize,
    pub max_in_flight: AtomicUsize,
    pub sleep_ms: u64,
    pub stop_after: Option<(usize, Arc<AtomicBool>)>,
    pub started: AtomicUsize,
    pub fail_index: Option<usize>,
    /// `check` rejects points with this setting (field, value).
    pub reject: Option<(String, toml::Value)>,
    /// Calls of `check`.
    pub checks: AtomicUsize,
}

impl FakeRunner {
    pub fn new(sleep_ms: u64) -> Self {
        FakeRunner {
            sleep_ms,
            ..Default::default()
        }
    }

    pub fn total_calls(&self) -> usize {
        self.calls.lock().unwrap().values().sum()
    }

    pub fn max_calls_per_run(&self) -> usize {
        self.calls
            .lock()
            .unwrap()
            .values()
            .copied()
            .max()
            .unwrap_or(0)
    }
}

/// `point`'s record as a sweep writes it, with nothing in its result yet but the
/// configuration the spec gave (the claim tests shape a paper's result into it).
pub fn unrun_record(point: &RunPoint) -> Record {
    Record {
        id: point.id.clone(),
        index: point.index,
        seed: point.seed,
        settings: settings_json(point),
        result: json!({ "config": table_to_json(&point.config) }),
        error: None,
        spec_config: Value::Null,
    }
}

/// The fake "makespan": depends on every setting and the seed.
pub fn fake_makespan(point: &RunPoint) -> f64 {
    let mut x = 1000.0 + point.seed as f64;
    for (k, v) in &point.settings {
        let num = match v {
            toml::Value::Integer(i) => *i as f64,
            toml::Value::Float(f) => *f,
            toml::Value::String(s) => s.len() as f64 * 100.0,
            _ => 0.0,
        };
        x += num * (k.len() as f64);
    }
    x
}

impl Runner for FakeRunner {
    fn check(&self, point: &RunPoint) -> anyhow::Result<()> {
        self.checks.fetch_add(1, Ordering::SeqCst);
        if let Some((field, value)) = &self.reject {
            if point.settings.iter().any(|(k, v)| k == field && v == value) {
                anyhow::bail!("{}: unknown {field} {value}", point.id);
            }
        }
        Ok(())
    }

    fn run(&self, point: &RunPoint) -> anyhow::Result<Value> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        self.threads
            .lock()
            .unwrap()
            .insert(std::thread::current().id());
        *self
            .calls
            .lock()
            .unwrap()
            .entry(point.id.clone())
            .or_default() += 1;
        let n = self.started.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some((k, flag)) = &self.stop_after {
            if n >= *k {
                flag.store(true, Ordering::SeqCst);
            }
        }
        std::thread::sleep(Duration::from_millis(self.sleep_ms));
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        if self.fail_index == Some(point.index) {
            anyhow::bail!("deliberate failure");
        }
        let m = fake_makespan(point);
        Ok(json!({
            "makespan_ns": m,
            "refs": {"local": 1, "remote": 2, "cached": 0, "total": 3},
            "series": (0..4).map(|i| json!({"iteration": i, "time_ns": i * 10, "remote": m as i64 % 7 + i})).collect::<Vec<_>>(),
            "config": point.config,
        }))
    }
}

pub const SPEC_3X5: &str = r#"
name = "three-axes"
trials = 5
seed_base = 1
[base]
machine.preset = "test"
workload.kind = "jacobi"
[[axis]]
field = "machine.nodes"
values = [2, 4]
[[axis]]
field = "machine.costs.remote_read_ns"
range = { from = 1000, to = 3000, step = 1000 }
[[axis]]
field = "policy.kind"
values = ["static", "dynamic"]
[output]
metric = "makespan_ns"
group_by = ["policy.kind", "machine.nodes"]
"#;

/// Each record twice, the copy a second trial that agrees with the first: a claim's
/// interval needs two runs a side, and runs that agree give an exact one.
pub fn two_trials(recs: Vec<Record>) -> Vec<Record> {
    recs.into_iter()
        .flat_map(|r| [r.clone(), r])
        .enumerate()
        .map(|(i, mut r)| {
            r.id = format!("r{i:06}");
            r.index = i;
            r
        })
        .collect()
}
