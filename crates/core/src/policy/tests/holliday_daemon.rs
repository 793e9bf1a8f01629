//! Unit tests of the `holliday_daemon` policy against the recording double, one behaviour each.

use super::*;
use crate::mm::{Action, Recording};
use crate::policy::test_scene::recording;

/// `daemons` daemons blocking 50 us over `npages` unplaced pages on `nodes` nodes,
/// initialised.
fn setup(
    nodes: u16,
    npages: usize,
    history: HistoryMode,
    daemons: u32,
) -> (HollidayDaemon, Recording) {
    let mut rec = recording(nodes, 8, npages, history);
    let config = HollidayConfig {
        daemons,
        blocking_ns: 50_000,
        history,
        ..HollidayConfig::default()
    };
    let mut policy = HollidayDaemon::new(config, rec.machine()).unwrap();
    policy.init(&mut rec);
    (policy, rec)
}

fn refs(rec: &mut Recording, vpn: u32, node: u16, count: u32) {
    rec.history_mut().record(Vpn(vpn), NodeId(node), count);
}

/// Steps daemon `id` through one whole pass (until it counts the pass or stops):
/// the actions of each step and what each step asked for next.
fn pass(
    policy: &mut HollidayDaemon,
    rec: &mut Recording,
    id: usize,
) -> Vec<(Vec<Action>, DaemonNext)> {
    let mut steps = Vec::new();
    for _ in 0..1000 {
        let before = rec.actions().len();
        let next = policy.on_daemon(rec, id);
        let actions = rec.actions()[before..].to_vec();
        let done = next == DaemonNext::Stop || actions.contains(&Action::DaemonPass);
        steps.push((actions, next));
        if done {
            return steps;
        }
    }
    panic!("a pass that never ends");
}

fn migrations(rec: &Recording) -> Vec<(Vpn, NodeId)> {
    rec.actions()
        .iter()
        .filter_map(|a| match *a {
            Action::Migrate(v, n) => Some((v, n)),
            _ => None,
        })
        .collect()
}

