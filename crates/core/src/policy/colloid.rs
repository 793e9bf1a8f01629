//! `colloid`: Colloid (Vuppalapati and Agarwal, SOSP 2024) on HeMem, as its authors' code
//! was evaluated (the `sosp24ae` branch of their HeMem fork: `src/pebs.c`, `src/pebs.h`).
//! Colloid places pages so that the tiers' *loaded* access latencies are equal, rather
//! than so that the hottest pages sit in the fast tier: when the fast tier is loaded
//! until it is slower than the slow one, moving hot pages down is faster.
//!
//! - **Base.** HeMem's sampling, per-page counts, hot and cold lists and cooling are
//!   [`super::Hemem`]'s, with the thresholds of the Colloid artifact's HeMem; only the
//!   policy thread's round differs.
//! - **Latency of each tier.** Every `round_period_ms` the round reads each node's
//!   traffic and loaded latency from the bandwidth accounting ([`crate::mm::Mm::node_load`]):
//!   the bytes read since the last round (the arrivals, Colloid's TOR inserts) and the
//!   latency an access to the node sees now (the machine's unloaded read latency from the
//!   nearest fast node plus the latency its load adds). Per tier it keeps exponentially
//!   weighted averages of the arrivals and of the occupancy (arrivals times latency, by
//!   Little's law: Colloid's TOR occupancy); a tier's loaded latency is their ratio.
//!   These stand for the hardware counters because, like them, they see every access, not
//!   a sample: the sampled records' latencies are one access in `sample_period` and
//!   loads only.
//! - **The shift.** With p the fast tier's share of the arrivals, the share of accesses
//!   to move is Colloid's `COLLOID_EXPR3`:
//!   `delta_p = p (1 - p) |L_fast - L_slow| / (p L_slow + (1 - p) L_fast)` (the code's
//!   occupancy form, rewritten so that a tier without arrivals gives 0, where the code
//!   divides by zero and moves nothing). So pages all placed on the slow tier at the
//!   start stay there, as in the code, which ranks only allocated pages and never
//!   promotes into an empty fast tier.
//! - **The moves.** If `L_fast > L_slow` pages move from the fast tier to the slow one,
//!   else the other way. Every placed page's sampled count, over all pages' counts, is
//!   its access probability; the pages of each tier are sorted by it. Repeatedly, a
//!   two-pointer scan finds the pair (a page of the tier losing accesses, a page of the
//!   other) whose difference of probability is the largest not above what remains of
//!   `delta_p`; the two swap tiers and the difference is taken from what remains. A
//!   page without sampled accesses is not promoted, and one is not demoted while a fast
//!   frame is free. The round ends when no pair fits, or at its limit: the bytes moved
//!   reach `max_pages_per_round` pages, or (`dynamic_limit`) `delta_p` of the bytes read
//!   per round, whichever is less.
//! - **Equal latencies** (the code's "equal occupancy exit"): no move. On a machine
//!   without a loaded-latency model no load adds latency, the slow tier stays slower by
//!   its unloaded latency, and Colloid promotes, `delta_p` at a time: it does not act
//!   as HeMem, whose round promotes every hot slow page it can.
//!
//! Not modelled: Colloid on TPP (the authors' `colloid-mon` module and kernel mode bit)
//! is not built; the CHA's counters themselves (one box of 18, counting demand reads:
//! here every byte read, migration copies included); the alternatives in the code that
//! its evaluation left off (`COLLOID_EXPR1`/`EXPR2`, the binary search on p, a fixed
//! beta); the artifact's lazy cooling of every page by a global clock (HeMem's eager
//! halving of the hot lists stands for it); the time the round's scan and sort take on
//! its processor; and what [`super::Hemem`] does not model.

use super::hemem::{Hemem, HememConfig};
use super::tiers::slow_tier;
use super::StaticConfig;
use crate::component::{DaemonNext, DaemonPlacement, DaemonSpec, Policy};
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::machine::Machine;
use crate::mm::{Mm, MonitorSpec};
use crate::stats::Counter;
use crate::tune::{Dim, Scale};
use crate::types::{NodeId, Ns, Vpn};
use serde::{Deserialize, Serialize};

