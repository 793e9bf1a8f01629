//! `tpp`: Transparent Page Placement (Maruf et al., ASPLOS 2023), as its patch series
//! to Linux describes it (LKML, November 2021, "Transparent Page Placement for
//! Tiered-Memory", patches 2/5 to 5/5).
//!
//! - **Demotion ahead of need** (patches 3/5 and 4/5). Reclaim and allocation are
//!   decoupled: a fast node's reclaim starts when its free memory falls below a demotion
//!   watermark, `demote_scale_factor / 10000` of the node (at least twice the high
//!   watermark), and demotes its coldest pages to the slow tier until free memory is
//!   back at that watermark, so that new allocations and promotions find room in the
//!   fast tier. Coldness: a clock over Accessed bits standing in for the LRU lists.
//! - **Promotion** (patches 2/5 and 5/5). NUMA balancing's scanner protects slow-tier
//!   pages only; a hinting fault on a slow-tier page promotes it to the faulting node
//!   only when the page is on the active LRU list. A page's first hinting fault marks it
//!   accessed (`mark_page_accessed`), so the next one finds it active: here, a page is
//!   active from its second hinting fault on, until it is demoted. A promotion needs free
//!   memory above the fast node's high watermark (`migrate_balanced_pgdat`).
//! - **Scanning** as NUMA balancing's ([`super::numa_scan`]): `scan_size_mb` of slow-tier
//!   pages each `scan_delay_ms`.
//!
//! The fast tier is the nodes with processors, the slow tier the memory-only nodes.
//! Not modelled: file pages and their page-type-aware allocation (TPP puts file cache on
//! the slow tier first), kswapd's 10 s retry after failures, the LRU lists themselves, and
//! the scan period's adaptation (as in `linux-tiering`, slow-tier hinting faults are taken
//! not to feed it).

use super::numa_scan::{NumaScan, SCAN_DELAY_DIM, SCAN_SIZE_DIM};
use super::tiers::{demotion_targets, slow_tier, Demoter, Watermarks};
use super::{StaticConfig, StaticPolicy};
use crate::component::{default_fault, DaemonNext, DaemonPlacement, DaemonSpec, Fault, Policy};
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::history::HistoryMode;
use crate::machine::Machine;
use crate::mm::{Mm, MonitorSpec};
use crate::stats::Counter;
use crate::tune::{Dim, Scale};
use crate::types::{NodeId, NodeSet, Ns, Vpn};
use serde::{Deserialize, Serialize};

/// Parameters of `tpp`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct TppConfig {
    /// The demotion watermark as a fraction of a fast node, in 1/10000. Default 200, 2 %
    /// (`vm.demote_scale_factor`, TPP patch 3/5).
    #[field(min = 1, max = 10_000)]
    pub demote_scale_factor: u64,
    /// Watermark step as a fraction of a node, in 1/10000. Default 10
    /// (`vm.watermark_scale_factor`).
    #[field(min = 1, max = 3000)]
    pub watermark_scale_factor: u64,
    /// Delay before the first scan and between scans (ms). Default 1000 (NUMA
    /// balancing's `scan_delay`).
    #[field(min = 1, max = 86_400_000, unit = "ms")]
    pub scan_delay_ms: u64,
    /// Memory protected per scan (MB). Default 256 (NUMA balancing's `scan_size`).
    #[field(min = 1, max = 1_048_576, unit = "MB")]
    pub scan_size_mb: u64,
    /// How often the fast nodes' reclaim checks the demotion watermark (ms). Default 10,
    /// an estimate (kswapd is woken by allocations, not periodic).
    #[field(min = 1, max = 86_400_000, unit = "ms")]
    pub kswapd_interval_ms: u64,
    /// Initial placement (default: first touch, fast tier first).
    #[field(nested)]
    pub initial: StaticConfig,
}

impl Default for TppConfig {
    fn default() -> Self {
        TppConfig {
            demote_scale_factor: 200,
            watermark_scale_factor: 10,
            scan_delay_ms: 1000,
            scan_size_mb: 256,
            kswapd_interval_ms: 10,
            initial: StaticConfig::default(),
        }
    }
}

impl crate::registry::Describe for TppConfig {
    const KIND: &'static str = "tpp";
    const DESCRIPTION: &'static str = "TPP: demotion ahead of need at a demotion watermark, promotion of active slow-tier pages by hinting faults (ASPLOS 2023)";
}

/// The search space `tune` explores.
pub const SEARCH_SPACE: [Dim; 3] = [
    Dim {
        field: "demote_scale_factor",
        lo: 10.0,
        hi: 2000.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "0.1 % .. 20 % of a node on a log scale around TPP's 2 % (an estimate)",
    },
    SCAN_SIZE_DIM,
    SCAN_DELAY_DIM,
];

