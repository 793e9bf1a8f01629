//! `damon`: Linux's data access monitor (DAMON, `mm/damon/`) with two DAMOS schemes that
//! tier memory, as the kernel's sample module `samples/damon/mtier.c` configures them: a
//! `migrate_hot` scheme promoting the slow tier's hot regions to the fast tier and a
//! `migrate_cold` scheme demoting the fast tier's cold regions to the slow tier
//! (`Documentation/mm/damon/design.rst`, "Operation Action").
//!
//! - **Regions.** The address space is cut into regions (at first `min_nr_regions` equal
//!   ones). Every `sample_interval_us` the monitor (one kernel thread, kdamond, here a
//!   daemon on a processor of its own) tests one random page of each region, chosen and
//!   its Accessed bits cleared at the previous sample (`prepare_access_checks`), and
//!   counts the region's `nr_accesses` when the page was accessed (`mm/damon/core.c`,
//!   `kdamond_fn`; `damon_update_region_access_rate`).
//! - **Aggregation.** Every `aggr_interval_us`: adjacent regions whose counts differ by
//!   at most a tenth of the highest count merge (size-weighted counts and ages) while the
//!   merged size stays within the space over `min_nr_regions`; the threshold doubles
//!   while more than `max_nr_regions` remain (`kdamond_merge_regions`). A region's age
//!   grows while its count stays within the threshold of the last aggregation's, else
//!   drops to 0. The schemes apply (below), the counts are reset, and while there are at
//!   most `max_nr_regions / 2` regions each is split in two (three when the number of
//!   regions did not change since the last split and is below a third of the maximum)
//!   at random points 10-90 % of its size (`kdamond_split_regions`).
//! - **Schemes.** Every `apply_interval_ms`, at an aggregation, `migrate_cold` moves the
//!   fast-tier pages of the regions with at most `cold_max_accesses` accesses and an age
//!   of at least `cold_min_age` to the slow tier, and `migrate_hot` the slow-tier pages
//!   of the regions with at least `hot_min_accesses` to the fast tier; a region acted on
//!   has its age reset (`damos_apply_scheme`).
//! - **Quotas.** Each scheme moves at most an effective quota of bytes per
//!   `quota_reset_ms` window: the least of `quota_mb`, the throughput so far times
//!   `quota_ms`, and the size the goal tunes (`damos_set_effective_quota`). The goals
//!   are mtier.c's: the fast tier `promote_goal_used_bp` used for promotion and
//!   `demote_goal_free_bp` free for demotion, the quota fed back once per window as
//!   `next = last x (1 + (goal - current) / goal)`, from one byte, and at least one
//!   byte (`damon_feed_loop_next_input`). Within the quota, the regions of the highest
//!   score go first: a histogram of the eligible bytes by score sets the lowest score
//!   that still fits (`damos_adjust_quota`); the score weighs the access count and the
//!   age (`damon_hot_score`, its complement for cold).
//!
//! The monitored space: the program's virtual pages (DAMON's `vaddr` operations), not
//! each node's physical range as mtier.c's `paddr` contexts do. The mechanism here
//! exposes pages, not frames; a region of pages keeps its access history when its pages
//! move, as a `paddr` region does not, and a scheme acting on the pages of its source
//! tier within a region acts on what that tier's `paddr` region would hold. Each scheme
//! is charged for the pages of its source tier that it tries to move, as the kernel
//! charges a `paddr` region's size. With several fast nodes, a promoted page goes to the
//! nearest fast node with a free frame, and the goals are the fast tier's as a whole
//! (mtier.c names node 0).
//!
//! Not modelled: the adaptive tuning of the intervals (`intervals_goal`), the schemes'
//! `young` page filters, watermarks (mtier.c sets none: the schemes are always active),
//! splitting a region where its quota runs out (the walk stops at the page instead),
//! the quota's resumption point for the next window (each walk starts at the lowest
//! address), the monitor's bookkeeping time beyond its page-table checks, the update of
//! the monitored ranges (`ops_update_interval`: the address space here does not change),
//! and the pseudo moving sum of accesses (`nr_accesses_bp`).

