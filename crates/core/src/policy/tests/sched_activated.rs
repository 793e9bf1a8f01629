//! Unit tests of `sched-activated` against the recording double, one behaviour each. The
//! double has one thread per node (thread i on node i, thread 0 the master) and every
//! thread and page in program 0.

use super::*;
use crate::history::HistoryMode;
use crate::mm::{Action, Recording};
use crate::policy::test_scene::recording;

const NODES: u16 = 4;
const T_THR: u64 = 500;

fn config() -> SchedActivatedConfig {
    SchedActivatedConfig {
        t_thr_ns: T_THR,
        overlap_below_load_pct: 0,
        ..Default::default()
    }
}

/// Four nodes, eight pages, page v (v < 4) placed on node v, counters on.
fn scene(config: SchedActivatedConfig) -> (SchedActivated, Recording) {
    let mut rec = recording(NODES, 16, 8, HistoryMode::None);
    let machine = rec.machine().clone();
    let mut p = SchedActivated::new(config, &machine).unwrap();
    rec.enable_counters(&p.page_counters().unwrap());
    for v in 0..4 {
        rec.place(Vpn(v), NodeId(v as u16)).unwrap();
    }
    p.init(&mut rec);
    rec.clear();
    (p, rec)
}

fn poll(p: &mut SchedActivated, rec: &mut Recording, t: u32, c: u32, boundary: Boundary) {
    rec.actor = rec.thread_nodes()[t as usize].unwrap_or(NodeId(0));
    p.on_parallel(
        rec,
        Parallel {
            thread: ThreadId(t),
            program: 0,
            construct: c,
            boundary,
        },
    );
}

/// Threads `threads` enter construct `c` at `at`, then the master leaves it at `exit`.
fn construct(p: &mut SchedActivated, rec: &mut Recording, c: u32, threads: &[u32], at: u64) {
    rec.now = Ns(at);
    for &t in threads {
        poll(p, rec, t, c, Boundary::Enter);
    }
    poll(p, rec, 0, c, Boundary::Exit);
}

fn end(p: &mut SchedActivated, rec: &mut Recording, it: u32, at: u64) {
    rec.now = Ns(at);
    p.on_iteration_end(rec, 0, it, Some(it));
}

fn state(p: &SchedActivated, t: u32) -> ThreadRecord {
    p.thread(ThreadId(t)).unwrap()
}

fn moves(rec: &Recording) -> Vec<Action> {
    rec.actions()
        .iter()
        .copied()
        .filter(|a| matches!(a, Action::Migrate(..)))
        .collect()
}

/// Iteration 0 with every thread on its node, page v referenced `base` times by node v.
fn first_iteration(p: &mut SchedActivated, rec: &mut Recording, base: u32) {
    construct(p, rec, 0, &[0, 1, 2, 3], 0);
    for v in 0..4 {
        rec.count(Vpn(v), NodeId(v as u16), base);
    }
    end(p, rec, 0, 10);
}

fn counter(p: &SchedActivated, name: &str) -> u64 {
    p.counters().iter().find(|c| c.name == name).unwrap().value
}

// Figure 4: the thread states.

#[test]
fn a_thread_first_polled_is_running_on_its_node() {
    let (mut p, mut rec) = scene(config());
    rec.now = Ns(7);
    poll(&mut p, &mut rec, 2, 0, Boundary::Enter);
    let r = state(&p, 2);
    assert_eq!(r.state, ThreadState::Running);
    assert_eq!(
        (r.curr_node, r.prev_node, r.timestamp),
        (Some(NodeId(2)), None, Ns(7))
    );
}

#[test]
fn a_running_thread_found_on_another_node_has_migrated() {
    let (mut p, mut rec) = scene(config());
    poll(&mut p, &mut rec, 1, 0, Boundary::Enter);
    rec.thread_nodes_mut()[1] = Some(NodeId(3));
    rec.now = Ns(40);
    poll(&mut p, &mut rec, 1, 1, Boundary::Enter);
    let r = state(&p, 1);
    assert_eq!(r.state, ThreadState::Migrated);
    assert_eq!(
        (r.prev_node, r.curr_node),
        (Some(NodeId(1)), Some(NodeId(3)))
    );
    assert_eq!(r.timestamp, Ns(40));
}

