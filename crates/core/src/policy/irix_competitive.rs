//! `irix-competitive`: the competitive page-migration engine of IRIX 6.5 on the Origin2000
//! (Nikolopoulos et al., JPDC 2002, sec. 2.2, 5.1 and 6.2; its decisions as IRIX's
//! migration(5) manual page, its `/var/sysgen/mtune/numa` defaults and its kernel's
//! `os/numa` sources describe them).
//!
//! Pages are placed on first touch. The hardware counts each node's memory accesses to
//! each 4 KB block in 11-bit counters that peg at 2047; when a remote node's count exceeds
//! the home node's by the threshold (50% of 2047, i.e. 1023), the hub interrupts and the
//! kernel's migration manager decides for the whole page. It first sets the page's counters
//! back to their start values (zero), then applies its filters in order:
//! - memory pressure (on by default): the destination must have at least 20% of its
//!   memory free; otherwise the page is frozen and the request counted as failed;
//! - bounce control (off by default): with dampening, only every third request within the
//!   aging period passes; with freezing, a page that migrated since its count was last
//!   aged is frozen instead of moved; frozen pages melt after the aging has visited them
//!   seven times, if melting is on;
//! - the migration itself, which fails (without freezing) when the destination has no free
//!   frame or the page has copies.
//!
//! A frozen page raises no interrupts. Every 10 ms the unpegger visits a few pages (8 a
//! tick per processor) and resets the counters of an unfrozen page whose home count is
//! above 90% of 2047, so a page whose local history pegged its home counter can become a
//! candidate again. Failures are counted as IRIX's `nstats -r` counts them ("failed to
//! migrate"), beside the interrupts, as the paper reports 1,291 candidates of which 544
//! were not migrated.
//!
//! Left out, with the reason:
//! - IRIX's distance filter: its default minimum distance (1 hop) never rejects two distinct
//!   nodes (`numa/migr_manager.c`, distances are hypercube hops).
//! - The cost filter (raw I/O in flight, a page referenced by more than 32 + 2 x processors
//!   mappings): the model has no raw I/O and no such sharing.
//! - Counters per 4 KB block: the model counts per page. A page of `b` blocks is given
//!   thresholds and saturation `b` times a block's, which is exact when a page's accesses
//!   spread evenly over its blocks (as the NAS kernels' streamed arrays do) and interrupts
//!   later than IRIX when they concentrate on one block.
//! - The interrupt's handling on another processor: its work is charged to the referencing
//!   thread.
//!
//! Nikolopoulos et al. write that IRIX "decays the counters of one page every 10 ms, by
//! subtracting a fixed quantity". IRIX 6.5's sources have no such subtraction; the
//! unpegger's conditional reset is the operation that makes old history go away, and it is
//! what this model does.

use crate::component::{DaemonNext, DaemonPlacement, DaemonSpec, Policy};
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::machine::Machine;
#[cfg(test)]
use crate::machine::MachineConfig;
use crate::mm::CounterSpec;
use crate::mm::Mm;
use crate::stats::Counter;
use crate::types::{NodeId, Ns, Vpn};
use serde::{Deserialize, Serialize};

