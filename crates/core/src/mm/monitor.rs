//! The access monitors of today's machines, which today's policies act on: per-node
//! bandwidth accounting (and the loaded latency it drives, [`crate::bandwidth`]),
//! sampled access records (PEBS-like), and the protection times of hinting faults.
//!
//! Each exists only when a machine or a policy asks for it ([`MonitorSpec`]); a run
//! without any keeps no [`Monitors`] at all, and its reference path pays one branch on
//! an absent box.

use crate::bandwidth::{LoadedLatency, NodeMemory};
use crate::types::{NodeId, Ns, Vpn};

/// What a policy asks the mechanism to monitor (see [`crate::component::Policy::monitors`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MonitorSpec {
    /// Sampled access records.
    pub sampling: Option<SamplingSpec>,
    /// Hinting faults: the policy protects pages with [`super::Mm::protect`] and hears
    /// the time since protection at the next access's fault
    /// ([`super::Mm::hinting_fault`]).
    pub hinting: bool,
    /// Per-node bandwidth accounting ([`super::Mm::node_load`]) on a machine without a
    /// loaded-latency model (a machine with one always accounts).
    pub bandwidth: bool,
}

impl MonitorSpec {
    /// Whether nothing is asked.
    pub fn is_empty(&self) -> bool {
        self.sampling.is_none() && !self.hinting && !self.bandwidth
    }
}

/// Sampling as a processor's event-based sampling does it (Intel PEBS): one record every
/// `load_period` loads and every `store_period` stores that reach memory, written to a
/// buffer of `buffer` records that the policy drains ([`super::Mm::take_samples`]); a
/// record that finds the buffer full is lost (and counted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SamplingSpec {
    /// Loads per record (0: loads are not sampled).
    pub load_period: u64,
    /// Stores per record (0: stores are not sampled).
    pub store_period: u64,
    /// Records the buffer holds.
    pub buffer: usize,
}

/// One sampled access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// When the sampled run started.
    pub time: Ns,
    /// The thread (engine-wide id).
    pub thread: u32,
    /// The node the thread ran on.
    pub node: NodeId,
    /// The page.
    pub vpn: Vpn,
    /// The node whose memory served it (the tier).
    pub served_by: NodeId,
    /// A store (else a load).
    pub write: bool,
    /// The access's latency (ns), load included.
    pub latency_ns: u64,
}

/// A node's memory load as the bandwidth accounting sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NodeLoad {
    /// Utilisation of its peak bandwidth over the last windows (smoothed), when the
    /// machine models its peak (0 otherwise).
    pub utilisation: f64,
    /// The latency added to each of its accesses now (ns).
    pub added_ns: u64,
    /// Bytes read from it so far (references and migrations).
    pub bytes_read: u64,
    /// Bytes written to it so far.
    pub bytes_written: u64,
}

/// Per-node bandwidth accounting over windows, and the loaded latency it drives.
#[derive(Clone, Debug)]
pub(crate) struct Bandwidth {
    window: u64,
    window_end: Ns,
    access_bytes: u64,
    /// Per node: the curve (`None`: accounting only, no latency model).
    memories: Option<Vec<NodeMemory>>,
    /// Per node: weighted bytes served in the current window.
    current: Vec<f64>,
    /// Per node: bytes its peak serves in a window.
    capacity: Vec<f64>,
    /// Per node: a written byte's weight.
    write_weight: Vec<f64>,
    /// Per node: smoothed utilisation.
    util: Vec<f64>,
    /// Per node: added latency per access now (ns).
    added: Vec<u64>,
    bytes_read: Vec<u64>,
    bytes_written: Vec<u64>,
}

/// Window length of the accounting on a machine without a loaded-latency model: long
/// enough that a policy's rates are not noise (an estimate).
const ACCOUNTING_WINDOW_NS: u64 = 1_000_000;

