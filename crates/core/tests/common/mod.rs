//! What the core's integration tests share: the two-node toy machine, a program of fixed
//! operation lists, and building an engine around them.
#![allow(dead_code)]

use numaplace_core::machine::{Costs, MachineConfig, Topology};
use numaplace_core::memory::Layout;
use numaplace_core::sched::SchedulerConfig;
use numaplace_core::workload::{Op, Program};
use numaplace_core::{Engine, EngineOptions, Machine, Ns, Policy, Vpn};

/// Two nodes, one processor each, 64-byte pages of 16 four-byte words.
pub fn toy_machine() -> MachineConfig {
    MachineConfig {
        preset: "toy".into(),
        description: "two-node toy".into(),
        nodes: 2,
        procs_per_node: 1,
        frames_per_node: 64,
        page_size_bytes: 64,
        word_size_bytes: 4,
        topology: Topology::Uniform,
        costs: Costs {
            local_read_ns: 10,
            local_write_ns: 12,
            remote_read_ns: 50,
            remote_write_ns: 60,
            cached_read_ns: None,
            page_fault_ns: 100,
            migrate_fixed_ns: 1000,
            replicate_fixed_ns: 800,
            block_transfer_per_word_ns: 2,
            coherency_fault_fixed_ns: 500,
            coherency_per_copy_ns: 50,
            shootdown_per_node_ns: 30,
            pte_lock_ns: 5,
            pte_examine_ns: 3,
            module_service_ns: 10,
        },
        contention: false,
    }
}

/// A program whose threads each run one fixed list of operations over `pages` pages.
pub struct Script {
    layout: Layout,
    ops: Vec<Vec<Op>>,
}

impl Script {
    pub fn new(pages: u64, ops: Vec<Vec<Op>>) -> Script {
        let mut layout = Layout::new();
        layout.alloc("data", pages * 16, 4, 64);
        Script { layout, ops }
    }
}

impl Program for Script {
    fn name(&self) -> &str {
        "script"
    }
    fn threads(&self) -> u32 {
        self.ops.len() as u32
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn placement_hints(&self) -> &[Option<u32>] {
        &[]
    }
    fn next_ops(&mut self, t: u32, _running: &[bool], out: &mut Vec<Op>) {
        // The list is handed over once; an empty answer afterwards ends the thread.
        out.append(&mut self.ops[t as usize]);
    }
}

pub fn read(page: u32, count: u32) -> Op {
    Op::Ref {
        vpn: Vpn(page),
        write: false,
        count,
    }
}

pub fn write(page: u32, count: u32) -> Op {
    Op::Ref {
        vpn: Vpn(page),
        write: true,
        count,
    }
}

pub fn wait(ns: u64) -> Op {
    Op::Compute(Ns(ns))
}

/// An engine for one program under `policy` on `machine`, dedicated scheduler, seed 1,
/// with the per-page report.
pub fn engine(
    program: Box<dyn Program>,
    policy: Box<dyn Policy>,
    machine: MachineConfig,
) -> Engine {
    Engine::new(
        Machine::new(machine).unwrap(),
        vec![program],
        policy,
        SchedulerConfig::default().build(),
        EngineOptions {
            seed: 1,
            per_page: true,
            series_interval: None,
        },
    )
    .unwrap()
}
