//! Threads' polls and reference runs made in bulk (the engine's `spin.rs`, `rounds.rs` and
//! `interleave.rs`) give the results of making them one by one through the event loop, bit
//! for bit: with
//! contention and switch ports, clock interrupts and start skews, replication and
//! freezing, threads sharing a node's module, remote polls. So do a daemon's steps taken
//! several in one call (`Mm::next_daemon_step_now`).

mod common;

use common::toy_machine;
use numaplace_core::component::SchedulerConfig;
use numaplace_core::component::WorkloadConfig;
use numaplace_core::machine::{MachineConfig, Variation};
use numaplace_core::policy::HollidayConfig;
use numaplace_core::workload::common::Variant;
use numaplace_core::workload::gups::GupsConfig;
use numaplace_core::workload::{
    GaussConfig, JacobiConfig, MatvecSyntheticConfig, MsortConfig, SizeRead,
};
use numaplace_core::{PolicyConfig, RunConfig, Stats};

/// Sixteen nodes with the Butterfly Plus's costs, contention at modules and switch ports,
/// and run-to-run variation.
fn butterfly_like(procs_per_node: u16) -> MachineConfig {
    let mut m = toy_machine();
    m.nodes = 16;
    m.procs_per_node = procs_per_node;
    m.frames_per_node = 4096;
    m.page_size_bytes = 4096;
    m.costs.local_read_ns = 320;
    m.costs.local_write_ns = 320;
    m.costs.remote_read_ns = 5000;
    m.costs.remote_write_ns = 5000;
    m.costs.module_service_ns = 320;
    m.costs.remote_module_service_ns = Some(320);
    m.costs.switch_service_ns = 2000;
    m.contention = true;
    m.variation = Variation {
        enabled: true,
        start_skew_ns: 1_000_000,
        tick_ns: 1_666_667,
        tick_cost_ns: 50_000,
        daemon_phase: true,
    };
    m
}

/// The run's statistics with and without bulk making.
fn both(machine: MachineConfig, workload: WorkloadConfig, policy: &str) -> (Stats, Stats) {
    let policy = PolicyConfig::default_of(policy).expect("a registered policy");
    both_with(machine, workload, policy)
}

fn both_with(
    machine: MachineConfig,
    workload: WorkloadConfig,
    policy: PolicyConfig,
) -> (Stats, Stats) {
    let mut cfg = RunConfig::of(machine, workload);
    cfg.policy = policy;
    cfg.scheduler = SchedulerConfig::default();
    let run = |bulk: bool| {
        let mut e = cfg.engine().expect("the run is valid");
        e.set_bulk(bulk);
        e.run().expect("the run completes")
    };
    (run(true), run(false))
}

fn assert_same(machine: MachineConfig, workload: WorkloadConfig, policy: &str) {
    let (bulk, one_by_one) = both(machine, workload, policy);
    assert!(bulk.ops > 0);
    assert_eq!(bulk, one_by_one);
}

fn gauss(n: u64, f: impl FnOnce(&mut GaussConfig)) -> WorkloadConfig {
    let mut c = GaussConfig {
        n,
        compute_ns_per_element: 300,
        ..Default::default()
    };
    f(&mut c);
    WorkloadConfig::new(c)
}

#[test]
fn gauss_polls_in_bulk_are_the_polls_one_by_one() {
    assert_same(butterfly_like(1), gauss(96, |_| {}), "platinum");
    assert_same(
        butterfly_like(1),
        gauss(64, |c| c.size_read = SizeRead::LockPage),
        "platinum",
    );
    assert_same(
        butterfly_like(1),
        gauss(64, |c| c.size_read = SizeRead::Private),
        "platinum",
    );
    assert_same(
        butterfly_like(1),
        gauss(64, |c| c.variant = Variant::Numa),
        "static",
    );
    assert_same(butterfly_like(1), gauss(64, |c| c.cyclic = false), "larowe");
}

#[test]
fn polls_of_threads_sharing_a_module_are_the_polls_one_by_one() {
    assert_same(
        butterfly_like(2),
        gauss(96, |c| c.threads = Some(24)),
        "platinum",
    );
    let mut quiet = butterfly_like(2);
    quiet.variation.enabled = false;
    quiet.contention = false;
    assert_same(quiet, gauss(64, |_| {}), "platinum");
}

