//! `jacobi`: Jacobi relaxation with a 5-point stencil (Holliday §4.3). Two N x N grids, one
//! read ("old") and one written ("new") in each iteration, swapping roles; a grid of
//! partitions, one per thread; a barrier ends every iteration.
//!
//! The page layout decides what shares a page: `horizontal` is plain row-major order, so a
//! page continues into the row segments of the partitions to the right; `vertical` stores
//! each partition contiguously, so a page continues into the next rows of the same
//! partition. References are generated per row segment and merged per page, in the order
//! a thread sweeping the row would issue them.

use super::common::{checked_ns, hints_by_first_byte, thread_count, Variant};
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

/// How grid elements are laid out on pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageLayout {
    /// Row-major: a page may span several partitions' row segments.
    #[default]
    Horizontal,
    /// Partition-major: a page holds rows of one partition only.
    Vertical,
}

/// What Holliday's convergence-checking process reads each iteration. The paper says only
/// that one of the 17 processors "did only convergence checking"; it does not say what it
/// read.
///
/// The two readings differ sharply under Holliday's daemon. With `pages` (Table 5's
/// setting, 512 B vertical pages, one daemon, blocking 0) the daemon makes 29,956
/// migrations and the run takes 201.7 s against None's 130.1 s: a page's owner touches it
/// only while sweeping its rows, so a daemon pass that saw the checker's one read and none
/// of the owner's pulls the page to the checker, and the owner pulls it back. The paper
/// traced no thrashing and a minor degradation, which `residuals` gives (58 migrations,
/// 130.2 s). `residuals` stays the default until the daemon's model is settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckerReads {
    /// One residual word per worker, written by the worker at the end of its sweep, and
    /// nothing of the grid: a checker that never touches the grid's pages. The default.
    #[default]
    Residuals,
    /// One word of every page of the copy just written: a light reader of every page,
    /// beside each page's owner (a checker that samples the grid).
    Pages,
}

impl CheckerReads {
    fn is_default(&self) -> bool {
        *self == CheckerReads::default()
    }
}

/// Parameters of `jacobi`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct JacobiConfig {
    /// Grid order N. Default 512 (Holliday).
    #[field(min = 1, max = 4_294_967_296)]
    pub n: u64,
    /// Partition grid as [rows, columns] of partitions; default: the most nearly square
    /// grid with one partition per thread (16 threads: 4 x 4, as in Holliday).
    pub grid: Option<[u32; 2]>,
    /// Threads; default: one per processor. Must equal the number of partitions.
    #[field(min = 1, max = crate::estimate::MAX_THREADS)]
    pub threads: Option<u32>,
    /// Iterations. Default 10 (Holliday).
    #[field(min = 1)]
    pub iterations: u32,
    /// Page layout. Default horizontal (row-major).
    pub layout: PageLayout,
    /// Element size in bytes. Default 4 (single-precision floats).
    #[field(min = 1, max = 65_536, unit = "bytes")]
    pub elem_bytes: u64,
    /// Computation per point, in ns, besides the references. Default 0.
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub compute_ns_per_point: u64,
    /// `uma` (no placement) or `numa` (each partition's pages on its thread's node).
    pub variant: Variant,
    /// Add Holliday's convergence-checking process: one more thread that takes no
    /// partition and, after each iteration's barrier, reads what `checker_reads` says.
    /// Default false.
    pub checker: bool,
    /// What the checker reads: `residuals` (a residual word each worker writes, the
    /// default) or `pages` (one word of every page of the copy just written). Left out
    /// of records at its default.
    #[serde(skip_serializing_if = "CheckerReads::is_default")]
    pub checker_reads: CheckerReads,
}

impl Default for JacobiConfig {
    fn default() -> Self {
        JacobiConfig {
            n: 512,
            grid: None,
            threads: None,
            iterations: 10,
            layout: PageLayout::Horizontal,
            elem_bytes: 4,
            compute_ns_per_point: 0,
            variant: Variant::Uma,
            checker: false,
            checker_reads: CheckerReads::Residuals,
        }
    }
}

/// The most nearly square [rows, cols] factorisation of `t`.
pub(crate) fn square_grid(t: u32) -> [u32; 2] {
    let mut r = (t as f64).sqrt() as u32;
    while r > 1 && !t.is_multiple_of(r) {
        r -= 1;
    }
    let r = r.max(1);
    [r, t / r]
}

/// The loop body: chunk c is partition c (row-major over the partition grid).
#[derive(Debug)]
pub struct JacobiBody {
    layout: Layout,
    grids: [ArrayId; 2],
    n: u64,
    prow: u64,
    pcol: u64,
    rpp: u64,
    cpp: u64,
    vertical: bool,
    elem: u64,
    iterations: u32,
    compute_per_row: Ns,
    emit: Emitter,
    /// The residual words the checker reads, when there is a checker.
    residuals: Option<ArrayId>,
}

