//! Slowdown of each program of a multiprogrammed run against its dedicated run: the
//! program alone on the same machine, under the same policy, started at time 0 on
//! dedicated processors (Nikolopoulos et al. 2002 report slowdowns this way).

use numaplace_core::component::SchedulerConfig;
use numaplace_core::config::ProgramConfig;
use numaplace_core::{RunConfig, SimError, Stats};
use serde_json::{json, Value};

/// Each program's dedicated run and how much longer it took in the shared run.
#[derive(Clone, Debug, PartialEq)]
pub struct Slowdown {
    /// The program's name.
    pub name: String,
    /// Its turnaround alone on dedicated processors (ns).
    pub dedicated_ns: u64,
    /// Its turnaround in the run (ns).
    pub shared_ns: u64,
}

impl Slowdown {
    /// Shared turnaround over dedicated turnaround.
    pub fn ratio(&self) -> f64 {
        self.shared_ns as f64 / self.dedicated_ns.max(1) as f64
    }
}

/// The run of program `p` of `cfg` alone: same machine, policy, seed and report
/// settings, the default (dedicated) scheduler, starting at 0.
pub fn dedicated_config(cfg: &RunConfig, p: &ProgramConfig) -> RunConfig {
    RunConfig {
        workload: Some(p.workload.clone()),
        program: Vec::new(),
        scheduler: SchedulerConfig::default(),
        ..cfg.clone()
    }
}

/// Runs every program of `cfg` alone and compares with `shared`, the statistics of
/// `cfg`'s own run.
pub fn slowdowns(cfg: &RunConfig, shared: &Stats) -> Result<Vec<Slowdown>, SimError> {
    let programs = cfg.programs()?;
    programs
        .iter()
        .zip(&shared.programs)
        .map(|(p, s)| {
            let alone = dedicated_config(cfg, p).run()?;
            Ok(Slowdown {
                name: s.name.clone(),
                dedicated_ns: alone.makespan_ns,
                shared_ns: s.turnaround_ns,
            })
        })
        .collect()
}

/// Adds `dedicated_turnaround_ns` and `slowdown` to each program of a run's record.
pub fn add_to_record(record: &mut Value, slowdowns: &[Slowdown]) {
    if let Some(programs) = record.get_mut("programs").and_then(Value::as_array_mut) {
        for (p, s) in programs.iter_mut().zip(slowdowns) {
            if let Some(o) = p.as_object_mut() {
                o.insert("dedicated_turnaround_ns".into(), json!(s.dedicated_ns));
                o.insert("slowdown".into(), json!(s.ratio()));
            }
        }
    }
}

/// The slowdowns as a text table.
pub fn text(slowdowns: &[Slowdown]) -> String {
    let mut o = String::from("  slowdown against each program alone on dedicated processors:\n");
    o.push_str(&format!(
        "    {:>4} {:<16} {:>14} {:>14} {:>9}\n",
        "id", "name", "dedicated", "in this run", "slowdown"
    ));
    for (i, s) in slowdowns.iter().enumerate() {
        o.push_str(&format!(
            "    {:>4} {:<16} {:>12.6} s {:>12.6} s {:>9.3}\n",
            i,
            s.name,
            s.dedicated_ns as f64 * 1e-9,
            s.shared_ns as f64 * 1e-9,
            s.ratio()
        ));
    }
    o
}