/// Parameters of `colloid`; defaults are those of Colloid's code on HeMem as evaluated
/// (the SOSP 2024 artifact: `src/pebs.h`, `src/pebs.c` of the `sosp24ae` branch) unless
/// said otherwise.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct ColloidConfig {
    /// Events per sampled record, of loads and of stores alike. Default 5003
    /// (`SAMPLE_PERIOD`).
    #[field(min = 1, max = 1_000_000_000)]
    pub sample_period: u64,
    /// Sampled reads that make a page hot. Default 8 (`HOT_READ_THRESHOLD`).
    #[field(min = 1, max = 65_535)]
    pub hot_read_threshold: u32,
    /// Sampled writes that make a page hot. Default 4 (`HOT_WRITE_THRESHOLD`).
    #[field(min = 1, max = 65_535)]
    pub hot_write_threshold: u32,
    /// A page count above which every hot page's counts are halved. Default 18
    /// (`PEBS_COOLING_THRESHOLD`).
    #[field(min = 1, max = 65_535)]
    pub cooling_threshold: u32,
    /// The policy thread's period (ms). Default 10 (`PEBS_KSWAPD_INTERVAL`, 10 ms: the
    /// thread sleeps what remains of it after each round).
    #[field(min = 1, max = 86_400_000, unit = "ms")]
    pub round_period_ms: u64,
    /// Weight of the newest round in the averages of arrivals and occupancy. Default
    /// 0.0625 (`COLLOID_EWMA`).
    #[field(min = 0.0001, max = 1.0)]
    pub ewma_alpha: f64,
    /// Pages a round moves at most, both directions counted. Default 50 (the round's
    /// `migrate_limit` of 50 pages).
    #[field(min = 1, max = 1_000_000)]
    pub max_pages_per_round: u64,
    /// Whether a round also stops once the bytes moved reach `delta_p` of the bytes read
    /// per round. Default true (`COLLOID_DYNAMIC_LIMIT`).
    pub dynamic_limit: bool,
    /// How often the sampling thread drains the records (us). Default 100, an estimate
    /// (as `hemem`: the sampling thread polls its buffers without pause).
    #[field(min = 1, max = 86_400_000_000u64, unit = "us")]
    pub sample_drain_us: u64,
    /// Records the sample buffer holds. Default 65536, an estimate (as `hemem`).
    #[field(min = 1, max = 16_777_216)]
    pub sample_buffer: u64,
    /// The sampling thread's time per record (ns). Default 100, an estimate (as `hemem`).
    #[field(min = 0, max = 1_000_000, unit = "ns")]
    pub sample_cost_ns: u64,
    /// Initial placement (default: first touch, fast tier first).
    #[field(nested)]
    pub initial: StaticConfig,
}

impl Default for ColloidConfig {
    fn default() -> Self {
        ColloidConfig {
            sample_period: 5003,
            hot_read_threshold: 8,
            hot_write_threshold: 4,
            cooling_threshold: 18,
            round_period_ms: 10,
            ewma_alpha: 0.0625,
            max_pages_per_round: 50,
            dynamic_limit: true,
            sample_drain_us: 100,
            sample_buffer: 65_536,
            sample_cost_ns: 100,
            initial: StaticConfig::default(),
        }
    }
}

impl ColloidConfig {
    /// The base's parameters: HeMem's sampling and cooling with these thresholds.
    fn base(&self) -> HememConfig {
        HememConfig {
            sample_period: self.sample_period,
            hot_read_threshold: self.hot_read_threshold,
            hot_write_threshold: self.hot_write_threshold,
            cooling_threshold: self.cooling_threshold,
            // Colloid's code pins no page; this policy never counts a migration in the
            // base, so the base never pins one either.
            migration_stop_threshold: 255,
            // The base's own round is not run.
            policy_period_ms: self.round_period_ms,
            sample_drain_us: self.sample_drain_us,
            sample_buffer: self.sample_buffer,
            sample_cost_ns: self.sample_cost_ns,
            initial: self.initial.clone(),
        }
    }
}

