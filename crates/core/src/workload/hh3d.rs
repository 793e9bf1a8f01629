//! `hh3d`: electrical conduction in cardiac tissue, a Hodgkin-Huxley-style
//! reaction-diffusion model on a 3-D grid (LaRowe, Ellis & Kaplan, SOSP 1991, Table 3).
//!
//! What the paper says: `hh3d` "simulates electrical conduction in cardiac tissue"
//! (Table 3, tuned settings 312.5 ms, 2^16, 10 s, 0, 4, 2^16); on the GP1000 it runs in
//! about 788-801 s (Table 4, tuned and default means); under recent-mod it behaves like
//! `msort`, with little read-only sharing and a slight improvement with replication
//! (sec. 4.1); on the GP1000 it does best with scan-delay = infinity, the scanners' cost
//! outweighing what they find (sec. 4.3, Figure 7). Like the other programs of the suite
//! it comes in a UMA version, which does no NUMA-specific memory management, and a
//! hand-tuned NUMA version that places its shared data (sec. 3). The paper gives neither
//! the program's code, nor its grid, nor its step count.
//!
//! The model chosen here: an n x n x n grid of points, each with a membrane potential V
//! (two copies, read from one and written to the other in each time step, swapping roles)
//! and `gating_words` words of reaction state (Hodgkin-Huxley's gating variables m, h and
//! n: three by default), stored point by point in one array. Thread t owns the slab of
//! planes n t / p .. n (t + 1) / p along the outer dimension (every thread needs a plane).
//! In each time step a thread updates every point of its slab: it reads V at the point and
//! its six neighbours (the 7-point diffusion stencil; a neighbour outside the grid is the
//! point itself, the tissue's sealed, no-flux boundary), reads and writes the point's
//! gating words, computes for `compute_ns_per_point` and writes the point's new V; a
//! barrier ends the step, then its iteration end. So the only data a thread reads that
//! another writes are the two planes of V next to its slab; the gating state is touched
//! by its owner only.
//!
//! References are generated per block of rows of one plane (as many rows as fill a page
//! of V, at least one): runs over the row segments of the plane below, of the plane itself
//! (the centre and its two neighbours along the row, three references a point, and the
//! rows one before and one after), of the plane above, then the block's gating words, one
//! compute operation for the block, the gating words written, and the block's new V. Runs
//! to one page merge, so a step costs a few operations per page a thread touches.
//!
//! Versions, as the paper describes the two styles:
//! - `uma`: plain shared arrays and no placement: the main process (thread 0) writes the
//!   initial state (V's first copy and every gating word) before a barrier, so first-touch
//!   placement puts them on its node (spilling to the nearest node with free frames); V's
//!   second copy is first written by the slabs' owners in the first step.
//! - `numa`: program-directed placement: every page of both copies of V and of the gating
//!   array goes to the node of the thread whose slab holds its first byte, and each thread
//!   writes its own slab's initial state.
//!
//! Series: the setup is part of time step 0's point; time step k ends with iteration end k.
//!
//! Sizes (the defaults; calibrated, not from the paper): a 64^3 grid (single-precision
//! words, so a plane of V is exactly four 4 KB pages and the 16 slabs of the GP1000 preset
//! are four planes each, with no page shared between slabs), three gating words a point
//! (5 MB in all: 1280 pages, within the preset's 16 x 4 MB), 100 us of computation a point
//! (an estimate for an MC68020 with an MC68881 evaluating the gating rate functions; the
//! paper gives no figure) and 425 time steps, chosen so that the UMA version under
//! `larowe`'s defaults on the `gp1000` preset runs about as long as Table 4 reports
//! (787.5 s tuned, 800.8 s default). Measured at these defaults (seed 1): `larowe` 788.8 s
//! (Table 3's `hh3d` preset the same; scan-delay = inf 788.7 s), the NUMA version under
//! `larowe` 785.7 s; static placement 2247.0 s for the UMA version (the main process's
//! setup puts the shared data on node 0 and 70% of references are remote) and 789.7 s for
//! the NUMA version (only the boundary planes are remote). Under `larowe` the neighbours'
//! boundary pages are replicated when read and invalidated when their owner writes them,
//! about 120 replication / coherency-fault pairs a step: the little read-only sharing the
//! paper describes. In the UMA version the setup fills node 0 exactly (V's first copy and
//! the gating array are 1024 pages), so the first page of thread 0's slab of V's second
//! copy, first touched in step 0, lands on node 1 and stays remote (0.1% of references).
//! Shorter scan delays cost more, as in Figure 7, though far less than on the real machine
//! (with Table 3's setting: 10 ms 793.1 s, 100 ms 789.7 s, 1 s 789.1 s, inf 788.7 s): the
//! scanners' cost is the policy's and the machine's model, not this program's. A run takes
//! well under a second of wall time.

