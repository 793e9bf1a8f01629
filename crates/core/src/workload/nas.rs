//! What the NAS kernels (`nas-bt`, `nas-sp`, `nas-cg`, `nas-ft`, `nas-lu`, `nas-mg`)
//! share: a reference-pattern model of an OpenMP NAS benchmark (NPB 2 / the OpenMP
//! version of Jin, Frumkin and Yan, 1999) as an iterative fork-join program.
//!
//! A kernel is a set of arrays, each split along its outermost dimension into planes,
//! and a list of sweeps that one outer iteration makes over them. The parallel loops
//! distribute planes statically: thread `c` of `P` owns planes `[c*n/P, (c+1)*n/P)` of
//! every array, so first touch puts each thread's planes (its memory affinity set) in its
//! node's memory. A sweep either walks the thread's own planes ([`Sweep::Own`]), or its
//! share of the second dimension in every plane ([`Sweep::Across`]: the loops that
//! NPB-OMP parallelises over another index, such as BT's and SP's `z_solve` over `j` and
//! FT's third FFT, which reach into other threads' pages), or the whole array
//! ([`Sweep::All`]: CG's matrix-vector product reads all of `p`).
//!
//! References are counted per 128-byte secondary-cache line (the R10000's L2 line on the
//! Origin2000): a sweep costs one memory reference per line it walks, per pass, so the
//! reference counts stand for cache misses rather than loads and stores (the per-processor
//! cache model is not in the engine; this is its stand-in, exact for streaming sweeps
//! over data larger than the 4 MB cache). Computation is the operations the NPB source
//! counts for an iteration to report its Mop/s, at `compute_ps_per_op` each, spread over
//! the lines the iteration walks (each sweep computes in proportion to its lines: the
//! source counts operations per iteration, not per loop).
//!
//! An outer iteration is the sequence of parallel constructs (`!$omp parallel` and
//! `!$omp parallel do` regions) the NPB 3.4-OMP source runs per time step
//! ([`KernelSpec::constructs`]: BT's `compute_rhs`, `x_solve`, `y_solve`, `z_solve` and
//! `add`, for instance), each a group of the iteration's sweeps ended by its barrier, so
//! that a runtime polling at construct entries and exits (`sched-activated`) and a
//! scheduler reallocating processors there (`space-sharing`) see them as the paper's did.
//! The barriers inside a region (between its `!$omp do` loops), reductions and pipelined
//! wavefronts (LU) are left out, as are the setup phase and verification.

use super::emit::{Emitter, STREAM_OPS};
use super::fork_join::{ForkJoin, LoopBody};
use crate::cache::{CacheStats, Caches, ExactLru};
use crate::component::{Op, Program};
use crate::error::ConfigError;
use crate::estimate::Footprint;
use crate::machine::Machine;
use crate::memory::{ArrayId, Layout};
use crate::types::Ns;

/// Secondary-cache line of the Origin2000's R10000 (bytes): the unit of a memory
/// reference in these models.
pub const LINE_BYTES: u64 = 128;

/// One array of a kernel: its name, how many planes it splits into along the
/// distributed dimension, and the bytes of one plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArraySpec {
    /// Name, as in the NPB source.
    pub name: &'static str,
    /// Planes along the distributed (outermost) dimension.
    pub planes: u64,
    /// Bytes of one plane.
    pub plane_bytes: u64,
    /// A threadprivate array (`!$omp threadprivate` in NPB-OMP): one copy of
    /// `plane_bytes` per thread, laid out one after another, so `planes` is the thread
    /// count once the run's threads are known ([`KernelSpec::for_threads`]) and an
    /// [`Sweep::Own`] walks the thread's own copy.
    pub per_thread: bool,
}

/// One sweep of an outer iteration over array `array` (index into the kernel's arrays).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sweep {
    /// The thread's own planes, `passes` times; writes if `write`.
    Own {
        /// The array.
        array: usize,
        /// Whether it writes.
        write: bool,
        /// Times it walks them.
        passes: u32,
    },
    /// The thread's share of the second dimension in every plane.
    Across {
        /// The array.
        array: usize,
        /// Whether it writes.
        write: bool,
        /// Times it walks them.
        passes: u32,
    },
    /// The whole array, read.
    All {
        /// The array.
        array: usize,
        /// Times it walks it.
        passes: u32,
    },
}

/// The thread's own planes of `array`, `passes` times (written when `write`).
pub fn own(array: usize, write: bool, passes: u32) -> Sweep {
    Sweep::Own {
        array,
        write,
        passes,
    }
}

/// The thread's share of the second dimension of `array` in every plane, `passes` times.
pub fn across(array: usize, write: bool, passes: u32) -> Sweep {
    Sweep::Across {
        array,
        write,
        passes,
    }
}

/// A threadprivate work array of `bytes` a thread (see [`ArraySpec::per_thread`]).
pub fn per_thread(name: &'static str, bytes: u64) -> ArraySpec {
    ArraySpec {
        name,
        planes: 1,
        plane_bytes: bytes,
        per_thread: true,
    }
}

/// One parallel construct of an outer iteration: its name (the NPB routine whose region
/// it is) and how many of the iteration's sweeps, in order, it makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Construct {
    /// The routine, as in the NPB source.
    pub name: &'static str,
    /// Sweeps it makes (the next ones of [`KernelSpec::sweeps`]).
    pub sweeps: usize,
}

