//! Hardware per-page access counters, as on the SGI Origin2000 (Laudon & Lenoski 1997;
//! Nikolopoulos et al., JPDC 2002, sec. 5.1): every page in memory has one counter per
//! node of up to 64 nodes (above 64, eight nodes share a counter) that counts the memory
//! accesses the node makes to the page, and the memory controller compares remote with
//! local counts and raises an interrupt when a node's count exceeds the home node's by a
//! programmable threshold. The Origin's counters are 11 bits wide and peg at 2047
//! ([`CounterSpec::saturate_at`]); software resets them (IRIX's unpegger) or subtracts from
//! them, and they start from zero on a page's new frame after a migration.
//!
//! They exist only in runs whose policy asks for them ([`crate::component::Policy::page_counters`]):
//! a page's counters are a row of `u32` in one dense table, and a reference run adds its
//! count to one of them and compares two, with no allocation or hashing.

use crate::types::{NodeId, Vpn};

/// Above this many nodes, nodes share counters (the Origin2000's limit).
pub const DEDICATED_COUNTER_NODES: usize = 64;
/// Nodes per shared counter above [`DEDICATED_COUNTER_NODES`].
pub const NODES_PER_SHARED_COUNTER: usize = 8;

/// What a policy asks of the counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterSpec {
    /// The interrupt threshold: a remote node's count minus the home node's above it
    /// raises an interrupt ([`crate::component::Policy::on_counter_interrupt`]); `None`: no
    /// interrupts.
    pub threshold: Option<u32>,
    /// Programs whose pages raise interrupts (indices in run order); empty: every program.
    pub programs: Vec<u32>,
    /// The count at which a counter stops (pegs), as the Origin2000's 11-bit counters peg
    /// at 2047; `None`: counters do not saturate within a run (32 bits).
    pub saturate_at: Option<u32>,
}

/// The counters of every page (see the module documentation).
#[derive(Clone, Debug)]
pub struct PageCounters {
    slots: usize,
    /// Nodes per counter (1, or 8 above 64 nodes).
    group: usize,
    counts: Vec<u32>,
    threshold: u32,
    /// The count a counter stops at.
    max: u32,
    /// Per page: whether it may raise interrupts (its program is enabled).
    armed: Vec<bool>,
}

impl PageCounters {
    /// Heap bytes the counters of `npages` pages on `nodes` nodes take.
    pub fn bytes_needed(npages: u64, nodes: u64) -> u64 {
        let slots = Self::slots_for(nodes as usize) as u64;
        npages.saturating_mul(slots * 4 + 1)
    }

    fn slots_for(nodes: usize) -> usize {
        if nodes <= DEDICATED_COUNTER_NODES {
            nodes
        } else {
            nodes.div_ceil(NODES_PER_SHARED_COUNTER)
        }
    }

    /// Zeroed counters for `npages` pages on `nodes` nodes; `program_of(page)` says which
    /// program a page belongs to (for per-program interrupt enabling).
    pub fn new(
        spec: &CounterSpec,
        npages: usize,
        nodes: usize,
        program_of: impl Fn(usize) -> u32,
    ) -> PageCounters {
        let slots = Self::slots_for(nodes);
        PageCounters {
            slots,
            group: if nodes <= DEDICATED_COUNTER_NODES {
                1
            } else {
                NODES_PER_SHARED_COUNTER
            },
            counts: vec![0; npages * slots],
            threshold: spec.threshold.unwrap_or(u32::MAX),
            max: spec.saturate_at.unwrap_or(u32::MAX),
            armed: (0..npages)
                .map(|p| {
                    spec.threshold.is_some()
                        && (spec.programs.is_empty() || spec.programs.contains(&program_of(p)))
                })
                .collect(),
        }
    }

    #[inline]
    fn slot(&self, vpn: Vpn, n: NodeId) -> usize {
        vpn.idx() * self.slots + n.idx() / self.group
    }

    /// Counts `count` accesses by node `n` to `vpn`, whose copy is on `home`; whether the
    /// count just crossed the interrupt threshold over the home node's.
    #[inline]
    pub fn record(&mut self, vpn: Vpn, n: NodeId, home: NodeId, count: u32) -> bool {
        let i = self.slot(vpn, n);
        let before = self.counts[i];
        let after = before.saturating_add(count).min(self.max);
        self.counts[i] = after;
        let h = self.slot(vpn, home);
        if h == i || !self.armed[vpn.idx()] {
            return false;
        }
        let local = self.counts[h];
        before.saturating_sub(local) <= self.threshold
            && after.saturating_sub(local) > self.threshold
    }