use super::common::{checked_ns, hints_by_first_byte, thread_count, Variant};
use super::emit::Emitter;
use crate::component::{Op, Program};
use crate::error::ConfigError;
use crate::estimate::{runs_of, Footprint};
use crate::fields::Fields;
use crate::machine::Machine;
use crate::memory::{ArrayId, Layout};
use crate::types::Ns;
use serde::{Deserialize, Serialize};

/// Parameters of `hh3d`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct Hh3dConfig {
    /// Grid order n: n x n x n points. Default 64 (calibrated; the paper gives no size).
    #[field(min = 1, max = 65_536)]
    pub n: u64,
    /// Threads; default: one per processor. At most n (every thread owns a plane).
    #[field(min = 1, max = crate::estimate::MAX_THREADS)]
    pub threads: Option<u32>,
    /// Time steps. Default 425 (calibrated to Table 4's run time).
    #[field(min = 1, max = 1_000_000)]
    pub steps: u32,
    /// Words of reaction state per point (gating variables), read and written by the
    /// point's owner each step. Default 3 (Hodgkin-Huxley's m, h and n).
    #[field(min = 1, max = 64)]
    pub gating_words: u64,
    /// Element size in bytes (of V and of each gating word). Default 4 (single precision).
    #[field(min = 1, max = 65_536, unit = "bytes")]
    pub elem_bytes: u64,
    /// Computation per point and time step besides its references (the reaction terms
    /// and the diffusion sum), in ns. Default 100000: an estimate, the paper gives none;
    /// calibrated with the step count (the run time is their product), and printed among
    /// larowe91's calibrated inputs.
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub compute_ns_per_point: u64,
    /// `uma` (the main process initialises everything, no placement) or `numa` (each
    /// slab placed on its thread's node and initialised by it). Default uma.
    pub variant: Variant,
}

impl Default for Hh3dConfig {
    fn default() -> Self {
        Hh3dConfig {
            n: 64,
            threads: None,
            steps: 425,
            gating_words: 3,
            elem_bytes: 4,
            compute_ns_per_point: 100_000,
            variant: Variant::Uma,
        }
    }
}

impl crate::registry::Describe for Hh3dConfig {
    const KIND: &'static str = "hh3d";
    const DESCRIPTION: &'static str = "cardiac conduction: 3-D reaction-diffusion stencil, slabs per thread, owner-only gating state, a barrier per step, UMA and NUMA versions (LaRowe, Ellis & Kaplan 1991)";
}

impl crate::component::WorkloadParams for Hh3dConfig {
    fn footprint(&self, machine: &Machine) -> Result<crate::estimate::Footprint, ConfigError> {
        Hh3d::footprint(self, machine)
    }
    fn build(
        &self,
        machine: &Machine,
    ) -> Result<Vec<Box<dyn crate::component::Program>>, ConfigError> {
        Ok(vec![Box::new(Hh3d::new(self, machine)?)])
    }
}

inventory::submit!(crate::component::WorkloadEntry::of::<Hh3dConfig>());

/// A validated plan: the address space and the slabs, before any allocation sized by the
/// parameters.
struct Plan {
    layout: Layout,
    potential: [ArrayId; 2],
    gating: ArrayId,
    threads: u32,
    pages: u64,
    rows_per_block: u64,
}

/// The `hh3d` program.
#[derive(Debug)]
pub struct Hh3d {
    layout: Layout,
    potential: [ArrayId; 2],
    gating: ArrayId,
    n: u64,
    words: u64,
    elem: u64,
    threads: u32,
    steps: u32,
    numa: bool,
    compute_per_point: u64,
    rows_per_block: u64,
    hints: Vec<Option<u32>>,
    /// Whether each thread has done its setup.
    started: Vec<bool>,
    /// The next time step of each thread.
    step: Vec<u32>,
    emit: Emitter,
}

