//! `machine.compute_time_pct`: a processor faster (or slower) than the one a workload's
//! compute costs were estimated for scales its computation, and nothing else.

mod common;

use common::{read, toy_machine, wait, Script};
use numaplace_core::component::SchedulerConfig;
use numaplace_core::machine::MachineConfig;
use numaplace_core::policy::{StaticConfig, StaticPlacement};
use numaplace_core::{Engine, EngineOptions, Machine, PolicyConfig, Stats};

fn run(machine: MachineConfig) -> Stats {
    let m = Machine::new(machine).unwrap();
    let policy = PolicyConfig::new(StaticConfig {
        placement: StaticPlacement::FirstTouch,
        ..Default::default()
    })
    .build(&m)
    .unwrap();
    let ops = vec![read(0, 16), wait(1_000_000), read(0, 16), wait(3_000_000)];
    let program: Box<dyn numaplace_core::component::Program> = Box::new(Script::new(1, vec![ops]));
    Engine::new(
        m,
        vec![program.into()],
        policy,
        SchedulerConfig::default().build(),
        EngineOptions::default(),
    )
    .unwrap()
    .run()
    .unwrap()
}

fn with_pct(pct: u32) -> MachineConfig {
    MachineConfig {
        loaded_latency: None,
        compute_time_pct: pct,
        clock_mhz: None,
        ..toy_machine()
    }
}

#[test]
fn computation_takes_its_percentage_and_references_are_unchanged() {
    let full = run(with_pct(100));
    let tenth = run(with_pct(10));
    // 4 ms of computation become 0.4 ms; the references and their faults cost the same.
    assert_eq!(full.makespan_ns - tenth.makespan_ns, 3_600_000);
    assert_eq!(full.refs, tenth.refs);
    assert_eq!(full.events, tenth.events);
    let double = run(with_pct(200));
    assert_eq!(double.makespan_ns - full.makespan_ns, 4_000_000);
}

#[test]
fn the_default_is_the_workloads_own_figures_and_is_left_out_of_the_configuration() {
    assert_eq!(toy_machine().compute_time_pct, 100);
    let text = serde_json::to_string(&toy_machine()).unwrap();
    assert!(!text.contains("compute_time_pct"), "{text}");
    let text = serde_json::to_string(&with_pct(10)).unwrap();
    assert!(text.contains("\"compute_time_pct\":10"), "{text}");
}

#[test]
fn a_zero_percentage_is_refused_naming_the_field() {
    let e = Machine::new(with_pct(0)).unwrap_err();
    assert_eq!(e.field, "machine.compute_time_pct");
}
