//! `irix-competitive`: the competitive page-migration engine of IRIX on the Origin2000,
//! after the Stanford FLASH implementation (Verghese et al., ASPLOS 1996; as described by
//! Nikolopoulos et al., JPDC 2002, sec. 2.2, 5.1 and 6.2).
//!
//! Pages are placed on first touch. The hardware counters of a page count each node's
//! memory accesses; when a remote node's count exceeds the home node's by the threshold,
//! the memory controller interrupts, and the handler decides: the page migrates to that
//! node unless the engine's own limits reject it (the machine-wide rate limit, a page
//! that migrated too recently, a replicated page, a full target node). Rejected
//! candidates are counted by reason, as the paper counts the 544 of 1,291 candidates IRIX
//! did not migrate. Counters are decayed one page every 10 ms by a fixed amount, which is
//! what makes the engine slow to forget obsolete history: a full cycle over BT's 3,056
//! pages takes half a minute. The engine works per program (IRIX enables it per address
//! space): pages of programs not listed never interrupt.
//!
//! Left out: IRIX's other tunables (memory-pressure and freeze controls), and the
//! interrupt's handling on another processor (its work is charged to the referencing
//! thread).

use crate::component::{DaemonNext, DaemonPlacement, DaemonSpec, Policy};
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::machine::Machine;
use crate::mm::CounterSpec;
use crate::mm::Mm;
use crate::stats::Counter;
use crate::types::{NodeId, Ns, Vpn};
use serde::{Deserialize, Serialize};

/// Parameters of `irix-competitive`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct IrixCompetitiveConfig {
    /// Remote accesses in excess of local ones (in memory accesses, i.e. cache misses)
    /// that make a page a candidate. Not in the paper; default 256.
    #[field(min = 0, max = 4_294_967_294)]
    pub threshold: u32,
    /// Migrations the engine allows per second of simulated time, machine-wide. Not in
    /// the paper; default 1000.
    #[field(min = 1, max = 1_000_000_000)]
    pub max_migrations_per_s: u32,
    /// A page that migrated less than this long ago is not migrated again (ns). Not in
    /// the paper; default 100,000,000 (100 ms).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub min_interval_ns: u64,
    /// The decay daemon treats one page per period (ns). Default 10,000,000: IRIX decays
    /// one page every 10 ms (the paper, sec. 6.2).
    #[field(min = 1_000, max = crate::TIME_LIMIT, unit = "ns")]
    pub decay_period_ns: u64,
    /// What a decay subtracts from each of the page's counters. Not in the paper ("a
    /// fixed quantity"); default 256.
    #[field(min = 0, max = 4_294_967_295)]
    pub decay_amount: u32,
    /// Programs (indices in run order) the engine is enabled for; empty: every program.
    pub programs: Vec<u32>,
}

impl Default for IrixCompetitiveConfig {
    fn default() -> Self {
        IrixCompetitiveConfig {
            threshold: 256,
            max_migrations_per_s: 1000,
            min_interval_ns: 100_000_000,
            decay_period_ns: 10_000_000,
            decay_amount: 256,
            programs: Vec::new(),
        }
    }
}

impl crate::registry::Describe for IrixCompetitiveConfig {
    const KIND: &'static str = "irix-competitive";
    const DESCRIPTION: &'static str = "IRIX/FLASH competitive migration: counter interrupt when remote exceeds local by a threshold, rate limit, decay one page per 10 ms";
}

impl crate::component::PolicyParams for IrixCompetitiveConfig {
    fn build(&self, _machine: &Machine) -> Result<Box<dyn Policy>, ConfigError> {
        self.check_ranges("policy")?;
        Ok(Box::new(IrixCompetitive::new(self.clone())))
    }
}

inventory::submit!(crate::component::PolicyEntry::of::<IrixCompetitiveConfig>());

/// One second of simulated time, the rate limit's window.
const SECOND: u64 = 1_000_000_000;

