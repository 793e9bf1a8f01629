//! `memtis`: Memtis (Lee et al., SOSP 2023), tiered-memory management by an access
//! histogram whose hot threshold is fitted to the fast tier's size, with cooling, as its
//! authors' Linux 5.15 code does it (`mm/htmm_core.c`, `mm/htmm_sampler.c`,
//! `mm/htmm_migrater.c`, defaults in `mm/mempolicy.c`, in the `cosmoss-jigu/memtis`
//! repository).
//!
//! - **Sampling.** Processor event-based sampling records one in `sample_period` loads
//!   that miss to memory and one in `store_sample_period` stores
//!   ([`crate::mm::SamplingSpec`]); the sampling thread drains the records every
//!   `sample_drain_us`. Each record adds one to its page's access count (the huge-page
//!   path of `update_huge_page`, the unit the authors' runs use, at the machine's page
//!   size) and moves the page between the bins of a 16-bin histogram of pages by
//!   `floor(log2(count + 1))`, capped at 15 (`get_idx`).
//! - **Thresholds.** Every `adaptation_period` records the hot threshold is fitted to the
//!   fast tier (`__adjust_active_threshold`): the lowest bin such that the pages in the
//!   bins at or above it fit in the fast tier's frames less the promotion headroom, at
//!   least `min_hot_threshold`. The threshold only rises this way; after a cooling it
//!   falls by one when the fit is lower. The warm threshold is one below the hot one
//!   when the hot set fills less than 75 % of that room (unless `warm` is off), else
//!   equal to it.
//! - **Cooling.** Every `cooling_period` records, and when the resident memory has grown
//!   by `cooling_alloc_mb` since the last such cooling (`need_memcg_cooling`), every
//!   count is halved and the histogram rebuilt. The code halves lazily, by a cooling
//!   clock each page catches up with when next touched (`check_base_cooling`,
//!   `check_transhuge_cooling`) or when kmigraterd's cooling pass reaches it; here all
//!   counts are halved at once, which gives the same counts. A page allocated since the
//!   previous cooling skips it (`htmm_skip_cooling`).
//! - **New pages** start with the count `2^(hot threshold + 1)` (`set_page_coolstatus`,
//!   `__prep_transhuge_page_for_htmm`): hot, so not demoted before a cooling. They
//!   enter the histogram when first sampled or cooled, as in the code.
//! - **Promotion** (`kmigraterd_promotion`, every `promotion_period_ms`): the slow tier's
//!   hot pages (count's bin at or above the hot threshold), oldest first, move to the
//!   fast node nearest their node while it has more free frames than its promotion
//!   headroom (`promotion_available`).
//! - **Demotion** (`kmigraterd_demotion`, every `demotion_period_ms`, per fast node):
//!   when the hot pages waiting on its demotion target need more room than the node has
//!   free above its promotion headroom, or, with none waiting, when its free frames fall
//!   under the demotion trigger (`need_toptier_demotion`), pages of the node below the
//!   warm threshold move to the slow tier until that room is made; when too few could
//!   be demoted for the waiting pages, the warm threshold is raised to the hot one
//!   (`demote_node`).
//! - **Watermarks** scale with each fast node's size, as the code's per-memory-cgroup
//!   ones scale with its fast-tier limit: the promotion headroom is 3 % of the node
//!   within 100 .. 1500 MB, the demotion trigger 2 % within 50 .. 1000 MB
//!   (`get_memcg_promotion_watermark`, `get_memcg_demotion_watermark`).
//! - **Allocation** is first touch, fast tier first (`StaticPolicy::initial`).
//!
//! The fast tier is the nodes with processors, the slow tier the memory-only nodes (a
//! fast node demotes to its nearest slow node). Its threads are kernel threads bound to a
//! node's processors (`ksamplingd` to node 0, each kmigraterd to its node); they run on
//! processors the program leaves free, as the scheduler would place them on idle ones,
//! or, with `steal_time`, steal time from the first fast node's first processor.
//!
//! Not modelled:
//! - the adaptation of the sampling periods to the sampler's CPU quota
//!   (`ksampled_soft_cpu_quota`, 3 %): the code checks it every 15 s (`cpucap_period` in
//!   `ksamplingd`), longer than most simulated runs; the periods stay at their initial
//!   values, and the sampler is charged `sample_cost_ns` per record;
//! - huge-page splitting (`htmm_thres_split`, the estimate of the hit ratio base pages
//!   would reach, eHR against the real one, rHR) and the separate histogram of estimated
//!   base pages: a page here is the machine's page, counted as the code counts a huge
//!   page;
//! - per-memory-cgroup limits: the fast tier is the machine's fast nodes, whole;
//! - the LRU lists: a page's hotness is read from its count against the current
//!   thresholds when kmigraterd acts (the code's adjusting pass converges to that); the
//!   active list's order is the order pages became hot candidates; the inactive list's
//!   order is a clock over the pages; the cooling pass's early activation of pages one
//!   bin below the hot threshold is left out;
//! - `MAX_MIGRATION_RATE_IN_MBPS` (defined in `include/linux/htmm.h` but used nowhere),
//!   direct demotion on allocation failure, and the sampler's buffer-fill-driven extra
//!   drains (`ksampled_min_sample_ratio`).

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

