//! Multiprogrammed runs through the engine: the time-sharing and space-sharing schedulers
//! with NAS kernels and background load, scripted preemptions at a construct, and sleeps.

mod common;

use common::{wait, Script};
use numaplace_core::component::SchedulerConfig;
use numaplace_core::component::{Op, Program, WorkloadConfig};
use numaplace_core::engine::Launch;
use numaplace_core::policy::{SchedActivatedConfig, StaticConfig};
use numaplace_core::sched::scripted::{ScriptAction, ScriptEvent, ScriptedConfig};
use numaplace_core::sched::space_sharing::SpaceSharingConfig;
use numaplace_core::sched::time_sharing::TimeSharingConfig;
use numaplace_core::workload::background::BackgroundConfig;
use numaplace_core::workload::nas_bt::NasBtConfig;
use numaplace_core::{Engine, EngineOptions, Machine, Ns, PolicyConfig, Stats};

/// Two nodes of two processors, 1 KB pages.
fn machine() -> Machine {
    let mut cfg = numaplace_core::mm::test_machine_config(2);
    cfg.procs_per_node = 2;
    cfg.page_size_bytes = 1024;
    cfg.frames_per_node = 4096;
    Machine::new(cfg).unwrap()
}

fn bt(threads: u32, adapt: bool) -> WorkloadConfig {
    WorkloadConfig::new(NasBtConfig {
        n: 8,
        iterations: 4,
        threads: Some(threads),
        // About 100 ns a line at n = 8.
        compute_ps_per_op: 347,
        adapt_threads: adapt,
    })
}

fn background() -> WorkloadConfig {
    WorkloadConfig::new(BackgroundConfig {
        jobs: 3,
        bursts_per_job: 4,
        burst_ns: 20_000,
        io_ns: 50_000,
        pages: 2,
        ..Default::default()
    })
}

fn run(workloads: &[WorkloadConfig], scheduler: SchedulerConfig, seed: u64) -> Stats {
    run_under(
        workloads,
        scheduler,
        seed,
        PolicyConfig::new(StaticConfig::default()),
    )
}

