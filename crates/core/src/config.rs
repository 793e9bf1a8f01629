//! The configuration of one run: machine, workload, policy, scheduler, seed, reporting.

use crate::engine::{Engine, EngineOptions, SimError};
use crate::error::ConfigError;
use crate::estimate::{Estimate, Part};
use crate::fields::Fields;
use crate::history::RefHistory;
use crate::machine::{Machine, MachineConfig};
use crate::memory::Memory;
use crate::policy::PolicyConfig;
use crate::sched::SchedulerConfig;
use crate::stats::{PageReport, SeriesPoint, Stats};
use crate::types::Ns;
use crate::workload::WorkloadConfig;
use serde::{Deserialize, Serialize};

/// What to report besides the totals.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct ReportConfig {
    /// Keep the per-page report. Default true.
    pub per_page: bool,
    /// Record a series point every this many ns besides iteration ends; 0 = only at
    /// iteration ends. Default 0.
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub series_interval_ns: u64,
}

impl Default for ReportConfig {
    fn default() -> Self {
        ReportConfig {
            per_page: true,
            series_interval_ns: 0,
        }
    }
}

/// Default seed of a run.
pub const DEFAULT_SEED: u64 = 1;

fn default_seed() -> u64 {
    DEFAULT_SEED
}

/// Seeds cover all of `u64`, but TOML integers stop at 2^63 - 1: a seed is read from an
/// integer or a decimal string, and written as an integer when it fits, else as a string.
pub mod seed_format {
    use serde::de::{self, Visitor};
    use serde::{Deserializer, Serializer};
    use std::fmt;

    /// Writes `seed` as an integer when it fits in an `i64`, else as a decimal string.
    pub fn serialize<S: Serializer>(seed: &u64, s: S) -> Result<S::Ok, S::Error> {
        match i64::try_from(*seed) {
            Ok(v) => s.serialize_i64(v),
            Err(_) => s.serialize_str(&seed.to_string()),
        }
    }

    /// Reads a seed from a non-negative integer or a decimal string.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        struct SeedVisitor;
        impl Visitor<'_> for SeedVisitor {
            type Value = u64;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a seed: an integer 0..=18446744073709551615, or one in a string")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
                Ok(v)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
                u64::try_from(v).map_err(|_| E::custom(format!("seed {v} is negative")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
                v.trim().parse().map_err(|_| {
                    E::custom(format!(
                        "seed `{v}` is not an integer 0..=18446744073709551615"
                    ))
                })
            }
        }
        d.deserialize_any(SeedVisitor)
    }
}

/// A fully resolved run configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// The machine.
    #[field(nested)]
    pub machine: MachineConfig,
    /// The workload.
    #[serde(default)]
    pub workload: WorkloadConfig,
    /// The placement policy.
    #[serde(default)]
    pub policy: PolicyConfig,
    /// The scheduler.
    #[serde(default)]
    pub scheduler: SchedulerConfig,
    /// Seed of the run's random number generator, any 64-bit value. Default 1. Seeds
    /// above 2^63 - 1 (beyond a TOML integer) are written as strings: `seed = "18446744073709551615"`.
    #[serde(default = "default_seed", with = "seed_format")]
    pub seed: u64,
    /// Reporting options.
    #[field(nested)]
    #[serde(default)]
    pub report: ReportConfig,
}

impl RunConfig {
    /// Builds the engine for this configuration (validating everything).
    pub fn engine(&self) -> Result<Engine, SimError> {
        let machine = Machine::new(self.machine.clone())?;
        let programs = self.workload.build(&machine)?;
        let policy = self.policy.build(&machine)?;
        let scheduler = self.scheduler.build();
        Engine::new(
            machine,
            programs,
            policy,
            scheduler,
            EngineOptions {
                seed: self.seed,
                per_page: self.report.per_page,
                series_interval: Some(Ns(self.report.series_interval_ns)),
            },
        )
    }

