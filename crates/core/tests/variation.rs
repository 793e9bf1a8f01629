//! Run-to-run variation: seeded physical sources (start skew, clock interrupts, daemon
//! phase) make different seeds give different runs and the same seed the same run.

mod common;

use common::{engine_seeded, read, toy_machine, wait, Script};
use numaplace_core::component::Op;
use numaplace_core::component::{DaemonNext, DaemonPlacement, DaemonSpec};
use numaplace_core::machine::{MachineConfig, Variation};
use numaplace_core::mm::Mm;
use numaplace_core::{Machine, Ns, Policy, Stats};

struct NoPolicy;
impl Policy for NoPolicy {
    fn name(&self) -> &'static str {
        "none"
    }
}

fn with(v: Variation) -> MachineConfig {
    let mut m = toy_machine();
    m.variation = v;
    m
}

fn run_seed(m: MachineConfig, ops: Vec<Vec<Op>>, policy: Box<dyn Policy>, seed: u64) -> Stats {
    engine_seeded(Box::new(Script::new(2, ops)), policy, m, seed)
        .run()
        .unwrap()
}

fn skewed() -> Variation {
    Variation {
        start_skew_ns: 1_000_000,
        ..Default::default()
    }
}

fn two_threads() -> Vec<Vec<Op>> {
    vec![vec![read(0, 1), wait(100)], vec![read(1, 1), wait(100)]]
}

#[test]
fn a_thread_starts_within_its_start_skew() {
    let s = run_seed(with(skewed()), two_threads(), Box::new(NoPolicy), 3);
    for t in &s.threads {
        assert!(t.start_skew_ns < 1_000_000);
        assert!(t.completion_ns >= t.start_skew_ns + 100);
    }
    assert!(s.threads.iter().any(|t| t.start_skew_ns > 0));
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let a = run_seed(with(skewed()), two_threads(), Box::new(NoPolicy), 5);
    let b = run_seed(with(skewed()), two_threads(), Box::new(NoPolicy), 5);
    assert_eq!(a, b);
}

#[test]
fn different_seeds_give_different_runs() {
    let a = run_seed(with(skewed()), two_threads(), Box::new(NoPolicy), 5);
    let b = run_seed(with(skewed()), two_threads(), Box::new(NoPolicy), 6);
    assert_ne!(a.makespan_ns, b.makespan_ns);
}

#[test]
fn switching_variation_off_makes_every_seed_give_one_run() {
    let off = Variation {
        enabled: false,
        ..skewed()
    };
    let a = run_seed(with(off.clone()), two_threads(), Box::new(NoPolicy), 5);
    let b = run_seed(with(off), two_threads(), Box::new(NoPolicy), 6);
    assert_eq!(a.makespan_ns, b.makespan_ns);
    assert!(a.threads.iter().all(|t| t.start_skew_ns == 0));
}

#[test]
fn clock_interrupts_take_their_cost_from_the_work_they_interrupt() {
    // 1 ms of work under a 100 us clock costing 10 us: ten or eleven interrupts, each
    // lengthening the work, whatever the phase.
    let v = Variation {
        tick_ns: 100_000,
        tick_cost_ns: 10_000,
        ..Default::default()
    };
    let s = run_seed(with(v), vec![vec![wait(1_000_000)]], Box::new(NoPolicy), 1);
    let t = &s.threads[0];
    assert!(
        (100_000..=130_000).contains(&t.interrupt_ns),
        "{}",
        t.interrupt_ns
    );
    assert_eq!(t.completion_ns, 1_000_000 + t.interrupt_ns);
}

#[test]
fn clock_interrupts_while_a_thread_waits_cost_it_nothing() {
    // Thread 0 waits at a barrier for 1 ms of thread 1's work; its own ops are instant.
    let v = Variation {
        tick_ns: 100_000,
        tick_cost_ns: 10_000,
        ..Default::default()
    };
    let ops = vec![vec![Op::Barrier], vec![wait(1_000_000), Op::Barrier]];
    let s = run_seed(with(v), ops, Box::new(NoPolicy), 1);
    assert_eq!(s.threads[0].interrupt_ns, 0);
    assert!(s.threads[1].interrupt_ns >= 100_000);
}

#[test]
fn a_clock_cost_not_below_its_period_is_refused() {
    let v = Variation {
        tick_ns: 1000,
        tick_cost_ns: 1000,
        ..Default::default()
    };
    let err = Machine::new(with(v)).unwrap_err();
    assert!(err.to_string().contains("variation.tick_cost_ns"), "{err}");
}

/// A policy with one daemon that wakes once, at its first wake-up, and records when.
struct OneWake {
    first: Ns,
    woke: std::rc::Rc<std::cell::Cell<Option<Ns>>>,
}
impl Policy for OneWake {
    fn name(&self) -> &'static str {
        "one-wake"
    }
    fn daemons(&self, _m: &Machine) -> Vec<DaemonSpec> {
        vec![DaemonSpec {
            name: "once".into(),
            placement: DaemonPlacement::OwnProcessor,
            first_wake: self.first,
        }]
    }
    fn on_daemon(&mut self, ctx: &mut dyn Mm, _id: usize) -> DaemonNext {
        self.woke.set(Some(ctx.now()));
        DaemonNext::Stop
    }
}

fn first_wake(phase: bool, seed: u64) -> Ns {
    let woke = std::rc::Rc::new(std::cell::Cell::new(None));
    let v = Variation {
        daemon_phase: phase,
        ..Default::default()
    };
    let policy = OneWake {
        first: Ns(1_000_000),
        woke: woke.clone(),
    };
    run_seed(with(v), vec![vec![wait(2_000_000)]], Box::new(policy), seed);
    woke.get().expect("the daemon woke")
}

#[test]
fn a_daemons_first_wake_up_is_drawn_within_its_first_period() {
    let wakes: Vec<Ns> = (1..6).map(|s| first_wake(true, s)).collect();
    assert!(wakes.iter().all(|w| w.0 >= 1 && w.0 <= 1_000_000));
    assert!(wakes.iter().any(|w| *w != wakes[0]));
}

#[test]
fn without_daemon_phase_a_daemon_first_wakes_at_its_period() {
    assert_eq!(first_wake(false, 4), Ns(1_000_000));
}
