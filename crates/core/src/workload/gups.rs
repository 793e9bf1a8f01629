//! `gups`: random read-modify-write updates with a hot set, the benchmark of tiered-memory
//! managers (HeMem, SOSP 2021, and its memory simulator `memsim`).
//!
//! Each thread performs `updates` updates. An update picks an element of `elem_bytes`
//! bytes, with probability `hot_probability` uniformly from the hot set (`hot_set_bytes`
//! bytes from `hot_set_start_bytes`) and otherwise uniformly from the whole working set,
//! reads it, writes it back, and spends `compute_ns_per_update` of program time (memsim
//! charges 100 ns per update). These are all of memsim's GUPS parameters and those of
//! HeMem's `gups` benchmark (threads, updates, element size, working set, hot set), so the
//! same configuration runs in both (BENCHMARKS.md).
//!
//! With `phases = 2` each thread then performs `updates` updates more with the hot set
//! moved to `second_hot_set_start_bytes` (by default the end of the working set): memsim's
//! experiment, whose `main` (memsim.c, its last version) calls `gups(10000000, 0,
//! hotset_size, 0.9, WORKSET_SIZE)` and then, after resetting its statistics, `gups(10000000,
//! WORKSET_SIZE - hotset_size, hotset_size, 0.9, WORKSET_SIZE)` ("Move hotset up"); its
//! Makefile's hot set is 128 GiB (`HOTSET_SIZE = 137438953472`) of a 512 GiB working set
//! (`SLOWMEM_SIZE`). A thread's random stream goes on from one phase into the next, so the
//! first phase is the same as a run of one phase. The end of each phase is an iteration
//! end (iteration 0, then 1), so the run's series has a point when the last thread
//! finishes each phase: memsim prints each phase's time and accesses apart. A run of one
//! phase has no such point (its series is empty, as before phases existed).
//!
//! With `fault_in_stride_bytes`, thread 0 first reads one word every that many bytes of the
//! working set in address order, before the first phase: memsim's fault-in pass (its `main`
//! reads every 4 KB of the working set, `BASE_PAGE_SIZE`, before the first phase and resets
//! its statistics after), so its pages are placed, and a policy has run, as in memsim when the
//! phases start. The pass's end is an iteration end of every thread (iteration 0, the
//! phases' ends then 1 and 2), and the other threads wait for it at a barrier.
//!
//! What it leaves out: caches and the TLB (memsim charges a page walk on every TLB miss;
//! numaplace models memory, not address translation), and, by default, the benchmark's
//! own initialisation pass (pages are placed at their first touch, or at time 0 by a
//! static policy). The random stream is the program's input: it depends on the workload's
//! `seed`, not on the run's, and each thread draws from a stream of its own.
//!
//! Operations are generated a chunk at a time, so a run of any length holds a few
//! thousand operations per thread.

use crate::component::{Op, Program};
use crate::error::ConfigError;
use crate::estimate::Footprint;
use crate::fields::Fields;
use crate::machine::Machine;
use crate::memory::{ArrayId, Layout};
use crate::types::{Ns, Vpn};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

