//! `holliday-daemon`: periodic migration daemons with reference history (Holliday, ASPLOS
//! 1989, section 3).
//!
//! One or more daemons, each on a processor of its own and owning a contiguous partition
//! of the page table, repeat a pass: block for the blocking duration, then an *examine
//! phase* that locks one copy of a page-table entry at a time (one copy per node with a
//! user process), reads and clears its reference history, and picks the page's
//! destination; then a *migration phase* that, for each chosen page, locks every copy of
//! its entry at once, moves the page and updates every copy. The policy is the paper's
//! greedy pull: move a page to the node that referenced it most since the last pass; no
//! move when nobody referenced it or its home node referenced it as often as anyone.
//!
//! The daemon works one page per engine event, so user references and daemon steps
//! interleave in time: a user reference that finds its entry copy held by a daemon waits
//! for it, and a daemon that wants an entry a user is using waits for the access under
//! way. Lock contention against responsiveness (section 3.2) is what these waits add up
//! to; nothing here estimates it.

use super::{DaemonNext, DaemonPlacement, DaemonSpec, Mm, Policy, StaticConfig, StaticPolicy};
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::history::HistoryMode;
use crate::machine::Machine;
use crate::types::{NodeId, Ns, Vpn};
use serde::{Deserialize, Serialize};

/// Parameters of `holliday-daemon`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct HollidayConfig {
    /// Number of migration daemons, each on its own processor with its own partition of
    /// the pages. Default 1 (the paper tries 1 and 2).
    #[field(min = 1, max = 65_536)]
    pub daemons: u32,
    /// Blocking duration between passes, in ns. Default 0 (the paper tries 0, 50 us and
    /// 10,000 us).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub blocking_ns: u64,
    /// Reference-history mechanism: `usage` (the Usage field, default), `refbit`, or
    /// `aging:k` (k Referenced bits shifted at each examination).
    pub history: HistoryMode,
    /// Initial placement (default: where the program puts its data, first touch for the
    /// rest — the paper's None baseline).
    #[field(nested)]
    pub initial: StaticConfig,
}

impl Default for HollidayConfig {
    fn default() -> Self {
        HollidayConfig {
            daemons: 1,
            blocking_ns: 0,
            history: HistoryMode::Usage,
            initial: program_placement(),
        }
    }
}

/// Program-directed initial placement with first touch for the pages the program leaves.
pub(crate) fn program_placement() -> StaticConfig {
    StaticConfig {
        placement: super::StaticPlacement::Program,
        ..StaticConfig::default()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    /// Waking up: the pass starts with the examine phase at the partition's first page.
    Start,
    /// Examining the entry copies of this page next.
    Examine(u32),
    /// Migrating the `i`-th chosen page next.
    Migrate(usize),
}

#[derive(Debug)]
struct Daemon {
    pages: std::ops::Range<u32>,
    phase: Phase,
    chosen: Vec<(Vpn, NodeId)>,
}

impl crate::registry::Describe for HollidayConfig {
    const KIND: &'static str = "holliday-daemon";
    const DESCRIPTION: &'static str = "periodic migration daemons, greedy pull on usage/refbit/aging history, PTE locking (Holliday 1989)";
}

impl crate::policy::PolicyParams for HollidayConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn crate::policy::Policy>, ConfigError> {
        Ok(Box::new(HollidayDaemon::new(self.clone(), machine)?))
    }
}

inventory::submit!(crate::policy::PolicyEntry::of::<HollidayConfig>());

/// The policy.
#[derive(Debug)]
pub struct HollidayDaemon {
    config: HollidayConfig,
    initial: StaticPolicy,
    daemons: Vec<Daemon>,
    /// Nodes holding a copy of the page table this pass (one per node with a running
    /// user thread), ascending.
    copies: Vec<NodeId>,
    counts: Vec<u32>,
}

impl HollidayDaemon {
    /// The policy for `machine`.
    pub fn new(config: HollidayConfig, machine: &Machine) -> Result<HollidayDaemon, ConfigError> {
        config.check_ranges("policy")?;
        if config.daemons == 0 {
            return Err(ConfigError::new("policy.daemons", "must be at least 1"));
        }
        if config.history == HistoryMode::None {
            return Err(ConfigError::new(
                "policy.history",
                "a migration daemon needs reference history: usage, refbit or aging:K",
            ));
        }
        let c = machine.costs();
        if config.blocking_ns == 0 && c.pte_lock_ns + c.pte_examine_ns == 0 {
            return Err(ConfigError::new(
                "policy.blocking_ns",
                "this machine's page-table-entry costs are zero, so a daemon that never \
                 blocks would spin in zero time; set policy.blocking_ns or the machine's \
                 pte_lock_ns / pte_examine_ns",
            ));
        }
        let initial = StaticPolicy::new(config.initial.clone(), machine).map_err(|e| {
            ConfigError::new(
                e.field.replacen("policy.", "policy.initial.", 1),
                e.message.clone(),
            )
        })?;
        Ok(HollidayDaemon {
            config,
            initial,
            daemons: Vec::new(),
            copies: Vec::new(),
            counts: vec![0; machine.nodes()],
        })
    }

