//! The configuration of one run: machine, workload, policy, scheduler, seed, reporting.

use crate::component::WorkloadConfig;
use crate::component::{PolicyConfig, SchedulerConfig};
use crate::engine::{Engine, EngineOptions, Launch, SimError};
use crate::error::ConfigError;
use crate::estimate::Footprint;
use crate::estimate::{Estimate, Part};
use crate::fields::Fields;
use crate::history::RefHistory;
use crate::machine::{Machine, MachineConfig};
use crate::memory::Memory;
use crate::stats::{PageReport, SeriesPoint, Stats};
use crate::types::Ns;
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
    /// At each iteration end, also the references to each of the program's arrays
    /// since its previous one (`series[].arrays`: remote-access rate per iteration per
    /// array). Needs `per_page`. Default false (and then left out of records, which stay
    /// as they were).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub series_by_array: bool,
}

impl Default for ReportConfig {
    fn default() -> Self {
        ReportConfig {
            per_page: true,
            series_interval_ns: 0,
            series_by_array: false,
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

/// One program of a multiprogrammed run (a `[[program]]` table).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[serde(deny_unknown_fields)]
pub struct ProgramConfig {
    /// The workload it runs; its own `threads` field gives the program's thread count.
    pub workload: WorkloadConfig,
    /// When the program starts: its threads are created at this time (ns). Default 0.
    #[serde(default)]
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub start_ns: u64,
}

/// A fully resolved run configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// The machine.
    #[field(nested)]
    pub machine: MachineConfig,
    /// The workload of a run of one program (absent when `program` lists the programs;
    /// absent from both: the default workload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadConfig>,
    /// The programs of a multiprogrammed run, in order (`[[program]]` tables); their
    /// threads are numbered one program after another and their address spaces laid out
    /// one after another. Empty: the run is the one `workload`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub program: Vec<ProgramConfig>,
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
    /// A simulated-time budget (ns): a run still going then is stopped and reported as not
    /// finished (its record says `finished = false`, its statistics are partial), so a
    /// configuration that never completes (pages bouncing for ever) ends with that result
    /// instead of running on. 0: none. Default 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub budget_ns: u64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

/// The dotted path of program `i`'s field `field` (written as `workload...`): itself in
/// a run of one `workload`, under `program[i]` in a multiprogrammed run.
fn program_field(multi: bool, i: usize, field: &str) -> String {
    if multi {
        format!("program[{i}].{field}")
    } else {
        field.to_string()
    }
}

impl RunConfig {
    /// A run of one program, `workload`, with every other setting at its default.
    pub fn of(machine: MachineConfig, workload: WorkloadConfig) -> RunConfig {
        RunConfig {
            machine,
            workload: Some(workload),
            program: Vec::new(),
            policy: PolicyConfig::default(),
            scheduler: SchedulerConfig::default(),
            seed: DEFAULT_SEED,
            report: ReportConfig::default(),
            budget_ns: 0,
        }
    }

    /// The run's programs: the `[[program]]` list, or the one `workload` starting at 0.
    /// Giving both is an error.
    pub fn programs(&self) -> Result<Vec<ProgramConfig>, ConfigError> {
        match (&self.workload, self.program.is_empty()) {
            (Some(_), false) => Err(ConfigError::new(
                "program",
                "a run has either one `workload` or a list of `[[program]]` tables, not both",
            )),
            (w, true) => Ok(vec![ProgramConfig {
                workload: w.clone().unwrap_or_default(),
                start_ns: 0,
            }]),
            (None, false) => Ok(self.program.clone()),
        }
    }

    /// Every workload configuration of the run with the dotted path it is written at
    /// (`workload`, or `program[i].workload`), for a caller that completes them (e.g.
    /// loads the matrix a workload names).
    pub fn workloads_mut(&mut self) -> Vec<(String, &mut WorkloadConfig)> {
        if self.program.is_empty() {
            let w = self.workload.get_or_insert_with(WorkloadConfig::default);
            return vec![("workload".to_string(), w)];
        }
        self.program
            .iter_mut()
            .enumerate()
            .map(|(i, p)| (format!("program[{i}].workload"), &mut p.workload))
            .collect()
    }

    /// The kinds of the run's workloads, joined by ` + ` (for headings).
    pub fn workload_kinds(&self) -> String {
        match &self.workload {
            Some(w) if self.program.is_empty() => w.kind().to_string(),
            _ if self.program.is_empty() => WorkloadConfig::default().kind().to_string(),
            _ => self
                .program
                .iter()
                .map(|p| p.workload.kind())
                .collect::<Vec<_>>()
                .join(" + "),
        }
    }

    /// Whether the run lists its programs (`[[program]]`), so fields are named under
    /// `program[i]`.
    fn multi(&self) -> bool {
        !self.program.is_empty()
    }

    /// An error of program `i`'s workload, its field moved under `program[i]` in a
    /// multiprogrammed run.
    fn in_program(&self, i: usize, mut e: ConfigError) -> ConfigError {
        if self.multi() {
            e.field = program_field(true, i, &e.field);
        }
        e
    }

    /// Each program's footprint (ranges and start time checked), in order.
    fn footprints(&self, machine: &Machine) -> Result<Vec<Footprint>, ConfigError> {
        let programs = self.programs()?;
        let mut fps = Vec::with_capacity(programs.len());
        let mut threads = 0u64;
        for (i, p) in programs.iter().enumerate() {
            p.check_ranges(&format!("program[{i}]"))?;
            let fp = p
                .workload
                .footprint(machine)
                .map_err(|e| self.in_program(i, e))?;
            threads += fp.threads as u64;
            if threads > crate::estimate::MAX_THREADS as u64 {
                return Err(ConfigError::new(
                    program_field(self.multi(), i, "workload.threads"),
                    format!(
                        "the programs have {threads} threads or more; a run has at most {}",
                        crate::estimate::MAX_THREADS
                    ),
                ));
            }
            fps.push(fp);
        }
        Ok(fps)
    }

    /// Builds the engine for this configuration (validating everything).
    pub fn engine(&self) -> Result<Engine, SimError> {
        let machine = Machine::new(self.machine.clone())?;
        let mut launches = Vec::new();
        for (i, p) in self.programs()?.iter().enumerate() {
            let built = p
                .workload
                .build(&machine)
                .map_err(|e| self.in_program(i, e))?;
            launches.extend(built.into_iter().map(|program| Launch {
                program,
                start: Ns(p.start_ns),
            }));
        }
        let policy = self.policy.build(&machine)?;
        let scheduler = self.scheduler.build();
        Engine::new(
            machine,
            launches,
            policy,
            scheduler,
            EngineOptions {
                seed: self.seed,
                per_page: self.report.per_page,
                series_interval: Some(Ns(self.report.series_interval_ns)),
                series_by_array: self.report.series_by_array,
                budget: (self.budget_ns > 0).then_some(Ns(self.budget_ns)),
            },
        )
    }

    /// Validates the whole configuration and estimates what the run will allocate and
    /// simulate, without allocating anything sized by the configuration (the machine's
    /// node-pair tables and a policy object are built; both are small).
    pub fn estimate(&self) -> Result<Estimate, ConfigError> {
        self.report.check_ranges("report")?;
        crate::fields::check_value(
            "",
            "budget_ns",
            &self.budget_ns,
            Some(crate::fields::Bound::Int(0)),
            Some(crate::fields::Bound::Int(crate::TIME_LIMIT as i128)),
            "ns",
        )?;
        if self.report.series_by_array && !self.report.per_page {
            return Err(ConfigError::new(
                "report.series_by_array",
                "counts references per array from the per-page report: set report.per_page = true too",
            ));
        }
        let machine = Machine::new(self.machine.clone())?;
        let fps = self.footprints(&machine)?;
        let multi = self.multi();
        let field = |i: usize, f: &str| program_field(multi, i, f);
        // The run's totals; the fields named are those of the program that weighs most.
        let largest = |key: fn(&Footprint) -> u64| {
            (0..fps.len())
                .max_by_key(|&i| (key(&fps[i]), std::cmp::Reverse(i)))
                .unwrap_or(0)
        };
        let (by_pages, by_ops) = (largest(|f| f.pages), largest(|f| f.ops));
        let sum =
            |key: fn(&Footprint) -> u64| fps.iter().fold(0u64, |s, f| s.saturating_add(key(f)));
        let size = field(by_pages, fps[by_pages].size_field);
        let ops_field = field(by_ops, fps[by_ops].ops_field);
        let total = Footprint {
            pages: sum(|f| f.pages),
            threads: sum(|f| f.threads as u64) as u32,
            ops: sum(|f| f.ops),
            iterations: sum(|f| f.iterations),
            ..fps[by_ops].clone()
        };
        let nodes = machine.nodes() as u64;
        let frames = machine.total_frames();
        if total.pages > frames {
            let what = if multi {
                "the programs need"
            } else {
                "the workload needs"
            };
            return Err(ConfigError::new(
                size,
                format!(
                    "{what} {} pages but the machine has only {frames} frames \
                     ({})",
                    total.pages,
                    if machine.config.node_frames.is_empty() {
                        format!(
                            "{nodes} nodes x machine.frames_per_node {}",
                            machine.config.frames_per_node
                        )
                    } else {
                        "machine.node_frames".to_string()
                    }
                ),
            ));
        }
        let policy = self.policy.build(&machine)?;
        let mut shapes = Vec::with_capacity(fps.len());
        let mut first_thread = 0;
        for (fp, p) in fps.iter().zip(self.programs()?) {
            shapes.push(crate::component::ProgramShape {
                threads: fp.threads,
                first_thread,
                start: Ns(p.start_ns),
            });
            first_thread += fp.threads;
        }
        self.scheduler.check(&machine, &shapes)?;
        let own = policy
            .daemons(&machine)
            .iter()
            .filter(|d| d.placement == crate::component::DaemonPlacement::OwnProcessor)
            .count();
        if own > 0 && total.threads as usize + own > machine.procs() {
            return Err(ConfigError::new(
                field(0, "workload.threads"),
                format!(
                    "{} threads and {own} daemon(s) of policy `{}` that need a processor of \
                     their own do not fit on {} processors",
                    total.threads,
                    policy.name(),
                    machine.procs()
                ),
            ));
        }
        let pages = total.pages;
        let part = |what: &'static str, field: &str, bytes: u64| Part {
            what,
            field: field.to_string(),
            bytes,
        };
        let mut parts = vec![
            part(
                "page states and per-node mappings",
                &size,
                Memory::bytes_needed(
                    pages,
                    nodes,
                    machine.total_frames(),
                    policy.acquires_ptes(),
                    policy.replicates(),
                ),
            ),
            part(
                "fault handlers' busy times (runs of more than one thread)",
                &size,
                crate::mm::MemSystem::fault_table_bytes(pages, total.threads),
            ),
            part(
                "reference history",
                &size,
                RefHistory::bytes_needed(policy.history(), pages, nodes),
            ),
            part(
                "hardware page counters",
                &size,
                if policy.page_counters().is_some() {
                    crate::mm::PageCounters::bytes_needed(pages, nodes)
                } else {
                    0
                },
            ),
            part(
                "processor caches (page x processor table, a segment per line held at most)",
                &size,
                if machine.config.cache.enabled {
                    let cache = &machine.config.cache;
                    crate::cache::Caches::bytes_needed(
                        pages,
                        machine.procs() as u64,
                        machine.page_size() / cache.line_bytes,
                        cache.lines(),
                    )
                } else {
                    0
                },
            ),
            part(
                "policy's own per-page state",
                &size,
                pages.saturating_mul(policy.state_bytes_per_page()),
            ),
            part(
                "access monitors (hinting-fault times, sample buffer)",
                &size,
                crate::mm::Monitors::bytes_needed(policy.monitors(), pages),
            ),
        ];
        for (i, fp) in fps.iter().enumerate() {
            let size = field(i, fp.size_field);
            parts.push(part("workload tables", &size, fp.bytes));
            parts.push(part(
                "threads and their generated operations",
                &size,
                (fp.threads as u64).saturating_mul(
                    crate::engine::bytes_per_thread().saturating_add(
                        fp.buffered_ops
                            .saturating_mul(std::mem::size_of::<crate::component::Op>() as u64),
                    ),
                ),
            ));
            // Vectors grow by doubling: twice the points' bytes bounds the capacity.
            parts.push(part(
                "series points at iteration ends",
                &field(i, fp.ops_field),
                fp.iterations
                    .saturating_mul(2 * std::mem::size_of::<SeriesPoint>() as u64),
            ));
        }
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
        let mut e = Estimate::from_parts(&total, parts);
        e.ops_field = ops_field;
        Ok(e)
    }

    /// For every page of the run (numbered as the engine numbers them: the programs'
    /// address spaces one after another), the names of the arrays it holds, joined by
    /// `+` (a page shared by two data structures shows both: PLATINUM's §4.2 diagnosis).
    pub fn page_data(&self) -> Result<crate::memory::PageNames, SimError> {
        let machine = Machine::new(self.machine.clone())?;
        let ps = machine.page_size();
        let mut built = Vec::new();
        for (i, p) in self.programs()?.iter().enumerate() {
            built.extend(
                p.workload
                    .build(&machine)
                    .map_err(|e| self.in_program(i, e))?,
            );
        }
        Ok(crate::memory::page_names(
            built.iter().map(|p| p.layout()),
            ps,
        ))
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
