//! `hemem`: HeMem (Raybuck et al., SOSP 2021), tiered-memory management by sampled
//! accesses, as its authors' code was evaluated (the artifact version of `pebs.c`,
//! `pebs.h` and `hemem.h`).
//!
//! - **Sampling.** Processor event-based sampling records one in `sample_period` loads
//!   that miss to memory and one in `sample_period` stores
//!   ([`crate::mm::SamplingSpec`]); a sampling thread on a processor of its own drains
//!   the records. Each record counts a read or a write of its page; a page is hot when
//!   its reads reach `hot_read_threshold` or its writes `hot_write_threshold`, and moves
//!   to its tier's hot list.
//! - **Cooling.** When one page's count of either kind exceeds `cooling_threshold`,
//!   every page on the hot lists of both tiers has its counts halved, and those no longer
//!   hot move to their tier's cold list.
//! - **Migration.** Every `policy_period_ms`, a policy thread on a processor of its own
//!   promotes the slow tier's hot pages, oldest first: into a free fast frame, or into
//!   the frame of a cold fast page it first demotes to the slow tier; when the fast tier
//!   holds no cold page, the round ends. A page that has migrated
//!   `migration_stop_threshold` times stays where it is (on no list).
//! - **Allocation.** A new page goes to the fast tier while it has a free frame, else
//!   to the slow tier (first touch on the fast node, nearest free frame).
//!
//! The fast tier is the nodes with processors, the slow tier the memory-only nodes (the
//! demotion target is the nearest slow node).
//!
//! Not modelled: the per-processor sample buffers (one buffer of `sample_buffer`
//! records stands for them), HeMem's DMA copy engine and its write-protection of a page
//! during the copy (a migration costs the machine's migration cost), its own page
//! allocator and the huge-page granularity beyond the machine's page size, and the
//! processing time of a record beyond `sample_cost_ns`.

use super::tiers::{demotion_targets, slow_tier};
use super::{StaticConfig, StaticPolicy};
use crate::component::{DaemonNext, DaemonPlacement, DaemonSpec, Policy};
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::machine::Machine;
use crate::mm::{Mm, MonitorSpec, Sample, SamplingSpec};
use crate::stats::Counter;
use crate::tune::{Dim, Scale};
use crate::types::{NodeId, NodeSet, Ns, Vpn};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Parameters of `hemem`; defaults are those of HeMem's code as evaluated (the SOSP 2021
/// artifact: `pebs.h`, `hemem.h`, `lru.h`) unless said otherwise.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct HememConfig {
    /// Events per sampled record, of loads and of stores alike. Default 5003
    /// (`SAMPLE_PERIOD`).
    #[field(min = 1, max = 1_000_000_000)]
    pub sample_period: u64,
    /// Sampled reads that make a page hot. Default 8 (`HOT_READ_THRESHOLD`).
    #[field(min = 1, max = 65_535)]
    pub hot_read_threshold: u32,
    /// Sampled writes that make a page hot. Default 8 (`HOT_WRITE_THRESHOLD`).
    #[field(min = 1, max = 65_535)]
    pub hot_write_threshold: u32,
    /// A page count above which every hot page's counts are halved. Default 18
    /// (`PEBS_COOLING_THRESHOLD`).
    #[field(min = 1, max = 65_535)]
    pub cooling_threshold: u32,
    /// Migrations after which a page stays put. Default 3 (`MIGRATION_STOP_THRESHOLD`).
    #[field(min = 1, max = 255)]
    pub migration_stop_threshold: u32,
    /// The policy thread's period (ms). Default 1000: the evaluated code sleeps
    /// `KSWAPD_INTERVAL` (1 s) between rounds.
    #[field(min = 1, max = 86_400_000, unit = "ms")]
    pub policy_period_ms: u64,
    /// How often the sampling thread drains the records (us). Default 100, an estimate
    /// (HeMem's sampling thread polls its buffers without pause).
    #[field(min = 1, max = 86_400_000_000u64, unit = "us")]
    pub sample_drain_us: u64,
    /// Records the sample buffer holds. Default 65536, an estimate (HeMem maps 64 pages
    /// of perf buffer per processor and event).
    #[field(min = 1, max = 16_777_216)]
    pub sample_buffer: u64,
    /// The sampling thread's time per record (ns). Default 100, an estimate.
    #[field(min = 0, max = 1_000_000, unit = "ns")]
    pub sample_cost_ns: u64,
    /// Initial placement (default: first touch, fast tier first).
    #[field(nested)]
    pub initial: StaticConfig,
}