/// Parameters of `gups`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct GupsConfig {
    /// Threads. Default 1 (memsim's GUPS runs one).
    #[field(min = 1, max = crate::estimate::MAX_THREADS)]
    pub threads: u32,
    /// Updates per thread in each phase. Default 10,000,000 (memsim's count per phase).
    #[field(min = 1, max = 1_000_000_000_000u64)]
    pub updates: u64,
    /// Size of one element, the unit of an update. Default 8.
    #[field(min = 1, max = 1_048_576, unit = "bytes")]
    pub elem_bytes: u64,
    /// The working set. Default 1 GiB.
    #[field(min = 1, max = 1_125_899_906_842_624u64, unit = "bytes")]
    pub working_set_bytes: u64,
    /// The hot set; default a tenth of the working set.
    #[field(min = 1, max = 1_125_899_906_842_624u64, unit = "bytes")]
    pub hot_set_bytes: Option<u64>,
    /// Where the hot set starts in the working set (in the first phase). Default 0
    /// (memsim's first phase).
    #[field(min = 0, max = 1_125_899_906_842_624u64, unit = "bytes")]
    pub hot_set_start_bytes: u64,
    /// Phases: 1, or 2 for memsim's experiment, whose second phase of `updates` updates
    /// per thread moves the hot set to `second_hot_set_start_bytes`. Default 1. Left out
    /// of records at its default.
    #[field(min = 1, max = 2)]
    #[serde(skip_serializing_if = "is_one")]
    pub phases: u32,
    /// Where the hot set starts in the second phase (with `phases = 2`); default at the end
    /// of the working set (`working_set_bytes - hot_set_bytes`, as memsim moves it).
    #[field(min = 0, max = 1_125_899_906_842_624u64, unit = "bytes")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub second_hot_set_start_bytes: Option<u64>,
    /// Before the first phase, thread 0 reads one word every this many bytes of the
    /// working set, in address order: memsim's fault-in pass (memsim.c's `main`, a read
    /// every `BASE_PAGE_SIZE`, 4 KB, of `WORKSET_SIZE`). Default none: no pass. Left out of
    /// records at its default.
    #[field(min = 1, max = 1_125_899_906_842_624u64, unit = "bytes")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault_in_stride_bytes: Option<u64>,
    /// Probability that an update goes to the hot set. Default 0.9.
    #[field(min = 0.0, max = 1.0)]
    pub hot_probability: f64,
    /// Program time per update. Default 100 ns (memsim).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub compute_ns_per_update: u64,
    /// Seed of the program's random stream. Default 1.
    #[field(min = 0)]
    pub seed: u64,
}