impl crate::registry::Describe for ColloidConfig {
    const KIND: &'static str = "colloid";
    const DESCRIPTION: &'static str = "Colloid on HeMem: balances the tiers' loaded access latency by swapping sampled pages between them (SOSP 2024)";
}

/// The search space `tune` explores.
pub const SEARCH_SPACE: [Dim; 4] = [
    Dim {
        field: "round_period_ms",
        lo: 1.0,
        hi: 1000.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "1 ms .. 1 s on a log scale (Colloid's code: 10 ms; HeMem's: 10 ms and 1 s)",
    },
    Dim {
        field: "ewma_alpha",
        lo: 0.01,
        hi: 1.0,
        integer: false,
        scale: Scale::Log,
        specials: &[],
        source: "0.01 .. 1 on a log scale (Colloid's code: 0.0625 on HeMem, 2^-5 on TPP)",
    },
    Dim {
        field: "max_pages_per_round",
        lo: 2.0,
        hi: 1000.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "2 .. 1000 on a log scale around Colloid's 50",
    },
    Dim {
        field: "sample_period",
        lo: 101.0,
        hi: 100_003.0,
        integer: true,
        scale: Scale::Log,
        specials: &[],
        source: "101 .. 100003 on a log scale (HeMem's versions use 5003 and 19997)",
    },
];

impl crate::component::PolicyParams for ColloidConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn Policy>, ConfigError> {
        Ok(Box::new(Colloid::new(self.clone(), machine)?))
    }
    const SEARCH_SPACE: &'static [Dim] = &SEARCH_SPACE;
}

inventory::submit!(crate::component::PolicyEntry::of::<ColloidConfig>());

/// The tiers' indices in the per-tier estimates.
const FAST: usize = 0;
const SLOW: usize = 1;

/// A page taken by this round's moves (in the sorted lists).
const TAKEN: u32 = u32::MAX;

/// The policy.
#[derive(Debug)]
pub struct Colloid {
    config: ColloidConfig,
    base: Hemem,
    /// Per node: the unloaded latency of a read of it (ns), from itself if it has
    /// processors, else from the nearest node that has.
    idle_ns: Vec<f64>,
    /// Per node: bytes read from it as of the last round.
    read_bytes: Vec<u64>,
    /// Per tier: average bytes read per round (arrivals).
    arrivals: [f64; 2],
    /// Per tier: average occupancy (bytes read per round times their latency).
    occupancy: [f64; 2],
    /// Per tier: the latency an access sees now, for a tier without arrivals.
    latency_now: [f64; 2],
    /// Per tier: (sampled accesses, page) of its placed pages, reused every round.
    ranked: [Vec<(u64, u32)>; 2],
    rounds: u64,
    fast_slower_rounds: u64,
    slow_slower_rounds: u64,
    promoted: u64,
    demoted: u64,
    limit_hits: u64,
}

impl Colloid {
    /// The policy for `machine`.
    pub fn new(config: ColloidConfig, machine: &Machine) -> Result<Colloid, ConfigError> {
        config.check_ranges("policy")?;
        slow_tier(machine, "Colloid, which balances two tiers,")?;
        let base = Hemem::new(config.base(), machine)?;
        let idle_ns = (0..machine.nodes() as u16)
            .map(|n| {
                let n = NodeId(n);
                let from = base
                    .fast_nodes()
                    .iter()
                    .copied()
                    .min_by_key(|&f| (machine.read_ns(f, n), f.0))
                    .unwrap_or(n);
                machine.read_ns(if base.is_slow(n) { from } else { n }, n) as f64
            })
            .collect();
        Ok(Colloid {
            read_bytes: vec![0; machine.nodes()],
            config,
            base,
            idle_ns,
            arrivals: [0.0; 2],
            occupancy: [0.0; 2],
            latency_now: [0.0; 2],
            ranked: Default::default(),
            rounds: 0,
            fast_slower_rounds: 0,
            slow_slower_rounds: 0,
            promoted: 0,
            demoted: 0,
            limit_hits: 0,
        })
    }