impl Bandwidth {
    fn new(nodes: usize, loaded: Option<&LoadedLatency>, word_bytes: u64) -> Bandwidth {
        let (window, access_bytes, memories) = match loaded {
            Some(l) => (l.window_ns, l.access_bytes, Some(l.nodes.clone())),
            None => (ACCOUNTING_WINDOW_NS, word_bytes, None),
        };
        let capacity = match &memories {
            Some(m) => m.iter().map(|n| n.window_bytes(window)).collect(),
            None => vec![f64::INFINITY; nodes],
        };
        let write_weight = match &memories {
            Some(m) => m.iter().map(|n| n.write_weight).collect(),
            None => vec![1.0; nodes],
        };
        Bandwidth {
            window,
            window_end: Ns(window),
            access_bytes,
            memories,
            current: vec![0.0; nodes],
            capacity,
            write_weight,
            util: vec![0.0; nodes],
            added: vec![0; nodes],
            bytes_read: vec![0; nodes],
            bytes_written: vec![0; nodes],
        }
    }

    /// Counts `bytes` read from (or written to) `node` at `t`.
    #[inline]
    fn account(&mut self, node: NodeId, write: bool, bytes: u64, t: Ns) {
        if t >= self.window_end {
            self.roll(t);
        }
        let i = node.idx();
        if write {
            self.bytes_written[i] = self.bytes_written[i].saturating_add(bytes);
            self.current[i] += bytes as f64 * self.write_weight[i];
        } else {
            self.bytes_read[i] = self.bytes_read[i].saturating_add(bytes);
            self.current[i] += bytes as f64;
        }
    }

    /// Ends the windows before the one that holds `t`: each node's utilisation and
    /// latency for the window that holds `t`.
    #[inline(never)]
    fn roll(&mut self, t: Ns) {
        let late = (t.0 - self.window_end.0) / self.window;
        for i in 0..self.current.len() {
            let u = self.current[i] / self.capacity[i];
            // Windows that passed with no access to anything: each halves the load (a
            // power of two, exact); after 64 of them it is gone.
            let idle = if late >= 64 {
                0.0
            } else {
                0.5f64.powi(late as i32)
            };
            let s = (self.util[i] + u) / 2.0 * idle;
            self.util[i] = s;
            self.current[i] = 0.0;
            if let Some(m) = &self.memories {
                self.added[i] = m[i].added_ns(s);
            }
        }
        self.window_end = Ns(self
            .window_end
            .0
            .saturating_add((late + 1).saturating_mul(self.window)));
    }

    fn load(&self, n: NodeId) -> NodeLoad {
        let i = n.idx();
        NodeLoad {
            utilisation: if self.memories.is_some() {
                self.util[i]
            } else {
                0.0
            },
            added_ns: self.added[i],
            bytes_read: self.bytes_read[i],
            bytes_written: self.bytes_written[i],
        }
    }
}

/// Sampled access records.
#[derive(Clone, Debug)]
pub(crate) struct Sampler {
    spec: SamplingSpec,
    /// Loads and stores to go until the next record of each.
    load_left: u64,
    store_left: u64,
    buffer: Vec<Sample>,
    pub(crate) taken: u64,
    pub(crate) lost: u64,
}

impl Sampler {
    fn new(spec: SamplingSpec) -> Sampler {
        Sampler {
            spec,
            load_left: spec.load_period,
            store_left: spec.store_period,
            buffer: Vec::with_capacity(spec.buffer.min(1 << 16)),
            taken: 0,
            lost: 0,
        }
    }

    /// A run of `count` accesses: a record for each period it completes (records of
    /// one run differ in nothing but their count, so one is kept and the rest counted
    /// as taken).
    #[inline]
    fn run(&mut self, s: Sample, count: u32) {
        let (left, period) = if s.write {
            (&mut self.store_left, self.spec.store_period)
        } else {
            (&mut self.load_left, self.spec.load_period)
        };
        if period == 0 {
            return;
        }
        let c = count as u64;
        if c < *left {
            *left -= c;
            return;
        }
        let past = c - *left;
        let records = 1 + past / period;
        *left = period - past % period;
        self.taken += records;
        if self.buffer.len() < self.spec.buffer {
            self.buffer.push(s);
            self.lost += records - 1;
        } else {
            self.lost += records;
        }
    }
}

