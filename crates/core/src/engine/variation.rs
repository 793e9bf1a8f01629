//! Seeded run-to-run variation (see [`crate::machine::Variation`]): each thread's start
//! skew, each processor's clock interrupts, and the phase of the policy's daemons, all
//! drawn from one random stream of their own, in a fixed order (processors' phases and
//! daemons' first wake-ups at setup, a program's start skews when it starts), so the
//! same seed gives the same bits whatever else draws random numbers.

use crate::machine::Variation;
use crate::stats::ThreadStats;
use crate::types::Ns;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// The variation sources of a run.
pub(super) struct VariationRt {
    rng: Pcg64,
    start_skew: u64,
    daemon_phase: bool,
    /// Each thread's start skew, drawn when its program starts.
    skew: Vec<Ns>,
}

/// Clock interrupts on every processor: the next one due on each.
pub(super) struct Ticks {
    period: u64,
    cost: u64,
    next: Vec<Ns>,
}

/// The stream's seed: the run's seed mixed (SplitMix64's finaliser) with a constant, so
/// it differs from the mechanism's stream of the same seed.
fn stream_seed(seed: u64) -> u64 {
    let mut z = seed ^ 0x5641_5249_4154_494f;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl VariationRt {
    /// The sources of `v` for a run of `threads` threads on `procs` processors with
    /// `seed`; `None` when no source applies. Draws the processors' clock phases.
    pub(super) fn new(
        v: &Variation,
        seed: u64,
        threads: usize,
        procs: usize,
    ) -> Option<(VariationRt, Option<Ticks>)> {
        if v.is_off() {
            return None;
        }
        let mut rng = Pcg64::seed_from_u64(stream_seed(seed));
        let ticks = (v.tick_ns > 0 && v.tick_cost_ns > 0).then(|| Ticks {
            period: v.tick_ns,
            cost: v.tick_cost_ns,
            next: (0..procs)
                .map(|_| Ns(rng.gen_range(0..v.tick_ns)))
                .collect(),
        });
        Some((
            VariationRt {
                rng,
                start_skew: v.start_skew_ns,
                daemon_phase: v.daemon_phase,
                skew: vec![Ns::ZERO; threads],
            },
            ticks,
        ))
    }

    /// A daemon's first wake-up: drawn in `(0, first]` with the daemon phase on.
    pub(super) fn daemon_first_wake(&mut self, first: Ns) -> Ns {
        if self.daemon_phase && first.0 > 0 {
            Ns(self.rng.gen_range(1..=first.0))
        } else {
            first
        }
    }

    /// Draws the start skews of threads `threads` (a program starting).
    pub(super) fn draw_skews(&mut self, threads: std::ops::Range<u32>) {
        for t in threads {
            self.skew[t as usize] = if self.start_skew > 0 {
                Ns(self.rng.gen_range(0..self.start_skew))
            } else {
                Ns::ZERO
            };
        }
    }

    /// Thread `t`'s start skew.
    #[inline]
    pub(super) fn skew(&self, t: u32) -> Ns {
        self.skew[t as usize]
    }
}

impl Ticks {
    /// Work on processor `p` from `from` that would end at `to`: every clock interrupt
    /// due on `p` in `[from, to]` takes its cost from the work, which ends that much
    /// later (and may meet the next interrupt); interrupts that came while the
    /// processor ran nothing of this thread's are not charged to it. Returns the end.
    #[inline]
    pub(super) fn charge(&mut self, p: usize, from: Ns, to: Ns, ts: &mut ThreadStats) -> Ns {
        if self.next[p] > to {
            return to;
        }
        self.charge_due(p, from, to, ts)
    }

    /// When processor `p`'s next clock interrupt comes (or came, when it is behind: it is
    /// caught up at the next charge).
    #[inline]
    pub(super) fn next_at(&self, p: usize) -> Ns {
        self.next[p]
    }

    #[cold]
    fn charge_due(&mut self, p: usize, from: Ns, to: Ns, ts: &mut ThreadStats) -> Ns {
        let next = &mut self.next[p];
        if *next < from {
            // Skip the interrupts that fell while the processor was idle (or ran
            // another thread, which paid for them).
            let behind = (from - *next).0;
            *next = Ns(next
                .0
                .saturating_add(behind.div_ceil(self.period).saturating_mul(self.period)));
        }
        if *next > to {
            return to;
        }
        // Interrupt j (from 0) at next + j * period falls inside the work, which by then
        // has grown by j interrupts, when next + j * period <= to + j * cost, that is
        // j <= (to - next) / (period - cost) (cost < period is validated): counted in one
        // step, however long the work is.
        let k = (to - *next).0 / (self.period - self.cost) + 1;
        let charged = k.saturating_mul(self.cost);
        ts.interrupt_ns = ts.interrupt_ns.saturating_add(charged);
        *next = Ns(next.0.saturating_add(k.saturating_mul(self.period)));
        Ns(to.0.saturating_add(charged))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The interrupts of `[from, to]` charged one at a time, as the definition reads.
    fn one_by_one(period: u64, cost: u64, mut next: u64, from: u64, mut to: u64) -> (u64, u64) {
        while next < from {
            next += period;
        }
        while next <= to {
            to += cost;
            next += period;
        }
        (to, next)
    }

    #[test]
    fn interrupts_counted_in_one_step_match_charging_them_one_at_a_time() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut draw = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for _ in 0..10_000 {
            let period = 1 + draw(1000);
            let cost = draw(period);
            let next = draw(5000);
            let from = draw(5000);
            let to = from + draw(20_000);
            let mut t = Ticks {
                period,
                cost,
                next: vec![Ns(next)],
            };
            let mut ts = ThreadStats::default();
            let end = t.charge(0, Ns(from), Ns(to), &mut ts);
            let (want_end, want_next) = one_by_one(period, cost, next, from, to);
            assert_eq!((end.0, t.next[0].0), (want_end, want_next));
            assert_eq!(ts.interrupt_ns, want_end - to);
        }
    }

    #[test]
    fn work_spanning_billions_of_interrupts_is_charged_at_once() {
        let mut t = Ticks {
            period: 1000,
            cost: 10,
            next: vec![Ns(500)],
        };
        let mut ts = ThreadStats::default();
        let end = t.charge(0, Ns(0), Ns(1_000_000_000_000_000), &mut ts);
        assert!(ts.interrupt_ns > 10_000_000_000_000);
        assert_eq!(end.0, 1_000_000_000_000_000 + ts.interrupt_ns);
    }
}