    /// Colloid's `colloid_update_stats`: this round's arrivals and occupancy per tier,
    /// folded into the averages.
    fn update_stats(&mut self, ctx: &dyn Mm) {
        let mut arrivals = [0.0; 2];
        let mut occupancy = [0.0; 2];
        let mut now = [f64::INFINITY; 2];
        for (i, last) in self.read_bytes.iter_mut().enumerate() {
            let n = NodeId(i as u16);
            let load = ctx.node_load(n);
            let bytes = load.bytes_read.saturating_sub(*last) as f64;
            *last = load.bytes_read;
            let latency = self.idle_ns[i] + load.added_ns as f64;
            let t = usize::from(self.base.is_slow(n));
            arrivals[t] += bytes;
            occupancy[t] += bytes * latency;
            now[t] = now[t].min(latency);
        }
        let a = self.config.ewma_alpha;
        for t in [FAST, SLOW] {
            self.arrivals[t] = a * arrivals[t] + (1.0 - a) * self.arrivals[t];
            self.occupancy[t] = a * occupancy[t] + (1.0 - a) * self.occupancy[t];
            self.latency_now[t] = now[t];
        }
    }

    /// Tier `t`'s loaded latency (ns) as the averages give it.
    fn latency(&self, t: usize) -> f64 {
        if self.arrivals[t] > 0.0 {
            self.occupancy[t] / self.arrivals[t]
        } else {
            self.latency_now[t]
        }
    }

    /// The share of accesses to move from the slower tier to the other
    /// (`COLLOID_EXPR3`).
    fn delta_p(&self) -> f64 {
        let total = self.arrivals[FAST] + self.arrivals[SLOW];
        if total <= 0.0 {
            return 0.0;
        }
        let p = self.arrivals[FAST] / total;
        let (lf, ls) = (self.latency(FAST), self.latency(SLOW));
        let den = p * ls + (1.0 - p) * lf;
        if den <= 0.0 {
            return 0.0;
        }
        p * (1.0 - p) * (lf - ls).abs() / den
    }

    /// Ranks every placed page of each tier by its sampled accesses (ascending); returns
    /// the sum of all of them.
    fn rank(&mut self, ctx: &dyn Mm) -> u64 {
        let mut ranked = std::mem::take(&mut self.ranked);
        ranked[FAST].clear();
        ranked[SLOW].clear();
        let mut total = 0u64;
        for v in 0..ctx.npages() as u32 {
            if ctx.copy_count(Vpn(v)) == 0 {
                continue;
            }
            let c = self.base.accesses(v);
            total += c;
            let t = usize::from(self.base.is_slow(ctx.home(Vpn(v))));
            ranked[t].push((c, v));
        }
        ranked[FAST].sort_unstable();
        ranked[SLOW].sort_unstable();
        self.ranked = ranked;
        total
    }

    /// The two-pointer scan: the pair (index in `top`, index in `bottom`) whose
    /// difference of access probability is the largest not above `budget`, and that
    /// difference.
    fn best_pair(
        top: &[(u64, u32)],
        bottom: &[(u64, u32)],
        total: f64,
        budget: f64,
    ) -> Option<(usize, usize, f64)> {
        let mut best = None;
        let mut best_delta = 0.0;
        let mut j = 0;
        for (i, &(ci, vi)) in top.iter().enumerate() {
            if vi == TAKEN {
                continue;
            }
            let pi = ci as f64 / total;
            while j < bottom.len() {
                let (cj, vj) = bottom[j];
                if vj != TAKEN {
                    let d = pi - cj as f64 / total;
                    if d <= budget {
                        if d > best_delta {
                            best = Some((i, j));
                            best_delta = d;
                        }
                        break;
                    }
                }
                j += 1;
            }
        }
        best.map(|(i, j)| (i, j, best_delta))
    }