/// The monitors of a run (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct Monitors {
    pub(crate) bandwidth: Option<Bandwidth>,
    pub(crate) sampler: Option<Sampler>,
    /// Per page: when it was protected for a hinting fault (`Ns::MAX`: it is not).
    pub(crate) protected: Vec<Ns>,
}

impl Monitors {
    /// The monitors `spec` and the machine's loaded-latency model ask for, if any.
    pub(crate) fn new(
        spec: MonitorSpec,
        loaded: Option<&LoadedLatency>,
        nodes: usize,
        npages: usize,
        word_bytes: u64,
    ) -> Option<Box<Monitors>> {
        let loaded = loaded.filter(|l| l.enabled);
        if spec.is_empty() && loaded.is_none() {
            return None;
        }
        Some(Box::new(Monitors {
            bandwidth: (spec.bandwidth || loaded.is_some())
                .then(|| Bandwidth::new(nodes, loaded, word_bytes)),
            sampler: spec.sampling.map(Sampler::new),
            protected: if spec.hinting {
                crate::bigvec::filled(npages, Ns::MAX)
            } else {
                Vec::new()
            },
        }))
    }

    /// Heap bytes the monitors `spec` asks for keep in a run of `pages` pages (for the
    /// run's estimate; the bandwidth accounting's few words a node are not counted).
    pub fn bytes_needed(spec: MonitorSpec, pages: u64) -> u64 {
        let times = if spec.hinting {
            pages.saturating_mul(std::mem::size_of::<Ns>() as u64)
        } else {
            0
        };
        let buffer = spec.sampling.map_or(0, |s| {
            (s.buffer as u64).saturating_mul(std::mem::size_of::<Sample>() as u64)
        });
        times.saturating_add(buffer)
    }

