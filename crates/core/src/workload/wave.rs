//! `wave`: the wave equation on a square grid with periodic boundary (LaRowe, Ellis &
//! Kaplan, SOSP 1991, Table 3: "solves the wave equation on a square grid with periodic
//! boundary"; Table 4: about 268-277 s on the GP1000 under the tuned and the default
//! policy settings).
//!
//! What the paper says of `wave` is one line of Table 3, its run times in Table 4, its
//! tuned setting (freeze-window 250 ms, recent-mod 2^16, scan-delay 10 s, sample-passes
//! 10, defrost-trigger 4, trigger-method 2^16) and, around Figures 5 and 6, that it has a
//! clear best freeze-window on the GP1000 near 250 ms because some shared pages must
//! migrate or replicate more than once before they freeze. Everything else here is
//! assumed, and chosen as the plainest program that fits that description:
//!
//! - The explicit leapfrog scheme u' = 2u - u'' + c^2 dt^2/h^2 (u_N + u_S + u_E + u_W -
//!   4u) on an `n` x `n` torus: two grids, the current time level and the previous one;
//!   each step reads the current grid's 5-point stencil and the previous grid's point and
//!   overwrites the previous grid with the new level, so the grids swap roles every step.
//!   With periodic boundary the row above row 0 is row n-1 and the row below row n-1 is
//!   row 0 (the left and right neighbours wrap within a row, so a row's stencil stays in
//!   its three rows).
//! - Rows are dealt to the threads in contiguous strips (`ceil(n / threads)` rows each,
//!   the last strips possibly shorter), one thread per processor; a barrier ends every
//!   time step. A strip's first and last rows are read by the neighbouring threads, the
//!   first strip's by the last thread (periodic boundary): those pages are write-shared
//!   every step, the rest private to their strip's thread.
//! - Initialisation is the program's first iteration (series point 0), then one
//!   iteration per time step.
//!
//! Variants, in the paper's two styles (sec. 3: the UMA version "does no NUMA-specific
//! memory management", the NUMA version is hand-tuned for locality):
//! - `uma`: both grids plain row-major shared arrays; the main thread (thread 0) sets the
//!   initial conditions of both grids, so static first-touch placement puts the whole
//!   problem on its node and the policy must move each strip to its thread.
//! - `numa`: each strip starts on a page of its own and is placed on its thread's node
//!   (program-directed placement); each thread initialises its own strips. Only the rows
//!   next to a strip are read remotely.
//!
//! Sizes (chosen, not from the paper): the default 512 x 512 single-precision grid (1 MB
//! per grid, two 2 KB rows per 4 KB page, 32-row strips of 16 pages on 16 threads) and 640
//! steps take about 266 s of simulated time on the `gp1000` preset under `larowe`'s
//! defaults (Table 4: 268-277 s); under static first-touch placement the `uma` variant
//! takes about 2220 s (everything on the main thread's node) and `numa` about 263 s. The
//! compute cost per point, 20 us, is an estimate for the MC68020/MC68881 at 16.67 MHz: the
//! update is about six floating-point additions and multiplications (psolu's estimate is ~7
//! us per multiply-add with memory operands), beside its seven memory references, which are
//! simulated. The step count was chosen with this cost to land near Table 4's time, so the
//! two together are a calibrated input, printed as such by the larowe91 reproduction.

use super::common::{checked_ns, thread_count, Variant};
use super::emit::Emitter;
use super::fork_join::{ForkJoin, LoopBody};
use crate::component::{Op, Program};
use crate::error::ConfigError;
use crate::estimate::{runs_of, Footprint};
use crate::fields::Fields;
use crate::machine::Machine;
use crate::memory::{ArrayId, Layout};
use crate::types::Ns;
use serde::{Deserialize, Serialize};