#[test]
fn a_running_thread_on_its_node_stays_running_with_its_timestamp() {
    let (mut p, mut rec) = scene(config());
    poll(&mut p, &mut rec, 1, 0, Boundary::Enter);
    rec.now = Ns(40);
    poll(&mut p, &mut rec, 1, 1, Boundary::Enter);
    let r = state(&p, 1);
    assert_eq!((r.state, r.timestamp), (ThreadState::Running, Ns(0)));
}

#[test]
fn a_migrated_thread_found_on_a_third_node_migrates_again() {
    let (mut p, mut rec) = scene(config());
    poll(&mut p, &mut rec, 1, 0, Boundary::Enter);
    rec.thread_nodes_mut()[1] = Some(NodeId(2));
    poll(&mut p, &mut rec, 1, 1, Boundary::Enter);
    rec.thread_nodes_mut()[1] = Some(NodeId(3));
    rec.now = Ns(90);
    poll(&mut p, &mut rec, 1, 2, Boundary::Enter);
    let r = state(&p, 1);
    assert_eq!(r.state, ThreadState::Migrated);
    assert_eq!(
        (r.prev_node, r.curr_node),
        (Some(NodeId(2)), Some(NodeId(3)))
    );
    assert_eq!(r.timestamp, Ns(90));
}

#[test]
fn a_thread_missing_from_a_construct_is_inferred_preempted_since_it_began() {
    let (mut p, mut rec) = scene(config());
    construct(&mut p, &mut rec, 0, &[0, 1, 2, 3], 0);
    rec.now = Ns(100);
    for t in [0, 1, 3] {
        poll(&mut p, &mut rec, t, 1, Boundary::Enter);
    }
    rec.now = Ns(900);
    poll(&mut p, &mut rec, 0, 1, Boundary::Exit);
    let r = state(&p, 2);
    assert_eq!(
        (r.state, r.curr_node),
        (ThreadState::Preempted, Some(NodeId(2)))
    );
    assert_eq!(r.timestamp, Ns(100));
    assert_eq!(counter(&p, "sa_preemptions_inferred"), 1);
}

#[test]
fn a_thread_that_took_part_is_not_marked_preempted() {
    let (mut p, mut rec) = scene(config());
    construct(&mut p, &mut rec, 0, &[0, 1, 2, 3], 0);
    construct(&mut p, &mut rec, 1, &[0, 1, 2, 3], 100);
    assert!((1..4).all(|t| state(&p, t).state == ThreadState::Running));
    assert_eq!(counter(&p, "sa_preemptions_inferred"), 0);
}

#[test]
fn only_the_masters_exit_infers_preemptions() {
    let (mut p, mut rec) = scene(config());
    construct(&mut p, &mut rec, 0, &[0, 1, 2, 3], 0);
    rec.now = Ns(100);
    poll(&mut p, &mut rec, 1, 1, Boundary::Enter);
    poll(&mut p, &mut rec, 1, 1, Boundary::Exit);
    assert_eq!(state(&p, 2).state, ThreadState::Running);
}

#[test]
fn a_thread_staying_preempted_keeps_its_timestamp() {
    let (mut p, mut rec) = scene(config());
    construct(&mut p, &mut rec, 0, &[0, 1, 2, 3], 0);
    construct(&mut p, &mut rec, 1, &[0, 1, 3], 100);
    construct(&mut p, &mut rec, 2, &[0, 1, 3], 200);
    let r = state(&p, 2);
    assert_eq!((r.state, r.timestamp), (ThreadState::Preempted, Ns(100)));
    assert_eq!(counter(&p, "sa_preemptions_inferred"), 1);
}

#[test]
fn a_preempted_thread_back_on_its_node_has_resumed() {
    let (mut p, mut rec) = scene(config());
    construct(&mut p, &mut rec, 0, &[0, 1, 2, 3], 0);
    construct(&mut p, &mut rec, 1, &[0, 1, 3], 100);
    construct(&mut p, &mut rec, 2, &[0, 1, 2, 3], 300);
    let r = state(&p, 2);
    assert_eq!(
        (r.state, r.curr_node),
        (ThreadState::Resumed, Some(NodeId(2)))
    );
    assert_eq!(r.timestamp, Ns(300));
}

