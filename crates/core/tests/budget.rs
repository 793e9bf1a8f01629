//! A run's simulated-time budget (`RunConfig::budget_ns`, `EngineOptions::budget`): a run
//! that would never finish is stopped at the budget and reported as not finished, and a
//! run that finishes within it is unchanged.

mod common;

use common::{read, toy_machine, wait, write, Script};
use numaplace_core::component::SchedulerConfig;
use numaplace_core::component::{Op, Program, WorkloadConfig};
use numaplace_core::memory::Layout;
use numaplace_core::policy::{StaticConfig, StaticPlacement};
use numaplace_core::workload::JacobiConfig;
use numaplace_core::{
    ConfigError, Engine, EngineOptions, Machine, Ns, PolicyConfig, RunConfig, SimError, Stats,
};

fn static_first_touch() -> Box<dyn numaplace_core::Policy> {
    PolicyConfig::new(StaticConfig {
        placement: StaticPlacement::FirstTouch,
        ..Default::default()
    })
    .build(&Machine::new(toy_machine()).unwrap())
    .unwrap()
}

fn run(program: Box<dyn Program>, budget: Option<Ns>) -> Stats {
    Engine::new(
        Machine::new(toy_machine()).unwrap(),
        vec![program.into()],
        static_first_touch(),
        SchedulerConfig::default().build(),
        EngineOptions {
            seed: 1,
            per_page: true,
            series_interval: None,
            series_by_array: false,
            budget,
        },
    )
    .unwrap()
    .run()
    .expect("a run with a budget ends with a result")
}

/// Two threads that each read and write a page of their own, with computation between.
fn finite() -> Box<dyn Program> {
    let ops = |p: u32| vec![write(p, 16), wait(1_000_000), read(p, 16), wait(1_000_000)];
    Box::new(Script::new(2, vec![ops(0), ops(1)]))
}

/// A program whose one thread reads its page and computes for ever: a run that never
/// ends (nothing ever blocks, so it is no deadlock either).
struct Forever(Layout);

impl Program for Forever {
    fn name(&self) -> &str {
        "forever"
    }
    fn threads(&self) -> u32 {
        1
    }
    fn layout(&self) -> &Layout {
        &self.0
    }
    fn placement_hints(&self) -> &[Option<u32>] {
        &[]
    }
    fn next_ops(&mut self, _t: u32, _running: &[bool], out: &mut Vec<Op>) {
        out.extend([read(0, 16), wait(10_000)]);
    }
}

fn never_ending() -> Box<dyn Program> {
    let mut layout = Layout::new();
    layout.alloc("data", 16, 4, 64);
    Box::new(Forever(layout))
}

#[test]
fn a_run_that_never_ends_stops_at_its_budget_and_says_it_did_not_finish() {
    let budget = Ns(50_000_000);
    let s = run(never_ending(), Some(budget));
    assert!(s.budget_exceeded);
    assert!(s.partial);
    // Stopped at the first event due at or after the budget, not long after it.
    assert!(s.makespan_ns >= budget.0, "{}", s.makespan_ns);
    assert!(s.makespan_ns < budget.0 + 1_000_000, "{}", s.makespan_ns);
    // The thread worked all along.
    assert!(s.refs.total > 10_000, "{:?}", s.refs);
}

#[test]
fn a_run_within_its_budget_gives_the_same_statistics_as_without_one() {
    let free = run(finite(), None);
    let within = run(finite(), Some(Ns(free.makespan_ns + 1)));
    assert!(!within.budget_exceeded && !within.partial);
    assert!(
        within == free,
        "a budget that is not reached changed the statistics"
    );
    // A run that ends exactly at its budget finished within it.
    let exact = run(finite(), Some(Ns(free.makespan_ns)));
    assert!(exact == free, "a run ending at its budget was stopped");
}

#[test]
fn a_budget_shorter_than_the_run_stops_it_partway() {
    let free = run(finite(), None);
    let short = run(finite(), Some(Ns(free.makespan_ns / 2)));
    assert!(short.budget_exceeded && short.partial);
    assert!(short.makespan_ns < free.makespan_ns);
    assert!(short.refs.total < free.refs.total);
}

#[test]
fn run_config_budget_ns_reaches_the_engine_and_zero_means_none() {
    let cfg = |budget_ns: u64| RunConfig {
        budget_ns,
        ..RunConfig::of(
            toy_machine(),
            WorkloadConfig::new(JacobiConfig {
                n: 32,
                iterations: 2,
                ..Default::default()
            }),
        )
    };
    let free = cfg(0).run().unwrap();
    assert!(!free.budget_exceeded);
    let short = cfg(free.makespan_ns / 3).run().unwrap();
    assert!(short.budget_exceeded && short.partial);
    assert!(cfg(free.makespan_ns).run().unwrap() == free);
}

#[test]
fn a_budget_beyond_the_time_limit_is_refused_naming_the_field() {
    let cfg = RunConfig {
        budget_ns: numaplace_core::TIME_LIMIT + 1,
        ..RunConfig::of(toy_machine(), WorkloadConfig::default())
    };
    let e: ConfigError = cfg.estimate().unwrap_err();
    assert_eq!(e.field, "budget_ns");
    assert!(e.message.contains("out of range"), "{}", e.message);
    // The engine itself clamps it: no run can pass the time limit unnoticed.
    assert!(!matches!(
        cfg.engine().map(|_| ()),
        Err(SimError::TimeOverflow { .. })
    ));
}