/// Parameters of `wave`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct WaveConfig {
    /// Grid order N (an N x N torus). Default 512 (chosen: the paper gives no size).
    #[field(min = 2, max = 1_000_000)]
    pub n: u64,
    /// Time steps, one barrier each. Default 640 (chosen so that a gp1000 run under
    /// larowe's defaults takes about 266 s, near Table 4's 268-277 s).
    #[field(min = 1, max = 100_000_000)]
    pub steps: u32,
    /// Threads; default: one per processor. At most N (every thread a row).
    #[field(min = 1, max = crate::estimate::MAX_THREADS)]
    pub threads: Option<u32>,
    /// Element size in bytes. Default 4 (single-precision floats).
    #[field(min = 1, max = 65_536, unit = "bytes")]
    pub elem_bytes: u64,
    /// Computation per point update besides its seven references, in ns. Default 20000:
    /// an estimate for about six MC68881 operations at 16.67 MHz; the paper gives none.
    /// Calibrated with the step count (the run time is their product): larowe91 prints it
    /// among its calibrated inputs.
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub compute_ns_per_point: u64,
    /// `uma` (plain shared grids, initialised by the main thread) or `numa` (each strip
    /// on its own pages, placed on its thread's node). Default uma.
    pub variant: Variant,
}

impl Default for WaveConfig {
    fn default() -> Self {
        WaveConfig {
            n: 512,
            steps: 640,
            threads: None,
            elem_bytes: 4,
            compute_ns_per_point: 20_000,
            variant: Variant::Uma,
        }
    }
}

impl crate::registry::Describe for WaveConfig {
    const KIND: &'static str = "wave";
    const DESCRIPTION: &'static str = "wave equation on an NxN torus (periodic boundary), row strips per thread, a barrier per time step (LaRowe, Ellis & Kaplan 1991)";
}

impl crate::component::WorkloadParams for WaveConfig {
    fn footprint(&self, machine: &Machine) -> Result<crate::estimate::Footprint, ConfigError> {
        Wave::footprint(self, machine)
    }
    fn build(
        &self,
        machine: &Machine,
    ) -> Result<Vec<Box<dyn crate::component::Program>>, ConfigError> {
        Ok(vec![Box::new(Wave::new(self, machine)?)])
    }
}

inventory::submit!(crate::component::WorkloadEntry::of::<WaveConfig>());

/// The loop body: iteration 0 initialises, iteration k >= 1 is time step k - 1; chunk c
/// is strip c.
#[derive(Debug)]
pub struct WaveBody {
    layout: Layout,
    grids: [ArrayId; 2],
    n: u64,
    /// Rows per strip (the last strips may be shorter).
    rps: u64,
    strips: u32,
    steps: u32,
    uma: bool,
    compute_per_row: Ns,
    emit: Emitter,
}

impl WaveBody {
    /// The rows of strip `s`.
    fn rows(&self, s: u32) -> std::ops::Range<u64> {
        let r0 = (s as u64 * self.rps).min(self.n);
        r0..(r0 + self.rps).min(self.n)
    }

    /// Byte address of element (i, j) of grid `g`.
    fn addr(&self, g: ArrayId, i: u64, j: u64) -> u64 {
        let a = self.layout.array(g);
        a.addr(i / self.rps, (i % self.rps) * self.n + j)
    }

    /// `per` references to every element of row `i` of grid `g`.
    fn row(&self, out: &mut Vec<Op>, g: ArrayId, i: u64, per: u32, write: bool) {
        let elem = self.layout.array(g).elem_bytes;
        self.emit
            .range(out, self.addr(g, i, 0), self.n, elem, per, write);
    }

    /// The update of row `i`: new level into `target` (which holds the previous one) from
    /// the current level in `cur`.
    fn update_row(&self, out: &mut Vec<Op>, cur: ArrayId, target: ArrayId, i: u64) {
        let n = self.n;
        // North neighbours (row i-1, wrapping to n-1), the point and its east and west
        // neighbours (three reads of every element of row i: the row wraps), south
        // neighbours (row i+1, wrapping to 0), the previous level's point.
        self.row(out, cur, (i + n - 1) % n, 1, false);
        self.row(out, cur, i, 3, false);
        self.row(out, cur, (i + 1) % n, 1, false);
        self.row(out, target, i, 1, false);
        if self.compute_per_row > Ns::ZERO {
            out.push(Op::Compute(self.compute_per_row));
        }
        self.row(out, target, i, 1, true);
    }
}