impl Hh3d {
    /// Validates `c` and lays out the address space.
    fn plan(c: &Hh3dConfig, machine: &Machine) -> Result<Plan, ConfigError> {
        c.check_ranges("workload")?;
        let threads = thread_count("workload.threads", c.threads, machine)?;
        if threads as u64 > c.n {
            return Err(ConfigError::new(
                "workload.threads",
                format!(
                    "{threads} threads for {} planes: every thread needs a plane",
                    c.n
                ),
            ));
        }
        let points =
            c.n.checked_mul(c.n)
                .and_then(|p| p.checked_mul(c.n))
                .ok_or_else(|| {
                    ConfigError::new(
                        "workload.n",
                        format!("{0} x {0} x {0} points do not fit in 64 bits", c.n),
                    )
                })?;
        let gating_len = points.checked_mul(c.gating_words).ok_or_else(|| {
            ConfigError::new(
                "workload.gating_words",
                format!(
                    "{} words for each of {points} points do not fit in 64 bits",
                    c.gating_words
                ),
            )
        })?;
        // Every block's computation must fit in simulated time (a block is at most a plane).
        checked_ns(
            "workload.compute_ns_per_point",
            c.compute_ns_per_point,
            c.n * c.n,
        )?;
        let ps = machine.page_size();
        let mut layout = Layout::new();
        let v0 = layout.alloc("potential-0", points, c.elem_bytes, ps);
        let v1 = layout.alloc("potential-1", points, c.elem_bytes, ps);
        let gating = layout.alloc("gating", gating_len, c.elem_bytes, ps);
        let pages = layout.pages_checked(ps, "workload.n")?;
        let row_bytes = c.n.saturating_mul(c.elem_bytes);
        let rows_per_block = (ps / row_bytes.max(1)).clamp(1, c.n);
        Ok(Plan {
            layout,
            potential: [v0, v1],
            gating,
            threads,
            pages,
            rows_per_block,
        })
    }

    /// What the program needs, from its parameters alone.
    pub fn footprint(c: &Hh3dConfig, machine: &Machine) -> Result<Footprint, ConfigError> {
        let plan = Self::plan(c, machine)?;
        let ps = machine.page_size();
        let block_points = plan.rows_per_block.saturating_mul(c.n);
        let blocks = c.n.saturating_mul(c.n.div_ceil(plan.rows_per_block));
        // Per block: seven runs over V (planes below and above, the plane's three, the
        // write), gating read and write, the compute op.
        let per_block = runs_of(block_points, c.elem_bytes, ps)
            .saturating_mul(7)
            .saturating_add(
                runs_of(
                    block_points.saturating_mul(c.gating_words),
                    c.elem_bytes,
                    ps,
                )
                .saturating_mul(2),
            )
            .saturating_add(3);
        let per_step = blocks
            .saturating_mul(per_block)
            .saturating_add(2 * plan.threads as u64);
        let points = c.n.saturating_mul(c.n).saturating_mul(c.n);
        let setup = runs_of(points, c.elem_bytes, ps)
            .saturating_add(runs_of(
                points.saturating_mul(c.gating_words),
                c.elem_bytes,
                ps,
            ))
            .saturating_add(2 * plan.threads as u64);
        Ok(Footprint {
            pages: plan.pages,
            threads: plan.threads,
            ops: per_step
                .saturating_mul(c.steps as u64)
                .saturating_add(setup),
            buffered_ops: per_step
                .div_ceil(plan.threads as u64)
                .saturating_mul(2)
                .max(setup),
            bytes: (plan.threads as u64)
                .saturating_mul(8)
                .saturating_add(match c.variant {
                    Variant::Uma => 0,
                    Variant::Numa => Footprint::hint_bytes(plan.pages),
                }),
            iterations: c.steps as u64,
            size_field: "workload.n",
            ops_field: "workload.steps",
        })
    }