/// The policy.
#[derive(Debug)]
pub struct IrixCompetitive {
    config: IrixCompetitiveConfig,
    /// Per page: when it last migrated.
    last_move: Vec<Option<Ns>>,
    /// The rate limit's current window (seconds since 0) and migrations in it.
    window: (u64, u32),
    /// The next page the decay daemon treats.
    cursor: usize,
    candidates: u64,
    rejected_rate: u64,
    rejected_recent: u64,
    rejected_other: u64,
}

impl IrixCompetitive {
    /// The policy with these parameters.
    pub fn new(config: IrixCompetitiveConfig) -> IrixCompetitive {
        IrixCompetitive {
            config,
            last_move: Vec::new(),
            window: (0, 0),
            cursor: 0,
            candidates: 0,
            rejected_rate: 0,
            rejected_recent: 0,
            rejected_other: 0,
        }
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
        std::mem::size_of::<Option<Ns>>() as u64
    }

    fn page_counters(&self) -> Option<CounterSpec> {
        Some(CounterSpec {
            threshold: Some(self.config.threshold),
            programs: self.config.programs.clone(),
        })
    }

    fn init(&mut self, ctx: &mut dyn Mm) {
        self.last_move = vec![None; ctx.npages()];
    }

    fn daemons(&self, _machine: &Machine) -> Vec<DaemonSpec> {
        // A clock-interrupt chore: it charges nothing, so stealing node 0's time costs none.
        vec![DaemonSpec {
            name: "counter decay".into(),
            placement: DaemonPlacement::StealOn(NodeId(0)),
            first_wake: Ns(self.config.decay_period_ns),
        }]
    }

    fn on_daemon(&mut self, ctx: &mut dyn Mm, _id: usize) -> DaemonNext {
        let n = ctx.npages();
        if n == 0 {
            return DaemonNext::Stop;
        }
        self.cursor %= n;
        ctx.decay_page_counters(Vpn(self.cursor as u32), self.config.decay_amount);
        self.cursor += 1;
        DaemonNext::After(Ns(self.config.decay_period_ns))
    }

    fn on_counter_interrupt(&mut self, ctx: &mut dyn Mm, vpn: Vpn, node: NodeId) {
        self.candidates += 1;
        let now = ctx.now();
        if ctx.page(vpn).copies.len() != 1 {
            self.rejected_other += 1;
            return;
        }
        let recent = self.last_move[vpn.idx()]
            .is_some_and(|t| now.0.saturating_sub(t.0) < self.config.min_interval_ns);
        if recent {
            self.rejected_recent += 1;
            return;
        }
        let second = now.0 / SECOND;
        if self.window.0 != second {
            self.window = (second, 0);
        }
        if self.window.1 >= self.config.max_migrations_per_s {
            self.rejected_rate += 1;
            return;
        }
        match ctx.migrate(vpn, node) {
            Ok(()) => {
                self.window.1 += 1;
                self.last_move[vpn.idx()] = Some(now);
            }
            Err(_) => self.rejected_other += 1,
        }
    }