    /// Swaps fast page `f` and slow page `s` (with their sampled accesses): `f` down
    /// to its demotion target unless it is unaccessed and a fast frame is free, then `s`
    /// up if it is accessed. Returns the pages moved, and whether `f` moved; `None`
    /// when the slow tier has no frame for `f`.
    fn swap(&mut self, ctx: &mut dyn Mm, f: (u64, u32), s: (u64, u32)) -> Option<(u64, bool)> {
        let mut moved = 0;
        let mut frame = None;
        if f.0 == 0 {
            frame = self
                .base
                .fast_nodes()
                .iter()
                .copied()
                .find(|&n| ctx.free_frames(n) > 0);
        }
        let f_moved = frame.is_none();
        if f_moved {
            let from = ctx.home(Vpn(f.1));
            let to = self.base.demotion_target(from)?;
            if ctx.free_frames(to) == 0 {
                return None;
            }
            ctx.migrate(Vpn(f.1), to).ok()?;
            self.base.refile(&*ctx, f.1);
            self.demoted += 1;
            moved += 1;
            frame = Some(from);
        }
        if s.0 > 0 {
            if let Some(to) = frame {
                if ctx.migrate(Vpn(s.1), to).is_ok() {
                    self.base.refile(&*ctx, s.1);
                    self.promoted += 1;
                    moved += 1;
                }
            }
        }
        Some((moved, f_moved))
    }

    /// The policy thread's round (the `SCAN_AND_SORT` round of Colloid's code).
    fn round(&mut self, ctx: &mut dyn Mm) {
        self.rounds += 1;
        self.update_stats(&*ctx);
        let (lf, ls) = (self.latency(FAST), self.latency(SLOW));
        if lf == ls {
            return;
        }
        let fast_slower = lf > ls;
        if fast_slower {
            self.fast_slower_rounds += 1;
        } else {
            self.slow_slower_rounds += 1;
        }
        let mut budget = self.delta_p();
        if budget <= 0.0 {
            return;
        }
        let total = self.rank(&*ctx);
        if total == 0 {
            return;
        }
        let page = ctx.machine().page_size();
        let mut limit = self.config.max_pages_per_round.saturating_mul(page);
        if self.config.dynamic_limit {
            let read = (self.arrivals[FAST] + self.arrivals[SLOW]) * budget;
            limit = limit.min(read as u64);
        }
        let (top_t, bottom_t) = if fast_slower {
            (FAST, SLOW)
        } else {
            (SLOW, FAST)
        };
        let mut ranked = std::mem::take(&mut self.ranked);
        let mut moved_bytes = 0u64;
        while moved_bytes < limit {
            let Some((i, j, d)) =
                Self::best_pair(&ranked[top_t], &ranked[bottom_t], total as f64, budget)
            else {
                break;
            };
            budget -= d;
            let (f, s) = if fast_slower { (i, j) } else { (j, i) };
            let (fp, sp) = (ranked[FAST][f], ranked[SLOW][s]);
            let Some((moved, f_moved)) = self.swap(ctx, fp, sp) else {
                break;
            };
            ranked[SLOW][s].1 = TAKEN;
            if f_moved {
                ranked[FAST][f].1 = TAKEN;
            }
            moved_bytes += moved * page;
        }
        if moved_bytes >= limit {
            self.limit_hits += 1;
        }
        self.ranked = ranked;
    }
}

