//! Contention: memory modules serve local and remote accesses with their own occupancy,
//! and a remote access holds the switch ports of both ends of its path.

mod common;

use common::{engine, read, toy_machine, wait, Script};
use numaplace_core::component::Op;
use numaplace_core::machine::MachineConfig;
use numaplace_core::policy::{StaticConfig, StaticPlacement};
use numaplace_core::{Machine, Policy, PolicyConfig, Stats};

/// Three nodes with free faults, so only the queues decide who waits: every page on
/// node 0, remote reads cost 50 ns a word.
fn machine(local_module: u64, remote_module: Option<u64>, switch: u64) -> MachineConfig {
    let mut m = toy_machine();
    m.nodes = 3;
    m.contention = true;
    m.costs.page_fault_ns = 0;
    m.costs.module_service_ns = local_module;
    m.costs.remote_module_service_ns = remote_module;
    m.costs.switch_service_ns = switch;
    m
}

fn policy(m: &MachineConfig, placement: StaticPlacement) -> Box<dyn Policy> {
    PolicyConfig::new(StaticConfig {
        placement,
        node: 0,
        ..Default::default()
    })
    .build(&Machine::new(m.clone()).unwrap())
    .unwrap()
}

fn run(m: MachineConfig, ops: Vec<Vec<Op>>) -> Stats {
    engine(
        Box::new(Script::new(2, ops)),
        policy(&m, StaticPlacement::Fixed),
        m,
    )
    .run()
    .unwrap()
}

fn total_wait(s: &Stats) -> u64 {
    s.threads.iter().map(|t| t.contention_wait_ns).sum()
}

#[test]
fn remote_reads_of_one_module_wait_for_its_remote_service_time() {
    // Threads on nodes 1 and 2 read node 0's memory at the same instant: one waits for
    // the other's occupancy of the module.
    let s = run(
        machine(10, Some(1000), 0),
        vec![vec![], vec![read(0, 1)], vec![read(0, 1)]],
    );
    assert_eq!(total_wait(&s), 1000);
}

#[test]
fn without_a_remote_service_time_a_remote_read_holds_the_module_as_a_local_one() {
    let s = run(
        machine(10, None, 0),
        vec![vec![], vec![read(0, 1)], vec![read(0, 1)]],
    );
    assert_eq!(total_wait(&s), 10);
}

#[test]
fn remote_reads_into_one_node_serialise_on_its_switch_port() {
    let s = run(
        machine(0, Some(0), 2000),
        vec![vec![], vec![read(0, 1)], vec![read(1, 1)]],
    );
    assert_eq!(total_wait(&s), 2000);
}

#[test]
fn a_local_read_does_not_wait_for_the_switch() {
    // Node 1 reads node 0 remotely first; node 0's own read comes just after and finds
    // the switch port busy, but a local access does not use the switch.
    let s = run(
        machine(0, Some(0), 2000),
        vec![vec![wait(1), read(0, 1)], vec![read(1, 1)]],
    );
    assert_eq!(s.threads[0].contention_wait_ns, 0);
}

#[test]
fn a_remote_run_holds_the_switch_for_each_of_its_words() {
    let s = run(
        machine(0, Some(0), 100),
        vec![vec![], vec![read(0, 8)], vec![wait(1), read(1, 1)]],
    );
    assert_eq!(s.threads[2].contention_wait_ns, 8 * 100 - 1);
}

#[test]
fn remote_reads_from_one_node_to_different_modules_serialise_on_its_port() {
    // Two processors on node 1 read pages on node 0 and node 2: different modules, one
    // source port.
    let mut m = machine(0, Some(0), 500);
    m.procs_per_node = 2;
    let policy = policy(&m, StaticPlacement::RoundRobin);
    // Round robin puts page 0 on node 0 and page 2 on node 2; threads 2 and 3 run on
    // node 1.
    let ops = vec![vec![], vec![], vec![read(0, 1)], vec![read(2, 1)]];
    let s = engine(Box::new(Script::new(3, ops)), policy, m)
        .run()
        .unwrap();
    assert_eq!(total_wait(&s), 500);
}