impl Default for HememConfig {
    fn default() -> Self {
        HememConfig {
            sample_period: 5003,
            hot_read_threshold: 8,
            hot_write_threshold: 8,
            cooling_threshold: 18,
            migration_stop_threshold: 3,
            policy_period_ms: 1000,
            sample_drain_us: 100,
            sample_buffer: 65_536,
            sample_cost_ns: 100,
            initial: StaticConfig::default(),
        }
    }
}

impl crate::registry::Describe for HememConfig {
    const KIND: &'static str = "hemem";
    const DESCRIPTION: &'static str = "HeMem: sampled accesses (PEBS), hot thresholds, cooling, a policy thread promoting hot slow-tier pages (SOSP 2021)";
}

/// The search space `tune` explores.
pub const SEARCH_SPACE: [Dim; 4] = [
    Dim {
        field: "sample_period",
        lo: 101.0,
        hi: 100_003.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "101 .. 100003 on a log scale (HeMem's versions use 5003 and 19997)",
    },
    Dim {
        field: "hot_read_threshold",
        lo: 1.0,
        hi: 64.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "1 .. 64 on a log scale (HeMem's versions use 4 and 8)",
    },
    Dim {
        field: "cooling_threshold",
        lo: 2.0,
        hi: 256.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "2 .. 256 on a log scale (HeMem's versions use 10 and 18)",
    },
    Dim {
        field: "policy_period_ms",
        lo: 1.0,
        hi: 10_000.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "1 ms .. 10 s on a log scale (HeMem's code has 10 ms and 1 s)",
    },
];

impl crate::component::PolicyParams for HememConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn Policy>, ConfigError> {
        Ok(Box::new(Hemem::new(self.clone(), machine)?))
    }
    const SEARCH_SPACE: &'static [Dim] = &SEARCH_SPACE;
}

inventory::submit!(crate::component::PolicyEntry::of::<HememConfig>());

/// Which list a page is on.
const FAST_HOT: u8 = 0;
const FAST_COLD: u8 = 1;
const SLOW_HOT: u8 = 2;
const SLOW_COLD: u8 = 3;
const NONE: u8 = u8::MAX;

/// HeMem's per-page record.
#[derive(Clone, Copy, Debug, Default)]
struct PageInfo {
    reads: u32,
    writes: u32,
    migrations: u32,
    list: u8,
    /// Bumped at each list change: queue entries with an older stamp are stale.
    stamp: u32,
}

/// The policy.
#[derive(Debug)]
pub struct Hemem {
    config: HememConfig,
    initial: StaticPolicy,
    slow: NodeSet,
    /// Per node: its demotion target (fast nodes only).
    demote_to: Vec<Option<NodeId>>,
    /// The fast tier's nodes, in order.
    fast: Vec<NodeId>,
    pages: Vec<PageInfo>,
    /// The four lists, FIFO, of (page, stamp).
    lists: [VecDeque<(u32, u32)>; 4],
    samples: Vec<Sample>,
    records: u64,
    coolings: u64,
    promoted: u64,
    demoted: u64,
    pinned: u64,
}

impl Hemem {
    /// The policy for `machine`.
    pub fn new(config: HememConfig, machine: &Machine) -> Result<Hemem, ConfigError> {
        config.check_ranges("policy")?;
        let slow = slow_tier(machine, "HeMem, which manages two tiers,")?;
        let initial = StaticPolicy::initial(config.initial.clone(), machine)?;
        let demote_to = demotion_targets(machine, slow);
        let fast = (0..machine.nodes() as u16)
            .map(NodeId)
            .filter(|&n| !slow.contains(n))
            .collect();
        Ok(Hemem {
            config,
            initial,
            slow,
            demote_to,
            fast,
            pages: Vec::new(),
            lists: Default::default(),
            samples: Vec::new(),
            records: 0,
            coolings: 0,
            promoted: 0,
            demoted: 0,
            pinned: 0,
        })
    }

    /// Page `v`'s sampled accesses as cooled so far (reads and writes): what a policy
    /// built on HeMem's sampling ranks pages by.
    pub(super) fn accesses(&self, v: u32) -> u64 {
        self.pages
            .get(v as usize)
            .map_or(0, |p| u64::from(p.reads) + u64::from(p.writes))
    }

    /// Whether node `n` is of the slow tier.
    pub(super) fn is_slow(&self, n: NodeId) -> bool {
        self.slow.contains(n)
    }

    /// The fast tier's nodes, in order.
    pub(super) fn fast_nodes(&self) -> &[NodeId] {
        &self.fast
    }

