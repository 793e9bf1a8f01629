//! When does moving a page pay? The contention-free break-even analyses of PLATINUM
//! (Cox & Fowler 1989, §4.1) and of LaRowe, Ellis & Kaplan (1991, §3), computed from a
//! machine's cost table. Pure functions: no simulation.
//!
//! PLATINUM §4.1: a page of `s` words is written by `p` processors in turn, each operation
//! making `r = ρ s` references. Moving the data pays when
//! `C_remote > g(p) C_migrate + C_local` (inequality 1), i.e. with `C_local = ρ s T_l`,
//! `C_remote = ρ s T_r` and `C_migrate = s T_b + F`:
//! `s > A g / (ρ − B g)` (inequality 2) with `A = F / (T_r − T_l)` and
//! `B = T_b / (T_r − T_l)`. When `ρ <= B g` it never pays, whatever the page size.
//!
//! LaRowe §3: a processor making `a` references pays `a t_l + M < a t_r` to migrate, so the
//! break-even count is `M / (t_r − t_l)`; replication pays when `a t_c + R < a t_r`, with
//! `t_c` the cached read time on machines that cache replicated pages (else `t_l`).
//! `machine.costs.operation_delay_ns` (the paper's slowed systems of Figure 6) is part of
//! `M`, `R` and `F`.

use crate::machine::Machine;
use serde::{Deserialize, Serialize};

/// The densities ρ of the rows of PLATINUM's Table 1.
pub const TABLE1_RHO: [f64; 9] = [0.17, 0.24, 0.35, 0.48, 0.60, 0.75, 1.0, 1.5, 2.0];
/// The values of g(p) of the columns of PLATINUM's Table 1.
pub const TABLE1_G: [f64; 3] = [0.5, 1.0, 2.0];

/// The coefficients of inequality (2) and the costs they come from.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MigrationCoefficients {
    /// `T_l`: a local word reference (ns).
    pub t_local_ns: f64,
    /// `T_r`: a remote word reference (ns).
    pub t_remote_ns: f64,
    /// `T_b`: copying one word in a page migration (ns).
    pub t_block_ns: f64,
    /// `F`: the fixed overhead of a migration (ns): the fault plus the migration's fixed
    /// part and any operation delay (about 0.48 ms on the Butterfly Plus, §4.1).
    pub fixed_ns: f64,
    /// `A = F / (T_r − T_l)`, the numerator constant (107 in the paper).
    pub numerator: f64,
    /// `B = T_b / (T_r − T_l)`, the coefficient of g(p) (0.24 in the paper).
    pub slope: f64,
}

impl MigrationCoefficients {
    /// The coefficients implied by `machine`'s costs (reads, as §4.1 uses).
    pub fn from_machine(machine: &Machine) -> Option<MigrationCoefficients> {
        let c = machine.costs();
        let (tl, tr) = (c.local_read_ns as f64, c.remote_read_ns as f64);
        if tr <= tl {
            return None;
        }
        let tb = c.block_transfer_per_word_ns as f64;
        let f = (c.page_fault_ns + c.migrate_fixed_ns + c.operation_delay_ns) as f64;
        Some(MigrationCoefficients {
            t_local_ns: tl,
            t_remote_ns: tr,
            t_block_ns: tb,
            fixed_ns: f,
            numerator: f / (tr - tl),
            slope: tb / (tr - tl),
        })
    }
}

/// Inequality (2): the minimum page size in words above which migrating always pays, for
/// reference density `rho` and `g` movements per saved remote operation; `None` when it
/// never pays (`rho <= slope * g`).
pub fn min_page_words(numerator: f64, slope: f64, rho: f64, g: f64) -> Option<f64> {
    let d = rho - slope * g;
    if d <= 0.0 {
        None
    } else {
        Some(numerator * g / d)
    }
}

/// The range of inequality (2)'s value when its coefficients are known only to the
/// precision they are printed with (± `numerator_half`, ± `slope_half`): `(low, high)`,
/// `high = None` when some coefficients in range make migration never pay, and
/// `low = None` when all do.
pub fn min_page_words_range(
    numerator: f64,
    slope: f64,
    numerator_half: f64,
    slope_half: f64,
    rho: f64,
    g: f64,
) -> (Option<f64>, Option<f64>) {
    let low = min_page_words(numerator - numerator_half, slope - slope_half, rho, g);
    let high = min_page_words(numerator + numerator_half, slope + slope_half, rho, g);
    (low, high)
}

/// `g(p)` for `p` processors touching the data in strict round-robin order: `p/(p−1)`.
pub fn g_round_robin(p: u32) -> Option<f64> {
    if p < 2 {
        None
    } else {
        Some(p as f64 / (p as f64 - 1.0))
    }
}

/// LaRowe's break-even reference counts for one machine.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BreakEvenCounts {
    /// `M`: a migration, fault included (ns).
    pub migration_ns: f64,
    /// `R`: a replication, fault included (ns).
    pub replication_ns: f64,
    /// References above which migrating pays: `M / (t_r − t_l)`; `None` when remote
    /// references are no dearer than local ones.
    pub migration_refs: Option<f64>,
    /// References above which replicating pays: `R / (t_r − t_c)`.
    pub replication_refs: Option<f64>,
    /// Whether replicated pages are read at the cached latency `t_c`.
    pub cached: bool,
}