impl Default for GupsConfig {
    fn default() -> Self {
        GupsConfig {
            threads: 1,
            updates: 10_000_000,
            elem_bytes: 8,
            working_set_bytes: 1 << 30,
            hot_set_bytes: None,
            hot_set_start_bytes: 0,
            phases: 1,
            second_hot_set_start_bytes: None,
            fault_in_stride_bytes: None,
            hot_probability: 0.9,
            compute_ns_per_update: 100,
            seed: 1,
        }
    }
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

impl crate::registry::Describe for GupsConfig {
    const KIND: &'static str = "gups";
    const DESCRIPTION: &'static str =
        "random read-modify-write updates, a share of them to a hot set (HeMem's GUPS and memsim)";
}

impl crate::component::WorkloadParams for GupsConfig {
    fn footprint(&self, machine: &Machine) -> Result<Footprint, ConfigError> {
        Gups::footprint(self, machine)
    }
    fn build(
        &self,
        machine: &Machine,
    ) -> Result<Vec<Box<dyn crate::component::Program>>, ConfigError> {
        Ok(vec![Box::new(Gups::new(self, machine)?)])
    }
}

inventory::submit!(crate::component::WorkloadEntry::of::<GupsConfig>());

/// Updates generated per call for one thread.
const CHUNK: u64 = 1024;

/// One thread's place in its stream: the fault-in pass's reads left (thread 0's; none
/// for the others), whether its end is behind, then the phase and the updates left in it.
#[derive(Debug)]
struct Stream {
    pass_next: u64,
    pass_reads: u64,
    pass_done: bool,
    phase: u32,
    left: u64,
    rng: Pcg64Mcg,
}

/// A phase's hot range, in elements: the first and how many.
type HotRange = (u64, u64);

/// The validated plan: elements and each phase's hot range, in elements.
struct Plan {
    layout: Layout,
    data: ArrayId,
    pages: u64,
    elems: u64,
    hot: [HotRange; 2],
    /// References of one read or write of an element.
    words: u64,
    ops_per_update: u64,
    /// Reads of the fault-in pass (0: no pass).
    pass_reads: u64,
}

/// The program.
#[derive(Debug)]
pub struct Gups {
    layout: Layout,
    data: ArrayId,
    page_size: u64,
    elem_bytes: u64,
    elems: u64,
    /// Each phase's hot range (the second unused in a run of one phase).
    hot: [HotRange; 2],
    phases: u32,
    /// The fault-in pass's stride (bytes); 0: no pass.
    pass_stride: u64,
    updates: u64,
    hot_probability: f64,
    words: u32,
    compute: Ns,
    streams: Vec<Stream>,
}

impl Gups {
    fn plan(c: &GupsConfig, machine: &Machine) -> Result<Plan, ConfigError> {
        c.check_ranges("workload")?;
        if c.working_set_bytes < c.elem_bytes {
            return Err(ConfigError::new(
                "workload.working_set_bytes",
                format!(
                    "{} bytes hold no element of {} bytes",
                    c.working_set_bytes, c.elem_bytes
                ),
            ));
        }
        let elems = c.working_set_bytes / c.elem_bytes;
        let hot_bytes = c
            .hot_set_bytes
            .unwrap_or(c.working_set_bytes / 10)
            .max(c.elem_bytes);
        if c.hot_set_start_bytes.saturating_add(hot_bytes) > c.working_set_bytes {
            return Err(ConfigError::new(
                "workload.hot_set_bytes",
                format!(
                    "a hot set of {hot_bytes} bytes from byte {} ends past the working set of {} bytes",
                    c.hot_set_start_bytes, c.working_set_bytes
                ),
            ));
        }
        let second_start = match c.second_hot_set_start_bytes {
            Some(_) if c.phases < 2 => {
                return Err(ConfigError::new(
                    "workload.second_hot_set_start_bytes",
                    "is where the second phase's hot set starts; a run of one phase has none \
                     (set workload.phases = 2)",
                ))
            }
            Some(b) if b.saturating_add(hot_bytes) > c.working_set_bytes => {
                return Err(ConfigError::new(
                    "workload.second_hot_set_start_bytes",
                    format!(
                        "a hot set of {hot_bytes} bytes from byte {b} ends past the working set of {} bytes",
                        c.working_set_bytes
                    ),
                ))
            }
            Some(b) => b,
            // memsim: `WORKSET_SIZE - hotset_size`.
            None => c.working_set_bytes - hot_bytes,
        };
        let range = |start: u64| {
            let first = start / c.elem_bytes;
            (first, (hot_bytes / c.elem_bytes).clamp(1, elems - first))
        };
        let hot = [range(c.hot_set_start_bytes), range(second_start)];
        let ps = machine.page_size();
        let mut layout = Layout::new();
        let data = layout.alloc("data", elems, c.elem_bytes, ps);
        let pages = layout.pages_checked(ps, "workload.working_set_bytes")?;
        let words = c.elem_bytes.div_ceil(machine.config.word_size_bytes);
        if words > u32::MAX as u64 {
            return Err(ConfigError::new(
                "workload.elem_bytes",
                "too many words per element",
            ));
        }
        let ops_per_update = 2 + u64::from(c.compute_ns_per_update > 0);
        // Over the elements' bytes (the working set less any part of an element).
        let pass_reads = c
            .fault_in_stride_bytes
            .map_or(0, |stride| (elems * c.elem_bytes).div_ceil(stride));
        Ok(Plan {
            layout,
            data,
            pages,
            elems,
            hot,
            words,
            ops_per_update,
            pass_reads,
        })
    }

    /// What the program needs, from its parameters alone.
    pub fn footprint(c: &GupsConfig, machine: &Machine) -> Result<Footprint, ConfigError> {
        let p = Self::plan(c, machine)?;
        let pass = c.fault_in_stride_bytes.is_some();
        // A run of two phases, or with a fault-in pass, ends each with an iteration end.
        let markers = if c.phases > 1 || pass {
            c.phases as u64 + u64::from(pass)
        } else {
            0
        };
        // The pass's reads (thread 0's) and, with several threads, the barrier after it.
        let pass_ops = p.pass_reads
            + if pass && c.threads > 1 {
                c.threads as u64
            } else {
                0
            };
        Ok(Footprint {
            pages: p.pages,
            threads: c.threads,
            ops: (c.threads as u64)
                .saturating_mul(
                    c.updates
                        .saturating_mul(c.phases as u64)
                        .saturating_mul(p.ops_per_update)
                        .saturating_add(markers),
                )
                .saturating_add(pass_ops),
            buffered_ops: CHUNK * p.ops_per_update + markers.min(1) + u64::from(pass),
            bytes: (c.threads as u64).saturating_mul(std::mem::size_of::<Stream>() as u64),
            iterations: markers,
            size_field: "workload.working_set_bytes",
            ops_field: "workload.updates",
        })
    }

