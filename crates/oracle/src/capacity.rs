//! Capacity limits: a lower bound of the migration-only optimum when a node's memory
//! holds fewer frames than the pages a run references (the fast tier of a tiered
//! machine, or any node with a short `node_frames` entry).
//!
//! With a frame limit the pages are no longer independent: at every instant the pages
//! homed on a limited node `x` must number at most `C_x`. The exact optimum is a
//! problem over all pages at once; this module gives a **Lagrangian relaxation** of it
//! that keeps the per-page programmes.
//!
//! The constraint `occ_x(t) <= C_x` for all `t` in `[0, H]` implies the aggregated
//! one, `∫_w occ_x(t) dt <= C_x · |w|`, over each of `W` equal windows `w` of the
//! horizon `H` (the last reference's time). Pricing each aggregated constraint with a
//! multiplier `λ_{x,w} >= 0` (ns of cost per frame-ns of occupancy) and moving it into
//! the objective gives
//!
//! `L(λ) = Σ_pages min_schedule [cost + Σ_{x,w} λ_{x,w} · occupancy_{x,w}] − Σ_{x,w} λ_{x,w} · C_x · |w|`,
//!
//! where each page's minimum is again a programme over (run, home), as in
//! [`crate::dp::MigrationDp`], with occupancy priced in the gaps between runs. For a
//! feasible schedule the second sum is at least the priced occupancy, so `L(λ)` never
//! exceeds the cost of any schedule that respects the limits: **every `λ >= 0` gives a
//! lower bound**, `λ = 0` gives the optimum without limits, and the best `λ` found is
//! reported. `L` is concave; the search first scales the multipliers of the constraints
//! the unlimited optimum violates (bisection on the directional derivative), then
//! refines each multiplier by projected supergradient steps (the supergradient is the
//! relaxed schedule's occupancy less the capacity). Each evaluation is one pass over
//! the trace, so a search of `P` passes costs `P` times a migration-only solve (with
//! `n + n·K` numbers per page, `K` = limited nodes × windows).
//!
//! The per-page programme: a page exists from its first run (placed free, as in the
//! other models) to `H`. Between two runs it may leave its home, spend the gap on any
//! node `z` and arrive at the next run's home; a schedule within a gap that visits
//! several nodes costs at least its moves plus the gap at the cheapest of them, so
//! `D'[y] = min_z (min(D[z], min_x D[x] + migrate) + λ_z·gap) [+ migrate if z != y]`,
//! O(n + K) per run. Runs are taken in the trace's order, and gaps on the running
//! maximum of their start times, so a page's counted lifetime never exceeds its span.
//! Runs are not merged here (a move between two runs of one node now changes the
//! occupancy, so the merge argument of [`crate::dp::merge`] does not hold).
//!
//! What it is not: a feasible schedule. The relaxed schedule may overfill a node for a
//! while and make up for it in the rest of a window; the gap between the bound and the
//! true capacity-limited optimum is not known (it closes where the limit binds evenly,
//! as in a steady hot set). Replicating policies are outside this model: the bound is
//! one of the migration-only optimum with limits.

use crate::dp::Run;
use crate::error::OracleError;
use crate::model::CostModel;
use crate::trace::{Record, TraceReader};
use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// Shards the pages are dealt to, whatever the thread count (sums over pages are taken
/// shard by shard in this order, so the bound is the same bits on any number of
/// threads).
const SHARDS: usize = 64;

/// Default number of trace passes the search may make.
pub const DEFAULT_CAPACITY_PASSES: u32 = 40;

/// Largest number of priced constraints (limited nodes × windows).
pub const MAX_CONSTRAINTS: usize = 4096;

/// Most windows the horizon may be cut into.
pub const MAX_WINDOWS: usize = 64;

/// Bytes of per-page state the search may hold before it is refused.
pub const MAX_STATE_BYTES: u64 = 8 << 30;

/// A node whose frames are fewer than the pages referenced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LimitedNode {
    /// The node.
    pub node: u16,
    /// Its frames.
    pub frames: u64,
}