fn examined(rec: &Recording) -> Vec<(Vpn, NodeId)> {
    rec.actions()
        .iter()
        .filter_map(|a| match *a {
            Action::ExamineHistory(v, n) => Some((v, n)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_pass_moves_a_page_to_the_node_that_referenced_it_most() {
    let (mut policy, mut rec) = setup(3, 1, HistoryMode::Usage, 1);
    rec.place(Vpn(0), NodeId(0)).unwrap();
    refs(&mut rec, 0, 0, 2);
    refs(&mut rec, 0, 1, 5);
    refs(&mut rec, 0, 2, 9);
    rec.clear();
    pass(&mut policy, &mut rec, 0);
    assert_eq!(migrations(&rec), [(Vpn(0), NodeId(2))]);
    assert_eq!(rec.page(Vpn(0)).home, NodeId(2));
}

#[test]
fn a_page_whose_home_referenced_it_as_often_as_anyone_stays() {
    // Home on node 1 so that a lost tie would send the page to the lower node 0.
    let (mut policy, mut rec) = setup(2, 1, HistoryMode::Usage, 1);
    rec.place(Vpn(0), NodeId(1)).unwrap();
    refs(&mut rec, 0, 0, 5);
    refs(&mut rec, 0, 1, 5);
    rec.clear();
    pass(&mut policy, &mut rec, 0);
    assert_eq!(migrations(&rec), []);
    assert_eq!(rec.page(Vpn(0)).home, NodeId(1));
}

#[test]
fn refbit_history_sees_only_whether_a_node_referenced_the_page() {
    // 100 references against 1 is a tie for Referenced bits: the page stays home.
    let (mut policy, mut rec) = setup(2, 1, HistoryMode::RefBit, 1);
    rec.place(Vpn(0), NodeId(0)).unwrap();
    refs(&mut rec, 0, 0, 1);
    refs(&mut rec, 0, 1, 100);
    rec.clear();
    pass(&mut policy, &mut rec, 0);
    assert_eq!(migrations(&rec), []);
}

#[test]
fn aging_history_remembers_references_from_earlier_passes() {
    // Node 1 referenced the page in the previous interval (its register was shifted
    // then), nobody since: the aged register still pulls the page to node 1.
    let (mut policy, mut rec) = setup(2, 1, HistoryMode::Aging(2), 1);
    rec.place(Vpn(0), NodeId(0)).unwrap();
    refs(&mut rec, 0, 1, 1);
    rec.history_mut().examine(Vpn(0), NodeId(1));
    rec.clear();
    pass(&mut policy, &mut rec, 0);
    assert_eq!(migrations(&rec), [(Vpn(0), NodeId(1))]);
}

#[test]
fn a_pass_sees_only_the_references_made_since_the_previous_pass() {
    let (mut policy, mut rec) = setup(2, 1, HistoryMode::Usage, 1);
    rec.place(Vpn(0), NodeId(0)).unwrap();
    refs(&mut rec, 0, 0, 5);
    pass(&mut policy, &mut rec, 0);
    // Node 0's 5 references were consumed by the first pass; node 1's 2 now win.
    refs(&mut rec, 0, 1, 2);
    rec.clear();
    pass(&mut policy, &mut rec, 0);
    assert_eq!(migrations(&rec), [(Vpn(0), NodeId(1))]);
}

#[test]
fn the_examine_phase_locks_one_entry_copy_at_a_time_and_charges_the_examine_cost() {
    let (mut policy, mut rec) = setup(2, 2, HistoryMode::Usage, 1);
    rec.place(Vpn(0), NodeId(0)).unwrap();
    rec.clear();
    let next = policy.on_daemon(&mut rec, 0);
    let (v, n0, n1) = (Vpn(0), NodeId(0), NodeId(1));
    assert_eq!(
        rec.actions(),
        [
            Action::AcquirePte(v, n0),
            Action::ExamineHistory(v, n0),
            Action::Charge(Ns(3)),
            Action::ReleasePte(v, n0),
            Action::AcquirePte(v, n1),
            Action::ExamineHistory(v, n1),
            Action::Charge(Ns(3)),
            Action::ReleasePte(v, n1),
        ]
    );
    // One entry lock (5) and one examination (3) per copy.
    assert_eq!(rec.cost(), Ns(2 * (5 + 3)));
    assert_eq!(
        next,
        DaemonNext::After(Ns::ZERO),
        "one page per step, the next at once"
    );
}

#[test]
fn only_nodes_running_a_thread_have_their_entry_copy_examined() {
    let (mut policy, mut rec) = setup(3, 1, HistoryMode::Usage, 1);
    rec.place(Vpn(0), NodeId(0)).unwrap();
    // Node 1 referenced the page most, but no thread runs there any more.
    refs(&mut rec, 0, 1, 9);
    refs(&mut rec, 0, 2, 1);
    *rec.thread_nodes_mut() = vec![Some(NodeId(2)), None, Some(NodeId(2))];
    rec.clear();
    pass(&mut policy, &mut rec, 0);
    assert_eq!(examined(&rec), [(Vpn(0), NodeId(2))]);
    assert_eq!(migrations(&rec), [(Vpn(0), NodeId(2))]);
}

#[test]
fn the_migration_phase_holds_every_entry_copy_while_the_page_moves() {
    let (mut policy, mut rec) = setup(2, 1, HistoryMode::Usage, 1);
    rec.place(Vpn(0), NodeId(0)).unwrap();
    refs(&mut rec, 0, 1, 1);
    // The first step examines page 0. The next runs once its work is done (the
    // double's clock stands still: left at 0, the step would wait for the entry
    // locks the first one just released).
    policy.on_daemon(&mut rec, 0);
    rec.now = rec.cost();
    rec.clear();
    let next = policy.on_daemon(&mut rec, 0);
    let (v, n0, n1) = (Vpn(0), NodeId(0), NodeId(1));
    assert_eq!(
        rec.actions(),
        [
            Action::AcquirePte(v, n0),
            Action::AcquirePte(v, n1),
            Action::Migrate(v, n1),
            Action::Charge(Ns(3)),
            Action::ReleasePte(v, n0),
            Action::Charge(Ns(3)),
            Action::ReleasePte(v, n1),
        ]
    );
    // Two entry locks, the migration (1000 + 16 words at 2), two entry updates.
    assert_eq!(rec.cost(), Ns(2 * 5 + 1000 + 32 + 2 * 3));
    assert_eq!(next, DaemonNext::After(Ns::ZERO));
}

#[test]
fn a_page_stays_when_its_destination_has_no_free_frame() {
    let mut rec = recording(2, 1, 2, HistoryMode::Usage);
    let mut policy = HollidayDaemon::new(
        HollidayConfig {
            history: HistoryMode::Usage,
            ..HollidayConfig::default()
        },
        rec.machine(),
    )
    .unwrap();
    policy.init(&mut rec);
    rec.place(Vpn(0), NodeId(0)).unwrap();
    rec.place(Vpn(1), NodeId(1)).unwrap(); // node 1's only frame
    refs(&mut rec, 0, 1, 7);
    rec.clear();
    pass(&mut policy, &mut rec, 0);
    assert_eq!(migrations(&rec), [(Vpn(0), NodeId(1))], "tried");
    assert_eq!(rec.page(Vpn(0)).home, NodeId(0), "refused");
    let count = |f: fn(&Action) -> bool| rec.actions().iter().filter(|a| f(a)).count();
    assert_eq!(
        count(|a| matches!(a, Action::AcquirePte(..))),
        count(|a| matches!(a, Action::ReleasePte(..))),
        "every entry copy taken is released"
    );
}

#[test]
fn several_daemons_partition_the_pages() {
    let (mut policy, mut rec) = setup(2, 5, HistoryMode::Usage, 2);
    let pages = |rec: &Recording| {
        let mut v: Vec<u32> = examined(rec).iter().map(|(p, _)| p.0).collect();
        v.dedup();
        v
    };
    pass(&mut policy, &mut rec, 0);
    assert_eq!(pages(&rec), [0, 1, 2]);
    rec.clear();
    pass(&mut policy, &mut rec, 1);
    assert_eq!(pages(&rec), [3, 4]);
}

#[test]
fn a_daemon_with_no_pages_stops() {
    let (mut policy, mut rec) = setup(2, 2, HistoryMode::Usage, 3);
    assert_eq!(policy.on_daemon(&mut rec, 2), DaemonNext::Stop);
    assert_eq!(rec.actions(), []);
}

#[test]
fn a_finished_pass_sleeps_for_the_blocking_duration() {
    let (mut policy, mut rec) = setup(2, 2, HistoryMode::Usage, 1);
    rec.place(Vpn(0), NodeId(0)).unwrap();
    refs(&mut rec, 0, 1, 1);
    let steps = pass(&mut policy, &mut rec, 0);
    let (last, others) = steps.split_last().unwrap();
    assert_eq!(last.1, DaemonNext::After(Ns(50_000)));
    assert!(others.iter().all(|s| s.1 == DaemonNext::After(Ns::ZERO)));
    let passes = rec.actions().iter().filter(|a| **a == Action::DaemonPass);
    assert_eq!(passes.count(), 1);
    // The next pass starts over at the first page.
    rec.clear();
    policy.on_daemon(&mut rec, 0);
    assert_eq!(examined(&rec)[0].0, Vpn(0));
}

#[test]
fn each_daemon_runs_on_a_processor_of_its_own_and_first_wakes_after_the_blocking_duration() {
    let (policy, rec) = setup(2, 4, HistoryMode::Usage, 2);
    let specs = policy.daemons(rec.machine());
    assert_eq!(specs.len(), 2);
    for s in specs {
        assert_eq!(s.placement, DaemonPlacement::OwnProcessor);
        assert_eq!(s.first_wake, Ns(50_000));
    }
}

#[test]
fn partitions_cover_every_page_once() {
    for (pages, k) in [(10, 1), (10, 2), (7, 3), (2, 5), (0, 2)] {
        let parts = partition(pages, k);
        assert_eq!(parts.len(), k as usize);
        let mut seen = vec![0u32; pages as usize];
        for r in &parts {
            for p in r.clone() {
                seen[p as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&c| c == 1), "{pages} pages, {k} daemons");
    }
}