/// Parameters of `memtis`; defaults are those of the authors' code (`mm/mempolicy.c`'s
/// `htmm_*` variables, which the authors' run script leaves as they are) unless said
/// otherwise.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct MemtisConfig {
    /// Loads that miss to memory per sampled record. Default 199 (`htmm_sample_period`,
    /// the first of the code's periods, `include/linux/htmm.h`).
    #[field(min = 1, max = 1_000_000_000)]
    pub sample_period: u64,
    /// Stores per sampled record. Default 100007 (`htmm_inst_sample_period`).
    #[field(min = 1, max = 1_000_000_000)]
    pub store_sample_period: u64,
    /// The lowest hot threshold (a histogram bin). Default 1 (`htmm_thres_hot`).
    #[field(min = 0, max = 15)]
    pub min_hot_threshold: u32,
    /// Records between two fits of the hot threshold. Default 100000
    /// (`htmm_adaptation_period`).
    #[field(min = 1, max = 1_000_000_000_000u64)]
    pub adaptation_period: u64,
    /// Records between two coolings. Default 2000000 (`htmm_cooling_period`).
    #[field(min = 1, max = 1_000_000_000_000u64)]
    pub cooling_period: u64,
    /// Growth of resident memory (MB) that triggers a cooling at the next record. Default
    /// 10240 (`htmm_thres_cooling_alloc`, 10 GB in 4 KiB pages); 0 turns it off.
    #[field(min = 0, max = 1_000_000_000, unit = "MB")]
    pub cooling_alloc_mb: u64,
    /// The warm threshold (one below the hot one while the hot set is small). Default true
    /// (`htmm_nowarm` = 0).
    pub warm: bool,
    /// The promotion thread's period (ms). Default 500 (`htmm_promotion_period_in_ms`).
    #[field(min = 1, max = 86_400_000, unit = "ms")]
    pub promotion_period_ms: u64,
    /// The demotion thread's period (ms). Default 500 (`htmm_demotion_period_in_ms`).
    #[field(min = 1, max = 86_400_000, unit = "ms")]
    pub demotion_period_ms: u64,
    /// The promotion headroom, in % of a fast node. Default 3
    /// (`get_memcg_promotion_watermark`, `mm/htmm_migrater.c`).
    #[field(min = 0, max = 100, unit = "%")]
    pub headroom_percent: u64,
    /// The headroom's floor (MB). Default 100 (`MAX_WATERMARK_LOWER_LIMIT`).
    #[field(min = 0, max = 1_000_000_000, unit = "MB")]
    pub headroom_min_mb: u64,
    /// The headroom's ceiling (MB). Default 1500 (`MAX_WATERMARK_UPPER_LIMIT`).
    #[field(min = 0, max = 1_000_000_000, unit = "MB")]
    pub headroom_max_mb: u64,
    /// The demotion trigger, in % of a fast node. Default 2
    /// (`get_memcg_demotion_watermark`).
    #[field(min = 0, max = 100, unit = "%")]
    pub demotion_percent: u64,
    /// The trigger's floor (MB). Default 50 (`MIN_WATERMARK_LOWER_LIMIT`).
    #[field(min = 0, max = 1_000_000_000, unit = "MB")]
    pub demotion_min_mb: u64,
    /// The trigger's ceiling (MB). Default 1000 (`MIN_WATERMARK_UPPER_LIMIT`).
    #[field(min = 0, max = 1_000_000_000, unit = "MB")]
    pub demotion_max_mb: u64,
    /// How often the sampling thread drains the records (us). Default 2000: `ksamplingd`
    /// sleeps 2 ms between passes over the buffers (`sleep_timeout`).
    #[field(min = 1, max = 86_400_000_000u64, unit = "us")]
    pub sample_drain_us: u64,
    /// Records the sample buffer holds. Default 65536, an estimate (the code maps 32
    /// pages of perf buffer per processor and event, `BUFFER_SIZE`).
    #[field(min = 1, max = 16_777_216)]
    pub sample_buffer: u64,
    /// The sampling thread's time per record (ns). Default 100, an estimate (HeMem's
    /// estimate, for comparison).
    #[field(min = 0, max = 1_000_000, unit = "ns")]
    pub sample_cost_ns: u64,
    /// Run the sampling and migration threads on the first fast node's first processor,
    /// stealing its thread's time, rather than on processors the program leaves free.
    /// Default false: the code binds its kernel threads to a node's processors
    /// (`ksamplingd` to node 0, each kmigraterd to its node), where the scheduler puts
    /// them on an idle one while there is one; set it for runs whose threads take every
    /// processor.
    pub steal_time: bool,
    /// Initial placement (default: first touch, fast tier first).
    #[field(nested)]
    pub initial: StaticConfig,
}

impl Default for MemtisConfig {
    fn default() -> Self {
        MemtisConfig {
            sample_period: 199,
            store_sample_period: 100_007,
            min_hot_threshold: 1,
            adaptation_period: 100_000,
            cooling_period: 2_000_000,
            cooling_alloc_mb: 10_240,
            warm: true,
            promotion_period_ms: 500,
            demotion_period_ms: 500,
            headroom_percent: 3,
            headroom_min_mb: 100,
            headroom_max_mb: 1500,
            demotion_percent: 2,
            demotion_min_mb: 50,
            demotion_max_mb: 1000,
            sample_drain_us: 2000,
            sample_buffer: 65_536,
            sample_cost_ns: 100,
            steal_time: false,
            initial: StaticConfig::default(),
        }
    }
}

impl crate::registry::Describe for MemtisConfig {
    const KIND: &'static str = "memtis";
    const DESCRIPTION: &'static str = "Memtis: sampled accesses, an access histogram whose hot threshold fits the fast tier, cooling, kmigraterd promoting and demoting (SOSP 2023)";
}

