//! `gauss`: Gaussian elimination without pivoting on an N x N integer matrix, the
//! "simulated" elimination of PLATINUM (Cox & Fowler 1989, §1 and §5.1; LeBlanc's 800 x 800
//! problem). One thread per processor, each statically assigned rows; in round k the pivot
//! row k is read by every thread that still has rows below it, and each thread eliminates
//! column k from its rows. An array of event counts synchronises: when row k+1 is final
//! (its owner eliminated it with pivot k, doing that row first) the owner advances event
//! count k+1; the others spin on it before reading pivot row k+1.
//!
//! Threads start together at a spin lock used as a barrier (thread 0 holds it while it
//! starts up; the others test-and-set it until it is released).
//!
//! The matrix size is the termination test of the inner loop (§4.2: "it is vital that each
//! processor have a local copy"). `size_read` says where each element's test reads it:
//! `register` (no reference: a compiler kept it in a register), `private` (each thread's
//! own copy on a page of its own, written at start: the program after the fix the paper
//! describes) or `lock-page` (the one shared copy, on the start lock's page: the §4.2
//! anecdote, where spinning on the lock froze the page and every inner loop then read the
//! size remotely). The last two differ only in where the read goes, so the anecdote's
//! cost is measured against a program doing the same number of references.
//!
//! Variants: `uma` is the plain shared-memory program the coherent memory runs (the pivot
//! row is read in place); `numa` is the hand-placed Uniform System style of LeBlanc's
//! coarse-grain version: each thread's rows are placed on its node and every thread copies
//! the pivot row into a private local buffer once per round before using it.

use super::common::{thread_count, Variant};
use super::emit::{Emitter, STREAM_OPS};
use crate::component::{Op, Program};
use crate::error::ConfigError;
use crate::estimate::{runs_of, Footprint};
use crate::fields::Fields;
use crate::machine::Machine;
use crate::memory::{ArrayId, Layout};
use crate::types::{Ns, Vpn};
use serde::{Deserialize, Serialize};

/// Parameters of `gauss`, with the paper's problem as defaults.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct GaussConfig {
    /// Matrix order N. Default 800 (the 800 x 800 matrix of §5.1).
    #[field(min = 2, max = 100_000)]
    pub n: u64,
    /// Threads; default: one per processor (§5.1).
    #[field(min = 1, max = crate::estimate::MAX_THREADS)]
    pub threads: Option<u32>,
    /// Rows dealt cyclically (row i to thread i mod p), true, or in contiguous blocks,
    /// false. The paper says only that rows are statically assigned; cyclic keeps the
    /// shrinking rounds balanced. Default true.
    pub cyclic: bool,
    /// Start every row on a new page (page-aligned allocation, the PLATINUM programming
    /// style of §6: data with different sharing patterns on distinct pages). Default true.
    pub row_per_page: bool,
    /// Element size in bytes. Default 4 (32-bit integers).
    #[field(min = 1, max = 65_536, unit = "bytes")]
    pub elem_bytes: u64,
    /// Computation per element update besides its three references (pivot read, row
    /// read, row write), in ns. Default 3000: an estimate for a 16.67 MHz MC68020 (a 32-bit
    /// integer multiply of about 43 clocks plus loop overhead); the paper gives no figure.
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub compute_ns_per_element: u64,
    /// Where the inner loop's termination test reads the matrix size at every element:
    /// `register` (no reference), `private` (the thread's own copy, on a page of its own:
    /// PLATINUM's program) or `lock-page` (the shared copy on the start lock's page: the
    /// §4.2 anecdote). Default `register`: LaRowe's papers do not describe their program's
    /// loop; `platinum89` sets `private`.
    pub size_read: SizeRead,
    /// `uma` (the PLATINUM program) or `numa` (Uniform System style: rows placed on
    /// their owners, pivot row copied into a private buffer each round). Default uma.
    pub variant: Variant,
}

impl Default for GaussConfig {
    fn default() -> Self {
        GaussConfig {
            n: 800,
            threads: None,
            cyclic: true,
            row_per_page: true,
            elem_bytes: 4,
            compute_ns_per_element: 3000,
            size_read: SizeRead::Register,
            variant: Variant::Uma,
        }
    }
}