impl LoopBody for WaveBody {
    fn iterations(&self) -> u32 {
        self.steps + 1
    }
    fn chunks(&self) -> u32 {
        self.strips
    }
    fn chunk(&self, iter: u32, chunk: u32, out: &mut Vec<Op>) {
        if iter == 0 {
            // Initial conditions: the main thread writes both grids (uma); each thread
            // writes its own strips (numa).
            let rows = if self.uma {
                if chunk != 0 {
                    return;
                }
                0..self.n
            } else {
                self.rows(chunk)
            };
            for g in self.grids {
                for i in rows.clone() {
                    self.row(out, g, i, 1, true);
                }
            }
            return;
        }
        let s = iter - 1;
        let target = self.grids[(s % 2) as usize];
        let cur = self.grids[((s + 1) % 2) as usize];
        for i in self.rows(chunk) {
            self.update_row(out, cur, target, i);
        }
    }
}

/// The `wave` program.
#[derive(Debug)]
pub struct Wave {
    fj: ForkJoin<WaveBody>,
    hints: Vec<Option<u32>>,
    threads: u32,
}

/// A validated plan.
struct Plan {
    layout: Layout,
    grids: [ArrayId; 2],
    threads: u32,
    rps: u64,
    pages: u64,
    compute_per_row: Ns,
}

impl Wave {
    fn plan(c: &WaveConfig, machine: &Machine) -> Result<Plan, ConfigError> {
        c.check_ranges("workload")?;
        let threads = thread_count("workload.threads", c.threads, machine)?;
        if threads as u64 > c.n {
            return Err(ConfigError::new(
                "workload.threads",
                format!(
                    "{threads} threads for {} rows: every thread needs a row",
                    c.n
                ),
            ));
        }
        let rps = c.n.div_ceil(threads as u64);
        let ps = machine.page_size();
        // uma: plain row-major grids one after the other; numa: every strip starts on a
        // page of its own. Either way a grid is `threads` strips of `rps` rows.
        let (align, strip_align) = match c.variant {
            Variant::Uma => (c.elem_bytes, 1),
            Variant::Numa => (ps, ps),
        };
        let strip_elems = rps.checked_mul(c.n).ok_or_else(|| {
            ConfigError::new("workload.n", format!("{0} x {0} points overflow", c.n))
        })?;
        let mut layout = Layout::new();
        let g0 = layout.alloc_2d(
            "u-even",
            threads as u64,
            strip_elems,
            c.elem_bytes,
            ps.max(align),
            strip_align,
        );
        let g1 = layout.alloc_2d(
            "u-odd",
            threads as u64,
            strip_elems,
            c.elem_bytes,
            align,
            strip_align,
        );
        let pages = layout.pages_checked(ps, "workload.n")?;
        let compute_per_row =
            checked_ns("workload.compute_ns_per_point", c.compute_ns_per_point, c.n)?;
        Ok(Plan {
            layout,
            grids: [g0, g1],
            threads,
            rps,
            pages,
            compute_per_row,
        })
    }

    /// What the program needs, from its parameters alone.
    pub fn footprint(c: &WaveConfig, machine: &Machine) -> Result<Footprint, ConfigError> {
        let plan = Self::plan(c, machine)?;
        let ps = machine.page_size();
        // Per row: five row walks and a compute op.
        let per_row = runs_of(c.n, c.elem_bytes, ps)
            .saturating_mul(5)
            .saturating_add(1);
        let per_step =
            c.n.saturating_mul(per_row)
                .saturating_add(4 * plan.threads as u64);
        let init =
            c.n.saturating_mul(2)
                .saturating_mul(runs_of(c.n, c.elem_bytes, ps));
        let per_thread = plan.rps.saturating_mul(per_row).saturating_add(4);
        Ok(Footprint {
            pages: plan.pages,
            threads: plan.threads,
            ops: per_step.saturating_mul(c.steps as u64).saturating_add(init),
            buffered_ops: per_thread.saturating_mul(2).max(init),
            bytes: ForkJoin::<WaveBody>::bytes(plan.threads).saturating_add(match c.variant {
                Variant::Uma => 0,
                Variant::Numa => Footprint::hint_bytes(plan.pages),
            }),
            iterations: c.steps as u64 + 1,
            size_field: "workload.n",
            ops_field: "workload.steps",
        })
    }

