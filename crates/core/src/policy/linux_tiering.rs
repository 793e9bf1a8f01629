//! `linux-tiering`: the memory-tiering mode of Linux's NUMA balancing
//! (`numa_balancing = 2`, `NUMA_BALANCING_MEMORY_TIERING`) with demotion in reclaim, as in
//! Linux 6.3 (`kernel/sched/fair.c`, `mm/mprotect.c`, `mm/migrate.c`, `mm/vmscan.c`,
//! `mm/page_alloc.c`).
//!
//! Tiers: the nodes with processors are the fast (top) tier; memory-only nodes are the
//! slow tier, each fast node demoting to its nearest slow node (`next_demotion_node`).
//!
//! - **Scanning.** As NUMA balancing's scanner ([`super::linux_numa_balancing`]), but of
//!   slow-tier pages only (`change_prot_numa` skips the top tier in this mode), with the
//!   scan's time noted in the page. The scan period does not adapt: the hinting faults of
//!   slow-tier memory return before the task's placement and period update
//!   (`task_numa_fault`), so each scan follows the last after `scan_delay_ms`, the
//!   period's starting value.
//! - **Promotion** (`should_numa_migrate_memory`). A hinting fault on a slow-tier page
//!   promotes it to the faulting thread's node at once while that node has free memory
//!   well above its promotion watermark (`pgdat_free_space_enough`: above `WMARK_PROMO`
//!   plus the larger of 1 GiB and a sixteenth of the node; the hot threshold is then
//!   reset to its default). Otherwise it is a promotion
//!   candidate, promoted when the time from the scan to the fault (the hinting-fault
//!   latency) is below the hot threshold and the node's candidates this second stay
//!   within the promotion rate limit; the migration then also needs free memory above
//!   the high watermark (`migrate_balanced_pgdat`).
//! - **Threshold adjustment** (`numa_promotion_adjust_threshold`). Every
//!   `scan_period_max_ms`, with `ref` the rate limit's pages over that period: more than
//!   1.1 `ref` candidates lower the threshold by a step of an eighth of the default, fewer
//!   than 0.9 `ref` raise it, within one step and twice the default.
//! - **Demotion** (`demotion_enabled`, kswapd). When a fast node's free memory falls
//!   below its low watermark, reclaim demotes pages whose Accessed bits are clear (a
//!   clock over the node's pages standing in for the kernel's LRU lists, which move a
//!   referenced page to the head) to the slow tier until free memory reaches the
//!   promotion watermark (`pgdat_balanced` in tiering mode).
//! - **Watermarks** (`__setup_per_zone_wmarks`): `min` from `min_free_kbytes` =
//!   `sqrt(16 x node kB)` within 128 kB .. 256 MB (`init_per_zone_wmark_min`, taken per
//!   node here), then `low`, `high` and `promo` one step each above it, a step being the
//!   larger of `min / 4` and `watermark_scale_factor / 10000` of the node.
//!
//! Not modelled: the kernel's LRU lists themselves (aging by Accessed bits stands for
//! them), file pages and swap, kswapd being woken by a failed promotion (it runs every
//! `kswapd_interval_ms` instead), the hot threshold's millisecond resolution, and
//! promotion from a node that has no processors' threads (every thread runs on a fast
//! node).

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

/// Parameters of `linux-tiering`; defaults are Linux 6.3's unless said otherwise.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct LinuxTieringConfig {
    /// Delay before the first scan and between scans (ms). Default 1000
    /// (`sysctl_numa_balancing_scan_delay`).
    #[field(min = 1, max = 86_400_000, unit = "ms")]
    pub scan_delay_ms: u64,
    /// Memory protected per scan (MB). Default 256 (`sysctl_numa_balancing_scan_size`).
    #[field(min = 1, max = 1_048_576, unit = "MB")]
    pub scan_size_mb: u64,
    /// The period of the hot threshold's adjustment (ms). Default 60000
    /// (`sysctl_numa_balancing_scan_period_max`).
    #[field(min = 1, max = 86_400_000, unit = "ms")]
    pub scan_period_max_ms: u64,
    /// Hinting-fault latency below which a page is hot (ms). Default 1000
    /// (`sysctl_numa_balancing_hot_threshold`, debugfs `hot_threshold_ms`).
    #[field(min = 1, max = 86_400_000, unit = "ms")]
    pub hot_threshold_ms: u64,
    /// Promotion candidates allowed into a node per second (MB/s). Default 65536
    /// (`numa_balancing_promote_rate_limit_MBps`).
    #[field(min = 1, max = 1_048_576, unit = "MB/s")]
    pub promote_rate_limit_mb_per_s: u64,
    /// Watermark step as a fraction of a node's memory, in 1/10000. Default 10
    /// (`vm.watermark_scale_factor`).
    #[field(min = 1, max = 3000)]
    pub watermark_scale_factor: u64,
    /// Whether reclaim demotes to the slow tier. Default true: the tiering mode is used
    /// with it (the kernel's own default is false, `demotion_enabled`).
    pub demotion: bool,
    /// How often the fast nodes' reclaim checks their watermarks (ms). Default 10, an
    /// estimate (kswapd is woken by allocations, not periodic).
    #[field(min = 1, max = 86_400_000, unit = "ms")]
    pub kswapd_interval_ms: u64,
    /// Initial placement (default: first touch, which fills the fast tier first).
    #[field(nested)]
    pub initial: StaticConfig,
}

