//! `psolu`: block chaotic relaxation for Ax = b (LaRowe, Wilkes & Ellis, PPoPP 1991,
//! sections 3 and 4; Wilkes's BLITPAK II).
//!
//! The system is the Dirichlet problem for Laplace's equation on a square grid of
//! `grid` x `grid` interior points (the 5-point matrix of order `grid`^2), with boundary
//! values g(x, y) = x y (harmonic, so the grid solution is exactly x y). A block of the
//! matrix is one grid row: its diagonal block is tridiagonal(-1, 4, -1), factored once
//! (LU, two numbers per unknown), and its neighbours in the block row are -I. Blocks are
//! dealt to the iterating processors by the static load balancing the paper describes:
//! from the estimated work of each block (its multiply-adds per iteration), contiguous
//! runs of blocks with the smallest largest load (the paper does not say whether a
//! processor's blocks are adjacent; adjacent blocks make one processor's sweep Gauss-Seidel
//! and staleness grow only at the runs' ends, as its mild growth of iterations with
//! processors suggests). Each iterating processor then sweeps over its blocks in order,
//! again and again, without synchronising with the others: a block's update reads the
//! neighbouring rows of x as they are when it starts, solves with the block's factors
//! and writes the block's row of x when it ends. Thread 0 is the main process: it builds
//! the data, then becomes the convergence checker, continuously computing ||Ax - b||
//! over the whole grid; when the residual has fallen by `tolerance_digits` decimal
//! digits relative to ||b||, it raises the done flag, which every processor reads before
//! each block.
//!
//! The numerics run on real values in simulated-time order: operations are generated
//! when a thread reaches them, so an update computed then reads the rows other processors
//! have finished by then; more processors mean staler neighbours and more iterations
//! (the paper's explanation of its iteration counts). The record reports `iterations`
//! (sweeps per iterating processor, the mean, rounded) and `converged`.
//!
//! Three versions lay out the data as the paper describes:
//! - `uma`: contiguous shared arrays in allocation order with no regard to pages
//!   (control data, the per-processor lists of iteration data, A as five (value, column)
//!   pairs per row, the factors, x, b). The main process builds A, b and x, so first touch
//!   puts them on its node; each processor writes its own entries of the lists and factors
//!   its own blocks into the shared factor array.
//! - `numa`: the same originals, plus one region per iterating processor on its node
//!   (program-directed placement): its list, its own copy of its block rows of A and their
//!   factors, its subvectors of x, a replica of b and a replica of the array of pointers to
//!   the x subvectors. The checker reads x through the pointers, and A and b in the
//!   originals on its own node.
//! - `uma+`: `uma` with one phase-change hint, by the main process, just before the
//!   iteration phase.
//!
//! Who builds the data is `setup`: the paper says only that iteration "follows
//! initialization and factorization of the diagonal blocks" (sec. 3). With `main` (the
//! default) the main process builds A, b and x, then each processor factors its blocks.
//! With `parallel` each iterating processor builds its own block rows of A, b and x in the
//! shared arrays and factors them, so pages where two processors' rows meet are written from
//! two nodes before iteration: what the paper's monitoring implies (under UMA/dynamic, pages
//! of A, the factors and b "were frozen prior to the beginning of the iteration phase",
//! sec. 4), which a setup by the main process alone cannot freeze.
//!
//! Setup (the building, a barrier, the processors copy and factor) ends in a
//! barrier and iteration end 0; the hint (uma+) follows, then a barrier, then iteration; every thread ends with
//! iteration end 1, so the record's series has the setup phase as point 0 and the
//! iteration phase as point 1.
//!
//! Costs: a double is two 4-byte word references; the computation is `flop_ns` per
//! multiply-add (an estimate for the MC68881 at 16.67 MHz: FMUL and FADD on memory
//! operands take about 120 cycles together, ~7 us, plus addressing; the paper gives no
//! figure).

use super::common::{checked_ns, thread_count};
use super::emit::Emitter;
use crate::component::{Op, Program};
use crate::error::ConfigError;
use crate::estimate::Footprint;
use crate::fields::Fields;
use crate::machine::Machine;
use crate::memory::{ArrayId, Layout};
use crate::stats::Counter;
use crate::types::Ns;
use serde::{Deserialize, Serialize};

/// Which psolu program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum PsoluVariant {
    /// Shared arrays placed by nobody (the UMA programming model).
    #[default]
    #[serde(rename = "uma")]
    Uma,
    /// Hand-tuned: per-processor copies and subvectors on the processor's node.
    #[serde(rename = "numa")]
    Numa,
    /// `uma` plus one phase-change hint before the iteration phase.
    #[serde(rename = "uma+")]
    UmaPlus,
}

/// Who builds psolu's data before the iteration phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum PsoluSetup {
    /// The main process builds A, b and x; the processors then factor their blocks.
    #[default]
    #[serde(rename = "main")]
    Main,
    /// Each iterating processor builds its own block rows of A, b and x, then factors
    /// them.
    #[serde(rename = "parallel")]
    Parallel,
}