/// The priced constraints: which nodes are limited, the windows, the multipliers.
#[derive(Clone, Debug)]
pub struct Prices {
    /// Per node: its index among the limited nodes, if limited.
    slot: Vec<Option<usize>>,
    limited: Vec<LimitedNode>,
    windows: usize,
    horizon: u64,
    /// `λ[l * windows + w]`, ns per frame-ns.
    lambda: Vec<f64>,
}

impl Prices {
    /// Constraints for `limited` nodes of a machine of `nodes`, `windows` windows over
    /// `[0, horizon]`, all multipliers 0.
    pub fn new(nodes: usize, limited: &[LimitedNode], windows: usize, horizon: u64) -> Prices {
        let mut slot = vec![None; nodes];
        for (l, ln) in limited.iter().enumerate() {
            slot[ln.node as usize] = Some(l);
        }
        let windows = windows.max(1);
        Prices {
            slot,
            limited: limited.to_vec(),
            windows,
            horizon: horizon.max(1),
            lambda: vec![0.0; limited.len() * windows],
        }
    }

    /// Priced constraints (limited nodes × windows).
    pub fn constraints(&self) -> usize {
        self.lambda.len()
    }

    /// The multipliers, by limited node then window.
    pub fn lambda(&self) -> &[f64] {
        &self.lambda
    }

    /// Sets the multipliers (negative ones are taken as 0).
    pub fn set_lambda(&mut self, lambda: &[f64]) {
        for (d, &s) in self.lambda.iter_mut().zip(lambda) {
            *d = s.max(0.0);
        }
    }

    /// Start and end of window `w`.
    fn window(&self, w: usize) -> (u64, u64) {
        let h = self.horizon as u128;
        let n = self.windows as u128;
        ((h * w as u128 / n) as u64, (h * (w as u128 + 1) / n) as u64)
    }

    /// Capacity of constraint `k` (frame-ns).
    fn capacity(&self, k: usize) -> f64 {
        let (l, w) = (k / self.windows, k % self.windows);
        let (a, b) = self.window(w);
        self.limited[l].frames as f64 * (b - a) as f64
    }

    /// The windows overlapping `[from, to)`, each with the overlap (ns), in order.
    fn segments(&self, from: u64, to: u64) -> impl Iterator<Item = (usize, u64)> + '_ {
        let n = self.windows as u128;
        let h = self.horizon as u128;
        let first = if to > from {
            ((from as u128 * n) / h).min(n - 1) as usize
        } else {
            self.windows
        };
        (first..self.windows).map_while(move |w| {
            let (a, b) = self.window(w);
            let (a, b) = (
                a.max(from),
                if w + 1 == self.windows { to } else { b.min(to) },
            );
            (a < to).then_some((w, b.saturating_sub(a)))
        })
    }
}

/// One page's priced programme: per home, the cheapest value (cost plus priced
/// occupancy) and that schedule's occupancy per constraint.
#[derive(Clone, Debug)]
pub struct PricedDp {
    value: Vec<f64>,
    /// `occ[x * K + k]`: occupancy of constraint `k` on the schedule ending at `x`.
    occ: Vec<u64>,
    last: Option<u64>,
}

impl PricedDp {
    /// A page not referenced yet.
    pub fn new(nodes: usize, p: &Prices) -> PricedDp {
        PricedDp {
            value: vec![0.0; nodes],
            occ: vec![0; nodes * p.constraints()],
            last: None,
        }
    }

    fn best(&self) -> usize {
        let mut bi = 0;
        for (i, &v) in self.value.iter().enumerate() {
            if v < self.value[bi] {
                bi = i;
            }
        }
        bi
    }

    /// Every home takes the cheapest home's schedule plus a move where that is cheaper.
    fn moves(&mut self, migrate: f64, k: usize) {
        let b = self.best();
        let moved = self.value[b] + migrate;
        for x in 0..self.value.len() {
            if moved < self.value[x] {
                self.value[x] = moved;
                self.occ.copy_within(b * k..(b + 1) * k, x * k);
            }
        }
    }

