//! Workloads: programs whose threads issue operations, generated lazily.
//!
//! A program is either fork-join (a [`LoopBody`] driven by [`ForkJoin`]: each iteration's
//! chunks, its memory affinity sets, are dealt to the threads running at the start of the
//! iteration, so a preempted thread's chunk moves to another node) or free-running (it
//! implements [`Program`] directly).

pub mod background;
pub mod backprop;
pub mod gauss;
pub mod gups;
pub mod hh3d;
pub mod hough;
pub mod jacobi;
pub mod matvec;
pub mod matvec_sparse;
pub mod matvec_synthetic;
pub mod msort;
pub mod nas;
pub mod nas_bt;
pub mod nas_cg;
pub mod nas_ft;
pub mod nas_lu;
pub mod nas_mg;
pub mod nas_sp;
pub mod pair_rows;
pub mod psolu;
pub mod surface_wave;
pub mod wave;

use crate::error::ConfigError;
use crate::estimate::Footprint;
use crate::machine::Machine;
use crate::memory::Layout;
use crate::registry::{Component, Describe, Meta, Params};
use crate::types::{Ns, Vpn};
use serde::{Deserialize, Serialize};

pub use backprop::BackpropConfig;
pub use gauss::{GaussConfig, SizeRead};
pub use hh3d::Hh3dConfig;
pub use hough::HoughConfig;
pub use jacobi::{CheckerReads, JacobiConfig, PageLayout};
pub use matvec::MatvecConfig;
pub use matvec_sparse::{MatvecSparseConfig, SparseRows};
pub use matvec_synthetic::MatvecSyntheticConfig;
pub use msort::MsortConfig;
pub use psolu::{PsoluConfig, PsoluVariant};
pub use surface_wave::SurfaceWaveConfig;
pub use wave::WaveConfig;

/// One operation of a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// A run of `count` word references to one page of the program (the unit that keeps
    /// the simulator fast: references to one page in a row cost one event).
    Ref {
        /// Page, numbered within the program's address space.
        vpn: Vpn,
        /// Writes (true) or reads (false).
        write: bool,
        /// Number of word references.
        count: u32,
        /// Where in the page the words the run walks begin (bytes). Only processor caches
        /// read it (which lines a run walks); 0 for a run from the page's start.
        at: u32,
        /// Bytes of the page the run walks from `at` (its lines, for processor caches);
        /// 0: `count` references of the program's reference size, one after another.
        span: u32,
    },
    /// Computation without shared references.
    Compute(Ns),
    /// Wait until every thread of the program arrives.
    Barrier,
    /// Acquire a lock of the program.
    Lock(u32),
    /// Release a lock of the program.
    Unlock(u32),
    /// A phase-change hint (DUnX).
    PhaseHint,
    /// The thread finished an iteration of the program's outer loop.
    IterationEnd(u32),
    /// The thread enters parallel construct `k` of its program (a fork-join loop's
    /// iteration): where an OpenMP-style runtime would ask the scheduler for processors.
    /// Not work: it costs only what the scheduler and the policy do about it.
    ParallelEnter(u32),
    /// The thread leaves parallel construct `k`, after the construct's closing barrier.
    ParallelExit(u32),
    /// The thread is about to reference this page (program-local) heavily: the perfect
    /// knowledge Holliday's Foresight baseline migrates on. Other policies ignore it.
    Advise(Vpn),
    /// Spin-wait: poll `vpn` with a run of `count` references (reads, or writes for a
    /// test-and-set), again and again, until the program's event count `event` has
    /// reached `at_least` when a poll starts. Every poll is a real reference run, so
    /// where the synchronisation page lives (local, replicated, frozen and remote) decides
    /// what waiting costs.
    Spin {
        /// The page holding the event count or lock word.
        vpn: Vpn,
        /// Whether a poll writes (test-and-set) or only reads.
        write: bool,
        /// Word references per poll.
        count: u32,
        /// The program's event count polled.
        event: u32,
        /// The value that ends the wait.
        at_least: u32,
    },
    /// Advances the program's event count `event` to at least `to` (the write to its
    /// word is a separate `Ref`). Spinning threads see it at their next poll.
    Advance {
        /// The event count.
        event: u32,
        /// Its new value (event counts never go back).
        to: u32,
    },
    /// The thread waits this long for input or output (an I/O-bound job's disk wait):
    /// it is not runnable meanwhile, and the scheduler, told it sleeps and wakes, may
    /// give its processor to another thread.
    Sleep(Ns),
}