    /// Node `n`'s count of accesses to `vpn` (the shared counter's, above 64 nodes).
    pub fn get(&self, vpn: Vpn, n: NodeId) -> u32 {
        self.counts[self.slot(vpn, n)]
    }

    /// Subtracts `amount` from every counter of `vpn` (down to zero).
    pub fn decay(&mut self, vpn: Vpn, amount: u32) {
        let i = vpn.idx() * self.slots;
        for c in &mut self.counts[i..i + self.slots] {
            *c = c.saturating_sub(amount);
        }
    }

    /// Zeroes every counter of `vpn` (its frame changed).
    pub fn reset(&mut self, vpn: Vpn) {
        self.decay(vpn, u32::MAX);
    }

    /// The interrupt threshold (`u32::MAX`: none).
    pub fn threshold(&self) -> u32 {
        self.threshold
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(nodes: usize, threshold: Option<u32>) -> PageCounters {
        let spec = CounterSpec {
            threshold,
            programs: Vec::new(),
            saturate_at: None,
        };
        PageCounters::new(&spec, 4, nodes, |_| 0)
    }

    #[test]
    fn a_run_adds_its_count_to_the_nodes_counter() {
        let mut c = counters(4, None);
        c.record(Vpn(1), NodeId(2), NodeId(0), 5);
        c.record(Vpn(1), NodeId(2), NodeId(0), 3);
        assert_eq!(c.get(Vpn(1), NodeId(2)), 8);
        assert_eq!(c.get(Vpn(1), NodeId(0)), 0);
    }

    #[test]
    fn remote_counts_exceeding_local_by_the_threshold_interrupt_once() {
        let mut c = counters(4, Some(10));
        c.record(Vpn(0), NodeId(0), NodeId(0), 5);
        assert!(!c.record(Vpn(0), NodeId(1), NodeId(0), 15));
        assert!(c.record(Vpn(0), NodeId(1), NodeId(0), 1));
        assert!(!c.record(Vpn(0), NodeId(1), NodeId(0), 1));
    }

    #[test]
    fn counters_peg_at_their_saturation_and_a_pegged_home_holds_remote_counts_back() {
        let spec = CounterSpec {
            threshold: Some(10),
            programs: Vec::new(),
            saturate_at: Some(20),
        };
        let mut c = PageCounters::new(&spec, 1, 2, |_| 0);
        c.record(Vpn(0), NodeId(0), NodeId(0), 100);
        assert_eq!(c.get(Vpn(0), NodeId(0)), 20);
        // A remote counter pegs at 20 too, never more than 10 above the home's 20.
        assert!(!c.record(Vpn(0), NodeId(1), NodeId(0), 1_000));
        assert_eq!(c.get(Vpn(0), NodeId(1)), 20);
    }

    #[test]
    fn local_accesses_never_interrupt() {
        let mut c = counters(4, Some(0));
        assert!(!c.record(Vpn(0), NodeId(3), NodeId(3), 100));
    }

    #[test]
    fn pages_of_programs_not_enabled_do_not_interrupt() {
        let spec = CounterSpec {
            threshold: Some(0),
            programs: vec![1],
            saturate_at: None,
        };
        let mut c = PageCounters::new(&spec, 4, 2, |p| (p >= 2) as u32);
        assert!(!c.record(Vpn(0), NodeId(1), NodeId(0), 5));
        assert!(c.record(Vpn(2), NodeId(1), NodeId(0), 5));
    }

    #[test]
    fn decay_subtracts_from_every_counter_of_the_page_only() {
        let mut c = counters(2, None);
        c.record(Vpn(0), NodeId(0), NodeId(0), 5);
        c.record(Vpn(0), NodeId(1), NodeId(0), 2);
        c.record(Vpn(1), NodeId(1), NodeId(0), 9);
        c.decay(Vpn(0), 3);
        assert_eq!(c.get(Vpn(0), NodeId(0)), 2);
        assert_eq!(c.get(Vpn(0), NodeId(1)), 0);
        assert_eq!(c.get(Vpn(1), NodeId(1)), 9);
    }

    #[test]
    fn above_64_nodes_eight_nodes_share_a_counter() {
        let mut c = counters(128, None);
        c.record(Vpn(0), NodeId(8), NodeId(0), 2);
        c.record(Vpn(0), NodeId(15), NodeId(0), 3);
        assert_eq!(c.get(Vpn(0), NodeId(9)), 5);
        assert_eq!(c.get(Vpn(0), NodeId(16)), 0);
    }
}