/// An iteration's sweeps and constructs from its constructs in order, each a name and
/// its sweeps.
pub fn constructs(
    list: impl IntoIterator<Item = (&'static str, Vec<Sweep>)>,
) -> (Vec<Sweep>, Vec<Construct>) {
    let mut sweeps = Vec::new();
    let mut cs = Vec::new();
    for (name, s) in list {
        cs.push(Construct {
            name,
            sweeps: s.len(),
        });
        sweeps.extend(s);
    }
    (sweeps, cs)
}

/// A kernel: arrays, sweeps and constructs per outer iteration, iterations.
#[derive(Clone, Debug)]
pub struct KernelSpec {
    /// Registry name.
    pub name: &'static str,
    /// Its arrays.
    pub arrays: Vec<ArraySpec>,
    /// One outer iteration's sweeps, in order.
    pub sweeps: Vec<Sweep>,
    /// The iteration's parallel constructs in order, which together make its sweeps
    /// (empty: the iteration is one construct).
    pub constructs: Vec<Construct>,
    /// Outer iterations.
    pub iterations: u32,
    /// Operations one outer iteration makes, as the NPB source counts them for its Mop/s
    /// report (its `mflops` formula, per iteration; at least 0).
    pub ops_per_iteration: f64,
}

impl KernelSpec {
    /// The sweeps of each construct, as index ranges into [`KernelSpec::sweeps`].
    pub fn construct_ranges(&self) -> Vec<std::ops::Range<usize>> {
        if self.constructs.is_empty() {
            return std::iter::once(0..self.sweeps.len()).collect();
        }
        let mut at = 0;
        self.constructs
            .iter()
            .map(|c| {
                let r = at..at + c.sweeps;
                at = r.end;
                r
            })
            .collect()
    }

    /// The kernel with its threadprivate arrays given one copy for each of `threads`.
    pub fn for_threads(&self, threads: u32) -> KernelSpec {
        let mut spec = self.clone();
        for a in spec.arrays.iter_mut().filter(|a| a.per_thread) {
            a.planes = threads as u64;
        }
        spec
    }
}

/// Parameters every NAS kernel shares besides its problem size.
#[derive(Clone, Copy, Debug)]
pub struct Common {
    /// Threads (`None`: one per processor).
    pub threads: Option<u32>,
    /// Computation per operation the NPB source counts (ps).
    pub compute_ps_per_op: u64,
    /// Whether the program adapts its thread count at each construct.
    pub adapt_threads: bool,
}

/// The planned address space.
struct Plan {
    layout: Layout,
    ids: Vec<ArrayId>,
    threads: u32,
    pages: u64,
    /// Operations one chunk (thread's share of an iteration) emits, at most.
    chunk_ops: u64,
    /// How a chunk is cut into parts.
    cut: Cut,
    /// Operations one part appends, at most.
    part_ops: u64,
}

/// Operations a part of a chunk aims at: a thread holds about [`STREAM_OPS`] of them
/// plus one part.
const PART_OPS: u64 = STREAM_OPS as u64;

/// How a chunk is cut into parts (see [`Body::part`]): the page size, whether passes are
/// emitted apart, and the lines of a slice of a walk too long for one part.
#[derive(Clone, Copy, Debug)]
struct Cut {
    page_size: u64,
    cached: bool,
    slice_lines: u64,
}

impl Cut {
    fn new(page_size: u64, cached: bool) -> Cut {
        // A slice's lines touch at most `PART_OPS` pages: one run each.
        let slice_lines = ((PART_OPS - 1).saturating_mul(page_size) / LINE_BYTES).max(1);
        Cut {
            page_size,
            cached,
            slice_lines,
        }
    }

    /// Runs a walk of `lines` lines appends, at most (one per page it touches).
    fn runs(&self, lines: u64) -> u64 {
        lines
            .saturating_mul(LINE_BYTES)
            .div_ceil(self.page_size.max(1))
            .saturating_add(1)
    }

    /// Operations one part appends, at most: a part's walks or slice, and the sweep's
    /// compute operation.
    fn part_ops(&self) -> u64 {
        PART_OPS.max(self.runs(self.slice_lines)).saturating_add(1)
    }
}

/// A sweep of one chunk as parts: its walks, each emitted `emits` times (once per pass
/// with processor caches, else once with every pass's references), make `walks * emits`
/// emissions of at most `max_lines` lines each; a part holds `per_part` whole emissions,
/// or, when one emission alone would overrun a part, a slice of `slices` of one.
#[derive(Clone, Copy, Debug)]
struct SweepParts {
    walks: u64,
    emits: u64,
    per_part: u64,
    slices: u64,
}

impl SweepParts {
    fn new(walks: u64, emits: u64, max_lines: u64, cut: &Cut) -> SweepParts {
        let runs = cut.runs(max_lines);
        let (per_part, slices) = if runs <= PART_OPS {
            ((PART_OPS / runs).max(1), 1)
        } else {
            (1, max_lines.div_ceil(cut.slice_lines))
        };
        SweepParts {
            walks,
            emits,
            per_part,
            slices,
        }
    }

    fn emissions(&self) -> u64 {
        self.walks.saturating_mul(self.emits)
    }

    fn parts(&self) -> u64 {
        if self.slices == 1 {
            self.emissions().div_ceil(self.per_part)
        } else {
            self.emissions().saturating_mul(self.slices)
        }
    }
}

fn plan(spec: &KernelSpec, c: &Common, machine: &Machine) -> Result<Plan, ConfigError> {
    let threads = super::common::thread_count("workload.threads", c.threads, machine)?;
    let spec = &spec.for_threads(threads);
    let ps = machine.page_size();
    let mut layout = Layout::new();
    let mut ids = Vec::with_capacity(spec.arrays.len());
    for a in &spec.arrays {
        // Each array starts on a page, as Fortran common blocks padded by the compiler.
        ids.push(layout.alloc_2d(a.name, a.planes, a.plane_bytes, 1, ps, 1));
    }
    let pages = layout.pages_checked(ps, "workload.n")?;
    // A run per page per sweep, plus one compute op, bounds a chunk's operations.
    let mut chunk_ops = 0u64;
    for s in &spec.sweeps {
        let (a, planes, passes) = match *s {
            Sweep::Own { array, passes, .. } => {
                let a = &spec.arrays[array];
                (a, a.planes.div_ceil(threads as u64), passes)
            }
            Sweep::Across { array, passes, .. } | Sweep::All { array, passes } => {
                let a = &spec.arrays[array];
                (a, a.planes, passes)
            }
        };
        // With processor caches each pass is emitted apart.
        let walks = if machine.config.cache.enabled {
            passes.max(1) as u64
        } else {
            1
        };
        let per_plane = crate::estimate::runs_of(a.plane_bytes, 1, ps);
        chunk_ops = chunk_ops
            .saturating_add(planes.saturating_mul(per_plane).saturating_mul(walks))
            .saturating_add(1);
    }
    let cut = Cut::new(ps, machine.config.cache.enabled);
    // A chunk's parts are counted in a `u32` ([`LoopBody::parts`]).
    for c in 0..threads as u64 {
        let parts = spec.sweeps.iter().fold(0u64, |n, s| {
            n.saturating_add(sweep_parts(spec, s, c, threads as u64, &cut).parts())
        });
        if parts > u32::MAX as u64 {
            return Err(ConfigError::new(
                "workload.n",
                format!("a thread's share of an iteration makes {parts} parts of a few hundred operations; at most {} are supported", u32::MAX),
            ));
        }
    }
    Ok(Plan {
        layout,
        ids,
        threads,
        pages,
        chunk_ops,
        cut,
        part_ops: cut.part_ops(),
    })
}

/// What a kernel needs, from its parameters alone (the same plan as [`Nas::new`]).
pub fn footprint(
    spec: &KernelSpec,
    c: &Common,
    machine: &Machine,
) -> Result<Footprint, ConfigError> {
    let p = plan(spec, c, machine)?;
    // Chunks are dealt round robin, so a thread may run every chunk of an iteration; each
    // construct adds its entry, barrier, exit and the iteration's end.
    let per_iter = p
        .chunk_ops
        .saturating_mul(p.threads as u64)
        .saturating_add(p.threads as u64 * 4 * spec.construct_ranges().len() as u64);
    Ok(Footprint {
        pages: p.pages,
        threads: p.threads,
        ops: per_iter.saturating_mul(spec.iterations as u64),
        // A thread's work is appended a part at a time until past `STREAM_OPS` (the
        // driver's), with the run held back from the call before, the iteration's entry
        // and its barrier, exit and end.
        buffered_ops: (STREAM_OPS as u64)
            .saturating_add(p.part_ops)
            .saturating_add(5),
        bytes: ForkJoin::<Body>::bytes(p.threads)
            .saturating_add(p.threads as u64 * p.threads as u64 * 4)
            .saturating_add(spec.arrays.len() as u64 * 64),
        iterations: spec.iterations as u64,
        size_field: "workload.n",
        ops_field: "workload.iterations",
    })
}

/// The loop body: a construct's chunk `c` is thread `c`'s share of each of its sweeps.
#[derive(Debug)]
pub struct Body {
    spec: KernelSpec,
    /// Each construct's sweeps ([`KernelSpec::construct_ranges`]).
    ranges: Vec<std::ops::Range<usize>>,
    bases: Vec<u64>,
    chunks: u32,
    emit: Emitter,
    /// Computation per line walked: the iteration's operations at their rate over the
    /// lines every thread walks in an iteration (ns).
    compute_ns_per_line: f64,
    /// Whether the machine has processor caches (then passes are emitted apart).
    cached: bool,
    /// How a chunk is cut into parts (the plan's).
    cut: Cut,
}

/// One walk of a sweep: `lines` cache lines from byte address `at`, `passes` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Walk {
    /// First byte (line-aligned).
    pub at: u64,
    /// Lines walked.
    pub lines: u64,
    /// Times.
    pub passes: u32,
    /// Whether it writes.
    pub write: bool,
}