/// A program: threads, an address space, and lazily generated operations.
pub trait Program {
    /// Name, for reports.
    fn name(&self) -> &str;
    /// Number of threads.
    fn threads(&self) -> u32;
    /// The address space.
    fn layout(&self) -> &Layout;
    /// Program-directed placement: for each page, the (program-local) thread whose node
    /// should hold it; empty when the program does not place its data (UMA variants).
    fn placement_hints(&self) -> &[Option<u32>];
    /// Appends the next operations of thread `t` to `out` (which is empty on entry);
    /// leaving it empty means the thread is done. `running[i]` says whether thread `i` runs.
    fn next_ops(&mut self, t: u32, running: &[bool], out: &mut Vec<Op>);
    /// Counts of the program's own, read once at the end of the run (e.g. psolu's
    /// iterations to convergence); each becomes a top-level key of the run's record.
    /// Default: none.
    fn counters(&self) -> Vec<crate::stats::Counter> {
        Vec::new()
    }
    /// Whether the program adapts its thread count to the processors it has at each
    /// parallel construct (process control): a thread not running when a construct's work
    /// is dealt sits the construct out, and the construct's barrier and iteration end wait
    /// only for the team. Default: no (every live thread takes part in every barrier).
    fn adapts_threads(&self) -> bool {
        false
    }
    /// How many threads the barrier thread `t` has just reached waits for; `None`: every
    /// live thread of the program (the default).
    fn barrier_parties(&self, _t: u32) -> Option<u32> {
        None
    }
    /// How many threads end iteration `k`; `None`: every thread (the default).
    fn iteration_parties(&self, _k: u32) -> Option<u32> {
        None
    }
    /// Bytes one reference of the program's runs stands for, where it is not a machine
    /// word (a model that counts one reference per cache line); `None`: a word. The
    /// processor caches turn a run's references into the lines it walks by it.
    fn ref_bytes(&self) -> Option<u64> {
        None
    }
}

/// Turns element ranges into page reference runs, merging consecutive runs to one page.
#[derive(Clone, Copy, Debug)]
pub struct Emitter {
    /// Page size in bytes.
    pub page_size: u64,
}

impl Emitter {
    /// Emits `per_elem` references to each of `len` consecutive elements of `elem_bytes`
    /// bytes starting at byte address `addr` (an element counts on the page of its first
    /// byte).
    pub fn range(
        &self,
        out: &mut Vec<Op>,
        addr: u64,
        len: u64,
        elem_bytes: u64,
        per_elem: u32,
        write: bool,
    ) {
        self.pieces(out, addr, len, elem_bytes, per_elem, write, true);
    }

    /// Like [`Emitter::range`] with one reference per element, but the first run never
    /// merges into the op before it: a walk that repeats the previous one (another pass
    /// over the same lines) stays a run of its own, so a processor cache sees the lines
    /// walked again rather than twice as many lines.
    pub fn walk(&self, out: &mut Vec<Op>, addr: u64, len: u64, elem_bytes: u64, write: bool) {
        self.pieces(out, addr, len, elem_bytes, 1, write, false);
    }