/// Parameters of `irix-competitive`: IRIX 6.5's tunables of `/var/sysgen/mtune/numa`
/// (percentages as IRIX gives them) and the Origin2000's counters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct IrixCompetitiveConfig {
    /// The migration threshold as a percentage of the counters' reference
    /// (`numa_migr_default_threshold`, default 50; IRIX refuses an effective threshold
    /// below 32 accesses and raises it to 32).
    #[field(min = 0, max = 100)]
    pub threshold_pct: u32,
    /// The counters' reference, the count at which they peg: 2047 for the Origin2000's
    /// 11-bit counters with standard directory memory (`numa_migr_threshold_reference`
    /// 0, the default; 524287 with premium memory, 19-bit counters).
    #[field(min = 1, max = 524_287)]
    pub counter_reference: u32,
    /// Bytes each set of hardware counters covers: the Origin2000 counts per 4 KB block
    /// (migration(5)); a page of several blocks counts as their sum.
    #[field(min = 1, max = 1_073_741_824, unit = "bytes")]
    pub counter_block_bytes: u64,
    /// The memory-pressure filter (`numa_migr_memory_low_enabled`, default on).
    pub memory_low_enabled: bool,
    /// A destination with less free memory than this percentage of its own is refused and
    /// the page frozen (`numa_migr_memory_low_threshold`, default 20).
    #[field(min = 0, max = 100)]
    pub memory_low_pct: u32,
    /// Freezing of bouncing pages (`numa_migr_freeze_enabled`, default off).
    pub freeze_enabled: bool,
    /// Migrations, as a percentage of the migration counter's maximum of 7, at which a
    /// page is frozen (`numa_migr_freeze_threshold`, default 20, i.e. 1).
    #[field(min = 0, max = 100)]
    pub freeze_threshold_pct: u32,
    /// Melting of frozen pages (`numa_migr_melt_enabled`, default off).
    pub melt_enabled: bool,
    /// Agings, as a percentage of 7, after which a frozen page melts
    /// (`numa_migr_melt_threshold`, default 90, i.e. 6: it melts at the 7th).
    #[field(min = 0, max = 100)]
    pub melt_threshold_pct: u32,
    /// Migration dampening (`numa_migr_dampening_enabled`, default off).
    pub dampening_enabled: bool,
    /// Requests, as a percentage of the request counter's maximum of 3, that a page needs
    /// before it migrates (`numa_migr_dampening_factor`, default 90, i.e. 2).
    #[field(min = 0, max = 100)]
    pub dampening_factor_pct: u32,
    /// The unpegger (`numa_migr_unpegging_control_enabled`, default on).
    pub unpegging_enabled: bool,
    /// A home count above this percentage of the reference pegs the page and the unpegger
    /// resets its counters (`numa_migr_unpegging_control_threshold`, default 90).
    #[field(min = 0, max = 100)]
    pub unpegging_threshold_pct: u32,
    /// Programs (indices in run order) the engine is enabled for; empty: every program.
    /// IRIX's default mode turns migration on per address space (`numa_migr_default_mode`
    /// 2, "normally off").
    pub programs: Vec<u32>,
}

impl Default for IrixCompetitiveConfig {
    fn default() -> Self {
        IrixCompetitiveConfig {
            threshold_pct: 50,
            counter_reference: 2047,
            counter_block_bytes: 4096,
            memory_low_enabled: true,
            memory_low_pct: 20,
            freeze_enabled: false,
            freeze_threshold_pct: 20,
            melt_enabled: false,
            melt_threshold_pct: 90,
            dampening_enabled: false,
            dampening_factor_pct: 90,
            unpegging_enabled: true,
            unpegging_threshold_pct: 90,
            programs: Vec::new(),
        }
    }
}

impl crate::registry::Describe for IrixCompetitiveConfig {
    const KIND: &'static str = "irix-competitive";
    const DESCRIPTION: &'static str = "IRIX 6.5 competitive migration: counter interrupt when remote exceeds local by 50% of 2047, memory-pressure filter, optional freeze/melt/dampening, unpegger (Origin2000)";
}

impl crate::component::PolicyParams for IrixCompetitiveConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn Policy>, ConfigError> {
        self.check_ranges("policy")?;
        Ok(Box::new(IrixCompetitive::new(self.clone(), machine)))
    }
}

inventory::submit!(crate::component::PolicyEntry::of::<IrixCompetitiveConfig>());

/// The clock tick of IRIX on the Origin2000, the period of its memory ticks
/// (`mem_tick_base_period` 1).
const TICK: Ns = Ns(10_000_000);
/// Pages the unpegger visits per tick and processor when its interval is 0, the default
/// (migration(5); `numa/mem_tick.c`).
const UNPEG_PAGES_PER_TICK: u64 = 8;
/// Pages the bounce control's aging visits per tick and processor (the same).
const BOUNCE_PAGES_PER_TICK: u64 = 4;
/// The per-page migration counter's maximum on the Origin2000 (3 bits).
const MIGRATION_COUNT_MAX: u8 = 7;
/// The per-page request counter's maximum (2 bits).
const REQUEST_COUNT_MAX: u8 = 3;
/// IRIX's smallest effective threshold (`NUMA_MIGR_BASE_EFFTHRESHOLD_MIN`).
const MIN_THRESHOLD: u32 = 32;

