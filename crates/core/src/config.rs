//! The configuration of one run: machine, workload, policy, scheduler, seed, reporting.

use crate::engine::{Engine, EngineOptions, SimError};
use crate::machine::{Machine, MachineConfig};
use crate::policy::PolicyConfig;
use crate::sched::SchedulerConfig;
use crate::stats::Stats;
use crate::types::Ns;
use crate::workload::WorkloadConfig;
use serde::{Deserialize, Serialize};

/// What to report besides the totals.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReportConfig {
    /// Keep the per-page report. Default true.
    pub per_page: bool,
    /// Record a series point every this many ns besides iteration ends; 0 = only at
    /// iteration ends. Default 0.
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

/// A fully resolved run configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// The machine.
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
    /// Seed of the run's random number generator. Default 1.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Reporting options.
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
