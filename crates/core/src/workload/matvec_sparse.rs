//! `matvec-sparse`: Holliday's vector-matrix multiply over a real sparse matrix (ASPLOS
//! 1989, sections 4.2 and 5.2). The matrix is stored as the paper's three vectors — row
//! pointers, column indices, non-zero entries — packed one after another, so the storage is
//! rows + 2 x non-zeros words and the page size decides how much of it shares a page. The
//! threads work in pairs from opposite ends of their block of rows, as in
//! `matvec-synthetic`; the sparsity of the real matrix is what makes them meet off-centre.
//!
//! Only the row structure matters to the references (the vector is private), so the core
//! takes the row pointers; reading a matrix file is the harness's job (the core does no
//! IO): it fills [`MatvecSparseConfig::rows`] from the named matrix before the run.

use super::common::thread_count;
use super::pair_rows::PairRows;
use crate::component::{Op, Program};
use crate::error::ConfigError;
use crate::estimate::Footprint;
use crate::fields::Fields;
use crate::machine::Machine;
use crate::memory::{ArrayId, Layout};
use crate::types::{Ns, Vpn};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The row structure of a sparse matrix: `row_ptr[i]..row_ptr[i + 1]` are row i's stored
/// entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SparseRows {
    /// The matrix's name, for reports.
    pub name: String,
    /// Row pointers, `rows + 1` of them, non-decreasing from 0.
    pub row_ptr: Vec<u64>,
}

impl SparseRows {
    /// Checks the row pointers.
    pub fn new(name: impl Into<String>, row_ptr: Vec<u64>) -> Result<SparseRows, ConfigError> {
        let name = name.into();
        if row_ptr.len() < 2 || row_ptr[0] != 0 || row_ptr.windows(2).any(|w| w[1] < w[0]) {
            return Err(ConfigError::new(
                "workload.matrix",
                format!("`{name}`: row pointers must start at 0 and never decrease, with at least one row"),
            ));
        }
        Ok(SparseRows { name, row_ptr })
    }

    /// Number of rows.
    pub fn rows(&self) -> u64 {
        self.row_ptr.len() as u64 - 1
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> u64 {
        *self.row_ptr.last().unwrap_or(&0)
    }
}

/// Parameters of `matvec-sparse`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct MatvecSparseConfig {
    /// The matrix: a built-in name (`lund-a`, the paper's 003; `gr-30-30`, its 021;
    /// `standin-009`, `standin-014`; `bcsstk01`, `arc130`, `pores-1`) or a Matrix Market or
    /// Harwell-Boeing file. Default `lund-a`.
    pub matrix: String,
    /// References to each non-zero entry. Default 1 (the paper's sparse suite).
    #[field(min = 1)]
    pub refs_per_nonzero: u32,
    /// Threads, an even number; default one per processor (the paper uses 16).
    #[field(min = 1, max = crate::estimate::MAX_THREADS)]
    pub threads: Option<u32>,
    /// Word size of the three vectors, in bytes. Default 4.
    #[field(min = 1, max = 65_536, unit = "bytes")]
    pub word_bytes: u64,
    /// Private computation per non-zero entry, in ns. Default 0.
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub compute_ns_per_nonzero: u64,
    /// Products computed one after another, with a barrier between them (an iterative
    /// method's inner product). Default 1.
    #[field(min = 1)]
    pub iterations: u32,
    /// The matrix's rows, filled in from `matrix` by whoever reads files.
    #[serde(skip)]
    pub rows: Option<Arc<SparseRows>>,
}

impl Default for MatvecSparseConfig {
    fn default() -> Self {
        MatvecSparseConfig {
            matrix: "lund-a".into(),
            refs_per_nonzero: 1,
            threads: None,
            word_bytes: 4,
            compute_ns_per_nonzero: 0,
            iterations: 1,
            rows: None,
        }
    }
}

impl crate::registry::Describe for MatvecSparseConfig {
    const KIND: &'static str = "matvec-sparse";
    const DESCRIPTION: &'static str = "matvec over a real sparse matrix in three-vector storage, processor pairs (Holliday 4.2, 5.2)";
}

impl crate::component::WorkloadParams for MatvecSparseConfig {
    fn footprint(&self, machine: &Machine) -> Result<crate::estimate::Footprint, ConfigError> {
        MatvecSparse::footprint(self, machine)
    }
    fn build(
        &self,
        machine: &Machine,
    ) -> Result<Vec<Box<dyn crate::component::Program>>, ConfigError> {
        Ok(vec![Box::new(MatvecSparse::new(self, machine)?)])
    }
}

inventory::submit!(crate::component::WorkloadEntry::of::<MatvecSparseConfig>());

/// The program.
#[derive(Debug)]
pub struct MatvecSparse {
    layout: Layout,
    vectors: [ArrayId; 3],
    m: Arc<SparseRows>,
    page_size: u64,
    pairs: PairRows,
    threads: u32,
    refs: u32,
    compute: Ns,
    hints: Vec<Option<u32>>,
    iterations: u32,
    /// Per thread, the product it is working on.
    iter: Vec<u32>,
    /// Per pair, the product its block was last dealt for.
    dealt: Vec<u32>,
}