/// LaRowe §3's break-even counts from `machine`'s costs. The operation costs are the
/// whole faults (`page_fault_ns` plus the operation), as LaRowe's Table 2 lists totals.
pub fn larowe_counts(machine: &Machine) -> BreakEvenCounts {
    let c = machine.costs();
    let m = (c.page_fault_ns + machine.migration_cost().0) as f64;
    let r = (c.page_fault_ns + machine.replication_cost().0) as f64;
    let (tl, tr) = (c.local_read_ns as f64, c.remote_read_ns as f64);
    let tc = c.cached_read_ns.map(|x| x as f64).unwrap_or(tl);
    let per = |saving: f64, cost: f64| (saving > 0.0).then(|| cost / saving);
    BreakEvenCounts {
        migration_ns: m,
        replication_ns: r,
        migration_refs: per(tr - tl, m),
        replication_refs: per(tr - tc, r),
        cached: c.cached_read_ns.is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::{Costs, MachineConfig, Topology};

    fn machine(costs: Costs) -> Machine {
        Machine::new(MachineConfig {
            loaded_latency: None,
            preset: "t".into(),
            description: String::new(),
            nodes: 2,
            procs_per_node: 1,
            frames_per_node: 4,
            node_frames: Vec::new(),
            memory_only_nodes: 0,
            page_size_bytes: 4096,
            word_size_bytes: 4,
            topology: Topology::Uniform,
            costs,
            variation: Default::default(),
            contention: false,
            cache: Default::default(),
            compute_time_pct: 100,
            clock_mhz: None,
        })
        .unwrap()
    }

    fn costs() -> Costs {
        Costs {
            local_read_ns: 320,
            local_write_ns: 320,
            remote_read_ns: 5000,
            remote_write_ns: 5000,
            cached_read_ns: None,
            page_fault_ns: 230_000,
            migrate_fixed_ns: 250_000,
            replicate_fixed_ns: 0,
            block_transfer_per_word_ns: 1100,
            coherency_fault_fixed_ns: 0,
            coherency_per_copy_ns: 0,
            shootdown_per_node_ns: 0,
            pte_lock_ns: 0,
            pte_examine_ns: 0,
            module_service_ns: 320,
            remote_module_service_ns: None,
            switch_service_ns: 0,
            operation_delay_ns: 0,
        }
    }

    #[test]
    fn inequality_two_coefficients_are_overhead_and_block_time_over_the_saving() {
        let k = MigrationCoefficients::from_machine(&machine(costs())).unwrap();
        assert!((k.numerator - 480_000.0 / 4680.0).abs() < 1e-9);
        assert!((k.slope - 1100.0 / 4680.0).abs() < 1e-12);
    }

    #[test]
    fn the_papers_coefficients_give_its_table_one_entry_for_rho_one_and_g_one() {
        // 107 / (1.0 - 0.24) = 140.8: Table 1 prints 141.
        let s = min_page_words(107.0, 0.24, 1.0, 1.0).unwrap();
        assert_eq!(s.round(), 141.0);
    }

    #[test]
    fn migration_never_pays_when_density_is_at_most_slope_times_g() {
        assert_eq!(min_page_words(107.0, 0.24, 0.24, 1.0), None);
        assert_eq!(min_page_words(107.0, 0.24, 0.35, 2.0), None);
    }

    #[test]
    fn the_rounding_range_brackets_the_exact_value() {
        let exact = min_page_words(107.0, 0.24, 0.48, 1.0).unwrap();
        let (lo, hi) = min_page_words_range(107.0, 0.24, 0.5, 0.005, 0.48, 1.0);
        assert!(lo.unwrap() < exact && exact < hi.unwrap());
    }

    #[test]
    fn round_robin_g_is_p_over_p_minus_one() {
        assert_eq!(g_round_robin(2), Some(2.0));
        assert_eq!(g_round_robin(1), None);
        assert!((g_round_robin(16).unwrap() - 16.0 / 15.0).abs() < 1e-12);
    }

    #[test]
    fn larowe_migration_count_is_cost_over_the_remote_saving() {
        let mut c = costs();
        c.page_fault_ns = 0;
        c.migrate_fixed_ns = 4_500_000;
        c.block_transfer_per_word_ns = 0;
        c.local_read_ns = 600;
        c.remote_read_ns = 7500;
        let k = larowe_counts(&machine(c));
        assert!((k.migration_refs.unwrap() - 4_500_000.0 / 6900.0).abs() < 1e-9);
    }

    #[test]
    fn replication_saves_against_the_cached_latency_when_replicas_are_cached() {
        let mut c = costs();
        c.page_fault_ns = 0;
        c.replicate_fixed_ns = 4_600_000;
        c.block_transfer_per_word_ns = 0;
        c.local_read_ns = 502;
        c.remote_read_ns = 1766;
        c.cached_read_ns = Some(61);
        let k = larowe_counts(&machine(c));
        assert!(k.cached);
        assert!((k.replication_refs.unwrap() - 4_600_000.0 / 1705.0).abs() < 1e-9);
    }
}