/// The walks thread (chunk) `c` of `p` makes for sweep `s`, arrays at `bases`.
fn sweep_walks(spec: &KernelSpec, bases: &[u64], s: &Sweep, c: u64, p: u64, out: &mut Vec<Walk>) {
    for w in 0..walk_count(spec, s, c, p) {
        out.push(walk_of(spec, bases, s, c, p, w));
    }
}

/// Bytes `[from, to)` of its array that thread `c` of `p` walks in sweep `s`'s walk `w`
/// (`w` below the plane count for [`Sweep::Across`], else 0).
fn walk_bytes(spec: &KernelSpec, s: &Sweep, c: u64, p: u64, w: u64) -> (u64, u64) {
    match *s {
        Sweep::Own { array, .. } => {
            let a = &spec.arrays[array];
            let (lo, hi) = (c * a.planes / p, (c + 1) * a.planes / p);
            (lo * a.plane_bytes, hi * a.plane_bytes)
        }
        Sweep::Across { array, .. } => {
            let a = &spec.arrays[array];
            let (lo, hi) = (c * a.plane_bytes / p, (c + 1) * a.plane_bytes / p);
            let at = w * a.plane_bytes;
            (at + lo, at + hi)
        }
        Sweep::All { array, .. } => {
            let a = &spec.arrays[array];
            (0, a.planes * a.plane_bytes)
        }
    }
}

