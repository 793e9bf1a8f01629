//! Engine behaviour on small machines: accounting identities, determinism, the action API,
//! synchronisation, schedulers, and the NUMA effects the papers build on.

mod common;

use common::{engine, read, toy_machine, wait, Script};
use numaplace_core::component::SchedulerConfig;
use numaplace_core::component::{DaemonNext, DaemonPlacement, DaemonSpec, Fault};
use numaplace_core::component::{Op, Program, WorkloadConfig};
use numaplace_core::machine::{MachineConfig, Topology};
use numaplace_core::memory::{Access, Layout};
use numaplace_core::mm::Mm;
use numaplace_core::policy::{StaticConfig, StaticPlacement};
use numaplace_core::sched::{ScriptAction, ScriptEvent, ScriptedConfig};
use numaplace_core::workload::common::Variant;
use numaplace_core::workload::{JacobiConfig, MatvecConfig, PageLayout};
use numaplace_core::{Machine, NodeId, Ns, Policy, PolicyConfig, RunConfig, SimError, Stats, Vpn};

/// A 16-node machine with the Butterfly Plus's local and remote read costs and cheap faults.
fn sixteen_nodes() -> MachineConfig {
    let mut m = toy_machine();
    m.nodes = 16;
    m.frames_per_node = 4096;
    m.page_size_bytes = 1024;
    m.costs.local_read_ns = 320;
    m.costs.local_write_ns = 320;
    m.costs.remote_read_ns = 5000;
    m.costs.remote_write_ns = 5000;
    m
}

fn run_cfg(machine: MachineConfig, workload: WorkloadConfig, policy: PolicyConfig) -> Stats {
    RunConfig {
        machine,
        workload: Some(workload),
        program: Vec::new(),
        policy,
        scheduler: SchedulerConfig::default(),
        seed: 7,
        report: Default::default(),
        budget_ns: 0,
    }
    .run()
    .expect("run succeeds")
}

fn static_policy(placement: StaticPlacement) -> PolicyConfig {
    PolicyConfig::new(StaticConfig {
        placement,
        ..Default::default()
    })
}

fn small_jacobi(variant: Variant, layout: PageLayout) -> WorkloadConfig {
    WorkloadConfig::new(JacobiConfig {
        n: 128,
        iterations: 3,
        variant,
        layout,
        ..Default::default()
    })
}

#[test]
fn local_remote_and_cached_references_add_up_to_the_total() {
    for placement in [
        StaticPlacement::FirstTouch,
        StaticPlacement::RoundRobin,
        StaticPlacement::Fixed,
    ] {
        let s = run_cfg(
            sixteen_nodes(),
            small_jacobi(Variant::Uma, PageLayout::Horizontal),
            static_policy(placement),
        );
        assert_eq!(s.refs.local + s.refs.remote + s.refs.cached, s.refs.total);
        let per_thread: u64 = s.threads.iter().map(|t| t.refs.total).sum();
        assert_eq!(per_thread, s.refs.total);
        let per_page: u64 = s.pages.iter().map(|p| p.refs.total).sum();
        assert_eq!(per_page, s.refs.total);
    }
}

#[test]
fn makespan_is_at_least_every_threads_completion_time() {
    let s = run_cfg(
        sixteen_nodes(),
        small_jacobi(Variant::Numa, PageLayout::Vertical),
        static_policy(StaticPlacement::Program),
    );
    assert!(s.makespan_ns > 0);
    assert!(s.threads.iter().all(|t| t.completion_ns <= s.makespan_ns));
    assert!(s.threads.iter().any(|t| t.completion_ns == s.makespan_ns));
}

#[test]
fn same_config_and_seed_give_identical_statistics() {
    let a = run_cfg(
        sixteen_nodes(),
        small_jacobi(Variant::Uma, PageLayout::Horizontal),
        static_policy(StaticPlacement::FirstTouch),
    );
    let b = run_cfg(
        sixteen_nodes(),
        small_jacobi(Variant::Uma, PageLayout::Horizontal),
        static_policy(StaticPlacement::FirstTouch),
    );
    assert_eq!(a, b);
}

#[test]
fn jacobi_numa_variant_beats_uma_round_robin() {
    let numa = run_cfg(
        sixteen_nodes(),
        small_jacobi(Variant::Numa, PageLayout::Vertical),
        static_policy(StaticPlacement::Program),
    );
    let uma = run_cfg(
        sixteen_nodes(),
        small_jacobi(Variant::Uma, PageLayout::Vertical),
        static_policy(StaticPlacement::RoundRobin),
    );
    assert!(
        numa.makespan_ns < uma.makespan_ns,
        "numa {} ns vs uma round-robin {} ns",
        numa.makespan_ns,
        uma.makespan_ns
    );
    assert!(numa.refs.remote < uma.refs.remote);
}