/// Where `gauss`'s inner loop reads the matrix size (see [`GaussConfig::size_read`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SizeRead {
    /// Kept in a register: no reference.
    #[default]
    Register,
    /// Each thread's private copy, on a page of its own (written by the thread at start).
    Private,
    /// The one shared copy, on the start spin lock's page (written by thread 0 at start).
    LockPage,
}

/// Per-thread progress.
#[derive(Clone, Debug)]
struct ThreadState {
    started: bool,
    round: u64,
    /// The round under way and its next row (its rows are appended a few at a time).
    rows: Option<(u64, std::iter::StepBy<std::ops::Range<u64>>)>,
    /// The reference run taken back at the end of the last call
    /// ([`super::emit::hold_back`]).
    pending: Option<Op>,
}

impl crate::registry::Describe for GaussConfig {
    const KIND: &'static str = "gauss";
    const DESCRIPTION: &'static str = "Gaussian elimination without pivoting, 800x800 integers, rows per thread, event counts (PLATINUM 5.1)";
}

impl crate::component::WorkloadParams for GaussConfig {
    fn footprint(&self, machine: &Machine) -> Result<crate::estimate::Footprint, ConfigError> {
        Gauss::footprint(self, machine)
    }
    fn build(
        &self,
        machine: &Machine,
    ) -> Result<Vec<Box<dyn crate::component::Program>>, ConfigError> {
        Ok(vec![Box::new(Gauss::new(self, machine)?)])
    }
}

inventory::submit!(crate::component::WorkloadEntry::of::<GaussConfig>());

/// The `gauss` program.
#[derive(Debug)]
pub struct Gauss {
    layout: Layout,
    a: ArrayId,
    events: ArrayId,
    lock: ArrayId,
    pivot_buf: Option<ArrayId>,
    /// The threads' private copies of the matrix size, one page each (`size_read = private`).
    sizes: Option<ArrayId>,
    n: u64,
    threads: u32,
    cyclic: bool,
    compute: u64,
    size_read: SizeRead,
    hints: Vec<Option<u32>>,
    state: Vec<ThreadState>,
    emit: Emitter,
}

/// The address space of one configuration.
struct Plan {
    layout: Layout,
    a: ArrayId,
    events: ArrayId,
    lock: ArrayId,
    pivot_buf: Option<ArrayId>,
    sizes: Option<ArrayId>,
    threads: u32,
    pages: u64,
}

/// The event count that opens the start barrier (after the N row events).
fn start_event(n: u64) -> u32 {
    n as u32
}

impl Gauss {
    /// Validates `c` and lays out the address space.
    fn plan(c: &GaussConfig, machine: &Machine) -> Result<Plan, ConfigError> {
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
        let a = layout.alloc_2d("matrix", c.n, c.n, c.elem_bytes, ps, row_align);
        // Synchronisation data on pages of their own, as a PLATINUM programmer would.
        let events = layout.alloc("event-counts", c.n, 4, ps);
        let lock = layout.alloc("start-lock", 2, 4, ps);
        let pivot_buf = match c.variant {
            Variant::Numa => Some(layout.alloc_2d("pivot-copies", threads as u64, c.n, 4, ps, ps)),
            Variant::Uma => None,
        };
        // A private variable of each thread, on a page of its own so that no other
        // thread's traffic reaches it.
        let sizes = (c.size_read == SizeRead::Private)
            .then(|| layout.alloc_2d("private-sizes", threads as u64, 1, 4, ps, ps));
        let pages = layout.pages_checked(ps, "workload.n")?;
        Ok(Plan {
            layout,
            a,
            events,
            lock,
            pivot_buf,
            sizes,
            threads,
            pages,
        })
    }

    /// What the program needs, from its parameters alone.
    pub fn footprint(c: &GaussConfig, machine: &Machine) -> Result<Footprint, ConfigError> {
        let Plan { threads, pages, .. } = Self::plan(c, machine)?;
        let ps = machine.page_size();
        // About n^2/2 row updates, each three runs over the rest of a row, a compute op and
        // the size reads, plus the pivot signals and waits.
        let per_update = runs_of(c.n, c.elem_bytes, ps)
            .saturating_mul(3)
            .saturating_add(3);
        let updates = c.n.saturating_mul(c.n) / 2 + c.n;
        let rows_per_thread = c.n.div_ceil(threads as u64);
        Ok(Footprint {
            pages,
            threads,
            ops: updates
                .saturating_mul(per_update)
                .saturating_add(c.n.saturating_mul(8)),
            buffered_ops: rows_per_thread
                .saturating_mul(per_update)
                .saturating_add(16),
            bytes: Footprint::hint_bytes(pages).saturating_add(threads as u64 * 16),
            iterations: 0,
            size_field: "workload.n",
            ops_field: "workload.n",
        })
    }