/// Sweep `s`'s array, whether it writes, and its passes.
fn sweep_kind(s: &Sweep) -> (usize, bool, u32) {
    match *s {
        Sweep::Own {
            array,
            write,
            passes,
        }
        | Sweep::Across {
            array,
            write,
            passes,
        } => (array, write, passes),
        Sweep::All { array, passes } => (array, false, passes),
    }
}

/// How many walks thread `c` of `p` makes in sweep `s` (none when its share is empty).
fn walk_count(spec: &KernelSpec, s: &Sweep, c: u64, p: u64) -> u64 {
    let (from, to) = walk_bytes(spec, s, c, p, 0);
    if to <= from {
        0
    } else if let Sweep::Across { array, .. } = *s {
        spec.arrays[array].planes
    } else {
        1
    }
}

/// Walk `w` (below [`walk_count`]) of thread `c` of `p` in sweep `s`.
fn walk_of(spec: &KernelSpec, bases: &[u64], s: &Sweep, c: u64, p: u64, w: u64) -> Walk {
    let (array, write, passes) = sweep_kind(s);
    let (from, to) = walk_bytes(spec, s, c, p, w);
    let first = from / LINE_BYTES;
    let last = to.div_ceil(LINE_BYTES);
    Walk {
        at: bases[array] + first * LINE_BYTES,
        lines: last - first,
        passes,
        write,
    }
}

/// Sweep `s` of thread `c` of `p` as parts, cut by `cut`.
fn sweep_parts(spec: &KernelSpec, s: &Sweep, c: u64, p: u64, cut: &Cut) -> SweepParts {
    let walks = walk_count(spec, s, c, p);
    let (_, _, passes) = sweep_kind(s);
    let emits = if cut.cached { passes as u64 } else { 1 };
    let (from, to) = walk_bytes(spec, s, c, p, 0);
    // Every walk of a sweep spans as many bytes; its lines, at most one more than those
    // bytes fill (a walk that starts inside a line).
    let max_lines = match *s {
        Sweep::Across { .. } => to.saturating_sub(from).div_ceil(LINE_BYTES) + 1,
        _ => to.div_ceil(LINE_BYTES) - from / LINE_BYTES,
    };
    SweepParts::new(walks, emits, max_lines.max(1), cut)
}

impl Body {
    /// The computation of a sweep that walked `lines` lines (none for no time).
    fn compute_of(&self, lines: u64) -> Option<Ns> {
        let ns = (lines as f64 * self.compute_ns_per_line).round();
        (ns >= 1.0).then(|| Ns(ns.min(crate::TIME_LIMIT as f64) as u64))
    }
}

/// Lines all `p` threads walk in one iteration of `spec`, passes counted.
fn iteration_lines(spec: &KernelSpec, p: u64) -> u64 {
    let mut lines = 0u64;
    for c in 0..p {
        for s in &spec.sweeps {
            let (_, _, passes) = sweep_kind(s);
            for w in 0..walk_count(spec, s, c, p) {
                let (from, to) = walk_bytes(spec, s, c, p, w);
                let walked = to.div_ceil(LINE_BYTES) - from / LINE_BYTES;
                lines = lines.saturating_add(walked.saturating_mul(passes as u64));
            }
        }
    }
    lines
}

impl Body {
    /// The sweeps of the run's construct `k`.
    fn sweeps_of(&self, k: u32) -> &[Sweep] {
        let r = &self.ranges[k as usize % self.ranges.len()];
        &self.spec.sweeps[r.clone()]
    }
}

impl LoopBody for Body {
    fn iterations(&self) -> u32 {
        self.spec.iterations
    }

    fn constructs(&self) -> u32 {
        self.ranges.len() as u32
    }

    fn chunks(&self) -> u32 {
        self.chunks
    }

    fn chunk(&self, k: u32, c: u32, out: &mut Vec<Op>) {
        let mut walks = Vec::new();
        for s in self.sweeps_of(k) {
            walks.clear();
            sweep_walks(
                &self.spec,
                &self.bases,
                s,
                c as u64,
                self.chunks as u64,
                &mut walks,
            );
            let mut lines = 0u64;
            for w in &walks {
                if self.cached {
                    // Each pass is a walk of its own, so the processor's cache sees the
                    // same lines again (hits) rather than one run of twice the lines.
                    for _ in 0..w.passes {
                        self.emit.walk(out, w.at, w.lines, LINE_BYTES, w.write);
                    }
                } else {
                    self.emit
                        .range(out, w.at, w.lines, LINE_BYTES, w.passes, w.write);
                }
                lines += w.lines * w.passes as u64;
            }
            if let Some(ns) = self.compute_of(lines) {
                out.push(Op::Compute(ns));
            }
        }
    }

    /// The construct's sweeps' parts in order (see [`Body::part`]).
    fn parts(&self, k: u32, c: u32) -> u32 {
        let parts = self.sweeps_of(k).iter().fold(0u64, |n, s| {
            n + sweep_parts(&self.spec, s, c as u64, self.chunks as u64, &self.cut).parts()
        });
        // The plan refuses a chunk of more.
        parts as u32
    }