    #[allow(clippy::too_many_arguments)]
    fn pieces(
        &self,
        out: &mut Vec<Op>,
        mut addr: u64,
        len: u64,
        elem_bytes: u64,
        per_elem: u32,
        write: bool,
        merge_first: bool,
    ) {
        let mut left = len;
        let mut merge = merge_first;
        // Page sizes are powers of two in practice: a shift and a mask then, not divisions.
        let ps = self.page_size;
        let shift = ps.is_power_of_two().then(|| ps.trailing_zeros());
        if let Some(s) = shift.filter(|_| len > 0) {
            // Most ranges start all their elements on one page: one run, no loop.
            let last = addr + (len - 1) * elem_bytes;
            if addr >> s == last >> s {
                let at = addr & (ps - 1);
                let span = (len * elem_bytes).min(ps - at);
                let count = len * per_elem as u64;
                let vpn = Vpn((addr >> s) as u32);
                push_piece(out, merge, vpn, write, count, at as u32, span as u32);
                return;
            }
        }
        while left > 0 {
            let (page, at) = match shift {
                Some(s) => (addr >> s, addr & (ps - 1)),
                None => (addr / ps, addr % ps),
            };
            // Elements that start on this page (the last may run over its end).
            let room = ps - at;
            let k = left.min(if elem_bytes.is_power_of_two() {
                (room + elem_bytes - 1) >> elem_bytes.trailing_zeros()
            } else {
                room.div_ceil(elem_bytes)
            });
            let span = (k * elem_bytes).min(room);
            let vpn = Vpn(page as u32);
            let count = k * per_elem as u64;
            push_piece(out, merge, vpn, write, count, at as u32, span as u32);
            merge = true;
            addr += k * elem_bytes;
            left -= k;
        }
    }
}

impl Op {
    /// A run of `count` references to `vpn` from the page's start.
    pub fn run(vpn: Vpn, write: bool, count: u32) -> Op {
        Op::Ref {
            vpn,
            write,
            count,
            at: 0,
            span: 0,
        }
    }
}

/// Appends a reference run, merging it into the previous op when that is a run of the same
/// kind to the same page.
pub fn push_ref(out: &mut Vec<Op>, vpn: Vpn, write: bool, count: u64) {
    push_span(out, vpn, write, count, 0, 0);
}

/// One piece of a range: merged into the previous run when `merge` (see [`push_span`]),
/// else a run of its own (the range's first piece never joins a run before it). A page's
/// elements always fit one run's count.
#[inline]
fn push_piece(
    out: &mut Vec<Op>,
    merge: bool,
    vpn: Vpn,
    write: bool,
    count: u64,
    at: u32,
    span: u32,
) {
    if merge {
        push_span(out, vpn, write, count, at, span);
    } else {
        out.push(Op::Ref {
            vpn,
            write,
            count: count.min(u32::MAX as u64) as u32,
            at,
            span,
        });
    }
}

/// Appends a reference run walking `span` bytes of the page from byte `at` (0: see
/// [`Op::Ref`]), merging it into the previous op when that is a run of the same kind to
/// the same page (the merged run walks the smallest range holding both).
pub fn push_span(out: &mut Vec<Op>, vpn: Vpn, write: bool, count: u64, at: u32, span: u32) {
    if count == 0 {
        return;
    }
    if let Some(Op::Ref {
        vpn: v,
        write: w,
        count: c,
        at: a,
        span: s,
    }) = out.last_mut()
    {
        if *v == vpn && *w == write && (*c as u64 + count) <= u32::MAX as u64 {
            *c += count as u32;
            let lo = (*a).min(at);
            *s = if *s == 0 || span == 0 {
                0
            } else {
                (*a + *s).max(at + span) - lo
            };
            *a = lo;
            return;
        }
    }
    let mut count = count;
    while count > 0 {
        let c = count.min(u32::MAX as u64);
        out.push(Op::Ref {
            vpn,
            write,
            count: c as u32,
            at,
            span,
        });
        count -= c;
    }
}

/// The body of a fork-join loop program.
pub trait LoopBody {
    /// Number of outer iterations.
    fn iterations(&self) -> u32;
    /// Number of chunks (memory affinity sets) per iteration.
    fn chunks(&self) -> u32;
    /// Appends the operations of chunk `chunk` in iteration `iter`.
    fn chunk(&self, iter: u32, chunk: u32, out: &mut Vec<Op>);
    /// How many parts the driver asks for chunk `chunk` of iteration `iter` in (so that a
    /// large chunk is generated a part at a time, while its thread works through it).
    /// Default: one, the whole chunk.
    fn parts(&self, _iter: u32, _chunk: u32) -> u32 {
        1
    }
    /// Appends part `part` of chunk `chunk` in iteration `iter`; the parts in order append
    /// what [`LoopBody::chunk`] appends. Default: the whole chunk as part 0.
    fn part(&self, iter: u32, chunk: u32, part: u32, out: &mut Vec<Op>) {
        debug_assert_eq!(part, 0);
        self.chunk(iter, chunk, out);
    }
}