    /// Builds the program for `machine`.
    pub fn new(c: &GaussConfig, machine: &Machine) -> Result<Gauss, ConfigError> {
        let Plan {
            layout,
            a,
            events,
            lock,
            pivot_buf,
            sizes,
            threads,
            ..
        } = Self::plan(c, machine)?;
        let ps = machine.page_size();
        let mut g = Gauss {
            layout,
            a,
            events,
            lock,
            pivot_buf,
            sizes,
            n: c.n,
            threads,
            cyclic: c.cyclic,
            compute: c.compute_ns_per_element,
            size_read: c.size_read,
            hints: Vec::new(),
            state: vec![
                ThreadState {
                    started: false,
                    round: 0,
                    rows: None,
                    pending: None,
                };
                threads as usize
            ],
            emit: Emitter { page_size: ps },
        };
        if c.variant == Variant::Numa {
            g.hints = g.numa_hints(ps);
        }
        Ok(g)
    }

    /// The thread owning row `i`.
    fn owner(&self, i: u64) -> u32 {
        if self.cyclic {
            (i % self.threads as u64) as u32
        } else {
            super::matvec::block_of(i, self.n, self.threads)
        }
    }

    /// Rows of thread `t` below row `k`, ascending (found without scanning every row:
    /// every round asks).
    fn rows_after(&self, t: u32, k: u64) -> std::iter::StepBy<std::ops::Range<u64>> {
        let (p, first) = (self.threads as u64, k + 1);
        if self.cyclic {
            // The first row from `first` whose number is `t` modulo the thread count.
            let start = first + (t as u64 + p - first % p) % p;
            (start.min(self.n)..self.n).step_by(p as usize)
        } else {
            // Blocks are contiguous and in thread order.
            let lo = partition(self.n, |i| self.owner(i) < t);
            let hi = partition(self.n, |i| self.owner(i) <= t);
            (lo.max(first).min(hi)..hi).step_by(1)
        }
    }

    /// The Uniform System placement: each row's pages on its owner's node, each private
    /// pivot buffer and private size on its thread's node, synchronisation pages unplaced.
    fn numa_hints(&self, ps: u64) -> Vec<Option<u32>> {
        let a = self.layout.array(self.a);
        // Arrays with one row per thread.
        let private: Vec<_> = [self.pivot_buf, self.sizes]
            .into_iter()
            .flatten()
            .map(|b| self.layout.array(b))
            .collect();
        (0..self.layout.pages(ps))
            .map(|p| {
                let byte = p * ps;
                if byte >= a.base && byte < a.base + a.span() {
                    return Some(self.owner(((byte - a.base) / a.row_stride).min(self.n - 1)));
                }
                private
                    .iter()
                    .find(|b| byte >= b.base && byte < b.base + b.span())
                    .map(|b| ((byte - b.base) / b.row_stride) as u32)
            })
            .collect()
    }

    fn page_of(&self, arr: ArrayId, row: u64, col: u64) -> Vpn {
        Vpn((self.layout.array(arr).addr(row, col) / self.emit.page_size) as u32)
    }

    /// Thread `t` reaches the start barrier: thread 0 holds the lock while it starts up
    /// (writing the shared size when it lives there) and opens it; the others
    /// test-and-set the lock until it opens. A thread with a private size writes it first.
    fn start(&self, t: u32, out: &mut Vec<Op>) {
        if let Some(sizes) = self.sizes {
            out.push(Op::Ref {
                vpn: self.page_of(sizes, t as u64, 0),
                write: true,
                count: 1,
                at: 0,
                span: 0,
            });
        }
        let lock_page = self.page_of(self.lock, 0, 0);
        if t == 0 {
            out.push(Op::Ref {
                vpn: lock_page,
                write: true,
                count: 1 + (self.size_read == SizeRead::LockPage) as u32,
                at: 0,
                span: 0,
            });
            out.push(Op::Advance {
                event: start_event(self.n),
                to: 1,
            });
            // Row 0 is final from the start: its event count is set once the slaves run.
            if self.owner(0) == 0 {
                self.signal(0, out);
            }
        } else {
            out.push(Op::Spin {
                vpn: lock_page,
                write: true,
                count: 1,
                event: start_event(self.n),
                at_least: 1,
            });
            if self.owner(0) == t {
                self.signal(0, out);
            }
        }
    }