impl Policy for Colloid {
    fn name(&self) -> &'static str {
        "colloid"
    }

    fn replicates(&self) -> bool {
        false
    }

    fn state_bytes_per_page(&self) -> u64 {
        // The base's, and a page's place in the round's ranking.
        self.base.state_bytes_per_page() + std::mem::size_of::<(u64, u32)>() as u64
    }

    fn monitors(&self) -> MonitorSpec {
        MonitorSpec {
            bandwidth: true,
            ..self.base.monitors()
        }
    }

    fn init(&mut self, ctx: &mut dyn Mm) {
        self.base.init(ctx);
    }

    fn initial_placement(
        &mut self,
        machine: &Machine,
        vpn: Vpn,
        hint: Option<NodeId>,
    ) -> Option<NodeId> {
        self.base.initial_placement(machine, vpn, hint)
    }

    fn on_fault(&mut self, ctx: &mut dyn Mm, f: crate::component::Fault) {
        self.base.on_fault(ctx, f);
    }

    fn daemons(&self, _machine: &Machine) -> Vec<DaemonSpec> {
        vec![
            DaemonSpec {
                name: "colloid-pebs".into(),
                placement: DaemonPlacement::OwnProcessor,
                first_wake: Ns(self.config.sample_drain_us * 1000),
            },
            DaemonSpec {
                name: "colloid-policy".into(),
                placement: DaemonPlacement::OwnProcessor,
                first_wake: Ns(self.config.round_period_ms * 1_000_000),
            },
        ]
    }

    fn on_daemon(&mut self, ctx: &mut dyn Mm, id: usize) -> DaemonNext {
        if id == 0 {
            self.base.drain(ctx);
            DaemonNext::After(Ns(self.config.sample_drain_us * 1000))
        } else {
            self.round(ctx);
            DaemonNext::After(Ns(self.config.round_period_ms * 1_000_000))
        }
    }

    fn counters(&self) -> Vec<Counter> {
        let c = |name, label, value| Counter { name, label, value };
        let (records, coolings) = self.base.sampling_counts();
        vec![
            c("colloid_records", "sampled records processed", records),
            c("colloid_coolings", "coolings", coolings),
            c("colloid_rounds", "policy rounds", self.rounds),
            c(
                "colloid_fast_slower_rounds",
                "rounds with the fast tier slower (demoting)",
                self.fast_slower_rounds,
            ),
            c(
                "colloid_slow_slower_rounds",
                "rounds with the slow tier slower (promoting)",
                self.slow_slower_rounds,
            ),
            c("colloid_promoted", "pages promoted", self.promoted),
            c("colloid_demoted", "pages demoted", self.demoted),
            c(
                "colloid_limit_hits",
                "rounds ended by the per-round limit",
                self.limit_hits,
            ),
            c(
                "colloid_fast_latency_ns",
                "the fast tier's loaded latency at the last round (ns)",
                self.latency(FAST).round() as u64,
            ),
            c(
                "colloid_slow_latency_ns",
                "the slow tier's loaded latency at the last round (ns)",
                self.latency(SLOW).round() as u64,
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::HistoryMode;
    use crate::mm::{test_machine_config, Action, NodeLoad, Recording, Sample};
    use crate::policy::test_scene::{two_tiers, Tiers};

    /// A fast node 0 of `fast` frames (reads 10 ns unloaded) and a slow memory-only node
    /// 1 (50 ns); `npages` pages, the first `on_fast` on node 0 and the rest on node 1.
    fn scene(config: ColloidConfig, fast: u32, npages: u32, on_fast: u32) -> (Colloid, Recording) {
        let tiers = Tiers {
            fast,
            slow: 64,
            page_bytes: None,
        };
        two_tiers(tiers, npages, on_fast, HistoryMode::None, |m| {
            Colloid::new(config, m).unwrap()
        })
    }

    /// `n` sampled reads of each page of `pages`, drained by the sampling thread.
    fn sample(p: &mut Colloid, rec: &mut Recording, pages: std::ops::Range<u32>, n: u32) {
        for v in pages {
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
        }
        p.on_daemon(rec, 0);
    }

    /// One policy round after each node `n` served `loads[n].0` more bytes of reads with
    /// `loads[n].1` ns added to each access; the actions it took.
    fn round(p: &mut Colloid, rec: &mut Recording, loads: [(u64, u64); 2]) -> Vec<Action> {
        for (i, (bytes, added)) in loads.into_iter().enumerate() {
            let n = NodeId(i as u16);
            let before = rec.node_load(n);
            rec.set_node_load(
                n,
                NodeLoad {
                    bytes_read: before.bytes_read + bytes,
                    added_ns: added,
                    ..before
                },
            );
        }
        rec.clear();
        p.on_daemon(rec, 1);
        rec.actions()
            .iter()
            .filter(|a| matches!(a, Action::Migrate(..)))
            .copied()
            .collect()
    }

    fn config() -> ColloidConfig {
        ColloidConfig::default()
    }

    fn no_dynamic_limit() -> ColloidConfig {
        ColloidConfig {
            dynamic_limit: false,
            ..config()
        }
    }

    /// The fast tier loaded to 1010 ns against the slow tier's 50 ns, with 3/4 of the
    /// reads: `delta_p` = 0.62.
    const FAST_LOADED: [(u64, u64); 2] = [(300, 1000), (100, 0)];

    /// The slow tier loaded to 1050 ns against the fast tier's 10 ns, with 3/4 of the
    /// reads: `delta_p` = 0.72.
    const SLOW_LOADED: [(u64, u64); 2] = [(100, 0), (300, 1000)];

    #[test]
    fn asks_for_sampling_and_bandwidth_accounting() {
        let (p, _) = scene(config(), 8, 4, 2);
        let m = p.monitors();
        assert!(m.bandwidth);
        assert_eq!(m.sampling.unwrap().load_period, 5003);
    }

    #[test]
    fn a_slower_fast_tier_demotes_a_sampled_fast_page() {
        // Four fast pages of a quarter of the samples each, four unsampled slow pages.
        let (mut p, mut rec) = scene(config(), 8, 8, 4);
        sample(&mut p, &mut rec, 0..4, 2);
        let moves = round(&mut p, &mut rec, FAST_LOADED);
        // The unsampled slow page it swaps with is not promoted.
        assert_eq!(moves, [Action::Migrate(Vpn(0), NodeId(1))]);
        assert_eq!((p.demoted, p.fast_slower_rounds), (1, 1));
    }

    #[test]
    fn a_slower_slow_tier_promotes_a_sampled_slow_page_into_a_free_frame() {
        let (mut p, mut rec) = scene(config(), 8, 8, 4);
        sample(&mut p, &mut rec, 4..8, 2);
        let moves = round(&mut p, &mut rec, SLOW_LOADED);
        // The unsampled fast page stays: a fast frame is free.
        assert_eq!(moves, [Action::Migrate(Vpn(4), NodeId(0))]);
        assert_eq!(p.slow_slower_rounds, 1);
    }

    #[test]
    fn a_full_fast_tier_swaps_the_pair() {
        let (mut p, mut rec) = scene(config(), 4, 8, 4);
        sample(&mut p, &mut rec, 4..8, 2);
        let moves = round(&mut p, &mut rec, SLOW_LOADED);
        assert_eq!(
            moves,
            [
                Action::Migrate(Vpn(0), NodeId(1)),
                Action::Migrate(Vpn(4), NodeId(0))
            ]
        );
    }

    #[test]
    fn equal_latencies_move_nothing() {
        let (mut p, mut rec) = scene(no_dynamic_limit(), 8, 8, 4);
        sample(&mut p, &mut rec, 0..8, 2);
        // 10 + 40 ns on the fast tier, 50 ns on the slow one.
        let moves = round(&mut p, &mut rec, [(300, 40), (100, 0)]);
        assert!(moves.is_empty());
        assert_eq!((p.fast_slower_rounds, p.slow_slower_rounds), (0, 0));
    }

    #[test]
    fn delta_p_stops_the_moves() {
        // Pages of probability 0.25 each against delta_p 0.62: two fit, a third not.
        let (mut p, mut rec) = scene(no_dynamic_limit(), 8, 8, 4);
        sample(&mut p, &mut rec, 0..4, 2);
        let moves = round(&mut p, &mut rec, FAST_LOADED);
        assert_eq!(
            moves,
            [
                Action::Migrate(Vpn(0), NodeId(1)),
                Action::Migrate(Vpn(1), NodeId(1))
            ]
        );
    }

    #[test]
    fn a_round_moves_at_most_its_pages() {
        let (mut p, mut rec) = scene(
            ColloidConfig {
                max_pages_per_round: 1,
                ..no_dynamic_limit()
            },
            8,
            8,
            4,
        );
        sample(&mut p, &mut rec, 0..4, 2);
        let moves = round(&mut p, &mut rec, FAST_LOADED);
        assert_eq!(moves, [Action::Migrate(Vpn(0), NodeId(1))]);
        assert_eq!(p.limit_hits, 1);
    }

    #[test]
    fn the_dynamic_limit_is_delta_p_of_the_bytes_read_per_round() {
        // 400 bytes a round averaged from nothing (25) times delta_p 0.62: 15 bytes, less
        // than a page of 64: the first pair moves and the round ends.
        let (mut p, mut rec) = scene(config(), 8, 8, 4);
        sample(&mut p, &mut rec, 0..4, 2);
        let moves = round(&mut p, &mut rec, FAST_LOADED);
        assert_eq!(moves.len(), 1);
        assert_eq!(p.limit_hits, 1);
    }

    #[test]
    fn without_added_latency_it_promotes_delta_p_worth_not_every_hot_page() {
        // No load: 10 ns against 50 ns, a quarter of the reads fast: delta_p 0.375, so
        // one of four hot slow pages of probability 0.25 (HeMem's round takes all four).
        let (mut p, mut rec) = scene(no_dynamic_limit(), 8, 8, 4);
        sample(&mut p, &mut rec, 4..8, 8);
        let moves = round(&mut p, &mut rec, [(100, 0), (300, 0)]);
        assert_eq!(moves, [Action::Migrate(Vpn(4), NodeId(0))]);
    }

    #[test]
    fn a_tier_without_reads_moves_nothing() {
        let (mut p, mut rec) = scene(no_dynamic_limit(), 8, 8, 4);
        sample(&mut p, &mut rec, 0..4, 2);
        let moves = round(&mut p, &mut rec, [(300, 1000), (0, 0)]);
        assert!(moves.is_empty());
    }

    #[test]
    fn unsampled_pages_move_nothing() {
        let (mut p, mut rec) = scene(no_dynamic_limit(), 8, 8, 4);
        let moves = round(&mut p, &mut rec, FAST_LOADED);
        assert!(moves.is_empty());
    }

    #[test]
    fn the_tier_latency_is_averaged_occupancy_over_averaged_arrivals() {
        let (mut p, mut rec) = scene(config(), 8, 8, 4);
        round(&mut p, &mut rec, [(160, 0), (160, 0)]);
        assert_eq!(p.latency(FAST), 10.0);
        round(&mut p, &mut rec, [(160, 100), (160, 0)]);
        // Arrivals 10 then 10 + 15/16 x 10; occupancy 100 then 1100 + 15/16 x 100.
        let expect = (1100.0 + 93.75) / (10.0 + 9.375);
        assert!((p.latency(FAST) - expect).abs() < 1e-9);
        assert_eq!(p.latency(SLOW), 50.0);
    }

    #[test]
    fn a_machine_of_one_tier_is_refused_naming_the_policy() {
        let m = Machine::new(test_machine_config(2)).unwrap();
        let e = Colloid::new(config(), &m).unwrap_err();
        assert_eq!(e.field, "policy.kind");
        assert!(e.to_string().contains("Colloid") && e.to_string().contains("needs a slow tier"));
    }

    #[test]
    fn an_averaging_weight_of_zero_is_refused_naming_the_field() {
        let m = Machine::new(test_machine_config(2)).unwrap();
        let e = Colloid::new(
            ColloidConfig {
                ewma_alpha: 0.0,
                ..config()
            },
            &m,
        )
        .unwrap_err();
        assert_eq!(e.field, "policy.ewma_alpha");
    }
}