    /// Builds the program for `machine`.
    pub fn new(c: &WaveConfig, machine: &Machine) -> Result<Wave, ConfigError> {
        let Plan {
            layout,
            grids,
            threads,
            rps,
            pages,
            compute_per_row,
        } = Self::plan(c, machine)?;
        let ps = machine.page_size();
        let body = WaveBody {
            layout,
            grids,
            n: c.n,
            rps,
            strips: threads,
            steps: c.steps,
            uma: c.variant == Variant::Uma,
            compute_per_row,
            emit: Emitter { page_size: ps },
        };
        let hints = match c.variant {
            Variant::Uma => Vec::new(),
            Variant::Numa => {
                let spans: Vec<(u64, u64, u64)> = grids
                    .iter()
                    .map(|&g| {
                        let a = body.layout.array(g);
                        (a.base, a.base + a.span(), a.row_stride)
                    })
                    .collect();
                super::common::hints_by_first_byte(pages, ps, |byte| {
                    spans
                        .iter()
                        .find(|(lo, hi, _)| byte >= *lo && byte < *hi)
                        .map(|(lo, _, stride)| ((byte - lo) / stride) as u32)
                })
            }
        };
        Ok(Wave {
            fj: ForkJoin::new(body, threads),
            hints,
            threads,
        })
    }
}