    /// Writes event count `k` and advances it: pivot row `k` is final.
    fn signal(&self, k: u64, out: &mut Vec<Op>) {
        out.push(Op::Ref {
            vpn: self.page_of(self.events, 0, k),
            write: true,
            count: 1,
            at: 0,
            span: 0,
        });
        out.push(Op::Advance {
            event: k as u32,
            to: 1,
        });
    }

    /// Thread `t` eliminates column `k` from row `i` (> k) with pivot row `k`, read from
    /// `pivot` (the shared row or the thread's private copy).
    fn eliminate(&self, t: u32, k: u64, i: u64, out: &mut Vec<Op>) {
        let len = self.n - k;
        let a = self.layout.array(self.a);
        let (pivot_addr, pivot_elem) = match self.pivot_buf {
            Some(b) => {
                let buf = self.layout.array(b);
                (buf.addr(t as u64, k), buf.elem_bytes)
            }
            None => (a.addr(k, k), a.elem_bytes),
        };
        // The multiplier a[i][k] / a[k][k], then the row update, element by element: the
        // reference runs of one row are merged per page in the order the loop issues them.
        self.emit.range(out, pivot_addr, len, pivot_elem, 1, false);
        self.emit
            .range(out, a.addr(i, k), len, a.elem_bytes, 1, false);
        // The termination test of the inner loop reads the matrix size at every element.
        let size_page = match self.size_read {
            SizeRead::Register => None,
            SizeRead::Private => self.sizes.map(|s| self.page_of(s, t as u64, 0)),
            SizeRead::LockPage => Some(self.page_of(self.lock, 0, 1)),
        };
        if let Some(vpn) = size_page {
            out.push(Op::Ref {
                vpn,
                write: false,
                count: len as u32,
                at: 0,
                span: 0,
            });
        }
        if self.compute > 0 {
            out.push(Op::Compute(Ns(self.compute * len)));
        }
        self.emit
            .range(out, a.addr(i, k), len, a.elem_bytes, 1, true);
    }

    /// The start of round `k` for thread `t`: wait for pivot `k`, copy it (numa). Its own
    /// rows below the pivot follow (`false`: it has none, and the round is nothing).
    fn round_start(&self, t: u32, k: u64, out: &mut Vec<Op>) -> bool {
        if self.rows_after(t, k).next().is_none() {
            return false;
        }
        if self.owner(k) != t {
            out.push(Op::Spin {
                vpn: self.page_of(self.events, 0, k),
                write: false,
                count: 1,
                event: k as u32,
                at_least: 1,
            });
        }
        if let Some(b) = self.pivot_buf {
            let a = self.layout.array(self.a);
            let buf = self.layout.array(b);
            let len = self.n - k;
            self.emit
                .range(out, a.addr(k, k), len, a.elem_bytes, 1, false);
            self.emit
                .range(out, buf.addr(t as u64, k), len, buf.elem_bytes, 1, true);
        }
        true
    }

    /// A whole round, as the calls of a round append it one after another.
    #[cfg(test)]
    fn round(&self, t: u32, k: u64, out: &mut Vec<Op>) {
        if self.round_start(t, k, out) {
            for i in self.rows_after(t, k) {
                self.round_row(t, k, i, out);
            }
        }
    }

    /// Row `i` of round `k` (eliminated, then signalled when it is the next pivot).
    fn round_row(&self, t: u32, k: u64, i: u64, out: &mut Vec<Op>) {
        self.eliminate(t, k, i, out);
        if i == k + 1 {
            self.signal(k + 1, out);
        }
    }
}