#[test]
fn a_preempted_thread_back_on_another_node_has_migrated() {
    let (mut p, mut rec) = scene(config());
    construct(&mut p, &mut rec, 0, &[0, 1, 2, 3], 0);
    construct(&mut p, &mut rec, 1, &[0, 1, 3], 100);
    rec.thread_nodes_mut()[2] = Some(NodeId(1));
    construct(&mut p, &mut rec, 2, &[0, 1, 2, 3], 300);
    let r = state(&p, 2);
    assert_eq!(r.state, ThreadState::Migrated);
    assert_eq!(
        (r.prev_node, r.curr_node),
        (Some(NodeId(2)), Some(NodeId(1)))
    );
}

#[test]
fn a_resumed_thread_found_on_another_node_has_migrated() {
    let (mut p, mut rec) = scene(config());
    construct(&mut p, &mut rec, 0, &[0, 1, 2, 3], 0);
    construct(&mut p, &mut rec, 1, &[0, 1, 3], 100);
    construct(&mut p, &mut rec, 2, &[0, 1, 2, 3], 300);
    rec.thread_nodes_mut()[2] = Some(NodeId(3));
    rec.now = Ns(350);
    poll(&mut p, &mut rec, 2, 2, Boundary::Exit);
    let r = state(&p, 2);
    assert_eq!(r.state, ThreadState::Migrated);
    assert_eq!(
        (r.prev_node, r.curr_node, r.timestamp),
        (Some(NodeId(2)), Some(NodeId(3)), Ns(350))
    );
}

#[test]
fn a_running_thread_missing_from_a_construct_is_preempted_from_any_state() {
    let (mut p, mut rec) = scene(config());
    construct(&mut p, &mut rec, 0, &[0, 1, 2, 3], 0);
    rec.thread_nodes_mut()[2] = Some(NodeId(3));
    construct(&mut p, &mut rec, 1, &[0, 1, 2, 3], 100);
    assert_eq!(state(&p, 2).state, ThreadState::Migrated);
    construct(&mut p, &mut rec, 2, &[0, 1, 3], 200);
    let r = state(&p, 2);
    assert_eq!(
        (r.state, r.curr_node),
        (ThreadState::Preempted, Some(NodeId(3)))
    );
}

#[test]
fn preemptions_are_inferred_at_an_iteration_end_that_comes_before_the_exit() {
    let (mut p, mut rec) = scene(config());
    construct(&mut p, &mut rec, 0, &[0, 1, 2, 3], 0);
    rec.now = Ns(100);
    for t in [0, 1, 3] {
        poll(&mut p, &mut rec, t, 1, Boundary::Enter);
    }
    end(&mut p, &mut rec, 1, 800);
    assert_eq!(state(&p, 2).state, ThreadState::Preempted);
    rec.now = Ns(810);
    poll(&mut p, &mut rec, 0, 1, Boundary::Exit);
    assert_eq!(counter(&p, "sa_preemptions_inferred"), 1);
}

#[test]
fn migrated_and_resumed_threads_become_running_at_the_iteration_end() {
    let (mut p, mut rec) = scene(config());
    construct(&mut p, &mut rec, 0, &[0, 1, 2, 3], 0);
    construct(&mut p, &mut rec, 1, &[0, 1, 3], 100);
    rec.thread_nodes_mut()[1] = Some(NodeId(3));
    construct(&mut p, &mut rec, 2, &[0, 1, 2], 200);
    assert_eq!(state(&p, 1).state, ThreadState::Migrated);
    assert_eq!(state(&p, 2).state, ThreadState::Resumed);
    assert_eq!(state(&p, 3).state, ThreadState::Preempted);
    end(&mut p, &mut rec, 2, 300);
    assert_eq!(state(&p, 1).state, ThreadState::Running);
    assert_eq!(state(&p, 2).state, ThreadState::Running);
    assert_eq!(state(&p, 3).state, ThreadState::Preempted);
    assert_eq!(counter(&p, "sa_to_running"), 2);
}

