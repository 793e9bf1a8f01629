//! Loaded latency: a memory's access latency rises with the bandwidth drawn from it.
//!
//! Today's memories serve a reference in their idle latency only while they are lightly
//! loaded; as the bandwidth drawn from a memory approaches its peak, requests queue in
//! its controller and the latency grows steeply (the loaded-latency curves that Intel's
//! Memory Latency Checker measures). Tiered-memory policies are shaped by it: a busy
//! fast tier can serve a reference more slowly than an idle slow one (Vuppalapati &
//! Agarwal, "Tiered Memory Management: Access Latency is the Key!", SOSP 2024).
//!
//! The model. Time is cut into windows of `window_ns`. Each reference that reaches a
//! node's memory moves `access_bytes` (a processor's cache line: every reference of a
//! machine without modelled caches is a memory access), weighted by the node's
//! `write_weight` for writes (a memory whose writes are slower than its reads, such as
//! Optane, spends more of its bandwidth on a written byte). A migration moves a page
//! out of one node and into another. At a window's end each node's utilisation is the
//! weighted bytes it served over what its peak serves in a window, smoothed with the
//! windows before (an exponential average of weight one half, an estimate: a controller
//! does not see a window's load all at once), and the node's latency for the next window
//! is its idle latency plus the curve's added latency at that utilisation. The curve is
//! piecewise linear between its points and extends its last segment beyond them, so a
//! demand above the peak meets a latency that keeps rising: a closed-loop program then
//! draws no more than the peak, as on a real memory.
//!
//! Off unless a machine gives the table; the historical presets do not, and their runs
//! are what they were.

use crate::error::ConfigError;
use crate::fields::Fields;
use serde::{Deserialize, Serialize};

/// A machine's loaded-latency model (see the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[serde(deny_unknown_fields)]
pub struct LoadedLatency {
    /// Whether latency follows load (default true when the table is given).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// The window over which a node's bandwidth is measured (ns).
    #[field(min = 1, max = crate::TIME_LIMIT, unit = "ns")]
    pub window_ns: u64,
    /// Bytes one reference moves to or from memory: a cache line.
    #[serde(default = "line")]
    #[field(min = 1, max = 1_048_576, unit = "bytes")]
    pub access_bytes: u64,
    /// One entry per node: its memory's peak bandwidth and its curve.
    pub nodes: Vec<NodeMemory>,
}

/// One node's memory under load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeMemory {
    /// The bandwidth the memory serves at most, in reads (GB/s, 10^9 bytes a second).
    pub peak_gbps: f64,
    /// A written byte's share of the bandwidth relative to a read byte (1: the same).
    #[serde(default = "one")]
    pub write_weight: f64,
    /// The added latency (ns) at each utilisation (a fraction of the peak), in
    /// increasing utilisation from 0; the latency at utilisation 0 is the machine's idle
    /// cost, so the first point adds 0.
    pub curve: Vec<[f64; 2]>,
}

fn yes() -> bool {
    true
}

fn line() -> u64 {
    64
}

fn one() -> f64 {
    1.0
}

/// Most points a curve may have.
pub const MAX_POINTS: usize = 64;