    /// Builds the program for `machine`.
    pub fn new(c: &Hh3dConfig, machine: &Machine) -> Result<Hh3d, ConfigError> {
        let Plan {
            layout,
            potential,
            gating,
            threads,
            pages,
            rows_per_block,
        } = Self::plan(c, machine)?;
        let ps = machine.page_size();
        let mut h = Hh3d {
            layout,
            potential,
            gating,
            n: c.n,
            words: c.gating_words,
            elem: c.elem_bytes,
            threads,
            steps: c.steps,
            numa: c.variant == Variant::Numa,
            compute_per_point: c.compute_ns_per_point,
            rows_per_block,
            hints: Vec::new(),
            started: vec![false; threads as usize],
            step: vec![0; threads as usize],
            emit: Emitter { page_size: ps },
        };
        if h.numa {
            let hints = hints_by_first_byte(pages, ps, |byte| h.owner_of_byte(byte));
            h.hints = hints;
        }
        Ok(h)
    }

    /// First plane of thread `t`'s slab (`t` = threads: one past the last plane).
    pub fn first_plane(&self, t: u32) -> u64 {
        self.n * t as u64 / self.threads as u64
    }

    /// The thread whose slab holds plane `k`.
    pub fn plane_owner(&self, k: u64) -> u32 {
        // The largest t with first_plane(t) <= k.
        let t = ((k + 1) * self.threads as u64 - 1) / self.n;
        t.min(self.threads as u64 - 1) as u32
    }

    /// The thread whose slab holds byte `byte` of the address space, if it lies in an
    /// array.
    fn owner_of_byte(&self, byte: u64) -> Option<u32> {
        let plane = self.n * self.n;
        for (id, per_point) in [
            (self.potential[0], 1),
            (self.potential[1], 1),
            (self.gating, self.words),
        ] {
            let a = self.layout.array(id);
            if byte >= a.base && byte < a.base + a.span() {
                let point = (byte - a.base) / self.elem / per_point;
                return Some(self.plane_owner(point / plane));
            }
        }
        None
    }

    /// References to rows `rows` of plane `k` of array `arr` (one element a point),
    /// `per` each; a row outside the grid is clamped to the nearest edge row (the sealed
    /// boundary's mirrored neighbour), so the count of references never changes.
    fn rows(
        &self,
        out: &mut Vec<Op>,
        arr: ArrayId,
        k: u64,
        rows: std::ops::Range<i64>,
        per: u32,
        write: bool,
    ) {
        let n = self.n as i64;
        let a = self.layout.array(arr);
        let row = |j: i64| a.addr(0, (k * self.n + j as u64) * self.n);
        if rows.start < 0 {
            self.emit.range(out, row(0), self.n, self.elem, per, write);
        }
        let (lo, hi) = (rows.start.max(0), rows.end.min(n));
        if hi > lo {
            self.emit.range(
                out,
                row(lo),
                (hi - lo) as u64 * self.n,
                self.elem,
                per,
                write,
            );
        }
        if rows.end > n {
            self.emit
                .range(out, row(n - 1), self.n, self.elem, per, write);
        }
    }

    /// The gating words of points `from..from + len` (point index over the whole grid).
    fn gating_words(&self, out: &mut Vec<Op>, from: u64, len: u64, write: bool) {
        let a = self.layout.array(self.gating);
        self.emit.range(
            out,
            a.addr(0, from * self.words),
            len * self.words,
            self.elem,
            1,
            write,
        );
    }

    /// Thread `t`'s part of the setup: the initial V (first copy) and gating state of
    /// the whole grid (uma: thread 0) or of its own slab (numa), then a barrier.
    fn setup(&self, t: u32, out: &mut Vec<Op>) {
        let plane = self.n * self.n;
        let planes = if self.numa {
            Some(self.first_plane(t)..self.first_plane(t + 1))
        } else if t == 0 {
            Some(0..self.n)
        } else {
            None
        };
        if let Some(ks) = planes {
            let (from, len) = (ks.start * plane, (ks.end - ks.start) * plane);
            let v = self.layout.array(self.potential[0]);
            self.emit
                .range(out, v.addr(0, from), len, self.elem, 1, true);
            self.gating_words(out, from, len, true);
        }
        out.push(Op::Barrier);
    }