/// The search space `tune` explores.
pub const SEARCH_SPACE: [Dim; 5] = [
    Dim {
        field: "sample_period",
        lo: 199.0,
        hi: 19_997.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "199 .. 19997 on a log scale: the range of the code's load periods (include/linux/htmm.h)",
    },
    Dim {
        field: "adaptation_period",
        lo: 10_000.0,
        hi: 1_000_000.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "10^4 .. 10^6 records on a log scale around the code's 100000, an estimate",
    },
    Dim {
        field: "cooling_period",
        lo: 200_000.0,
        hi: 20_000_000.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "2x10^5 .. 2x10^7 records on a log scale around the code's 2000000, an estimate",
    },
    Dim {
        field: "promotion_period_ms",
        lo: 10.0,
        hi: 5000.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "10 ms .. 5 s on a log scale around the code's 500 ms, an estimate",
    },
    Dim {
        field: "demotion_period_ms",
        lo: 10.0,
        hi: 5000.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "10 ms .. 5 s on a log scale around the code's 500 ms, an estimate",
    },
];

impl crate::component::PolicyParams for MemtisConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn Policy>, ConfigError> {
        Ok(Box::new(Memtis::new(self.clone(), machine)?))
    }
    const SEARCH_SPACE: &'static [Dim] = &SEARCH_SPACE;
}

inventory::submit!(crate::component::PolicyEntry::of::<MemtisConfig>());

/// The histogram's bins (`hotness_hg[16]`).
const BINS: usize = 16;

/// A page allocated since the last cooling: that cooling passes it over.
const FRESH: u8 = 1;
/// The page is counted in the histogram.
const IN_HIST: u8 = 2;
/// The page is in the promotion queue.
const QUEUED: u8 = 4;

/// The histogram bin of an access count: `floor(log2(count + 1))`, at most 15
/// (`get_idx`).
fn bin(count: u32) -> usize {
    ((u64::from(count) + 1).ilog2() as usize).min(BINS - 1)
}

/// Memtis's per-page record.
#[derive(Clone, Copy, Debug, Default)]
struct PageInfo {
    count: u32,
    flags: u8,
}

/// The policy.
#[derive(Debug)]
pub struct Memtis {
    config: MemtisConfig,
    initial: StaticPolicy,
    slow: NodeSet,
    /// Per node: its demotion target (fast nodes only).
    demote_to: Vec<Option<NodeId>>,
    /// Per node: where its pages are promoted to (the nearest fast node).
    promote_to: Vec<NodeId>,
    /// The fast tier's nodes, in order.
    fast: Vec<NodeId>,
    /// Per node: the promotion headroom and the demotion trigger (frames).
    headroom: Vec<u64>,
    trigger: Vec<u64>,
    /// The fast tier's frames less its headroom: what the hot set is fitted to.
    hot_room: u64,
    /// Resident pages that trigger a cooling when grown by this many (0: never).
    alloc_pages: u64,
    pages: Vec<PageInfo>,
    /// The access histogram over the pages in it.
    hist: [u64; BINS],
    /// The slow tier's hot pages, in the order they became hot (may hold stale entries).
    queue: VecDeque<u32>,
    /// Per node: its pages in the queue (its "active list", which a fast node's
    /// demotion makes room for).
    queued: Vec<u64>,
    /// Queue entries put back after a round (reused).
    keep: Vec<u32>,
    /// Per fast node: the demotion clock's hand.
    hand: Vec<u32>,
    hot: u32,
    warm: u32,
    cooled: bool,
    sampled: u64,
    resident: u64,
    resident_at_cooling: u64,
    samples: Vec<Sample>,
    records: u64,
    coolings: u64,
    adaptations: u64,
    promoted: u64,
    demoted: u64,
}

impl Memtis {
    /// The policy for `machine`.
    pub fn new(config: MemtisConfig, machine: &Machine) -> Result<Memtis, ConfigError> {
        config.check_ranges("policy")?;
        let slow = slow_tier(machine, "Memtis, which manages two tiers,")?;
        let initial = StaticPolicy::initial(config.initial.clone(), machine)?;
        let demote_to = demotion_targets(machine, slow);
        let nodes = machine.nodes();
        let fast: Vec<NodeId> = (0..nodes as u16)
            .map(NodeId)
            .filter(|&n| !slow.contains(n))
            .collect();
        let promote_to = (0..nodes as u16)
            .map(|n| machine.nearest_with_procs(NodeId(n)))
            .collect();
        let page = machine.page_size();
        let mb = 1u64 << 20;
        // A share of `frames` within [lo, hi] MB, in frames (rounded up: a nonzero
        // watermark is at least a frame).
        let mark = |frames: u64, percent: u64, lo: u64, hi: u64| {
            let bytes = (frames.saturating_mul(page).saturating_mul(percent) / 100)
                .clamp(lo.saturating_mul(mb), hi.saturating_mul(mb).max(lo * mb));
            bytes.div_ceil(page)
        };
        let c = &config;
        let headroom = (0..nodes as u16)
            .map(|n| {
                let f = u64::from(machine.frames(NodeId(n)));
                mark(f, c.headroom_percent, c.headroom_min_mb, c.headroom_max_mb)
            })
            .collect();
        let trigger = (0..nodes as u16)
            .map(|n| {
                let f = u64::from(machine.frames(NodeId(n)));
                mark(f, c.demotion_percent, c.demotion_min_mb, c.demotion_max_mb)
            })
            .collect();
        // As the code fits the hot set to the cgroup's whole fast-tier limit less its
        // headroom (`max_nr_dram_pages`).
        let fast_frames: u64 = fast.iter().map(|&n| u64::from(machine.frames(n))).sum();
        let hot_room = fast_frames.saturating_sub(mark(
            fast_frames,
            c.headroom_percent,
            c.headroom_min_mb,
            c.headroom_max_mb,
        ));
        let alloc_pages = (c.cooling_alloc_mb.saturating_mul(mb)).div_ceil(page);
        let hot = c.min_hot_threshold;
        Ok(Memtis {
            initial,
            slow,
            demote_to,
            promote_to,
            fast,
            headroom,
            trigger,
            hot_room,
            alloc_pages,
            pages: Vec::new(),
            hist: [0; BINS],
            queue: VecDeque::new(),
            queued: vec![0; nodes],
            keep: Vec::new(),
            hand: vec![0; nodes],
            hot,
            warm: hot,
            cooled: false,
            sampled: 0,
            resident: 0,
            resident_at_cooling: 0,
            samples: Vec::new(),
            records: 0,
            coolings: 0,
            adaptations: 0,
            promoted: 0,
            demoted: 0,
            config,
        })
    }

