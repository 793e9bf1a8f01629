//! Holliday's migration daemon and Foresight on a two-node toy machine, and the workloads
//! of the paper on small sizes.

mod common;

use common::Script;
use numaplace_core::component::SchedulerConfig;
use numaplace_core::component::{Op, WorkloadConfig};
use numaplace_core::machine::MachineConfig;
use numaplace_core::policy::{
    ForesightConfig, HollidayConfig, HollidayDaemon, StaticConfig, StaticPlacement,
};
use numaplace_core::workload::{
    MatvecSparseConfig, MatvecSyntheticConfig, SparseRows, SurfaceWaveConfig,
};
use numaplace_core::{HistoryMode, Machine, Ns, PolicyConfig, RunConfig, Stats};
use std::sync::Arc;

/// The toy machine with two processors per node: threads 0 and 1 on node 0, thread 2 on
/// node 1, the daemon on the last processor.
fn toy_machine() -> MachineConfig {
    MachineConfig {
        loaded_latency: None,
        procs_per_node: 2,
        ..common::toy_machine()
    }
}

fn read(count: u32) -> Op {
    common::read(0, count)
}

fn ms(x: u64) -> Op {
    Op::Compute(Ns(x * 1_000_000))
}

fn us(x: u64) -> Op {
    Op::Compute(Ns(x * 1_000))
}

/// Runs `ops` (threads 0 and 1 on node 0, thread 2 on node 1) under a daemon whose page
/// starts on node 0.
fn run_daemon(ops: Vec<Vec<Op>>, history: HistoryMode, blocking_ns: u64) -> Stats {
    let config = HollidayConfig {
        daemons: 1,
        blocking_ns,
        history,
        initial: StaticConfig {
            placement: StaticPlacement::Fixed,
            node: 0,
            ..Default::default()
        },
    };
    let policy = HollidayDaemon::new(config, &Machine::new(toy_machine()).unwrap()).unwrap();
    common::engine(
        Box::new(Script::new(1, ops)),
        Box::new(policy),
        toy_machine(),
    )
    .run()
    .unwrap()
}

#[test]
fn daemon_moves_a_page_to_its_top_referencer() {
    let s = run_daemon(
        vec![vec![read(10), ms(5)], vec![ms(5)], vec![read(100), ms(5)]],
        HistoryMode::Usage,
        1_000_000,
    );
    assert_eq!(s.pages[0].migrations, 1);
    assert_eq!(s.pages[0].home, 1);
}

#[test]
fn daemon_leaves_a_page_whose_home_referenced_it_as_often_as_anyone() {
    let s = run_daemon(
        vec![vec![read(50), ms(5)], vec![ms(5)], vec![read(50), ms(5)]],
        HistoryMode::Usage,
        1_000_000,
    );
    assert_eq!(s.pages[0].migrations, 0);
    assert_eq!(s.pages[0].home, 0);
}

#[test]
fn daemon_leaves_a_page_nobody_referenced() {
    let s = run_daemon(
        vec![vec![ms(5)], vec![ms(5)], vec![ms(5)]],
        HistoryMode::Usage,
        1_000_000,
    );
    assert_eq!(s.events.migrations, 0);
    assert!(s.daemon_passes > 1);
}

#[test]
fn aging_shifts_at_each_pass_so_an_older_reference_loses_to_a_newer_one() {
    // Node 0 references before the first pass (at 1 ms), node 1 only between the first
    // and the second: at the second pass node 0's register has shifted (01) below node 1's
    // fresh bit (10). Without the shift they would tie and the page would stay.
    let ops = vec![
        vec![read(5), ms(5)],
        vec![ms(5)],
        vec![us(1500), read(5), ms(5)],
    ];
    let s = run_daemon(ops, HistoryMode::Aging(2), 1_000_000);
    assert_eq!(s.pages[0].migrations, 1);
    assert_eq!(s.pages[0].home, 1);
}

#[test]
fn a_daemon_taking_an_entry_in_use_delays_the_user_reference() {
    // Thread 0 reads its local page for 10 us from 0.1 us (after its fault); the daemon
    // examines the page's entry copies every microsecond and each examination of node 0's
    // copy holds it for the lock and examine costs while the run is under way.
    let c = toy_machine().costs;
    let s = run_daemon(
        vec![vec![read(1000)], vec![], vec![]],
        HistoryMode::Usage,
        1_000,
    );
    let hold = c.pte_lock_ns + c.pte_examine_ns;
    let wait = s.threads[0].pte_wait_ns;
    assert!(wait > 0);
    assert_eq!(
        wait % hold,
        0,
        "each examination delays the run by one hold"
    );
    assert_eq!(
        s.threads[0].completion_ns,
        c.page_fault_ns + 1000 * c.local_read_ns + wait
    );
}

#[test]
fn a_daemon_that_examines_only_after_the_run_delays_nobody() {
    let s = run_daemon(
        vec![vec![read(1000)], vec![], vec![]],
        HistoryMode::Usage,
        1_000_000,
    );
    assert_eq!(s.threads[0].pte_wait_ns, 0);
}

#[test]
fn two_daemons_each_examine_their_own_partition() {
    let run = |daemons| {
        RunConfig {
            machine: sixteen_sat(),
            workload: Some(WorkloadConfig::new(MatvecSyntheticConfig {
                n: 64,
                threads: Some(4),
                refs_per_nonzero: 10,
                ..Default::default()
            })),
            program: Vec::new(),
            policy: PolicyConfig::new(HollidayConfig {
                daemons,
                ..Default::default()
            }),
            scheduler: SchedulerConfig::default(),
            seed: 1,
            report: Default::default(),
            budget_ns: 0,
        }
        .run()
        .unwrap()
    };
    let (one, two) = (run(1), run(2));
    // Two daemons share the work of a pass, so together they complete passes about twice
    // as often as one (each counts its own passes).
    let rate = |s: &Stats| s.daemon_passes as f64 / s.makespan_ns as f64;
    assert!(
        rate(&two) > 1.8 * rate(&one),
        "{} vs {}",
        rate(&two),
        rate(&one)
    );
}