    /// One examine step: every copy of `vpn`'s entry, one at a time.
    fn examine(&mut self, ctx: &mut dyn Mm, d: usize, vpn: Vpn) {
        let examine = Ns(ctx.machine().costs().pte_examine_ns);
        for c in self.counts.iter_mut() {
            *c = 0;
        }
        for &n in &self.copies {
            let hold = ctx.acquire_pte(vpn, n);
            self.counts[n.idx()] = ctx.examine_history(vpn, n);
            ctx.charge(examine);
            ctx.release_pte(hold);
        }
        let page = ctx.page(vpn);
        if page.copies.len() != 1 {
            return;
        }
        let home = page.home;
        // The most referencing node, the lowest-numbered among equals.
        let (best, &top) = self
            .counts
            .iter()
            .enumerate()
            .max_by_key(|&(i, c)| (*c, std::cmp::Reverse(i)))
            .expect("a machine has nodes");
        if top > 0 && top > self.counts[home.idx()] {
            self.daemons[d].chosen.push((vpn, NodeId(best as u16)));
        }
    }
}

impl Policy for HollidayDaemon {
    fn name(&self) -> &'static str {
        "holliday-daemon"
    }

    fn history(&self) -> HistoryMode {
        self.config.history
    }

    fn acquires_ptes(&self) -> bool {
        true
    }

    fn initial_placement(
        &mut self,
        machine: &Machine,
        vpn: Vpn,
        hint: Option<NodeId>,
    ) -> Option<NodeId> {
        self.initial.initial_placement(machine, vpn, hint)
    }

    fn init(&mut self, ctx: &mut dyn Mm) {
        let pages = ctx.npages() as u32;
        let k = self.config.daemons;
        self.daemons = partition(pages, k)
            .into_iter()
            .map(|pages| Daemon {
                pages,
                phase: Phase::Start,
                chosen: Vec::new(),
            })
            .collect();
    }

    fn daemons(&self, _machine: &Machine) -> Vec<DaemonSpec> {
        (0..self.config.daemons)
            .map(|i| DaemonSpec {
                name: format!("migration daemon {i}"),
                placement: DaemonPlacement::OwnProcessor,
                first_wake: Ns(self.config.blocking_ns),
            })
            .collect()
    }

    fn on_daemon(&mut self, ctx: &mut dyn Mm, id: usize) -> DaemonNext {
        let phase = self.daemons[id].phase.clone();
        match phase {
            Phase::Start if self.daemons[id].pages.is_empty() => DaemonNext::Stop,
            Phase::Start => {
                self.copies = page_table_copies(ctx);
                let first = self.daemons[id].pages.start;
                self.daemons[id].chosen.clear();
                self.daemons[id].phase = Phase::Examine(first);
                self.on_daemon(ctx, id)
            }
            Phase::Examine(p) => {
                if p < self.daemons[id].pages.end {
                    self.examine(ctx, id, Vpn(p));
                    self.daemons[id].phase = Phase::Examine(p + 1);
                    DaemonNext::After(Ns::ZERO)
                } else {
                    self.daemons[id].phase = Phase::Migrate(0);
                    self.on_daemon(ctx, id)
                }
            }
            Phase::Migrate(i) => {
                if let Some(&(vpn, to)) = self.daemons[id].chosen.get(i) {
                    locked_migrate(ctx, vpn, to, &self.copies);
                    self.daemons[id].phase = Phase::Migrate(i + 1);
                    DaemonNext::After(Ns::ZERO)
                } else {
                    ctx.count_daemon_pass();
                    self.daemons[id].phase = Phase::Start;
                    DaemonNext::After(Ns(self.config.blocking_ns))
                }
            }
        }
    }
}

/// The nodes holding a copy of the page table: every node running a user process
/// (section 3), ascending.
pub(crate) fn page_table_copies(ctx: &dyn Mm) -> Vec<NodeId> {
    let mut nodes: Vec<NodeId> = ctx.thread_nodes().iter().flatten().copied().collect();
    nodes.sort_unstable();
    nodes.dedup();
    nodes
}

/// Migrates `vpn` to `to` under the paper's locking protocol: every copy of its entry is
/// held while the page moves and each copy is updated.
pub(crate) fn locked_migrate(ctx: &mut dyn Mm, vpn: Vpn, to: NodeId, copies: &[NodeId]) {
    let update = Ns(ctx.machine().costs().pte_examine_ns);
    let holds: Vec<_> = copies.iter().map(|&n| ctx.acquire_pte(vpn, n)).collect();
    // A full destination refuses the page; it stays where it is.
    let _ = ctx.migrate(vpn, to);
    for h in holds {
        ctx.charge(update);
        ctx.release_pte(h);
    }
}

/// Splits pages `0..pages` into `k` contiguous partitions whose sizes differ by at most one.
pub fn partition(pages: u32, k: u32) -> Vec<std::ops::Range<u32>> {
    let k = k.max(1);
    let (base, extra) = (pages / k, pages % k);
    let mut start = 0;
    (0..k)
        .map(|i| {
            let len = base + u32::from(i < extra);
            let r = start..start + len;
            start += len;
            r
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineConfig;
    use crate::mm::{test_machine_config, Action, Recording};

    /// The double on the unit-test machine with `nodes` nodes of `frames` frames (costs:
    /// entry lock 5, entry examine 3, migration 1000 + 16 words at 2), one thread per node.
    fn recording(nodes: u16, frames: u32, npages: usize, history: HistoryMode) -> Recording {
        let machine = Machine::new(MachineConfig {
            frames_per_node: frames,
            ..test_machine_config(nodes)
        })
        .unwrap();
        Recording::new(machine, npages, history)
    }

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
}
