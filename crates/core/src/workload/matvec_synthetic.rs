//! `matvec-synthetic`: Holliday's controlled migration experiment (ASPLOS 1989, sections
//! 4.2 and 5.1). A 512 x 512 matrix of four-byte floats times a vector; every row starts a
//! new page; threads work in pairs from opposite ends of their block of rows (see
//! [`super::pair_rows`]). In the half of each block that starts in the even thread's
//! memory every even entry is zero, so the even thread finishes its half first and goes on
//! into rows whose pages sit in its partner's memory: the reference pattern changes and a
//! migration can pay off, the more so the more often each non-zero entry is referenced.
//!
//! The vector is each processor's private copy, as in the paper's testbed, so it costs no
//! shared references. Each row is announced page by page before it is used ([`Op::Advise`]),
//! which is what the Foresight baseline migrates on.

use super::common::thread_count;
use super::emit::STREAM_OPS;
use super::pair_rows::PairRows;
use crate::component::{Op, Program};
use crate::error::ConfigError;
use crate::estimate::{runs_of, Footprint};
use crate::fields::Fields;
use crate::machine::Machine;
use crate::memory::{ArrayId, Layout};
use crate::types::{Ns, Vpn};
use serde::{Deserialize, Serialize};

/// Parameters of `matvec-synthetic`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct MatvecSyntheticConfig {
    /// Matrix order N. Default 512 (the paper's 1 MB matrix).
    #[field(min = 2, max = 4_294_967_296)]
    pub n: u64,
    /// References to each non-zero entry. Default 1 (the paper uses 1, 10 and 20).
    #[field(min = 1)]
    pub refs_per_nonzero: u32,
    /// References to each zeroed entry. Default 0: the program skips the zeroed entries,
    /// which is what lets the even thread run ahead.
    #[field(min = 0)]
    pub refs_per_zero: u32,
    /// Threads, an even number; default one per processor (the paper uses 16 and 4).
    #[field(min = 1, max = crate::estimate::MAX_THREADS)]
    pub threads: Option<u32>,
    /// Element size in bytes. Default 4.
    #[field(min = 1, max = 65_536, unit = "bytes")]
    pub elem_bytes: u64,
    /// Private computation per non-zero entry, in ns (loop control and arithmetic on
    /// private data, which the software translation does not see). Default 0.
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub compute_ns_per_nonzero: u64,
}

impl Default for MatvecSyntheticConfig {
    fn default() -> Self {
        MatvecSyntheticConfig {
            n: 512,
            refs_per_nonzero: 1,
            refs_per_zero: 0,
            threads: None,
            elem_bytes: 4,
            compute_ns_per_nonzero: 0,
        }
    }
}

impl crate::registry::Describe for MatvecSyntheticConfig {
    const KIND: &'static str = "matvec-synthetic";
    const DESCRIPTION: &'static str = "512x512 matvec, processor pairs from opposite ends, half the rows 50% zero, repeated references (Holliday 4.2)";
}

impl crate::component::WorkloadParams for MatvecSyntheticConfig {
    fn footprint(&self, machine: &Machine) -> Result<crate::estimate::Footprint, ConfigError> {
        MatvecSynthetic::footprint(self, machine)
    }
    fn build(
        &self,
        machine: &Machine,
    ) -> Result<Vec<Box<dyn crate::component::Program>>, ConfigError> {
        Ok(vec![Box::new(MatvecSynthetic::new(self, machine)?)])
    }
}

inventory::submit!(crate::component::WorkloadEntry::of::<MatvecSyntheticConfig>());

/// The program.
#[derive(Debug)]
pub struct MatvecSynthetic {
    layout: Layout,
    a: ArrayId,
    n: u64,
    page_size: u64,
    rows: PairRows,
    threads: u32,
    refs_nonzero: u32,
    refs_zero: u32,
    compute: Ns,
    hints: Vec<Option<u32>>,
    /// Each thread's row under way and its next entry (a row is appended a few hundred
    /// entries at a time).
    place: Vec<Option<(u64, u64)>>,
}

impl MatvecSynthetic {
    /// Validates `c` and lays out the address space.
    fn plan(
        c: &MatvecSyntheticConfig,
        machine: &Machine,
    ) -> Result<(Layout, ArrayId, PairRows, u32, u64), ConfigError> {
        c.check_ranges("workload")?;
        let threads = thread_count("workload.threads", c.threads, machine)?;
        let ps = machine.page_size();
        let mut layout = Layout::new();
        // "Each row starts a new page and is a multiple number of pages."
        let a = layout.alloc_2d("A", c.n, c.n, c.elem_bytes, ps, ps);
        let pages = layout.pages_checked(ps, "workload.n")?;
        // Per-pair bookkeeping is small (threads are capped), so it is built here.
        let rows = PairRows::new(c.n, threads)?;
        Ok((layout, a, rows, threads, pages))
    }