use super::tiers::{demotion_targets, slow_tier};
use super::{StaticConfig, StaticPolicy};
use crate::component::{DaemonNext, DaemonPlacement, DaemonSpec, Policy};
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::history::HistoryMode;
use crate::machine::Machine;
use crate::mm::Mm;
use crate::stats::Counter;
use crate::tune::{Dim, Scale, Value};
use crate::types::{NodeId, NodeSet, Ns, Vpn};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// Parameters of `damon`. The monitor's defaults are the kernel's (`mm/damon/core.c`
/// `damon_new_ctx`, and `mm/damon/sysfs.c`); the schemes' follow
/// `samples/damon/mtier.c` unless said otherwise.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct DamonConfig {
    /// The sampling interval (us). Default 5000 (`damon_new_ctx`; sysfs
    /// `damon_sysfs_intervals_alloc(5000, 100000, 60000000)`).
    #[field(min = 1, max = 86_400_000_000u64, unit = "us")]
    pub sample_interval_us: u64,
    /// The aggregation interval (us), a multiple of samples (rounded down, at least
    /// one). Default 100000 (same sources).
    #[field(min = 1, max = 86_400_000_000u64, unit = "us")]
    pub aggr_interval_us: u64,
    /// The fewest regions. Default 10 (`damon_new_ctx`; sysfs
    /// `damon_sysfs_ul_range_alloc(10, 1000)`); `damon_set_attrs` refuses fewer than 3.
    #[field(min = 3, max = 1_000_000)]
    pub min_nr_regions: u32,
    /// The most regions. Default 1000 (same sources).
    #[field(min = 3, max = 1_000_000)]
    pub max_nr_regions: u32,
    /// How often the schemes apply (ms), at the first aggregation due; 0: at every
    /// aggregation (the kernel's default for a scheme). Default 1000: mtier.c's apply
    /// interval (`damon_sample_mtier_build_ctx`, "apply interval (1s)").
    #[field(min = 0, max = 86_400_000, unit = "ms")]
    pub apply_interval_ms: u64,
    /// Accesses in an aggregation from which a region is hot for `migrate_hot`. Default
    /// 1: mtier.c's promotion pattern (`min_nr_accesses = 1`).
    #[field(min = 0, max = 1_000_000)]
    pub hot_min_accesses: u32,
    /// Accesses in an aggregation up to which a region is cold for `migrate_cold`.
    /// Default 0: mtier.c's demotion pattern (`max_nr_accesses = 0`).
    #[field(min = 0, max = 1_000_000)]
    pub cold_max_accesses: u32,
    /// Aggregations a region must have aged to be cold for `migrate_cold`. Default 0:
    /// mtier.c's `min_age_region`.
    #[field(min = 0, max = 1_000_000_000)]
    pub cold_min_age: u32,
    /// Each scheme's size quota per window (MiB); 0: none. Default 200: mtier.c's
    /// quota `sz` ("200 MiB per sec by most").
    #[field(min = 0, max = 1_048_576, unit = "MiB")]
    pub quota_mb: u64,
    /// Each scheme's time quota per window (ms), turned into bytes by the throughput of
    /// its moves so far (`damos_set_effective_quota`); 0: none. Default 0 (mtier.c sets
    /// none; DAMON_RECLAIM sets 10).
    #[field(min = 0, max = 86_400_000, unit = "ms")]
    pub quota_ms: u64,
    /// The quota's window (ms). Default 1000: mtier.c's
    /// `reset_interval` (DAMON_RECLAIM uses 1 s as well, `mm/damon/reclaim.c`).
    #[field(min = 1, max = 86_400_000, unit = "ms")]
    pub quota_reset_ms: u64,
    /// The score's weight of the access count. Default 100: mtier.c's
    /// `weight_nr_accesses` (its `weight_sz` is 0: size does not count).
    #[field(min = 0, max = 10_000)]
    pub weight_nr_accesses: u32,
    /// The score's weight of the age. Default 100: mtier.c's `weight_age`.
    #[field(min = 0, max = 10_000)]
    pub weight_age: u32,
    /// The promotion goal: the fast tier's used memory (basis points); 0: no goal.
    /// Default 9970, 99.7 % (mtier.c `node0_mem_used_bp`).
    #[field(min = 0, max = 10_000)]
    pub promote_goal_used_bp: u64,
    /// The demotion goal: the fast tier's free memory (basis points); 0: no goal.
    /// Default 50, 0.5 % (mtier.c `node0_mem_free_bp`).
    #[field(min = 0, max = 10_000)]
    pub demote_goal_free_bp: u64,
    /// Initial placement (default: first touch, fast tier first).
    #[field(nested)]
    pub initial: StaticConfig,
}

impl Default for DamonConfig {
    fn default() -> Self {
        DamonConfig {
            sample_interval_us: 5000,
            aggr_interval_us: 100_000,
            min_nr_regions: 10,
            max_nr_regions: 1000,
            apply_interval_ms: 1000,
            hot_min_accesses: 1,
            cold_max_accesses: 0,
            cold_min_age: 0,
            quota_mb: 200,
            quota_ms: 0,
            quota_reset_ms: 1000,
            weight_nr_accesses: 100,
            weight_age: 100,
            promote_goal_used_bp: 9970,
            demote_goal_free_bp: 50,
            initial: StaticConfig::default(),
        }
    }
}

impl crate::registry::Describe for DamonConfig {
    const KIND: &'static str = "damon";
    const DESCRIPTION: &'static str = "DAMON: sampled regions split and merged, DAMOS migrate_hot/migrate_cold schemes with goal-tuned quotas (Linux mm/damon, samples/damon/mtier.c)";
}

/// The search space `tune` explores.
pub const SEARCH_SPACE: [Dim; 5] = [
    Dim {
        field: "aggr_interval_us",
        lo: 20_000.0,
        hi: 2_000_000.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "20 ms .. 2 s on a log scale around mtier.c's 100 ms (its interval tuning, not modelled, keeps sampling within 5 ms .. 10 s; the range a choice)",
    },
    Dim {
        field: "apply_interval_ms",
        lo: 100.0,
        hi: 10_000.0,
        integer: true,
        scale: Scale::Log,
        specials: &[Value::Int(0)],
        source: "100 ms .. 10 s on a log scale around mtier.c's 1 s, or 0 (every aggregation, the kernel's default)",
    },
    Dim {
        field: "quota_mb",
        lo: 16.0,
        hi: 16_384.0,
        integer: true,
        scale: Scale::Log,
        specials: &[Value::Int(0)],
        source: "16 MiB .. 16 GiB per window on a log scale around mtier.c's 200 MiB, or 0 (no size quota)",
    },
    Dim {
        field: "cold_min_age",
        lo: 0.0,
        hi: 1200.0,
        integer: true,
        scale: Scale::Linear,
        specials: &[],
        source: "0 .. 1200 aggregations (mtier.c's 0; DAMON_RECLAIM's 120 s is 1200 of 100 ms)",
    },
    Dim {
        field: "promote_goal_used_bp",
        lo: 9000.0,
        hi: 10_000.0,
        integer: true,
        scale: Scale::Linear,
        specials: &[Value::Int(0)],
        source: "90 % .. 100 % of the fast tier around mtier.c's 99.7 %, or 0 (no goal: the fixed quota)",
    },
];

impl crate::component::PolicyParams for DamonConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn Policy>, ConfigError> {
        Ok(Box::new(Damon::new(self.clone(), machine)?))
    }
    const SEARCH_SPACE: &'static [Dim] = &SEARCH_SPACE;
}

