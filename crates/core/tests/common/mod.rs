//! What the core's integration tests share: the two-node toy machine, a program of fixed
//! operation lists, and building an engine around them.
#![allow(dead_code)]

use numaplace_core::component::{Op, Program, SchedulerConfig};
use numaplace_core::machine::MachineConfig;
use numaplace_core::memory::Layout;
use numaplace_core::{Engine, EngineOptions, Machine, Ns, Policy, Vpn};

/// Two nodes, one processor each, 64-byte pages of 16 four-byte words.
pub fn toy_machine() -> MachineConfig {
    numaplace_core::mm::test_machine_config(2)
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
    Op::run(Vpn(page), false, count)
}

pub fn write(page: u32, count: u32) -> Op {
    Op::run(Vpn(page), true, count)
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
    engine_seeded(program, policy, machine, 1)
}

/// [`engine`] with the run's seed given.
pub fn engine_seeded(
    program: Box<dyn Program>,
    policy: Box<dyn Policy>,
    machine: MachineConfig,
    seed: u64,
) -> Engine {
    Engine::new(
        Machine::new(machine).unwrap(),
        vec![program.into()],
        policy,
        SchedulerConfig::default().build(),
        EngineOptions {
            seed,
            per_page: true,
            series_interval: None,
            series_by_array: false,
            budget: None,
        },
    )
    .unwrap()
}
