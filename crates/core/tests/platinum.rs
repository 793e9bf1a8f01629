//! The coherent-memory mechanism and the `platinum` policy on a two-node toy machine, one
//! behaviour per test.

mod common;

use common::{engine, read, toy_machine, wait, write, Script};
use numaplace_core::component::Op;
use numaplace_core::machine::MachineConfig;
use numaplace_core::policy::{PlatinumConfig, PlatinumPolicy};
use numaplace_core::{Machine, Stats, Vpn};

/// The toy machine with 8 frames per node, so full nodes are easy to make.
fn toy() -> MachineConfig {
    MachineConfig {
        loaded_latency: None,
        frames_per_node: 8,
        node_frames: Vec::new(),
        memory_only_nodes: 0,
        ..toy_machine()
    }
}

fn run_with(
    machine: MachineConfig,
    config: PlatinumConfig,
    pages: u64,
    ops: Vec<Vec<Op>>,
) -> Stats {
    let policy = PlatinumPolicy::new(config, &Machine::new(machine.clone()).unwrap()).unwrap();
    engine(Box::new(Script::new(pages, ops)), Box::new(policy), machine)
        .run()
        .unwrap()
}

fn no_defrost() -> PlatinumConfig {
    PlatinumConfig {
        t1_ns: 10_000,
        t2_ns: 0,
        ..Default::default()
    }
}

fn run(ops: Vec<Vec<Op>>) -> Stats {
    run_with(toy(), no_defrost(), 1, ops)
}

#[test]
fn a_read_fault_replicates() {
    // Node 0 writes the page first (it is placed there, writable); node 1 then reads it.
    let s = run(vec![vec![write(0, 4)], vec![wait(5_000), read(0, 4)]]);
    assert_eq!(s.events.replications, 1);
    assert_eq!(s.pages[0].copies, 2);
    assert_eq!(s.threads[1].refs.local, 4, "node 1 reads its own copy");
    // The writable mapping on node 0 was restricted to read-only first: one shootdown.
    assert_eq!(s.events.invalidations, 1);
    let c = toy().costs;
    let replicate = c.page_fault_ns + c.replicate_fixed_ns + 16 * c.block_transfer_per_word_ns;
    assert_eq!(s.threads[1].fault_ns, replicate + c.shootdown_per_node_ns);
}

#[test]
fn a_write_to_a_replicated_page_invalidates_the_other_copies_and_charges_per_node_shootdown() {
    let s = run(vec![
        vec![read(0, 1), wait(20_000), write(0, 1)],
        vec![wait(5_000), read(0, 1)],
    ]);
    assert_eq!(s.events.replications, 1);
    assert_eq!(s.events.coherency_faults, 1);
    assert_eq!(s.pages[0].copies, 1, "only the writer's copy is left");
    assert_eq!(s.pages[0].home, 0);
    let c = toy().costs;
    // Thread 0: the first-touch read fault, then the write fault that frees one copy and
    // interrupts the one node mapping it.
    let write_fault = c.page_fault_ns
        + c.coherency_fault_fixed_ns
        + c.coherency_per_copy_ns
        + c.shootdown_per_node_ns;
    assert_eq!(s.threads[0].fault_ns, c.page_fault_ns + write_fault);
}

#[test]
fn a_page_invalidated_within_t1_freezes_and_is_mapped_remotely() {
    // Node 1's copy is invalidated at about 20 µs; it reads again 2 µs later (t1 = 10 µs).
    let s = run(vec![
        vec![read(0, 1), wait(20_000), write(0, 1)],
        vec![wait(5_000), read(0, 1), wait(17_000), read(0, 3)],
    ]);
    assert_eq!(s.events.freezes, 1);
    assert!(s.pages[0].frozen_at_end);
    assert_eq!(s.pages[0].copies, 1);
    assert_eq!(
        s.events.replications, 1,
        "the frozen page was not replicated again"
    );
    assert_eq!(
        s.threads[1].refs.remote, 3,
        "node 1 maps the frozen page remotely"
    );
}

