//! `linux-numa-balancing`: Linux's automatic NUMA balancing (`numa_balancing = 1`), its
//! page side, as in Linux 6.3 (`kernel/sched/fair.c`, `mm/mprotect.c`, `mm/migrate.c`).
//!
//! - **Scanning.** After `scan_delay_ms`, a scanner makes `scan_size_mb` of the address
//!   space's mapped pages inaccessible (`change_prot_numa`: entries to `PROT_NONE`,
//!   [`Mm::protect`]) every scan period, visiting at most eight times as many pages as it
//!   protects (`task_numa_work`'s `virtpages`), and wraps around at the end.
//! - **Hinting faults.** The next access to a protected page faults. Its locality (the
//!   page on the faulting thread's node or not) and privacy (the last accessor the same
//!   thread or not) are counted for the period's adaptation.
//! - **Two-stage filter** (`should_numa_migrate_memory`). Each page remembers its last
//!   hinting-fault accessor (`last_cpupid`): a fault migrates the page to the faulting
//!   node when the page had no last accessor, the last accessor was the same thread, or
//!   it ran on that node; a page two nodes take turns at stays put. The destination must
//!   have a free frame (`migrate_balanced_pgdat`, whose watermark is not modelled).
//! - **Scan period** (`update_task_scan_period`), after each full pass: with no hinting
//!   fault, or a migration refused for want of a frame, the period doubles; otherwise,
//!   with `slot` a tenth of the period, `lr` and `ps` the local and private shares in
//!   tenths: `ps >= 7` adds `max(ps - 7, 1)` slots, else `lr >= 7` adds `max(lr - 7, 1)`,
//!   else `7 - max(lr, ps)` slots are taken off. The period stays within `task_scan_min`
//!   (`max(1000 / (2560 / scan_size_mb), scan_period_min_ms / windows)`) and
//!   `task_scan_max` (`scan_period_max_ms / windows`), `windows` the scan sizes the
//!   mapped pages span (`task_nr_scan_windows`).
//! - **Rate limit.** None: the kernel's limit on migrated pages (128 MB per 100 ms a
//!   node) was removed in 2018 (commit efaffc5e40ae); `rate_limit_mb_per_s` restores a
//!   limit of that shape when set.
//!
//! Not modelled: task placement (the scheduler's moving of threads toward their pages'
//! preferred node), NUMA groups (threads sharing pages are grouped and shared faults then
//! migrate by the group's per-node fault shares), the scan's `32x` runtime cap, and the
//! per-address-space scan state of a multiprogrammed run (one scanner walks every
//! program's pages). The scanner runs stealing time from node 0's first processor (the
//! kernel runs it as task work in the scanning thread's context).

use super::numa_scan::{NumaScan, SCAN_SIZE_DIM};
use super::{StaticConfig, StaticPolicy};
use crate::component::{default_fault, DaemonNext, DaemonPlacement, DaemonSpec, Fault, Policy};
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::machine::Machine;
use crate::mm::{Mm, MonitorSpec};
use crate::stats::Counter;
use crate::tune::{Dim, Scale, Value};
use crate::types::{NodeId, Ns, Vpn};
use serde::{Deserialize, Serialize};

/// Parameters of `linux-numa-balancing`; defaults are Linux 6.3's (`kernel/sched/fair.c`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct LinuxNumaBalancingConfig {
    /// Delay before the first scan (ms). Default 1000 (`sysctl_numa_balancing_scan_delay`).
    #[field(min = 0, max = 86_400_000, unit = "ms")]
    pub scan_delay_ms: u64,
    /// The shortest time to scan the whole address space (ms). Default 1000
    /// (`sysctl_numa_balancing_scan_period_min`).
    #[field(min = 1, max = 86_400_000, unit = "ms")]
    pub scan_period_min_ms: u64,
    /// The longest (ms). Default 60000 (`sysctl_numa_balancing_scan_period_max`).
    #[field(min = 1, max = 86_400_000, unit = "ms")]
    pub scan_period_max_ms: u64,
    /// Memory protected per scan (MB). Default 256 (`sysctl_numa_balancing_scan_size`).
    #[field(min = 1, max = 1_048_576, unit = "MB")]
    pub scan_size_mb: u64,
    /// Most megabytes migrated into one node per second, counted in 100 ms windows; 0:
    /// no limit. Default 0 (Linux since 2018; before, 1280: 128 MB per 100 ms).
    #[field(min = 0, max = 1_048_576, unit = "MB/s")]
    pub rate_limit_mb_per_s: u64,
    /// Initial placement (default: first touch, Linux's default policy).
    #[field(nested)]
    pub initial: StaticConfig,
}

