//! The scheduler's side of a run: programs that start later, the hooks a scheduler is
//! told of (threads created, blocked, unblocked, finished; parallel constructs entered
//! and left), the counts it reads, and the changes it makes from a hook.

mod common;

use common::{read, toy_machine, wait, Script};
use numaplace_core::component::{
    Boundary, Op, Parallel, Program, ProgramShape, SchedChange, SchedView, Scheduler, ThreadChange,
};
use numaplace_core::policy::StaticConfig;
use numaplace_core::{
    ConfigError, Engine, EngineOptions, Machine, Ns, PolicyConfig, ProcId, SimError, Stats,
    ThreadId,
};
use std::cell::RefCell;
use std::rc::Rc;

/// What a [`Watcher`] saw, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seen {
    Thread(u64, u32, ThreadChange),
    Parallel(u64, u32, Boundary, u32),
}

/// Program 0's (live, runnable, running, in_parallel) as one hook read them.
type Counts = (u32, u32, u32, u32);

/// A scheduler that places thread `i` on processor `i`, records every hook with the
/// counts it reads, and, when told to, holds thread 1 back until thread 0 finishes.
#[derive(Default)]
struct Watcher {
    log: Rc<RefCell<Vec<Seen>>>,
    /// Snapshots of program 0's (live, runnable, running, in_parallel) at each hook.
    counts: Rc<RefCell<Vec<Counts>>>,
    serialize: bool,
}

impl Watcher {
    fn note(&self, view: &dyn SchedView) {
        let p = view.program(0);
        self.counts
            .borrow_mut()
            .push((p.live, p.runnable, p.running, p.in_parallel));
    }
}

impl Scheduler for Watcher {
    fn start(
        &mut self,
        _machine: &Machine,
        programs: &[ProgramShape],
    ) -> Result<Vec<Option<ProcId>>, ConfigError> {
        let n: u32 = programs.iter().map(|p| p.threads).sum();
        Ok((0..n).map(|t| Some(ProcId(t as u16))).collect())
    }

    fn on_thread(
        &mut self,
        now: Ns,
        view: &dyn SchedView,
        thread: ThreadId,
        change: ThreadChange,
        out: &mut Vec<SchedChange>,
    ) {
        self.log
            .borrow_mut()
            .push(Seen::Thread(now.0, thread.0, change));
        self.note(view);
        if self.serialize {
            match (thread.0, change) {
                (1, ThreadChange::Created) => out.push(SchedChange::Preempt(ThreadId(1))),
                (0, ThreadChange::Finished) => {
                    out.push(SchedChange::Resume(ThreadId(1), ProcId(0)))
                }
                _ => {}
            }
        }
    }

    fn on_parallel(
        &mut self,
        now: Ns,
        view: &dyn SchedView,
        e: Parallel,
        _out: &mut Vec<SchedChange>,
    ) {
        self.log
            .borrow_mut()
            .push(Seen::Parallel(now.0, e.thread.0, e.boundary, e.construct));
        self.note(view);
    }
}

fn static_policy(machine: &Machine) -> Box<dyn numaplace_core::Policy> {
    PolicyConfig::new(StaticConfig::default())
        .build(machine)
        .unwrap()
}

fn run(
    programs: Vec<(Box<dyn Program>, u64)>,
    scheduler: impl Scheduler + 'static,
    series: Option<Ns>,
) -> Result<Stats, SimError> {
    let machine = Machine::new(toy_machine()).unwrap();
    let policy = static_policy(&machine);
    Engine::new(
        machine,
        programs
            .into_iter()
            .map(|(program, start)| numaplace_core::engine::Launch {
                program,
                start: Ns(start),
            })
            .collect(),
        policy,
        Box::new(scheduler),
        EngineOptions {
            seed: 1,
            per_page: false,
            series_interval: series,
            series_by_array: false,
            budget: None,
        },
    )?
    .run()
}

fn one_thread(ops: Vec<Op>) -> Box<dyn Program> {
    Box::new(Script::new(1, vec![ops]))
}