/// About how many operations a generator appends per call before it stops and keeps the
/// rest for the next: threads hold a few hundred operations each, never a whole row,
/// iteration or program, so the buffers stay in the host's caches.
pub const STREAM_OPS: usize = 256;

/// Ends a call of a generator that has more to append: when the last operation appended is
/// a reference run it is taken back (returned) to start the next call, so that a run the
/// next part would merge into it (as [`push_span`] merges consecutive runs to one page)
/// merges as if everything had been appended in one call. `out` keeps at least one
/// operation when it had two.
pub fn hold_back(out: &mut Vec<Op>) -> Option<Op> {
    match out.last() {
        Some(Op::Ref { .. }) if out.len() >= 2 => out.pop(),
        _ => None,
    }
}

/// Drives a [`LoopBody`]: each thread runs the chunks dealt to it, then a barrier and an
/// iteration end. Chunk `c` goes to thread `c mod threads` when it runs; chunks of threads
/// that do not run are dealt round robin to the running ones.
///
/// An adaptive driver ([`ForkJoin::adaptive`]) models an OpenMP runtime under process
/// control: each construct's team is the threads running when its work is dealt (after
/// the construct's entry, so a scheduler that reallocates processors at the entry decides
/// the team), only the team meets at the construct's barrier and iteration end, and a
/// thread outside it sits the construct out (idle, polling the runtime every
/// [`IDLE_POLL`]) and joins the next construct it is running for.
///
/// A thread's work of an iteration is appended a few hundred operations at a time
/// ([`STREAM_OPS`], in the body's parts), the thread's place kept between calls.
#[derive(Debug)]
pub struct ForkJoin<B> {
    body: B,
    threads: u32,
    next_iter: Vec<u32>,
    dealt_iter: Option<u32>,
    deal: Vec<Vec<u32>>,
    adaptive: Option<Team>,
    /// Each thread's place in the work of the iteration it is in, while some is left.
    work: Vec<Option<Work>>,
    /// Each thread's reference run taken back at the end of a call ([`hold_back`]).
    pending: Vec<Option<Op>>,
}

/// A thread's place in its work of an iteration: the next of its dealt chunks, and the
/// next part of it.
#[derive(Clone, Copy, Debug)]
struct Work {
    iter: u32,
    next: usize,
    part: u32,
}

/// How long an idle thread of an adaptive program waits before it looks for work again
/// (an OpenMP idle worker's poll of its runtime).
pub const IDLE_POLL: Ns = Ns(50_000);

/// The adaptive driver's view of its teams.
#[derive(Debug)]
struct Team {
    /// Whether each thread has announced its entry into the construct it is at.
    entered: Vec<bool>,
    /// Whether each thread is in the team of the last dealt construct.
    member: Vec<bool>,
    /// The highest construct any thread has entered.
    frontier: Option<u32>,
    /// (construct, team size) of the last two dealt constructs: a construct's iteration
    /// end can come after the next one is dealt, never after the one after.
    sizes: [(u32, u32); 2],
}

impl<B: LoopBody> ForkJoin<B> {
    /// A driver for `body` with `threads` threads.
    pub fn new(body: B, threads: u32) -> ForkJoin<B> {
        ForkJoin {
            body,
            threads,
            next_iter: vec![0; threads as usize],
            dealt_iter: None,
            deal: vec![Vec::new(); threads as usize],
            adaptive: None,
            work: vec![None; threads as usize],
            pending: vec![None; threads as usize],
        }
    }

    /// A driver that adapts its team to the running threads at each construct (see the
    /// type's documentation).
    pub fn adaptive(body: B, threads: u32) -> ForkJoin<B> {
        let mut fj = ForkJoin::new(body, threads);
        fj.adaptive = Some(Team {
            entered: vec![false; threads as usize],
            member: vec![false; threads as usize],
            frontier: None,
            sizes: [(u32::MAX, 0); 2],
        });
        fj
    }

    /// The loop body.
    pub fn body(&self) -> &B {
        &self.body
    }

    /// Whether the driver adapts its team ([`Program::adapts_threads`]).
    pub fn is_adaptive(&self) -> bool {
        self.adaptive.is_some()
    }