    /// A run of `count` references by `thread` on `node` to `vpn`, served by `target`
    /// at `per_word` each from `t`: accounted, sampled; returns the latency added to
    /// each by the target's load.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn reference_run(
        &mut self,
        thread: u32,
        node: NodeId,
        target: NodeId,
        vpn: Vpn,
        write: bool,
        count: u32,
        per_word: u64,
        t: Ns,
    ) -> u64 {
        let mut added = 0;
        if let Some(b) = &mut self.bandwidth {
            let bytes = (count as u64).saturating_mul(b.access_bytes);
            b.account(target, write, bytes, t);
            added = b.added[target.idx()];
        }
        if let Some(s) = &mut self.sampler {
            s.run(
                Sample {
                    time: t,
                    thread,
                    node,
                    vpn,
                    served_by: target,
                    write,
                    latency_ns: per_word.saturating_add(added),
                },
                count,
            );
        }
        added
    }

    /// A page of `bytes` copied from `from` to `to` at `t` (a migration or replication).
    pub(crate) fn page_copy(&mut self, from: NodeId, to: NodeId, bytes: u64, t: Ns) {
        if let Some(b) = &mut self.bandwidth {
            b.account(from, false, bytes, t);
            b.account(to, true, bytes, t);
        }
    }

    /// Node `n`'s load (all zero without bandwidth accounting).
    pub(crate) fn load(&self, n: NodeId) -> NodeLoad {
        self.bandwidth
            .as_ref()
            .map(|b| b.load(n))
            .unwrap_or_default()
    }

    /// Puts `s` in the sample buffer as it is (the test double's scene).
    pub(crate) fn push_sample(&mut self, s: Sample) {
        if let Some(b) = &mut self.sampler {
            if b.buffer.len() < b.spec.buffer {
                b.buffer.push(s);
            }
        }
    }

    /// Moves the buffered samples to `out`.
    pub(crate) fn take_samples(&mut self, out: &mut Vec<Sample>) {
        if let Some(s) = &mut self.sampler {
            out.append(&mut s.buffer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded() -> LoadedLatency {
        LoadedLatency {
            enabled: true,
            window_ns: 1000,
            access_bytes: 64,
            nodes: vec![
                NodeMemory {
                    peak_gbps: 64.0,
                    write_weight: 1.0,
                    curve: vec![[0.0, 0.0], [1.0, 100.0]],
                };
                2
            ],
        }
    }

    fn monitors(spec: MonitorSpec, l: Option<&LoadedLatency>) -> Box<Monitors> {
        Monitors::new(spec, l, 2, 8, 8).expect("monitors asked for")
    }

    #[test]
    fn nothing_asked_keeps_no_monitors() {
        assert!(Monitors::new(MonitorSpec::default(), None, 2, 8, 8).is_none());
    }

    #[test]
    fn a_loaded_window_raises_the_next_windows_latency() {
        let l = loaded();
        let mut m = monitors(MonitorSpec::default(), Some(&l));
        // 64 GB/s over 1000 ns is 64,000 bytes: 1,000 references of 64 bytes fill it.
        assert_eq!(
            m.reference_run(0, NodeId(0), NodeId(1), Vpn(0), false, 1000, 100, Ns(10)),
            0
        );
        // Smoothed with the idle window before: utilisation 0.5, 50 ns added.
        assert_eq!(
            m.reference_run(0, NodeId(0), NodeId(1), Vpn(0), false, 1, 100, Ns(1500)),
            50
        );
        assert_eq!(m.load(NodeId(0)).added_ns, 0);
    }

    #[test]
    fn idle_windows_let_the_load_decay() {
        let l = loaded();
        let mut m = monitors(MonitorSpec::default(), Some(&l));
        m.reference_run(0, NodeId(0), NodeId(1), Vpn(0), false, 1000, 100, Ns(10));
        // Three windows later: 0.5 halved twice.
        assert_eq!(
            m.reference_run(0, NodeId(0), NodeId(1), Vpn(0), false, 1, 100, Ns(3500)),
            13
        );
    }

    #[test]
    fn a_sampler_records_one_access_in_each_period() {
        let spec = MonitorSpec {
            sampling: Some(SamplingSpec {
                load_period: 10,
                store_period: 0,
                buffer: 100,
            }),
            ..Default::default()
        };
        let mut m = monitors(spec, None);
        for i in 0..25 {
            m.reference_run(0, NodeId(0), NodeId(1), Vpn(i), false, 1, 100, Ns(i as u64));
        }
        let mut out = Vec::new();
        m.take_samples(&mut out);
        let pages: Vec<u32> = out.iter().map(|s| s.vpn.0).collect();
        assert_eq!(pages, vec![9, 19]);
    }

    #[test]
    fn stores_are_not_sampled_at_a_load_period() {
        let spec = MonitorSpec {
            sampling: Some(SamplingSpec {
                load_period: 1,
                store_period: 0,
                buffer: 100,
            }),
            ..Default::default()
        };
        let mut m = monitors(spec, None);
        m.reference_run(0, NodeId(0), NodeId(1), Vpn(1), true, 5, 100, Ns(1));
        let mut out = Vec::new();
        m.take_samples(&mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn a_full_buffer_loses_records_and_counts_them() {
        let spec = MonitorSpec {
            sampling: Some(SamplingSpec {
                load_period: 1,
                store_period: 1,
                buffer: 2,
            }),
            ..Default::default()
        };
        let mut m = monitors(spec, None);
        for i in 0..5 {
            m.reference_run(0, NodeId(0), NodeId(1), Vpn(i), false, 1, 100, Ns(i as u64));
        }
        let s = m.sampler.as_ref().expect("sampling");
        assert_eq!((s.taken, s.lost, s.buffer.len()), (5, 3, 2));
    }

    #[test]
    fn a_sample_carries_the_loaded_latency() {
        let l = loaded();
        let spec = MonitorSpec {
            sampling: Some(SamplingSpec {
                load_period: 1,
                store_period: 1,
                buffer: 10,
            }),
            ..Default::default()
        };
        let mut m = monitors(spec, Some(&l));
        m.reference_run(0, NodeId(0), NodeId(1), Vpn(0), false, 1000, 100, Ns(10));
        m.take_samples(&mut Vec::new());
        m.reference_run(0, NodeId(0), NodeId(1), Vpn(3), false, 1, 100, Ns(1500));
        let mut out = Vec::new();
        m.take_samples(&mut out);
        assert_eq!(out[0].latency_ns, 150);
    }
}
