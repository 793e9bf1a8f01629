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
//! The daemon works one page per engine event (several pages' steps in one call while
//! nothing else comes between them: `Mm::next_daemon_step_now`), so user references and
//! daemon steps interleave in time: a user reference that finds its entry copy held by a daemon waits
//! for it, and a daemon that wants an entry a user is using waits for the access under
//! way. Lock contention against responsiveness (section 3.2) is what these waits add up
//! to; nothing here estimates it.

use super::{StaticConfig, StaticPolicy};
use crate::component::{DaemonNext, DaemonPlacement, DaemonSpec, Policy};
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::history::HistoryMode;
use crate::machine::Machine;
use crate::mm::Mm;
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

impl crate::component::PolicyParams for HollidayConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn crate::component::Policy>, ConfigError> {
        Ok(Box::new(HollidayDaemon::new(self.clone(), machine)?))
    }
}

inventory::submit!(crate::component::PolicyEntry::of::<HollidayConfig>());

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
        let initial = StaticPolicy::initial(config.initial.clone(), machine)?;
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
        // `counts` is zero but for the copies examined here, and is left zero again: a
        // step touches the counts of the page-table copies, not of every node.
        let read = ctx.examine_entries(vpn, &self.copies, examine, &mut self.counts);
        let single = ctx.copy_count(vpn) == 1;
        let home = if single {
            self.counts[ctx.home(vpn).idx()]
        } else {
            0
        };
        // The most referencing node, the lowest-numbered among equals (every node but the
        // copies counts zero; of those, only the ones `read` names may not).
        let (mut best, mut top) = (0, 0);
        let mut consider = |n: usize, counts: &mut [u32]| {
            let c = std::mem::take(&mut counts[n]);
            if c > top {
                (best, top) = (n, c);
            }
        };
        if read == u64::MAX {
            for n in &self.copies {
                consider(n.idx(), &mut self.counts);
            }
        } else {
            let mut bits = read;
            while bits != 0 {
                consider(bits.trailing_zeros() as usize, &mut self.counts);
                bits &= bits - 1;
            }
        }
        if single && top > 0 && top > home {
            self.daemons[d].chosen.push((vpn, NodeId(best as u16)));
        }
    }
}

impl Policy for HollidayDaemon {
    fn name(&self) -> &'static str {
        "holliday-daemon"
    }

    fn faults_by_default(&self) -> bool {
        true
    }

    fn replicates(&self) -> bool {
        false
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
                let end = self.daemons[id].pages.end;
                if p < end {
                    // One page a step; the next pages' steps in this call while nothing
                    // else would come between them.
                    let mut p = p;
                    loop {
                        self.examine(ctx, id, Vpn(p));
                        p += 1;
                        if p == end || !ctx.next_daemon_step_now() {
                            break;
                        }
                    }
                    self.daemons[id].phase = Phase::Examine(p);
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
    ctx.migrate_holding_entries(vpn, to, copies, update);
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
#[path = "tests/holliday_daemon.rs"]
mod tests;