    /// Thread `t`'s time step `s`: every block of rows of every plane of its slab, then
    /// the barrier and the iteration end.
    fn time_step(&self, t: u32, s: u32, out: &mut Vec<Op>) {
        let old = self.potential[(s % 2) as usize];
        let new = self.potential[((s + 1) % 2) as usize];
        let n = self.n;
        for k in self.first_plane(t)..self.first_plane(t + 1) {
            let below = k.saturating_sub(1);
            let above = (k + 1).min(n - 1);
            let mut j0 = 0;
            while j0 < n {
                let j1 = (j0 + self.rows_per_block).min(n);
                let (a, b) = (j0 as i64, j1 as i64);
                self.rows(out, old, below, a..b, 1, false);
                self.rows(out, old, k, a - 1..b - 1, 1, false);
                self.rows(out, old, k, a..b, 3, false);
                self.rows(out, old, k, a + 1..b + 1, 1, false);
                self.rows(out, old, above, a..b, 1, false);
                let points = (j1 - j0) * n;
                let first = (k * n + j0) * n;
                self.gating_words(out, first, points, false);
                if self.compute_per_point > 0 {
                    // Fits: checked for a whole plane when the program was planned.
                    out.push(Op::Compute(Ns(self.compute_per_point * points)));
                }
                self.gating_words(out, first, points, true);
                self.rows(out, new, k, a..b, 1, true);
                j0 = j1;
            }
        }
        out.push(Op::Barrier);
        out.push(Op::IterationEnd(s));
    }
}