inventory::submit!(crate::component::PolicyEntry::of::<DamonConfig>());

/// The highest sub-score of the access count and of the age (`DAMON_MAX_SUBSCORE`).
const MAX_SUBSCORE: u64 = 100;
/// The age's sub-score is over its log2 in seconds, at most this (`DAMON_MAX_AGE_IN_LOG`).
const MAX_AGE_IN_LOG: i64 = 32;
/// The highest scheme score (`DAMOS_MAX_SCORE`).
const MAX_SCORE: usize = 99;
/// The feedback loop's goal and its smallest input (`damon_feed_loop_next_input`).
const FEED_GOAL: u64 = 10_000;

/// A monitoring region: pages `start .. end`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Region {
    start: u32,
    end: u32,
    nr_accesses: u32,
    last_nr_accesses: u32,
    age: u32,
    /// The page to test at the next sample (its Accessed bits cleared at this one).
    sampling: u32,
}

impl Region {
    fn len(&self) -> u64 {
        (self.end - self.start) as u64
    }
}

/// A scheme's quota state (`struct damos_quota`).
#[derive(Clone, Copy, Debug, Default)]
struct Quota {
    /// The effective size of this window (bytes).
    esz: u64,
    /// The goal-tuned size in 1/10000 bytes (`esz_bp`).
    esz_bp: u64,
    /// Bytes charged in this window.
    charged: u64,
    /// When this window began (`None`: no window yet).
    charged_from: Option<Ns>,
    /// Bytes and time charged in the windows before.
    total_bytes: u64,
    total_ns: u64,
    /// The lowest score acted on in this window.
    min_score: usize,
}

/// The two schemes.
const COLD: usize = 0;
const HOT: usize = 1;

/// The policy.
#[derive(Debug)]
pub struct Damon {
    config: DamonConfig,
    initial: StaticPolicy,
    slow: NodeSet,
    fast: Vec<NodeId>,
    /// Per node: its demotion target (fast nodes only).
    demote_to: Vec<Option<NodeId>>,
    /// Per slow node: the fast nodes, nearest first.
    promote_to: Vec<Vec<NodeId>>,
    page_bytes: u64,
    /// Samples in an aggregation (`damon_max_nr_accesses`).
    samples_per_aggr: u32,
    /// Aggregations between scheme applications.
    aggrs_per_apply: u64,
    regions: Vec<Region>,
    /// The split's output, swapped with `regions` (reused).
    spare: Vec<Region>,
    /// Whether the sampled pages of the regions were prepared.
    prepared: bool,
    samples: u32,
    /// Regions at the last split (`last_nr_regions`).
    last_split_regions: usize,
    /// The size limit of a merged region (pages).
    sz_limit: u64,
    quotas: [Quota; 2],
    checks: u64,
    aggregations: u64,
    regions_sum: u64,
    applications: u64,
    promoted: u64,
    demoted: u64,
    no_room: u64,
    quota_limited: u64,
}

impl Damon {
    /// The policy for `machine`.
    pub fn new(config: DamonConfig, machine: &Machine) -> Result<Damon, ConfigError> {
        config.check_ranges("policy")?;
        if config.max_nr_regions < config.min_nr_regions {
            return Err(ConfigError::new(
                "policy.max_nr_regions",
                format!(
                    "max_nr_regions {} is below min_nr_regions {}",
                    config.max_nr_regions, config.min_nr_regions
                ),
            ));
        }
        if config.aggr_interval_us < config.sample_interval_us {
            return Err(ConfigError::new(
                "policy.aggr_interval_us",
                format!(
                    "aggr_interval_us {} is shorter than sample_interval_us {}",
                    config.aggr_interval_us, config.sample_interval_us
                ),
            ));
        }
        let slow = slow_tier(
            machine,
            "DAMON's tiering, which moves pages between two tiers,",
        )?;
        let initial = StaticPolicy::initial(config.initial.clone(), machine)?;
        let demote_to = demotion_targets(machine, slow);
        let fast: Vec<NodeId> = (0..machine.nodes() as u16)
            .map(NodeId)
            .filter(|&n| !slow.contains(n))
            .collect();
        let promote_to = (0..machine.nodes() as u16)
            .map(|s| {
                let mut to = if slow.contains(NodeId(s)) {
                    fast.clone()
                } else {
                    Vec::new()
                };
                to.sort_by_key(|&f| (machine.read_ns(f, NodeId(s)), f.0));
                to
            })
            .collect();
        let samples_per_aggr = (config.aggr_interval_us / config.sample_interval_us).max(1) as u32;
        let aggr_ms = (config.aggr_interval_us / 1000).max(1);
        let aggrs_per_apply = (config.apply_interval_ms / aggr_ms).max(1);
        Ok(Damon {
            initial,
            slow,
            fast,
            demote_to,
            promote_to,
            page_bytes: machine.page_size(),
            samples_per_aggr,
            aggrs_per_apply,
            regions: Vec::new(),
            spare: Vec::new(),
            prepared: false,
            samples: 0,
            last_split_regions: 0,
            sz_limit: 1,
            quotas: [Quota::default(); 2],
            checks: 0,
            aggregations: 0,
            regions_sum: 0,
            applications: 0,
            promoted: 0,
            demoted: 0,
            no_room: 0,
            quota_limited: 0,
            config,
        })
    }

    /// One sample: the page prepared in each region tested, then a new page of each
    /// region chosen and its Accessed bits cleared; every `samples_per_aggr` samples an
    /// aggregation between the two.
    fn sample(&mut self, ctx: &mut dyn Mm) {
        if self.prepared {
            let mut max_nr = 0;
            for r in &mut self.regions {
                self.checks += 1;
                if ctx.test_and_clear_accessed(Vpn(r.sampling)) {
                    r.nr_accesses += 1;
                }
                max_nr = max_nr.max(r.nr_accesses);
            }
            self.samples += 1;
            if self.samples >= self.samples_per_aggr {
                self.samples = 0;
                self.aggregate(ctx, max_nr);
            }
        }
        for r in &mut self.regions {
            r.sampling = ctx.rng().gen_range(r.start..r.end);
            let _ = ctx.test_and_clear_accessed(Vpn(r.sampling));
        }
        self.prepared = !self.regions.is_empty();
    }