    /// Where fast node `n` demotes to (none for a slow node).
    pub(super) fn demotion_target(&self, n: NodeId) -> Option<NodeId> {
        self.demote_to[n.idx()]
    }

    /// Sampled records processed and coolings so far.
    pub(super) fn sampling_counts(&self) -> (u64, u64) {
        (self.records, self.coolings)
    }

    fn is_hot(&self, p: &PageInfo) -> bool {
        p.reads >= self.config.hot_read_threshold || p.writes >= self.config.hot_write_threshold
    }

    /// Puts page `v` on list `l` (at the tail).
    fn enlist(&mut self, v: u32, l: u8) {
        let p = &mut self.pages[v as usize];
        p.list = l;
        p.stamp = p.stamp.wrapping_add(1);
        let stamp = p.stamp;
        if l != NONE {
            self.lists[l as usize].push_back((v, stamp));
        }
    }

    /// The list page `v` belongs on, from its tier and heat (none when unplaced).
    fn list_of(&self, ctx: &dyn Mm, v: u32) -> u8 {
        if ctx.copy_count(Vpn(v)) == 0 {
            return NONE;
        }
        let slow = self.slow.contains(ctx.home(Vpn(v)));
        match (slow, self.is_hot(&self.pages[v as usize])) {
            (false, true) => FAST_HOT,
            (false, false) => FAST_COLD,
            (true, true) => SLOW_HOT,
            (true, false) => SLOW_COLD,
        }
    }

    /// Puts page `v` on the list it belongs on, if it is not there; a page that has
    /// migrated its last time is on none. A policy that moves page `v` itself calls
    /// this after the move, so the page is on its new tier's list.
    pub(super) fn refile(&mut self, ctx: &dyn Mm, v: u32) {
        let l = if self.pages[v as usize].migrations >= self.config.migration_stop_threshold {
            NONE
        } else {
            self.list_of(ctx, v)
        };
        if self.pages[v as usize].list != l {
            self.enlist(v, l);
        }
    }

    /// Puts page `v` back at the head of list `l` (it keeps its turn).
    fn requeue_front(&mut self, v: u32, l: u8) {
        let p = &mut self.pages[v as usize];
        p.list = l;
        p.stamp = p.stamp.wrapping_add(1);
        self.lists[l as usize].push_front((v, p.stamp));
    }

    /// Counts a migration of page `v`.
    fn moved(&mut self, v: u32) {
        let p = &mut self.pages[v as usize];
        p.migrations += 1;
        if p.migrations == self.config.migration_stop_threshold {
            self.pinned += 1;
        }
    }

    /// Takes the oldest live entry of list `l`.
    fn pop(&mut self, l: u8) -> Option<u32> {
        while let Some((v, stamp)) = self.lists[l as usize].pop_front() {
            let p = &self.pages[v as usize];
            if p.list == l && p.stamp == stamp {
                return Some(v);
            }
        }
        None
    }

    /// Halves every hot page's counts; the pages no longer hot go cold.
    fn cool(&mut self, ctx: &dyn Mm) {
        self.coolings += 1;
        for l in [FAST_HOT, SLOW_HOT] {
            let entries: Vec<(u32, u32)> = self.lists[l as usize].drain(..).collect();
            for (v, stamp) in entries {
                let p = &mut self.pages[v as usize];
                if p.list != l || p.stamp != stamp {
                    continue;
                }
                p.reads >>= 1;
                p.writes >>= 1;
                if self.is_hot(&self.pages[v as usize]) {
                    self.lists[l as usize].push_back((v, stamp));
                } else {
                    self.refile(ctx, v);
                }
            }
        }
    }

    /// The sampling thread's step: every record drained and counted.
    pub(super) fn drain(&mut self, ctx: &mut dyn Mm) {
        let mut samples = std::mem::take(&mut self.samples);
        ctx.take_samples(&mut samples);
        ctx.charge(Ns(self
            .config
            .sample_cost_ns
            .saturating_mul(samples.len() as u64)));
        for s in &samples {
            self.records += 1;
            let v = s.vpn.0;
            let Some(p) = self.pages.get_mut(v as usize) else {
                continue;
            };
            let count = if s.write {
                p.writes = p.writes.saturating_add(1);
                p.writes
            } else {
                p.reads = p.reads.saturating_add(1);
                p.reads
            };
            self.refile(&*ctx, v);
            if count > self.config.cooling_threshold {
                self.cool(&*ctx);
            }
        }
        samples.clear();
        self.samples = samples;
    }