#[test]
fn matvec_rows_on_the_reading_node_beat_all_rows_on_one_node_by_the_remote_local_ratio() {
    let mut machine = sixteen_nodes();
    machine.costs.page_fault_ns = 0;
    let m = Machine::new(machine.clone()).unwrap();
    let expected = m.remote_local_ratio();
    let mv = |variant| {
        WorkloadConfig::new(MatvecConfig {
            n: 512,
            repeat: 10,
            variant,
            ..Default::default()
        })
    };
    let local = run_cfg(
        machine.clone(),
        mv(Variant::Numa),
        static_policy(StaticPlacement::Program),
    );
    let one_node = run_cfg(
        machine,
        mv(Variant::Uma),
        static_policy(StaticPlacement::Fixed),
    );
    let ratio = one_node.makespan_ns as f64 / local.makespan_ns as f64;
    assert!(
        (ratio - expected).abs() / expected < 0.05,
        "ratio {ratio:.3}, remote/local {expected:.3}"
    );
}

/// A one-thread program that computes for `delay`, then reads page `0` `count` times.
struct OneRead {
    layout: Layout,
    count: u32,
    delay: Ns,
    done: bool,
}

impl OneRead {
    fn new(count: u32) -> OneRead {
        let mut layout = Layout::new();
        layout.alloc("x", 16, 4, 64);
        OneRead {
            layout,
            count,
            delay: Ns::ZERO,
            done: false,
        }
    }
}

impl Program for OneRead {
    fn name(&self) -> &str {
        "one-read"
    }
    fn threads(&self) -> u32 {
        1
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn placement_hints(&self) -> &[Option<u32>] {
        &[]
    }
    fn next_ops(&mut self, _t: u32, _running: &[bool], out: &mut Vec<Op>) {
        if !self.done {
            self.done = true;
            if self.delay > Ns::ZERO {
                out.push(Op::Compute(self.delay));
            }
            out.push(Op::run(Vpn(0), false, self.count));
        }
    }
}

/// Places every page on node 0; on a fault, migrates the page to node 1 and maps it.
struct MigrateOnFault;

impl Policy for MigrateOnFault {
    fn name(&self) -> &'static str {
        "migrate-on-fault"
    }
    fn initial_placement(&mut self, _m: &Machine, _v: Vpn, _h: Option<NodeId>) -> Option<NodeId> {
        Some(NodeId(0))
    }
    fn on_fault(&mut self, ctx: &mut dyn Mm, f: Fault) {
        ctx.migrate(f.vpn, NodeId(1)).expect("node 1 has frames");
        ctx.map_nearest(f.vpn, f.node, Access::Read);
    }
}

#[test]
fn migration_moves_the_copy_remaps_and_charges_the_migration_cost() {
    let machine = toy_machine();
    let m = Machine::new(machine.clone()).unwrap();
    let s = engine(Box::new(OneRead::new(4)), Box::new(MigrateOnFault), machine)
        .run()
        .unwrap();
    assert_eq!(s.events.migrations, 1);
    assert_eq!(s.pages[0].home, 1, "the copy moved to node 1");
    assert_eq!(s.pages[0].copies, 1);
    // The thread on node 0 now reaches the page remotely.
    assert_eq!(s.refs.remote, 4);
    let c = m.costs();
    let expected = c.page_fault_ns + m.migration_cost().0 + 4 * c.remote_read_ns;
    assert_eq!(
        m.migration_cost().0,
        c.migrate_fixed_ns + 16 * c.block_transfer_per_word_ns
    );
    assert_eq!(s.makespan_ns, expected);
}

/// Locks node 0's page-table entry of page 0 from time 0 for 10 µs with a daemon.
struct LockingDaemon;

impl Policy for LockingDaemon {
    fn name(&self) -> &'static str {
        "locking-daemon"
    }
    fn initial_placement(&mut self, _m: &Machine, _v: Vpn, _h: Option<NodeId>) -> Option<NodeId> {
        Some(NodeId(0))
    }
    fn daemons(&self, _m: &Machine) -> Vec<DaemonSpec> {
        vec![DaemonSpec {
            name: "locker".into(),
            placement: DaemonPlacement::OwnProcessor,
            first_wake: Ns::ZERO,
        }]
    }
    fn on_daemon(&mut self, ctx: &mut dyn Mm, _id: usize) -> DaemonNext {
        ctx.lock_pte(Vpn(0), NodeId(0), Ns::from_us(10));
        DaemonNext::Stop
    }
}