    /// The page spends the gap `[from, to)` anywhere: before each window's part of it
    /// it may move (within a window the multipliers are constant, so one node per part
    /// suffices: a schedule that visits several costs at least its moves plus the part
    /// at the cheapest of them), and after the gap too.
    fn gap(&mut self, p: &Prices, migrate: f64, from: u64, to: u64) {
        let k = p.constraints();
        for (w, ns) in p.segments(from, to) {
            self.moves(migrate, k);
            for (x, slot) in p.slot.iter().enumerate() {
                let Some(l) = *slot else { continue };
                let c = l * p.windows + w;
                self.value[x] += p.lambda[c] * ns as f64;
                self.occ[x * k + c] += ns;
            }
        }
        self.moves(migrate, k);
    }

    /// Takes one run issued at `time`.
    pub fn step(&mut self, m: &CostModel, p: &Prices, time: u64, r: Run) {
        match self.last {
            None => self.last = Some(time),
            Some(last) => {
                // A move may come between any two runs, even at one instant; a gap
                // may be spent on a third node (leave, stay, arrive).
                let now = last.max(time).min(p.horizon);
                self.gap(p, m.migrate as f64, last, now);
                self.last = Some(now.max(last));
            }
        }
        let a = r.node as usize;
        let c = r.count as f64;
        for (x, v) in self.value.iter_mut().enumerate() {
            let price = if r.write { m.write(a, x) } else { m.read(a, x) };
            *v += c * price as f64;
        }
    }

    /// The page's last gap up to the horizon; its value and occupancy per constraint.
    pub fn finish(&mut self, m: &CostModel, p: &Prices) -> (f64, &[u64]) {
        let k = p.constraints();
        if let Some(last) = self.last {
            if p.horizon > last {
                self.gap(p, m.migrate as f64, last, p.horizon);
                self.last = Some(p.horizon);
            }
        }
        let b = self.best();
        (self.value[b], &self.occ[b * k..(b + 1) * k])
    }

    /// Bytes this page's programme holds.
    pub fn bytes(&self) -> usize {
        self.value.capacity() * 8 + self.occ.capacity() * 8 + 16
    }
}

/// `L(λ)` of one sequence of timed runs per page (the pages of a trace, in memory;
/// tests and small traces): the bound and the supergradient.
pub fn evaluate_pages(m: &CostModel, p: &Prices, pages: &[Vec<(u64, Run)>]) -> Evaluation {
    let mut sum = 0.0;
    let mut occ = vec![0u64; p.constraints()];
    for runs in pages {
        if runs.is_empty() {
            continue;
        }
        let mut dp = PricedDp::new(m.nodes, p);
        for &(t, r) in runs {
            dp.step(m, p, t, r);
        }
        let (v, o) = dp.finish(m, p);
        sum += v;
        for (a, b) in occ.iter_mut().zip(o) {
            *a += b;
        }
    }
    Evaluation::new(p, sum, occ)
}

/// One evaluation of the relaxation.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// `L(λ)` (ns).
    pub bound: f64,
    /// Per constraint: the relaxed schedule's occupancy less the capacity (frame-ns); a
    /// supergradient of `L` at `λ`.
    pub excess: Vec<f64>,
}

impl Evaluation {
    fn new(p: &Prices, pages_value: f64, occ: Vec<u64>) -> Evaluation {
        let excess: Vec<f64> = occ
            .iter()
            .enumerate()
            .map(|(k, &o)| o as f64 - p.capacity(k))
            .collect();
        let priced: f64 = (0..p.constraints())
            .map(|k| p.lambda[k] * p.capacity(k))
            .sum();
        Evaluation {
            bound: pages_value - priced,
            excess,
        }
    }
}