    /// Part `part` of chunk `c`: a few whole emissions of a sweep's walks, or a slice of
    /// one too long for a part (a slice after the first continues the walk as one range,
    /// so runs merge across slices as they do within one walk); a sweep's last part ends
    /// with its computation. The parts in order append what [`LoopBody::chunk`] appends.
    fn part(&self, k: u32, c: u32, part: u32, out: &mut Vec<Op>) {
        let (c, p) = (c as u64, self.chunks as u64);
        let mut part = part as u64;
        for s in self.sweeps_of(k) {
            let sp = sweep_parts(&self.spec, s, c, p, &self.cut);
            let n = sp.parts();
            if part >= n {
                part -= n;
                continue;
            }
            let emit = |e: u64, out: &mut Vec<Op>, from: u64, to: u64| {
                let w = walk_of(&self.spec, &self.bases, s, c, p, e / sp.emits);
                let to = to.min(w.lines);
                if to <= from {
                    return;
                }
                let at = w.at + from * LINE_BYTES;
                if !self.cached {
                    self.emit
                        .range(out, at, to - from, LINE_BYTES, w.passes, w.write);
                } else if from == 0 {
                    self.emit.walk(out, at, to - from, LINE_BYTES, w.write);
                } else {
                    self.emit.range(out, at, to - from, LINE_BYTES, 1, w.write);
                }
            };
            if sp.slices == 1 {
                let first = part * sp.per_part;
                let end = (first + sp.per_part).min(sp.emissions());
                for e in first..end {
                    emit(e, out, 0, u64::MAX);
                }
            } else {
                let (e, slice) = (part / sp.slices, part % sp.slices);
                let from = slice * self.cut.slice_lines;
                emit(e, out, from, from + self.cut.slice_lines);
            }
            if part + 1 == n {
                let lines = (0..sp.walks).fold(0u64, |l, w| {
                    let w = walk_of(&self.spec, &self.bases, s, c, p, w);
                    l + w.lines * w.passes as u64
                });
                if let Some(ns) = self.compute_of(lines) {
                    out.push(Op::Compute(ns));
                }
            }
            return;
        }
    }
}

/// The fast cache model against the exact one on kernel `spec`'s address streams: each
/// of `threads` threads on a processor of its own, each iteration's chunks run one
/// thread after another, both models fed the same walks (the fast one a run per page
/// and pass, as the engine feeds it; the exact one every line, `ways`-way
/// set-associative). `machine` gives the page size and the cache. Returns (fast, exact).
pub fn validate_cache(
    spec: &KernelSpec,
    threads: u32,
    machine: &Machine,
    ways: usize,
) -> Result<(CacheStats, CacheStats), ConfigError> {
    let c = Common {
        threads: Some(threads),
        compute_ps_per_op: 0,
        adapt_threads: false,
    };
    let p = plan(spec, &c, machine)?;
    let spec = &spec.for_threads(p.threads);
    let bases: Vec<u64> = p.ids.iter().map(|&id| p.layout.array(id).base).collect();
    let ps = machine.page_size();
    let cache = &machine.config.cache;
    let lpp = ps / LINE_BYTES;
    let mut fast = Caches::new(
        threads as usize,
        p.pages as usize,
        lpp as u32,
        cache.lines(),
    );
    let mut exact = ExactLru::new(threads as usize, cache.lines(), ways);
    let mut walks = Vec::new();
    for _ in 0..spec.iterations {
        for t in 0..threads {
            for s in &spec.sweeps {
                walks.clear();
                sweep_walks(spec, &bases, s, t as u64, threads as u64, &mut walks);
                for w in &walks {
                    for _ in 0..w.passes {
                        let (first, end) = (w.at / LINE_BYTES, w.at / LINE_BYTES + w.lines);
                        let mut l = first;
                        while l < end {
                            let page = l / lpp;
                            let upto = end.min((page + 1) * lpp);
                            fast.access(t as usize, page as u32, l - page * lpp, upto - l, w.write);
                            for line in l..upto {
                                exact.access(t as usize, line, w.write);
                            }
                            l = upto;
                        }
                    }
                }
            }
        }
    }
    Ok((fast.stats, exact.stats))
}

/// A NAS kernel as a program.
#[derive(Debug)]
pub struct Nas {
    layout: Layout,
    fj: ForkJoin<Body>,
    threads: u32,
}

impl Nas {
    /// Builds kernel `spec` for `machine` (validated by the same plan as [`footprint`]).
    pub fn new(spec: KernelSpec, c: &Common, machine: &Machine) -> Result<Nas, ConfigError> {
        let p = plan(&spec, c, machine)?;
        let spec = spec.for_threads(p.threads);
        let bases = p.ids.iter().map(|&id| p.layout.array(id).base).collect();
        let lines = iteration_lines(&spec, p.threads as u64);
        let compute_ns_per_line = if lines == 0 {
            0.0
        } else {
            spec.ops_per_iteration.max(0.0) * c.compute_ps_per_op as f64 / 1000.0 / lines as f64
        };
        let ranges = spec.construct_ranges();
        let body = Body {
            spec,
            ranges,
            bases,
            chunks: p.threads,
            emit: Emitter {
                page_size: machine.page_size(),
            },
            compute_ns_per_line,
            cached: machine.config.cache.enabled,
            cut: p.cut,
        };
        let fj = if c.adapt_threads {
            ForkJoin::adaptive(body, p.threads)
        } else {
            ForkJoin::new(body, p.threads)
        };
        Ok(Nas {
            layout: p.layout,
            fj,
            threads: p.threads,
        })
    }
}