impl Program for Wave {
    fn name(&self) -> &str {
        "wave"
    }
    fn threads(&self) -> u32 {
        self.threads
    }
    fn layout(&self) -> &Layout {
        &self.fj.body().layout
    }
    fn placement_hints(&self) -> &[Option<u32>] {
        &self.hints
    }
    fn next_ops(&mut self, t: u32, running: &[bool], out: &mut Vec<Op>) {
        self.fj.next_ops(t, running, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Vpn;

    fn machine(nodes: u16) -> Machine {
        let mut m = crate::mm::test_machine_config(nodes);
        m.frames_per_node = 4096;
        Machine::new(m).unwrap()
    }

    /// Pages read (false) or written (true) by `ops`.
    fn pages(ops: &[Op], write: bool) -> Vec<u32> {
        let mut v: Vec<u32> = ops
            .iter()
            .filter_map(|o| match o {
                Op::Ref {
                    vpn: Vpn(p),
                    write: w,
                    ..
                } if *w == write => Some(*p),
                _ => None,
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// 16 x 16 four-byte points on 64-byte pages: one row a page, 4 threads of 4 rows;
    /// grid u-even is pages 0..16, u-odd 16..32.
    fn small(variant: Variant) -> Wave {
        let c = WaveConfig {
            n: 16,
            steps: 2,
            threads: Some(4),
            variant,
            ..Default::default()
        };
        Wave::new(&c, &machine(4)).unwrap()
    }

    #[test]
    fn the_first_strip_reads_the_last_row_across_the_periodic_boundary() {
        let w = small(Variant::Uma);
        let mut out = Vec::new();
        // Step 0 reads u-odd (the current level) and overwrites u-even.
        w.fj.body().chunk(1, 0, &mut out);
        let read = pages(&out, false);
        // Rows 15 (above row 0), 0..4 and 4 (below row 3) of u-odd; rows 0..4 of u-even.
        assert!(read.contains(&(16 + 15)), "{read:?}");
        assert_eq!(read, vec![0, 1, 2, 3, 16, 17, 18, 19, 20, 31]);
        assert_eq!(pages(&out, true), vec![0, 1, 2, 3]);
    }

    #[test]
    fn the_last_strip_reads_the_first_row_across_the_periodic_boundary() {
        let w = small(Variant::Uma);
        let mut out = Vec::new();
        // Step 1 reads u-even and overwrites u-odd.
        w.fj.body().chunk(2, 3, &mut out);
        let read = pages(&out, false);
        assert_eq!(read, vec![0, 11, 12, 13, 14, 15, 28, 29, 30, 31]);
        assert_eq!(pages(&out, true), vec![28, 29, 30, 31]);
    }

    #[test]
    fn every_time_step_ends_in_a_barrier_and_an_iteration_end() {
        let mut w = small(Variant::Uma);
        let mut out = Vec::new();
        let mut ends = Vec::new();
        loop {
            out.clear();
            w.next_ops(1, &[true; 4], &mut out);
            if out.is_empty() {
                break;
            }
            let end = out.iter().position(|o| matches!(o, Op::IterationEnd(_)));
            let bar = out.iter().position(|o| *o == Op::Barrier);
            assert!(bar.is_some() && bar < end, "{out:?}");
            if let Some(Op::IterationEnd(k)) = end.map(|e| out[e]) {
                ends.push(k);
            }
        }
        // Initialisation, then the two steps.
        assert_eq!(ends, vec![0, 1, 2]);
    }

    #[test]
    fn the_uma_main_thread_initialises_both_grids() {
        let w = small(Variant::Uma);
        let mut out = Vec::new();
        w.fj.body().chunk(0, 0, &mut out);
        assert_eq!(pages(&out, true), (0..32).collect::<Vec<u32>>());
        out.clear();
        w.fj.body().chunk(0, 2, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn the_numa_variant_places_each_strip_on_its_threads_node() {
        let w = small(Variant::Numa);
        let want: Vec<Option<u32>> = (0..32u32).map(|p| Some((p % 16) / 4)).collect();
        assert_eq!(w.placement_hints(), &want[..]);
        // Each thread initialises only its own strips.
        let mut out = Vec::new();
        w.fj.body().chunk(0, 2, &mut out);
        assert_eq!(pages(&out, true), vec![8, 9, 10, 11, 24, 25, 26, 27]);
    }

    #[test]
    fn numa_strips_start_on_pages_of_their_own() {
        // 10 rows of 10 four-byte points on 64-byte pages, 2 strips of 5 rows: 200 bytes
        // a strip, so a uma strip boundary falls inside a page and a numa one does not.
        let c = WaveConfig {
            n: 10,
            steps: 1,
            threads: Some(2),
            variant: Variant::Numa,
            ..Default::default()
        };
        let w = Wave::new(&c, &machine(2)).unwrap();
        let a = w.fj.body().layout.array(w.fj.body().grids[0]);
        assert_eq!(a.row_stride % 64, 0);
        // Strip 0 on pages 0..4 (200 bytes padded to 256), strip 1 on pages 4..8.
        let hints = &w.placement_hints()[..8];
        assert_eq!(hints, [0, 0, 0, 0, 1, 1, 1, 1].map(Some));
    }

    #[test]
    fn more_threads_than_rows_is_an_error_naming_the_field() {
        let c = WaveConfig {
            n: 4,
            threads: Some(8),
            ..Default::default()
        };
        let e = Wave::new(&c, &machine(8)).unwrap_err();
        assert!(e.to_string().contains("workload.threads"), "{e}");
    }

    #[test]
    fn zero_steps_is_an_error_naming_the_field() {
        let c = WaveConfig {
            n: 16,
            steps: 0,
            ..Default::default()
        };
        let e = Wave::new(&c, &machine(4)).unwrap_err();
        assert!(e.to_string().contains("workload.steps"), "{e}");
    }

    #[test]
    fn a_run_on_a_small_gp1000_like_machine_completes() {
        let stats = crate::workload::common::gp1000_like_run(
            crate::component::WorkloadConfig::new(WaveConfig {
                n: 64,
                steps: 4,
                ..Default::default()
            }),
        );
        assert!(stats.makespan_ns > 0);
    }
}