/// The relaxation's result on a trace.
#[derive(Clone, Debug, Serialize)]
pub struct CapacityBound {
    /// The limited nodes.
    pub limited: Vec<LimitedNode>,
    /// Windows the horizon was cut into.
    pub windows: usize,
    /// The horizon: the last reference's time (ns).
    pub horizon_ns: u64,
    /// The best lower bound found of the migration-only optimum with the limits (ns).
    pub bound: u64,
    /// The optimum without limits (`λ = 0`), for comparison (ns).
    pub unlimited: u64,
    /// Whether the optimum without limits already keeps every window within its
    /// capacity on aggregate (then the relaxation cannot tighten it).
    pub unlimited_fits: bool,
    /// The multipliers of the best bound (ns per frame-ns), by limited node then window.
    pub lambda: Vec<f64>,
    /// The relaxed schedule's mean frames used on each limited node at the best bound
    /// (occupancy over the horizon), beside the node's frames.
    pub mean_frames_used: Vec<f64>,
    /// Trace passes made.
    pub passes: u32,
    /// Wall-clock seconds the search took (not part of a deterministic record).
    #[serde(skip)]
    pub seconds: f64,
    /// The largest per-page state held (bytes).
    pub state_bytes: u64,
}

/// Options of the search.
#[derive(Clone, Copy, Debug)]
pub struct CapacityOptions {
    /// Trace passes the search may make (each evaluates `L` once); 0: no search.
    pub passes: u32,
    /// Windows the horizon is cut into (one multiplier per limited node and window).
    pub windows: usize,
}

impl Default for CapacityOptions {
    fn default() -> Self {
        CapacityOptions {
            passes: DEFAULT_CAPACITY_PASSES,
            windows: 1,
        }
    }
}

/// Evaluates `L(λ)` on the trace at `path`, streaming it, in parallel over pages.
fn evaluate_trace(
    path: &Path,
    m: &CostModel,
    p: &Prices,
    state_bytes: &mut u64,
) -> Result<Evaluation, OracleError> {
    let mut reader = TraceReader::open(path).map_err(OracleError::io(path))?;
    let k = p.constraints();
    let mut shards: Vec<Vec<Option<PricedDp>>> = vec![Vec::new(); SHARDS];
    let mut buckets: Vec<Vec<Record>> = vec![Vec::new(); SHARDS];
    let mut chunk: Vec<Record> = Vec::new();
    let mut more = true;
    while more {
        chunk.clear();
        while chunk.len() < crate::trace::CHUNK_RECORDS {
            if !reader
                .next_block(&mut chunk)
                .map_err(OracleError::io(path))?
            {
                more = false;
                break;
            }
        }
        for b in buckets.iter_mut() {
            b.clear();
        }
        for r in &chunk {
            buckets[r.page as usize % SHARDS].push(*r);
        }
        shards
            .par_iter_mut()
            .zip(buckets.par_iter())
            .for_each(|(shard, recs)| {
                for r in recs {
                    let local = r.page as usize / SHARDS;
                    if shard.len() <= local {
                        shard.resize(local + 1, None);
                    }
                    let dp = shard[local].get_or_insert_with(|| PricedDp::new(m.nodes, p));
                    dp.step(
                        m,
                        p,
                        r.time,
                        Run {
                            node: r.node,
                            write: r.write,
                            count: r.count,
                        },
                    );
                }
            });
    }
    let held: u64 = shards
        .iter()
        .flatten()
        .flatten()
        .map(|d| d.bytes() as u64 + 8)
        .sum();
    *state_bytes = (*state_bytes).max(held);
    // Each shard's pages in order, the shards in order: the same sum on any thread count.
    let parts: Vec<(f64, Vec<u64>)> = shards
        .par_iter_mut()
        .map(|shard| {
            let mut sum = 0.0;
            let mut occ = vec![0u64; k];
            for dp in shard.iter_mut().flatten() {
                let (v, o) = dp.finish(m, p);
                sum += v;
                for (a, b) in occ.iter_mut().zip(o) {
                    *a += b;
                }
            }
            (sum, occ)
        })
        .collect();
    let mut sum = 0.0;
    let mut occ = vec![0u64; k];
    for (s, o) in parts {
        sum += s;
        for (a, b) in occ.iter_mut().zip(o) {
            *a += b;
        }
    }
    Ok(Evaluation::new(p, sum, occ))
}