/// Two one-thread programs computing for `a` and `b` ns, the second starting at `start`.
fn two_waits(a: u64, b: u64, start: u64, scheduler: Watcher, series: Option<Ns>) -> Stats {
    run(
        vec![
            (one_thread(vec![wait(a)]), 0),
            (one_thread(vec![wait(b)]), start),
        ],
        scheduler,
        series,
    )
    .unwrap()
}

#[test]
fn a_later_program_starts_at_its_start_time() {
    let s = two_waits(1_000, 1_000, 50_000, Watcher::default(), None);
    assert_eq!(s.threads[1].completion_ns, 51_000);
    assert_eq!(s.makespan_ns, 51_000);
}

#[test]
fn each_program_reports_its_own_turnaround() {
    let s = two_waits(3_000, 1_000, 50_000, Watcher::default(), None);
    let turnaround: Vec<u64> = s.programs.iter().map(|p| p.turnaround_ns).collect();
    assert_eq!(turnaround, [3_000, 1_000]);
    assert_eq!(s.programs[1].start_ns, 50_000);
    assert_eq!(s.programs[1].first_thread, 1);
    assert_eq!(s.programs[1].first_vpn, 1);
}

#[test]
fn program_results_sum_their_threads_references() {
    let s = run(
        vec![(
            Box::new(Script::new(1, vec![vec![read(0, 3)], vec![read(0, 4)]])),
            0,
        )],
        Watcher::default(),
        None,
    )
    .unwrap();
    assert_eq!(s.programs[0].refs.total, 7);
    assert_eq!(s.programs[0].refs, s.refs);
}

#[test]
fn a_run_waiting_only_for_a_later_program_is_not_a_deadlock() {
    // Ticks check for deadlock while nothing but the second program's start is to come.
    let s = two_waits(1_000, 1_000, 100_000, Watcher::default(), Some(Ns(10_000)));
    assert_eq!(s.makespan_ns, 101_000);
}

#[test]
fn the_scheduler_is_told_of_every_threads_creation_and_end() {
    let w = Watcher::default();
    let log = w.log.clone();
    two_waits(1_000, 1_000, 5_000, w, None);
    assert_eq!(
        *log.borrow(),
        [
            Seen::Thread(0, 0, ThreadChange::Created),
            Seen::Thread(1_000, 0, ThreadChange::Finished),
            Seen::Thread(5_000, 1, ThreadChange::Created),
            Seen::Thread(6_000, 1, ThreadChange::Finished),
        ]
    );
}

#[test]
fn a_thread_waiting_at_a_barrier_is_blocked_until_the_last_arrives() {
    let w = Watcher::default();
    let log = w.log.clone();
    let prog = Script::new(
        1,
        vec![vec![wait(100), Op::Barrier], vec![wait(300), Op::Barrier]],
    );
    run(vec![(Box::new(prog), 0)], w, None).unwrap();
    let log = log.borrow();
    let blocking: Vec<&Seen> = log
        .iter()
        .filter(|s| {
            matches!(
                s,
                Seen::Thread(_, _, ThreadChange::Blocked | ThreadChange::Unblocked)
            )
        })
        .collect();
    assert_eq!(
        blocking,
        [
            &Seen::Thread(100, 0, ThreadChange::Blocked),
            &Seen::Thread(300, 0, ThreadChange::Unblocked),
        ]
    );
}

#[test]
fn the_scheduler_reads_how_many_threads_are_runnable() {
    let w = Watcher::default();
    let (log, counts) = (w.log.clone(), w.counts.clone());
    let prog = Script::new(
        1,
        vec![vec![wait(100), Op::Barrier], vec![wait(300), Op::Barrier]],
    );
    run(vec![(Box::new(prog), 0)], w, None).unwrap();
    let at = log
        .borrow()
        .iter()
        .position(|s| *s == Seen::Thread(100, 0, ThreadChange::Blocked))
        .unwrap();
    // Thread 0 waits: two live threads, one runnable (and running).
    assert_eq!(counts.borrow()[at], (2, 1, 1, 0));
}