    /// What the program needs, from its parameters alone.
    pub fn footprint(
        c: &MatvecSyntheticConfig,
        machine: &Machine,
    ) -> Result<Footprint, ConfigError> {
        let (_, _, _, threads, pages) = Self::plan(c, machine)?;
        let ps = machine.page_size();
        // Per row: an announcement per page, a run and a compute op per entry.
        let per_row = runs_of(c.n, c.elem_bytes, ps).saturating_add(c.n.saturating_mul(2));
        Ok(Footprint {
            pages,
            threads,
            ops: c.n.saturating_mul(per_row),
            buffered_ops: per_row,
            bytes: Footprint::hint_bytes(pages),
            iterations: 0,
            size_field: "workload.n",
            ops_field: "workload.n",
        })
    }

    /// Builds the program for `machine`.
    pub fn new(c: &MatvecSyntheticConfig, machine: &Machine) -> Result<Self, ConfigError> {
        let (layout, a, rows, threads, pages) = Self::plan(c, machine)?;
        let ps = machine.page_size();
        let arr = layout.array(a).clone();
        let hints = (0..pages)
            .map(|p| {
                let r = (p * ps).saturating_sub(arr.base) / arr.row_stride;
                (r < c.n).then(|| rows.owner(r))
            })
            .collect();
        Ok(MatvecSynthetic {
            layout,
            a,
            n: c.n,
            page_size: ps,
            rows,
            threads,
            refs_nonzero: c.refs_per_nonzero,
            refs_zero: c.refs_per_zero,
            compute: Ns(c.compute_ns_per_nonzero),
            hints,
            place: vec![None; threads as usize],
        })
    }
}

impl Program for MatvecSynthetic {
    fn name(&self) -> &str {
        "matvec-synthetic"
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
        let ti = t as usize;
        loop {
            let (r, j0) = match self.place[ti] {
                Some(place) => place,
                None => {
                    // A row is claimed when the thread's previous row is all consumed,
                    // never in a call that appended part of it.
                    if !out.is_empty() {
                        return;
                    }
                    let Some(r) = self.rows.claim(t) else {
                        return;
                    };
                    let a = self.layout.array(self.a);
                    let ps = self.page_size;
                    let first = a.addr(r, 0) / ps;
                    let last = (a.addr(r, self.n - 1)) / ps;
                    for p in first..=last {
                        out.push(Op::Advise(Vpn(p as u32)));
                    }
                    (r, 0)
                }
            };
            // The row's entries a few hundred at a time ([`STREAM_OPS`]).
            let a = self.layout.array(self.a);
            let ps = self.page_size;
            let sparse_half = self.rows.in_even_half(r);
            let mut j = j0;
            while j < self.n && out.len() < STREAM_OPS {
                let zero = sparse_half && j % 2 == 0;
                let count = if zero {
                    self.refs_zero
                } else {
                    self.refs_nonzero
                };
                if count > 0 {
                    // One op per entry, not merged per page: a page that migrates in the
                    // middle of a row serves the rest of the row from its new home.
                    out.push(Op::Ref {
                        vpn: Vpn((a.addr(r, j) / ps) as u32),
                        write: false,
                        count,
                        at: 0,
                        span: 0,
                    });
                    if !zero && self.compute > Ns::ZERO {
                        out.push(Op::Compute(self.compute));
                    }
                }
                j += 1;
            }
            self.place[ti] = (j < self.n).then_some((r, j));
            if !out.is_empty() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_comes_a_few_hundred_entries_a_call_and_whole_in_order() {
        let mut m = crate::mm::test_machine_config(4);
        m.frames_per_node = 1 << 16;
        let machine = Machine::new(m).unwrap();
        let c = MatvecSyntheticConfig {
            n: 1000,
            threads: Some(4),
            compute_ns_per_nonzero: 5,
            ..MatvecSyntheticConfig::default()
        };
        let mut p = MatvecSynthetic::new(&c, &machine).unwrap();
        let (mut out, mut rows) = (Vec::new(), Vec::<Vec<Op>>::new());
        loop {
            out.clear();
            p.next_ops(0, &[true; 4], &mut out);
            if out.is_empty() {
                break;
            }
            assert!(out.len() <= STREAM_OPS + 16, "{}", out.len());
            // A row starts with its announcements, in a call of its own.
            if matches!(out[0], Op::Advise(_)) {
                rows.push(Vec::new());
            }
            rows.last_mut().unwrap().extend_from_slice(&out);
        }
        assert!(!rows.is_empty());
        for row in &rows {
            let refs = row.iter().filter(|o| matches!(o, Op::Ref { .. })).count() as u64;
            let computes = row.iter().filter(|o| matches!(o, Op::Compute(_))).count() as u64;
            // Every entry of the row, or every other one in the sparse half.
            assert!(refs == c.n || refs == c.n / 2, "{refs}");
            assert_eq!(refs, computes);
        }
    }
}