fn run_under(
    workloads: &[WorkloadConfig],
    scheduler: SchedulerConfig,
    seed: u64,
    policy: PolicyConfig,
) -> Stats {
    let machine = machine();
    let mut launches = Vec::new();
    for w in workloads {
        for p in w.build(&machine).unwrap() {
            launches.push(Launch::from(p));
        }
    }
    let policy = policy.build(&machine).unwrap();
    Engine::new(
        machine,
        launches,
        policy,
        scheduler.build(),
        EngineOptions {
            seed,
            per_page: false,
            series_interval: None,
            series_by_array: false,
            budget: None,
        },
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
fn time_sharing_runs_more_threads_than_processors_to_completion() {
    let s = run(
        &[bt(4, false), bt(4, false), background()],
        SchedulerConfig::new(TimeSharingConfig {
            quantum_ns: 20_000,
            tick_ns: 10_000,
            ..Default::default()
        }),
        1,
    );
    assert_eq!(s.programs.len(), 3);
    assert!(s.programs.iter().all(|p| p.turnaround_ns > 0));
    assert!(counter(&s, "sched_preemptions") > 0);
}

#[test]
fn under_time_sharing_the_runtime_infers_preemptions_only_with_a_work_completion_join() {
    // With a fixed team a preempted thread still enters every construct and the barrier
    // waits for it, so its timestamp never lags the master's; with a work-completion join
    // it skips the constructs dealt while it was off its processor.
    let ts = || {
        SchedulerConfig::new(TimeSharingConfig {
            quantum_ns: 20_000,
            tick_ns: 10_000,
            ..Default::default()
        })
    };
    let under = |adapt| {
        let programs = [bt(4, adapt), bt(4, adapt), background()];
        let s = run_under(
            &programs,
            ts(),
            1,
            PolicyConfig::new(SchedActivatedConfig::default()),
        );
        (
            counter(&s, "sched_preemptions"),
            counter(&s, "sa_preemptions_inferred"),
        )
    };
    let (preempted, inferred) = under(false);
    assert!(preempted > 0);
    assert_eq!(inferred, 0);
    let (preempted, inferred) = under(true);
    assert!(preempted > 0);
    assert!(inferred > 0);
}

#[test]
fn time_sharing_is_reproducible_from_the_seed() {
    let go = |seed| {
        let s = run(
            &[bt(4, false), background()],
            SchedulerConfig::new(TimeSharingConfig::default()),
            seed,
        );
        (s.makespan_ns, s.refs, counter(&s, "sched_io_preemptions"))
    };
    assert_eq!(go(3), go(3));
}

#[test]
fn space_sharing_shares_processors_between_adapting_programs() {
    let s = run(
        &[bt(4, true), bt(4, true)],
        SchedulerConfig::new(SpaceSharingConfig::default()),
        1,
    );
    assert!(s.programs.iter().all(|p| p.turnaround_ns > 0));
    // Each ran on about half the machine: neither finished as fast as alone.
    let alone = run(
        &[bt(4, true)],
        SchedulerConfig::new(SpaceSharingConfig::default()),
        1,
    );
    assert!(s.programs[1].turnaround_ns > alone.programs[0].turnaround_ns);
}

#[test]
fn space_sharing_gives_background_jobs_processors_taken_at_construct_entries() {
    let s = run(
        &[bt(4, true), background()],
        SchedulerConfig::new(SpaceSharingConfig::default()),
        1,
    );
    assert!(s.programs[1].turnaround_ns > 0);
    assert!(counter(&s, "sched_parks") > 0);
}

#[test]
fn threads_preempted_at_a_construct_leave_their_work_to_the_others() {
    let sched = SchedulerConfig::new(ScriptedConfig {
        first_proc: 0,
        events: vec![ScriptEvent {
            at_ns: 0,
            at_construct: Some(10),
            action: ScriptAction::Preempt,
            threads: [2, 3],
            program: Some(0),
            proc: None,
        }],
    });
    let s = run(&[bt(4, true)], sched, 1);
    let refs = |t: usize| s.threads[t].refs.total;
    // Threads 2 and 3 did two iterations of four (BT runs five constructs a time step, so
    // construct 10 begins iteration 2); 0 and 1 did theirs and took the rest.
    assert!(refs(0) > refs(2) * 2);
    assert!(refs(1) > refs(3) * 2);
}

#[test]
fn a_sleeping_thread_gives_its_processor_to_a_waiting_one() {
    // Three one-thread jobs on four processors... two of them on one processor's queue
    // would be the case on a smaller machine; here thread 0 sleeps while 4 others wait.
    let prog: Box<dyn Program> = Box::new(Script::new(
        1,
        vec![
            vec![Op::Sleep(Ns(100_000)), wait(1_000)],
            vec![wait(50_000)],
            vec![wait(50_000)],
            vec![wait(50_000)],
            vec![wait(50_000)],
        ],
    ));
    let machine = machine();
    let policy = PolicyConfig::new(StaticConfig::default())
        .build(&machine)
        .unwrap();
    let s = Engine::new(
        machine,
        vec![prog.into()],
        policy,
        SchedulerConfig::new(TimeSharingConfig::default()).build(),
        EngineOptions::default(),
    )
    .unwrap()
    .run()
    .unwrap();
    // Thread 4 waited for a processor; thread 0's sleep gave it one at once.
    assert_eq!(s.threads[4].completion_ns, 50_000);
    assert!(s.threads[0].completion_ns >= 101_000);
}

#[test]
fn series_by_array_counts_each_arrays_references_per_iteration() {
    let machine = machine();
    let launches: Vec<Launch> = bt(4, false)
        .build(&machine)
        .unwrap()
        .into_iter()
        .map(Launch::from)
        .collect();
    let policy = PolicyConfig::new(StaticConfig::default())
        .build(&machine)
        .unwrap();
    let s = Engine::new(
        machine,
        launches,
        policy,
        SchedulerConfig::default().build(),
        EngineOptions {
            seed: 1,
            per_page: true,
            series_interval: None,
            series_by_array: true,
            budget: None,
        },
    )
    .unwrap()
    .run()
    .unwrap();
    assert_eq!(s.series.len(), 4);
    for p in &s.series {
        // BT's nine shared arrays and three threadprivate work arrays, each on pages of
        // its own: their references add up to the program's in the iteration.
        assert_eq!(p.arrays.len(), 12);
        let total: u64 = p.arrays.iter().map(|a| a.refs.total).sum();
        assert_eq!(total, p.program_refs.total);
        assert!(p.arrays.iter().any(|a| a.name == "rhs" && a.refs.total > 0));
    }
}