impl Default for LinuxNumaBalancingConfig {
    fn default() -> Self {
        LinuxNumaBalancingConfig {
            scan_delay_ms: 1000,
            scan_period_min_ms: 1000,
            scan_period_max_ms: 60_000,
            scan_size_mb: 256,
            rate_limit_mb_per_s: 0,
            initial: StaticConfig::default(),
        }
    }
}

impl crate::registry::Describe for LinuxNumaBalancingConfig {
    const KIND: &'static str = "linux-numa-balancing";
    const DESCRIPTION: &'static str = "Linux automatic NUMA balancing: periodic PROT_NONE scans, hinting faults, two-stage filter, adaptive scan period (Linux 6.3)";
}

/// The search space `tune` explores.
pub const SEARCH_SPACE: [Dim; 4] = [
    SCAN_SIZE_DIM,
    Dim {
        field: "scan_period_min_ms",
        lo: 100.0,
        hi: 10_000.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "100 ms .. 10 s on a log scale around the kernel's 1 s (an estimate)",
    },
    Dim {
        field: "scan_period_max_ms",
        lo: 1000.0,
        hi: 600_000.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "1 s .. 10 min on a log scale around the kernel's 60 s (an estimate)",
    },
    Dim {
        field: "scan_delay_ms",
        lo: 10.0,
        hi: 10_000.0,
        integer: true,
        scale: Scale::Log,
        specials: &[Value::Int(0)],
        source: "10 ms .. 10 s on a log scale and 0, around the kernel's 1 s (an estimate)",
    },
];

impl crate::component::PolicyParams for LinuxNumaBalancingConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn Policy>, ConfigError> {
        Ok(Box::new(LinuxNumaBalancing::new(self.clone(), machine)?))
    }
    const SEARCH_SPACE: &'static [Dim] = &SEARCH_SPACE;
}

inventory::submit!(crate::component::PolicyEntry::of::<LinuxNumaBalancingConfig>());

/// Nanoseconds in a millisecond.
const MS: u64 = 1_000_000;
/// `NUMA_PERIOD_SLOTS` and `NUMA_PERIOD_THRESHOLD` of `update_task_scan_period`.
const SLOTS: u64 = 10;
const THRESHOLD: u64 = 7;
/// `MAX_SCAN_WINDOW`: scanning never exceeds 2560 MB a second.
const MAX_SCAN_WINDOW_MB: u64 = 2560;
/// The rate limit's window (the pre-2018 kernel's `migrate_interval_millisecs`).
const RATE_WINDOW_NS: u64 = 100 * MS;

/// Hinting faults of the current pass, for the period's adaptation.
#[derive(Clone, Copy, Debug, Default)]
struct Faults {
    local: u64,
    remote: u64,
    private: u64,
    shared: u64,
    refused_for_room: bool,
}

/// The policy.
#[derive(Debug)]
pub struct LinuxNumaBalancing {
    config: LinuxNumaBalancingConfig,
    initial: StaticPolicy,
    /// Per page: its last hinting-fault accessor, thread + 1 (0: none), and its node.
    last: Vec<(u32, u16)>,
    /// The scanner.
    scan: NumaScan,
    /// The scan period now (ns).
    period: u64,
    faults: Faults,
    /// Pages migrated into each node in the current rate window, and when it ends.
    rate: Vec<u64>,
    rate_window_end: Ns,
    scans: u64,
    protected: u64,
    hinting_faults: u64,
    migrated: u64,
    filtered: u64,
    rate_limited: u64,
}

impl LinuxNumaBalancing {
    /// The policy for `machine`.
    pub fn new(
        config: LinuxNumaBalancingConfig,
        machine: &Machine,
    ) -> Result<LinuxNumaBalancing, ConfigError> {
        config.check_ranges("policy")?;
        if config.scan_period_min_ms > config.scan_period_max_ms {
            return Err(ConfigError::new(
                "policy.scan_period_min_ms",
                format!(
                    "{} ms is longer than scan_period_max_ms ({} ms)",
                    config.scan_period_min_ms, config.scan_period_max_ms
                ),
            ));
        }
        if machine.nodes() < 2 {
            return Err(ConfigError::new(
                "policy.kind",
                "NUMA balancing moves pages between nodes: the machine has one",
            ));
        }
        let initial = StaticPolicy::initial(config.initial.clone(), machine)?;
        Ok(LinuxNumaBalancing {
            period: config.scan_delay_ms.max(1) * MS,
            initial,
            last: Vec::new(),
            scan: NumaScan::new(config.scan_size_mb, machine.page_size()),
            faults: Faults::default(),
            rate: vec![0; machine.nodes()],
            rate_window_end: Ns(RATE_WINDOW_NS),
            scans: 0,
            protected: 0,
            hinting_faults: 0,
            migrated: 0,
            filtered: 0,
            rate_limited: 0,
            config,
        })
    }