    /// Bytes a driver of `threads` threads keeps besides its dealt chunks (for
    /// footprints).
    pub fn bytes(threads: u32) -> u64 {
        threads as u64
            * (16
                + (std::mem::size_of::<Option<Work>>() + std::mem::size_of::<Option<Op>>()) as u64)
            + 64
    }

    fn deal_chunks(&mut self, running: &[bool]) {
        for d in &mut self.deal {
            d.clear();
        }
        let live: Vec<u32> = (0..self.threads).filter(|&t| running[t as usize]).collect();
        let mut orphan = 0usize;
        for c in 0..self.body.chunks() {
            let owner = c % self.threads;
            let t = if running[owner as usize] || live.is_empty() {
                owner
            } else {
                let t = live[orphan % live.len()];
                orphan += 1;
                t
            };
            self.deal[t as usize].push(c);
        }
    }

    /// Emits thread `t`'s next operations (see [`Program::next_ops`]): an iteration's
    /// entry and work, more of its work, or the end of its work and the iteration.
    pub fn next_ops(&mut self, t: u32, running: &[bool], out: &mut Vec<Op>) {
        if self.adaptive.is_some() {
            return self.next_ops_adaptive(t, running, out);
        }
        let ti = t as usize;
        if self.work[ti].is_none() {
            let iter = self.next_iter[ti];
            if iter >= self.body.iterations() {
                return;
            }
            if self.dealt_iter != Some(iter) {
                self.deal_chunks(running);
                self.dealt_iter = Some(iter);
            }
            out.push(Op::ParallelEnter(iter));
            self.work[ti] = Some(Work {
                iter,
                next: 0,
                part: 0,
            });
        }
        if !self.stream_work(ti, out) {
            return;
        }
        let iter = self.work[ti].take().expect("work under way").iter;
        out.push(Op::Barrier);
        out.push(Op::ParallelExit(iter));
        out.push(Op::IterationEnd(iter));
        self.next_iter[ti] = iter + 1;
    }

    /// Appends thread `ti`'s work of its iteration, part by part, until about
    /// [`STREAM_OPS`] operations are in `out`; `true` once all of it is appended.
    fn stream_work(&mut self, ti: usize, out: &mut Vec<Op>) -> bool {
        if let Some(op) = self.pending[ti].take() {
            out.push(op);
        }
        let w = self.work[ti].as_mut().expect("work under way");
        let deal = &self.deal[ti];
        loop {
            let Some(&c) = deal.get(w.next) else {
                return true;
            };
            let parts = self.body.parts(w.iter, c);
            if w.part < parts {
                self.body.part(w.iter, c, w.part, out);
                w.part += 1;
            }
            if w.part >= parts {
                w.next += 1;
                w.part = 0;
            }
            if out.len() > STREAM_OPS && w.next < deal.len() {
                self.pending[ti] = hold_back(out);
                return false;
            }
        }
    }

    /// The adaptive driver: entry announced on its own (so the scheduler's answer to it
    /// decides the team), then the work; the iteration end comes before the barrier (the
    /// last thread to end it is the one that releases the barrier, so the end is the same
    /// moment), so a thread a scheduler stops between the barrier and the exit has ended
    /// its iteration.
    fn next_ops_adaptive(&mut self, t: u32, running: &[bool], out: &mut Vec<Op>) {
        let ti = t as usize;
        if self.work[ti].is_some() {
            return self.finish_adaptive(ti, out);
        }
        let last = self.body.iterations();
        let mut iter = self.next_iter[ti];
        if iter >= last {
            return;
        }
        let team = self.adaptive.as_mut().expect("adaptive driver");
        if let Some(f) = team.frontier {
            // Behind the program: the thread sat the constructs in between out (it was
            // in none of their teams, or their barriers could not have released).
            let member_here = self.dealt_iter == Some(iter) && team.member[ti];
            if iter < f && !member_here {
                iter = f;
                self.next_iter[ti] = f;
                team.entered[ti] = false;
            }
            let dealt_without = self.dealt_iter == Some(iter) && !team.member[ti];
            if dealt_without && !team.entered[ti] {
                // The construct it is at runs without it: idle until the next one, or
                // done if it was the last.
                if iter + 1 >= last {
                    self.next_iter[ti] = last;
                    return;
                }
                out.push(Op::Compute(IDLE_POLL));
                return;
            }
        }
        if !team.entered[ti] {
            team.entered[ti] = true;
            team.frontier = Some(team.frontier.map_or(iter, |f| f.max(iter)));
            out.push(Op::ParallelEnter(iter));
            return;
        }
        team.entered[ti] = false;
        if self.dealt_iter != Some(iter) {
            for (m, &r) in team.member.iter_mut().zip(running) {
                *m = r;
            }
            let size = running.iter().filter(|&&r| r).count() as u32;
            team.sizes = [team.sizes[1], (iter, size)];
            self.deal_chunks(running);
            self.dealt_iter = Some(iter);
        }
        let team = self.adaptive.as_ref().expect("adaptive driver");
        if !team.member[ti] {
            // Entered after the work was dealt without it: leave, and idle.
            out.push(Op::ParallelExit(iter));
            return;
        }
        self.work[ti] = Some(Work {
            iter,
            next: 0,
            part: 0,
        });
        self.finish_adaptive(ti, out);
    }