#[test]
fn parallel_construct_entry_and_exit_reach_the_scheduler_per_thread() {
    let w = Watcher::default();
    let (log, counts) = (w.log.clone(), w.counts.clone());
    let body = |d| {
        vec![
            Op::ParallelEnter(0),
            wait(d),
            Op::Barrier,
            Op::ParallelExit(0),
        ]
    };
    let prog = Script::new(1, vec![body(100), body(200)]);
    run(vec![(Box::new(prog), 0)], w, None).unwrap();
    let log = log.borrow();
    let parallel: Vec<(usize, &Seen)> = log
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, Seen::Parallel(..)))
        .collect();
    let seen: Vec<&Seen> = parallel.iter().map(|(_, s)| *s).collect();
    assert_eq!(
        seen,
        [
            &Seen::Parallel(0, 0, Boundary::Enter, 0),
            &Seen::Parallel(0, 1, Boundary::Enter, 0),
            // The last to arrive releases thread 0, which was queued first.
            &Seen::Parallel(200, 0, Boundary::Exit, 0),
            &Seen::Parallel(200, 1, Boundary::Exit, 0),
        ]
    );
    // Both inside after the second entry; none after the last exit.
    assert_eq!(counts.borrow()[parallel[1].0].3, 2);
    assert_eq!(counts.borrow()[parallel[3].0].3, 0);
}

#[test]
fn a_boundary_costs_nothing_when_nobody_acts_on_it() {
    let plain = Script::new(1, vec![vec![wait(100), read(0, 2), wait(50)]]);
    let marked = Script::new(
        1,
        vec![vec![
            Op::ParallelEnter(0),
            wait(100),
            read(0, 2),
            Op::ParallelExit(0),
            wait(50),
        ]],
    );
    let a = run(vec![(Box::new(plain), 0)], Watcher::default(), None).unwrap();
    let b = run(vec![(Box::new(marked), 0)], Watcher::default(), None).unwrap();
    assert_eq!((a.makespan_ns, a.ops), (b.makespan_ns, b.ops));
}

#[test]
fn a_scheduler_can_hold_a_thread_back_from_a_hook() {
    // Thread 1 is preempted when created and resumed on processor 0 when thread 0 ends:
    // the two run one after the other.
    let w = Watcher {
        serialize: true,
        ..Default::default()
    };
    let s = run(
        vec![
            (one_thread(vec![wait(1_000)]), 0),
            (one_thread(vec![wait(500)]), 0),
        ],
        w,
        None,
    )
    .unwrap();
    assert_eq!(s.threads[1].completion_ns, 1_500);
    assert_eq!(s.threads[1].node, 0);
}

/// Places thread 0 on processor 0; when thread 1 (a later program's) is created, preempts
/// thread 0 in the middle of its computation and gives thread 1 processor 0; when thread 1
/// finishes, gives processor 0 back to thread 0.
struct Usurper;

impl Scheduler for Usurper {
    fn start(
        &mut self,
        _machine: &Machine,
        programs: &[ProgramShape],
    ) -> Result<Vec<Option<ProcId>>, ConfigError> {
        let n: u32 = programs.iter().map(|p| p.threads).sum();
        Ok((0..n).map(|t| (t == 0).then_some(ProcId(0))).collect())
    }

    fn on_thread(
        &mut self,
        _now: Ns,
        _view: &dyn SchedView,
        thread: ThreadId,
        change: ThreadChange,
        out: &mut Vec<SchedChange>,
    ) {
        match (thread.0, change) {
            (1, ThreadChange::Created) => {
                out.push(SchedChange::Preempt(ThreadId(0)));
                out.push(SchedChange::Resume(ThreadId(1), ProcId(0)));
            }
            (1, ThreadChange::Finished) => out.push(SchedChange::Resume(ThreadId(0), ProcId(0))),
            _ => {}
        }
    }
}

#[test]
fn a_thread_preempted_mid_operation_keeps_its_processor_until_the_operation_ends() {
    let stats = run(
        vec![
            (one_thread(vec![wait(100)]), 0),
            (one_thread(vec![wait(50)]), 10),
        ],
        Usurper,
        None,
    )
    .unwrap();
    // One processor, 150 ns of computation: the second program starts when the first's
    // computation ends (100), not beside it at 10.
    assert_eq!(stats.makespan_ns, 150);
    assert_eq!(stats.programs[1].turnaround_ns, 150 - 10);
}