/// A page's bounce-control state (IRIX keeps it in the page frame's `pfms` word).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Bounce {
    frozen: bool,
    /// Migrations while unfrozen, agings while frozen (0..=7).
    count: u8,
    /// Requests held back by dampening (0..=3).
    requests: u8,
}

/// The policy.
#[derive(Debug)]
pub struct IrixCompetitive {
    config: IrixCompetitiveConfig,
    /// The interrupt threshold in accesses per page.
    threshold: u32,
    /// The saturation of a page's counters.
    saturation: u32,
    /// A home count above this pegs the page.
    pegged: u32,
    /// Pages of the run each daemon visits per tick, in millionths (IRIX's daemons sweep
    /// all of a node's memory at their rate; the run's pages are a share of it).
    unpeg_rate: u64,
    bounce_rate: u64,
    /// Credit toward the next page, in millionths.
    unpeg_credit: u64,
    bounce_credit: u64,
    unpeg_cursor: usize,
    bounce_cursor: usize,
    pages: Vec<Bounce>,
    interrupts: u64,
    migrated: u64,
    failed_memory_low: u64,
    failed_bounce: u64,
    failed_dampened: u64,
    failed_engine: u64,
    unpegged: u64,
    melted: u64,
}

impl IrixCompetitive {
    /// The policy with these parameters on `machine`.
    pub fn new(config: IrixCompetitiveConfig, machine: &Machine) -> IrixCompetitive {
        let blocks = (machine.page_size() / config.counter_block_bytes).clamp(1, 1 << 16) as u32;
        let effective =
            |pct: u32| (u64::from(pct) * u64::from(config.counter_reference) / 100) as u32;
        let per_page = |accesses: u32| accesses.saturating_mul(blocks);
        IrixCompetitive {
            threshold: per_page(effective(config.threshold_pct).max(MIN_THRESHOLD)),
            saturation: per_page(config.counter_reference),
            pegged: per_page(effective(config.unpegging_threshold_pct)),
            unpeg_rate: 0,
            bounce_rate: 0,
            unpeg_credit: 0,
            bounce_credit: 0,
            unpeg_cursor: 0,
            bounce_cursor: 0,
            pages: Vec::new(),
            interrupts: 0,
            migrated: 0,
            failed_memory_low: 0,
            failed_bounce: 0,
            failed_dampened: 0,
            failed_engine: 0,
            unpegged: 0,
            melted: 0,
            config,
        }
    }

    /// IRIX's percentage of a small counter's maximum, truncated as the kernel's integer
    /// arithmetic truncates it.
    fn of_max(pct: u32, max: u8) -> u8 {
        (pct * u32::from(max) / 100) as u8
    }

    /// The page is frozen: it raises no more interrupts until it melts.
    fn freeze(&mut self, vpn: Vpn) {
        let b = &mut self.pages[vpn.idx()];
        b.frozen = true;
        b.count = 0;
    }

    /// The unpegger's visit of `vpn`.
    fn unpeg(&mut self, ctx: &mut dyn Mm, vpn: Vpn) {
        if self.pages[vpn.idx()].frozen {
            return;
        }
        let home = ctx.page(vpn).home;
        let pegged = ctx
            .page_counters()
            .is_some_and(|c| c.get(vpn, home) > self.pegged);
        if pegged {
            ctx.reset_page_counters(vpn);
            self.unpegged += 1;
        }
    }

    /// The bounce control's aging of `vpn`.
    fn age(&mut self, vpn: Vpn) {
        let melt = Self::of_max(self.config.melt_threshold_pct, MIGRATION_COUNT_MAX);
        let melt_enabled = self.config.melt_enabled;
        let b = &mut self.pages[vpn.idx()];
        if b.frozen {
            if melt_enabled && b.count > melt {
                b.frozen = false;
                b.count = 0;
                self.melted += 1;
            } else {
                b.count = (b.count + 1).min(MIGRATION_COUNT_MAX);
            }
        } else {
            b.count = b.count.saturating_sub(1);
            b.requests = b.requests.saturating_sub(1);
        }
    }