#[test]
fn a_reference_waits_for_a_page_table_entry_locked_by_a_daemon() {
    let machine = toy_machine();
    let c = machine.costs.clone();
    let mut program = OneRead::new(1);
    program.delay = Ns(1000);
    let s = engine(Box::new(program), Box::new(LockingDaemon), machine)
        .run()
        .unwrap();
    // The daemon holds the lock from its lock cost until 10 µs after it; the thread
    // faults at 1 µs and then waits for the lock.
    let unlock = c.pte_lock_ns + 10_000;
    assert_eq!(s.threads[0].pte_wait_ns, unlock - 1000 - c.page_fault_ns);
    assert_eq!(s.makespan_ns, unlock + c.local_read_ns);
}

#[test]
fn contention_makes_many_readers_of_one_module_slower() {
    let mk = |contention| {
        let mut m = sixteen_nodes();
        m.contention = contention;
        run_cfg(
            m,
            WorkloadConfig::new(MatvecConfig {
                n: 256,
                ..Default::default()
            }),
            static_policy(StaticPlacement::Fixed),
        )
    };
    let free = mk(false);
    let contended = mk(true);
    assert!(contended.makespan_ns > free.makespan_ns);
    assert!(contended.threads.iter().any(|t| t.contention_wait_ns > 0));
}

#[test]
fn a_preempted_threads_chunks_move_to_running_threads() {
    let mut machine = toy_machine();
    machine.frames_per_node = 1024;
    let cfg = RunConfig {
        machine,
        workload: Some(WorkloadConfig::new(MatvecConfig {
            n: 64,
            iterations: 3,
            ..Default::default()
        })),
        program: Vec::new(),
        policy: static_policy(StaticPlacement::FirstTouch),
        scheduler: SchedulerConfig::new(ScriptedConfig {
            first_proc: 0,
            events: vec![ScriptEvent {
                at_ns: 0,
                at_construct: None,
                action: ScriptAction::Preempt,
                threads: [1, 1],
                program: None,
                proc: None,
            }],
        }),
        seed: 1,
        report: Default::default(),
        budget_ns: 0,
    };
    let err = cfg
        .run()
        .expect_err("a preempted thread never reaches the barrier");
    assert!(matches!(err, SimError::Deadlock { .. }), "{err}");
    // Resumed on the other node later, it completes; thread 0 did thread 1's later chunks.
    let mut cfg = cfg;
    if let Some(s) = cfg.scheduler.get_mut::<ScriptedConfig>() {
        s.events.push(ScriptEvent {
            at_ns: 10_000_000,
            at_construct: None,
            action: ScriptAction::Resume,
            threads: [1, 1],
            program: None,
            proc: Some(1),
        });
    }
    let s = cfg.run().unwrap();
    assert!(s.threads[0].refs.total > s.threads[1].refs.total);
}

#[test]
fn pages_of_a_full_node_spill_to_the_nearest_node_with_frames() {
    let mut machine = toy_machine();
    machine.frames_per_node = 40;
    // 32 rows of 32 four-byte words: 64 pages of A plus 2 of y, 66 pages > 40 frames.
    let s = run_cfg(
        machine,
        WorkloadConfig::new(MatvecConfig {
            n: 32,
            ..Default::default()
        }),
        static_policy(StaticPlacement::Fixed),
    );
    let on0 = s.pages.iter().filter(|p| p.home == 0).count();
    assert_eq!(on0, 40);
}

#[test]
fn a_workload_larger_than_memory_is_a_configuration_error() {
    let mut machine = toy_machine();
    machine.frames_per_node = 10;
    let cfg = RunConfig {
        machine,
        workload: Some(WorkloadConfig::new(MatvecConfig {
            n: 64,
            ..Default::default()
        })),
        program: Vec::new(),
        policy: PolicyConfig::default(),
        scheduler: SchedulerConfig::default(),
        seed: 1,
        report: Default::default(),
        budget_ns: 0,
    };
    match cfg.run() {
        Err(SimError::Config(e)) => assert_eq!(e.field, "machine.frames_per_node"),
        other => panic!("expected a configuration error, got {other:?}"),
    }
}

#[test]
fn distance_topology_scales_remote_cost_with_distance() {
    let mut m = toy_machine();
    m.nodes = 3;
    m.topology = Topology::Distance {
        matrix: vec![vec![10, 20, 30], vec![20, 10, 20], vec![30, 20, 10]],
        reference_distance: None,
    };
    let m = Machine::new(m).unwrap();
    assert_eq!(m.read_ns(NodeId(0), NodeId(0)), 10);
    assert_eq!(m.read_ns(NodeId(0), NodeId(1)), 50);
    // Twice as far beyond local: twice the extra latency.
    assert_eq!(m.read_ns(NodeId(0), NodeId(2)), 90);
}