/// Parameters of `psolu`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct PsoluConfig {
    /// Interior points per side of the grid (one block per grid row). The paper does not
    /// give its grid; the default 63 is calibrated: with one iterating processor it
    /// converges in close to the paper's fitted 2788 iterations (2713.44 + 74.977 x 1).
    #[field(min = 3, max = 46_340)]
    pub grid: u64,
    /// Processors, the convergence checker included (at least 2); default one per
    /// processor. At most `grid` + 1 (one block per iterating processor at least).
    #[field(min = 2, max = crate::estimate::MAX_THREADS)]
    pub threads: Option<u32>,
    /// `uma`, `numa` or `uma+`. Default `uma`.
    pub variant: PsoluVariant,
    /// Who builds A, b and x: `main` (the main process, then the processors factor their
    /// blocks) or `parallel` (each iterating processor builds and factors its own block
    /// rows). Default `main`; the paper does not say (see the module documentation).
    /// Left out of records at its default.
    #[serde(skip_serializing_if = "is_default")]
    pub setup: PsoluSetup,
    /// Converged when ||Ax - b|| < 10^-digits ||b||. Default 6 (the paper gives none).
    #[field(min = 1, max = 15)]
    pub tolerance_digits: u32,
    /// Computation per multiply-add, in ns. Default 8000 (MC68881 estimate, see above).
    #[field(min = 0, max = 1_000_000_000, unit = "ns")]
    pub flop_ns: u64,
    /// Sweeps after which an iterating processor stops even if not converged. Default
    /// 50,000.
    #[field(min = 1, max = 10_000_000)]
    pub max_sweeps: u32,
    /// Checker sweeps of the iteration phase after which the run's series takes a point
    /// of its own (iteration 1; the rest of the phase is then iteration 2), so that what a
    /// policy does soon after the iteration phase begins can be told from what it does
    /// later (the paper: "soon after, however, nearly all dynamic page placement activity
    /// ceases", sec. 4). 0 (the default): no such point, the iteration phase is iteration
    /// 1. Left out of records at its default.
    #[field(min = 0, max = 10_000_000)]
    #[serde(skip_serializing_if = "is_default")]
    pub early_point_sweeps: u32,
}

/// Whether a parameter is at its default (then left out of records).
fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

impl Default for PsoluConfig {
    fn default() -> Self {
        PsoluConfig {
            grid: 63,
            threads: None,
            variant: PsoluVariant::Uma,
            setup: PsoluSetup::Main,
            tolerance_digits: 6,
            flop_ns: 8_000,
            max_sweeps: 50_000,
            early_point_sweeps: 0,
        }
    }
}

impl crate::registry::Describe for PsoluConfig {
    const KIND: &'static str = "psolu";
    const DESCRIPTION: &'static str = "block chaotic relaxation for the 5-point Dirichlet problem with a convergence checker, in UMA, NUMA and UMA+ versions (LaRowe, Wilkes & Ellis 1991)";
}

impl crate::component::WorkloadParams for PsoluConfig {
    fn footprint(&self, machine: &Machine) -> Result<Footprint, ConfigError> {
        Psolu::footprint(self, machine)
    }
    fn build(
        &self,
        machine: &Machine,
    ) -> Result<Vec<Box<dyn crate::component::Program>>, ConfigError> {
        Ok(vec![Box::new(Psolu::new(self, machine)?)])
    }
}

inventory::submit!(crate::component::WorkloadEntry::of::<PsoluConfig>());

/// Bytes of one entry of a processor's list of iteration data (pointers to the block
/// row and its factors, the block's bounds).
const LIST_ENTRY: u64 = 32;
/// Bytes of the shared iteration control data (done flag, counts).
const CONTROL: u64 = 64;
/// Bytes of one stored nonzero of A: a double and a 4-byte column index.
const NONZERO: u64 = 12;
/// Stored nonzeros per row of A.
const PER_ROW: u64 = 5;

/// Where one iterating processor's NUMA data lives.
#[derive(Clone, Copy, Debug)]
struct Region {
    list: ArrayId,
    a: ArrayId,
    factors: ArrayId,
    x: ArrayId,
    b: ArrayId,
    pointers: ArrayId,
}

/// The validated plan: the layout and everything sized from the parameters.
struct Plan {
    layout: Layout,
    threads: u32,
    control: ArrayId,
    lists: ArrayId,
    a: ArrayId,
    factors: ArrayId,
    x: ArrayId,
    b: ArrayId,
    regions: Vec<Region>,
    pages: u64,
}

/// Which thread is where in its program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Setup,
    Iterate,
    Finished,
}