    /// The adaptive driver's work of an iteration, a part at a time, then its end.
    fn finish_adaptive(&mut self, ti: usize, out: &mut Vec<Op>) {
        if !self.stream_work(ti, out) {
            return;
        }
        let iter = self.work[ti].take().expect("work under way").iter;
        out.push(Op::IterationEnd(iter));
        out.push(Op::Barrier);
        out.push(Op::ParallelExit(iter));
        self.next_iter[ti] = iter + 1;
    }

    /// For [`Program::barrier_parties`]: the team of the construct thread `t` is in.
    pub fn barrier_parties(&self, t: u32) -> Option<u32> {
        let k = self.next_iter.get(t as usize)?.checked_sub(1)?;
        self.iteration_parties(k)
    }

    /// For [`Program::iteration_parties`]: the team of construct `k`.
    pub fn iteration_parties(&self, k: u32) -> Option<u32> {
        let team = self.adaptive.as_ref()?;
        team.sizes.iter().find(|s| s.0 == k).map(|s| s.1)
    }
}

/// Whether a program places its own data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// UMA style: no placement, the policy decides.
    #[default]
    Uma,
    /// NUMA-tuned: the program places each page on the node of the thread that uses it most.
    Numa,
}

/// What a workload's configuration type declares besides its name and description (in
/// [`Describe`]): its size and how to build it. A workload registers itself in its own
/// file with `inventory::submit!(WorkloadEntry::of::<ItsConfig>())`.
pub trait WorkloadParams: Describe {
    /// Validates the parameters and sizes the programs without allocating them.
    fn footprint(&self, machine: &Machine) -> Result<Footprint, ConfigError>;
    /// Builds the programs for `machine`.
    fn build(&self, machine: &Machine) -> Result<Vec<Box<dyn Program>>, ConfigError>;
}

type FootprintFn = fn(&dyn Params, &Machine) -> Result<Footprint, ConfigError>;
type BuildFn = fn(&dyn Params, &Machine) -> Result<Vec<Box<dyn Program>>, ConfigError>;

/// A workload's registry entry.
pub struct WorkloadEntry {
    /// Name, description, fields, defaults and parsing.
    pub meta: Meta,
    /// The sizing.
    pub footprint: FootprintFn,
    /// The constructor.
    pub build: BuildFn,
}

fn params_of<C: WorkloadParams>(p: &dyn Params) -> &C {
    p.as_any()
        .downcast_ref()
        .expect("an entry reads its own type")
}

impl WorkloadEntry {
    /// The entry of configuration type `C`.
    pub const fn of<C: WorkloadParams>() -> WorkloadEntry {
        WorkloadEntry {
            meta: Meta::of::<C>(),
            footprint: |p, m| params_of::<C>(p).footprint(m),
            build: |p, m| params_of::<C>(p).build(m),
        }
    }
}

crate::registry::family! {
    /// The workload family of the registry.
    Workloads: WorkloadEntry, WorkloadParams, section "workload", default "jacobi"
}

/// A registered workload with its parameters (serialized as a table with `kind`).
pub type WorkloadConfig = Component<Workloads>;