/// Sixteen nodes with the software-translation costs of Holliday's testbed, 1 KB pages.
fn sixteen_sat() -> MachineConfig {
    let mut m = toy_machine();
    m.nodes = 16;
    m.procs_per_node = 1;
    m.frames_per_node = 4096;
    m.page_size_bytes = 1024;
    m.costs.local_read_ns = 44_000;
    m.costs.remote_read_ns = 220_000;
    m.costs.page_fault_ns = 0;
    m.costs.pte_lock_ns = 17_500;
    m.costs.pte_examine_ns = 17_500;
    m
}

fn synthetic(policy: PolicyConfig, refs: u32) -> Stats {
    RunConfig {
        machine: sixteen_sat(),
        workload: Some(WorkloadConfig::new(MatvecSyntheticConfig {
            n: 128,
            threads: Some(8),
            refs_per_nonzero: refs,
            ..Default::default()
        })),
        program: Vec::new(),
        policy,
        scheduler: SchedulerConfig::default(),
        seed: 1,
        report: Default::default(),
        budget_ns: 0,
    }
    .run()
    .unwrap()
}

fn none() -> PolicyConfig {
    PolicyConfig::new(StaticConfig {
        placement: StaticPlacement::Program,
        ..Default::default()
    })
}

#[test]
fn in_matvec_synthetic_only_the_even_threads_run_into_remote_rows() {
    let s = synthetic(none(), 10);
    for t in &s.threads {
        if t.id % 2 == 0 {
            assert!(t.refs.remote > 0, "thread {}", t.id);
        } else {
            assert_eq!(t.refs.remote, 0, "thread {}", t.id);
        }
    }
}

#[test]
fn foresight_makes_every_matvec_reference_local() {
    let s = synthetic(PolicyConfig::new(ForesightConfig::default()), 10);
    assert_eq!(s.refs.remote, 0);
    assert!(s.events.migrations > 0);
    assert!(s.makespan_ns < synthetic(none(), 10).makespan_ns);
}

#[test]
fn matvec_sparse_references_the_three_vectors_once_per_entry() {
    // Two rows: row 0 has 2 entries, row 1 has 3.
    let rows = SparseRows::new("tiny", vec![0, 2, 5]).unwrap();
    let s = RunConfig {
        machine: sixteen_sat(),
        workload: Some(WorkloadConfig::new(MatvecSparseConfig {
            threads: Some(2),
            refs_per_nonzero: 3,
            rows: Some(Arc::new(rows)),
            ..Default::default()
        })),
        program: Vec::new(),
        policy: none(),
        scheduler: SchedulerConfig::default(),
        seed: 1,
        report: Default::default(),
        budget_ns: 0,
    }
    .run()
    .unwrap();
    // Per row: two row pointers; per entry: a column index and 3 value references.
    assert_eq!(s.refs.total, 2 * 2 + 5 * (1 + 3));
}

#[test]
fn surface_wave_threads_never_wait_for_each_other() {
    let s = RunConfig {
        machine: sixteen_sat(),
        workload: Some(WorkloadConfig::new(SurfaceWaveConfig {
            n: 20,
            total_ms: 1_000,
            threads: Some(4),
            ..Default::default()
        })),
        program: Vec::new(),
        policy: none(),
        scheduler: SchedulerConfig::default(),
        seed: 1,
        report: Default::default(),
        budget_ns: 0,
    }
    .run()
    .unwrap();
    assert!(s.threads.iter().all(|t| t.sync_wait_ns == 0));
    // 10 steps x 100 points per partition, each a write of the next level.
    let writes_per_thread = 10 * 100;
    assert!(s.threads.iter().all(|t| t.refs.total > writes_per_thread));
}

#[test]
fn jacobi_threads_wait_at_the_barrier_for_the_slowest() {
    // With the convergence checker, the checker waits at every iteration's barrier while
    // the workers sweep their partitions.
    let s = RunConfig {
        machine: sixteen_sat(),
        workload: Some(WorkloadConfig::new(
            numaplace_core::workload::JacobiConfig {
                n: 32,
                iterations: 2,
                threads: Some(4),
                checker: true,
                ..Default::default()
            },
        )),
        program: Vec::new(),
        policy: none(),
        scheduler: SchedulerConfig::default(),
        seed: 1,
        report: Default::default(),
        budget_ns: 0,
    }
    .run()
    .unwrap();
    assert_eq!(s.threads.len(), 5);
    assert!(s.threads[4].sync_wait_ns > 0);
}

#[test]
fn surface_wave_partition_major_layout_keeps_most_references_local() {
    let run = |layout| {
        RunConfig {
            machine: sixteen_sat(),
            workload: Some(WorkloadConfig::new(SurfaceWaveConfig {
                n: 40,
                total_ms: 500,
                threads: Some(4),
                layout,
                ..Default::default()
            })),
            program: Vec::new(),
            policy: none(),
            scheduler: SchedulerConfig::default(),
            seed: 1,
            report: Default::default(),
            budget_ns: 0,
        }
        .run()
        .unwrap()
    };
    let remote = |s: &Stats| s.refs.remote as f64 / s.refs.total as f64;
    let (v, h) = (
        run(numaplace_core::workload::PageLayout::Vertical),
        run(numaplace_core::workload::PageLayout::Horizontal),
    );
    assert!(
        remote(&v) < 0.5 * remote(&h),
        "{} vs {}",
        remote(&v),
        remote(&h)
    );
}