/// The program.
#[derive(Debug)]
pub struct Psolu {
    layout: Layout,
    variant: PsoluVariant,
    setup: PsoluSetup,
    m: u64,
    threads: u32,
    control: ArrayId,
    lists: ArrayId,
    a: ArrayId,
    factors: ArrayId,
    x_arr: ArrayId,
    b_arr: ArrayId,
    regions: Vec<Region>,
    flop: Ns,
    emit: Emitter,
    hints: Vec<Option<u32>>,
    /// Blocks of each iterating processor, in sweep order.
    blocks_of: Vec<Vec<u32>>,
    /// Each block's owner and its index in the owner's list.
    owner: Vec<(u32, u32)>,
    /// The solution as the processors have written it.
    x: Vec<f64>,
    b: Vec<f64>,
    /// The diagonal block's LU factors (the same for every block of this matrix): the
    /// pivots d and the multipliers l of tridiagonal(-1, 4, -1).
    d: Vec<f64>,
    l: Vec<f64>,
    /// Each iterating processor's update in progress: its block, and the new values it
    /// writes when the update's operations end.
    pending: Vec<Option<u32>>,
    pending_vals: Vec<f64>,
    /// Scratch for a block's right-hand side.
    scratch: Vec<f64>,
    phase: Vec<Phase>,
    /// Per iterating processor: position in its sweep, sweeps completed.
    cursor: Vec<u32>,
    sweeps: Vec<u32>,
    max_sweeps: u32,
    /// Checker sweeps after which the early series point is taken (0: none), the checker's
    /// sweeps so far, and whether the point is taken.
    early_point_sweeps: u32,
    checker_sweeps: u32,
    early_taken: bool,
    /// The checker's residual computed at the start of its sweep, published at its end.
    pending_residual: Option<f64>,
    tolerance: f64,
    b_norm: f64,
    done: bool,
    converged: bool,
}

impl Psolu {
    fn plan(c: &PsoluConfig, machine: &Machine) -> Result<Plan, ConfigError> {
        c.check_ranges("workload")?;
        let threads = thread_count("workload.threads", c.threads, machine)?;
        if threads < 2 {
            return Err(ConfigError::new(
                "workload.threads",
                format!("{threads}: psolu needs the checker and at least one iterating processor"),
            ));
        }
        let m = c.grid;
        let workers = (threads - 1) as u64;
        if workers > m {
            return Err(ConfigError::new(
                "workload.threads",
                format!(
                    "{threads} processors: at most grid + 1 = {} (one block per grid row)",
                    m + 1
                ),
            ));
        }
        let size_err = || {
            ConfigError::new(
                "workload.grid",
                format!("a {m} x {m} grid does not fit in 64-bit sizes"),
            )
        };
        let n = m.checked_mul(m).ok_or_else(size_err)?;
        let nnz = n.checked_mul(PER_ROW).ok_or_else(size_err)?;
        checked_ns("workload.flop_ns", c.flop_ns, nnz)?;
        let ps = machine.page_size();
        let mut layout = Layout::new();
        // The originals, packed in allocation order with no regard to pages.
        let control = layout.alloc("control", 1, CONTROL, 8);
        let lists = layout.alloc("lists", m, LIST_ENTRY, 8);
        let a = layout.alloc("A", nnz, NONZERO, 8);
        let factors = layout.alloc("factors", n.checked_mul(2).ok_or_else(size_err)?, 8, 8);
        let x = layout.alloc("x", n, 8, 8);
        let b = layout.alloc("b", n, 8, 8);
        let mut regions = Vec::new();
        if c.variant == PsoluVariant::Numa {
            // One region per iterating processor, each starting on a page of its own
            // (memory allocated on that processor's node).
            let per = m.div_ceil(workers);
            for _ in 0..workers {
                regions.push(Region {
                    list: layout.alloc("lists (local)", per, LIST_ENTRY, ps),
                    a: layout.alloc("A (local copy)", per * m * PER_ROW, NONZERO, 8),
                    factors: layout.alloc("factors (local)", per * m * 2, 8, 8),
                    x: layout.alloc("x (subvectors)", per * m, 8, 8),
                    b: layout.alloc("b (replica)", n, 8, 8),
                    pointers: layout.alloc("x pointers (replica)", m, 8, 8),
                });
            }
            layout.pad(ps);
        }
        let pages = layout.pages_checked(ps, "workload.grid")?;
        Ok(Plan {
            layout,
            threads,
            control,
            lists,
            a,
            factors,
            x,
            b,
            regions,
            pages,
        })
    }

    /// What the program needs, from its parameters alone.
    pub fn footprint(c: &PsoluConfig, machine: &Machine) -> Result<Footprint, ConfigError> {
        let p = Self::plan(c, machine)?;
        let m = c.grid;
        let workers = (p.threads - 1) as u64;
        let ps = machine.page_size();
        // Runs per block row: its nonzeros, two rows of x, b, factors, own row, a few
        // single words; each range may cross a page boundary.
        let runs = |bytes: u64| bytes.div_ceil(ps).saturating_add(1);
        let per_block = runs(m * PER_ROW * NONZERO)
            .saturating_add(runs(m * 8).saturating_mul(5))
            .saturating_add(runs(m * 16))
            .saturating_add(8);
        let sweep = per_block.saturating_mul(m);
        // Setup touches every page a few times; the checker sweeps as often as the
        // processors do at most (each sweep of it is as long as a whole sweep of theirs).
        let setup = p
            .pages
            .saturating_mul(4)
            .saturating_add(m.saturating_mul(16));
        let ops = sweep
            .saturating_mul(c.max_sweeps as u64)
            .saturating_mul(2)
            .saturating_add(setup.saturating_mul(p.threads as u64));
        let n = m * m; // checked in `plan`
        Ok(Footprint {
            pages: p.pages,
            threads: p.threads,
            ops,
            buffered_ops: setup.saturating_add(sweep),
            bytes: Footprint::hint_bytes(p.pages)
                .saturating_add(n.saturating_mul(16))
                .saturating_add(m.saturating_mul(8 * 4 + 8))
                .saturating_add(workers.saturating_mul(m.saturating_mul(8) + 64)),
            iterations: if c.early_point_sweeps > 0 { 3 } else { 2 },
            size_field: "workload.grid",
            ops_field: "workload.max_sweeps",
        })
    }