#[test]
fn polls_are_charged_the_state_read_cost() {
    let (mut p, mut rec) = scene(SchedActivatedConfig {
        state_read_ns: 7,
        ..config()
    });
    poll(&mut p, &mut rec, 1, 0, Boundary::Enter);
    assert_eq!(rec.actions(), &[Action::Charge(Ns(7))]);
}

// Figure 6: the migration criterion.

#[test]
fn the_first_iteration_is_the_reference_and_moves_nothing() {
    let (mut p, mut rec) = scene(config());
    construct(&mut p, &mut rec, 0, &[0, 1, 3], 0);
    rec.count(Vpn(2), NodeId(1), 50);
    end(&mut p, &mut rec, 0, 10_000);
    assert!(moves(&rec).is_empty());
}

#[test]
fn case_1_a_page_follows_a_thread_that_migrated_from_its_home_to_k() {
    let (mut p, mut rec) = scene(config());
    first_iteration(&mut p, &mut rec, 100);
    rec.thread_nodes_mut()[1] = Some(NodeId(3));
    construct(&mut p, &mut rec, 1, &[0, 1, 2, 3], 100);
    rec.count(Vpn(1), NodeId(1), 10);
    rec.count(Vpn(1), NodeId(3), 90);
    rec.clear();
    end(&mut p, &mut rec, 1, 1_000);
    assert_eq!(moves(&rec), &[Action::Migrate(Vpn(1), NodeId(3))]);
    assert_eq!(counter(&p, "sa_migrations_migrated"), 1);
}

#[test]
fn case_2_a_page_of_a_preempted_threads_node_moves_to_the_rising_node() {
    let (mut p, mut rec) = scene(config());
    first_iteration(&mut p, &mut rec, 100);
    construct(&mut p, &mut rec, 1, &[0, 1, 3], 100);
    rec.count(Vpn(2), NodeId(1), 80);
    rec.clear();
    end(&mut p, &mut rec, 1, 1_000);
    assert_eq!(moves(&rec), &[Action::Migrate(Vpn(2), NodeId(1))]);
    assert_eq!(counter(&p, "sa_migrations_preempted"), 1);
}

#[test]
fn case_3_a_page_returns_to_the_node_of_a_resumed_thread() {
    let (mut p, mut rec) = scene(config());
    first_iteration(&mut p, &mut rec, 100);
    // Thread 2 preempted in iteration 1, its page taken to node 1.
    construct(&mut p, &mut rec, 1, &[0, 1, 3], 100);
    rec.count(Vpn(2), NodeId(1), 100);
    end(&mut p, &mut rec, 1, 1_000);
    assert_eq!(rec.home(Vpn(2)), NodeId(1));
    // Iteration 2 runs as iteration 1 did; thread 2 resumes on node 2 for iteration 3.
    construct(&mut p, &mut rec, 2, &[0, 1, 3], 1_100);
    rec.count(Vpn(2), NodeId(1), 100);
    end(&mut p, &mut rec, 2, 2_000);
    construct(&mut p, &mut rec, 3, &[0, 1, 2, 3], 2_100);
    rec.count(Vpn(2), NodeId(1), 5);
    rec.count(Vpn(2), NodeId(2), 95);
    rec.clear();
    end(&mut p, &mut rec, 3, 3_000);
    assert_eq!(moves(&rec), &[Action::Migrate(Vpn(2), NodeId(2))]);
    assert_eq!(counter(&p, "sa_migrations_resumed"), 1);
}

#[test]
fn k_is_the_rising_node_with_the_most_accesses() {
    let (mut p, mut rec) = scene(config());
    first_iteration(&mut p, &mut rec, 100);
    construct(&mut p, &mut rec, 1, &[0, 1, 3], 100);
    rec.count(Vpn(2), NodeId(1), 30);
    rec.count(Vpn(2), NodeId(3), 60);
    rec.clear();
    end(&mut p, &mut rec, 1, 1_000);
    assert_eq!(moves(&rec), &[Action::Migrate(Vpn(2), NodeId(3))]);
}