impl Program for Nas {
    fn name(&self) -> &str {
        self.fj.body().spec.name
    }
    fn threads(&self) -> u32 {
        self.threads
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn placement_hints(&self) -> &[Option<u32>] {
        &[]
    }
    fn next_ops(&mut self, t: u32, running: &[bool], out: &mut Vec<Op>) {
        self.fj.next_ops(t, running, out);
    }
    fn adapts_threads(&self) -> bool {
        self.fj.is_adaptive()
    }
    fn barrier_parties(&self, t: u32) -> Option<u32> {
        self.fj.barrier_parties(t)
    }
    fn iteration_parties(&self, k: u32) -> Option<u32> {
        self.fj.iteration_parties(k)
    }
    fn ref_bytes(&self) -> Option<u64> {
        Some(LINE_BYTES)
    }
}

/// Declares a NAS kernel's configuration type and registry entry: `$cfg` with fields
/// `n` (problem size), `iterations`, `threads`, `compute_ps_per_op`, `adapt_threads`,
/// and a `spec(&self) -> KernelSpec` written in the kernel's file.
macro_rules! nas_config {
    (
        $(#[$doc:meta])*
        $cfg:ident, kind $kind:literal, $desc:literal,
        n: $n_doc:tt = $n:tt in $nmin:tt ..= $nmax:tt,
        iterations: $it_doc:tt = $it:tt
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, crate::fields::Fields)]
        #[serde(default, deny_unknown_fields)]
        pub struct $cfg {
            #[doc = $n_doc]
            #[field(min = $nmin, max = $nmax)]
            pub n: u64,
            #[doc = $it_doc]
            #[field(min = 1, max = 1_000_000)]
            pub iterations: u32,
            /// Threads; default one per processor (the paper's programs use 32).
            #[field(min = 1, max = crate::estimate::MAX_THREADS)]
            pub threads: Option<u32>,
            /// Computation per operation (ps), the operations the NPB source counts for
            /// its Mop/s report, spread over the lines each iteration walks. Default
            /// 10,000 (100 Mop/s a processor): an estimate, a fifth of the MIPS R10000's
            /// peak of two floating-point operations a cycle at 250 MHz.
            #[field(min = 0, max = 1_000_000_000, unit = "ps")]
            pub compute_ps_per_op: u64,
            /// Whether the program adapts its thread count to its processors at each
            /// parallel construct (process control, for `space-sharing` and for scripted
            /// preemptions whose work is redistributed). Default false: a fixed team.
            pub adapt_threads: bool,
        }

        impl Default for $cfg {
            fn default() -> Self {
                $cfg {
                    n: $n,
                    iterations: $it,
                    threads: None,
                    compute_ps_per_op: 10_000,
                    adapt_threads: false,
                }
            }
        }

        impl crate::registry::Describe for $cfg {
            const KIND: &'static str = $kind;
            const DESCRIPTION: &'static str = $desc;
        }

        impl $cfg {
            fn common(&self) -> super::nas::Common {
                super::nas::Common {
                    threads: self.threads,
                    compute_ps_per_op: self.compute_ps_per_op,
                    adapt_threads: self.adapt_threads,
                }
            }
        }

        impl crate::component::WorkloadParams for $cfg {
            fn footprint(
                &self,
                machine: &crate::machine::Machine,
            ) -> Result<crate::estimate::Footprint, crate::error::ConfigError> {
                super::nas::footprint(&self.spec(), &self.common(), machine)
            }
            fn build(
                &self,
                machine: &crate::machine::Machine,
            ) -> Result<Vec<Box<dyn crate::component::Program>>, crate::error::ConfigError> {
                Ok(vec![Box::new(super::nas::Nas::new(
                    self.spec(),
                    &self.common(),
                    machine,
                )?)])
            }
        }

        inventory::submit!(crate::component::WorkloadEntry::of::<$cfg>());
    };
}
pub(crate) use nas_config;