#[test]
fn merge_sort_waits_in_bulk_as_one_by_one() {
    let w = WorkloadConfig::new(MsortConfig {
        n: 1 << 14,
        ..Default::default()
    });
    assert_same(butterfly_like(1), w, "platinum");
}

#[test]
fn reference_runs_in_rounds_are_the_runs_one_by_one() {
    let fine = |n| {
        WorkloadConfig::new(MatvecSyntheticConfig {
            n,
            ..Default::default()
        })
    };
    assert_same(butterfly_like(1), fine(512), "static");
    assert_same(butterfly_like(2), fine(384), "static");
    assert_same(butterfly_like(1), fine(256), "platinum");
    // Threads that start together tie at every turn, and two on a node share a module:
    // the order of the turns decides who waits.
    let mut together = butterfly_like(2);
    together.variation.enabled = false;
    assert_same(together.clone(), fine(384), "static");
    assert_same(together, gauss(64, |c| c.threads = Some(32)), "platinum");
    let mut no_variation = butterfly_like(1);
    no_variation.variation.enabled = false;
    assert_same(no_variation, fine(512), "static");
    let mut small_pages = butterfly_like(1);
    small_pages.page_size_bytes = 64;
    small_pages.frames_per_node = 1 << 16;
    let jacobi = |threads| {
        WorkloadConfig::new(JacobiConfig {
            n: 128,
            iterations: 4,
            threads,
            ..Default::default()
        })
    };
    assert_same(small_pages.clone(), jacobi(None), "static");
    small_pages.procs_per_node = 2;
    small_pages.variation.enabled = false;
    assert_same(small_pages.clone(), jacobi(Some(32)), "static");
    small_pages.costs.remote_read_ns = 320;
    small_pages.costs.remote_write_ns = 320;
    assert_same(small_pages, jacobi(Some(32)), "static");
}

#[test]
fn threads_interleaving_at_different_paces_are_made_as_one_by_one() {
    // Random updates, local and remote, of different lengths: no two threads keep one
    // pace, so rounds form rarely and the threads' steps interleave (`interleave.rs`).
    let gups = |threads| {
        WorkloadConfig::new(GupsConfig {
            threads,
            updates: 3000,
            working_set_bytes: 1 << 20,
            ..Default::default()
        })
    };
    assert_same(butterfly_like(1), gups(16), "static");
    assert_same(butterfly_like(2), gups(32), "platinum");
    let mut quiet = butterfly_like(1);
    quiet.variation.enabled = false;
    quiet.contention = false;
    assert_same(quiet.clone(), gups(4), "static");
    // With page-table-entry locks that a daemon takes between the threads' steps.
    let holliday = PolicyConfig::default_of("holliday-daemon").expect("registered");
    let (bulk, one_by_one) = both_with(with_entries(quiet), gups(8), holliday);
    assert_eq!(bulk, one_by_one);
}

/// A machine with Holliday's page-table-entry costs (a daemon's examine step takes time,
/// and users' references wait for the entries it holds).
fn with_entries(mut m: MachineConfig) -> MachineConfig {
    m.costs.pte_lock_ns = 17_500;
    m.costs.pte_examine_ns = 17_500;
    m
}

#[test]
fn daemon_examine_steps_in_one_call_are_the_steps_one_by_one() {
    let jacobi = |iterations| {
        WorkloadConfig::new(JacobiConfig {
            n: 64,
            iterations,
            // Processors left for the daemons.
            threads: Some(8),
            ..Default::default()
        })
    };
    let holliday = |daemons: u32, blocking_ns: u64| {
        let mut p = PolicyConfig::default_of("holliday-daemon").expect("registered");
        let c = p
            .get_mut::<HollidayConfig>()
            .expect("holliday-daemon's parameters");
        c.daemons = daemons;
        c.blocking_ns = blocking_ns;
        p
    };
    let check = |m: MachineConfig, w: WorkloadConfig, p: PolicyConfig| {
        let (ahead, one_by_one) = both_with(m, w, p);
        assert!(ahead.daemon_passes > 0);
        assert_eq!(ahead, one_by_one);
    };
    check(with_entries(butterfly_like(1)), jacobi(6), holliday(1, 0));
    check(
        with_entries(butterfly_like(1)),
        jacobi(6),
        holliday(2, 50_000),
    );
    let mut quiet = with_entries(butterfly_like(1));
    quiet.variation.enabled = false;
    quiet.contention = false;
    check(quiet, jacobi(6), holliday(3, 0));
}