impl WorkloadConfig {
    /// Validates the parameters (declared ranges first, so no registered workload can
    /// skip them) and sizes the programs without allocating them.
    pub fn footprint(&self, machine: &Machine) -> Result<Footprint, ConfigError> {
        self.check_ranges("workload")?;
        (self.entry().footprint)(self.params(), machine)
    }

    /// Builds the programs for `machine`, declared ranges checked first.
    pub fn build(&self, machine: &Machine) -> Result<Vec<Box<dyn Program>>, ConfigError> {
        self.check_ranges("workload")?;
        (self.entry().build)(self.params(), machine)
    }
}

/// Resolves a thread count: `Some(n)` as given (n >= 1), `None` = every processor.
pub(crate) fn thread_count(
    field: &str,
    threads: Option<u32>,
    machine: &Machine,
) -> Result<u32, ConfigError> {
    let max = crate::estimate::MAX_THREADS;
    match threads {
        Some(0) => Err(ConfigError::new(field, "must be at least 1")),
        Some(n) if n > max => Err(ConfigError::new(
            field,
            format!("{n} threads; a run has at most {max}"),
        )),
        Some(n) => Ok(n),
        None => Ok((machine.procs() as u32).min(max)),
    }
}

/// `per_unit` ns times `units`, or an error naming `field` when the product does not fit
/// in simulated time.
pub(crate) fn checked_ns(field: &str, per_unit: u64, units: u64) -> Result<Ns, ConfigError> {
    per_unit.checked_mul(units).map(Ns).ok_or_else(|| {
        ConfigError::new(
            field,
            format!("{per_unit} ns x {units} does not fit in 64-bit simulated time"),
        )
    })
}

/// Placement hints from an owner-of-byte function: each page goes to the owner of its
/// first byte.
pub(crate) fn hints_by_first_byte(
    pages: u64,
    page_size: u64,
    owner: impl Fn(u64) -> Option<u32>,
) -> Vec<Option<u32>> {
    (0..pages).map(|p| owner(p * page_size)).collect()
}