    /// `task_scan_min` and `task_scan_max` for `mapped` pages (ns).
    fn bounds(&self, mapped: u64) -> (u64, u64) {
        let windows = mapped.div_ceil(self.scan.pages_per_scan).max(1);
        let floor_ms =
            1000 / (MAX_SCAN_WINDOW_MB / self.config.scan_size_mb.min(MAX_SCAN_WINDOW_MB)).max(1);
        let min = (floor_ms * MS).max(self.config.scan_period_min_ms * MS / windows);
        let max = (self.config.scan_period_max_ms * MS / windows).max(min);
        (min, max)
    }

    /// `update_task_scan_period` at the end of a pass over `mapped` pages.
    fn adapt(&mut self, mapped: u64) {
        let (min, max) = self.bounds(mapped);
        let f = std::mem::take(&mut self.faults);
        let p = self.period;
        self.period = if f.local + f.remote == 0 || f.refused_for_room {
            (2 * p).min(max)
        } else {
            let slot = p.div_ceil(SLOTS);
            let lr = SLOTS * f.local / (f.local + f.remote);
            let ps = SLOTS * f.private / (f.private + f.shared).max(1);
            if ps >= THRESHOLD {
                p + (ps - THRESHOLD).max(1) * slot
            } else if lr >= THRESHOLD {
                p + (lr - THRESHOLD).max(1) * slot
            } else {
                p.saturating_sub((THRESHOLD - lr.max(ps)) * slot)
            }
        }
        .clamp(min, max);
    }

    /// Whether the rate limit lets one more page into `to` at `now` (and counts it).
    fn rate_allows(&mut self, to: NodeId, now: Ns, page_bytes: u64) -> bool {
        if self.config.rate_limit_mb_per_s == 0 {
            return true;
        }
        if now >= self.rate_window_end {
            self.rate.iter_mut().for_each(|r| *r = 0);
            let late = (now.0 - self.rate_window_end.0) / RATE_WINDOW_NS + 1;
            self.rate_window_end = Ns(self.rate_window_end.0 + late * RATE_WINDOW_NS);
        }
        let limit = (self.config.rate_limit_mb_per_s << 20) / 10;
        let r = &mut self.rate[to.idx()];
        if (*r + 1) * page_bytes > limit {
            return false;
        }
        *r += 1;
        true
    }

    /// A hinting fault on `f.vpn`: counted, filtered, maybe migrated.
    fn hinting_fault(&mut self, ctx: &mut dyn Mm, f: Fault) {
        self.hinting_faults += 1;
        let home = ctx.home(f.vpn);
        let me = f.thread.0 + 1;
        let (last_thread, last_node) =
            std::mem::replace(&mut self.last[f.vpn.idx()], (me, f.node.0));
        if home == f.node {
            self.faults.local += 1;
        } else {
            self.faults.remote += 1;
        }
        if last_thread == 0 || last_thread == me {
            self.faults.private += 1;
        } else {
            self.faults.shared += 1;
        }
        if home == f.node || ctx.copy_count(f.vpn) != 1 {
            return;
        }
        let passes = last_thread == 0 || last_thread == me || last_node == f.node.0;
        if !passes {
            self.filtered += 1;
            return;
        }
        if ctx.free_frames(f.node) == 0 {
            self.faults.refused_for_room = true;
            return;
        }
        let page_bytes = ctx.machine().page_size();
        if !self.rate_allows(f.node, ctx.now(), page_bytes) {
            self.rate_limited += 1;
            return;
        }
        if ctx.migrate(f.vpn, f.node).is_ok() {
            self.migrated += 1;
        }
    }
}

