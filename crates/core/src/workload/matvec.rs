//! `matvec`: dense vector-matrix multiply y = A x (Holliday §4.2 without the synthetic
//! sparsity). The rows of A are dealt to the threads in contiguous blocks; each entry of a
//! row is referenced `repeat` times and y[i] is written once per row. x is each processor's
//! private copy (as in Holliday's testbed), so it costs no shared references.

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

/// Parameters of `matvec`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct MatvecConfig {
    /// Matrix order N (A is N x N). Default 512 (Holliday's matrix).
    #[field(min = 1, max = 4_294_967_296)]
    pub n: u64,
    /// References to each entry of A. Default 1 (Holliday also used 10 and 20).
    #[field(min = 1)]
    pub repeat: u32,
    /// Element size in bytes. Default 4 (single-precision floats).
    #[field(min = 1, max = 65_536, unit = "bytes")]
    pub elem_bytes: u64,
    /// Threads; default: one per processor.
    #[field(min = 1, max = crate::estimate::MAX_THREADS)]
    pub threads: Option<u32>,
    /// Times the whole product is computed, each an iteration ending in a barrier.
    /// Default 1.
    #[field(min = 1)]
    pub iterations: u32,
    /// Start every row of A on a new page (Holliday's layout). Default false.
    pub row_per_page: bool,
    /// Computation per entry, in ns, besides the references. Default 0.
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub compute_ns_per_entry: u64,
    /// `uma` (no placement) or `numa` (rows on the node of the thread that reads them).
    pub variant: Variant,
}

impl Default for MatvecConfig {
    fn default() -> Self {
        MatvecConfig {
            n: 512,
            repeat: 1,
            elem_bytes: 4,
            threads: None,
            iterations: 1,
            row_per_page: false,
            compute_ns_per_entry: 0,
            variant: Variant::Uma,
        }
    }
}

/// The loop body: chunk c is the c-th block of rows.
#[derive(Debug)]
pub struct MatvecBody {
    layout: Layout,
    a: ArrayId,
    y: ArrayId,
    n: u64,
    repeat: u32,
    iterations: u32,
    blocks: u32,
    compute_per_row: Ns,
    emit: Emitter,
}

impl MatvecBody {
    /// Rows of block `c`.
    fn rows(&self, c: u32) -> std::ops::Range<u64> {
        let lo = self.n * c as u64 / self.blocks as u64;
        let hi = self.n * (c as u64 + 1) / self.blocks as u64;
        lo..hi
    }
}

impl LoopBody for MatvecBody {
    fn iterations(&self) -> u32 {
        self.iterations
    }
    fn chunks(&self) -> u32 {
        self.blocks
    }
    fn chunk(&self, _iter: u32, chunk: u32, out: &mut Vec<Op>) {
        let a = self.layout.array(self.a);
        let y = self.layout.array(self.y);
        for i in self.rows(chunk) {
            self.emit
                .range(out, a.addr(i, 0), self.n, a.elem_bytes, self.repeat, false);
            if self.compute_per_row > Ns::ZERO {
                out.push(Op::Compute(self.compute_per_row));
            }
            self.emit.range(out, y.addr(0, i), 1, y.elem_bytes, 1, true);
        }
    }
}

/// The block (of `blocks` contiguous blocks of `n` rows, block c starting at
/// floor(n c / blocks)) holding row `r`.
pub(crate) fn block_of(r: u64, n: u64, blocks: u32) -> u32 {
    (((r + 1) * blocks as u64).div_ceil(n) - 1) as u32
}

impl crate::registry::Describe for MatvecConfig {
    const KIND: &'static str = "matvec";
    const DESCRIPTION: &'static str = "dense vector-matrix multiply y = Ax, rows dealt in blocks, repeated references per entry (Holliday 4.2)";
}

impl crate::component::WorkloadParams for MatvecConfig {
    fn footprint(&self, machine: &Machine) -> Result<crate::estimate::Footprint, ConfigError> {
        Matvec::footprint(self, machine)
    }
    fn build(
        &self,
        machine: &Machine,
    ) -> Result<Vec<Box<dyn crate::component::Program>>, ConfigError> {
        Ok(vec![Box::new(Matvec::new(self, machine)?)])
    }
}