    /// The policy thread's round: the slow tier's hot pages promoted while frames (free
    /// or freed by demoting a cold page) last on the fast tier.
    fn migrate(&mut self, ctx: &mut dyn Mm) {
        while let Some(v) = self.pop(SLOW_HOT) {
            let vpn = Vpn(v);
            let Some(&to) = self
                .fast
                .iter()
                .find(|&&n| ctx.free_frames(n) > 0)
                .or_else(|| self.fast.first())
            else {
                break;
            };
            if ctx.free_frames(to) == 0 {
                // Make room: demote the oldest cold fast page.
                let Some(cold) = self.pop(FAST_COLD) else {
                    // "all dram pages are hot": the page waits for the next round.
                    self.requeue_front(v, SLOW_HOT);
                    break;
                };
                let target = self.demote_to[ctx.home(Vpn(cold)).idx()].unwrap_or(to);
                if ctx.migrate(Vpn(cold), target).is_ok() {
                    self.demoted += 1;
                    self.moved(cold);
                }
                self.refile(&*ctx, cold);
                if ctx.free_frames(to) == 0 {
                    self.requeue_front(v, SLOW_HOT);
                    break;
                }
            }
            if ctx.migrate(vpn, to).is_ok() {
                self.promoted += 1;
                self.moved(v);
            }
            self.refile(&*ctx, v);
        }
    }
}