#[test]
fn a_page_invalidated_longer_than_t1_ago_replicates_again() {
    let s = run(vec![
        vec![read(0, 1), wait(20_000), write(0, 1)],
        vec![wait(5_000), read(0, 1), wait(40_000), read(0, 3)],
    ]);
    assert_eq!(s.events.freezes, 0);
    assert_eq!(s.events.replications, 2);
    assert_eq!(s.threads[1].refs.remote, 0);
}

#[test]
fn the_defrost_daemon_thaws_it() {
    let config = PlatinumConfig {
        t1_ns: 10_000,
        t2_ns: 50_000,
        ..Default::default()
    };
    // Frozen at about 22 µs; the daemon runs at 50 µs; node 1 reads again at about 80 µs.
    let s = run_with(
        toy(),
        config,
        1,
        vec![
            vec![read(0, 1), wait(20_000), write(0, 1)],
            vec![
                wait(5_000),
                read(0, 1),
                wait(17_000),
                read(0, 3),
                wait(60_000),
                read(0, 2),
            ],
        ],
    );
    assert_eq!(s.events.freezes, 1);
    assert!(s.events.defrosts >= 1);
    assert!(!s.pages[0].frozen_at_end);
    assert_eq!(
        s.pages[0].copies, 2,
        "thawed, the page was replicated on its next read"
    );
    assert_eq!(s.threads[1].refs.local, 1 + 2);
    assert!(
        s.daemon_busy_ns > 0,
        "invalidating the mappings costs shootdowns"
    );
}

#[test]
fn without_the_daemon_a_frozen_page_stays_frozen() {
    let s = run(vec![
        vec![read(0, 1), wait(20_000), write(0, 1)],
        vec![
            wait(5_000),
            read(0, 1),
            wait(17_000),
            read(0, 3),
            wait(60_000),
            read(0, 2),
        ],
    ]);
    assert!(s.pages[0].frozen_at_end);
    assert_eq!(s.events.defrosts, 0);
    assert_eq!(s.threads[1].refs.remote, 5);
}

#[test]
fn thaw_on_access_thaws_a_frozen_page_at_a_fault_after_t1() {
    let config = PlatinumConfig {
        thaw_on_access: true,
        ..no_defrost()
    };
    // Frozen at about 22 µs by node 1's read, which maps it writable (full rights, §3.2);
    // node 2's first read 30 µs later (past t1) faults on the frozen page.
    let machine = MachineConfig { nodes: 3, ..toy() };
    let s = run_with(
        machine,
        config,
        1,
        vec![
            vec![read(0, 1), wait(20_000), write(0, 1)],
            vec![wait(5_000), read(0, 1), wait(17_000), read(0, 1)],
            vec![wait(52_000), read(0, 1)],
        ],
    );
    assert_eq!(s.events.freezes, 1);
    assert_eq!(
        s.events.defrosts, 1,
        "the read fault after t1 thawed the page"
    );
    assert!(!s.pages[0].frozen_at_end);
    assert_eq!(
        s.events.replications, 2,
        "node 1's read at 5 µs, then node 2's of the thawed page"
    );
}

#[test]
fn a_full_node_refuses_a_replica_and_the_fault_falls_back_to_a_remote_mapping() {
    let mut machine = toy();
    machine.frames_per_node = 1;
    // Node 1's only frame holds page 1; its read of page 0 cannot be replicated.
    let s = run_with(
        machine,
        no_defrost(),
        2,
        vec![
            vec![write(0, 1)],
            vec![write(1, 1), wait(5_000), read(0, 4)],
        ],
    );
    assert_eq!(s.events.refused, 1);
    assert_eq!(s.events.replications, 0);
    assert_eq!(s.pages[0].copies, 1);
    assert_eq!(s.threads[1].refs.remote, 4);
}