impl MatvecSparse {
    /// Validates `c` and lays out the three vectors.
    #[allow(clippy::type_complexity)]
    fn plan(
        c: &MatvecSparseConfig,
        machine: &Machine,
    ) -> Result<(Arc<SparseRows>, Layout, [ArrayId; 3], PairRows, u32, u64), ConfigError> {
        c.check_ranges("workload")?;
        let m = c.rows.clone().ok_or_else(|| {
            ConfigError::new(
                "workload.matrix",
                format!("matrix `{}` was not loaded", c.matrix),
            )
        })?;
        let threads = thread_count("workload.threads", c.threads, machine)?;
        let pairs = PairRows::new(m.rows(), threads)?;
        let ps = machine.page_size();
        let w = c.word_bytes;
        let mut layout = Layout::new();
        let rp = layout.alloc("row pointers", m.rows() + 1, w, ps);
        let ci = layout.alloc("column indices", m.nnz(), w, w);
        let nz = layout.alloc("non-zero entries", m.nnz(), w, w);
        let pages = layout.pages_checked(ps, "workload.matrix")?;
        Ok((m, layout, [rp, ci, nz], pairs, threads, pages))
    }

    /// What the program needs, from its parameters (and its loaded matrix) alone.
    pub fn footprint(c: &MatvecSparseConfig, machine: &Machine) -> Result<Footprint, ConfigError> {
        let (m, _, _, _, threads, pages) = Self::plan(c, machine)?;
        // Per row: announcements and two row-pointer reads; per entry two runs and a
        // compute op; a barrier and an iteration end per thread and product.
        let per_iter = m
            .rows()
            .saturating_mul(8)
            .saturating_add(m.nnz().saturating_mul(3))
            .saturating_add(2 * threads as u64);
        let longest_row = m.row_ptr.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
        Ok(Footprint {
            pages,
            threads,
            ops: per_iter.saturating_mul(c.iterations as u64),
            buffered_ops: longest_row.saturating_mul(5).saturating_add(8),
            bytes: Footprint::hint_bytes(pages).saturating_add(threads as u64 * 8),
            iterations: c.iterations as u64,
            size_field: "workload.matrix",
            ops_field: "workload.iterations",
        })
    }

    /// Builds the program for `machine`.
    pub fn new(c: &MatvecSparseConfig, machine: &Machine) -> Result<Self, ConfigError> {
        let (m, layout, [rp, ci, nz], pairs, threads, pages) = Self::plan(c, machine)?;
        let ps = machine.page_size();
        let w = c.word_bytes;
        let spans: Vec<(u64, u64)> = [rp, ci, nz]
            .iter()
            .map(|&v| {
                let a = layout.array(v);
                (a.base, a.base + a.span())
            })
            .collect();
        // Each page starts in the memory of the thread whose rows its first word serves.
        let hints = (0..pages)
            .map(|p| {
                let byte = p * ps;
                let v = spans.iter().position(|&(lo, hi)| byte >= lo && byte < hi)?;
                let idx = (byte - spans[v].0) / w;
                let row = if v == 0 {
                    idx.min(m.rows() - 1)
                } else {
                    (m.row_ptr.partition_point(|&q| q <= idx) as u64).saturating_sub(1)
                };
                Some(pairs.owner(row))
            })
            .collect();
        Ok(MatvecSparse {
            layout,
            vectors: [rp, ci, nz],
            m,
            page_size: ps,
            pairs,
            threads,
            refs: c.refs_per_nonzero,
            compute: Ns(c.compute_ns_per_nonzero),
            hints,
            iterations: c.iterations,
            iter: vec![0; threads as usize],
            dealt: vec![0; threads as usize / 2],
        })
    }

    fn page(&self, v: usize, idx: u64) -> Vpn {
        Vpn((self.layout.array(self.vectors[v]).addr(0, idx) / self.page_size) as u32)
    }
}

impl Program for MatvecSparse {
    fn name(&self) -> &str {
        "matvec-sparse"
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
        let k = self.iter[t as usize];
        if k >= self.iterations {
            return;
        }
        // The barrier ends a product for both threads of a pair before either starts
        // the next, so the first of them to ask deals the block again.
        let pair = (t / 2) as usize;
        if self.dealt[pair] < k {
            self.pairs.reset_pair(pair);
            self.dealt[pair] = k;
        }
        let Some(r) = self.pairs.claim(t) else {
            self.iter[t as usize] = k + 1;
            out.push(Op::Barrier);
            out.push(Op::IterationEnd(k));
            return;
        };
        let (k0, k1) = (self.m.row_ptr[r as usize], self.m.row_ptr[r as usize + 1]);
        // Announce the row's pages (the Foresight baseline's knowledge).
        let mut pages = vec![self.page(0, r), self.page(0, r + 1)];
        if k1 > k0 {
            for v in 1..3 {
                let (a, b) = (self.page(v, k0).0, self.page(v, k1 - 1).0);
                pages.extend((a..=b).map(Vpn));
            }
        }
        pages.dedup();
        out.extend(pages.into_iter().map(Op::Advise));
        out.push(Op::Ref {
            vpn: self.page(0, r),
            write: false,
            count: 1,
            at: 0,
            span: 0,
        });
        out.push(Op::Ref {
            vpn: self.page(0, r + 1),
            write: false,
            count: 1,
            at: 0,
            span: 0,
        });
        for k in k0..k1 {
            out.push(Op::Ref {
                vpn: self.page(1, k),
                write: false,
                count: 1,
                at: 0,
                span: 0,
            });
            out.push(Op::Ref {
                vpn: self.page(2, k),
                write: false,
                count: self.refs,
                at: 0,
                span: 0,
            });
            if self.compute > Ns::ZERO {
                out.push(Op::Compute(self.compute));
            }
        }
    }
}