impl JacobiBody {
    /// Linear element index of (i, j) in a grid.
    #[inline]
    fn lin(&self, i: u64, j: u64) -> u64 {
        if self.vertical {
            let part = (i / self.rpp) * self.pcol + j / self.cpp;
            part * self.rpp * self.cpp + (i % self.rpp) * self.cpp + j % self.cpp
        } else {
            i * self.n + j
        }
    }

    /// The partition holding linear element index `lin`.
    fn owner(&self, lin: u64) -> u32 {
        let (i, j) = if self.vertical {
            let size = self.rpp * self.cpp;
            let part = lin / size;
            let rem = lin % size;
            (
                (part / self.pcol) * self.rpp + rem / self.cpp,
                (part % self.pcol) * self.cpp + rem % self.cpp,
            )
        } else {
            (lin / self.n, lin % self.n)
        };
        ((i / self.rpp) * self.pcol + j / self.cpp) as u32
    }

    /// Emits `per` references to elements (i, j0..j1) of grid `g`; the range lies in one
    /// partition, so it is contiguous in either layout.
    fn seg(
        &self,
        out: &mut Vec<Op>,
        g: ArrayId,
        i: u64,
        cols: std::ops::Range<u64>,
        per: u32,
        write: bool,
    ) {
        let (j0, j1) = (cols.start, cols.end);
        if j1 <= j0 {
            return;
        }
        let base = self.layout.array(g).base;
        self.emit.range(
            out,
            base + self.lin(i, j0) * self.elem,
            j1 - j0,
            self.elem,
            per,
            write,
        );
    }
}

impl LoopBody for JacobiBody {
    fn iterations(&self) -> u32 {
        self.iterations
    }
    fn chunks(&self) -> u32 {
        (self.prow * self.pcol) as u32
    }
    fn chunk(&self, iter: u32, chunk: u32, out: &mut Vec<Op>) {
        for part in 0..self.parts(iter, chunk) {
            self.part(iter, chunk, part, out);
        }
    }
    /// A part per row of the partition, then the residual's when there is one.
    fn parts(&self, _iter: u32, _chunk: u32) -> u32 {
        self.rpp as u32 + u32::from(self.residuals.is_some())
    }
    fn part(&self, iter: u32, chunk: u32, part: u32, out: &mut Vec<Op>) {
        let (pr, pc) = (chunk as u64 / self.pcol, chunk as u64 % self.pcol);
        if part as u64 >= self.rpp {
            if let Some(r) = self.residuals {
                let a = self.layout.array(r);
                self.emit
                    .range(out, a.addr(0, chunk as u64), 1, self.elem, 1, true);
            }
            return;
        }
        let old = self.grids[(iter % 2) as usize];
        let new = self.grids[((iter + 1) % 2) as usize];
        let i = pr * self.rpp + part as u64;
        let (c0, c1) = (pc * self.cpp, (pc + 1) * self.cpp);
        let n = self.n;
        // Up neighbours.
        if i > 0 {
            self.seg(out, old, i - 1, c0..c1, 1, false);
        }
        // Left and right neighbours in row i: the element left of the segment and the two
        // ends are read once, the interior twice, the element right of it once.
        if c0 > 0 {
            self.seg(out, old, i, c0 - 1..c0, 1, false);
        }
        if c1 - c0 >= 2 {
            self.seg(out, old, i, c0..c0 + 1, 1, false);
            self.seg(out, old, i, c0 + 1..c1 - 1, 2, false);
            self.seg(out, old, i, c1 - 1..c1, 1, false);
        }
        if c1 < n {
            self.seg(out, old, i, c1..c1 + 1, 1, false);
        }
        // Down neighbours.
        if i + 1 < n {
            self.seg(out, old, i + 1, c0..c1, 1, false);
        }
        if self.compute_per_row > Ns::ZERO {
            out.push(Op::Compute(self.compute_per_row));
        }
        self.seg(out, new, i, c0..c1, 1, true);
    }
}

impl crate::registry::Describe for JacobiConfig {
    const KIND: &'static str = "jacobi";
    const DESCRIPTION: &'static str = "Jacobi 5-point stencil on two NxN grids, a grid of partitions, a barrier per iteration (Holliday 4.3)";
}

impl crate::component::WorkloadParams for JacobiConfig {
    fn footprint(&self, machine: &Machine) -> Result<crate::estimate::Footprint, ConfigError> {
        Jacobi::footprint(self, machine)
    }
    fn build(
        &self,
        machine: &Machine,
    ) -> Result<Vec<Box<dyn crate::component::Program>>, ConfigError> {
        Ok(vec![Box::new(Jacobi::new(self, machine)?)])
    }
}

