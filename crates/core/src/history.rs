//! Reference-history mechanisms: what the hardware (or software translation) records about
//! which node referenced which page, and what a daemon reads back.

use crate::error::ConfigError;
use crate::types::{NodeId, Vpn};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The mechanism a policy relies on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum HistoryMode {
    /// Nothing is recorded.
    #[default]
    None,
    /// Exact per-node reference counters per page (Holliday's Usage field).
    Usage,
    /// One Referenced bit per node per page, cleared when examined.
    RefBit,
    /// `k`-bit shift registers shifted at each examination with the Referenced bit as the
    /// most significant bit (1 <= k <= 8).
    Aging(u8),
}

impl fmt::Display for HistoryMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HistoryMode::None => write!(f, "none"),
            HistoryMode::Usage => write!(f, "usage"),
            HistoryMode::RefBit => write!(f, "refbit"),
            HistoryMode::Aging(k) => write!(f, "aging:{k}"),
        }
    }
}

impl From<HistoryMode> for String {
    fn from(h: HistoryMode) -> String {
        h.to_string()
    }
}

impl TryFrom<String> for HistoryMode {
    type Error = ConfigError;
    fn try_from(s: String) -> Result<HistoryMode, ConfigError> {
        match s.as_str() {
            "none" => Ok(HistoryMode::None),
            "usage" => Ok(HistoryMode::Usage),
            "refbit" => Ok(HistoryMode::RefBit),
            _ => {
                if let Some(k) = s.strip_prefix("aging:") {
                    match k.parse::<u8>() {
                        Ok(k) if (1..=8).contains(&k) => Ok(HistoryMode::Aging(k)),
                        _ => Err(ConfigError::new(
                            "history",
                            format!("`{s}`: aging takes 1 to 8 bits, e.g. aging:3"),
                        )),
                    }
                } else {
                    Err(ConfigError::new(
                        "history",
                        format!("unknown history `{s}`; expected none, usage, refbit or aging:K"),
                    ))
                }
            }
        }
    }
}

/// Per-page, per-node reference history under one mechanism.
#[derive(Clone, Debug)]
pub struct RefHistory {
    mode: HistoryMode,
    nodes: usize,
    usage: Vec<u32>,
    /// Referenced bits: `words` words per page, bit `n % 64` of word `n / 64` for node `n`.
    refbits: Vec<u64>,
    words: usize,
    aging: Vec<u8>,
    /// Under `Usage` on machines of at most 64 nodes: per page, the nodes whose counter
    /// may not be zero (bit `n`; a counter read and cleared may leave its bit set), so a
    /// daemon reads the few counters that counted rather than one per node.
    counted: Vec<u64>,
}

/// `n` zeros.
fn big<T: Clone + Default>(n: usize) -> Vec<T> {
    crate::bigvec::filled(n, T::default())
}

impl RefHistory {
    /// Empty history for `npages` pages and `nodes` nodes.
    pub fn new(mode: HistoryMode, npages: usize, nodes: usize) -> RefHistory {
        let words = nodes.div_ceil(64);
        let (usage, refbits, aging) = match mode {
            HistoryMode::None => (vec![], vec![], vec![]),
            // Per-page arrays go through `bigvec`: huge pages once they outgrow the TLB's reach.
            HistoryMode::Usage => (big(npages * nodes), vec![], vec![]),
            HistoryMode::RefBit => (vec![], big(npages * words), vec![]),
            HistoryMode::Aging(_) => (vec![], big(npages * words), big(npages * nodes)),
        };
        let counted = if mode == HistoryMode::Usage && nodes <= 64 {
            big(npages)
        } else {
            Vec::new()
        };
        RefHistory {
            mode,
            nodes,
            usage,
            refbits,
            words,
            aging,
            counted,
        }
    }

    /// Heap bytes [`RefHistory::new`] allocates (resource estimates use it).
    pub fn bytes_needed(mode: HistoryMode, npages: u64, nodes: u64) -> u64 {
        let per_node = npages.saturating_mul(nodes);
        match mode {
            HistoryMode::None => 0,
            HistoryMode::Usage => per_node.saturating_mul(4).saturating_add(if nodes <= 64 {
                npages.saturating_mul(8)
            } else {
                0
            }),
            HistoryMode::RefBit => npages.saturating_mul(8 * nodes.div_ceil(64)),
            HistoryMode::Aging(_) => npages
                .saturating_mul(8 * nodes.div_ceil(64))
                .saturating_add(per_node),
        }
    }

    /// The mechanism.
    pub fn mode(&self) -> HistoryMode {
        self.mode
    }

    /// Records `count` references by node `n` to page `p`.
    #[inline(always)]
    pub fn record(&mut self, p: Vpn, n: NodeId, count: u32) {
        match self.mode {
            HistoryMode::None => {}
            HistoryMode::Usage => {
                let c = &mut self.usage[p.idx() * self.nodes + n.idx()];
                *c = c.saturating_add(count);
                if let Some(m) = self.counted.get_mut(p.idx()) {
                    *m |= 1 << n.0;
                }
            }
            HistoryMode::RefBit | HistoryMode::Aging(_) => {
                self.refbits[p.idx() * self.words + (n.idx() >> 6)] |= 1u64 << (n.0 & 63);
            }
        }
    }

    /// Records `times` runs of `count` references by node `n` to page `p` (the same as
    /// that many calls of [`RefHistory::record`]).
    #[inline]
    pub fn record_many(&mut self, p: Vpn, n: NodeId, count: u32, times: u64) {
        let total = (count as u64).saturating_mul(times).min(u32::MAX as u64) as u32;
        self.record(p, n, total);
    }