    /// The aggregation: ages, merges, the schemes when due, the counts reset, splits.
    fn aggregate(&mut self, ctx: &mut dyn Mm, max_nr: u32) {
        self.aggregations += 1;
        let thres = max_nr / 10;
        for r in &mut self.regions {
            if r.nr_accesses.abs_diff(r.last_nr_accesses) > thres {
                r.age = 0;
            } else {
                r.age = r.age.saturating_add(1);
            }
        }
        let mut t = thres;
        loop {
            self.merge(t);
            t = (t * 2).max(1);
            if self.regions.len() <= self.config.max_nr_regions as usize
                || t / 2 >= self.samples_per_aggr
            {
                break;
            }
        }
        if self.aggregations.is_multiple_of(self.aggrs_per_apply) {
            self.applications += 1;
            self.apply(ctx, COLD);
            self.apply(ctx, HOT);
        }
        for r in &mut self.regions {
            r.last_nr_accesses = r.nr_accesses;
            r.nr_accesses = 0;
        }
        self.split(ctx);
        self.regions_sum += self.regions.len() as u64;
    }

    /// Merges adjacent regions whose counts differ by at most `thres`, within the size
    /// limit (`damon_merge_regions_of`): counts and ages weighted by size.
    fn merge(&mut self, thres: u32) {
        let mut w = 0;
        for i in 0..self.regions.len() {
            let r = self.regions[i];
            if w > 0 {
                let p = &mut self.regions[w - 1];
                if p.end == r.start
                    && p.nr_accesses.abs_diff(r.nr_accesses) <= thres
                    && p.len() + r.len() <= self.sz_limit
                {
                    let (lp, lr) = (p.len(), r.len());
                    let avg = |a: u32, b: u32| ((a as u64 * lp + b as u64 * lr) / (lp + lr)) as u32;
                    p.nr_accesses = avg(p.nr_accesses, r.nr_accesses);
                    p.age = avg(p.age, r.age);
                    p.end = r.end;
                    continue;
                }
            }
            self.regions[w] = r;
            w += 1;
        }
        self.regions.truncate(w);
    }

    /// Splits every region in two or three at random points 10-90 % of its size while
    /// the regions are at most half the maximum (`kdamond_split_regions`).
    fn split(&mut self, ctx: &mut dyn Mm) {
        let n = self.regions.len();
        let max = self.config.max_nr_regions as usize;
        if n > max / 2 {
            return;
        }
        let subs = if self.last_split_regions == n && n < max / 3 {
            3
        } else {
            2
        };
        self.spare.clear();
        for &r in &self.regions {
            // The left part is split again; its right parts follow it in address order.
            let mut rights = [Region::default(); 2];
            let mut nright = 0;
            let mut left = r;
            for _ in 0..subs - 1 {
                let sz = left.len();
                if sz <= 2 {
                    break;
                }
                let sub = ctx.rng().gen_range(1..10u64) * sz / 10;
                if sub == 0 || sub >= sz {
                    continue;
                }
                let cut = left.start + sub as u32;
                rights[nright] = Region { start: cut, ..left };
                nright += 1;
                left.end = cut;
            }
            self.spare.push(left);
            for k in (0..nright).rev() {
                self.spare.push(rights[k]);
            }
        }
        std::mem::swap(&mut self.regions, &mut self.spare);
        self.last_split_regions = n;
    }

    /// A region's hotness in `0 ..= MAX_SCORE` (`damon_hot_score`).
    fn hot_score(&self, r: &Region) -> usize {
        let freq = r.nr_accesses as u64 * MAX_SUBSCORE / self.samples_per_aggr as u64;
        let mut age_s = r.age as u64 * self.config.aggr_interval_us / 1_000_000;
        let mut age_log: i64 = 0;
        while age_log < MAX_AGE_IN_LOG && age_s > 0 {
            age_log += 1;
            age_s >>= 1;
        }
        if freq == 0 {
            age_log = -age_log;
        }
        let age = ((age_log + MAX_AGE_IN_LOG) as u64) * MAX_SUBSCORE / MAX_AGE_IN_LOG as u64 / 2;
        let (wf, wa) = (
            self.config.weight_nr_accesses as u64,
            self.config.weight_age as u64,
        );
        let sum = wf * freq + wa * age;
        let hot = sum.checked_div(wf + wa).unwrap_or(sum);
        (hot * MAX_SCORE as u64 / MAX_SUBSCORE).min(MAX_SCORE as u64) as usize
    }

    fn score(&self, r: &Region, s: usize) -> usize {
        match s {
            HOT => self.hot_score(r),
            _ => MAX_SCORE - self.hot_score(r),
        }
    }

    /// Whether region `r` matches scheme `s`'s access pattern (`__damos_valid_target`).
    fn eligible(&self, r: &Region, s: usize) -> bool {
        match s {
            HOT => r.nr_accesses >= self.config.hot_min_accesses,
            _ => {
                r.nr_accesses <= self.config.cold_max_accesses && r.age >= self.config.cold_min_age
            }
        }
    }

    /// Whether page `v` is on scheme `s`'s source tier.
    fn on_source(&self, ctx: &dyn Mm, v: Vpn, s: usize) -> bool {
        ctx.copy_count(v) == 1 && self.slow.contains(ctx.home(v)) == (s == HOT)
    }