impl crate::component::PolicyParams for TppConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn Policy>, ConfigError> {
        Ok(Box::new(Tpp::new(self.clone(), machine)?))
    }
    const SEARCH_SPACE: &'static [Dim] = &SEARCH_SPACE;
}

inventory::submit!(crate::component::PolicyEntry::of::<TppConfig>());

/// Nanoseconds in a millisecond.
const MS: u64 = 1_000_000;

/// The policy.
#[derive(Debug)]
pub struct Tpp {
    config: TppConfig,
    initial: StaticPolicy,
    scan: NumaScan,
    slow: NodeSet,
    demote_to: Vec<Option<NodeId>>,
    marks: Vec<Watermarks>,
    /// Per node: the demotion watermark (frames).
    demote_mark: Vec<u64>,
    demoter: Demoter,
    /// Per page: whether a hinting fault found it since it last came to the slow tier
    /// (the second makes it active).
    accessed: Vec<bool>,
    scans: u64,
    hinting_faults: u64,
    promoted: u64,
    inactive: u64,
    no_room: u64,
    demoted: u64,
}

impl Tpp {
    /// The policy for `machine`.
    pub fn new(config: TppConfig, machine: &Machine) -> Result<Tpp, ConfigError> {
        config.check_ranges("policy")?;
        let slow = slow_tier(machine, "TPP")?;
        let initial = StaticPolicy::initial(config.initial.clone(), machine)?;
        let page = machine.page_size();
        let marks: Vec<Watermarks> = (0..machine.nodes() as u16)
            .map(|n| {
                Watermarks::of(
                    machine.frames(NodeId(n)) as u64,
                    page,
                    config.watermark_scale_factor,
                )
            })
            .collect();
        let demote_mark = (0..machine.nodes() as u16)
            .map(|n| {
                let frames = machine.frames(NodeId(n)) as u64;
                (frames.saturating_mul(config.demote_scale_factor) / 10_000)
                    .max(2 * marks[n as usize].high)
                    .min(frames)
            })
            .collect();
        Ok(Tpp {
            scan: NumaScan::new(config.scan_size_mb, page),
            demote_to: demotion_targets(machine, slow),
            slow,
            marks,
            demote_mark,
            demoter: Demoter::new(machine.nodes()),
            accessed: Vec::new(),
            initial,
            scans: 0,
            hinting_faults: 0,
            promoted: 0,
            inactive: 0,
            no_room: 0,
            demoted: 0,
            config,
        })
    }

    /// A hinting fault: an active slow-tier page is promoted, an inactive one marked.
    fn hinting_fault(&mut self, ctx: &mut dyn Mm, f: Fault) {
        self.hinting_faults += 1;
        let home = ctx.home(f.vpn);
        if !self.slow.contains(home) || self.slow.contains(f.node) || ctx.copy_count(f.vpn) != 1 {
            return;
        }
        let seen = &mut self.accessed[f.vpn.idx()];
        if !*seen {
            *seen = true;
            self.inactive += 1;
            return;
        }
        if ctx.free_frames(f.node) as u64 <= self.marks[f.node.idx()].high + 1 {
            self.no_room += 1;
            return;
        }
        if ctx.migrate(f.vpn, f.node).is_ok() {
            self.promoted += 1;
            self.accessed[f.vpn.idx()] = false;
        }
    }
}