inventory::submit!(crate::component::WorkloadEntry::of::<MatvecConfig>());

/// The `matvec` program.
#[derive(Debug)]
pub struct Matvec {
    fj: ForkJoin<MatvecBody>,
    hints: Vec<Option<u32>>,
    threads: u32,
}

/// A validated plan: the address space and the thread count, before any allocation.
struct Plan {
    layout: Layout,
    a: ArrayId,
    y: ArrayId,
    threads: u32,
    pages: u64,
    compute_per_row: Ns,
}

impl Matvec {
    /// Validates `c` and lays out the address space (nothing sized by the parameters is
    /// allocated here).
    fn plan(c: &MatvecConfig, machine: &Machine) -> Result<Plan, ConfigError> {
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
        let ps = machine.page_size();
        let mut layout = Layout::new();
        let row_align = if c.row_per_page { ps } else { 1 };
        let a = layout.alloc_2d("A", c.n, c.n, c.elem_bytes, ps, row_align);
        let y = layout.alloc("y", c.n, c.elem_bytes, ps);
        let pages = layout.pages_checked(ps, "workload.n")?;
        let compute_per_row =
            checked_ns("workload.compute_ns_per_entry", c.compute_ns_per_entry, c.n)?;
        Ok(Plan {
            layout,
            a,
            y,
            threads,
            pages,
            compute_per_row,
        })
    }

    /// What the program needs, from its parameters alone.
    pub fn footprint(c: &MatvecConfig, machine: &Machine) -> Result<Footprint, ConfigError> {
        let plan = Self::plan(c, machine)?;
        let ps = machine.page_size();
        // Per row: the runs over A's row, a compute op and y's write.
        let per_row = runs_of(c.n, c.elem_bytes, ps).saturating_add(2);
        let per_iter =
            c.n.saturating_mul(per_row)
                .saturating_add(2 * plan.threads as u64);
        let ops = per_iter.saturating_mul(c.iterations as u64);
        Ok(Footprint {
            pages: plan.pages,
            threads: plan.threads,
            ops,
            // A thread generates a whole iteration's blocks at once; a stopped thread's
            // block can land on it too.
            buffered_ops: per_iter.div_ceil(plan.threads as u64).saturating_mul(2),
            bytes: match c.variant {
                Variant::Uma => 0,
                Variant::Numa => Footprint::hint_bytes(plan.pages),
            },
            iterations: c.iterations as u64,
            size_field: "workload.n",
            ops_field: if c.iterations > 1 {
                "workload.iterations"
            } else {
                "workload.n"
            },
        })
    }

    /// Builds the program for `machine`.
    pub fn new(c: &MatvecConfig, machine: &Machine) -> Result<Matvec, ConfigError> {
        let Plan {
            layout,
            a,
            y,
            threads,
            pages,
            compute_per_row,
        } = Self::plan(c, machine)?;
        let ps = machine.page_size();
        let body = MatvecBody {
            layout,
            a,
            y,
            n: c.n,
            repeat: c.repeat,
            iterations: c.iterations,
            blocks: threads,
            compute_per_row,
            emit: Emitter { page_size: ps },
        };
        let hints = match c.variant {
            Variant::Uma => Vec::new(),
            Variant::Numa => {
                let arr_a = body.layout.array(a).clone();
                let arr_y = body.layout.array(y).clone();
                let owner_of_row = |row: u64| block_of(row, c.n, threads);
                hints_by_first_byte(pages, ps, |byte| {
                    if byte >= arr_a.base && byte < arr_a.base + arr_a.rows * arr_a.row_stride {
                        Some(owner_of_row((byte - arr_a.base) / arr_a.row_stride))
                    } else if byte >= arr_y.base && byte < arr_y.base + arr_y.span() {
                        Some(owner_of_row((byte - arr_y.base) / arr_y.elem_bytes))
                    } else {
                        None
                    }
                })
            }
        };
        Ok(Matvec {
            fj: ForkJoin::new(body, threads),
            hints,
            threads,
        })
    }
}

impl Program for Matvec {
    fn name(&self) -> &str {
        "matvec"
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