    /// Visits the next pages a daemon's credit pays for.
    fn sweep(
        &mut self,
        ctx: &mut dyn Mm,
        unpegger: bool,
        mut visit: impl FnMut(&mut Self, &mut dyn Mm, Vpn),
    ) {
        let n = ctx.npages();
        let (rate, credit, cursor) = if unpegger {
            (self.unpeg_rate, self.unpeg_credit, self.unpeg_cursor)
        } else {
            (self.bounce_rate, self.bounce_credit, self.bounce_cursor)
        };
        let mut credit = credit + rate;
        let mut cursor = cursor;
        while credit >= 1_000_000 && n > 0 {
            credit -= 1_000_000;
            cursor %= n;
            visit(self, ctx, Vpn(cursor as u32));
            cursor += 1;
        }
        if unpegger {
            (self.unpeg_credit, self.unpeg_cursor) = (credit, cursor);
        } else {
            (self.bounce_credit, self.bounce_cursor) = (credit, cursor);
        }
    }

    fn bounce_control_runs(&self) -> bool {
        self.config.freeze_enabled || self.config.dampening_enabled
    }
}

impl Policy for IrixCompetitive {
    fn name(&self) -> &'static str {
        "irix-competitive"
    }

    fn faults_by_default(&self) -> bool {
        true
    }

    fn replicates(&self) -> bool {
        false
    }

    fn state_bytes_per_page(&self) -> u64 {
        std::mem::size_of::<Bounce>() as u64
    }

    fn page_counters(&self) -> Option<CounterSpec> {
        Some(CounterSpec {
            // The mechanism interrupts when the difference exceeds its threshold; IRIX
            // when it reaches its own.
            threshold: Some(self.threshold.saturating_sub(1)),
            programs: self.config.programs.clone(),
            saturate_at: Some(self.saturation),
        })
    }

    fn init(&mut self, ctx: &mut dyn Mm) {
        self.pages = vec![Bounce::default(); ctx.npages()];
        // Each processor sweeps its slice of its node's frames at its rate, so the whole
        // machine's frames are swept every frames / (rate x processors) ticks; the run's
        // pages, a share of those frames, are visited at that period.
        let machine = ctx.machine();
        let frames = machine.total_frames().max(1);
        let per_tick = |per_proc: u64| {
            let visits =
                u128::from(per_proc) * machine.procs() as u128 * ctx.npages() as u128 * 1_000_000
                    / u128::from(frames);
            u64::try_from(visits).unwrap_or(u64::MAX)
        };
        self.unpeg_rate = per_tick(UNPEG_PAGES_PER_TICK);
        self.bounce_rate = per_tick(BOUNCE_PAGES_PER_TICK);
    }

    fn daemons(&self, _machine: &Machine) -> Vec<DaemonSpec> {
        // IRIX's memory tick, on every processor's clock interrupt: it charges nothing, so
        // stealing node 0's time costs none.
        if !self.config.unpegging_enabled && !self.bounce_control_runs() {
            return Vec::new();
        }
        vec![DaemonSpec {
            name: "memory tick".into(),
            placement: DaemonPlacement::StealOn(NodeId(0)),
            first_wake: TICK,
        }]
    }

    fn on_daemon(&mut self, ctx: &mut dyn Mm, _id: usize) -> DaemonNext {
        if ctx.npages() == 0 {
            return DaemonNext::Stop;
        }
        if self.config.unpegging_enabled {
            self.sweep(ctx, true, |p, ctx, vpn| p.unpeg(ctx, vpn));
        }
        if self.bounce_control_runs() {
            self.sweep(ctx, false, |p, _, vpn| p.age(vpn));
        }
        DaemonNext::After(TICK)
    }

    fn on_counter_interrupt(&mut self, ctx: &mut dyn Mm, vpn: Vpn, node: NodeId) {
        // A frozen page's counters raise no interrupts on the Origin (IRIX turns their
        // migration mode off); the mechanism's crossing is ignored.
        if self.pages[vpn.idx()].frozen {
            return;
        }
        self.interrupts += 1;
        // The manager restarts the page's counters before it decides (IRIX sets them to
        // their start values, zero, whatever the outcome; a moved page starts from zero on
        // its new frame).
        ctx.reset_page_counters(vpn);
        if self.config.memory_low_enabled {
            let total = u64::from(ctx.machine().frames(node)).max(1);
            let free_pct = u64::from(ctx.free_frames(node)) * 100 / total;
            if free_pct < u64::from(self.config.memory_low_pct) {
                self.failed_memory_low += 1;
                self.freeze(vpn);
                return;
            }
        }
        if self.config.dampening_enabled {
            let factor = Self::of_max(self.config.dampening_factor_pct, REQUEST_COUNT_MAX);
            let b = &mut self.pages[vpn.idx()];
            if b.requests < factor {
                b.requests += 1;
                self.failed_dampened += 1;
                return;
            }
            b.requests = 0;
        }
        if self.config.freeze_enabled {
            let threshold = Self::of_max(self.config.freeze_threshold_pct, MIGRATION_COUNT_MAX);
            if self.pages[vpn.idx()].count >= threshold {
                self.failed_bounce += 1;
                self.freeze(vpn);
                return;
            }
            let b = &mut self.pages[vpn.idx()];
            b.count = (b.count + 1).min(MIGRATION_COUNT_MAX);
        }
        if ctx.page(vpn).copies.len() != 1 {
            self.failed_engine += 1;
            return;
        }
        match ctx.migrate(vpn, node) {
            Ok(()) => self.migrated += 1,
            Err(_) => self.failed_engine += 1,
        }
    }

    fn counters(&self) -> Vec<Counter> {
        let failed =
            self.failed_memory_low + self.failed_bounce + self.failed_dampened + self.failed_engine;
        vec![
            Counter {
                name: "irix_candidates",
                label: "counter interrupts (migration requests)",
                value: self.interrupts,
            },
            Counter {
                name: "irix_failed",
                label: "requests that failed to migrate (nstats -r)",
                value: failed,
            },
            Counter {
                name: "irix_failed_memory_low",
                label: "  refused: destination low on memory (page frozen)",
                value: self.failed_memory_low,
            },
            Counter {
                name: "irix_failed_bounce",
                label: "  refused: bouncing page frozen",
                value: self.failed_bounce,
            },
            Counter {
                name: "irix_failed_dampened",
                label: "  refused: dampened",
                value: self.failed_dampened,
            },
            Counter {
                name: "irix_failed_engine",
                label: "  failed in the migration engine (no frame, copies)",
                value: self.failed_engine,
            },
            Counter {
                name: "irix_unpegged",
                label: "pages the unpegger reset",
                value: self.unpegged,
            },
            Counter {
                name: "irix_melted",
                label: "frozen pages melted",
                value: self.melted,
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::HistoryMode;
    use crate::mm::{Action, Recording};
    use crate::policy::test_scene::recording;

    /// Two nodes of 8 frames, `npages` pages; pages `0..on_0` on node 0, the next `on_1`
    /// on node 1. With 64-byte pages a page is one counter block: the threshold is 1023.
    fn scene(
        config: IrixCompetitiveConfig,
        npages: usize,
        on_0: u32,
        on_1: u32,
    ) -> (IrixCompetitive, Recording) {
        let mut rec = recording(2, 8, npages, HistoryMode::None);
        let mut p = IrixCompetitive::new(config, rec.machine());
        rec.enable_counters(&p.page_counters().unwrap());
        for v in 0..on_0 {
            rec.place(Vpn(v), NodeId(0)).unwrap();
        }
        for v in on_0..on_0 + on_1 {
            rec.place(Vpn(v), NodeId(1)).unwrap();
        }
        p.init(&mut rec);
        rec.clear();
        (p, rec)
    }

    fn count(rec: &Recording, vpn: u32, node: u16) -> u32 {
        rec.page_counters().unwrap().get(Vpn(vpn), NodeId(node))
    }

    #[test]
    fn the_default_threshold_is_half_the_11_bit_counters_reference_per_block() {
        let machine = |page_size_bytes| {
            Machine::new(MachineConfig {
                page_size_bytes,
                ..crate::mm::test_machine_config(2)
            })
            .unwrap()
        };
        let small = IrixCompetitive::new(Default::default(), &machine(64));
        let spec = small.page_counters().unwrap();
        assert_eq!((spec.threshold, spec.saturate_at), (Some(1022), Some(2047)));
        // A 16 KB page is four 4 KB blocks.
        let origin = IrixCompetitive::new(Default::default(), &machine(16384));
        let spec = origin.page_counters().unwrap();
        assert_eq!((spec.threshold, spec.saturate_at), (Some(4091), Some(8188)));
    }

    #[test]
    fn a_threshold_below_32_accesses_is_raised_to_32() {
        let (p, _) = scene(
            IrixCompetitiveConfig {
                threshold_pct: 1,
                ..Default::default()
            },
            1,
            1,
            0,
        );
        assert_eq!(p.page_counters().unwrap().threshold, Some(31));
    }

    #[test]
    fn a_remote_count_reaching_the_threshold_over_the_home_migrates_the_page() {
        let (mut p, mut rec) = scene(Default::default(), 4, 4, 0);
        rec.count(Vpn(1), NodeId(0), 5);
        assert!(!rec.count(Vpn(1), NodeId(1), 1027));
        assert!(rec.count(Vpn(1), NodeId(1), 1));
        p.on_counter_interrupt(&mut rec, Vpn(1), NodeId(1));
        assert_eq!(
            rec.actions(),
            &[
                Action::ResetCounters(Vpn(1)),
                Action::Migrate(Vpn(1), NodeId(1))
            ]
        );
        assert_eq!(rec.page(Vpn(1)).home, NodeId(1));
    }

    #[test]
    fn a_request_restarts_the_pages_counters_whatever_the_outcome() {
        // Node 1 is low on memory: the request is refused, the counters restart anyway.
        let (mut p, mut rec) = scene(Default::default(), 8, 1, 7);
        rec.count(Vpn(0), NodeId(1), 1500);
        p.on_counter_interrupt(&mut rec, Vpn(0), NodeId(1));
        assert_eq!(count(&rec, 0, 1), 0);
        assert_eq!(rec.page(Vpn(0)).home, NodeId(0));
    }

    #[test]
    fn a_destination_with_less_than_20_percent_free_is_refused_and_the_page_frozen() {
        // 7 of node 1's 8 frames taken: 12% free.
        let (mut p, mut rec) = scene(Default::default(), 8, 1, 7);
        p.on_counter_interrupt(&mut rec, Vpn(0), NodeId(1));
        assert_eq!(p.failed_memory_low, 1);
        assert!(p.pages[0].frozen);
        assert!(!rec.actions().contains(&Action::Migrate(Vpn(0), NodeId(1))));
    }

    #[test]
    fn the_memory_pressure_filter_can_be_turned_off() {
        let (mut p, mut rec) = scene(
            IrixCompetitiveConfig {
                memory_low_enabled: false,
                ..Default::default()
            },
            8,
            1,
            7,
        );
        p.on_counter_interrupt(&mut rec, Vpn(0), NodeId(1));
        assert_eq!(rec.page(Vpn(0)).home, NodeId(1));
    }

    #[test]
    fn a_frozen_page_makes_no_requests() {
        let (mut p, mut rec) = scene(Default::default(), 8, 1, 7);
        p.on_counter_interrupt(&mut rec, Vpn(0), NodeId(1));
        rec.clear();
        p.on_counter_interrupt(&mut rec, Vpn(0), NodeId(1));
        assert_eq!(rec.actions(), &[]);
        assert_eq!(p.interrupts, 1);
    }

    #[test]
    fn with_freezing_on_a_page_that_migrated_since_its_last_aging_is_frozen() {
        let (mut p, mut rec) = scene(
            IrixCompetitiveConfig {
                freeze_enabled: true,
                ..Default::default()
            },
            4,
            4,
            0,
        );
        p.on_counter_interrupt(&mut rec, Vpn(0), NodeId(1));
        assert_eq!(rec.page(Vpn(0)).home, NodeId(1));
        p.on_counter_interrupt(&mut rec, Vpn(0), NodeId(0));
        assert_eq!(rec.page(Vpn(0)).home, NodeId(1));
        assert!(p.pages[0].frozen);
        assert_eq!(p.failed_bounce, 1);
    }

    #[test]
    fn aging_lets_a_page_migrate_again_before_it_bounces() {
        let (mut p, mut rec) = scene(
            IrixCompetitiveConfig {
                freeze_enabled: true,
                ..Default::default()
            },
            4,
            4,
            0,
        );
        p.on_counter_interrupt(&mut rec, Vpn(0), NodeId(1));
        p.age(Vpn(0));
        p.on_counter_interrupt(&mut rec, Vpn(0), NodeId(0));
        assert_eq!(rec.page(Vpn(0)).home, NodeId(0));
    }

    #[test]
    fn with_melting_on_a_frozen_page_melts_at_its_seventh_aging() {
        let (mut p, _) = scene(
            IrixCompetitiveConfig {
                freeze_enabled: true,
                melt_enabled: true,
                ..Default::default()
            },
            4,
            4,
            0,
        );
        p.freeze(Vpn(0));
        for _ in 0..7 {
            p.age(Vpn(0));
            assert!(p.pages[0].frozen);
        }
        p.age(Vpn(0));
        assert!(!p.pages[0].frozen);
        assert_eq!(p.melted, 1);
    }

    #[test]
    fn without_melting_a_frozen_page_stays_frozen() {
        let (mut p, _) = scene(Default::default(), 4, 4, 0);
        p.freeze(Vpn(0));
        for _ in 0..20 {
            p.age(Vpn(0));
        }
        assert!(p.pages[0].frozen);
    }

    #[test]
    fn dampening_lets_the_third_request_through() {
        let (mut p, mut rec) = scene(
            IrixCompetitiveConfig {
                dampening_enabled: true,
                ..Default::default()
            },
            4,
            4,
            0,
        );
        p.on_counter_interrupt(&mut rec, Vpn(0), NodeId(1));
        p.on_counter_interrupt(&mut rec, Vpn(0), NodeId(1));
        assert_eq!(rec.page(Vpn(0)).home, NodeId(0));
        assert_eq!(p.failed_dampened, 2);
        p.on_counter_interrupt(&mut rec, Vpn(0), NodeId(1));
        assert_eq!(rec.page(Vpn(0)).home, NodeId(1));
    }

    #[test]
    fn a_page_with_copies_fails_in_the_engine_without_freezing() {
        let (mut p, mut rec) = scene(Default::default(), 4, 4, 0);
        rec.replicate(Vpn(0), NodeId(1)).unwrap();
        p.on_counter_interrupt(&mut rec, Vpn(0), NodeId(1));
        assert_eq!(p.failed_engine, 1);
        assert!(!p.pages[0].frozen);
    }

    #[test]
    fn the_unpegger_resets_a_page_whose_home_count_passed_90_percent() {
        let (mut p, mut rec) = scene(Default::default(), 2, 2, 0);
        rec.count(Vpn(0), NodeId(0), 1843);
        rec.count(Vpn(0), NodeId(1), 700);
        rec.count(Vpn(1), NodeId(0), 1842);
        p.unpeg(&mut rec, Vpn(0));
        p.unpeg(&mut rec, Vpn(1));
        assert_eq!((count(&rec, 0, 0), count(&rec, 0, 1)), (0, 0));
        assert_eq!(count(&rec, 1, 0), 1842);
        assert_eq!(p.unpegged, 1);
    }

    #[test]
    fn the_memory_tick_sweeps_pages_at_the_unpeggers_rate() {
        // 16 frames and 2 processors: 8 pages a tick and processor sweep all the frames
        // in one tick, so each of the run's 4 pages is visited once a tick.
        let (mut p, mut rec) = scene(Default::default(), 4, 4, 0);
        for v in 0..4 {
            rec.count(Vpn(v), NodeId(0), 2000);
        }
        assert_eq!(p.on_daemon(&mut rec, 0), DaemonNext::After(TICK));
        assert_eq!(p.unpegged, 4);
    }

    #[test]
    fn with_unpegging_and_bounce_control_off_there_is_no_memory_tick() {
        let (p, rec) = scene(
            IrixCompetitiveConfig {
                unpegging_enabled: false,
                ..Default::default()
            },
            1,
            1,
            0,
        );
        assert!(p.daemons(rec.machine()).is_empty());
    }
}