    /// Page `p`'s usage counters, one per node, and the bits of the nodes whose counter
    /// may not be zero (see `counted`), under [`HistoryMode::Usage`] on a machine of at
    /// most 64 nodes: a daemon examining every entry copy of a page reads and clears the
    /// counters that counted.
    #[inline]
    pub fn usage_row(&mut self, p: Vpn) -> Option<(&mut [u32], &mut u64)> {
        let counted = self.counted.get_mut(p.idx())?;
        Some((
            &mut self.usage[p.idx() * self.nodes..][..self.nodes],
            counted,
        ))
    }

    /// The value a daemon reads for node `n` and page `p` without clearing it: the count
    /// (usage), the bit (refbit) or the aged register with the current bit shifted in
    /// (aging).
    #[inline]
    pub fn peek(&self, p: Vpn, n: NodeId) -> u32 {
        match self.mode {
            HistoryMode::None => 0,
            HistoryMode::Usage => self.usage[p.idx() * self.nodes + n.idx()],
            HistoryMode::RefBit => self.refbit(p, n) as u32,
            HistoryMode::Aging(k) => {
                let bit = self.refbit(p, n) as u8;
                shift_in(self.aging[p.idx() * self.nodes + n.idx()], bit, k) as u32
            }
        }
    }

    /// Reads and clears node `n`'s history of page `p`, as a daemon's examine phase does:
    /// usage counters reset to zero, Referenced bits clear, aging registers shift.
    #[inline]
    pub fn examine(&mut self, p: Vpn, n: NodeId) -> u32 {
        let v = self.peek(p, n);
        match self.mode {
            HistoryMode::None => {}
            HistoryMode::Usage => self.usage[p.idx() * self.nodes + n.idx()] = 0,
            HistoryMode::RefBit => self.clear_refbit(p, n),
            HistoryMode::Aging(_) => {
                self.aging[p.idx() * self.nodes + n.idx()] = v as u8;
                self.clear_refbit(p, n);
            }
        }
        v
    }

    #[inline]
    fn refbit(&self, p: Vpn, n: NodeId) -> bool {
        (self.refbits[p.idx() * self.words + (n.idx() >> 6)] >> (n.0 & 63)) & 1 != 0
    }

    fn clear_refbit(&mut self, p: Vpn, n: NodeId) {
        self.refbits[p.idx() * self.words + (n.idx() >> 6)] &= !(1u64 << (n.0 & 63));
    }
}

/// Shifts `bit` into a `k`-bit register as its most significant bit.
#[inline]
fn shift_in(reg: u8, bit: u8, k: u8) -> u8 {
    let mask = ((1u16 << k) - 1) as u8;
    ((reg >> 1) | (bit << (k - 1))) & mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_counts_and_examine_clears() {
        let mut h = RefHistory::new(HistoryMode::Usage, 2, 2);
        h.record(Vpn(1), NodeId(1), 5);
        h.record(Vpn(1), NodeId(1), 2);
        assert_eq!(h.examine(Vpn(1), NodeId(1)), 7);
        assert_eq!(h.peek(Vpn(1), NodeId(1)), 0);
    }

    #[test]
    fn referenced_bits_of_nodes_beyond_64_are_their_own() {
        let mut h = RefHistory::new(HistoryMode::RefBit, 2, 1024);
        h.record(Vpn(1), NodeId(1000), 1);
        assert_eq!(h.peek(Vpn(1), NodeId(1000)), 1);
        assert_eq!(h.peek(Vpn(1), NodeId(1000 - 64)), 0);
        assert_eq!(h.peek(Vpn(0), NodeId(1000)), 0);
        assert_eq!(h.examine(Vpn(1), NodeId(1000)), 1);
        assert_eq!(h.peek(Vpn(1), NodeId(1000)), 0);
    }

    #[test]
    fn refbit_records_presence_only() {
        let mut h = RefHistory::new(HistoryMode::RefBit, 1, 2);
        h.record(Vpn(0), NodeId(0), 100);
        assert_eq!(h.examine(Vpn(0), NodeId(0)), 1);
        assert_eq!(h.examine(Vpn(0), NodeId(0)), 0);
    }

    #[test]
    fn aging_shifts_referenced_bit_in_as_msb() {
        let mut h = RefHistory::new(HistoryMode::Aging(3), 1, 1);
        h.record(Vpn(0), NodeId(0), 1);
        assert_eq!(h.examine(Vpn(0), NodeId(0)), 0b100);
        assert_eq!(h.examine(Vpn(0), NodeId(0)), 0b010);
        h.record(Vpn(0), NodeId(0), 1);
        assert_eq!(h.examine(Vpn(0), NodeId(0)), 0b101);
        assert_eq!(h.examine(Vpn(0), NodeId(0)), 0b010);
        assert_eq!(h.examine(Vpn(0), NodeId(0)), 0b001);
        assert_eq!(h.examine(Vpn(0), NodeId(0)), 0);
    }

    #[test]
    fn history_names_parse_and_print() {
        for s in ["none", "usage", "refbit", "aging:1", "aging:8"] {
            let h = HistoryMode::try_from(s.to_string()).unwrap();
            assert_eq!(h.to_string(), s);
        }
        assert!(HistoryMode::try_from("aging:9".to_string()).is_err());
        assert!(HistoryMode::try_from("lru".to_string()).is_err());
    }
}