    /// Validates the whole configuration and estimates what the run will allocate and
    /// simulate, without allocating anything sized by the configuration (the machine's
    /// node-pair tables and a policy object are built; both are small).
    pub fn estimate(&self) -> Result<Estimate, ConfigError> {
        self.report.check_ranges("report")?;
        let machine = Machine::new(self.machine.clone())?;
        let fp = self.workload.footprint(&machine)?;
        let nodes = machine.nodes() as u64;
        let frames = machine.config.frames_per_node as u64 * nodes;
        if fp.pages > frames {
            return Err(ConfigError::new(
                fp.size_field,
                format!(
                    "the workload needs {} pages but the machine has only {frames} frames \
                     ({nodes} nodes x machine.frames_per_node {})",
                    fp.pages, machine.config.frames_per_node
                ),
            ));
        }
        let policy = self.policy.build(&machine)?;
        self.scheduler.check(&machine, fp.threads)?;
        let own = policy
            .daemons(&machine)
            .iter()
            .filter(|d| d.placement == crate::policy::DaemonPlacement::OwnProcessor)
            .count();
        if own > 0 && fp.threads as usize + own > machine.procs() {
            return Err(ConfigError::new(
                "workload.threads",
                format!(
                    "{} threads and {own} daemon(s) of policy `{}` that need a processor of \
                     their own do not fit on {} processors",
                    fp.threads,
                    policy.name(),
                    machine.procs()
                ),
            ));
        }
        let pages = fp.pages;
        let size = fp.size_field.to_string();
        let part = |what: &'static str, field: &str, bytes: u64| Part {
            what,
            field: field.to_string(),
            bytes,
        };
        let mut parts = vec![
            part(
                "page states and per-node mappings",
                &size,
                Memory::bytes_needed(pages, nodes, policy.acquires_ptes()),
            ),
            part(
                "reference history",
                &size,
                RefHistory::bytes_needed(policy.history(), pages, nodes),
            ),
            part(
                "fault handlers and policy per-page work",
                &size,
                pages.saturating_mul(24),
            ),
            part(
                "policy's own per-page state",
                &size,
                pages.saturating_mul(policy.state_bytes_per_page()),
            ),
            part("workload tables", &size, fp.bytes),
            part(
                "threads and their generated operations",
                &size,
                (fp.threads as u64).saturating_mul(
                    crate::engine::bytes_per_thread().saturating_add(
                        fp.buffered_ops
                            .saturating_mul(std::mem::size_of::<crate::workload::Op>() as u64),
                    ),
                ),
            ),
            // Vectors grow by doubling: twice the points' bytes bounds the capacity.
            part(
                "series points at iteration ends",
                fp.ops_field,
                fp.iterations
                    .saturating_mul(2 * std::mem::size_of::<SeriesPoint>() as u64),
            ),
        ];
        if self.report.per_page {
            parts.push(part(
                "per-page report",
                "report.per_page",
                pages.saturating_mul(std::mem::size_of::<PageReport>() as u64),
            ));
        }
        if self.report.series_interval_ns > 0 {
            parts.push(part(
                "series points at fixed intervals",
                "report.series_interval_ns",
                crate::estimate::MAX_INTERVAL_POINTS
                    .saturating_mul(2 * std::mem::size_of::<SeriesPoint>() as u64),
            ));
        }
        Ok(Estimate::from_parts(&fp, parts))
    }

    /// For every page of the run (numbered as the engine numbers them: the programs'
    /// address spaces one after another), the names of the arrays it holds, joined by
    /// `+` (a page shared by two data structures shows both: PLATINUM's §4.2 diagnosis).
    pub fn page_data(&self) -> Result<Vec<String>, SimError> {
        let machine = Machine::new(self.machine.clone())?;
        let ps = machine.page_size();
        let mut names = Vec::new();
        for p in self.workload.build(&machine)? {
            let layout = p.layout();
            let base = names.len();
            names.resize(base + layout.pages(ps) as usize, String::new());
            for a in layout.arrays() {
                if a.span() == 0 {
                    continue;
                }
                let first = a.base / ps;
                let last = (a.base + a.span() - 1) / ps;
                for v in first..=last {
                    let slot = &mut names[base + v as usize];
                    if !slot.is_empty() {
                        slot.push('+');
                    }
                    slot.push_str(&a.name);
                }
            }
        }
        Ok(names)
    }

    /// Runs the simulation.
    pub fn run(&self) -> Result<Stats, SimError> {
        self.engine()?.run()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Seeded {
        #[serde(with = "seed_format")]
        seed: u64,
    }

    #[test]
    fn seeds_beyond_i64_are_written_as_strings_and_read_back() {
        let text = serde_json::to_string(&Seeded { seed: u64::MAX }).unwrap();
        assert_eq!(text, r#"{"seed":"18446744073709551615"}"#);
        let back: Seeded = serde_json::from_str(&text).unwrap();
        assert_eq!(back.seed, u64::MAX);
    }

    #[test]
    fn seeds_within_i64_stay_integers() {
        let text = serde_json::to_string(&Seeded { seed: 7 }).unwrap();
        assert_eq!(text, r#"{"seed":7}"#);
    }

    #[test]
    fn negative_seeds_are_refused() {
        assert!(serde_json::from_str::<Seeded>(r#"{"seed":-1}"#).is_err());
    }
}