    /// The goal's score in basis points of the goal (`damos_quota_score`), if any.
    fn goal_score(&self, ctx: &dyn Mm, s: usize) -> Option<u64> {
        let (frames, free) = self.fast.iter().fold((0u64, 0u64), |(t, f), &n| {
            (
                t + ctx.machine().frames(n) as u64,
                f + ctx.free_frames(n) as u64,
            )
        });
        let total = frames.max(1);
        let (target, current) = match s {
            HOT => (
                self.config.promote_goal_used_bp,
                (frames - free) * 10_000 / total,
            ),
            _ => (self.config.demote_goal_free_bp, free * 10_000 / total),
        };
        (target > 0).then(|| current * 10_000 / target)
    }

    /// Whether scheme `s` has a quota at all.
    fn limited(&self, s: usize) -> bool {
        let goal = match s {
            HOT => self.config.promote_goal_used_bp,
            _ => self.config.demote_goal_free_bp,
        };
        self.config.quota_mb > 0 || self.config.quota_ms > 0 || goal > 0
    }

    /// The window's effective quota (`damos_set_effective_quota`).
    fn set_effective_quota(&mut self, ctx: &dyn Mm, s: usize) {
        let score = self.goal_score(ctx, s);
        let q = &mut self.quotas[s];
        let mut esz = u64::MAX;
        if let Some(score) = score {
            q.esz_bp = feed_loop_next(q.esz_bp.max(FEED_GOAL), score);
            esz = q.esz_bp / 10_000;
        }
        if self.config.quota_ms > 0 {
            // Bytes per ms moved so far, or a first guess of 1024 pages per ms.
            let throughput = q
                .total_bytes
                .saturating_mul(1_000_000)
                .checked_div(q.total_ns)
                .unwrap_or(self.page_bytes * 1024);
            esz = esz.min(throughput.saturating_mul(self.config.quota_ms));
        }
        if self.config.quota_mb > 0 {
            esz = esz.min(self.config.quota_mb << 20);
        }
        q.esz = esz;
    }

    /// Scheme `s`'s quota window and score threshold (`damos_adjust_quota`).
    fn adjust_quota(&mut self, ctx: &dyn Mm, s: usize) {
        let now = ctx.now();
        let reset = Ns(self.config.quota_reset_ms * 1_000_000);
        match self.quotas[s].charged_from {
            None => {
                self.quotas[s].charged_from = Some(now);
                self.set_effective_quota(ctx, s);
            }
            Some(from) if now >= from + reset => {
                let q = &mut self.quotas[s];
                q.total_bytes += q.charged;
                q.charged = 0;
                q.charged_from = Some(now);
                self.set_effective_quota(ctx, s);
            }
            Some(_) => {}
        }
        let mut histogram = [0u64; MAX_SCORE + 1];
        let mut max_score = 0;
        for r in &self.regions {
            if !self.eligible(r, s) {
                continue;
            }
            let bytes = (r.start..r.end)
                .filter(|&v| self.on_source(ctx, Vpn(v), s))
                .count() as u64
                * self.page_bytes;
            let score = self.score(r, s);
            histogram[score] += bytes;
            max_score = max_score.max(score);
        }
        let esz = self.quotas[s].esz;
        let mut score = max_score;
        let mut cumulated = 0u64;
        loop {
            cumulated += histogram[score];
            if cumulated >= esz || score == 0 {
                break;
            }
            score -= 1;
        }
        self.quotas[s].min_score = score;
    }

    /// Applies scheme `s` to the eligible regions, lowest address first, within its
    /// quota.
    fn apply(&mut self, ctx: &mut dyn Mm, s: usize) {
        let limited = self.limited(s);
        if limited {
            self.adjust_quota(&*ctx, s);
        }
        let start_cost = ctx.cost();
        'regions: for i in 0..self.regions.len() {
            let r = self.regions[i];
            if !self.eligible(&r, s) || (limited && self.score(&r, s) < self.quotas[s].min_score) {
                continue;
            }
            let mut acted = false;
            for v in r.start..r.end {
                let vpn = Vpn(v);
                if !self.on_source(&*ctx, vpn, s) {
                    continue;
                }
                let q = &mut self.quotas[s];
                if limited && q.charged.saturating_add(self.page_bytes) > q.esz {
                    self.quota_limited += 1;
                    if acted {
                        self.regions[i].age = 0;
                    }
                    break 'regions;
                }
                q.charged += self.page_bytes;
                acted = true;
                let home = ctx.home(vpn);
                let to = match s {
                    HOT => self.promote_to[home.idx()]
                        .iter()
                        .copied()
                        .find(|&n| ctx.free_frames(n) > 0),
                    _ => self.demote_to[home.idx()].filter(|&n| ctx.free_frames(n) > 0),
                };
                match to.map(|to| ctx.migrate(vpn, to)) {
                    Some(Ok(())) => {
                        if s == HOT {
                            self.promoted += 1;
                        } else {
                            self.demoted += 1;
                        }
                    }
                    _ => self.no_room += 1,
                }
            }
            if acted {
                self.regions[i].age = 0;
            }
        }
        self.quotas[s].total_ns += (ctx.cost() - start_cost).0;
    }
}

/// The next input of DAMON's feedback loop (`damon_feed_loop_next_input`): `last`
/// scaled by how far `score` (in basis points of the goal) is below or above the goal,
/// at least the loop's smallest input; at twice the goal or more, that smallest input.
fn feed_loop_next(last: u64, score: u64) -> u64 {
    if score == FEED_GOAL {
        return last;
    }
    if score >= 2 * FEED_GOAL {
        return FEED_GOAL;
    }
    let over = score > FEED_GOAL;
    let diff = score.abs_diff(FEED_GOAL);
    let compensation = if last < u64::MAX / diff {
        last * diff / FEED_GOAL
    } else {
        last / FEED_GOAL * diff
    };
    if over {
        last.saturating_sub(compensation).max(FEED_GOAL)
    } else {
        last.saturating_add(compensation)
    }
}