inventory::submit!(crate::component::WorkloadEntry::of::<JacobiConfig>());

/// The `jacobi` program.
#[derive(Debug)]
pub struct Jacobi {
    fj: ForkJoin<JacobiBody>,
    hints: Vec<Option<u32>>,
    threads: u32,
    workers: u32,
    checker: Option<CheckerReads>,
    checker_iter: u32,
}

/// A validated plan: the address space and the partition grid, before any allocation.
struct Plan {
    layout: Layout,
    grids: [ArrayId; 2],
    residuals: Option<ArrayId>,
    workers: u32,
    grid: [u32; 2],
    pages: u64,
    compute_per_row: Ns,
}

impl Jacobi {
    /// Validates `c` and lays out the address space (nothing sized by the parameters is
    /// allocated here).
    fn plan(c: &JacobiConfig, machine: &Machine) -> Result<Plan, ConfigError> {
        c.check_ranges("workload")?;
        let threads = thread_count("workload.threads", c.threads, machine)?;
        let [prow, pcol] = match c.grid {
            Some(g) => g,
            None => square_grid(threads),
        };
        if prow == 0 || pcol == 0 {
            return Err(ConfigError::new(
                "workload.grid",
                "both dimensions must be at least 1",
            ));
        }
        if prow as u64 * pcol as u64 != threads as u64 {
            return Err(ConfigError::new(
                "workload.grid",
                format!(
                    "{prow}x{pcol} partitions for {threads} threads: need one partition per thread"
                ),
            ));
        }
        if !c.n.is_multiple_of(prow as u64) || !c.n.is_multiple_of(pcol as u64) {
            return Err(ConfigError::new(
                "workload.n",
                format!(
                    "{} is not divisible by the {prow}x{pcol} partition grid",
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
        let g0 = layout.alloc("old", points, c.elem_bytes, ps);
        let g1 = layout.alloc("new", points, c.elem_bytes, ps);
        let residuals = (c.checker && c.checker_reads == CheckerReads::Residuals)
            .then(|| layout.alloc("residuals", threads as u64, c.elem_bytes, ps));
        let pages = layout.pages_checked(ps, "workload.n")?;
        let compute_per_row = checked_ns(
            "workload.compute_ns_per_point",
            c.compute_ns_per_point,
            c.n / pcol as u64,
        )?;
        Ok(Plan {
            layout,
            grids: [g0, g1],
            residuals,
            workers: threads,
            grid: [prow, pcol],
            pages,
            compute_per_row,
        })
    }

    /// What the program needs, from its parameters alone.
    pub fn footprint(c: &JacobiConfig, machine: &Machine) -> Result<Footprint, ConfigError> {
        let plan = Self::plan(c, machine)?;
        let ps = machine.page_size();
        let cpp = c.n / plan.grid[1] as u64;
        let points = c.n.saturating_mul(c.n);
        // Per row of a partition: up to six stencil segments, a compute op, the write.
        let per_row = runs_of(cpp, c.elem_bytes, ps)
            .saturating_add(2)
            .saturating_mul(7);
        let rows = c.n.saturating_mul(plan.grid[1] as u64);
        let per_iter = rows
            .saturating_mul(per_row)
            .saturating_add(4 * plan.workers as u64);
        let checker = match (c.checker, c.checker_reads) {
            (false, _) => 0,
            (true, CheckerReads::Residuals) => {
                runs_of(plan.workers as u64, c.elem_bytes, ps).saturating_add(3)
            }
            (true, CheckerReads::Pages) => points
                .saturating_mul(c.elem_bytes)
                .div_ceil(ps)
                .saturating_add(3),
        };
        Ok(Footprint {
            pages: plan.pages,
            threads: plan.workers + u32::from(c.checker),
            ops: per_iter
                .saturating_add(checker)
                .saturating_mul(c.iterations as u64),
            buffered_ops: per_iter.div_ceil(plan.workers as u64).saturating_mul(2),
            bytes: match c.variant {
                Variant::Uma => 0,
                Variant::Numa => Footprint::hint_bytes(plan.pages),
            },
            iterations: c.iterations as u64,
            size_field: "workload.n",
            ops_field: "workload.iterations",
        })
    }

    /// Builds the program for `machine`.
    pub fn new(c: &JacobiConfig, machine: &Machine) -> Result<Jacobi, ConfigError> {
        let Plan {
            layout,
            grids: [g0, g1],
            residuals,
            workers,
            grid: [prow, pcol],
            pages,
            compute_per_row,
        } = Self::plan(c, machine)?;
        let ps = machine.page_size();
        let body = JacobiBody {
            layout,
            grids: [g0, g1],
            n: c.n,
            prow: prow as u64,
            pcol: pcol as u64,
            rpp: c.n / prow as u64,
            cpp: c.n / pcol as u64,
            vertical: c.layout == PageLayout::Vertical,
            elem: c.elem_bytes,
            iterations: c.iterations,
            compute_per_row,
            emit: Emitter { page_size: ps },
            residuals,
        };
        let hints = match c.variant {
            Variant::Uma => Vec::new(),
            Variant::Numa => {
                let grids: Vec<(u64, u64)> = [g0, g1]
                    .iter()
                    .map(|&g| {
                        let a = body.layout.array(g);
                        (a.base, a.base + a.span())
                    })
                    .collect();
                // The residual words live with the checker, which reads them all.
                hints_by_first_byte(pages, ps, |byte| {
                    grids
                        .iter()
                        .find(|(lo, hi)| byte >= *lo && byte < *hi)
                        .map(|(lo, _)| body.owner((byte - lo) / body.elem))
                        .or(residuals.map(|_| workers))
                })
            }
        };
        Ok(Jacobi {
            fj: ForkJoin::new(body, workers),
            hints,
            threads: workers + u32::from(c.checker),
            workers,
            checker: c.checker.then_some(c.checker_reads),
            checker_iter: 0,
        })
    }
}

impl Program for Jacobi {
    fn name(&self) -> &str {
        "jacobi"
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
        if t < self.workers {
            self.fj.next_ops(t, running, out);
            return;
        }
        // The convergence checker: wait for the iteration's sweeps, then read what it
        // checks.
        let body = self.fj.body();
        let (k, Some(reads)) = (self.checker_iter, self.checker) else {
            return;
        };
        if k >= body.iterations {
            return;
        }
        self.checker_iter += 1;
        out.push(Op::Barrier);
        match (reads, body.residuals) {
            (CheckerReads::Residuals, Some(r)) => {
                let a = body.layout.array(r);
                body.emit
                    .range(out, a.addr(0, 0), self.workers as u64, body.elem, 1, false);
            }
            _ => {
                // One word of every page of the copy iteration k wrote.
                let a = body.layout.array(body.grids[((k + 1) % 2) as usize]);
                let ps = body.emit.page_size;
                let (first, end) = (a.base / ps, (a.base + a.span()).div_ceil(ps));
                for page in first..end {
                    let at = (page * ps).max(a.base);
                    body.emit.range(out, at, 1, body.elem, 1, false);
                }
            }
        }
        out.push(Op::IterationEnd(k));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checker_ops(reads: CheckerReads) -> (Vec<Op>, u64) {
        let mut m = crate::mm::test_machine_config(4);
        m.frames_per_node = 4096;
        let machine = Machine::new(m).unwrap();
        let c = JacobiConfig {
            n: 16,
            threads: Some(4),
            checker: true,
            checker_reads: reads,
            ..JacobiConfig::default()
        };
        let mut j = Jacobi::new(&c, &machine).unwrap();
        let mut out = Vec::new();
        j.next_ops(4, &[true; 5], &mut out);
        // 16 x 16 four-byte points on 64-byte pages: 16 pages a copy.
        (out, 16)
    }

    #[test]
    fn a_page_sampling_checker_reads_one_word_of_every_page_of_the_copy_just_written() {
        let (out, pages) = checker_ops(CheckerReads::Pages);
        let refs: Vec<(u32, u32)> = out
            .iter()
            .filter_map(|o| match o {
                Op::Ref { vpn, count, .. } => Some((vpn.0, *count)),
                _ => None,
            })
            .collect();
        assert_eq!(refs.len() as u64, pages);
        assert!(refs.iter().all(|&(_, c)| c == 1));
        // Iteration 0 writes the second copy, pages 16..32.
        assert_eq!(refs.first().map(|r| r.0), Some(16));
        assert!(matches!(out.first(), Some(Op::Barrier)));
    }

    #[test]
    fn the_residual_checker_reads_only_the_workers_residual_words() {
        let (out, _) = checker_ops(CheckerReads::Residuals);
        let words: u32 = out
            .iter()
            .map(|o| match o {
                Op::Ref { vpn, count, .. } => {
                    assert!(vpn.0 >= 32, "a grid page was read");
                    *count
                }
                _ => 0,
            })
            .sum();
        assert_eq!(words, 4);
    }

    #[test]
    fn square_grid_prefers_square() {
        assert_eq!(square_grid(16), [4, 4]);
        assert_eq!(square_grid(8), [2, 4]);
        assert_eq!(square_grid(17), [1, 17]);
        assert_eq!(square_grid(1), [1, 1]);
    }
}