#[test]
fn no_migration_when_the_home_count_does_not_drop() {
    let (mut p, mut rec) = scene(config());
    first_iteration(&mut p, &mut rec, 100);
    construct(&mut p, &mut rec, 1, &[0, 1, 3], 100);
    rec.count(Vpn(2), NodeId(2), 100);
    rec.count(Vpn(2), NodeId(1), 80);
    rec.clear();
    end(&mut p, &mut rec, 1, 1_000);
    assert!(moves(&rec).is_empty());
    assert_eq!(counter(&p, "sa_candidates"), 0);
}

#[test]
fn no_migration_without_a_rising_remote_node() {
    let (mut p, mut rec) = scene(config());
    first_iteration(&mut p, &mut rec, 100);
    construct(&mut p, &mut rec, 1, &[0, 1, 3], 100);
    rec.count(Vpn(2), NodeId(2), 10);
    rec.clear();
    end(&mut p, &mut rec, 1, 1_000);
    assert!(moves(&rec).is_empty());
    assert_eq!(counter(&p, "sa_candidates"), 0);
}

#[test]
fn no_migration_before_t_thr_has_elapsed() {
    let (mut p, mut rec) = scene(config());
    first_iteration(&mut p, &mut rec, 100);
    construct(&mut p, &mut rec, 1, &[0, 1, 3], 100);
    rec.count(Vpn(2), NodeId(1), 80);
    rec.clear();
    end(&mut p, &mut rec, 1, 100 + T_THR);
    assert!(moves(&rec).is_empty());
    assert_eq!(counter(&p, "sa_candidates"), 1);
    assert_eq!(counter(&p, "sa_candidates_over_thr"), 0);
}

#[test]
fn no_migration_without_a_thread_in_a_matching_state() {
    let (mut p, mut rec) = scene(config());
    first_iteration(&mut p, &mut rec, 100);
    construct(&mut p, &mut rec, 1, &[0, 1, 2, 3], 100);
    rec.count(Vpn(2), NodeId(2), 20);
    rec.count(Vpn(2), NodeId(1), 80);
    rec.clear();
    end(&mut p, &mut rec, 1, 1_000);
    assert!(moves(&rec).is_empty());
    assert_eq!(counter(&p, "sa_candidates"), 1);
}

#[test]
fn a_migrated_thread_moves_only_pages_of_the_node_it_left() {
    let (mut p, mut rec) = scene(config());
    first_iteration(&mut p, &mut rec, 100);
    rec.thread_nodes_mut()[1] = Some(NodeId(3));
    construct(&mut p, &mut rec, 1, &[0, 1, 2, 3], 100);
    // Page 2's home (node 2) is not where the thread came from.
    rec.count(Vpn(2), NodeId(2), 10);
    rec.count(Vpn(2), NodeId(3), 90);
    rec.clear();
    end(&mut p, &mut rec, 1, 1_000);
    assert!(moves(&rec).is_empty());
}

#[test]
fn each_resident_page_read_is_charged_the_counter_read_cost() {
    let (mut p, mut rec) = scene(SchedActivatedConfig {
        counter_read_ns: 11,
        state_read_ns: 0,
        ..config()
    });
    end(&mut p, &mut rec, 0, 10);
    let reads = rec
        .actions()
        .iter()
        .filter(|a| **a == Action::Charge(Ns(11)))
        .count();
    assert_eq!(reads, 4);
    assert_eq!(counter(&p, "sa_pages_examined"), 4);
}

#[test]
fn t_thr_is_the_affinity_sets_migration_time() {
    let (mut p, mut rec) = scene(SchedActivatedConfig {
        t_thr_ns: 0,
        ..config()
    });
    // Four resident pages, the program on two nodes: two pages per thread.
    construct(&mut p, &mut rec, 0, &[0, 1], 0);
    end(&mut p, &mut rec, 0, 10);
    let cost = rec.machine().migration_cost();
    assert_eq!(p.t_thr(), Ns(2 * cost.0));
}

