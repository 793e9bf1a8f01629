//! `surface-wave`: the progression of a two-dimensional surface wave (Holliday, ASPLOS
//! 1989, sections 4.4 and 5.4). A 100 x 100 grid with periodic boundaries (a torus),
//! advanced every time step of 100 ms for 80,000 ms of simulated time (800 steps; the
//! paper's wave speed of 50 mm/s changes the values computed, not the references made).
//! The explicit scheme keeps three time levels: a point's next value reads its own and its
//! four neighbours' current values and its own previous value.
//!
//! The grid is divided into a grid of partitions, one per thread, each thread's partition
//! in its own memory, and — the point of the workload — there are no barriers: every
//! thread runs through its steps as fast as it can, reading whatever its neighbours have
//! written. Each partition's points are stored together by default (the program came from
//! a hypercube, where every process owns its subgrid), and each partition starts on a page,
//! as Holliday lays out Jacobi's vertical pages ("the next one or more segments in this grid
//! partition ... are mapped onto the page", sec. 5.3): a page holds rows of one partition
//! only, so every page has one owner and its neighbours read only its boundary points (a
//! 25 x 25 partition of 4-byte points is 2,500 bytes: 5 pages of 512 bytes, 3 of 1 KB or 2
//! of 2 KB, the last one part padding). `layout = "horizontal"` stores the grids row-major
//! instead, where nearly every page is shared.

use super::common::{checked_ns, hints_by_first_byte, thread_count};
use super::emit::Emitter;
use super::PageLayout;
use crate::component::{Op, Program};
use crate::error::ConfigError;
use crate::estimate::{runs_of, Footprint};
use crate::fields::Fields;
use crate::machine::Machine;
use crate::memory::{ArrayId, Layout};
use crate::types::Ns;
use serde::{Deserialize, Serialize};

/// Parameters of `surface-wave`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct SurfaceWaveConfig {
    /// Points per side. Default 100.
    #[field(min = 3, max = 4_294_967_296)]
    pub n: u64,
    /// Time step in ms. Default 100.
    #[field(min = 1, unit = "ms")]
    pub time_step_ms: u64,
    /// Total simulated time in ms. Default 80,000 (800 steps).
    #[field(min = 1, unit = "ms")]
    pub total_ms: u64,
    /// Partition grid as [rows, columns]; default the most nearly square grid with one
    /// partition per thread.
    pub grid: Option<[u32; 2]>,
    /// Threads; default one per processor.
    #[field(min = 1, max = crate::estimate::MAX_THREADS)]
    pub threads: Option<u32>,
    /// Element size in bytes. Default 4.
    #[field(min = 1, max = 65_536, unit = "bytes")]
    pub elem_bytes: u64,
    /// Private computation per point and step, in ns. Default 0.
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub compute_ns_per_point: u64,
    /// How the grids are stored: `vertical` (default) keeps each partition's points
    /// together, each partition starting on a page (a page holds rows of one partition
    /// only), as a program ported from a hypercube (where every process owns its subgrid,
    /// the paper's source) does; `horizontal` is plain row-major order, where every page
    /// larger than a partition's row segment is shared by several partitions.
    pub layout: PageLayout,
}

impl Default for SurfaceWaveConfig {
    fn default() -> Self {
        SurfaceWaveConfig {
            n: 100,
            time_step_ms: 100,
            total_ms: 80_000,
            grid: None,
            threads: None,
            elem_bytes: 4,
            compute_ns_per_point: 0,
            layout: PageLayout::Vertical,
        }
    }
}

impl crate::registry::Describe for SurfaceWaveConfig {
    const KIND: &'static str = "surface-wave";
    const DESCRIPTION: &'static str = "2-D surface wave on a 100x100 torus, free-running partitions without barriers (Holliday 4.4)";
}

impl crate::component::WorkloadParams for SurfaceWaveConfig {
    fn footprint(&self, machine: &Machine) -> Result<crate::estimate::Footprint, ConfigError> {
        SurfaceWave::footprint(self, machine)
    }
    fn build(
        &self,
        machine: &Machine,
    ) -> Result<Vec<Box<dyn crate::component::Program>>, ConfigError> {
        Ok(vec![Box::new(SurfaceWave::new(self, machine)?)])
    }
}

inventory::submit!(crate::component::WorkloadEntry::of::<SurfaceWaveConfig>());

/// The program.
#[derive(Debug)]
pub struct SurfaceWave {
    layout: Layout,
    grids: [ArrayId; 3],
    n: u64,
    pcol: u64,
    rpp: u64,
    cpp: u64,
    vertical: bool,
    elem: u64,
    steps: u32,
    step: Vec<u32>,
    threads: u32,
    compute_per_row: Ns,
    emit: Emitter,
    hints: Vec<Option<u32>>,
}