#[test]
fn page_size_must_be_positive() {
    let mut m = toy_machine();
    m.page_size_bytes = 0;
    let e = Machine::new(m).unwrap_err();
    assert_eq!(e.field, "machine.page_size_bytes");
}

#[test]
fn page_size_decides_which_jacobi_partitions_share_a_page() {
    // Horizontal layout: a 2 KB page holds a whole 512-byte-partition-row's neighbours, so
    // pages span partitions; vertical keeps them within one partition.
    let mut machine = sixteen_nodes();
    machine.page_size_bytes = 2048;
    let horizontal = run_cfg(
        machine.clone(),
        small_jacobi(Variant::Numa, PageLayout::Horizontal),
        static_policy(StaticPlacement::Program),
    );
    let vertical = run_cfg(
        machine,
        small_jacobi(Variant::Numa, PageLayout::Vertical),
        static_policy(StaticPlacement::Program),
    );
    assert!(horizontal.refs.remote > vertical.refs.remote);
}

#[test]
fn program_placement_falls_back_for_pages_the_program_does_not_place() {
    let policy = PolicyConfig::new(StaticConfig {
        placement: StaticPlacement::Program,
        fallback: StaticPlacement::RoundRobin,
        ..Default::default()
    });
    let s = run_cfg(
        sixteen_nodes(),
        small_jacobi(Variant::Uma, PageLayout::Vertical),
        policy,
    );
    // Round robin: page v on node v mod 16, placed before any touch.
    let wrong: Vec<_> = s
        .pages
        .iter()
        .filter(|p| p.home as u32 != p.vpn % 16)
        .map(|p| (p.vpn, p.home))
        .collect();
    assert!(wrong.is_empty(), "{wrong:?}");
}

#[test]
fn spinning_on_an_event_count_nobody_can_advance_is_a_deadlock_error() {
    // Thread 0 spins on event count 0 reaching 1; thread 1 finishes without advancing it.
    let spin = Op::Spin {
        vpn: Vpn(0),
        write: false,
        count: 1,
        event: 0,
        at_least: 1,
    };
    let program = Script::new(1, vec![vec![spin], vec![Op::Compute(Ns(500))]]);
    let err = engine(Box::new(program), Box::new(MigrateOnFault), toy_machine())
        .run()
        .unwrap_err();
    assert!(
        matches!(err, SimError::Deadlock { ref threads, .. } if threads == &vec![0]),
        "{err}"
    );
}

#[test]
fn an_awaiting_thread_resumes_when_the_count_is_advanced_and_makes_no_references_meanwhile() {
    // Thread 0 waits for event count 0 to reach 1; thread 1 computes 1000 ns, then
    // advances it. Thread 0 then reads once.
    let program = Script::new(
        1,
        vec![
            vec![
                Op::Await {
                    event: 0,
                    at_least: 1,
                },
                read(0, 1),
            ],
            vec![wait(1000), Op::Advance { event: 0, to: 1 }],
        ],
    );
    let s = engine(Box::new(program), Box::new(MigrateOnFault), toy_machine())
        .run()
        .unwrap();
    let t0 = &s.threads[0];
    assert_eq!(t0.refs.local + t0.refs.remote, 1);
    assert!(t0.sync_wait_ns >= 1000, "waited {} ns", t0.sync_wait_ns);
    assert!(s.makespan_ns >= 1000);
}

#[test]
fn awaiting_a_value_already_reached_does_not_wait() {
    let program = Script::new(
        1,
        vec![vec![
            Op::Advance { event: 3, to: 2 },
            Op::Await {
                event: 3,
                at_least: 2,
            },
            read(0, 1),
        ]],
    );
    let s = engine(Box::new(program), Box::new(MigrateOnFault), toy_machine())
        .run()
        .unwrap();
    assert_eq!(s.threads[0].sync_wait_ns, 0);
}

#[test]
fn awaiting_an_event_count_nobody_advances_is_a_deadlock_error() {
    let program = Script::new(
        1,
        vec![
            vec![Op::Await {
                event: 0,
                at_least: 1,
            }],
            vec![Op::Compute(Ns(500))],
        ],
    );
    let err = engine(Box::new(program), Box::new(MigrateOnFault), toy_machine())
        .run()
        .unwrap_err();
    assert!(
        matches!(err, SimError::Deadlock { ref threads, .. } if threads == &vec![0]),
        "{err}"
    );
}