#[test]
fn a_page_moved_inline_restarts_its_counts() {
    let (mut p, mut rec) = scene(config());
    first_iteration(&mut p, &mut rec, 100);
    construct(&mut p, &mut rec, 1, &[0, 1, 3], 100);
    rec.count(Vpn(2), NodeId(1), 80);
    end(&mut p, &mut rec, 1, 1_000);
    // Iteration 2 as iteration 1: the page is local to node 1 now and stays.
    construct(&mut p, &mut rec, 2, &[0, 1, 3], 1_100);
    rec.count(Vpn(2), NodeId(1), 80);
    rec.clear();
    end(&mut p, &mut rec, 2, 2_000);
    assert!(moves(&rec).is_empty());
    assert_eq!(rec.home(Vpn(2)), NodeId(1));
}

// Sec. 4.3 and 5.3: the options.

/// Page 2 referenced 100 times by its home node 2 and then, with its thread
/// preempted, 60 times an iteration by node 1 for two iterations: the default criterion
/// sees a drop only in the first (before t_thr), so only the competitive one can move it.
fn competitive_scene(config: SchedActivatedConfig) -> (SchedActivated, Recording) {
    let (mut p, mut rec) = scene(config);
    first_iteration(&mut p, &mut rec, 100);
    construct(&mut p, &mut rec, 1, &[0, 1, 3], 100);
    rec.count(Vpn(2), NodeId(1), 60);
    end(&mut p, &mut rec, 1, 200);
    construct(&mut p, &mut rec, 2, &[0, 1, 3], 300);
    rec.count(Vpn(2), NodeId(1), 60);
    rec.clear();
    end(&mut p, &mut rec, 2, 400);
    (p, rec)
}

#[test]
fn the_competitive_criterion_is_off_by_default() {
    let (_, rec) = competitive_scene(config());
    assert!(moves(&rec).is_empty());
}

#[test]
fn the_competitive_criterion_moves_a_page_the_default_one_leaves() {
    let (p, rec) = competitive_scene(SchedActivatedConfig {
        competitive: true,
        competitive_threshold: 10,
        ..config()
    });
    assert_eq!(moves(&rec), &[Action::Migrate(Vpn(2), NodeId(1))]);
    assert_eq!(counter(&p, "sa_migrations_competitive"), 1);
}

#[test]
fn without_decay_obsolete_history_holds_the_competitive_criterion_back() {
    let (_, rec) = competitive_scene(SchedActivatedConfig {
        competitive: true,
        competitive_threshold: 70,
        ..config()
    });
    // Node 1's 120 exceed node 2's 100 by 20 only.
    assert!(moves(&rec).is_empty());
}

#[test]
fn decay_on_preemption_lets_the_competitive_criterion_move_the_page() {
    let (p, rec) = competitive_scene(SchedActivatedConfig {
        competitive: true,
        competitive_threshold: 70,
        decay: true,
        ..config()
    });
    assert_eq!(moves(&rec), &[Action::Migrate(Vpn(2), NodeId(1))]);
    assert_eq!(counter(&p, "sa_decays"), 1);
}

#[test]
fn below_the_load_threshold_migrations_go_to_the_helper_thread() {
    let (mut p, mut rec) = scene(SchedActivatedConfig {
        overlap_below_load_pct: 101,
        ..config()
    });
    first_iteration(&mut p, &mut rec, 100);
    construct(&mut p, &mut rec, 1, &[0, 1, 3], 100);
    rec.count(Vpn(2), NodeId(1), 80);
    rec.clear();
    end(&mut p, &mut rec, 1, 1_000);
    assert!(moves(&rec).is_empty());
    assert_eq!(p.on_daemon(&mut rec, 0), DaemonNext::After(Ns(1_000_000)));
    assert_eq!(moves(&rec), &[Action::Migrate(Vpn(2), NodeId(1))]);
    assert_eq!(counter(&p, "sa_migrations_overlapped"), 1);
}

#[test]
fn at_or_above_the_load_threshold_migrations_are_inline() {
    // Every processor of the double has a thread: load 100%.
    let (mut p, mut rec) = scene(SchedActivatedConfig {
        overlap_below_load_pct: 100,
        ..config()
    });
    first_iteration(&mut p, &mut rec, 100);
    construct(&mut p, &mut rec, 1, &[0, 1, 3], 100);
    rec.count(Vpn(2), NodeId(1), 80);
    rec.clear();
    end(&mut p, &mut rec, 1, 1_000);
    assert_eq!(moves(&rec), &[Action::Migrate(Vpn(2), NodeId(1))]);
}

