//! Unit tests of the `foresight` policy against the recording double, one behaviour each.

use super::*;
use crate::history::HistoryMode;
use crate::mm::{Action, Mm, Recording};
use crate::types::Ns;

fn machine() -> Machine {
    Machine::new(crate::mm::test_machine_config(4)).unwrap()
}

fn foresight() -> Foresight {
    Foresight::new(ForesightConfig::default(), &machine()).unwrap()
}

/// A recording with page 0 placed on node 0 and mapped there; thread t runs on node t.
fn scene() -> Recording {
    let mut rec = Recording::new(machine(), 2, HistoryMode::None);
    rec.place(Vpn(0), NodeId(0)).unwrap();
    rec.clear();
    rec
}

#[test]
fn an_advised_page_migrates_to_the_advising_threads_node() {
    let mut rec = scene();
    foresight().on_advise(&mut rec, ThreadId(2), Vpn(0));
    assert!(rec.actions().contains(&Action::Migrate(Vpn(0), NodeId(2))));
    assert_eq!(rec.page(Vpn(0)).home, NodeId(2));
    assert!(rec.cost() > Ns::ZERO, "the migration is charged");
}

#[test]
fn the_migration_locks_the_page_table_entries_and_releases_them() {
    let mut rec = scene();
    foresight().on_advise(&mut rec, ThreadId(2), Vpn(0));
    let acquired = rec
        .actions()
        .iter()
        .filter(|a| matches!(a, Action::AcquirePte(..)))
        .count();
    let released = rec
        .actions()
        .iter()
        .filter(|a| matches!(a, Action::ReleasePte(..)))
        .count();
    assert!(acquired > 0);
    assert_eq!(acquired, released);
}

#[test]
fn a_page_already_on_the_advising_threads_node_stays_and_costs_nothing() {
    let mut rec = scene();
    foresight().on_advise(&mut rec, ThreadId(0), Vpn(0));
    assert_eq!(rec.actions(), []);
    assert_eq!(rec.cost(), Ns::ZERO);
}

#[test]
fn a_replicated_page_is_not_migrated() {
    let mut rec = scene();
    rec.replicate(Vpn(0), NodeId(1)).unwrap();
    rec.clear();
    foresight().on_advise(&mut rec, ThreadId(2), Vpn(0));
    assert_eq!(rec.actions(), []);
}

#[test]
fn advice_from_a_thread_without_a_node_is_ignored() {
    let mut rec = scene();
    rec.thread_nodes_mut()[2] = None;
    foresight().on_advise(&mut rec, ThreadId(2), Vpn(0));
    assert_eq!(rec.actions(), []);
}
