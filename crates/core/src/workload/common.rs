//! What several workloads share: the UMA or NUMA-tuned variant of a program, thread
//! counts, checked simulated durations and placement hints; and, for their tests, one run
//! on a small GP1000-like machine.

use crate::error::ConfigError;
use crate::machine::Machine;
use crate::types::Ns;
use serde::{Deserialize, Serialize};

/// Whether a program places its own data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// UMA style: no placement, the policy decides.
    #[default]
    Uma,
    /// NUMA-tuned: the program places each page on the node of the thread that uses it most.
    Numa,
}

/// Resolves a thread count: `Some(n)` as given (n >= 1), `None` = every processor.
pub(crate) fn thread_count(
    field: &str,
    threads: Option<u32>,
    machine: &Machine,
) -> Result<u32, ConfigError> {
    let max = crate::estimate::MAX_THREADS;
    match threads {
        Some(0) => Err(ConfigError::new(field, "must be at least 1")),
        Some(n) if n > max => Err(ConfigError::new(
            field,
            format!("{n} threads; a run has at most {max}"),
        )),
        Some(n) => Ok(n),
        None => Ok((machine.procs() as u32).min(max)),
    }
}

/// `per_unit` ns times `units`, or an error naming `field` when the product does not fit
/// in simulated time.
pub(crate) fn checked_ns(field: &str, per_unit: u64, units: u64) -> Result<Ns, ConfigError> {
    per_unit.checked_mul(units).map(Ns).ok_or_else(|| {
        ConfigError::new(
            field,
            format!("{per_unit} ns x {units} does not fit in 64-bit simulated time"),
        )
    })
}

/// Placement hints from an owner-of-byte function: each page goes to the owner of its
/// first byte.
pub(crate) fn hints_by_first_byte(
    pages: u64,
    page_size: u64,
    owner: impl Fn(u64) -> Option<u32>,
) -> Vec<Option<u32>> {
    (0..pages).map(|p| owner(p * page_size)).collect()
}

/// A run of `workload` under `larowe`'s defaults on a small machine with the GP1000's
/// costs (Table 2 of LaRowe, Ellis & Kaplan 1991) and 4 nodes of 1024 4 KB frames.
#[cfg(test)]
pub(crate) fn gp1000_like_run(workload: crate::component::WorkloadConfig) -> crate::stats::Stats {
    use crate::machine::{Costs, MachineConfig, Topology};
    let machine = MachineConfig {
        loaded_latency: None,
        preset: "gp1000-like".into(),
        description: String::new(),
        nodes: 4,
        procs_per_node: 1,
        frames_per_node: 1024,
        node_frames: Vec::new(),
        memory_only_nodes: 0,
        page_size_bytes: 4096,
        word_size_bytes: 4,
        topology: Topology::Uniform,
        costs: Costs {
            local_read_ns: 600,
            local_write_ns: 600,
            remote_read_ns: 7500,
            remote_write_ns: 7500,
            cached_read_ns: None,
            page_fault_ns: 0,
            migrate_fixed_ns: 4_500_000,
            replicate_fixed_ns: 4_600_000,
            block_transfer_per_word_ns: 0,
            coherency_fault_fixed_ns: 2_100_000,
            coherency_per_copy_ns: 0,
            shootdown_per_node_ns: 0,
            pte_lock_ns: 15_000,
            pte_examine_ns: 15_000,
            module_service_ns: 600,
            remote_module_service_ns: Some(600),
            switch_service_ns: 2000,
            operation_delay_ns: 0,
        },
        variation: Default::default(),
        contention: true,
        cache: Default::default(),
        compute_time_pct: 100,
        clock_mhz: None,
    };
    let mut run = crate::RunConfig::of(machine, workload);
    run.policy = crate::component::PolicyConfig::default_of("larowe").expect("larowe registered");
    run.run().expect("the run completes")
}