impl Policy for Damon {
    fn name(&self) -> &'static str {
        "damon"
    }

    fn history(&self) -> HistoryMode {
        HistoryMode::RefBit
    }

    fn replicates(&self) -> bool {
        false
    }

    fn state_bytes_per_page(&self) -> u64 {
        // The regions are at most `max_nr_regions`, not per page.
        0
    }

    fn init(&mut self, ctx: &mut dyn Mm) {
        let pages = ctx.npages() as u64;
        let n = (self.config.min_nr_regions as u64).min(pages);
        self.regions.clear();
        for i in 0..n {
            self.regions.push(Region {
                start: (pages * i / n) as u32,
                end: (pages * (i + 1) / n) as u32,
                ..Region::default()
            });
        }
        self.regions
            .reserve(self.config.max_nr_regions as usize * 3);
        self.spare.reserve(self.config.max_nr_regions as usize * 3);
        self.sz_limit = (pages / self.config.min_nr_regions as u64).max(1);
    }

    fn initial_placement(
        &mut self,
        machine: &Machine,
        vpn: Vpn,
        hint: Option<NodeId>,
    ) -> Option<NodeId> {
        self.initial.initial_placement(machine, vpn, hint)
    }

    fn daemons(&self, _machine: &Machine) -> Vec<DaemonSpec> {
        vec![DaemonSpec {
            name: "kdamond".into(),
            placement: DaemonPlacement::OwnProcessor,
            first_wake: Ns(self.config.sample_interval_us * 1000),
        }]
    }

    fn on_daemon(&mut self, ctx: &mut dyn Mm, _id: usize) -> DaemonNext {
        self.sample(ctx);
        ctx.count_daemon_pass();
        DaemonNext::After(Ns(self.config.sample_interval_us * 1000))
    }

    fn counters(&self) -> Vec<Counter> {
        let c = |name, label, value| Counter { name, label, value };
        vec![
            c("damon_checks", "access checks", self.checks),
            c("damon_aggregations", "aggregations", self.aggregations),
            c(
                "damon_regions_final",
                "regions at the end",
                self.regions.len() as u64,
            ),
            c(
                "damon_regions_mean",
                "regions per aggregation (mean)",
                self.regions_sum.checked_div(self.aggregations).unwrap_or(0),
            ),
            c(
                "damon_applications",
                "scheme applications",
                self.applications,
            ),
            c(
                "damon_promoted_bytes",
                "bytes promoted",
                self.promoted * self.page_bytes,
            ),
            c(
                "damon_demoted_bytes",
                "bytes demoted",
                self.demoted * self.page_bytes,
            ),
            c("damon_no_room", "moves without a free frame", self.no_room),
            c(
                "damon_quota_limited",
                "scheme applications cut by the quota",
                self.quota_limited,
            ),
            c(
                "damon_hot_quota_bytes",
                "migrate_hot's last effective quota (bytes)",
                self.quotas[HOT].esz,
            ),
            c(
                "damon_cold_quota_bytes",
                "migrate_cold's last effective quota (bytes)",
                self.quotas[COLD].esz,
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineConfig;
    use crate::mm::{test_machine_config, Action, Recording};
    use crate::policy::test_scene::{two_tiers, Tiers};

    const MIB: u64 = 1 << 20;

    /// A fast node 0 of `fast` frames and a slow memory-only node 1 of 64, pages of
    /// 1 MiB; `npages` pages, the first `on_fast` on node 0 and the rest on node 1.
    fn scene(config: DamonConfig, fast: u32, npages: u32, on_fast: u32) -> (Damon, Recording) {
        // Pages beyond the slow node's 64 frames stay unplaced.
        let tiers = Tiers {
            fast,
            slow: 64,
            page_bytes: Some(MIB),
        };
        two_tiers(tiers, npages, on_fast, HistoryMode::RefBit, |m| {
            Damon::new(config, m).unwrap()
        })
    }

    /// The defaults without quotas or goals: every eligible page moves.
    fn unlimited() -> DamonConfig {
        DamonConfig {
            quota_mb: 0,
            promote_goal_used_bp: 0,
            demote_goal_free_bp: 0,
            ..DamonConfig::default()
        }
    }

    fn region(start: u32, end: u32, nr_accesses: u32, age: u32) -> Region {
        Region {
            start,
            end,
            nr_accesses,
            last_nr_accesses: nr_accesses,
            age,
            sampling: start,
        }
    }

    fn tests(rec: &Recording) -> usize {
        rec.actions()
            .iter()
            .filter(|a| matches!(a, Action::TestAccessed(_)))
            .count()
    }

    #[test]
    fn asks_for_accessed_bits() {
        let (p, _) = scene(unlimited(), 32, 40, 20);
        assert_eq!(p.history(), HistoryMode::RefBit);
    }

    #[test]
    fn monitoring_starts_with_the_fewest_regions_of_equal_size() {
        let (p, _) = scene(unlimited(), 32, 40, 20);
        assert_eq!(p.regions.len(), 10);
        assert!(p.regions.iter().all(|r| r.len() == 4));
        assert_eq!((p.regions[0].start, p.regions[9].end), (0, 40));
    }

    #[test]
    fn the_first_step_only_prepares_one_page_per_region() {
        let (mut p, mut rec) = scene(unlimited(), 32, 40, 20);
        p.on_daemon(&mut rec, 0);
        assert_eq!((tests(&rec), p.checks), (10, 0));
        assert!(p
            .regions
            .iter()
            .all(|r| (r.start..r.end).contains(&r.sampling)));
    }

    #[test]
    fn each_sample_checks_one_page_per_region_and_prepares_the_next() {
        let (mut p, mut rec) = scene(unlimited(), 32, 40, 20);
        p.on_daemon(&mut rec, 0);
        rec.clear();
        p.on_daemon(&mut rec, 0);
        assert_eq!((tests(&rec), p.checks), (20, 10));
    }

    #[test]
    fn a_check_is_charged_as_a_page_table_examination() {
        let (mut p, mut rec) = scene(unlimited(), 32, 40, 20);
        p.on_daemon(&mut rec, 0);
        // Ten tests of pages mapped on one node, 3 ns each (the test machine's).
        assert_eq!(rec.cost(), Ns(30));
    }

    #[test]
    fn an_accessed_sampled_page_counts_an_access_of_its_region() {
        let (mut p, mut rec) = scene(unlimited(), 32, 40, 20);
        p.on_daemon(&mut rec, 0);
        let sampled = p.regions[3].sampling;
        rec.history_mut().record(Vpn(sampled), NodeId(0), 1);
        p.on_daemon(&mut rec, 0);
        let counts: Vec<u32> = p.regions.iter().map(|r| r.nr_accesses).collect();
        assert_eq!(counts, [0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn adjacent_regions_of_close_counts_merge_with_weighted_counts() {
        let (mut p, _) = scene(unlimited(), 32, 40, 20);
        p.regions = vec![region(0, 3, 4, 2), region(3, 4, 0, 6), region(4, 8, 9, 0)];
        p.merge(4);
        // 4 and 0 differ by 4: merged, (4x3 + 0x1)/4 = 3, age (2x3 + 6)/4 = 3 (the last
        // count the left one's); 9 stays.
        let merged = Region {
            nr_accesses: 3,
            ..region(0, 4, 4, 3)
        };
        assert_eq!(p.regions, [merged, region(4, 8, 9, 0)]);
    }

    #[test]
    fn regions_merge_no_larger_than_the_space_over_the_fewest_regions() {
        let (mut p, _) = scene(unlimited(), 32, 40, 20);
        // The limit is 40 / 10 = 4 pages.
        p.regions = vec![region(0, 3, 1, 0), region(3, 5, 1, 0), region(5, 6, 1, 0)];
        p.merge(0);
        let bounds: Vec<(u32, u32)> = p.regions.iter().map(|r| (r.start, r.end)).collect();
        assert_eq!(bounds, [(0, 3), (3, 6)]);
    }

    #[test]
    fn a_region_ages_while_its_count_holds_and_is_young_again_when_it_changes() {
        let (mut p, mut rec) = scene(
            DamonConfig {
                min_nr_regions: 3,
                max_nr_regions: 3,
                ..unlimited()
            },
            32,
            40,
            20,
        );
        // No merge (counts far apart), no split (above half the maximum).
        p.regions = vec![region(0, 4, 0, 5), region(4, 8, 20, 5), region(8, 12, 0, 5)];
        p.regions[1].last_nr_accesses = 0;
        p.aggregate(&mut rec, 20);
        let ages: Vec<u32> = p.regions.iter().map(|r| r.age).collect();
        assert_eq!(ages, [6, 0, 6]);
    }

    #[test]
    fn an_aggregation_resets_the_counts_and_keeps_them_as_the_last() {
        let (mut p, mut rec) = scene(
            DamonConfig {
                min_nr_regions: 3,
                max_nr_regions: 3,
                ..unlimited()
            },
            32,
            40,
            20,
        );
        p.regions = vec![region(0, 4, 0, 0), region(4, 8, 20, 0), region(8, 12, 0, 0)];
        p.aggregate(&mut rec, 20);
        let counts: Vec<(u32, u32)> = p
            .regions
            .iter()
            .map(|r| (r.nr_accesses, r.last_nr_accesses))
            .collect();
        assert_eq!(counts, [(0, 0), (0, 20), (0, 0)]);
    }

    #[test]
    fn every_region_splits_in_two_at_ten_to_ninety_percent() {
        let (mut p, mut rec) = scene(unlimited(), 32, 100, 20);
        p.split(&mut rec);
        assert_eq!(p.regions.len(), 20);
        for pair in p.regions.chunks(2) {
            assert_eq!(pair[0].end, pair[1].start);
            assert!((1..=9).contains(&pair[0].len()), "{pair:?}");
        }
    }

    #[test]
    fn regions_split_in_three_when_their_number_held_since_the_last_split() {
        let (mut p, mut rec) = scene(unlimited(), 32, 1000, 20);
        p.last_split_regions = 10;
        p.split(&mut rec);
        assert_eq!(p.regions.len(), 30);
        assert!(p.regions.windows(2).all(|w| w[0].end == w[1].start));
    }

    #[test]
    fn regions_above_half_the_maximum_do_not_split() {
        let (mut p, mut rec) = scene(
            DamonConfig {
                max_nr_regions: 19,
                ..unlimited()
            },
            32,
            40,
            20,
        );
        p.split(&mut rec);
        assert_eq!(p.regions.len(), 10);
    }

    #[test]
    fn migrate_hot_promotes_the_slow_pages_of_an_accessed_region() {
        let (mut p, mut rec) = scene(unlimited(), 32, 8, 4);
        p.regions = vec![region(0, 3, 5, 0), region(3, 6, 5, 0), region(6, 8, 0, 0)];
        p.apply(&mut rec, HOT);
        assert_eq!(
            rec.actions(),
            &[
                Action::Migrate(Vpn(4), NodeId(0)),
                Action::Migrate(Vpn(5), NodeId(0))
            ]
        );
        assert_eq!(p.regions[1].age, 0);
    }

    #[test]
    fn migrate_cold_demotes_the_fast_pages_of_an_unaccessed_region() {
        let (mut p, mut rec) = scene(unlimited(), 32, 8, 4);
        p.regions = vec![region(0, 2, 5, 0), region(2, 6, 0, 0), region(6, 8, 5, 0)];
        p.apply(&mut rec, COLD);
        assert_eq!(
            rec.actions(),
            &[
                Action::Migrate(Vpn(2), NodeId(1)),
                Action::Migrate(Vpn(3), NodeId(1))
            ]
        );
    }

    #[test]
    fn migrate_cold_waits_for_the_minimum_age() {
        let (mut p, mut rec) = scene(
            DamonConfig {
                cold_min_age: 3,
                ..unlimited()
            },
            32,
            8,
            4,
        );
        p.regions = vec![region(0, 2, 0, 2), region(2, 8, 0, 3)];
        p.apply(&mut rec, COLD);
        assert_eq!(
            rec.actions(),
            &[
                Action::Migrate(Vpn(2), NodeId(1)),
                Action::Migrate(Vpn(3), NodeId(1))
            ]
        );
    }

    #[test]
    fn a_promotion_without_a_free_fast_frame_is_counted_not_made() {
        let (mut p, mut rec) = scene(unlimited(), 4, 8, 4);
        p.regions = vec![region(0, 8, 5, 0)];
        p.apply(&mut rec, HOT);
        assert!(rec.actions().is_empty());
        assert_eq!(p.no_room, 4);
    }

    #[test]
    fn the_size_quota_caps_the_bytes_moved_in_a_window() {
        let (mut p, mut rec) = scene(
            DamonConfig {
                quota_mb: 2,
                ..unlimited()
            },
            32,
            8,
            4,
        );
        p.regions = vec![region(0, 8, 5, 0)];
        p.apply(&mut rec, HOT);
        assert_eq!(rec.actions().len(), 2);
        assert_eq!(p.quota_limited, 1);
        // The same window: nothing more.
        rec.clear();
        p.apply(&mut rec, HOT);
        assert!(rec.actions().is_empty());
    }

    #[test]
    fn a_new_window_renews_the_quota() {
        let (mut p, mut rec) = scene(
            DamonConfig {
                quota_mb: 2,
                ..unlimited()
            },
            32,
            8,
            4,
        );
        p.regions = vec![region(0, 8, 5, 0)];
        p.apply(&mut rec, HOT);
        rec.clear();
        rec.now = Ns(1_000_000_000);
        p.apply(&mut rec, HOT);
        assert_eq!(
            rec.actions(),
            &[
                Action::Migrate(Vpn(6), NodeId(0)),
                Action::Migrate(Vpn(7), NodeId(0))
            ]
        );
    }

    #[test]
    fn within_the_quota_the_hotter_region_goes_first() {
        let (mut p, mut rec) = scene(
            DamonConfig {
                quota_mb: 1,
                ..unlimited()
            },
            32,
            8,
            4,
        );
        p.regions = vec![region(0, 6, 2, 0), region(6, 8, 20, 0)];
        p.apply(&mut rec, HOT);
        assert_eq!(rec.actions(), &[Action::Migrate(Vpn(6), NodeId(0))]);
    }

    #[test]
    fn the_goal_tuned_quota_starts_at_one_byte() {
        let (mut p, mut rec) = scene(
            DamonConfig {
                quota_mb: 0,
                ..DamonConfig::default()
            },
            32,
            8,
            4,
        );
        p.regions = vec![region(0, 8, 5, 0)];
        p.apply(&mut rec, HOT);
        assert!(rec.actions().is_empty());
        // 4 of 32 frames used: score 1254 of 10000, so x 1.87: one byte becomes 1.
        assert_eq!(p.quotas[HOT].esz, 1);
    }

    #[test]
    fn the_feedback_loop_grows_below_the_goal_and_shrinks_above_it() {
        assert_eq!(feed_loop_next(10_000, 0), 20_000);
        assert_eq!(feed_loop_next(40_000, 5_000), 60_000);
        assert_eq!(feed_loop_next(40_000, 10_000), 40_000);
        assert_eq!(feed_loop_next(40_000, 15_000), 20_000);
        assert_eq!(feed_loop_next(40_000, 20_000), 10_000);
    }

    #[test]
    fn schemes_apply_once_per_apply_interval() {
        let (mut p, mut rec) = scene(unlimited(), 32, 40, 20);
        for _ in 0..9 {
            p.aggregate(&mut rec, 0);
        }
        assert_eq!(p.applications, 0);
        p.aggregate(&mut rec, 0);
        assert_eq!(p.applications, 1);
    }

    #[test]
    fn kdamond_runs_on_a_processor_of_its_own_every_sampling_interval() {
        let (mut p, mut rec) = scene(unlimited(), 32, 40, 20);
        let d = p.daemons(rec.machine());
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].placement, DaemonPlacement::OwnProcessor);
        assert_eq!(p.on_daemon(&mut rec, 0), DaemonNext::After(Ns(5_000_000)));
    }

    #[test]
    fn the_same_seed_gives_the_same_regions() {
        let run = || {
            let (mut p, mut rec) = scene(unlimited(), 32, 1000, 20);
            for _ in 0..100 {
                p.on_daemon(&mut rec, 0);
            }
            p.regions.clone()
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn a_machine_of_one_tier_is_refused() {
        let m = Machine::new(test_machine_config(2)).unwrap();
        let e = Damon::new(DamonConfig::default(), &m).unwrap_err();
        assert_eq!(e.field, "policy.kind");
        assert!(e.to_string().contains("needs a slow tier"), "{e}");
    }

    #[test]
    fn fewer_regions_at_most_than_at_least_are_refused_naming_the_field() {
        let m = Machine::new(MachineConfig {
            memory_only_nodes: 1,
            ..test_machine_config(2)
        })
        .unwrap();
        let config = DamonConfig {
            max_nr_regions: 5,
            ..DamonConfig::default()
        };
        assert_eq!(
            Damon::new(config, &m).unwrap_err().field,
            "policy.max_nr_regions"
        );
    }
}