impl Default for LinuxTieringConfig {
    fn default() -> Self {
        LinuxTieringConfig {
            scan_delay_ms: 1000,
            scan_size_mb: 256,
            scan_period_max_ms: 60_000,
            hot_threshold_ms: 1000,
            promote_rate_limit_mb_per_s: 65_536,
            watermark_scale_factor: 10,
            demotion: true,
            kswapd_interval_ms: 10,
            initial: StaticConfig::default(),
        }
    }
}

impl crate::registry::Describe for LinuxTieringConfig {
    const KIND: &'static str = "linux-tiering";
    const DESCRIPTION: &'static str = "Linux NUMA balancing in memory-tiering mode: slow-tier scans, promotion by hinting-fault latency under a rate limit with threshold adjustment, demotion in reclaim (Linux 6.3)";
}

/// The search space `tune` explores.
pub const SEARCH_SPACE: [Dim; 4] = [
    Dim {
        field: "hot_threshold_ms",
        lo: 10.0,
        hi: 10_000.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "10 ms .. 10 s on a log scale around the kernel's 1 s (an estimate)",
    },
    Dim {
        field: "promote_rate_limit_mb_per_s",
        lo: 64.0,
        hi: 65_536.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "64 MB/s .. the kernel's 65536 MB/s on a log scale (its documentation suggests under a tenth of the slow tier's write bandwidth)",
    },
    SCAN_SIZE_DIM,
    SCAN_DELAY_DIM,
];

impl crate::component::PolicyParams for LinuxTieringConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn Policy>, ConfigError> {
        Ok(Box::new(LinuxTiering::new(self.clone(), machine)?))
    }
    const SEARCH_SPACE: &'static [Dim] = &SEARCH_SPACE;
}

inventory::submit!(crate::component::PolicyEntry::of::<LinuxTieringConfig>());

/// Nanoseconds in a millisecond.
const MS: u64 = 1_000_000;
/// The promotion rate limit's window: a second.
const RATE_WINDOW_NS: u64 = 1000 * MS;
/// `NUMA_MIGRATION_ADJUST_STEPS`: the threshold moves by `2 x default / 16`.
const ADJUST_STEPS: u64 = 16;

/// The policy.
#[derive(Debug)]
pub struct LinuxTiering {
    config: LinuxTieringConfig,
    initial: StaticPolicy,
    scan: NumaScan,
    /// The slow tier's nodes.
    slow: NodeSet,
    /// Per node: its demotion target (slow nodes: none).
    demote_to: Vec<Option<NodeId>>,
    /// Per node: watermarks (fast nodes).
    marks: Vec<Watermarks>,
    /// The hot threshold now (ns).
    threshold: u64,
    /// Candidates per node in this rate window, when it ends.
    candidates: Vec<u64>,
    rate_window_end: Ns,
    /// Candidates since the last adjustment, and when the next one is due.
    period_candidates: u64,
    adjust_at: Ns,
    demoter: Demoter,
    scans: u64,
    hinting_faults: u64,
    promoted: u64,
    promoted_with_room: u64,
    not_hot: u64,
    rate_limited: u64,
    no_room: u64,
    demoted: u64,
}