/// A run of `workload` under `larowe`'s defaults on a small machine with the GP1000's
/// costs (Table 2 of LaRowe, Ellis & Kaplan 1991) and 4 nodes of 1024 4 KB frames.
#[cfg(test)]
pub(crate) fn gp1000_like_run(workload: WorkloadConfig) -> crate::stats::Stats {
    use crate::machine::{Costs, MachineConfig, Topology};
    let machine = MachineConfig {
        preset: "gp1000-like".into(),
        description: String::new(),
        nodes: 4,
        procs_per_node: 1,
        frames_per_node: 1024,
        node_frames: Vec::new(),
        memory_only_nodes: 0,
        page_size_bytes: 4096,
        word_size_bytes: 4,
        topology: Topology::Uniform,
        costs: Costs {
            local_read_ns: 600,
            local_write_ns: 600,
            remote_read_ns: 7500,
            remote_write_ns: 7500,
            cached_read_ns: None,
            page_fault_ns: 0,
            migrate_fixed_ns: 4_500_000,
            replicate_fixed_ns: 4_600_000,
            block_transfer_per_word_ns: 0,
            coherency_fault_fixed_ns: 2_100_000,
            coherency_per_copy_ns: 0,
            shootdown_per_node_ns: 0,
            pte_lock_ns: 15_000,
            pte_examine_ns: 15_000,
            module_service_ns: 600,
            remote_module_service_ns: Some(600),
            switch_service_ns: 2000,
            operation_delay_ns: 0,
        },
        variation: Default::default(),
        contention: true,
        cache: Default::default(),
        compute_time_pct: 100,
    };
    let mut run = crate::RunConfig::of(machine, workload);
    run.policy = crate::policy::PolicyConfig::default_of("larowe").expect("larowe registered");
    run.run().expect("the run completes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emitter_splits_ranges_at_page_boundaries() {
        let e = Emitter { page_size: 16 };
        let mut out = Vec::new();
        // 10 four-byte elements from byte 8: 2 on page 0, 4 on page 1, 4 on page 2.
        e.range(&mut out, 8, 10, 4, 3, false);
        let run = |vpn, count, at, span| Op::Ref {
            vpn: Vpn(vpn),
            write: false,
            count,
            at,
            span,
        };
        assert_eq!(
            out,
            vec![run(0, 6, 8, 8), run(1, 12, 0, 16), run(2, 12, 0, 16)]
        );
    }

    #[test]
    fn a_walk_stays_apart_from_the_run_before_it_on_the_same_page() {
        let e = Emitter { page_size: 16 };
        let mut out = Vec::new();
        e.walk(&mut out, 0, 2, 4, false);
        e.walk(&mut out, 0, 2, 4, false);
        assert_eq!(out.len(), 2);
        e.range(&mut out, 8, 2, 4, 1, false);
        // A range merges, and the merged run walks both parts of the page.
        assert_eq!(
            out[1],
            Op::Ref {
                vpn: Vpn(0),
                write: false,
                count: 4,
                at: 0,
                span: 16
            }
        );
    }

    #[test]
    fn consecutive_runs_to_one_page_merge() {
        let mut out = Vec::new();
        push_ref(&mut out, Vpn(3), true, 2);
        push_ref(&mut out, Vpn(3), true, 5);
        push_ref(&mut out, Vpn(3), false, 1);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0], Op::run(Vpn(3), true, 7));
    }

    struct Chunks;
    impl LoopBody for Chunks {
        fn iterations(&self) -> u32 {
            1
        }
        fn chunks(&self) -> u32 {
            4
        }
        fn chunk(&self, _iter: u32, chunk: u32, out: &mut Vec<Op>) {
            out.push(Op::Compute(Ns(chunk as u64)));
        }
    }

    #[test]
    fn chunks_of_a_stopped_thread_go_to_running_threads() {
        let mut fj = ForkJoin::new(Chunks, 4);
        let running = [true, false, true, true];
        let mut out = Vec::new();
        fj.next_ops(0, &running, &mut out);
        // Thread 0 runs its own chunk 0 and, first in line, the orphaned chunk 1.
        assert_eq!(&out[1..3], &[Op::Compute(Ns(0)), Op::Compute(Ns(1))]);
        out.clear();
        fj.next_ops(2, &running, &mut out);
        assert_eq!(out[1], Op::Compute(Ns(2)));
        assert_eq!(out[2], Op::Barrier);
    }

    /// A body whose parts append runs that merge across parts (ten parts a page).
    struct Runs;
    impl LoopBody for Runs {
        fn iterations(&self) -> u32 {
            2
        }
        fn chunks(&self) -> u32 {
            3
        }
        fn chunk(&self, iter: u32, chunk: u32, out: &mut Vec<Op>) {
            for p in 0..self.parts(iter, chunk) {
                self.part(iter, chunk, p, out);
            }
        }
        fn parts(&self, _iter: u32, chunk: u32) -> u32 {
            700 + chunk
        }
        fn part(&self, iter: u32, chunk: u32, part: u32, out: &mut Vec<Op>) {
            push_ref(
                out,
                Vpn(chunk * 1000 + part / 10),
                iter.is_multiple_of(2),
                1,
            );
            if part.is_multiple_of(7) {
                out.push(Op::Ref {
                    vpn: Vpn(part),
                    write: true,
                    count: 1,
                    at: 0,
                    span: 0,
                });
            }
        }
    }

    #[test]
    fn streamed_work_is_the_work_appended_at_once_merges_and_all() {
        let mut fj = ForkJoin::new(Runs, 2);
        let running = [true, true];
        let mut calls = 0;
        let mut streamed = Vec::new();
        let mut out = Vec::new();
        loop {
            out.clear();
            fj.next_ops(0, &running, &mut out);
            if out.is_empty() {
                break;
            }
            assert!(out.len() <= STREAM_OPS + 8, "{}", out.len());
            calls += 1;
            streamed.extend_from_slice(&out);
        }
        let mut whole = Vec::new();
        for iter in 0..2 {
            whole.push(Op::ParallelEnter(iter));
            for c in [0, 2] {
                Runs.chunk(iter, c, &mut whole);
            }
            whole.extend([Op::Barrier, Op::ParallelExit(iter), Op::IterationEnd(iter)]);
        }
        assert!(calls > 4);
        assert_eq!(streamed, whole);
    }
}