impl SurfaceWave {
    /// Validates `c` and lays out the three time levels.
    #[allow(clippy::type_complexity)]
    fn plan(
        c: &SurfaceWaveConfig,
        machine: &Machine,
    ) -> Result<(Layout, [ArrayId; 3], u32, [u32; 2], u64, u64), ConfigError> {
        c.check_ranges("workload")?;
        let steps = c.total_ms / c.time_step_ms;
        if steps == 0 || steps > u32::MAX as u64 {
            return Err(ConfigError::new(
                "workload.total_ms",
                format!(
                    "{} ms in steps of {} ms gives {steps} steps; need 1 to 2^32-1",
                    c.total_ms, c.time_step_ms
                ),
            ));
        }
        let threads = thread_count("workload.threads", c.threads, machine)?;
        let [prow, pcol] = c
            .grid
            .unwrap_or_else(|| super::jacobi::square_grid(threads));
        if prow == 0 || pcol == 0 || prow as u64 * pcol as u64 != threads as u64 {
            return Err(ConfigError::new(
                "workload.grid",
                format!("{prow}x{pcol} partitions for {threads} threads: need one per thread"),
            ));
        }
        if !c.n.is_multiple_of(prow as u64)
            || !c.n.is_multiple_of(pcol as u64)
            || c.n / (pcol as u64) < 2
        {
            return Err(ConfigError::new(
                "workload.n",
                format!(
                    "{} must divide into the {prow}x{pcol} partition grid, at least 2 columns each",
                    c.n
                ),
            ));
        }
        let points = c.n.checked_mul(c.n).ok_or_else(|| {
            ConfigError::new(
                "workload.n",
                format!("{0} x {0} points do not fit in 64 bits", c.n),
            )
        })?;
        let ps = machine.page_size();
        let mut layout = Layout::new();
        // Vertical: one row of the array per partition, each starting on a page.
        let parts = prow as u64 * pcol as u64;
        let mut grid = |name: &str| match c.layout {
            PageLayout::Vertical => {
                layout.alloc_2d(name, parts, points / parts, c.elem_bytes, ps, ps)
            }
            PageLayout::Horizontal => layout.alloc(name, points, c.elem_bytes, ps),
        };
        let grids = [grid("previous"), grid("current"), grid("next")];
        let pages = layout.pages_checked(ps, "workload.n")?;
        checked_ns(
            "workload.compute_ns_per_point",
            c.compute_ns_per_point,
            c.n / pcol as u64,
        )?;
        Ok((layout, grids, threads, [prow, pcol], steps, pages))
    }

    /// What the program needs, from its parameters alone.
    pub fn footprint(c: &SurfaceWaveConfig, machine: &Machine) -> Result<Footprint, ConfigError> {
        let (_, _, threads, [_, pcol], steps, pages) = Self::plan(c, machine)?;
        let ps = machine.page_size();
        let cpp = c.n / pcol as u64;
        // Per row of a partition: nine segments, a compute op.
        let per_row = runs_of(cpp, c.elem_bytes, ps)
            .saturating_add(2)
            .saturating_mul(10);
        let per_step_thread = (c.n / (threads as u64 / pcol as u64).max(1)).saturating_mul(per_row);
        Ok(Footprint {
            pages,
            threads,
            ops: per_step_thread
                .saturating_mul(threads as u64)
                .saturating_mul(steps),
            buffered_ops: per_step_thread,
            bytes: Footprint::hint_bytes(pages).saturating_add(threads as u64 * 4),
            iterations: 0,
            size_field: "workload.n",
            ops_field: "workload.total_ms",
        })
    }

    /// Builds the program for `machine`.
    pub fn new(c: &SurfaceWaveConfig, machine: &Machine) -> Result<Self, ConfigError> {
        let (layout, grids, threads, [prow, pcol], steps, pages) = Self::plan(c, machine)?;
        let ps = machine.page_size();
        let (rpp, cpp) = (c.n / prow as u64, c.n / pcol as u64);
        // Each grid's bytes, padding included, and its row stride (a partition's, vertical).
        let spans: Vec<(u64, u64, u64)> = grids
            .iter()
            .map(|&g| {
                let a = layout.array(g);
                (a.base, a.base + a.rows * a.row_stride, a.row_stride)
            })
            .collect();
        let n = c.n;
        let elem = c.elem_bytes;
        let vertical = c.layout == PageLayout::Vertical;
        let hints = hints_by_first_byte(pages, ps, |byte| {
            let (lo, _, stride) = spans.iter().find(|(lo, hi, _)| byte >= *lo && byte < *hi)?;
            if vertical {
                Some(((byte - lo) / stride) as u32)
            } else {
                let lin = (byte - lo) / elem;
                let (i, j) = (lin / n, lin % n);
                Some(((i / rpp) * pcol as u64 + j / cpp) as u32)
            }
        });
        Ok(SurfaceWave {
            layout,
            grids,
            n,
            pcol: pcol as u64,
            rpp,
            cpp,
            vertical,
            elem,
            steps: steps as u32,
            step: vec![0; threads as usize],
            threads,
            compute_per_row: Ns(c.compute_ns_per_point * cpp), // checked in `plan`
            emit: Emitter { page_size: ps },
            hints,
        })
    }