    /// Builds the program for `machine`.
    pub fn new(c: &GupsConfig, machine: &Machine) -> Result<Self, ConfigError> {
        let p = Self::plan(c, machine)?;
        let streams = (0..c.threads)
            .map(|t| Stream {
                pass_next: 0,
                pass_reads: if t == 0 { p.pass_reads } else { 0 },
                pass_done: c.fault_in_stride_bytes.is_none(),
                phase: 0,
                left: c.updates,
                // One stream per thread, all from the workload's seed.
                rng: Pcg64Mcg::seed_from_u64(
                    c.seed ^ (t as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                ),
            })
            .collect();
        Ok(Gups {
            layout: p.layout,
            data: p.data,
            page_size: machine.page_size(),
            elem_bytes: c.elem_bytes,
            elems: p.elems,
            hot: p.hot,
            phases: c.phases,
            pass_stride: c.fault_in_stride_bytes.unwrap_or(0),
            updates: c.updates,
            hot_probability: c.hot_probability,
            words: p.words as u32,
            compute: Ns(c.compute_ns_per_update),
            streams,
        })
    }
}

impl Program for Gups {
    fn name(&self) -> &str {
        "gups"
    }
    fn threads(&self) -> u32 {
        self.streams.len() as u32
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn placement_hints(&self) -> &[Option<u32>] {
        &[]
    }
    fn next_ops(&mut self, t: u32, _running: &[bool], out: &mut Vec<Op>) {
        let base = self.layout.array(self.data).base;
        let threads = self.streams.len();
        let s = &mut self.streams[t as usize];
        if !s.pass_done {
            // memsim's fault-in pass: a read every stride bytes, in address order.
            let n = (s.pass_reads - s.pass_next).min(CHUNK);
            let ps = self.page_size;
            out.extend((s.pass_next..s.pass_next + n).map(|i| {
                let addr = base + i * self.pass_stride;
                Op::Ref {
                    vpn: Vpn((addr / ps) as u32),
                    write: false,
                    count: 1,
                    at: (addr % ps) as u32,
                    span: 0,
                }
            }));
            s.pass_next += n;
            if s.pass_next == s.pass_reads {
                s.pass_done = true;
                out.push(Op::IterationEnd(0));
                if threads > 1 {
                    out.push(Op::Barrier);
                }
            }
            return;
        }
        if s.left == 0 && s.phase + 1 < self.phases {
            // The next phase: as many updates again, the hot set moved.
            s.phase += 1;
            s.left = self.updates;
        }
        let n = s.left.min(CHUNK);
        s.left -= n;
        let (hot_first, hot_len) = self.hot[s.phase as usize];
        let per_update = 2 + usize::from(self.compute > Ns::ZERO);
        // The chunk's operations are written in place (the vector grows once, then each
        // update fills its own slots): no capacity check per operation.
        let start = out.len();
        out.resize(start + n as usize * per_update, Op::Compute(self.compute));
        // Pages are usually a power of two: a shift and a mask instead of a division.
        let ps = self.page_size;
        let shift = ps.is_power_of_two().then(|| ps.trailing_zeros());
        // The stream in a local, so that its state stays in registers through the chunk.
        let mut rng = s.rng.clone();
        let hot = HotDraw::new(self.hot_probability);
        for slots in out[start..].chunks_exact_mut(per_update) {
            let i = if hot.is_hot(&mut rng) {
                hot_first + rng.gen_range(0..hot_len)
            } else {
                rng.gen_range(0..self.elems)
            };
            let addr = base + i * self.elem_bytes;
            let (page, at) = match shift {
                Some(k) => (addr >> k, addr & (ps - 1)),
                None => (addr / ps, addr % ps),
            };
            let vpn = Vpn(page as u32);
            // The element's words are counted on the page of its first byte.
            let span = self.elem_bytes.min(self.page_size - at) as u32;
            // Read, then write back; the computation, if any, is already in the third slot.
            for (slot, write) in slots.iter_mut().zip([false, true]) {
                *slot = Op::Ref {
                    vpn,
                    write,
                    count: self.words,
                    at: at as u32,
                    span,
                };
            }
        }
        s.rng = rng;
        let pass = self.pass_stride > 0;
        if n > 0 && s.left == 0 && (self.phases > 1 || pass) {
            // The phase's last update: its end, a point of the run's series (after the
            // pass's, when there is a pass).
            out.push(Op::IterationEnd(s.phase + u32::from(pass)));
        }
    }
}

/// Whether an update goes to the hot set: the same decision as `rng.gen::<f64>() < p`,
/// without the float. A standard `f64` draw is `k / 2^53` for `k`, the draw's top 53 bits,
/// and `k / 2^53 < p` exactly when `k < ceil(p * 2^53)` (the product is exact: `p` times a
/// power of two).
#[derive(Clone, Copy, Debug)]
struct HotDraw {
    below: u64,
}

impl HotDraw {
    fn new(p: f64) -> HotDraw {
        HotDraw {
            below: (p * (1u64 << 53) as f64).ceil() as u64,
        }
    }