/// The first of `0..n` for which `below` is false (`below` holds for a prefix).
fn partition(n: u64, below: impl Fn(u64) -> bool) -> u64 {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if below(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

impl Program for Gauss {
    fn name(&self) -> &str {
        "gauss"
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
        if !self.state[ti].started {
            self.state[ti].started = true;
            self.start(t, out);
            return;
        }
        // A round is appended a few rows at a time ([`STREAM_OPS`]); the run last taken
        // back starts the next call.
        if let Some(op) = self.state[ti].pending.take() {
            out.push(op);
        }
        if self.state[ti].rows.is_none() {
            // Rounds in which the thread has nothing to do emit nothing; skip to the next
            // one that does, or finish.
            loop {
                if self.state[ti].round + 1 >= self.n {
                    return;
                }
                let k = self.state[ti].round;
                self.state[ti].round += 1;
                if self.round_start(t, k, out) {
                    self.state[ti].rows = Some((k, self.rows_after(t, k)));
                    break;
                }
            }
        }
        let (k, mut rows) = self.state[ti].rows.take().expect("a round under way");
        for i in rows.by_ref() {
            self.round_row(t, k, i, out);
            if out.len() > STREAM_OPS {
                break;
            }
        }
        if rows.clone().next().is_none() {
            out.push(Op::IterationEnd(k as u32));
        } else {
            self.state[ti].pending = super::emit::hold_back(out);
            self.state[ti].rows = Some((k, rows));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::{Costs, MachineConfig, Topology};

    fn machine(nodes: u16) -> Machine {
        Machine::new(MachineConfig {
            loaded_latency: None,
            preset: "t".into(),
            description: String::new(),
            nodes,
            procs_per_node: 1,
            frames_per_node: 4096,
            node_frames: Vec::new(),
            memory_only_nodes: 0,
            page_size_bytes: 4096,
            word_size_bytes: 4,
            topology: Topology::Uniform,
            costs: Costs {
                local_read_ns: 1,
                local_write_ns: 1,
                remote_read_ns: 2,
                remote_write_ns: 2,
                cached_read_ns: None,
                page_fault_ns: 0,
                migrate_fixed_ns: 0,
                replicate_fixed_ns: 0,
                block_transfer_per_word_ns: 0,
                coherency_fault_fixed_ns: 0,
                coherency_per_copy_ns: 0,
                shootdown_per_node_ns: 0,
                pte_lock_ns: 0,
                pte_examine_ns: 0,
                module_service_ns: 1,
                remote_module_service_ns: None,
                switch_service_ns: 0,
                operation_delay_ns: 0,
            },
            variation: Default::default(),
            contention: false,
            cache: Default::default(),
            compute_time_pct: 100,
            clock_mhz: None,
        })
        .unwrap()
    }

    /// The program of 8 rows on 2 processors, with `f` applied to the defaults.
    fn eight_rows(f: impl FnOnce(&mut GaussConfig)) -> Gauss {
        let mut c = GaussConfig {
            n: 8,
            ..Default::default()
        };
        f(&mut c);
        Gauss::new(&c, &machine(2)).unwrap()
    }

    fn refs(ops: &[Op], write: bool) -> u64 {
        ops.iter()
            .map(|o| match o {
                Op::Ref {
                    write: w, count, ..
                } if *w == write => *count as u64,
                _ => 0,
            })
            .sum()
    }

    #[test]
    fn a_round_updates_every_own_row_below_the_pivot() {
        let g = eight_rows(|_| {});
        let mut out = Vec::new();
        // Thread 1 owns rows 1, 3, 5, 7; in round 2 it updates rows 3, 5, 7 over 6 columns
        // and writes the event count of row 3, the next pivot.
        g.round(1, 2, &mut out);
        assert_eq!(refs(&out, true), 3 * 6 + 1);
        assert!(matches!(out[0], Op::Spin { event: 2, .. }));
    }

    #[test]
    fn rounds_appended_a_few_rows_at_a_time_are_the_rounds_appended_whole() {
        let c = GaussConfig {
            n: 300,
            threads: Some(2),
            ..Default::default()
        };
        let mut g = Gauss::new(&c, &machine(2)).unwrap();
        let whole = {
            let g = Gauss::new(&c, &machine(2)).unwrap();
            let mut out = Vec::new();
            g.start(1, &mut out);
            for k in 0..c.n - 1 {
                let before = out.len();
                g.round(1, k, &mut out);
                if out.len() > before {
                    out.push(Op::IterationEnd(k as u32));
                }
            }
            out
        };
        let (mut streamed, mut out, mut calls) = (Vec::new(), Vec::new(), 0);
        loop {
            out.clear();
            g.next_ops(1, &[true, true], &mut out);
            if out.is_empty() {
                break;
            }
            assert!(out.len() <= STREAM_OPS + 8);
            calls += 1;
            streamed.extend_from_slice(&out);
        }
        assert!(calls > c.n);
        assert_eq!(streamed, whole);
    }

    #[test]
    fn the_owner_of_the_next_pivot_signals_it_after_its_update() {
        let g = eight_rows(|_| {});
        let mut out = Vec::new();
        g.round(1, 0, &mut out);
        let advance = out
            .iter()
            .position(|o| matches!(o, Op::Advance { event: 1, .. }))
            .expect("row 1 signalled");
        // Row 1's update (three runs: pivot, row, row write) comes before the signal.
        assert!(advance >= 3);
    }

    #[test]
    fn the_numa_variant_places_rows_on_their_owners() {
        let g = eight_rows(|c| c.variant = Variant::Numa);
        assert_eq!(&g.hints[..4], &[Some(0), Some(1), Some(0), Some(1)]);
    }

    /// The reads of page `vpn` in `ops`.
    fn reads_of(ops: &[Op], vpn: Vpn) -> u64 {
        ops.iter()
            .map(|o| match o {
                Op::Ref {
                    vpn: v,
                    write: false,
                    count,
                    ..
                } if *v == vpn => *count as u64,
                _ => 0,
            })
            .sum()
    }

    /// Thread 1's round 2 with 8 rows (rows 3, 5, 7 over 6 columns) under `size_read`.
    fn round_with(size_read: SizeRead) -> (Gauss, Vec<Op>) {
        let g = eight_rows(|c| c.size_read = size_read);
        let mut out = Vec::new();
        g.round(1, 2, &mut out);
        (g, out)
    }

    #[test]
    fn a_size_in_a_register_is_never_read() {
        let (g, out) = round_with(SizeRead::Register);
        assert!(g.sizes.is_none());
        assert_eq!(refs(&out, false), 3 * 2 * 6);
    }

    #[test]
    fn a_private_size_is_read_at_every_element_from_the_threads_own_page() {
        let (g, out) = round_with(SizeRead::Private);
        let own = g.page_of(g.sizes.unwrap(), 1, 0);
        assert_ne!(own, g.page_of(g.sizes.unwrap(), 0, 0));
        assert_eq!(reads_of(&out, own), 3 * 6);
        assert_eq!(refs(&out, false), 3 * 3 * 6);
    }

    #[test]
    fn a_size_on_the_lock_page_is_read_at_every_element_from_that_page() {
        let (g, out) = round_with(SizeRead::LockPage);
        assert!(g.sizes.is_none());
        assert_eq!(reads_of(&out, g.page_of(g.lock, 0, 1)), 3 * 6);
        assert_eq!(refs(&out, false), 3 * 3 * 6);
    }

    #[test]
    fn every_thread_writes_its_private_size_at_start() {
        let g = eight_rows(|c| c.size_read = SizeRead::Private);
        for t in 0..2 {
            let mut out = Vec::new();
            g.start(t, &mut out);
            assert!(matches!(out[0], Op::Ref { vpn, write: true, .. }
                if vpn == g.page_of(g.sizes.unwrap(), t as u64, 0)));
        }
    }

    #[test]
    fn the_numa_variant_places_private_sizes_on_their_threads() {
        let g = eight_rows(|c| {
            c.size_read = SizeRead::Private;
            c.variant = Variant::Numa;
        });
        for t in 0..2u32 {
            let page = g.page_of(g.sizes.unwrap(), t as u64, 0);
            assert_eq!(g.hints[page.0 as usize], Some(t));
        }
    }

    #[test]
    fn more_threads_than_rows_is_an_error_naming_the_field() {
        let c = GaussConfig {
            n: 2,
            threads: Some(3),
            ..Default::default()
        };
        let e = Gauss::new(&c, &machine(2)).unwrap_err();
        assert!(e.to_string().contains("workload.threads"));
    }
}