    fn counters(&self) -> Vec<Counter> {
        vec![
            Counter {
                name: "irix_candidates",
                label: "migration candidates (counter interrupts)",
                value: self.candidates,
            },
            Counter {
                name: "irix_rejected_rate",
                label: "candidates rejected by the rate limit",
                value: self.rejected_rate,
            },
            Counter {
                name: "irix_rejected_recent",
                label: "candidates rejected as migrated too recently",
                value: self.rejected_recent,
            },
            Counter {
                name: "irix_rejected_other",
                label: "candidates rejected (replicated page, no frame)",
                value: self.rejected_other,
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

    fn scene(config: IrixCompetitiveConfig) -> (IrixCompetitive, Recording) {
        let mut p = IrixCompetitive::new(config);
        let mut rec = recording(2, 8, 4, HistoryMode::None);
        rec.enable_counters(&p.page_counters().unwrap());
        for v in 0..4 {
            rec.place(Vpn(v), NodeId(0)).unwrap();
        }
        p.init(&mut rec);
        rec.clear();
        (p, rec)
    }

    #[test]
    fn asks_for_counters_with_its_threshold() {
        let p = IrixCompetitive::new(IrixCompetitiveConfig {
            threshold: 7,
            programs: vec![1],
            ..Default::default()
        });
        let spec = p.page_counters().unwrap();
        assert_eq!((spec.threshold, spec.programs), (Some(7), vec![1]));
    }

    #[test]
    fn remote_accesses_beyond_the_threshold_migrate_the_page() {
        let (mut p, mut rec) = scene(IrixCompetitiveConfig {
            threshold: 10,
            ..Default::default()
        });
        rec.count(Vpn(1), NodeId(0), 5);
        assert!(rec.count(Vpn(1), NodeId(1), 16));
        p.on_counter_interrupt(&mut rec, Vpn(1), NodeId(1));
        assert_eq!(rec.actions(), &[Action::Migrate(Vpn(1), NodeId(1))]);
        assert_eq!(rec.page(Vpn(1)).home, NodeId(1));
    }

    #[test]
    fn a_migration_zeroes_the_pages_counters() {
        let (mut p, mut rec) = scene(IrixCompetitiveConfig::default());
        rec.count(Vpn(1), NodeId(1), 500);
        p.on_counter_interrupt(&mut rec, Vpn(1), NodeId(1));
        assert_eq!(rec.page_counters().unwrap().get(Vpn(1), NodeId(1)), 0);
    }

    #[test]
    fn candidates_beyond_the_rate_limit_are_rejected_and_counted() {
        let (mut p, mut rec) = scene(IrixCompetitiveConfig {
            max_migrations_per_s: 1,
            ..Default::default()
        });
        p.on_counter_interrupt(&mut rec, Vpn(0), NodeId(1));
        p.on_counter_interrupt(&mut rec, Vpn(2), NodeId(1));
        assert_eq!(rec.actions(), &[Action::Migrate(Vpn(0), NodeId(1))]);
        assert_eq!(p.rejected_rate, 1);
        assert_eq!(p.candidates, 2);
    }

    #[test]
    fn the_rate_limit_starts_again_each_second() {
        let (mut p, mut rec) = scene(IrixCompetitiveConfig {
            max_migrations_per_s: 1,
            ..Default::default()
        });
        p.on_counter_interrupt(&mut rec, Vpn(0), NodeId(1));
        rec.now = Ns(SECOND);
        p.on_counter_interrupt(&mut rec, Vpn(2), NodeId(1));
        assert_eq!(rec.page(Vpn(2)).home, NodeId(1));
    }

    #[test]
    fn a_page_that_migrated_recently_stays() {
        let (mut p, mut rec) = scene(IrixCompetitiveConfig::default());
        p.on_counter_interrupt(&mut rec, Vpn(0), NodeId(1));
        rec.now = Ns(1_000);
        p.on_counter_interrupt(&mut rec, Vpn(0), NodeId(0));
        assert_eq!(rec.page(Vpn(0)).home, NodeId(1));
        assert_eq!(p.rejected_recent, 1);
    }

    #[test]
    fn the_decay_daemon_treats_one_page_per_period_in_turn() {
        let (mut p, mut rec) = scene(IrixCompetitiveConfig {
            decay_amount: 3,
            ..Default::default()
        });
        let next = p.on_daemon(&mut rec, 0);
        p.on_daemon(&mut rec, 0);
        assert_eq!(next, DaemonNext::After(Ns(10_000_000)));
        assert_eq!(
            rec.actions(),
            &[
                Action::DecayCounters(Vpn(0), 3),
                Action::DecayCounters(Vpn(1), 3)
            ]
        );
    }

    #[test]
    fn decay_lowers_the_counters() {
        let (mut p, mut rec) = scene(IrixCompetitiveConfig {
            decay_amount: 3,
            ..Default::default()
        });
        rec.count(Vpn(0), NodeId(1), 5);
        p.on_daemon(&mut rec, 0);
        assert_eq!(rec.page_counters().unwrap().get(Vpn(0), NodeId(1)), 2);
    }
}