    fn is_hot(&self, count: u32) -> bool {
        bin(count) >= self.hot as usize
    }

    /// Queues page `v` for promotion if it is a hot slow-tier page not queued yet.
    fn consider(&mut self, ctx: &dyn Mm, v: u32) {
        let p = self.pages[v as usize];
        if p.flags & QUEUED == 0
            && self.is_hot(p.count)
            && ctx.copy_count(Vpn(v)) > 0
            && self.slow.contains(ctx.home(Vpn(v)))
        {
            self.pages[v as usize].flags |= QUEUED;
            self.queued[ctx.home(Vpn(v)).idx()] += 1;
            self.queue.push_back(v);
        }
    }

    /// A page placed for the first time: hot by its initial count, fresh.
    fn born(&mut self, v: u32) {
        self.resident += 1;
        // `get_accesses_from_idx(active_threshold + 1)`.
        let count = 1u32 << (self.hot + 1).min(31);
        self.pages[v as usize] = PageInfo {
            count,
            flags: FRESH,
        };
    }

    /// Halves every count (a fresh page is passed over, once) and rebuilds the
    /// histogram (`__cooling` and the pages' catching up with the cooling clock).
    fn cool(&mut self, ctx: &dyn Mm) {
        self.coolings += 1;
        self.hist = [0; BINS];
        for v in 0..self.pages.len() {
            if ctx.copy_count(Vpn(v as u32)) == 0 {
                continue;
            }
            let p = &mut self.pages[v];
            if p.flags & FRESH != 0 {
                p.flags &= !(FRESH | IN_HIST);
            } else {
                p.count >>= 1;
                p.flags |= IN_HIST;
                self.hist[bin(p.count)] += 1;
            }
        }
        self.cooled = true;
    }

    /// Fits the hot threshold to the fast tier and sets the warm one
    /// (`__adjust_active_threshold`).
    fn adapt(&mut self, ctx: &dyn Mm) {
        self.adaptations += 1;
        let mut active = 0u64;
        let mut idx = BINS as i64 - 1;
        while idx >= 0 {
            let n = self.hist[idx as usize];
            if active + n > self.hot_room {
                break;
            }
            active += n;
            idx -= 1;
        }
        if idx != BINS as i64 - 1 {
            idx += 1;
        }
        let fit = (idx as u32).max(self.config.min_hot_threshold);
        let need_warm = active < self.hot_room * 75 / 100;
        let before = self.hot;
        if self.cooled {
            // Some pages are not yet back in the histogram after a cooling: the
            // threshold falls by one at most.
            if fit < self.hot && self.hot > 1 {
                self.hot -= 1;
            }
            self.cooled = false;
        } else if fit > self.hot {
            self.hot = fit;
        }
        self.warm = if self.config.warm && need_warm {
            self.hot.saturating_sub(1)
        } else {
            self.hot
        };
        if self.hot < before {
            // The adjusting pass: pages the lower threshold makes hot become
            // candidates.
            for v in 0..self.pages.len() as u32 {
                self.consider(ctx, v);
            }
        }
    }

    /// The sampling thread's step: every record drained and counted.
    fn drain(&mut self, ctx: &mut dyn Mm) {
        let mut samples = std::mem::take(&mut self.samples);
        ctx.take_samples(&mut samples);
        ctx.charge(Ns(self
            .config
            .sample_cost_ns
            .saturating_mul(samples.len() as u64)));
        for s in &samples {
            let v = s.vpn.0;
            if v as usize >= self.pages.len() || ctx.copy_count(s.vpn) == 0 {
                continue;
            }
            self.records += 1;
            let p = &mut self.pages[v as usize];
            let old = bin(p.count);
            p.count = p.count.saturating_add(1);
            let new = bin(p.count);
            if p.flags & IN_HIST == 0 {
                p.flags |= IN_HIST;
                self.hist[new] += 1;
            } else if old != new {
                self.hist[old] = self.hist[old].saturating_sub(1);
                self.hist[new] += 1;
            }
            self.consider(&*ctx, v);
            self.sampled += 1;
            let grown = self.alloc_pages > 0
                && self.resident >= self.resident_at_cooling + self.alloc_pages;
            if self.sampled.is_multiple_of(self.config.cooling_period) || grown {
                if grown {
                    self.resident_at_cooling = self.resident;
                }
                self.cool(&*ctx);
            } else if self.sampled.is_multiple_of(self.config.adaptation_period) {
                self.adapt(&*ctx);
            }
        }
        samples.clear();
        self.samples = samples;
    }