impl LoadedLatency {
    /// Checks the table against a machine of `nodes` nodes.
    pub fn validate(&self, nodes: usize) -> Result<(), ConfigError> {
        let err =
            |f: String, m: String| Err(ConfigError::new(format!("machine.loaded_latency.{f}"), m));
        self.check_ranges("machine.loaded_latency")?;
        if self.nodes.len() != nodes {
            return err(
                "nodes".into(),
                format!(
                    "{} entries for a machine of {nodes} nodes: give one per node",
                    self.nodes.len()
                ),
            );
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if !(n.peak_gbps.is_finite() && n.peak_gbps > 0.0 && n.peak_gbps <= 1.0e6) {
                return err(
                    format!("nodes[{i}].peak_gbps"),
                    format!("{} is not a bandwidth in (0, 1e6] GB/s", n.peak_gbps),
                );
            }
            if !(n.write_weight.is_finite() && n.write_weight > 0.0 && n.write_weight <= 1000.0) {
                return err(
                    format!("nodes[{i}].write_weight"),
                    format!("{} is not a weight in (0, 1000]", n.write_weight),
                );
            }
            if n.curve.is_empty() || n.curve.len() > MAX_POINTS {
                return err(
                    format!("nodes[{i}].curve"),
                    format!("give 1 to {MAX_POINTS} points [utilisation, added ns]"),
                );
            }
            if n.curve[0] != [0.0, 0.0] {
                return err(
                    format!("nodes[{i}].curve[0]"),
                    "the first point is [0.0, 0.0]: an idle memory serves at the machine's cost"
                        .into(),
                );
            }
            // A measured curve may dip within its noise, so the latencies need only be
            // added ones (not negative); the utilisations order the points.
            for (j, w) in n.curve.windows(2).enumerate() {
                let ([u0, l0], [u1, l1]) = (w[0], w[1]);
                if !(u1.is_finite()
                    && l1.is_finite()
                    && u1 > u0
                    && u1 <= 10.0
                    && (0.0..=1.0e7).contains(&l1))
                {
                    return err(
                        format!("nodes[{i}].curve[{}]", j + 1),
                        format!(
                            "[{u1}, {l1}] after [{u0}, {l0}]: utilisations increase (at most 10), added latencies are in [0, 1e7] ns"
                        ),
                    );
                }
            }
        }
        Ok(())
    }
}

impl NodeMemory {
    /// The added latency (ns) at utilisation `u` (clamped below at 0), rounded to whole
    /// nanoseconds.
    pub fn added_ns(&self, u: f64) -> u64 {
        let u = if u.is_finite() { u.max(0.0) } else { 0.0 };
        let c = &self.curve;
        let last = c.len() - 1;
        // The segment that holds u, or the last one beyond the last point.
        let seg = c
            .windows(2)
            .position(|w| u <= w[1][0])
            .unwrap_or(last.saturating_sub(1));
        let added = if last == 0 {
            0.0
        } else {
            let ([u0, l0], [u1, l1]) = (c[seg], c[seg + 1]);
            l0 + (l1 - l0) * (u - u0) / (u1 - u0)
        };
        added.clamp(0.0, crate::TIME_LIMIT as f64).round() as u64
    }

    /// Bytes the memory serves at its peak in `window_ns`.
    pub fn window_bytes(&self, window_ns: u64) -> f64 {
        self.peak_gbps * window_ns as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(curve: Vec<[f64; 2]>) -> NodeMemory {
        NodeMemory {
            peak_gbps: 100.0,
            write_weight: 1.0,
            curve,
        }
    }

    #[test]
    fn the_curve_interpolates_between_its_points() {
        let n = node(vec![[0.0, 0.0], [0.5, 10.0], [1.0, 110.0]]);
        assert_eq!(n.added_ns(0.0), 0);
        assert_eq!(n.added_ns(0.25), 5);
        assert_eq!(n.added_ns(0.5), 10);
        assert_eq!(n.added_ns(0.75), 60);
    }

    #[test]
    fn the_curve_keeps_rising_beyond_its_last_point() {
        let n = node(vec![[0.0, 0.0], [0.5, 10.0], [1.0, 110.0]]);
        assert_eq!(n.added_ns(1.5), 210);
    }

    #[test]
    fn a_curve_of_one_point_adds_nothing() {
        assert_eq!(node(vec![[0.0, 0.0]]).added_ns(3.0), 0);
    }

    #[test]
    fn a_curve_whose_utilisation_falls_is_refused_naming_the_point() {
        let l = LoadedLatency {
            enabled: true,
            window_ns: 1000,
            access_bytes: 64,
            nodes: vec![node(vec![[0.0, 0.0], [0.5, 10.0], [0.4, 20.0]])],
        };
        let e = l.validate(1).unwrap_err();
        assert_eq!(e.field, "machine.loaded_latency.nodes[0].curve[2]");
    }

    #[test]
    fn one_entry_per_node_is_required() {
        let l = LoadedLatency {
            enabled: true,
            window_ns: 1000,
            access_bytes: 64,
            nodes: vec![node(vec![[0.0, 0.0]])],
        };
        assert_eq!(
            l.validate(2).unwrap_err().field,
            "machine.loaded_latency.nodes"
        );
    }
}