    #[inline(always)]
    fn is_hot(self, rng: &mut impl rand::RngCore) -> bool {
        (rng.next_u64() >> 11) < self.below
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::test_machine_config;

    fn machine() -> Machine {
        Machine::new(test_machine_config(2)).unwrap()
    }

    fn small() -> GupsConfig {
        GupsConfig {
            updates: 5000,
            working_set_bytes: 64 * 100,
            ..GupsConfig::default()
        }
    }

    fn pages_touched(c: &GupsConfig) -> Vec<u64> {
        let m = machine();
        let mut g = Gups::new(c, &m).unwrap();
        let mut counts = vec![0u64; 100];
        let mut out = Vec::new();
        loop {
            out.clear();
            g.next_ops(0, &[true], &mut out);
            if out.is_empty() {
                break;
            }
            for op in &out {
                if let Op::Ref {
                    vpn, write: false, ..
                } = op
                {
                    counts[vpn.idx()] += 1;
                }
            }
        }
        counts
    }

    #[test]
    fn every_update_reads_then_writes_one_element_and_computes() {
        let m = machine();
        let mut g = Gups::new(&small(), &m).unwrap();
        let mut out = Vec::new();
        g.next_ops(0, &[true], &mut out);
        assert_eq!(out.len() as u64, CHUNK * 3);
        match (out[0], out[1], out[2]) {
            (
                Op::Ref {
                    vpn: a,
                    write: false,
                    count: 2,
                    at: x,
                    span: 8,
                },
                Op::Ref {
                    vpn: b,
                    write: true,
                    count: 2,
                    at: y,
                    span: 8,
                },
                Op::Compute(Ns(100)),
            ) => assert_eq!((a, x), (b, y)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_thread_stops_after_its_updates() {
        let m = machine();
        let c = GupsConfig {
            updates: 1500,
            ..small()
        };
        let mut g = Gups::new(&c, &m).unwrap();
        let mut total = 0;
        let mut out = Vec::new();
        loop {
            out.clear();
            g.next_ops(0, &[true], &mut out);
            if out.is_empty() {
                break;
            }
            total += out.len();
        }
        assert_eq!(total, 1500 * 3);
    }

    #[test]
    fn the_hot_set_gets_its_share_of_updates() {
        // Hot set: the first 10 of 100 pages, 90% of updates plus its share of the rest.
        let counts = pages_touched(&small());
        let hot: u64 = counts[..10].iter().sum();
        let share = hot as f64 / 5000.0;
        assert!((share - 0.91).abs() < 0.02, "{share}");
    }

    #[test]
    fn the_hot_draw_decides_as_a_float_draw_would() {
        for p in [0.0, 1e-300, 0.1, 0.5, 0.9, 0.999_999_9, 1.0] {
            let hot = HotDraw::new(p);
            let mut a = Pcg64Mcg::seed_from_u64(7);
            let mut b = a.clone();
            for _ in 0..10_000 {
                assert_eq!(hot.is_hot(&mut a), b.gen::<f64>() < p, "p = {p}");
            }
        }
        // The draws at the boundary itself.
        for k in [0u64, 1, (1 << 53) - 1] {
            let x = k as f64 / (1u64 << 53) as f64;
            for p in [x, f64::from_bits(x.to_bits() + 1)] {
                assert_eq!(k < HotDraw::new(p).below, x < p, "k = {k}, p = {p}");
            }
        }
    }

    #[test]
    fn a_hot_set_past_the_working_set_is_refused_naming_the_field() {
        let c = GupsConfig {
            hot_set_start_bytes: 64 * 95,
            hot_set_bytes: Some(64 * 10),
            ..small()
        };
        let e = Gups::new(&c, &machine()).unwrap_err();
        assert_eq!(e.field, "workload.hot_set_bytes");
    }

    /// Every operation of thread 0, chunk by chunk.
    fn all_ops(c: &GupsConfig) -> Vec<Op> {
        let mut g = Gups::new(c, &machine()).unwrap();
        let (mut all, mut out) = (Vec::new(), Vec::new());
        loop {
            out.clear();
            g.next_ops(0, &[true], &mut out);
            if out.is_empty() {
                return all;
            }
            all.extend_from_slice(&out);
        }
    }

    fn two_phases() -> GupsConfig {
        GupsConfig {
            phases: 2,
            ..small()
        }
    }

    #[test]
    fn the_second_phase_sends_its_hot_share_to_the_hot_set_moved_to_the_end() {
        // Hot set: the last 10 of 100 pages in the second phase (memsim's move).
        let ops = all_ops(&two_phases());
        let end = ops.iter().position(|o| *o == Op::IterationEnd(0)).unwrap();
        let mut counts = [0u64; 100];
        for op in &ops[end + 1..] {
            if let Op::Ref {
                vpn, write: false, ..
            } = op
            {
                counts[vpn.idx()] += 1;
            }
        }
        assert_eq!(counts.iter().sum::<u64>(), 5000);
        let share = counts[90..].iter().sum::<u64>() as f64 / 5000.0;
        assert!((share - 0.91).abs() < 0.02, "{share}");
    }

    #[test]
    fn a_second_hot_set_start_moves_the_second_phase_there() {
        let c = GupsConfig {
            second_hot_set_start_bytes: Some(64 * 40),
            ..two_phases()
        };
        let ops = all_ops(&c);
        let end = ops.iter().position(|o| *o == Op::IterationEnd(0)).unwrap();
        let hot = ops[end + 1..]
            .iter()
            .filter(
                |o| matches!(o, Op::Ref { vpn, write: false, .. } if (40..50).contains(&vpn.idx())),
            )
            .count();
        let share = hot as f64 / 5000.0;
        assert!((share - 0.91).abs() < 0.02, "{share}");
    }

    #[test]
    fn the_first_of_two_phases_is_the_run_of_one_phase() {
        let one = all_ops(&small());
        let two = all_ops(&two_phases());
        assert_eq!(two[..one.len()], one[..]);
        assert_eq!(two[one.len()], Op::IterationEnd(0));
    }

    #[test]
    fn each_of_two_phases_ends_with_an_iteration_end_and_one_phase_has_none() {
        let ends = |c: &GupsConfig| -> Vec<(usize, Op)> {
            all_ops(c)
                .into_iter()
                .enumerate()
                .filter(|(_, o)| matches!(o, Op::IterationEnd(_)))
                .collect()
        };
        assert_eq!(
            ends(&two_phases()),
            [
                (5000 * 3, Op::IterationEnd(0)),
                (2 * 5000 * 3 + 1, Op::IterationEnd(1))
            ]
        );
        assert!(ends(&small()).is_empty());
    }

    #[test]
    fn the_footprint_counts_both_phases_and_their_ends() {
        let m = machine();
        let fp = |c: &GupsConfig| Gups::footprint(c, &m).unwrap();
        assert_eq!(fp(&two_phases()).ops, all_ops(&two_phases()).len() as u64);
        assert_eq!(fp(&small()).ops, all_ops(&small()).len() as u64);
        assert_eq!(
            (fp(&two_phases()).iterations, fp(&small()).iterations),
            (2, 0)
        );
    }

    #[test]
    fn a_second_hot_set_past_the_working_set_is_refused_naming_the_field() {
        let c = GupsConfig {
            second_hot_set_start_bytes: Some(64 * 95),
            ..two_phases()
        };
        let e = Gups::new(&c, &machine()).unwrap_err();
        assert_eq!(e.field, "workload.second_hot_set_start_bytes");
    }

    #[test]
    fn a_second_hot_set_start_without_a_second_phase_is_refused_naming_the_field() {
        let c = GupsConfig {
            second_hot_set_start_bytes: Some(0),
            ..small()
        };
        let e = Gups::new(&c, &machine()).unwrap_err();
        assert_eq!(e.field, "workload.second_hot_set_start_bytes");
    }

    #[test]
    fn phases_other_than_one_or_two_are_refused_naming_the_field() {
        for phases in [0, 3] {
            let c = GupsConfig { phases, ..small() };
            let e = Gups::new(&c, &machine()).unwrap_err();
            assert_eq!(e.field, "workload.phases");
        }
    }

    fn with_pass() -> GupsConfig {
        GupsConfig {
            fault_in_stride_bytes: Some(32),
            ..two_phases()
        }
    }

    #[test]
    fn the_fault_in_pass_reads_every_stride_in_address_order_then_ends_iteration_zero() {
        // 64 * 100 bytes at a stride of 32: 200 reads, two on each page of 64 bytes.
        let ops = all_ops(&with_pass());
        let end = ops.iter().position(|o| *o == Op::IterationEnd(0)).unwrap();
        assert_eq!(end, 200);
        for (i, op) in ops[..end].iter().enumerate() {
            let want = Op::Ref {
                vpn: Vpn(i as u32 / 2),
                write: false,
                count: 1,
                at: (i as u32 % 2) * 32,
                span: 0,
            };
            assert_eq!(*op, want, "read {i}");
        }
    }

    #[test]
    fn after_the_fault_in_pass_the_phases_are_those_of_a_run_without_it_ending_one_and_two() {
        let without = all_ops(&two_phases());
        let with = all_ops(&with_pass());
        let end = with.iter().position(|o| *o == Op::IterationEnd(0)).unwrap();
        let renumbered: Vec<Op> = without
            .iter()
            .map(|o| match o {
                Op::IterationEnd(k) => Op::IterationEnd(k + 1),
                o => *o,
            })
            .collect();
        assert_eq!(with[end + 1..], renumbered[..]);
    }

    #[test]
    fn with_the_fault_in_pass_one_phase_ends_with_an_iteration_end() {
        let c = GupsConfig {
            fault_in_stride_bytes: Some(64),
            ..small()
        };
        let ops = all_ops(&c);
        assert_eq!(ops[100], Op::IterationEnd(0));
        assert_eq!(*ops.last().unwrap(), Op::IterationEnd(1));
    }

    #[test]
    fn other_threads_skip_the_fault_in_pass_and_wait_for_it_at_a_barrier() {
        let c = GupsConfig {
            threads: 2,
            ..with_pass()
        };
        let mut g = Gups::new(&c, &machine()).unwrap();
        let mut out = Vec::new();
        g.next_ops(1, &[true, true], &mut out);
        assert_eq!(out, [Op::IterationEnd(0), Op::Barrier]);
        out.clear();
        g.next_ops(0, &[true, true], &mut out);
        assert_eq!(&out[200..], [Op::IterationEnd(0), Op::Barrier]);
    }

    #[test]
    fn the_footprint_counts_the_fault_in_pass_and_its_end() {
        let m = machine();
        let c = with_pass();
        let fp = Gups::footprint(&c, &m).unwrap();
        assert_eq!(fp.ops, all_ops(&c).len() as u64);
        assert_eq!(fp.iterations, 3);
    }

    #[test]
    fn the_same_seed_gives_the_same_stream_and_another_a_different_one() {
        let a = pages_touched(&small());
        assert_eq!(a, pages_touched(&small()));
        assert_ne!(a, pages_touched(&GupsConfig { seed: 2, ..small() }));
    }
}