#[test]
fn copies_count_against_each_nodes_frames() {
    let mut machine = toy();
    machine.frames_per_node = 2;
    // Node 1 first-touches page 1, then replicates page 0: both its frames are used, so
    // its first touch of page 2 must go to node 0.
    let s = run_with(
        machine,
        no_defrost(),
        3,
        vec![
            vec![write(0, 1)],
            vec![write(1, 1), wait(5_000), read(0, 1), write(2, 1)],
        ],
    );
    assert_eq!(s.pages[0].copies, 2);
    assert_eq!(
        s.pages[2].home, 0,
        "no frame left on node 1 after the replica"
    );
}

#[test]
fn a_write_miss_on_a_single_remote_copy_migrates_it_and_invalidates_other_mappings() {
    let s = run(vec![vec![write(0, 1)], vec![wait(5_000), write(0, 2)]]);
    assert_eq!(s.events.migrations, 1);
    assert_eq!(s.pages[0].home, 1);
    assert_eq!(s.threads[1].refs.local, 2);
    assert_eq!(
        s.events.invalidations, 1,
        "node 0's mapping was invalidated"
    );
}

#[test]
fn reads_of_a_replicated_page_cost_the_cached_latency_on_caching_machines() {
    let mut machine = toy();
    machine.costs.cached_read_ns = Some(1);
    let s = run_with(
        machine,
        no_defrost(),
        1,
        vec![vec![write(0, 1)], vec![wait(5_000), read(0, 7)]],
    );
    assert_eq!(s.threads[1].refs.cached, 7);
    assert_eq!(s.refs.cached, 7);
}

#[test]
fn concurrent_faults_on_one_page_serialise_on_its_fault_handler() {
    let mut machine = toy();
    machine.nodes = 3;
    // Nodes 1 and 2 read-fault on page 0 at the same instant: one waits for the other.
    let s = run_with(
        machine,
        no_defrost(),
        1,
        vec![
            vec![write(0, 1)],
            vec![wait(5_000), read(0, 1)],
            vec![wait(5_000), read(0, 1)],
        ],
    );
    assert_eq!(s.pages[0].contended_faults, 1);
    let c = toy().costs;
    let replicate = c.page_fault_ns + c.replicate_fixed_ns + 16 * c.block_transfer_per_word_ns;
    // The first replication also restricted node 0's writable mapping.
    assert_eq!(
        s.pages[0].fault_wait_ns,
        replicate + c.shootdown_per_node_ns
    );
}

#[test]
fn a_spin_wait_polls_with_references_until_the_event_advances() {
    let spin = Op::Spin {
        vpn: Vpn(0),
        write: false,
        count: 1,
        event: 0,
        at_least: 1,
    };
    let s = run_with(
        toy(),
        no_defrost(),
        2,
        vec![
            vec![
                write(0, 1),
                wait(1_000),
                write(1, 1),
                wait(9_000),
                Op::Advance { event: 0, to: 1 },
            ],
            vec![wait(2_000), spin],
        ],
    );
    // Node 1 polls page 0 for about 8 µs: each poll a reference.
    assert!(
        s.threads[1].refs.total > 100,
        "{} polls",
        s.threads[1].refs.total
    );
    assert!(s.threads[1].completion_ns >= 10_000);
}

#[test]
fn replicas_never_take_the_frames_that_unplaced_pages_need() {
    // Four frames for three pages: page 0's replica fits, page 1's would leave no frame
    // for page 2 (touched last), so it is refused and page 2 still finds a home.
    let machine = MachineConfig {
        loaded_latency: None,
        frames_per_node: 2,
        node_frames: Vec::new(),
        memory_only_nodes: 0,
        ..toy_machine()
    };
    let s = run_with(
        machine,
        no_defrost(),
        3,
        vec![
            vec![
                read(0, 1),
                wait(10_000),
                read(1, 1),
                wait(10_000),
                read(2, 1),
            ],
            vec![wait(5_000), read(0, 1), wait(10_000), read(1, 1)],
        ],
    );
    // Refused: page 1's replica, and page 2's local copy after it was placed on node 1.
    assert_eq!(s.events.replications, 1);
    assert_eq!(s.events.refused, 2);
    assert_eq!((s.pages[2].copies, s.pages[2].home), (1, 1));
}