#[test]
fn the_helper_thread_exists_only_when_migrations_may_be_overlapped() {
    let machine = recording(NODES, 16, 0, HistoryMode::None).machine().clone();
    let inline = SchedActivated::new(config(), &machine).unwrap();
    assert!(inline.daemons(&machine).is_empty());
    let helper = SchedActivated::new(SchedActivatedConfig::default(), &machine).unwrap();
    let d = helper.daemons(&machine);
    assert_eq!(d[0].placement, DaemonPlacement::StealOn(NodeId(NODES - 1)));
}

#[test]
fn an_out_of_range_parameter_is_an_error_naming_the_field() {
    let machine = recording(NODES, 16, 0, HistoryMode::None).machine().clone();
    let bad = |c: SchedActivatedConfig| SchedActivated::new(c, &machine).unwrap_err().field;
    let over = SchedActivatedConfig {
        overlap_below_load_pct: 102,
        ..config()
    };
    assert_eq!(bad(over), "policy.overlap_below_load_pct");
    let period = SchedActivatedConfig {
        helper_period_ns: 1,
        ..config()
    };
    assert_eq!(bad(period), "policy.helper_period_ns");
    let decay = SchedActivatedConfig {
        decay_amount: 0,
        ..config()
    };
    assert_eq!(bad(decay), "policy.decay_amount");
}

#[test]
fn programs_not_listed_are_left_alone() {
    let (mut p, mut rec) = scene(SchedActivatedConfig {
        programs: vec![1],
        ..config()
    });
    poll(&mut p, &mut rec, 1, 0, Boundary::Enter);
    end(&mut p, &mut rec, 0, 10);
    assert!(p.thread(ThreadId(1)).is_none());
    assert!(rec.actions().is_empty());
}

// Tables 2 and 3: scheduling changes that last over t_thr.

#[test]
fn a_preemption_lasting_over_t_thr_is_counted_once() {
    let (mut p, mut rec) = scene(config());
    first_iteration(&mut p, &mut rec, 10);
    construct(&mut p, &mut rec, 1, &[0, 1, 3], 100);
    end(&mut p, &mut rec, 1, 100 + T_THR + 1);
    end(&mut p, &mut rec, 2, 100 + 3 * T_THR);
    assert_eq!(counter(&p, "sa_long_preemptions"), 1);
}

#[test]
fn a_preemption_shorter_than_t_thr_is_not_counted() {
    let (mut p, mut rec) = scene(config());
    first_iteration(&mut p, &mut rec, 10);
    construct(&mut p, &mut rec, 1, &[0, 1, 3], 100);
    end(&mut p, &mut rec, 1, 200);
    construct(&mut p, &mut rec, 2, &[0, 1, 2, 3], 300);
    end(&mut p, &mut rec, 2, 300 + 3 * T_THR);
    assert_eq!(counter(&p, "sa_long_preemptions"), 0);
}

#[test]
fn a_stay_on_a_new_node_lasting_over_t_thr_counts_the_migration() {
    let (mut p, mut rec) = scene(config());
    first_iteration(&mut p, &mut rec, 10);
    rec.thread_nodes_mut()[1] = Some(NodeId(3));
    construct(&mut p, &mut rec, 1, &[0, 1, 2, 3], 100);
    end(&mut p, &mut rec, 1, 100 + T_THR + 1);
    assert_eq!(counter(&p, "sa_long_migrations"), 1);
}

#[test]
fn a_thread_moving_on_before_t_thr_does_not_count_its_migration() {
    let (mut p, mut rec) = scene(config());
    first_iteration(&mut p, &mut rec, 10);
    rec.thread_nodes_mut()[1] = Some(NodeId(3));
    construct(&mut p, &mut rec, 1, &[0, 1, 2, 3], 100);
    rec.thread_nodes_mut()[1] = Some(NodeId(2));
    construct(&mut p, &mut rec, 2, &[0, 1, 2, 3], 200);
    assert_eq!(counter(&p, "sa_long_migrations"), 0);
    end(&mut p, &mut rec, 1, 200 + T_THR + 1);
    assert_eq!(counter(&p, "sa_long_migrations"), 1);
}
