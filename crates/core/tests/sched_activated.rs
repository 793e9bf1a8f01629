//! `sched-activated` through the engine: an iterative NAS kernel whose threads the
//! `scripted` scheduler preempts mid-run (the paper's first experiment in small): the
//! preempted threads' pages follow the threads that took up their work, and first touch
//! leaves them where they were.

use numaplace_core::component::SchedulerConfig;
use numaplace_core::component::WorkloadConfig;
use numaplace_core::engine::Launch;
use numaplace_core::policy::{SchedActivatedConfig, StaticConfig};
use numaplace_core::sched::scripted::{ScriptAction, ScriptEvent, ScriptedConfig};
use numaplace_core::workload::nas_bt::NasBtConfig;
use numaplace_core::{Engine, EngineOptions, Machine, PolicyConfig, Stats};

/// Four nodes of one processor, 1 KB pages.
fn machine() -> Machine {
    let mut cfg = numaplace_core::mm::test_machine_config(4);
    cfg.page_size_bytes = 1024;
    cfg.frames_per_node = 4096;
    Machine::new(cfg).unwrap()
}

/// BT on four threads that adapt to their processors; threads 2 and 3 preempted when
/// the program enters iteration 3 of 8 (its construct 15: BT runs five a time step).
fn run(policy: PolicyConfig) -> Stats {
    let machine = machine();
    let bt = WorkloadConfig::new(NasBtConfig {
        n: 8,
        iterations: 8,
        threads: Some(4),
        // About 100 ns a line at n = 8.
        compute_ps_per_op: 347,
        adapt_threads: true,
    });
    let launches: Vec<Launch> = bt
        .build(&machine)
        .unwrap()
        .into_iter()
        .map(Launch::from)
        .collect();
    let sched = SchedulerConfig::new(ScriptedConfig {
        first_proc: 0,
        events: vec![ScriptEvent {
            at_ns: 0,
            at_construct: Some(15),
            action: ScriptAction::Preempt,
            threads: [2, 3],
            program: Some(0),
            proc: None,
        }],
    });
    let policy = policy.build(&machine).unwrap();
    Engine::new(
        machine,
        launches,
        policy,
        sched.build(),
        EngineOptions::default(),
    )
    .unwrap()
    .run()
    .unwrap()
}

fn counter(s: &Stats, name: &str) -> u64 {
    s.own_counters
        .iter()
        .find(|c| c.name == name)
        .map_or(0, |c| c.value)
}

#[test]
fn sched_activated_moves_the_preempted_threads_pages_and_first_touch_does_not() {
    let first_touch = run(PolicyConfig::new(StaticConfig::default()));
    let activated = run(PolicyConfig::new(SchedActivatedConfig::default()));
    assert_eq!(first_touch.events.migrations, 0);
    assert_eq!(counter(&activated, "sa_preemptions_inferred"), 2);
    let moved = counter(&activated, "sa_migrations_preempted");
    assert!(moved > 0, "{:?}", activated.own_counters);
    assert_eq!(activated.events.migrations, moved);
    // The pages moved serve the remaining iterations locally.
    assert!(
        activated.refs.remote < first_touch.refs.remote,
        "remote {} against {}",
        activated.refs.remote,
        first_touch.refs.remote
    );
}