impl Policy for Tpp {
    fn name(&self) -> &'static str {
        "tpp"
    }

    fn history(&self) -> HistoryMode {
        HistoryMode::RefBit
    }

    fn replicates(&self) -> bool {
        false
    }

    fn state_bytes_per_page(&self) -> u64 {
        1
    }

    fn monitors(&self) -> MonitorSpec {
        MonitorSpec {
            hinting: true,
            ..MonitorSpec::default()
        }
    }

    fn init(&mut self, ctx: &mut dyn Mm) {
        self.accessed = vec![false; ctx.npages()];
    }

    fn initial_placement(
        &mut self,
        machine: &Machine,
        vpn: Vpn,
        hint: Option<NodeId>,
    ) -> Option<NodeId> {
        self.initial.initial_placement(machine, vpn, hint)
    }

    fn on_fault(&mut self, ctx: &mut dyn Mm, f: Fault) {
        if ctx.hinting_fault(f.vpn).is_some() {
            self.hinting_fault(ctx, f);
        }
        default_fault(ctx, f);
    }

    fn daemons(&self, _machine: &Machine) -> Vec<DaemonSpec> {
        vec![
            DaemonSpec {
                name: "numa-scan".into(),
                placement: DaemonPlacement::StealOn(NodeId(0)),
                first_wake: Ns(self.config.scan_delay_ms * MS),
            },
            DaemonSpec {
                name: "kswapd".into(),
                placement: DaemonPlacement::StealOn(NodeId(0)),
                first_wake: Ns(self.config.kswapd_interval_ms * MS),
            },
        ]
    }

    fn on_daemon(&mut self, ctx: &mut dyn Mm, id: usize) -> DaemonNext {
        if ctx.npages() == 0 {
            return DaemonNext::Stop;
        }
        if id == 0 {
            self.scans += 1;
            let slow = self.slow;
            self.scan.scan(ctx, slow);
            return DaemonNext::After(Ns(self.config.scan_delay_ms * MS));
        }
        for n in 0..self.demote_to.len() {
            let Some(to) = self.demote_to[n] else {
                continue;
            };
            let node = NodeId(n as u16);
            let mark = self.demote_mark[n];
            if (ctx.free_frames(node) as u64) < mark {
                self.demoted += self.demoter.demote(ctx, node, to, mark);
            }
        }
        DaemonNext::After(Ns(self.config.kswapd_interval_ms * MS))
    }

    fn counters(&self) -> Vec<Counter> {
        let c = |name, label, value| Counter { name, label, value };
        vec![
            c("tpp_scans", "scans of the slow tier", self.scans),
            c("tpp_hinting_faults", "hinting faults", self.hinting_faults),
            c("tpp_promoted", "pages promoted", self.promoted),
            c(
                "tpp_inactive",
                "faults on inactive pages (marked, not promoted)",
                self.inactive,
            ),
            c(
                "tpp_no_room",
                "active pages without a free frame",
                self.no_room,
            ),
            c("tpp_demoted", "pages demoted", self.demoted),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::{test_machine_config, Action, Recording};
    use crate::policy::test_scene::fault;
    use crate::policy::test_scene::{two_tiers, Tiers};

    /// A fast node 0 of `fast` frames and a slow memory-only node 1, 4 KB pages; the first
    /// `on_fast` of `npages` pages on node 0, the rest on node 1, all mapped from node 0.
    fn scene(fast: u32, npages: u32, on_fast: u32) -> (Tpp, Recording) {
        let tiers = Tiers {
            fast,
            slow: 4096,
            page_bytes: Some(4096),
        };
        two_tiers(tiers, npages, on_fast, HistoryMode::RefBit, |m| {
            Tpp::new(TppConfig::default(), m).unwrap()
        })
    }

    fn scan_then_fault(p: &mut Tpp, rec: &mut Recording, vpn: u32) {
        p.on_daemon(rec, 0);
        rec.clear();
        fault(p, rec, 0, vpn, false);
    }

    #[test]
    fn a_first_hinting_fault_marks_the_page_without_promoting_it() {
        let (mut p, mut rec) = scene(1000, 8, 4);
        scan_then_fault(&mut p, &mut rec, 6);
        assert_eq!(rec.page(Vpn(6)).home, NodeId(1));
        assert_eq!(p.inactive, 1);
    }

    #[test]
    fn a_second_hinting_fault_promotes_the_active_page() {
        let (mut p, mut rec) = scene(1000, 8, 4);
        scan_then_fault(&mut p, &mut rec, 6);
        scan_then_fault(&mut p, &mut rec, 6);
        assert!(rec.actions().contains(&Action::Migrate(Vpn(6), NodeId(0))));
    }

    #[test]
    fn a_fast_node_at_its_high_watermark_takes_no_promotion() {
        // 100 frames: high 48; 60 pages there leave 40 free.
        let (mut p, mut rec) = scene(100, 64, 60);
        scan_then_fault(&mut p, &mut rec, 62);
        scan_then_fault(&mut p, &mut rec, 62);
        assert_eq!(rec.page(Vpn(62)).home, NodeId(1));
        assert_eq!(p.no_room, 1);
    }

    #[test]
    fn reclaim_demotes_below_the_demotion_watermark_until_it_is_met() {
        // 1000 frames of 4 KB: min 63, a step of 15, high 93; the demotion watermark is
        // max(2 % of 1000, 2 x 93) = 186; 900 pages leave 100 free, so 86 go.
        let (mut p, mut rec) = scene(1000, 900, 900);
        p.on_daemon(&mut rec, 1);
        assert_eq!(p.demoted, 86);
        assert_eq!(rec.free_frames(NodeId(0)), 186);
    }

    #[test]
    fn reclaim_spares_pages_accessed_since_its_last_pass() {
        let (mut p, mut rec) = scene(1000, 900, 900);
        for v in 0..100 {
            rec.history_mut().record(Vpn(v), NodeId(0), 1);
        }
        p.on_daemon(&mut rec, 1);
        assert!((0..100).all(|v| rec.page(Vpn(v)).home == NodeId(0)));
    }

    #[test]
    fn a_machine_of_one_tier_is_refused_naming_the_policy() {
        let m = Machine::new(test_machine_config(2)).unwrap();
        let e = Tpp::new(TppConfig::default(), &m).unwrap_err();
        assert_eq!(e.field, "policy.kind");
        assert!(e.message.contains("needs a slow tier"), "{}", e.message);
    }
}