impl LinuxTiering {
    /// The policy for `machine`.
    pub fn new(config: LinuxTieringConfig, machine: &Machine) -> Result<LinuxTiering, ConfigError> {
        config.check_ranges("policy")?;
        let nodes = machine.nodes();
        let slow = slow_tier(machine, "memory tiering")?;
        let initial = StaticPolicy::initial(config.initial.clone(), machine)?;
        let page = machine.page_size();
        let demote_to = demotion_targets(machine, slow);
        let marks = (0..nodes as u16)
            .map(|n| {
                Watermarks::of(
                    machine.frames(NodeId(n)) as u64,
                    page,
                    config.watermark_scale_factor,
                )
            })
            .collect();
        Ok(LinuxTiering {
            scan: NumaScan::new(config.scan_size_mb, page),
            slow,
            demote_to,
            marks,
            threshold: config.hot_threshold_ms * MS,
            candidates: vec![0; nodes],
            rate_window_end: Ns(RATE_WINDOW_NS),
            period_candidates: 0,
            adjust_at: Ns(config.scan_period_max_ms * MS),
            demoter: Demoter::new(nodes),
            initial,
            scans: 0,
            hinting_faults: 0,
            promoted: 0,
            promoted_with_room: 0,
            not_hot: 0,
            rate_limited: 0,
            no_room: 0,
            demoted: 0,
            config,
        })
    }

    /// Promotion candidates allowed into a node per rate window.
    fn rate_pages(&self, page_bytes: u64) -> u64 {
        (self.config.promote_rate_limit_mb_per_s << 20) / page_bytes
    }

    /// `numa_promotion_adjust_threshold` at `now`.
    fn adjust(&mut self, now: Ns, page_bytes: u64) {
        if now < self.adjust_at {
            return;
        }
        let period_s = (self.config.scan_period_max_ms / 1000).max(1);
        let reference = self.rate_pages(page_bytes).saturating_mul(period_s);
        let default = self.config.hot_threshold_ms * MS;
        let unit = (2 * default / ADJUST_STEPS).max(1);
        let diff = std::mem::take(&mut self.period_candidates);
        if diff.saturating_mul(10) > reference.saturating_mul(11) {
            self.threshold = self.threshold.saturating_sub(unit).max(unit);
        } else if diff.saturating_mul(10) < reference.saturating_mul(9) {
            self.threshold = (self.threshold + unit).min(2 * default);
        }
        let period = self.config.scan_period_max_ms * MS;
        let late = (now.0 - self.adjust_at.0) / period + 1;
        self.adjust_at = Ns(self.adjust_at.0.saturating_add(late.saturating_mul(period)));
    }

    /// Counts a candidate into `to` at `now`; whether the rate limit allows it.
    fn rate_allows(&mut self, to: NodeId, now: Ns, page_bytes: u64) -> bool {
        if now >= self.rate_window_end {
            self.candidates.iter_mut().for_each(|c| *c = 0);
            let late = (now.0 - self.rate_window_end.0) / RATE_WINDOW_NS + 1;
            self.rate_window_end = Ns(self.rate_window_end.0 + late * RATE_WINDOW_NS);
        }
        self.period_candidates += 1;
        let c = &mut self.candidates[to.idx()];
        *c += 1;
        *c <= self.rate_pages(page_bytes)
    }

    /// A hinting fault `latency` after its page was protected.
    fn hinting_fault(&mut self, ctx: &mut dyn Mm, f: Fault, latency: Ns) {
        self.hinting_faults += 1;
        let home = ctx.home(f.vpn);
        if !self.slow.contains(home) || self.slow.contains(f.node) || ctx.copy_count(f.vpn) != 1 {
            return;
        }
        let page = ctx.machine().page_size();
        let now = ctx.now();
        let m = self.marks[f.node.idx()];
        let free = ctx.free_frames(f.node) as u64;
        if free > m.promo + m.enough {
            // "workload changed, reset hot threshold"
            self.threshold = self.config.hot_threshold_ms * MS;
            if ctx.migrate(f.vpn, f.node).is_ok() {
                self.promoted += 1;
                self.promoted_with_room += 1;
            }
            return;
        }
        self.adjust(now, page);
        if latency.0 >= self.threshold {
            self.not_hot += 1;
            return;
        }
        if !self.rate_allows(f.node, now, page) {
            self.rate_limited += 1;
            return;
        }
        if free <= m.high + 1 {
            self.no_room += 1;
            return;
        }
        if ctx.migrate(f.vpn, f.node).is_ok() {
            self.promoted += 1;
        }
    }

    /// Reclaim on fast node `n`: below its low watermark, demote pages not accessed
    /// since the clock last passed them until free memory reaches the promotion
    /// watermark.
    fn reclaim(&mut self, ctx: &mut dyn Mm, n: NodeId) {
        let Some(to) = self.demote_to[n.idx()] else {
            return;
        };
        let m = self.marks[n.idx()];
        if (ctx.free_frames(n) as u64) < m.low {
            self.demoted += self.demoter.demote(ctx, n, to, m.promo);
        }
    }
}