impl Policy for Hemem {
    fn name(&self) -> &'static str {
        "hemem"
    }

    fn replicates(&self) -> bool {
        false
    }

    fn state_bytes_per_page(&self) -> u64 {
        // The record and about one queue entry.
        (std::mem::size_of::<PageInfo>() + std::mem::size_of::<(u32, u32)>()) as u64
    }

    fn monitors(&self) -> MonitorSpec {
        MonitorSpec {
            sampling: Some(SamplingSpec {
                load_period: self.config.sample_period,
                store_period: self.config.sample_period,
                buffer: self.config.sample_buffer as usize,
            }),
            ..MonitorSpec::default()
        }
    }

    fn init(&mut self, ctx: &mut dyn Mm) {
        self.pages = vec![
            PageInfo {
                list: NONE,
                ..PageInfo::default()
            };
            ctx.npages()
        ];
        for v in 0..ctx.npages() as u32 {
            self.refile(&*ctx, v);
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

    fn on_fault(&mut self, ctx: &mut dyn Mm, f: crate::component::Fault) {
        crate::component::default_fault(ctx, f);
        if self.pages.get(f.vpn.idx()).is_some_and(|p| p.list == NONE) {
            self.refile(&*ctx, f.vpn.0);
        }
    }

    fn daemons(&self, _machine: &Machine) -> Vec<DaemonSpec> {
        vec![
            DaemonSpec {
                name: "hemem-pebs".into(),
                placement: DaemonPlacement::OwnProcessor,
                first_wake: Ns(self.config.sample_drain_us * 1000),
            },
            DaemonSpec {
                name: "hemem-policy".into(),
                placement: DaemonPlacement::OwnProcessor,
                first_wake: Ns(self.config.policy_period_ms * 1_000_000),
            },
        ]
    }

    fn on_daemon(&mut self, ctx: &mut dyn Mm, id: usize) -> DaemonNext {
        if id == 0 {
            self.drain(ctx);
            DaemonNext::After(Ns(self.config.sample_drain_us * 1000))
        } else {
            self.migrate(ctx);
            DaemonNext::After(Ns(self.config.policy_period_ms * 1_000_000))
        }
    }

    fn counters(&self) -> Vec<Counter> {
        let c = |name, label, value| Counter { name, label, value };
        vec![
            c("hemem_records", "sampled records processed", self.records),
            c("hemem_coolings", "coolings", self.coolings),
            c("hemem_promoted", "pages promoted", self.promoted),
            c("hemem_demoted", "pages demoted", self.demoted),
            c(
                "hemem_pinned",
                "hot pages left pinned after their migrations",
                self.pinned,
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::HistoryMode;
    use crate::mm::{test_machine_config, Action, Recording};
    use crate::policy::test_scene::{two_tiers, Tiers};

    /// A fast node 0 of `fast` frames and a slow memory-only node 1; `npages` pages, the
    /// first `on_fast` on node 0 and the rest on node 1.
    fn scene(config: HememConfig, fast: u32, npages: u32, on_fast: u32) -> (Hemem, Recording) {
        let tiers = Tiers {
            fast,
            slow: 64,
            page_bytes: None,
        };
        two_tiers(tiers, npages, on_fast, HistoryMode::None, |m| {
            Hemem::new(config, m).unwrap()
        })
    }

    /// `n` sampled records of page `v` (writes or reads) drained by the sampling thread.
    fn sample(p: &mut Hemem, rec: &mut Recording, v: u32, write: bool, n: u32) {
        for _ in 0..n {
            let served_by = rec.home(Vpn(v));
            rec.push_sample(Sample {
                time: rec.now,
                thread: 0,
                node: NodeId(0),
                vpn: Vpn(v),
                served_by,
                write,
                latency_ns: 0,
            });
        }
        p.on_daemon(rec, 0);
    }

    fn config() -> HememConfig {
        HememConfig::default()
    }

    #[test]
    fn asks_for_loads_and_stores_sampled_at_its_period() {
        let (p, _) = scene(config(), 8, 4, 2);
        let s = p.monitors().sampling.unwrap();
        assert_eq!((s.load_period, s.store_period), (5003, 5003));
    }

    #[test]
    fn a_page_reaching_the_read_threshold_is_hot() {
        let (mut p, mut rec) = scene(config(), 8, 4, 2);
        sample(&mut p, &mut rec, 3, false, 8);
        assert_eq!(p.pages[3].list, SLOW_HOT);
    }

    #[test]
    fn a_page_below_the_thresholds_stays_cold() {
        let (mut p, mut rec) = scene(config(), 8, 4, 2);
        sample(&mut p, &mut rec, 3, false, 7);
        sample(&mut p, &mut rec, 3, true, 7);
        assert_eq!(p.pages[3].list, SLOW_COLD);
    }

    #[test]
    fn a_count_above_the_cooling_threshold_halves_every_hot_page() {
        let (mut p, mut rec) = scene(config(), 8, 4, 2);
        sample(&mut p, &mut rec, 2, false, 10);
        sample(&mut p, &mut rec, 3, false, 19);
        // Page 3 passed 18 and triggered the cooling: 19 -> 9; page 2: 10 -> 5, cold.
        assert_eq!((p.pages[3].reads, p.pages[2].reads), (9, 5));
        assert_eq!(p.pages[2].list, SLOW_COLD);
        assert_eq!(p.coolings, 1);
    }

    #[test]
    fn a_hot_slow_page_is_promoted_into_a_free_fast_frame() {
        let (mut p, mut rec) = scene(config(), 8, 4, 2);
        sample(&mut p, &mut rec, 3, true, 8);
        rec.clear();
        p.on_daemon(&mut rec, 1);
        assert_eq!(rec.actions(), &[Action::Migrate(Vpn(3), NodeId(0))]);
    }

    #[test]
    fn a_full_fast_tier_makes_room_by_demoting_its_oldest_cold_page() {
        let (mut p, mut rec) = scene(config(), 2, 4, 2);
        sample(&mut p, &mut rec, 3, true, 8);
        rec.clear();
        p.on_daemon(&mut rec, 1);
        assert_eq!(
            rec.actions(),
            &[
                Action::Migrate(Vpn(0), NodeId(1)),
                Action::Migrate(Vpn(3), NodeId(0))
            ]
        );
    }

    #[test]
    fn a_fast_tier_of_hot_pages_takes_no_promotion() {
        let (mut p, mut rec) = scene(config(), 2, 4, 2);
        for v in [0, 1, 3] {
            sample(&mut p, &mut rec, v, true, 8);
        }
        rec.clear();
        p.on_daemon(&mut rec, 1);
        assert!(rec.actions().is_empty());
        assert_eq!(p.pages[3].list, SLOW_HOT);
    }

    #[test]
    fn a_page_that_migrated_its_last_time_stays_put() {
        let (mut p, mut rec) = scene(
            HememConfig {
                migration_stop_threshold: 1,
                ..config()
            },
            8,
            4,
            2,
        );
        sample(&mut p, &mut rec, 3, true, 8);
        p.on_daemon(&mut rec, 1);
        assert_eq!(p.pages[3].list, NONE);
        assert_eq!(p.pinned, 1);
    }

    #[test]
    fn the_sampling_thread_is_charged_per_record() {
        let (mut p, mut rec) = scene(config(), 8, 4, 2);
        sample(&mut p, &mut rec, 3, false, 5);
        assert_eq!(rec.cost(), Ns(500));
    }

    #[test]
    fn a_machine_of_one_tier_is_refused_naming_the_policy() {
        let m = Machine::new(test_machine_config(2)).unwrap();
        assert_eq!(Hemem::new(config(), &m).unwrap_err().field, "policy.kind");
    }
}