    /// Byte address of point (i, j) of grid `g`; a range of columns inside one partition
    /// is contiguous in either layout.
    #[inline]
    fn addr(&self, g: ArrayId, i: u64, j: u64) -> u64 {
        let a = self.layout.array(g);
        if self.vertical {
            let part = (i / self.rpp) * self.pcol + j / self.cpp;
            a.addr(part, (i % self.rpp) * self.cpp + j % self.cpp)
        } else {
            a.addr(0, i * self.n + j)
        }
    }

    /// `per` references to elements (i, cols) of grid `g` (no wrap inside the range).
    fn seg(
        &self,
        out: &mut Vec<Op>,
        g: ArrayId,
        i: u64,
        cols: std::ops::Range<u64>,
        per: u32,
        w: bool,
    ) {
        if cols.end > cols.start {
            let len = cols.end - cols.start;
            self.emit
                .range(out, self.addr(g, i, cols.start), len, self.elem, per, w);
        }
    }
}

impl Program for SurfaceWave {
    fn name(&self) -> &str {
        "surface-wave"
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
        let s = self.step[t as usize];
        if s >= self.steps {
            return;
        }
        self.step[t as usize] = s + 1;
        // The three time levels rotate: step s reads levels s and s-1, writes s+1.
        let prev = self.grids[(s % 3) as usize];
        let cur = self.grids[((s + 1) % 3) as usize];
        let next = self.grids[((s + 2) % 3) as usize];
        let n = self.n;
        let (pr, pc) = (t as u64 / self.pcol, t as u64 % self.pcol);
        let (c0, c1) = (pc * self.cpp, (pc + 1) * self.cpp);
        for i in pr * self.rpp..(pr + 1) * self.rpp {
            let up = (i + n - 1) % n;
            let down = (i + 1) % n;
            self.seg(out, cur, up, c0..c1, 1, false);
            // Row i of the current level: the left neighbour outside the segment (wrapping
            // round the torus), the segment's ends twice, its interior three times (self,
            // left of the next, right of the previous), the right neighbour outside.
            let left = (c0 + n - 1) % n;
            self.seg(out, cur, i, left..left + 1, 1, false);
            self.seg(out, cur, i, c0..c0 + 1, 2, false);
            self.seg(out, cur, i, c0 + 1..c1 - 1, 3, false);
            self.seg(out, cur, i, c1 - 1..c1, 2, false);
            let right = c1 % n;
            self.seg(out, cur, i, right..right + 1, 1, false);
            self.seg(out, cur, down, c0..c1, 1, false);
            self.seg(out, prev, i, c0..c1, 1, false);
            if self.compute_per_row > Ns::ZERO {
                out.push(Op::Compute(self.compute_per_row));
            }
            self.seg(out, next, i, c0..c1, 1, true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pages each of the 16 threads writes in one step of a 100 x 100 grid on
    /// 512-byte pages, and the program's placement hints.
    fn written_pages(layout: PageLayout) -> (Vec<Vec<u32>>, Vec<Option<u32>>) {
        let mut m = crate::mm::test_machine_config(16);
        m.page_size_bytes = 512;
        m.frames_per_node = 4096;
        let machine = Machine::new(m).unwrap();
        let c = SurfaceWaveConfig {
            threads: Some(16),
            total_ms: 100,
            layout,
            ..SurfaceWaveConfig::default()
        };
        let mut w = SurfaceWave::new(&c, &machine).unwrap();
        let written = (0..16)
            .map(|t| {
                let mut out = Vec::new();
                w.next_ops(t, &[true; 16], &mut out);
                let mut pages: Vec<u32> = out
                    .iter()
                    .filter_map(|o| match o {
                        Op::Ref {
                            vpn, write: true, ..
                        } => Some(vpn.0),
                        _ => None,
                    })
                    .collect();
                pages.dedup();
                pages
            })
            .collect();
        (written, w.placement_hints().to_vec())
    }

    #[test]
    fn vertical_partitions_start_on_a_page_so_no_page_is_written_by_two_threads() {
        let (written, hints) = written_pages(PageLayout::Vertical);
        for (t, pages) in written.iter().enumerate() {
            // 25 rows of 100 bytes: 5 pages of 512 bytes, each its writer's.
            assert_eq!(pages.len(), 5, "thread {t}: {pages:?}");
            assert!(pages.iter().all(|&p| hints[p as usize] == Some(t as u32)));
        }
        // Three levels of 16 partitions of 5 pages.
        assert_eq!(hints.len(), 3 * 16 * 5);
    }

    #[test]
    fn horizontal_rows_share_pages_between_neighbouring_partitions() {
        let (written, _) = written_pages(PageLayout::Horizontal);
        let shared = written[0].iter().any(|p| written[1].contains(p));
        assert!(shared, "{:?} / {:?}", written[0], written[1]);
    }
}
