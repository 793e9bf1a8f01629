//! What the tiered-memory policies share: the tiers of a machine (the nodes with
//! processors are the fast tier, memory-only nodes the slow one), each fast node's
//! demotion target, Linux's per-node watermarks, and demotion by a clock over Accessed
//! bits standing in for reclaim's LRU lists.

use crate::error::ConfigError;
use crate::machine::Machine;
use crate::mm::Mm;
use crate::types::{NodeId, NodeSet, Vpn};

/// The slow tier of `machine` (its memory-only nodes); an error naming the policy when
/// it has none (`what` says what the policy is).
pub(crate) fn slow_tier(machine: &Machine, what: &str) -> Result<NodeSet, ConfigError> {
    let slow: NodeSet = (0..machine.nodes() as u16)
        .map(NodeId)
        .filter(|&n| !machine.has_procs(n))
        .collect();
    if slow.is_empty() {
        return Err(ConfigError::new(
            "policy.kind",
            format!(
                "{what} needs a slow tier of memory-only nodes; machine `{}` has one tier (set machine.memory_only_nodes)",
                machine.config.preset
            ),
        ));
    }
    Ok(slow)
}

/// Per node: where a fast node demotes to (the nearest slow node by read cost, ties to
/// the lower node, as `next_demotion_node`); slow nodes: none.
pub(crate) fn demotion_targets(machine: &Machine, slow: NodeSet) -> Vec<Option<NodeId>> {
    (0..machine.nodes() as u16)
        .map(|n| {
            let n = NodeId(n);
            if slow.contains(n) {
                return None;
            }
            slow.iter().min_by_key(|&s| (machine.read_ns(n, s), s.0))
        })
        .collect()
}

/// A node's watermarks in frames, as Linux sets them (`__setup_per_zone_wmarks`):
/// `min` from `min_free_kbytes` = `sqrt(16 x node kB)` within 128 kB .. 256 MB
/// (`init_per_zone_wmark_min`, taken per node here), then `low`, `high` and `promo` one
/// step each above it, a step the larger of `min / 4` and `watermark_scale_factor /
/// 10000` of the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Watermarks {
    pub(crate) low: u64,
    pub(crate) high: u64,
    pub(crate) promo: u64,
    /// `pgdat_free_space_enough`'s margin above `promo`: the larger of 1 GiB and a
    /// sixteenth of the node.
    pub(crate) enough: u64,
}

impl Watermarks {
    /// The watermarks of a node of `frames` frames of `page_bytes`.
    pub(crate) fn of(frames: u64, page_bytes: u64, scale_factor: u64) -> Watermarks {
        let kb = frames.saturating_mul(page_bytes) / 1024;
        let min_kb = (kb.saturating_mul(16) as f64).sqrt() as u64;
        let min = (min_kb.clamp(128, 262_144) * 1024).div_ceil(page_bytes);
        let step = (min / 4).max(frames.saturating_mul(scale_factor) / 10_000);
        Watermarks {
            low: min + step,
            high: min + 2 * step,
            promo: min + 3 * step,
            enough: ((1u64 << 30) / page_bytes).max(frames / 16),
        }
    }
}

/// Demotion by reclaim: per fast node, a clock over the pages standing in for the LRU
/// lists (a page whose Accessed bits are set is passed over, its bits cleared, as the
/// lists move a referenced page back to the head).
#[derive(Clone, Debug)]
pub(crate) struct Demoter {
    hand: Vec<u32>,
}

impl Demoter {
    /// A clock for each of `nodes` nodes.
    pub(crate) fn new(nodes: usize) -> Demoter {
        Demoter {
            hand: vec![0; nodes],
        }
    }

    /// Demotes pages of node `n` not accessed since the clock last passed them to `to`
    /// until `n` has `until` free frames, `to` has none left, or two turns of the clock
    /// (the first may only clear Accessed bits) find nothing more; the pages demoted.
    pub(crate) fn demote(&mut self, ctx: &mut dyn Mm, n: NodeId, to: NodeId, until: u64) -> u64 {
        let pages = ctx.npages() as u32;
        if pages == 0 {
            return 0;
        }
        let mut left = 2 * pages as u64;
        let mut demoted = 0;
        while (ctx.free_frames(n) as u64) < until && left > 0 && ctx.free_frames(to) > 0 {
            left -= 1;
            let v = Vpn(self.hand[n.idx()]);
            self.hand[n.idx()] = (v.0 + 1) % pages;
            if ctx.copy_count(v) != 1 || ctx.home(v) != n || ctx.test_and_clear_accessed(v) {
                continue;
            }
            if ctx.migrate(v, to).is_ok() {
                demoted += 1;
            }
        }
        demoted
    }
}