/// An array of `comps` eight-byte values per point of an `n` x `n` x `n` grid, split
/// into `n` planes of `n` x `n` points.
pub fn grid(name: &'static str, n: u64, comps: u64) -> ArraySpec {
    ArraySpec {
        name,
        planes: n,
        plane_bytes: n.saturating_mul(n).saturating_mul(comps).saturating_mul(8),
        per_thread: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> Machine {
        let mut cfg = crate::mm::test_machine_config(2);
        cfg.page_size_bytes = 1024;
        cfg.frames_per_node = 1 << 16;
        Machine::new(cfg).unwrap()
    }

    /// The test machine with processor caches (passes emitted apart).
    fn cached_machine() -> Machine {
        let mut cfg = crate::mm::test_machine_config(2);
        cfg.page_size_bytes = 1024;
        cfg.frames_per_node = 1 << 16;
        cfg.cache = crate::cache::CacheConfig {
            enabled: true,
            bytes: 1 << 16,
            line_bytes: LINE_BYTES,
            hit_ns: 1,
        };
        Machine::new(cfg).unwrap()
    }

    /// Two sweeps of one kind over arrays whose planes are not whole lines (so walks
    /// start inside lines) and large enough that a thread's walks of the first are
    /// sliced, then its walks of the second packed several to a part.
    fn two_sweeps(kind: fn(usize, bool, u32) -> Sweep) -> KernelSpec {
        KernelSpec {
            name: "test",
            arrays: vec![
                ArraySpec {
                    name: "big",
                    planes: 700,
                    plane_bytes: 3000,
                    per_thread: false,
                },
                ArraySpec {
                    name: "small",
                    planes: 90,
                    plane_bytes: 200,
                    per_thread: false,
                },
            ],
            sweeps: vec![kind(0, true, 3), kind(1, false, 2), kind(1, false, 1)],
            iterations: 2,
            ops_per_iteration: 1e6,
            constructs: Vec::new(),
        }
    }

    fn all_sweep(array: usize, _write: bool, passes: u32) -> Sweep {
        Sweep::All { array, passes }
    }

    /// Every chunk's parts, appended in order, append what the chunk appends at once,
    /// and each part stays within the plan's bound.
    fn assert_parts_append_the_chunk(spec: KernelSpec, machine: &Machine) {
        for compute_ps_per_op in [0, 5_000] {
            let c = Common {
                threads: Some(3),
                compute_ps_per_op,
                adapt_threads: false,
            };
            let part_ops = plan(&spec, &c, machine).unwrap().part_ops;
            let nas = Nas::new(spec.clone(), &c, machine).unwrap();
            let body = nas.fj.body();
            for chunk in 0..body.chunks() {
                let mut whole = Vec::new();
                body.chunk(1, chunk, &mut whole);
                let mut parts = Vec::new();
                let n = body.parts(1, chunk);
                assert!(n > 3, "{n} parts");
                for part in 0..n {
                    let before = parts.len();
                    body.part(1, chunk, part, &mut parts);
                    assert!((parts.len() - before) as u64 <= part_ops);
                }
                assert_eq!(parts, whole, "chunk {chunk}");
            }
        }
    }

    #[test]
    fn an_iterations_computation_is_its_operations_at_the_rate_spread_over_its_lines() {
        // 1e6 operations an iteration at 5,000 ps each: 5 ms of computation in all, each
        // sweep's share its share of the lines walked.
        for spec in [two_sweeps(own), two_sweeps(across), two_sweeps(all_sweep)] {
            let c = Common {
                threads: Some(3),
                compute_ps_per_op: 5_000,
                adapt_threads: false,
            };
            let nas = Nas::new(spec, &c, &machine()).unwrap();
            let body = nas.fj.body();
            let (mut compute, mut lines) = (0u64, 0u64);
            for chunk in 0..body.chunks() {
                let mut out = Vec::new();
                body.chunk(0, chunk, &mut out);
                for op in &out {
                    match op {
                        Op::Compute(ns) => compute += ns.0,
                        Op::Ref { count, .. } => lines += *count as u64,
                        _ => {}
                    }
                }
            }
            assert!(lines > 0);
            // Each compute operation rounds to the nanosecond.
            assert!(compute.abs_diff(5_000_000) <= 9, "{compute}");
        }
    }

    #[test]
    fn no_rate_means_no_computation() {
        let c = Common {
            threads: Some(3),
            compute_ps_per_op: 0,
            adapt_threads: false,
        };
        let nas = Nas::new(two_sweeps(own), &c, &machine()).unwrap();
        let mut out = Vec::new();
        nas.fj.body().chunk(0, 0, &mut out);
        assert!(!out.iter().any(|o| matches!(o, Op::Compute(_))));
    }

    #[test]
    fn an_own_sweeps_parts_append_its_chunk() {
        assert_parts_append_the_chunk(two_sweeps(own), &machine());
    }

    #[test]
    fn an_own_sweeps_parts_append_its_chunk_with_processor_caches() {
        assert_parts_append_the_chunk(two_sweeps(own), &cached_machine());
    }

    #[test]
    fn an_across_sweeps_parts_append_its_chunk() {
        assert_parts_append_the_chunk(two_sweeps(across), &machine());
    }

    #[test]
    fn an_across_sweeps_parts_append_its_chunk_with_processor_caches() {
        assert_parts_append_the_chunk(two_sweeps(across), &cached_machine());
    }

    #[test]
    fn an_all_sweeps_parts_append_its_chunk() {
        assert_parts_append_the_chunk(two_sweeps(all_sweep), &machine());
    }

    #[test]
    fn an_all_sweeps_parts_append_its_chunk_with_processor_caches() {
        assert_parts_append_the_chunk(two_sweeps(all_sweep), &cached_machine());
    }

    #[test]
    fn a_thread_holds_no_more_operations_than_its_footprint_says() {
        let machine = cached_machine();
        let spec = two_sweeps(own);
        let c = Common {
            threads: Some(3),
            compute_ps_per_op: 5_000,
            adapt_threads: false,
        };
        let fp = footprint(&spec, &c, &machine).unwrap();
        let mut nas = Nas::new(spec, &c, &machine).unwrap();
        let running = [true; 3];
        let mut out = Vec::new();
        let mut streamed = Vec::new();
        let mut calls = 0;
        loop {
            out.clear();
            nas.next_ops(1, &running, &mut out);
            if out.is_empty() {
                break;
            }
            calls += 1;
            assert!(out.len() as u64 <= fp.buffered_ops, "{}", out.len());
            streamed.extend_from_slice(&out);
        }
        assert!(calls > 4);
        assert!(fp.buffered_ops < 1000, "{}", fp.buffered_ops);
        // What the thread was handed, call by call, is its chunks appended at once.
        let mut whole = Vec::new();
        for iter in 0..2 {
            whole.push(Op::ParallelEnter(iter));
            nas.fj.body().chunk(iter, 1, &mut whole);
            whole.extend([Op::Barrier, Op::ParallelExit(iter), Op::IterationEnd(iter)]);
        }
        assert_eq!(streamed, whole);
    }

    fn spec(sweep: Sweep) -> KernelSpec {
        KernelSpec {
            name: "test",
            arrays: vec![grid("u", 8, 1)],
            sweeps: vec![sweep],
            iterations: 1,
            ops_per_iteration: 0.0,
            constructs: Vec::new(),
        }
    }

    fn pages_of(spec: KernelSpec, chunk: u32) -> Vec<u32> {
        let c = Common {
            threads: Some(2),
            compute_ps_per_op: 0,
            adapt_threads: false,
        };
        let nas = Nas::new(spec, &c, &machine()).unwrap();
        let mut out = Vec::new();
        nas.fj.body().chunk(0, chunk, &mut out);
        out.iter()
            .filter_map(|o| match o {
                Op::Ref { vpn, .. } => Some(vpn.0),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_threadprivate_array_is_a_copy_per_thread_each_walked_by_its_thread() {
        // The 8-plane grid takes pages 0-3; two copies of 2 KB follow, pages 4-5 and 6-7.
        let mut s = spec(Sweep::Own {
            array: 1,
            write: true,
            passes: 1,
        });
        s.arrays.push(per_thread("work", 2048));
        assert_eq!(pages_of(s.clone(), 0), vec![4, 5]);
        assert_eq!(pages_of(s, 1), vec![6, 7]);
    }

    #[test]
    fn an_own_sweep_walks_the_threads_block_of_planes() {
        // 8 planes of 512 bytes on 1 KB pages: thread 1 owns planes 4..8, pages 2 and 3.
        let s = spec(Sweep::Own {
            array: 0,
            write: false,
            passes: 1,
        });
        assert_eq!(pages_of(s, 1), vec![2, 3]);
    }

    #[test]
    fn an_across_sweep_reaches_every_plane() {
        let s = spec(Sweep::Across {
            array: 0,
            write: true,
            passes: 1,
        });
        assert_eq!(pages_of(s, 0), vec![0, 1, 2, 3]);
    }

    #[test]
    fn a_sweep_references_each_cache_line_once_per_pass() {
        let s = spec(Sweep::All {
            array: 0,
            passes: 2,
        });
        let c = Common {
            threads: Some(2),
            compute_ps_per_op: 0,
            adapt_threads: false,
        };
        let nas = Nas::new(s, &c, &machine()).unwrap();
        let mut out = Vec::new();
        nas.fj.body().chunk(0, 0, &mut out);
        let refs: u64 = out
            .iter()
            .map(|o| match o {
                Op::Ref { count, .. } => *count as u64,
                _ => 0,
            })
            .sum();
        // 4 KB = 32 lines, twice.
        assert_eq!(refs, 64);
    }

    #[test]
    fn each_kernels_constructs_make_its_sweeps_in_order() {
        use crate::workload::{nas_bt, nas_cg, nas_ft, nas_lu, nas_mg, nas_sp};
        let specs = [
            nas_bt::NasBtConfig::default().spec(),
            nas_sp::NasSpConfig::default().spec(),
            nas_lu::NasLuConfig::default().spec(),
            nas_mg::NasMgConfig::default().spec(),
            nas_ft::NasFtConfig::default().spec(),
            nas_cg::NasCgConfig::default().spec(),
        ];
        for spec in &specs {
            let ranges = spec.construct_ranges();
            assert!(ranges.len() > 1, "{}", spec.name);
            assert!(ranges.iter().all(|r| !r.is_empty()), "{}", spec.name);
            assert_eq!(
                ranges.last().unwrap().end,
                spec.sweeps.len(),
                "{}",
                spec.name
            );
        }
        let names: Vec<_> = specs[0].constructs.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            ["compute_rhs", "x_solve", "y_solve", "z_solve", "add"]
        );
    }

    #[test]
    fn a_construct_emits_only_its_own_sweeps() {
        // Two constructs: the first walks `u`, the second `w`.
        let mut s = spec(own(0, false, 1));
        s.sweeps.push(own(1, true, 1));
        s.arrays.push(grid("w", 8, 1));
        s.constructs = vec![
            Construct {
                name: "first",
                sweeps: 1,
            },
            Construct {
                name: "second",
                sweeps: 1,
            },
        ];
        let c = Common {
            threads: Some(2),
            compute_ps_per_op: 0,
            adapt_threads: false,
        };
        let nas = Nas::new(s, &c, &machine()).unwrap();
        let body = nas.fj.body();
        assert_eq!(body.constructs(), 2);
        let pages = |k: u32| {
            let mut out = Vec::new();
            body.chunk(k, 1, &mut out);
            out.iter()
                .filter_map(|o| match o {
                    Op::Ref { vpn, .. } => Some(vpn.0),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        // Thread 1's planes: pages 2 and 3 of `u`, then 6 and 7 of `w`; construct 3 is
        // iteration 1's second.
        assert_eq!(pages(0), vec![2, 3]);
        assert_eq!(pages(1), vec![6, 7]);
        assert_eq!(pages(3), vec![6, 7]);
    }
}