    /// Takes page `v`, on node `n`, out of the queue's count.
    fn dequeued(&mut self, v: u32, n: NodeId) {
        self.pages[v as usize].flags &= !QUEUED;
        self.queued[n.idx()] = self.queued[n.idx()].saturating_sub(1);
    }

    /// The promotion thread's round: the slow tier's hot pages, oldest first, into their
    /// fast node while it has free frames above its headroom (`promote_node`).
    fn promote(&mut self, ctx: &mut dyn Mm) {
        if self.fast_full(&*ctx) {
            return;
        }
        let mut keep = std::mem::take(&mut self.keep);
        while let Some(v) = self.queue.pop_front() {
            let vpn = Vpn(v);
            let p = self.pages[v as usize];
            let from = ctx.home(vpn);
            if ctx.copy_count(vpn) == 0 || !self.slow.contains(from) || !self.is_hot(p.count) {
                self.dequeued(v, from);
                continue;
            }
            let to = self.promote_to[from.idx()];
            if u64::from(ctx.free_frames(to)) <= self.headroom[to.idx()] {
                keep.push(v);
                if self.fast_full(&*ctx) {
                    break;
                }
                continue;
            }
            if ctx.migrate(Vpn(v), to).is_ok() {
                self.promoted += 1;
                self.dequeued(v, from);
            } else {
                keep.push(v);
            }
        }
        // Pages that found no room keep their turn.
        for &v in keep.iter().rev() {
            self.queue.push_front(v);
        }
        keep.clear();
        self.keep = keep;
    }

    /// Whether no fast node has free frames above its headroom.
    fn fast_full(&self, ctx: &dyn Mm) -> bool {
        self.fast
            .iter()
            .all(|&n| u64::from(ctx.free_frames(n)) <= self.headroom[n.idx()])
    }

    /// The demotion thread's round on fast node `n` (`need_toptier_demotion`,
    /// `demote_node`).
    fn demote(&mut self, ctx: &mut dyn Mm, n: NodeId) {
        let Some(to) = self.demote_to[n.idx()] else {
            return;
        };
        let free = u64::from(ctx.free_frames(n));
        let room = self.headroom[n.idx()];
        let waiting = self.queued[to.idx()];
        let exceeded = if waiting > 0 {
            (waiting + room).saturating_sub(free)
        } else if free < self.trigger[n.idx()] {
            room.saturating_sub(free)
        } else {
            0
        };
        if exceeded == 0 {
            return;
        }
        // The inactive list, tail first, stands as a clock over the pages.
        let pages = self.pages.len() as u32;
        let mut demoted = 0;
        let mut left = pages;
        while demoted < exceeded && left > 0 && ctx.free_frames(to) > 0 {
            left -= 1;
            let v = self.hand[n.idx()];
            self.hand[n.idx()] = (v + 1) % pages;
            let vpn = Vpn(v);
            if ctx.copy_count(vpn) != 1 || ctx.home(vpn) != n {
                continue;
            }
            if bin(self.pages[v as usize].count) >= self.warm as usize {
                continue;
            }
            if ctx.migrate(Vpn(v), to).is_ok() {
                demoted += 1;
            }
        }
        self.demoted += demoted;
        if self.config.warm && waiting > 0 && demoted < waiting.min(exceeded) {
            // Warm pages become demotable: the waiting hot pages need the room.
            self.warm = self.hot;
        }
    }
}