impl Program for Hh3d {
    fn name(&self) -> &str {
        "hh3d"
    }
    fn threads(&self) -> u32 {
        self.threads
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn placement_hints(&self) -> &[Option<u32>] {
        &self.hints
    }
    fn next_ops(&mut self, t: u32, _running: &[bool], out: &mut Vec<Op>) {
        let i = t as usize;
        if !self.started[i] {
            self.started[i] = true;
            self.setup(t, out);
            return;
        }
        let s = self.step[i];
        if s >= self.steps {
            return;
        }
        self.step[i] = s + 1;
        self.time_step(t, s, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Vpn;

    /// A 4-node test machine with 64-byte pages (16 words) and room for the grid.
    fn machine() -> Machine {
        let mut m = crate::mm::test_machine_config(4);
        m.frames_per_node = 4096;
        Machine::new(m).unwrap()
    }

    /// An 8^3 grid, 4 threads (two planes each), 2 gating words, 3 steps.
    fn config(variant: Variant) -> Hh3dConfig {
        Hh3dConfig {
            n: 8,
            threads: Some(4),
            steps: 3,
            gating_words: 2,
            compute_ns_per_point: 10,
            variant,
            ..Hh3dConfig::default()
        }
    }

    /// Pages of array `id`: [first, end).
    fn pages_of(h: &Hh3d, id: ArrayId) -> std::ops::Range<u32> {
        let a = h.layout.array(id);
        let ps = h.emit.page_size;
        (a.base / ps) as u32..(a.base + a.span()).div_ceil(ps) as u32
    }

    /// The pages of planes `ks` of a V copy.
    fn v_planes(h: &Hh3d, id: ArrayId, ks: std::ops::Range<u64>) -> std::ops::Range<u32> {
        let a = h.layout.array(id);
        let ps = h.emit.page_size;
        let plane = h.n * h.n * h.elem;
        ((a.base + ks.start * plane) / ps) as u32..(a.base + ks.end * plane).div_ceil(ps) as u32
    }

    /// Thread `t`'s operations of time step 0 (after every thread's setup).
    fn step_ops(h: &mut Hh3d, t: u32) -> Vec<Op> {
        let mut out = Vec::new();
        h.next_ops(t, &[true; 4], &mut out);
        out.clear();
        h.next_ops(t, &[true; 4], &mut out);
        out
    }

    fn refs(ops: &[Op]) -> Vec<(u32, bool, u32)> {
        ops.iter()
            .filter_map(|o| match o {
                Op::Ref {
                    vpn: Vpn(p),
                    write,
                    count,
                    ..
                } => Some((*p, *write, *count)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_threads_references_stay_in_its_slab_except_the_neighbours_boundary_planes() {
        let mut h = Hh3d::new(&config(Variant::Uma), &machine()).unwrap();
        let [v0, v1] = h.potential;
        let gating = pages_of(&h, h.gating);
        // Thread 1 owns planes 2 and 3; it reads planes 1 and 4 of its neighbours.
        let ops = step_ops(&mut h, 1);
        let own_old = v_planes(&h, v0, 2..4);
        let own_new = v_planes(&h, v1, 2..4);
        let halo_below = v_planes(&h, v0, 1..2);
        let halo_above = v_planes(&h, v0, 4..5);
        let (mut below, mut above) = (0, 0);
        for (p, write, count) in refs(&ops) {
            if halo_below.contains(&p) {
                assert!(!write);
                below += count;
            } else if halo_above.contains(&p) {
                assert!(!write);
                above += count;
            } else {
                assert!(
                    own_old.contains(&p) || own_new.contains(&p) || gating.contains(&p),
                    "page {p} is outside thread 1's slab"
                );
            }
        }
        // Each boundary plane is read once per point of the adjacent plane: 64 words.
        assert_eq!((below, above), (64, 64));
        // Seven reads of V a point, one write; every gating word read and written.
        let total: u32 = refs(&ops).iter().map(|r| r.2).sum();
        assert_eq!(total as u64, 128 * (7 + 1 + 2 * 2));
    }

    #[test]
    fn the_gating_state_is_touched_only_by_its_owner() {
        let m = machine();
        let h = Hh3d::new(&config(Variant::Uma), &m).unwrap();
        let gating = pages_of(&h, h.gating);
        let ps = h.emit.page_size;
        let gbase = h.layout.array(h.gating).base;
        let slab_bytes = 2 * 64 * 2 * h.elem;
        for t in 0..4 {
            let mut h = Hh3d::new(&config(Variant::Uma), &m).unwrap();
            let mut all = Vec::new();
            for _ in 0..=3 {
                let mut out = Vec::new();
                h.next_ops(t, &[true; 4], &mut out);
                all.extend(refs(&out));
            }
            let mine = ((gbase + t as u64 * slab_bytes) / ps) as u32
                ..((gbase + (t as u64 + 1) * slab_bytes).div_ceil(ps)) as u32;
            for (p, _, _) in all {
                if gating.contains(&p) && t != 0 {
                    assert!(mine.contains(&p), "thread {t} touched gating page {p}");
                }
            }
        }
        // Thread 0 touches the others' gating pages only in the UMA setup.
        let mut h = Hh3d::new(&config(Variant::Uma), &m).unwrap();
        let mine = (gbase / ps) as u32..((gbase + slab_bytes).div_ceil(ps)) as u32;
        for p in refs(&step_ops(&mut h, 0)).into_iter().map(|r| r.0) {
            assert!(!gating.contains(&p) || mine.contains(&p));
        }
    }

    #[test]
    fn the_numa_version_places_each_slab_on_its_threads_node_and_uma_leaves_placement_to_the_policy(
    ) {
        let m = machine();
        let uma = Hh3d::new(&config(Variant::Uma), &m).unwrap();
        assert!(uma.placement_hints().is_empty());
        let numa = Hh3d::new(&config(Variant::Numa), &m).unwrap();
        let hints = numa.placement_hints();
        assert_eq!(hints.len() as u64, numa.layout.pages(numa.emit.page_size));
        // Planes 2t and 2t + 1 of both V copies are 128 words (8 pages) on thread t.
        for (i, id) in numa.potential.iter().enumerate() {
            for t in 0..4u32 {
                for p in v_planes(&numa, *id, 2 * t as u64..2 * t as u64 + 2) {
                    assert_eq!(hints[p as usize], Some(t), "copy {i}, page {p}");
                }
            }
        }
        // Gating: 2 words a point, so each slab's state is 16 pages.
        let g = pages_of(&numa, numa.gating);
        for p in g.clone() {
            assert_eq!(hints[p as usize], Some((p - g.start) / 16));
        }
        assert!(hints.iter().all(|h| h.is_some()));
    }

    #[test]
    fn uma_setup_is_the_main_process_alone_and_numa_setup_is_every_owner() {
        let m = machine();
        for (variant, writers) in [(Variant::Uma, 1), (Variant::Numa, 4)] {
            let mut h = Hh3d::new(&config(variant), &m).unwrap();
            let mut n = 0;
            for t in 0..4 {
                let mut out = Vec::new();
                h.next_ops(t, &[true; 4], &mut out);
                assert_eq!(out.last(), Some(&Op::Barrier));
                n += usize::from(!refs(&out).is_empty());
            }
            assert_eq!(n, writers);
        }
    }

    #[test]
    fn each_time_step_ends_in_a_barrier_and_its_iteration_end() {
        let mut h = Hh3d::new(&config(Variant::Uma), &machine()).unwrap();
        let mut out = Vec::new();
        h.next_ops(2, &[true; 4], &mut out);
        for s in 0..3 {
            out.clear();
            h.next_ops(2, &[true; 4], &mut out);
            let k = out.len();
            assert_eq!(&out[k - 2..], &[Op::Barrier, Op::IterationEnd(s)]);
        }
        out.clear();
        h.next_ops(2, &[true; 4], &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn parameter_validation_names_the_field() {
        let m = machine();
        let err = |c: Hh3dConfig| Hh3d::new(&c, &m).unwrap_err().to_string();
        let mut c = config(Variant::Uma);
        c.threads = Some(9);
        assert!(err(c).contains("workload.threads"));
        let mut c = config(Variant::Uma);
        c.n = 0;
        assert!(err(c).contains("workload.n"));
        let mut c = config(Variant::Uma);
        c.steps = 0;
        assert!(err(c).contains("workload.steps"));
        let mut c = config(Variant::Uma);
        c.gating_words = 0;
        assert!(err(c).contains("workload.gating_words"));
        let mut c = config(Variant::Uma);
        c.n = 65_536;
        c.threads = Some(4);
        assert!(err(c).contains("workload.n"));
        let mut c = config(Variant::Uma);
        c.compute_ns_per_point = crate::TIME_LIMIT;
        c.n = 64;
        assert!(err(c).contains("workload.compute_ns_per_point"));
        assert!(Hh3d::footprint(&config(Variant::Uma), &m).is_ok());
    }

    #[test]
    fn plane_owner_inverts_first_plane() {
        let m = machine();
        for (n, t) in [(8u64, 4u32), (10, 3), (7, 7), (64, 16), (5, 1)] {
            let c = Hh3dConfig {
                n,
                threads: Some(t),
                ..config(Variant::Uma)
            };
            let h = Hh3d::new(&c, &m).unwrap();
            for k in 0..n {
                let o = h.plane_owner(k);
                assert!(
                    h.first_plane(o) <= k && k < h.first_plane(o + 1),
                    "n {n} t {t} k {k}"
                );
            }
        }
    }

    #[test]
    fn an_engine_run_on_a_small_gp1000_like_machine_completes() {
        use crate::component::{PolicyConfig, SchedulerConfig};
        use crate::policy::{LaroweConfig, StaticConfig};
        use crate::{Engine, EngineOptions};
        // GP1000 costs (Table 2) on 4 nodes with 4 KB pages: a 16^3 grid, 2 steps.
        let mut mc = crate::mm::test_machine_config(4);
        mc.page_size_bytes = 4096;
        mc.frames_per_node = 256;
        mc.costs.local_read_ns = 600;
        mc.costs.local_write_ns = 600;
        mc.costs.remote_read_ns = 7500;
        mc.costs.remote_write_ns = 7500;
        mc.costs.migrate_fixed_ns = 4_500_000;
        mc.costs.replicate_fixed_ns = 4_600_000;
        mc.costs.coherency_fault_fixed_ns = 2_100_000;
        for variant in [Variant::Uma, Variant::Numa] {
            let c = Hh3dConfig {
                n: 16,
                steps: 2,
                variant,
                ..Hh3dConfig::default()
            };
            for policy in [
                PolicyConfig::new(LaroweConfig::default()),
                PolicyConfig::new(StaticConfig::default()),
            ] {
                let machine = Machine::new(mc.clone()).unwrap();
                let program = Hh3d::new(&c, &machine).unwrap();
                let policy = policy.build(&machine).unwrap();
                let stats = Engine::new(
                    machine,
                    vec![Box::new(program) as Box<dyn Program>]
                        .into_iter()
                        .map(|p| p.into())
                        .collect(),
                    policy,
                    SchedulerConfig::default().build(),
                    EngineOptions {
                        seed: 1,
                        per_page: false,
                        series_interval: None,
                        series_by_array: false,
                        budget: None,
                    },
                )
                .unwrap()
                .run()
                .unwrap();
                // 4096 points, 100 us each, 2 steps, 4 threads: at least 0.2 s.
                assert!(stats.makespan_ns >= 2 * 1024 * 100_000);
                let words: u64 = 16 * 16 * 16 * (7 + 1 + 6) * 2;
                assert!(stats.refs.total >= words, "{:?}", stats.refs);
            }
        }
    }
}