impl Policy for LinuxTiering {
    fn name(&self) -> &'static str {
        "linux-tiering"
    }

    fn history(&self) -> HistoryMode {
        if self.config.demotion {
            HistoryMode::RefBit
        } else {
            HistoryMode::None
        }
    }

    fn replicates(&self) -> bool {
        false
    }

    fn monitors(&self) -> MonitorSpec {
        MonitorSpec {
            hinting: true,
            ..MonitorSpec::default()
        }
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
        if let Some(latency) = ctx.hinting_fault(f.vpn) {
            self.hinting_fault(ctx, f, latency);
        }
        default_fault(ctx, f);
    }

    fn daemons(&self, _machine: &Machine) -> Vec<DaemonSpec> {
        let mut d = vec![DaemonSpec {
            name: "numa-scan".into(),
            placement: DaemonPlacement::StealOn(NodeId(0)),
            first_wake: Ns(self.config.scan_delay_ms * MS),
        }];
        if self.config.demotion {
            d.push(DaemonSpec {
                name: "kswapd".into(),
                placement: DaemonPlacement::StealOn(NodeId(0)),
                first_wake: Ns(self.config.kswapd_interval_ms * MS),
            });
        }
        d
    }

    fn on_daemon(&mut self, ctx: &mut dyn Mm, id: usize) -> DaemonNext {
        if ctx.npages() == 0 {
            return DaemonNext::Stop;
        }
        if id == 0 {
            self.scans += 1;
            let slow = self.slow;
            self.scan.scan(ctx, slow);
            DaemonNext::After(Ns(self.config.scan_delay_ms * MS))
        } else {
            for n in 0..self.demote_to.len() as u16 {
                self.reclaim(ctx, NodeId(n));
            }
            DaemonNext::After(Ns(self.config.kswapd_interval_ms * MS))
        }
    }

    fn counters(&self) -> Vec<Counter> {
        let c = |name, label, value| Counter { name, label, value };
        vec![
            c("tiering_scans", "scans of the slow tier", self.scans),
            c(
                "tiering_hinting_faults",
                "hinting faults",
                self.hinting_faults,
            ),
            c("tiering_promoted", "pages promoted", self.promoted),
            c(
                "tiering_promoted_with_room",
                "pages promoted while the fast node had room to spare",
                self.promoted_with_room,
            ),
            c(
                "tiering_not_hot",
                "candidates slower than the hot threshold",
                self.not_hot,
            ),
            c(
                "tiering_rate_limited",
                "candidates over the rate limit",
                self.rate_limited,
            ),
            c(
                "tiering_no_room",
                "hot candidates without a free frame",
                self.no_room,
            ),
            c("tiering_demoted", "pages demoted", self.demoted),
            c(
                "tiering_hot_threshold_ms_at_end",
                "hot threshold at the end (ms)",
                self.threshold / MS,
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Access;
    use crate::mm::{test_machine_config, Action, Recording};
    use crate::policy::test_scene::fault;
    use crate::policy::test_scene::{two_tiers, Tiers};

    /// A fast node 0 of `fast` frames and a slow memory-only node 1, 4 KB pages; `npages`
    /// pages, the first `on_fast` on node 0 and the rest on node 1, all mapped from node 0.
    fn scene(
        config: LinuxTieringConfig,
        fast: u32,
        npages: u32,
        on_fast: u32,
    ) -> (LinuxTiering, Recording) {
        let tiers = Tiers {
            fast,
            slow: 4096,
            page_bytes: Some(4096),
        };
        two_tiers(tiers, npages, on_fast, HistoryMode::RefBit, |m| {
            LinuxTiering::new(config, m).unwrap()
        })
    }

    /// The scanner's step, then a fault by node 0's thread on `vpn` `after` later.
    fn scan_then_fault(p: &mut LinuxTiering, rec: &mut Recording, vpn: u32, after: Ns) {
        p.on_daemon(rec, 0);
        rec.now += after;
        rec.clear();
        fault(p, rec, 0, vpn, false);
    }

    #[test]
    fn a_scan_protects_only_slow_tier_pages() {
        let (mut p, mut rec) = scene(LinuxTieringConfig::default(), 1000, 8, 4);
        p.on_daemon(&mut rec, 0);
        let unmapped: Vec<u32> = (0..8)
            .filter(|&v| rec.mapping(Vpn(v), NodeId(0)).access == Access::None)
            .collect();
        assert_eq!(unmapped, vec![4, 5, 6, 7]);
    }

    #[test]
    fn a_page_faulting_soon_after_its_scan_is_promoted() {
        let (mut p, mut rec) = scene(LinuxTieringConfig::default(), 1000, 8, 4);
        scan_then_fault(&mut p, &mut rec, 6, Ns(10 * MS));
        assert!(rec.actions().contains(&Action::Migrate(Vpn(6), NodeId(0))));
    }

    #[test]
    fn a_page_faulting_after_the_hot_threshold_stays_slow() {
        let (mut p, mut rec) = scene(LinuxTieringConfig::default(), 1000, 8, 4);
        scan_then_fault(&mut p, &mut rec, 6, Ns(1500 * MS));
        assert_eq!(rec.page(Vpn(6)).home, NodeId(1));
        assert_eq!(p.not_hot, 1);
    }

    #[test]
    fn candidates_beyond_the_rate_limit_stay_slow() {
        let (mut p, mut rec) = scene(
            LinuxTieringConfig {
                promote_rate_limit_mb_per_s: 1,
                ..Default::default()
            },
            1000,
            8,
            4,
        );
        // 1 MB a second is 256 pages of 4 KB: the window has had them all.
        p.candidates[0] = 256;
        scan_then_fault(&mut p, &mut rec, 6, Ns(10 * MS));
        assert_eq!(rec.page(Vpn(6)).home, NodeId(1));
        assert_eq!(p.rate_limited, 1);
    }

    #[test]
    fn a_fast_node_at_its_high_watermark_takes_no_promotion() {
        // 100 frames: min 32, step 8, high 48; 60 pages there leave 40 free.
        let (mut p, mut rec) = scene(LinuxTieringConfig::default(), 100, 64, 60);
        scan_then_fault(&mut p, &mut rec, 62, Ns(10 * MS));
        assert_eq!(rec.page(Vpn(62)).home, NodeId(1));
        assert_eq!(p.no_room, 1);
    }

    #[test]
    fn a_fast_node_with_room_to_spare_promotes_even_a_cold_page() {
        // Above the promotion watermark plus 1 GiB of 4 KB pages.
        let (mut p, mut rec) = scene(LinuxTieringConfig::default(), 300_000, 8, 4);
        scan_then_fault(&mut p, &mut rec, 6, Ns(5000 * MS));
        assert_eq!(rec.page(Vpn(6)).home, NodeId(0));
        assert_eq!(p.promoted_with_room, 1);
    }

    #[test]
    fn reclaim_below_the_low_watermark_demotes_unaccessed_pages_to_the_promotion_watermark() {
        // 100 frames: low 40, promo 56; 70 pages leave 30 free, so 26 must go.
        let (mut p, mut rec) = scene(LinuxTieringConfig::default(), 100, 70, 70);
        for v in 0..10 {
            rec.history_mut().record(Vpn(v), NodeId(0), 1);
        }
        p.on_daemon(&mut rec, 1);
        assert_eq!(rec.free_frames(NodeId(0)), 56);
        assert!((0..10).all(|v| rec.page(Vpn(v)).home == NodeId(0)));
        assert_eq!(p.demoted, 26);
    }

    #[test]
    fn reclaim_above_the_low_watermark_demotes_nothing() {
        let (mut p, mut rec) = scene(LinuxTieringConfig::default(), 100, 50, 50);
        p.on_daemon(&mut rec, 1);
        assert_eq!(p.demoted, 0);
    }

    #[test]
    fn many_candidates_over_a_period_lower_the_hot_threshold() {
        let (mut p, _) = scene(LinuxTieringConfig::default(), 1000, 8, 4);
        p.period_candidates = u64::MAX / 20;
        p.adjust(Ns(60_000 * MS), 4096);
        assert_eq!(p.threshold, 875 * MS);
    }

    #[test]
    fn few_candidates_over_a_period_raise_the_hot_threshold() {
        let (mut p, _) = scene(LinuxTieringConfig::default(), 1000, 8, 4);
        p.adjust(Ns(60_000 * MS), 4096);
        assert_eq!(p.threshold, 1125 * MS);
    }

    #[test]
    fn a_machine_of_one_tier_is_refused_naming_the_policy() {
        let m = Machine::new(test_machine_config(2)).unwrap();
        let e = LinuxTiering::new(LinuxTieringConfig::default(), &m).unwrap_err();
        assert_eq!(e.field, "policy.kind");
        assert!(e.message.contains("slow tier"), "{}", e.message);
    }
}