    /// Builds the program for `machine`.
    pub fn new(c: &PsoluConfig, machine: &Machine) -> Result<Self, ConfigError> {
        let p = Self::plan(c, machine)?;
        let m = c.grid;
        let n = (m * m) as usize;
        let workers = p.threads - 1;
        let ps = machine.page_size();
        let blocks_of = balance(m as u32, workers);
        let mut owner = vec![(0, 0); m as usize];
        for (w, bl) in blocks_of.iter().enumerate() {
            for (i, &k) in bl.iter().enumerate() {
                owner[k as usize] = (w as u32, i as u32);
            }
        }
        // Program-directed placement (numa): the originals on the main process's node,
        // each region on its processor's. The uma versions place nothing.
        let hints = if c.variant == PsoluVariant::Numa {
            let spans: Vec<(u64, u64)> = p
                .regions
                .iter()
                .map(|r| {
                    let first = p.layout.array(r.list).base;
                    let last = p.layout.array(r.pointers);
                    (first, last.base + last.span())
                })
                .collect();
            (0..p.pages)
                .map(|pg| {
                    let byte = pg * ps;
                    let w = spans.iter().position(|&(lo, hi)| byte >= lo && byte < hi);
                    Some(w.map_or(0, |w| w as u32 + 1))
                })
                .collect()
        } else {
            Vec::new()
        };
        let h = 1.0 / (m as f64 + 1.0);
        let g = |i: i64, j: i64| (j as f64 + 1.0) * h * ((i as f64 + 1.0) * h);
        let mi = m as i64;
        let mut b = vec![0.0; n];
        for i in 0..mi {
            for j in 0..mi {
                let mut s = 0.0;
                for (di, dj) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
                    let (y, x) = (i + di, j + dj);
                    if y < 0 || y >= mi || x < 0 || x >= mi {
                        s += g(y, x);
                    }
                }
                b[(i * mi + j) as usize] = s;
            }
        }
        let b_norm = b.iter().map(|v| v * v).sum::<f64>().sqrt();
        let mut d = vec![0.0; m as usize];
        let mut l = vec![0.0; m as usize];
        d[0] = 4.0;
        for i in 1..m as usize {
            l[i] = -1.0 / d[i - 1];
            d[i] = 4.0 + l[i];
        }
        Ok(Psolu {
            layout: p.layout,
            variant: c.variant,
            setup: c.setup,
            m,
            threads: p.threads,
            control: p.control,
            lists: p.lists,
            a: p.a,
            factors: p.factors,
            x_arr: p.x,
            b_arr: p.b,
            regions: p.regions,
            flop: Ns(c.flop_ns),
            emit: Emitter { page_size: ps },
            hints,
            blocks_of,
            owner,
            x: vec![0.0; n],
            b,
            d,
            l,
            pending: vec![None; workers as usize],
            pending_vals: vec![0.0; workers as usize * m as usize],
            scratch: vec![0.0; m as usize],
            phase: vec![Phase::Setup; p.threads as usize],
            cursor: vec![0; workers as usize],
            sweeps: vec![0; workers as usize],
            max_sweeps: c.max_sweeps,
            early_point_sweeps: c.early_point_sweeps,
            checker_sweeps: 0,
            early_taken: false,
            pending_residual: None,
            tolerance: 10f64.powi(-(c.tolerance_digits as i32)),
            b_norm,
            done: false,
            converged: false,
        })
    }

    /// Sweeps per iterating processor so far.
    pub fn sweeps(&self) -> &[u32] {
        &self.sweeps
    }

    /// Whether the checker found the residual small enough.
    pub fn converged(&self) -> bool {
        self.converged
    }

    /// The solution as written so far.
    pub fn solution(&self) -> &[f64] {
        &self.x
    }

    /// `per` references to each of `len` elements of array `arr` from element `from`.
    fn refs(&self, out: &mut Vec<Op>, arr: ArrayId, from: u64, len: u64, per: u32, w: bool) {
        if len == 0 {
            return;
        }
        let a = self.layout.array(arr);
        self.emit
            .range(out, a.addr(0, from), len, a.elem_bytes, per, w);
    }

    /// Reads of block row `k` of x (two words per double) where processor `w` finds it:
    /// the shared array, or (numa) the owner's subvector through `w`'s pointer replica.
    fn read_x_row(&self, out: &mut Vec<Op>, w: Option<u32>, k: u32) {
        let m = self.m;
        if self.variant == PsoluVariant::Numa {
            let (o, i) = self.owner[k as usize];
            if let Some(w) = w {
                self.refs(
                    out,
                    self.regions[w as usize].pointers,
                    k as u64,
                    1,
                    2,
                    false,
                );
            }
            self.refs(out, self.regions[o as usize].x, i as u64 * m, m, 2, false);
        } else {
            self.refs(out, self.x_arr, k as u64 * m, m, 2, false);
        }
    }

    /// The main process's setup: the control data, and A, b and x unless the processors
    /// build them.
    fn setup_main(&self, out: &mut Vec<Op>) {
        let n = self.m * self.m;
        self.refs(out, self.control, 0, 1, 16, true);
        if self.setup == PsoluSetup::Main {
            self.build_rows(out, 0, n);
        }
        // The processors build their lists and factor once the data is there.
        out.push(Op::Barrier);
        self.phase_change(out, true);
    }

    /// Builds rows `[from, from + rows)` of A, x and b (a row of A: its five stored
    /// nonzeros, each a double and an index, written; x and b: one double each).
    fn build_rows(&self, out: &mut Vec<Op>, from: u64, rows: u64) {
        self.refs(out, self.a, from * PER_ROW, rows * PER_ROW, 3, true);
        self.refs(out, self.x_arr, from, rows, 2, true);
        self.refs(out, self.b_arr, from, rows, 2, true);
        out.push(Op::Compute(self.flop * rows * PER_ROW));
    }

    /// Processor `w`'s setup: build its list of iteration data and factor its blocks
    /// (numa: copy its rows, b and the pointers into its region first); with a parallel
    /// setup, build its block rows of A, x and b first.
    fn setup_worker(&self, out: &mut Vec<Op>, w: u32) {
        let (m, n) = (self.m, self.m * self.m);
        let numa = self.variant == PsoluVariant::Numa;
        if self.setup == PsoluSetup::Parallel {
            for &k in &self.blocks_of[w as usize] {
                self.build_rows(out, k as u64 * m, m);
            }
        }
        out.push(Op::Barrier);
        if numa {
            let r = self.regions[w as usize];
            let mine = self.blocks_of[w as usize].len() as u64;
            self.refs(out, r.list, 0, mine, 8, true);
            self.refs(out, r.pointers, 0, m, 2, true);
            self.refs(out, self.b_arr, 0, n, 2, false);
            self.refs(out, r.b, 0, n, 2, true);
            self.refs(out, r.x, 0, mine * m, 2, true);
        }
        for (i, &k) in self.blocks_of[w as usize].iter().enumerate() {
            let (k, i) = (k as u64, i as u64);
            if numa {
                let r = self.regions[w as usize];
                self.refs(out, self.a, k * m * PER_ROW, m * PER_ROW, 3, false);
                self.refs(out, r.a, i * m * PER_ROW, m * PER_ROW, 3, true);
                self.refs(out, r.a, i * m * PER_ROW, m * PER_ROW, 3, false);
                out.push(Op::Compute(self.flop * 2 * m));
                self.refs(out, r.factors, i * 2 * m, 2 * m, 2, true);
            } else {
                self.refs(out, self.lists, k, 1, 8, true);
                self.refs(out, self.a, k * m * PER_ROW, m * PER_ROW, 3, false);
                out.push(Op::Compute(self.flop * 2 * m));
                self.refs(out, self.factors, k * 2 * m, 2 * m, 2, true);
            }
        }
        self.phase_change(out, false);
    }

    /// The end of setup: a barrier, the setup phase's series point, the hint (uma+, by
    /// the main process), a second barrier.
    fn phase_change(&self, out: &mut Vec<Op>, main: bool) {
        out.push(Op::Barrier);
        out.push(Op::IterationEnd(0));
        if main && self.variant == PsoluVariant::UmaPlus {
            out.push(Op::PhaseHint);
        }
        out.push(Op::Barrier);
    }

    /// Writes processor `w`'s finished update into x.
    fn publish(&mut self, w: usize) {
        if let Some(k) = self.pending[w].take() {
            let m = self.m as usize;
            let k = k as usize;
            self.x[k * m..(k + 1) * m].copy_from_slice(&self.pending_vals[w * m..(w + 1) * m]);
        }
    }

    /// Computes block `k`'s new values from x as it is now into `w`'s pending slot:
    /// solve T x_k = b_k + x_{k-1} + x_{k+1}.
    fn solve_block(&mut self, w: usize, k: usize) {
        let m = self.m as usize;
        let rows = m;
        for j in 0..m {
            let mut s = self.b[k * m + j];
            if k > 0 {
                s += self.x[(k - 1) * m + j];
            }
            if k + 1 < rows {
                s += self.x[(k + 1) * m + j];
            }
            self.scratch[j] = s;
        }
        for j in 1..m {
            self.scratch[j] -= self.l[j] * self.scratch[j - 1];
        }
        let out = &mut self.pending_vals[w * m..(w + 1) * m];
        out[m - 1] = self.scratch[m - 1] / self.d[m - 1];
        for j in (0..m - 1).rev() {
            out[j] = (self.scratch[j] + out[j + 1]) / self.d[j];
        }
        self.pending[w] = Some(k as u32);
    }

    /// ||b - Ax|| / ||b|| for x as it is now.
    fn residual(&self) -> f64 {
        let m = self.m as usize;
        let x = &self.x;
        let mut sum = 0.0;
        for i in 0..m {
            for j in 0..m {
                let p = i * m + j;
                let mut r = self.b[p] - 4.0 * x[p];
                if j > 0 {
                    r += x[p - 1];
                }
                if j + 1 < m {
                    r += x[p + 1];
                }
                if i > 0 {
                    r += x[p - m];
                }
                if i + 1 < m {
                    r += x[p + m];
                }
                sum += r * r;
            }
        }
        sum.sqrt() / self.b_norm
    }

    /// The iteration every thread ends the run with: 2 when the iteration phase has an
    /// early point, else 1.
    fn last_iteration(&self) -> u32 {
        if self.early_point_sweeps > 0 {
            2
        } else {
            1
        }
    }

    /// The early series point (iteration 1, ended by the checker alone), once.
    fn take_early_point(&mut self, out: &mut Vec<Op>) {
        if self.early_point_sweeps > 0 && !self.early_taken {
            self.early_taken = true;
            out.push(Op::IterationEnd(1));
        }
    }

    /// Processor `w`'s next block update, or its end.
    fn worker_step(&mut self, w: u32, out: &mut Vec<Op>) {
        let wi = w as usize;
        self.publish(wi);
        let ctl = self.control;
        if self.done || self.sweeps[wi] >= self.max_sweeps {
            self.refs(out, ctl, 0, 1, 1, false);
            out.push(Op::IterationEnd(self.last_iteration()));
            self.phase[w as usize + 1] = Phase::Finished;
            return;
        }
        let mine = self.blocks_of[wi].len() as u32;
        let i = self.cursor[wi];
        let k = self.blocks_of[wi][i as usize];
        self.cursor[wi] = (i + 1) % mine;
        if i + 1 == mine {
            self.sweeps[wi] += 1;
        }
        self.solve_block(wi, k as usize);
        self.emit_update(out, w, k, i);
    }

    /// The references and computation of processor `w`'s update of block `k`, entry `i`
    /// of its list.
    fn emit_update(&self, out: &mut Vec<Op>, w: u32, k: u32, i: u32) {
        let m = self.m;
        let (k64, i64_) = (k as u64, i as u64);
        let numa = self.variant == PsoluVariant::Numa;
        if numa {
            self.refs(out, self.regions[w as usize].list, i64_, 1, 8, false);
        } else {
            self.refs(out, self.lists, k64, 1, 8, false);
        }
        self.refs(out, self.control, 0, 1, 1, false);
        let (a, a_at, f, f_at, b, b_at) = if numa {
            let r = self.regions[w as usize];
            (
                r.a,
                i64_ * m * PER_ROW,
                r.factors,
                i64_ * 2 * m,
                r.b,
                k64 * m,
            )
        } else {
            (
                self.a,
                k64 * m * PER_ROW,
                self.factors,
                k64 * 2 * m,
                self.b_arr,
                k64 * m,
            )
        };
        self.refs(out, a, a_at, m * PER_ROW, 3, false);
        let mut couplings = 0;
        if k > 0 {
            self.read_x_row(out, Some(w), k - 1);
            couplings += 1;
        }
        if (k as u64) + 1 < m {
            self.read_x_row(out, Some(w), k + 1);
            couplings += 1;
        }
        self.refs(out, b, b_at, m, 2, false);
        out.push(Op::Compute(self.flop * (couplings * m)));
        self.refs(out, f, f_at, 2 * m, 2, false);
        out.push(Op::Compute(self.flop * (3 * m)));
        if numa {
            let r = self.regions[w as usize];
            self.refs(out, r.pointers, k64, 1, 2, false);
            self.refs(out, r.x, i64_ * m, m, 2, true);
        } else {
            self.refs(out, self.x_arr, k64 * m, m, 2, true);
        }
    }

    /// The checker's next sweep, or its end.
    fn checker_step(&mut self, out: &mut Vec<Op>) {
        if let Some(r) = self.pending_residual.take() {
            if r < self.tolerance {
                self.done = true;
                self.converged = true;
            }
        }
        let all_stopped = self.phase[1..].iter().all(|&p| p == Phase::Finished)
            || self.sweeps.iter().all(|&s| s >= self.max_sweeps);
        if self.done || all_stopped {
            self.done = true;
            self.refs(out, self.control, 0, 1, 1, true);
            self.take_early_point(out);
            out.push(Op::IterationEnd(self.last_iteration()));
            self.phase[0] = Phase::Finished;
            return;
        }
        if self.checker_sweeps >= self.early_point_sweeps {
            self.take_early_point(out);
        }
        self.checker_sweeps += 1;
        self.pending_residual = Some(self.residual());
        let m = self.m;
        self.refs(out, self.control, 0, 1, 1, false);
        for k in 0..m as u32 {
            let k64 = k as u64;
            self.refs(out, self.a, k64 * m * PER_ROW, m * PER_ROW, 3, false);
            if k > 0 {
                self.read_x_row(out, None, k - 1);
            }
            self.read_x_row(out, None, k);
            if k64 + 1 < m {
                self.read_x_row(out, None, k + 1);
            }
            self.refs(out, self.b_arr, k64 * m, m, 2, false);
            out.push(Op::Compute(self.flop * (6 * m)));
        }
    }
}