impl Policy for LinuxNumaBalancing {
    fn name(&self) -> &'static str {
        "linux-numa-balancing"
    }

    fn replicates(&self) -> bool {
        false
    }

    fn state_bytes_per_page(&self) -> u64 {
        std::mem::size_of::<(u32, u16)>() as u64
    }

    fn monitors(&self) -> MonitorSpec {
        MonitorSpec {
            hinting: true,
            ..MonitorSpec::default()
        }
    }

    fn init(&mut self, ctx: &mut dyn Mm) {
        self.last = vec![(0, 0); ctx.npages()];
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
        vec![DaemonSpec {
            name: "numa-scan".into(),
            placement: DaemonPlacement::StealOn(NodeId(0)),
            first_wake: Ns(self.config.scan_delay_ms * MS),
        }]
    }

    fn on_daemon(&mut self, ctx: &mut dyn Mm, _id: usize) -> DaemonNext {
        let n = ctx.npages();
        if n == 0 {
            return DaemonNext::Stop;
        }
        self.scans += 1;
        let every = (0..ctx.machine().nodes() as u16).map(NodeId).collect();
        let (protected, wrapped) = self.scan.scan(ctx, every);
        self.protected += protected;
        if wrapped {
            let mapped = (0..n as u32)
                .filter(|&p| ctx.copy_count(Vpn(p)) > 0)
                .count() as u64;
            self.adapt(mapped);
        }
        DaemonNext::After(Ns(self.period.max(1)))
    }

    fn counters(&self) -> Vec<Counter> {
        vec![
            Counter {
                name: "numa_scans",
                label: "scans",
                value: self.scans,
            },
            Counter {
                name: "numa_pages_protected",
                label: "pages protected",
                value: self.protected,
            },
            Counter {
                name: "numa_hinting_faults",
                label: "hinting faults",
                value: self.hinting_faults,
            },
            Counter {
                name: "numa_pages_migrated",
                label: "pages migrated",
                value: self.migrated,
            },
            Counter {
                name: "numa_migrations_filtered",
                label: "migrations the two-stage filter refused",
                value: self.filtered,
            },
            Counter {
                name: "numa_migrations_rate_limited",
                label: "migrations the rate limit refused",
                value: self.rate_limited,
            },
            Counter {
                name: "numa_scan_period_ms_at_end",
                label: "scan period at the end (ms)",
                value: self.period / MS,
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::HistoryMode;
    use crate::memory::Access;
    use crate::mm::{Action, Recording};
    use crate::policy::test_scene::{fault, recording};

    /// Four pages on node 0, mapped there, on a two-node machine of `frames` frames a
    /// node; the policy initialised.
    fn scene(config: LinuxNumaBalancingConfig, frames: u32) -> (LinuxNumaBalancing, Recording) {
        let mut rec = recording(2, frames, 4, HistoryMode::None);
        let mut p = LinuxNumaBalancing::new(config, rec.machine()).unwrap();
        rec.enable_monitors(p.monitors());
        for v in 0..4 {
            rec.place(Vpn(v), NodeId(0)).unwrap();
            rec.map_nearest(Vpn(v), NodeId(0), Access::Read);
        }
        p.init(&mut rec);
        rec.clear();
        (p, rec)
    }

    fn default_scene() -> (LinuxNumaBalancing, Recording) {
        scene(LinuxNumaBalancingConfig::default(), 8)
    }

    #[test]
    fn a_scan_protects_every_mapped_page_it_reaches() {
        let (mut p, mut rec) = default_scene();
        p.on_daemon(&mut rec, 0);
        assert_eq!(rec.actions()[0], Action::Protect(Vpn(0), 4));
        assert!((0..4).all(|v| rec.mapping(Vpn(v), NodeId(0)).access == Access::None));
    }

    #[test]
    fn a_hinting_fault_from_another_node_migrates_the_page_there() {
        let (mut p, mut rec) = default_scene();
        p.on_daemon(&mut rec, 0);
        rec.clear();
        fault(&mut p, &mut rec, 1, 2, false);
        assert!(rec.actions().contains(&Action::Migrate(Vpn(2), NodeId(1))));
        assert_eq!(rec.page(Vpn(2)).home, NodeId(1));
    }

    #[test]
    fn a_fault_on_a_page_never_protected_migrates_nothing() {
        let (mut p, mut rec) = default_scene();
        rec.invalidate_mappings(Vpn(2), crate::types::NodeSet::single(NodeId(0)));
        rec.clear();
        fault(&mut p, &mut rec, 1, 2, false);
        assert!(!rec
            .actions()
            .iter()
            .any(|a| matches!(a, Action::Migrate(..))));
    }

    #[test]
    fn the_two_stage_filter_keeps_a_page_whose_last_accessor_ran_elsewhere() {
        let (mut p, mut rec) = default_scene();
        p.on_daemon(&mut rec, 0);
        // Node 0's thread faults first (local), then node 1's on the next scan.
        fault(&mut p, &mut rec, 0, 2, false);
        p.on_daemon(&mut rec, 0);
        rec.clear();
        fault(&mut p, &mut rec, 1, 2, false);
        assert_eq!(rec.page(Vpn(2)).home, NodeId(0));
        assert_eq!(p.filtered, 1);
    }

    #[test]
    fn a_destination_without_a_free_frame_refuses_the_migration() {
        // Two frames a node: node 1 full of pages of its own.
        let mut rec = recording(2, 5, 6, HistoryMode::None);
        let mut p =
            LinuxNumaBalancing::new(LinuxNumaBalancingConfig::default(), rec.machine()).unwrap();
        rec.enable_monitors(p.monitors());
        for v in 0..6 {
            let n = NodeId(if v < 1 { 0 } else { 1 });
            rec.place(Vpn(v), n).unwrap();
            rec.map_nearest(Vpn(v), n, Access::Read);
        }
        p.init(&mut rec);
        p.on_daemon(&mut rec, 0);
        rec.clear();
        fault(&mut p, &mut rec, 1, 0, false);
        assert_eq!(rec.page(Vpn(0)).home, NodeId(0));
        assert!(p.faults.refused_for_room);
    }

    #[test]
    fn the_rate_limit_refuses_migrations_beyond_its_window() {
        // 1 MB/s: 100 KB per 100 ms window, 1600 of the test machine's 64-byte pages;
        // a window with that many moved refuses the next.
        let (mut p, mut rec) = scene(
            LinuxNumaBalancingConfig {
                rate_limit_mb_per_s: 1,
                ..Default::default()
            },
            8,
        );
        p.rate[1] = 1638;
        p.on_daemon(&mut rec, 0);
        fault(&mut p, &mut rec, 1, 2, false);
        assert_eq!(rec.page(Vpn(2)).home, NodeId(0));
        assert_eq!(p.rate_limited, 1);
    }

    #[test]
    fn a_pass_without_hinting_faults_doubles_the_period() {
        let (mut p, mut rec) = default_scene();
        p.period = 2000 * MS;
        p.on_daemon(&mut rec, 0);
        assert_eq!(p.period, 4000 * MS);
    }

    #[test]
    fn mostly_private_faults_lengthen_the_period() {
        let (mut p, mut rec) = default_scene();
        p.period = 2000 * MS;
        p.faults = Faults {
            local: 5,
            remote: 5,
            private: 10,
            ..Faults::default()
        };
        p.on_daemon(&mut rec, 0);
        // ps = 10: 3 slots of 200 ms added.
        assert_eq!(p.period, 2600 * MS);
    }

    #[test]
    fn mostly_remote_shared_faults_shorten_the_period() {
        let (mut p, mut rec) = default_scene();
        p.period = 3000 * MS;
        p.faults = Faults {
            local: 2,
            remote: 8,
            private: 2,
            shared: 8,
            ..Faults::default()
        };
        p.on_daemon(&mut rec, 0);
        // lr = ps = 2: 5 slots of 300 ms taken off, then held to the 1 s minimum.
        assert_eq!(p.period, 1500 * MS);
    }

    #[test]
    fn the_period_stays_within_its_bounds() {
        let (mut p, mut rec) = default_scene();
        p.period = 50_000 * MS;
        p.on_daemon(&mut rec, 0);
        assert_eq!(p.period, 60_000 * MS);
    }

    #[test]
    fn a_minimum_period_above_the_maximum_is_refused_naming_the_field() {
        let rec = recording(2, 8, 4, HistoryMode::None);
        let e = LinuxNumaBalancing::new(
            LinuxNumaBalancingConfig {
                scan_period_min_ms: 5000,
                scan_period_max_ms: 1000,
                ..Default::default()
            },
            rec.machine(),
        )
        .unwrap_err();
        assert_eq!(e.field, "policy.scan_period_min_ms");
    }

    #[test]
    fn a_machine_of_one_node_is_refused() {
        let rec = recording(1, 8, 4, HistoryMode::None);
        let e = LinuxNumaBalancing::new(LinuxNumaBalancingConfig::default(), rec.machine())
            .unwrap_err();
        assert_eq!(e.field, "policy.kind");
    }
}