/// The nodes whose frames are fewer than `pages` referenced pages.
pub fn limited_nodes(frames: &[u64], pages: u64) -> Vec<LimitedNode> {
    frames
        .iter()
        .enumerate()
        .filter(|&(_, &f)| f < pages)
        .map(|(x, &f)| LimitedNode {
            node: x as u16,
            frames: f,
        })
        .collect()
}

/// A scale for the multipliers: the largest saving a word's reference can make by
/// where its page lives, times the words, over the pages' counted lifetimes (ns per
/// frame-ns). Zero when every placement prices references alike.
fn scale(m: &CostModel, words: u64, pages: u64, horizon: u64) -> f64 {
    let n = m.nodes;
    let mut spread = 0u64;
    for a in 0..n {
        for price in [
            |m: &CostModel, a, x| m.read(a, x),
            |m: &CostModel, a, x| m.write(a, x),
        ] {
            let (lo, hi) = (0..n).fold((u64::MAX, 0), |(lo, hi), x| {
                let v = price(m, a, x);
                (lo.min(v), hi.max(v))
            });
            spread = spread.max(hi - lo);
        }
    }
    spread as f64 * words as f64 / (pages.max(1) as f64 * horizon.max(1) as f64)
}

/// Searches the multipliers for the best bound, within `passes` evaluations of `eval`
/// (a function of the multipliers). Every evaluation's bound is valid; the best is kept.
/// Returns the best evaluation, its multipliers, the first (`λ = 0`) evaluation and the
/// passes made.
pub fn search(
    constraints: usize,
    scale: f64,
    passes: u32,
    mut eval: impl FnMut(&[f64]) -> Result<Evaluation, OracleError>,
) -> Result<(Evaluation, Vec<f64>, Evaluation, u32), OracleError> {
    let zero = vec![0.0; constraints];
    let first = eval(&zero)?;
    let mut made = 1u32;
    let mut best = (first.clone(), zero.clone());
    // The constraints the optimum without limits violates: the direction to scale.
    let dir: Vec<f64> = first
        .excess
        .iter()
        .map(|&e| if e > 0.0 { 1.0 } else { 0.0 })
        .collect();
    if dir.iter().all(|&d| d == 0.0) || scale <= 0.0 {
        return Ok((first.clone(), zero, first, made));
    }
    let at = |mu: f64| -> Vec<f64> { dir.iter().map(|d| d * mu).collect() };
    let slope = |e: &Evaluation| -> f64 { e.excess.iter().zip(&dir).map(|(x, d)| x * d).sum() };
    let keep = |e: Evaluation, l: Vec<f64>, best: &mut (Evaluation, Vec<f64>)| {
        if e.bound > best.0.bound {
            *best = (e, l);
        }
    };
    // Bracket: grow the scale until the priced schedule fits (the slope turns <= 0).
    let (mut lo, mut hi) = (0.0f64, scale);
    // One multiplier: bisection is the whole search. Several: half the passes left
    // scale them together, the rest refine them one by one.
    let budget_scale = if constraints == 1 {
        u32::MAX
    } else {
        passes.saturating_sub(made).div_ceil(2).max(1)
    };
    loop {
        if made >= passes {
            return Ok((best.0, best.1, first, made));
        }
        let e = eval(&at(hi))?;
        made += 1;
        let s = slope(&e);
        keep(e, at(hi), &mut best);
        if s <= 0.0 {
            break;
        }
        lo = hi;
        hi *= 4.0;
        if !hi.is_finite() {
            return Ok((best.0, best.1, first, made));
        }
    }
    // Bisection on the slope's sign along the direction.
    let mut used = 0;
    while made < passes && used < budget_scale && hi - lo > hi * 1e-9 {
        let mid = 0.5 * (lo + hi);
        let e = eval(&at(mid))?;
        made += 1;
        used += 1;
        let s = slope(&e);
        keep(e, at(mid), &mut best);
        if s > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // Projected supergradient steps from the best point, each multiplier on its own
    // (only when there is more than one: along one the bisection is already exact).
    if constraints > 1 {
        let mut lambda = best.1.clone();
        let mut e = best.0.clone();
        let mut step = 0u32;
        while made < passes {
            step += 1;
            // A step that moves each multiplier by up to a quarter of the scale found,
            // shrinking as 1/sqrt(step).
            let mu = 0.5 * (lo + hi);
            let gmax = e.excess.iter().fold(0.0f64, |a, &x| a.max(x.abs()));
            if gmax == 0.0 {
                break;
            }
            let t = 0.25 * mu / (gmax * (step as f64).sqrt());
            for (l, g) in lambda.iter_mut().zip(&e.excess) {
                *l = (*l + t * g).max(0.0);
            }
            e = eval(&lambda)?;
            made += 1;
            keep(e.clone(), lambda.clone(), &mut best);
        }
    }
    Ok((best.0, best.1, first, made))
}

/// What the capacity model gave for a trace.
#[derive(Clone, Debug)]
pub enum Capacity {
    /// No node holds fewer frames than the pages referenced: the limits never bind, and
    /// the optimum without them is the optimum with them.
    NotLimited,
    /// The bound was not computed, and why.
    Refused(String),
    /// The relaxation's best bound.
    Bound(CapacityBound),
}

/// The relaxation's best bound on the trace at `path`, for the machine `m` whose nodes
/// hold `frames`, `pages` pages having been referenced, `words` words in all, the last
/// reference at `last_time`.
pub fn capacity_bound(
    path: &Path,
    m: &CostModel,
    frames: &[u64],
    pages: u64,
    words: u64,
    last_time: u64,
    opts: CapacityOptions,
) -> Result<Capacity, OracleError> {
    let limited = limited_nodes(frames, pages);
    if limited.is_empty() {
        return Ok(Capacity::NotLimited);
    }
    if opts.passes == 0 {
        return Ok(Capacity::Refused("not asked for".into()));
    }
    let k = limited.len() * opts.windows.max(1);
    if k > MAX_CONSTRAINTS {
        return Ok(Capacity::Refused(format!(
            "{} limited nodes x {} windows = {k} multipliers; at most {MAX_CONSTRAINTS} are searched",
            limited.len(),
            opts.windows
        )));
    }
    // Validate, then allocate: the per-page state of one evaluation.
    let per_page = (m.nodes * (1 + k) * 8 + 64) as u64;
    let need = per_page.saturating_mul(pages);
    if need > MAX_STATE_BYTES {
        return Ok(Capacity::Refused(format!(
            "{pages} pages x {per_page} bytes of state ({} nodes, {k} multipliers) exceed {} GiB; use fewer windows",
            m.nodes,
            MAX_STATE_BYTES >> 30
        )));
    }
    let started = Instant::now();
    let horizon = last_time.saturating_add(1);
    let mut prices = Prices::new(m.nodes, &limited, opts.windows, horizon);
    let mut state_bytes = 0u64;
    let sc = scale(m, words, pages, horizon);
    let (best, lambda, first, passes) = search(k, sc, opts.passes, |l| {
        prices.set_lambda(l);
        evaluate_trace(path, m, &prices, &mut state_bytes)
    })?;
    // Floor, less a margin for the floating-point sums, so the bound stays a bound.
    let floor = |v: f64| (v - v.abs() * 1e-12).floor().max(0.0) as u64;
    let w = prices.windows;
    let mean_frames_used = (0..limited.len())
        .map(|l| {
            let occ: f64 = (0..w)
                .map(|wi| best.excess[l * w + wi] + prices.capacity(l * w + wi))
                .sum();
            occ / horizon as f64
        })
        .collect();
    Ok(Capacity::Bound(CapacityBound {
        limited,
        windows: w,
        horizon_ns: horizon,
        bound: floor(best.bound),
        unlimited: floor(first.bound),
        unlimited_fits: first.excess.iter().all(|&e| e <= 0.0),
        lambda,
        mean_frames_used,
        passes,
        seconds: started.elapsed().as_secs_f64(),
        state_bytes,
    }))
}