impl Policy for Memtis {
    fn name(&self) -> &'static str {
        "memtis"
    }

    fn replicates(&self) -> bool {
        false
    }

    fn state_bytes_per_page(&self) -> u64 {
        // The record and about one queue entry.
        (std::mem::size_of::<PageInfo>() + std::mem::size_of::<u32>()) as u64
    }

    fn monitors(&self) -> MonitorSpec {
        MonitorSpec {
            sampling: Some(SamplingSpec {
                load_period: self.config.sample_period,
                store_period: self.config.store_sample_period,
                buffer: self.config.sample_buffer as usize,
            }),
            ..MonitorSpec::default()
        }
    }

    fn init(&mut self, ctx: &mut dyn Mm) {
        self.pages = vec![PageInfo::default(); ctx.npages()];
        for v in 0..ctx.npages() as u32 {
            if ctx.copy_count(Vpn(v)) > 0 {
                self.born(v);
            }
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
        let unplaced = ctx.copy_count(f.vpn) == 0;
        crate::component::default_fault(ctx, f);
        if unplaced && f.vpn.idx() < self.pages.len() && ctx.copy_count(f.vpn) > 0 {
            self.born(f.vpn.0);
        }
    }

    fn daemons(&self, _machine: &Machine) -> Vec<DaemonSpec> {
        let placement = if self.config.steal_time {
            DaemonPlacement::StealOn(self.fast.first().copied().unwrap_or(NodeId(0)))
        } else {
            DaemonPlacement::OwnProcessor
        };
        vec![
            DaemonSpec {
                name: "memtis-ksamplingd".into(),
                placement,
                first_wake: Ns(self.config.sample_drain_us * 1000),
            },
            DaemonSpec {
                name: "memtis-kmigraterd-demotion".into(),
                placement,
                first_wake: Ns(self.config.demotion_period_ms * 1_000_000),
            },
            DaemonSpec {
                name: "memtis-kmigraterd-promotion".into(),
                placement,
                first_wake: Ns(self.config.promotion_period_ms * 1_000_000),
            },
        ]
    }

    fn on_daemon(&mut self, ctx: &mut dyn Mm, id: usize) -> DaemonNext {
        match id {
            0 => {
                self.drain(ctx);
                DaemonNext::After(Ns(self.config.sample_drain_us * 1000))
            }
            1 => {
                for i in 0..self.fast.len() {
                    let n = self.fast[i];
                    self.demote(ctx, n);
                }
                DaemonNext::After(Ns(self.config.demotion_period_ms * 1_000_000))
            }
            _ => {
                self.promote(ctx);
                DaemonNext::After(Ns(self.config.promotion_period_ms * 1_000_000))
            }
        }
    }

    fn counters(&self) -> Vec<Counter> {
        let c = |name, label, value| Counter { name, label, value };
        vec![
            c("memtis_records", "sampled records processed", self.records),
            c("memtis_promoted", "pages promoted", self.promoted),
            c("memtis_demoted", "pages demoted", self.demoted),
            c("memtis_coolings", "coolings", self.coolings),
            c(
                "memtis_adaptations",
                "hot-threshold adaptations",
                self.adaptations,
            ),
            c(
                "memtis_hot_threshold",
                "hot threshold at the end (histogram bin)",
                u64::from(self.hot),
            ),
            c(
                "memtis_warm_threshold",
                "warm threshold at the end (histogram bin)",
                u64::from(self.warm),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::HistoryMode;
    use crate::machine::MachineConfig;
    use crate::mm::{test_machine_config, Action, Recording};
    use crate::policy::test_scene::{two_tiers, Tiers};

    /// A fast node 0 of `fast` frames and a slow memory-only node 1; `npages` pages, the
    /// first `on_fast` on node 0 and the rest on node 1.
    fn scene(config: MemtisConfig, fast: u32, npages: u32, on_fast: u32) -> (Memtis, Recording) {
        let tiers = Tiers {
            fast,
            slow: 64,
            page_bytes: None,
        };
        two_tiers(tiers, npages, on_fast, HistoryMode::None, |m| {
            Memtis::new(config, m).unwrap()
        })
    }

    /// `n` sampled reads of page `v` drained by the sampling thread.
    fn sample(p: &mut Memtis, rec: &mut Recording, v: u32, n: u32) {
        for _ in 0..n {
            let served_by = rec.home(Vpn(v));
            rec.push_sample(Sample {
                time: rec.now,
                thread: 0,
                node: NodeId(0),
                vpn: Vpn(v),
                served_by,
                write: false,
                latency_ns: 0,
            });
        }
        p.on_daemon(rec, 0);
    }

    /// Sets page `v`'s count, keeping the histogram.
    fn set_count(p: &mut Memtis, v: u32, count: u32) {
        let old = bin(p.pages[v as usize].count);
        if p.pages[v as usize].flags & IN_HIST != 0 {
            p.hist[old] -= 1;
            p.hist[bin(count)] += 1;
        }
        p.pages[v as usize].count = count;
    }

    /// The defaults with watermarks of no frames (the test machine's nodes are far
    /// smaller than the watermarks' floors).
    fn config() -> MemtisConfig {
        MemtisConfig {
            headroom_percent: 0,
            headroom_min_mb: 0,
            demotion_percent: 0,
            demotion_min_mb: 0,
            ..MemtisConfig::default()
        }
    }

    #[test]
    fn asks_for_loads_and_stores_sampled_at_their_periods() {
        let (p, _) = scene(config(), 8, 4, 2);
        let s = p.monitors().sampling.unwrap();
        assert_eq!((s.load_period, s.store_period), (199, 100_007));
    }

    #[test]
    fn a_count_falls_in_the_bin_of_log2_of_count_plus_one_capped_at_15() {
        let bins: Vec<usize> = [0, 1, 2, 3, 6, 7, 65_534, 65_535, u32::MAX]
            .into_iter()
            .map(bin)
            .collect();
        assert_eq!(bins, [0, 1, 1, 2, 2, 3, 15, 15, 15]);
    }

    #[test]
    fn a_new_page_starts_hot_at_twice_the_hot_thresholds_access_count() {
        let (p, _) = scene(config(), 8, 4, 2);
        // Hot threshold 1: 2^(1 + 1) accesses, bin 2; outside the histogram until sampled.
        assert_eq!(p.pages[3].count, 4);
        assert_eq!(p.hist, [0; BINS]);
    }

    #[test]
    fn a_first_touch_places_the_page_on_the_fast_tier_and_counts_it_new() {
        let machine = Machine::new(MachineConfig {
            node_frames: vec![8, 64],
            memory_only_nodes: 1,
            ..test_machine_config(2)
        })
        .unwrap();
        let mut rec = Recording::new(machine, 2, HistoryMode::None);
        let mut p = Memtis::new(config(), rec.machine()).unwrap();
        p.init(&mut rec);
        let f = crate::component::Fault {
            thread: crate::types::ThreadId(0),
            node: NodeId(0),
            vpn: Vpn(1),
            write: false,
        };
        p.on_fault(&mut rec, f);
        assert_eq!(rec.home(Vpn(1)), NodeId(0));
        assert_eq!((p.pages[1].count, p.resident), (4, 1));
    }

    #[test]
    fn a_record_moves_its_page_to_the_bin_of_its_new_count() {
        let (mut p, mut rec) = scene(config(), 8, 4, 2);
        sample(&mut p, &mut rec, 3, 3);
        // 4 + 3 = 7 accesses: bin 3.
        assert_eq!(p.pages[3].count, 7);
        assert_eq!(p.hist[3], 1);
        assert_eq!(p.hist.iter().sum::<u64>(), 1);
    }

    #[test]
    fn the_hot_threshold_is_the_lowest_bin_whose_pages_fit_the_fast_tier() {
        let (mut p, rec) = scene(config(), 4, 8, 2);
        p.hist[5] = 2;
        p.hist[4] = 2;
        p.hist[3] = 3;
        p.adapt(&rec);
        // Bins 5 and 4 hold the 4 pages the fast tier takes; bin 3 would overflow it.
        assert_eq!(p.hot, 4);
    }

    #[test]
    fn the_headroom_is_left_out_of_the_room_the_hot_set_is_fitted_to() {
        let (mut p, rec) = scene(
            MemtisConfig {
                headroom_percent: 50,
                ..config()
            },
            4,
            8,
            2,
        );
        p.hist[5] = 2;
        p.hist[4] = 2;
        p.adapt(&rec);
        assert_eq!((p.hot_room, p.hot), (2, 5));
    }

    #[test]
    fn the_warm_threshold_is_one_below_the_hot_one_while_the_hot_set_is_small() {
        let (mut p, rec) = scene(config(), 4, 8, 2);
        p.hist[5] = 1;
        p.hist[4] = 5;
        p.adapt(&rec);
        // One page of a room of 4 is under 75 %.
        assert_eq!((p.hot, p.warm), (5, 4));
    }

    #[test]
    fn the_warm_threshold_equals_the_hot_one_once_the_hot_set_fills_its_room() {
        let (mut p, rec) = scene(config(), 4, 8, 2);
        p.hist[5] = 3;
        p.hist[4] = 5;
        p.adapt(&rec);
        assert_eq!((p.hot, p.warm), (5, 5));
    }

    #[test]
    fn the_hot_threshold_never_falls_below_its_minimum() {
        let (mut p, rec) = scene(config(), 4, 8, 2);
        p.adapt(&rec);
        assert_eq!(p.hot, 1);
    }

    #[test]
    fn the_hot_threshold_falls_only_after_a_cooling_and_by_one() {
        let (mut p, rec) = scene(config(), 4, 8, 2);
        p.hot = 5;
        p.adapt(&rec);
        assert_eq!(p.hot, 5);
        p.cooled = true;
        p.adapt(&rec);
        assert_eq!(p.hot, 4);
    }

    #[test]
    fn the_threshold_is_fitted_every_adaptation_period_records() {
        let (mut p, mut rec) = scene(
            MemtisConfig {
                adaptation_period: 10,
                ..config()
            },
            8,
            4,
            2,
        );
        sample(&mut p, &mut rec, 3, 25);
        assert_eq!(p.adaptations, 2);
    }

    #[test]
    fn a_cooling_halves_every_count_and_rebuilds_the_histogram() {
        let (mut p, mut rec) = scene(
            MemtisConfig {
                cooling_period: 20,
                ..config()
            },
            8,
            4,
            2,
        );
        // A first cooling: the new pages pass it over.
        p.cool(&rec);
        sample(&mut p, &mut rec, 3, 20);
        // Page 3: 4 + 20 = 24 -> 12 (bin 3); the others: 4 -> 2 (bin 1).
        assert_eq!((p.pages[3].count, p.pages[0].count), (12, 2));
        assert_eq!(
            (p.hist[3], p.hist[1], p.hist.iter().sum::<u64>()),
            (1, 3, 4)
        );
        assert_eq!(p.coolings, 2);
    }

    #[test]
    fn a_page_new_since_the_last_cooling_passes_it_over() {
        let (mut p, rec) = scene(config(), 8, 4, 2);
        p.cool(&rec);
        assert_eq!(p.pages[3].count, 4);
        p.cool(&rec);
        assert_eq!(p.pages[3].count, 2);
    }

    #[test]
    fn resident_memory_grown_past_the_allocation_threshold_triggers_a_cooling() {
        let (mut p, mut rec) = scene(
            MemtisConfig {
                cooling_alloc_mb: 1,
                ..config()
            },
            8,
            4,
            2,
        );
        // 1 MB of 64-byte pages.
        p.resident = 16_384;
        sample(&mut p, &mut rec, 3, 2);
        assert_eq!(p.coolings, 1);
    }

    #[test]
    fn a_sampled_hot_slow_page_is_promoted_to_the_fast_tier() {
        let (mut p, mut rec) = scene(config(), 8, 4, 2);
        sample(&mut p, &mut rec, 3, 1);
        rec.clear();
        p.on_daemon(&mut rec, 2);
        assert_eq!(rec.actions(), &[Action::Migrate(Vpn(3), NodeId(0))]);
        assert_eq!(p.promoted, 1);
    }

    #[test]
    fn an_unsampled_new_page_waits_for_a_record_before_promotion() {
        let (mut p, mut rec) = scene(config(), 8, 4, 2);
        p.on_daemon(&mut rec, 2);
        assert!(rec.actions().is_empty());
    }

    #[test]
    fn a_fast_node_down_to_its_headroom_takes_no_promotion() {
        // A headroom of 75 % of 8 frames: 6, and 6 are free.
        let (mut p, mut rec) = scene(
            MemtisConfig {
                headroom_percent: 75,
                ..config()
            },
            8,
            4,
            2,
        );
        sample(&mut p, &mut rec, 3, 1);
        rec.clear();
        p.on_daemon(&mut rec, 2);
        assert!(rec.actions().is_empty());
        assert_eq!(p.queue.front(), Some(&3));
    }

    #[test]
    fn a_queued_page_no_longer_hot_is_not_promoted() {
        let (mut p, mut rec) = scene(config(), 8, 4, 2);
        sample(&mut p, &mut rec, 3, 1);
        p.hot = 3;
        rec.clear();
        p.on_daemon(&mut rec, 2);
        assert!(rec.actions().is_empty());
        assert_eq!(p.pages[3].flags & QUEUED, 0);
    }

    #[test]
    fn a_lowered_threshold_makes_the_slow_tiers_hot_pages_candidates() {
        let (mut p, mut rec) = scene(config(), 8, 4, 2);
        p.hot = 3;
        p.cooled = true;
        p.adapt(&rec);
        // Threshold 2: the new pages (bin 2) on the slow tier are candidates.
        assert_eq!(p.hot, 2);
        p.on_daemon(&mut rec, 2);
        assert_eq!(
            rec.actions(),
            &[
                Action::Migrate(Vpn(2), NodeId(0)),
                Action::Migrate(Vpn(3), NodeId(0))
            ]
        );
    }

    #[test]
    fn a_fast_node_under_its_demotion_trigger_demotes_pages_below_the_warm_threshold() {
        // 2 frames, both used; trigger 2 frames, headroom 1: one page to demote.
        let (mut p, mut rec) = scene(
            MemtisConfig {
                demotion_percent: 100,
                headroom_percent: 50,
                ..config()
            },
            2,
            4,
            2,
        );
        for v in [0, 2, 3] {
            set_count(&mut p, v, 0);
        }
        p.on_daemon(&mut rec, 1);
        assert_eq!(rec.actions(), &[Action::Migrate(Vpn(0), NodeId(1))]);
        assert_eq!(p.demoted, 1);
    }

    #[test]
    fn hot_pages_not_yet_sampled_do_not_wait_for_room() {
        // 3 frames, 1 free; the slow pages are hot by their initial count only.
        let (mut p, mut rec) = scene(config(), 3, 4, 2);
        set_count(&mut p, 0, 0);
        p.on_daemon(&mut rec, 1);
        assert!(rec.actions().is_empty());
    }

    #[test]
    fn a_warm_page_is_not_demoted() {
        let (mut p, mut rec) = scene(
            MemtisConfig {
                demotion_percent: 100,
                headroom_percent: 50,
                ..config()
            },
            2,
            4,
            2,
        );
        for v in [0, 2, 3] {
            set_count(&mut p, v, 1);
        }
        // Bin 1 is at the warm threshold.
        p.on_daemon(&mut rec, 1);
        assert!(rec.actions().is_empty());
    }

    #[test]
    fn hot_pages_waiting_on_the_slow_tier_make_the_fast_node_demote() {
        // 3 frames, 1 free; two hot pages wait on the slow node: one more frame needed.
        let (mut p, mut rec) = scene(config(), 3, 4, 2);
        set_count(&mut p, 0, 0);
        set_count(&mut p, 1, 0);
        sample(&mut p, &mut rec, 2, 1);
        sample(&mut p, &mut rec, 3, 1);
        rec.clear();
        p.on_daemon(&mut rec, 1);
        assert_eq!(rec.actions(), &[Action::Migrate(Vpn(0), NodeId(1))]);
    }

    #[test]
    fn too_few_demotions_for_the_waiting_pages_make_warm_pages_demotable() {
        let (mut p, mut rec) = scene(config(), 3, 4, 2);
        set_count(&mut p, 0, 1);
        set_count(&mut p, 1, 1);
        sample(&mut p, &mut rec, 2, 1);
        sample(&mut p, &mut rec, 3, 1);
        rec.clear();
        p.warm = 1;
        p.on_daemon(&mut rec, 1);
        assert!(rec.actions().is_empty());
        assert_eq!(p.warm, p.hot);
    }

    #[test]
    fn the_watermarks_scale_with_the_node_within_their_bounds() {
        // 64-byte pages: 100 MB is 1638400 frames, over 3 % of the node.
        let (p, _) = scene(
            MemtisConfig {
                headroom_min_mb: 100,
                ..MemtisConfig::default()
            },
            8,
            4,
            2,
        );
        assert_eq!(p.headroom[0], 100 << 14);
        // 2 % of 8 frames of 64 bytes, under the 50 MB floor.
        assert_eq!(p.trigger[0], 50 << 14);
    }

    #[test]
    fn its_threads_run_on_free_processors_unless_told_to_steal_time() {
        let (p, rec) = scene(config(), 8, 4, 2);
        let own = p.daemons(rec.machine());
        assert_eq!(own.len(), 3);
        assert!(own
            .iter()
            .all(|d| d.placement == DaemonPlacement::OwnProcessor));
        let (p, rec) = scene(
            MemtisConfig {
                steal_time: true,
                ..config()
            },
            8,
            4,
            2,
        );
        let steal = p.daemons(rec.machine());
        assert!(steal
            .iter()
            .all(|d| d.placement == DaemonPlacement::StealOn(NodeId(0))));
    }

    #[test]
    fn the_sampling_thread_is_charged_per_record() {
        let (mut p, mut rec) = scene(config(), 8, 4, 2);
        sample(&mut p, &mut rec, 3, 5);
        assert_eq!(rec.cost(), Ns(500));
    }

    #[test]
    fn a_machine_of_one_tier_is_refused_naming_the_policy() {
        let m = Machine::new(test_machine_config(2)).unwrap();
        let e = Memtis::new(config(), &m).unwrap_err();
        assert_eq!(e.field, "policy.kind");
        assert!(e.to_string().contains("needs a slow tier"));
    }
}