/// The static load balancing: the estimated work of each block (multiply-adds per
/// iteration: 3 per unknown for the solve, 1 per unknown and coupling; the first and last
/// grid rows have one coupling fewer) split into `workers` contiguous runs of nearly
/// equal load: block k goes to the processor whose share of the total work holds the
/// middle of k's work. Every processor gets at least one block (else the runs are split
/// by count).
fn balance(blocks: u32, workers: u32) -> Vec<Vec<u32>> {
    let weight = |k: u32| -> u64 { 3 + (k > 0) as u64 + (k + 1 < blocks) as u64 };
    let total: u64 = (0..blocks).map(weight).sum();
    let mut out = vec![Vec::new(); workers as usize];
    let mut before = 0;
    for k in 0..blocks {
        // Twice the midpoint, so the arithmetic stays in integers.
        let mid2 = 2 * before + weight(k);
        let w = (mid2 * workers as u64 / (2 * total)).min(workers as u64 - 1);
        out[w as usize].push(k);
        before += weight(k);
    }
    if out.iter().any(|r| r.is_empty()) {
        for r in &mut out {
            r.clear();
        }
        for k in 0..blocks {
            out[(k as u64 * workers as u64 / blocks as u64) as usize].push(k);
        }
    }
    out
}

impl Program for Psolu {
    fn name(&self) -> &str {
        "psolu"
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
    fn iteration_parties(&self, k: u32) -> Option<u32> {
        // The early point is the checker's alone.
        (self.early_point_sweeps > 0 && k == 1).then_some(1)
    }
    fn next_ops(&mut self, t: u32, _running: &[bool], out: &mut Vec<Op>) {
        match (self.phase[t as usize], t) {
            (Phase::Finished, _) => {}
            (Phase::Setup, 0) => {
                self.setup_main(out);
                self.phase[0] = Phase::Iterate;
            }
            (Phase::Setup, t) => {
                self.setup_worker(out, t - 1);
                self.phase[t as usize] = Phase::Iterate;
            }
            (Phase::Iterate, 0) => self.checker_step(out),
            (Phase::Iterate, t) => self.worker_step(t - 1, out),
        }
    }
    fn counters(&self) -> Vec<Counter> {
        let total: u64 = self.sweeps.iter().map(|&s| s as u64).sum();
        let workers = self.sweeps.len().max(1) as u64;
        vec![
            Counter {
                name: "iterations",
                label: "iterations (mean)",
                value: (total + workers / 2) / workers,
            },
            Counter {
                name: "converged",
                label: "converged",
                value: self.converged as u64,
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Machine;
    use crate::mm::test_machine_config;

    fn machine(nodes: u16) -> Machine {
        Machine::new(test_machine_config(nodes)).unwrap()
    }

    fn config(threads: u32, variant: PsoluVariant) -> PsoluConfig {
        PsoluConfig {
            grid: 8,
            threads: Some(threads),
            variant,
            ..PsoluConfig::default()
        }
    }

    /// Runs every thread's operations to the end in round-robin order of calls.
    fn drive(p: &mut Psolu) {
        drive_collect(p, u32::MAX, &mut Vec::new());
    }

    #[test]
    fn the_relaxation_converges_to_the_harmonic_boundary_data() {
        let mut p = Psolu::new(&config(3, PsoluVariant::Uma), &machine(4)).unwrap();
        drive(&mut p);
        assert!(p.converged());
        let h = 1.0 / 9.0;
        for i in 0..8 {
            for j in 0..8 {
                let exact = (i as f64 + 1.0) * h * (j as f64 + 1.0) * h;
                assert!((p.solution()[i * 8 + j] - exact).abs() < 1e-4);
            }
        }
    }

    #[test]
    fn load_balancing_gives_every_processor_a_contiguous_run_of_nearly_equal_work() {
        for (blocks, workers) in [(10, 3), (78, 12), (78, 32), (8, 8)] {
            let b = balance(blocks, workers);
            let sizes: Vec<usize> = b.iter().map(|v| v.len()).collect();
            assert_eq!(sizes.iter().sum::<usize>(), blocks as usize);
            let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(
                *lo >= 1 && hi - lo <= 1,
                "{blocks} over {workers}: {sizes:?}"
            );
            let flat: Vec<u32> = b.concat();
            assert_eq!(
                flat,
                (0..blocks).collect::<Vec<_>>(),
                "contiguous runs in order"
            );
        }
    }

    #[test]
    fn more_iterating_processors_need_more_iterations() {
        let sweeps = |threads| {
            let mut c = config(threads, PsoluVariant::Uma);
            c.grid = 16;
            let mut p = Psolu::new(&c, &machine(16)).unwrap();
            drive(&mut p);
            assert!(p.converged());
            p.counters()[0].value
        };
        assert!(sweeps(9) > sweeps(2));
    }

    #[test]
    fn the_numa_version_places_each_region_on_its_processor_and_uma_places_nothing() {
        let m = machine(4);
        let numa = Psolu::new(&config(3, PsoluVariant::Numa), &m).unwrap();
        let hints = numa.placement_hints();
        assert!(hints.contains(&Some(1)) && hints.contains(&Some(2)));
        assert_eq!(
            hints[0],
            Some(0),
            "the originals stay with the main process"
        );
        let uma = Psolu::new(&config(3, PsoluVariant::Uma), &m).unwrap();
        assert!(uma.placement_hints().is_empty());
    }

    #[test]
    fn only_the_uma_plus_version_hints_a_phase_change() {
        for (variant, hints) in [(PsoluVariant::Uma, false), (PsoluVariant::UmaPlus, true)] {
            let mut p = Psolu::new(&config(3, variant), &machine(4)).unwrap();
            let mut out = Vec::new();
            p.next_ops(0, &[true; 3], &mut out);
            assert_eq!(out.contains(&Op::PhaseHint), hints, "{variant:?}");
        }
    }

    #[test]
    fn too_many_processors_for_the_grid_are_refused_naming_the_field() {
        let e = Psolu::new(&config(10, PsoluVariant::Uma), &machine(16)).unwrap_err();
        assert!(e.to_string().contains("workload.threads"), "{e}");
    }

    #[test]
    fn footprint_and_build_agree_on_pages_and_threads() {
        let m = machine(4);
        for v in [PsoluVariant::Uma, PsoluVariant::Numa] {
            let c = config(3, v);
            let f = Psolu::footprint(&c, &m).unwrap();
            let p = Psolu::new(&c, &m).unwrap();
            assert_eq!(f.pages, p.layout().pages(m.page_size()));
            assert_eq!(f.threads, p.threads());
        }
    }

    /// Pages of array `arr` that `ops` write.
    fn written(p: &Psolu, ops: &[Op], arr: ArrayId, ps: u64) -> Vec<u32> {
        let a = p.layout.array(arr);
        let (lo, hi) = (a.base / ps, (a.base + a.span()).div_ceil(ps));
        let mut pages: Vec<u32> = ops
            .iter()
            .filter_map(|o| match *o {
                Op::Ref {
                    vpn, write: true, ..
                } if (lo..hi).contains(&(vpn.0 as u64)) => Some(vpn.0),
                _ => None,
            })
            .collect();
        pages.dedup();
        pages
    }

    #[test]
    fn a_parallel_setup_has_each_processor_build_its_own_rows_of_a() {
        let m = machine(4);
        let ps = m.page_size();
        let mut c = config(3, PsoluVariant::Uma);
        c.grid = 40;
        let setup_ops = |setup| {
            let mut c = c.clone();
            c.setup = setup;
            let mut p = Psolu::new(&c, &m).unwrap();
            let mut ops = vec![Vec::new(); 3];
            for (t, o) in ops.iter_mut().enumerate() {
                p.next_ops(t as u32, &[true; 3], o);
            }
            (p, ops)
        };
        let (p, ops) = setup_ops(PsoluSetup::Main);
        assert!(!written(&p, &ops[0], p.a, ps).is_empty());
        assert!(written(&p, &ops[1], p.a, ps).is_empty());
        let (p, ops) = setup_ops(PsoluSetup::Parallel);
        assert!(written(&p, &ops[0], p.a, ps).is_empty());
        // Each processor writes the pages of its own block rows: the first's start at A's
        // first page, the second's end at its last, and they meet on at most one page.
        let (first, second) = (written(&p, &ops[1], p.a, ps), written(&p, &ops[2], p.a, ps));
        let a = p.layout.array(p.a);
        assert_eq!(first[0] as u64, a.base / ps);
        assert_eq!(*second.last().unwrap() as u64, (a.base + a.span() - 1) / ps);
        assert!(first.iter().filter(|v| second.contains(v)).count() <= 1);
    }

    #[test]
    fn an_early_point_is_the_checkers_after_its_first_sweeps_and_every_thread_ends_the_rest() {
        let mut c = config(3, PsoluVariant::Uma);
        c.early_point_sweeps = 2;
        let ends = |ops: &[Op]| -> Vec<u32> {
            ops.iter()
                .filter_map(|o| match o {
                    Op::IterationEnd(k) => Some(*k),
                    _ => None,
                })
                .collect()
        };
        let mut p = Psolu::new(&c, &machine(4)).unwrap();
        assert_eq!(p.iteration_parties(1), Some(1));
        assert_eq!(p.iteration_parties(2), None);
        // The checker's calls: setup (iteration 0 ends), two sweeps, then the early point
        // before its third sweep.
        let mut calls = Vec::new();
        for _ in 0..4 {
            let mut out = Vec::new();
            p.next_ops(0, &[true; 3], &mut out);
            calls.push(ends(&out));
        }
        assert_eq!(calls, [vec![0], vec![], vec![], vec![1]]);
        // Every thread ends the run with iteration 2, the checker after the early point.
        for t in 0..3 {
            let mut p = Psolu::new(&c, &machine(4)).unwrap();
            let mut ops = Vec::new();
            drive_collect(&mut p, t, &mut ops);
            let e = ends(&ops);
            assert_eq!(e.last(), Some(&2), "thread {t}: {e:?}");
            assert_eq!(e.contains(&1), t == 0, "thread {t}: {e:?}");
        }
    }

    /// Runs every thread's operations to the end in round-robin order of calls, collecting
    /// thread `t`'s into `ops`.
    fn drive_collect(p: &mut Psolu, t: u32, ops: &mut Vec<Op>) {
        let running = vec![true; p.threads() as usize];
        let mut out = Vec::new();
        let mut live = true;
        while live {
            live = false;
            for u in 0..p.threads() {
                out.clear();
                p.next_ops(u, &running, &mut out);
                live |= !out.is_empty();
                if u == t {
                    ops.extend_from_slice(&out);
                }
            }
        }
    }
}
