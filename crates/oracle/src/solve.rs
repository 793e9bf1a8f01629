//! Streaming a trace through the solvers, in parallel over pages, and setting the
//! policy's own cost in the same model beside the optimum.
//!
//! The trace is read block by block; each chunk of about [`CHUNK_RECORDS`] records is
//! dealt to shards by page (page mod shards), and the shards advance their pages'
//! programmes in parallel (rayon), each page's runs in trace order. Memory: the chunk,
//! plus each referenced page's programme (O(n) for migration, its live copy sets for
//! replication) and result; never the trace.

use crate::capacity::{capacity_bound, Capacity, CapacityBound, CapacityOptions};
use crate::dp::{
    Cost, MigrationDp, ReplicationBound, ReplicationDp, Run, Scratch, MAX_REPLICATION_NODES,
};
use crate::model::CostModel;
use crate::trace::{Footer, Header, PageMoves, Record, TraceReader};
// Public here too: both were defined in this module before, and `solve::OracleError`
// and `solve::CHUNK_RECORDS` stay valid paths.
pub use crate::error::OracleError;
pub use crate::trace::CHUNK_RECORDS;
use numaplace_core::{Machine, SimError};
use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// One page's optimum and the policy's cost on it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PageResult {
    /// Page number.
    pub vpn: u32,
    /// Reference runs.
    pub runs: u64,
    /// Words referenced.
    pub words: u64,
    /// The policy's cost in the model.
    pub policy: Cost,
    /// The migration-only optimum.
    pub migration: Cost,
    /// The replication optimum (absent when not solved).
    pub replication: Option<Cost>,
    /// The most copy sets the replication programme held at once.
    pub peak_states: u32,
    /// A lower bound of the replication optimum ([`ReplicationBound`]).
    pub replication_bound: u64,
}

impl PageResult {
    /// The optimum the policy is measured against: the replication model when solved,
    /// else migration only.
    pub fn optimum(&self) -> Cost {
        self.replication.unwrap_or(self.migration)
    }

    /// The policy's excess over the optimum (ns, negative never for a bound).
    pub fn regret_ns(&self) -> i128 {
        self.policy.total() as i128 - self.optimum().total() as i128
    }
}

/// Everything the oracle computed from one trace.
#[derive(Clone, Debug, Serialize)]
pub struct Solution {
    /// The trace's header.
    #[serde(skip)]
    pub header: Header,
    /// The trace's footer.
    #[serde(skip)]
    pub footer: Footer,
    /// The model's prices.
    #[serde(skip)]
    pub model: CostModel,
    /// The referenced pages, by page number.
    pub pages: Vec<PageResult>,
    /// The policy's cost in the model (sum over pages).
    pub policy: Cost,
    /// The migration-only optimum.
    pub migration: Cost,
    /// The replication optimum, when solved.
    pub replication: Option<Cost>,
    /// Why the replication model was not solved, if it was not.
    pub replication_refused: Option<String>,
    /// A lower bound of the replication optimum for any machine (the relaxation of
    /// [`ReplicationBound`]), summed over pages (ns).
    pub replication_bound: u64,
    /// Whether the policy replicated (then a migration-only optimum is no bound on it).
    pub policy_replicated: bool,
    /// The migration-only optimum with the machine's frame limits, bounded below by a
    /// Lagrangian relaxation ([`crate::capacity`]), when a node holds fewer frames than
    /// the pages referenced.
    pub capacity: Option<CapacityBound>,
    /// Why that bound was not computed on a machine whose limits bind.
    pub capacity_refused: Option<String>,
    /// Reference runs solved.
    pub records: u64,
    /// Wall-clock seconds the solvers took.
    pub seconds: f64,
    /// The largest memory the programmes and the chunk held at once (bytes).
    pub state_bytes: u64,
}

impl Solution {
    /// The optimum the policy is measured against (replication model when solved).
    pub fn optimum(&self) -> Cost {
        self.replication.unwrap_or(self.migration)
    }

    /// The policy's cost over the optimum's (1.0: optimal).
    pub fn regret(&self) -> f64 {
        self.policy.total() as f64 / self.optimum().total().max(1) as f64
    }

    /// An upper bound of the regret when only a bound of the optimum is known: against
    /// the replication model when it was not solved and the policy replicated (the
    /// policy's cost over the replication relaxation's bound); against the migration-only
    /// optimum with the machine's frame limits when they bind and the policy never
    /// replicated (over the capacity relaxation's bound).
    pub fn regret_at_most(&self) -> Option<f64> {
        if self.policy_replicated {
            return self
                .replication
                .is_none()
                .then(|| self.policy.total() as f64 / self.replication_bound.max(1) as f64);
        }
        self.capacity
            .as_ref()
            .filter(|c| !c.unlimited_fits)
            .map(|c| self.policy.total() as f64 / c.bound.max(1) as f64)
    }

    /// Whether the machine's frame limits may bind on this trace: a node holds fewer
    /// frames than the pages referenced and the optimum without limits keeps more pages
    /// on it than its frames on average over the run (or that was not checked). The
    /// unlimited optima are then only lower bounds. (A schedule that overfills a node for
    /// part of the run only is not detected: the check is on the aggregate.)
    pub fn capacity_binds(&self) -> bool {
        self.capacity.as_ref().is_some_and(|c| !c.unlimited_fits) || self.capacity_refused.is_some()
    }

    /// Reference runs solved per wall-clock second.
    pub fn runs_per_second(&self) -> f64 {
        self.records as f64 / self.seconds.max(1e-9)
    }

    /// Words (references) solved per wall-clock second.
    pub fn refs_per_second(&self) -> f64 {
        self.footer.words as f64 / self.seconds.max(1e-9)
    }
}

/// Which models to solve.
#[derive(Clone, Copy, Debug)]
pub struct SolveOptions {
    /// Solve the replication model too (when the machine has at most
    /// [`MAX_REPLICATION_NODES`] nodes).
    pub replication: bool,
    /// Copy-set updates the replication programme may make in all before it is given
    /// up (with a message saying so): its work grows as T·2^n in the worst case.
    pub replication_budget: u64,
    /// The search of the capacity relaxation, where a node's frames are fewer than the
    /// pages referenced.
    pub capacity: CapacityOptions,
}

/// Default [`SolveOptions::replication_budget`]: about two minutes on two cores.
pub const DEFAULT_REPLICATION_BUDGET: u64 = 2_000_000_000;

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            replication: true,
            replication_budget: DEFAULT_REPLICATION_BUDGET,
            capacity: CapacityOptions::default(),
        }
    }
}

#[derive(Clone)]
struct PageSt {
    /// Runs of one node and kind merged until another comes (see [`crate::dp::merge`]).
    pending: Option<Run>,
    mig: MigrationDp,
    bound: ReplicationBound,
    rep: Option<ReplicationDp>,
    policy_refs: u64,
    runs: u64,
    words: u64,
}

struct Shard {
    pages: Vec<Option<PageSt>>,
    scratch: Option<Scratch>,
}

/// Advances a page's programmes by one (merged) run.
fn advance(
    st: &mut PageSt,
    model: &CostModel,
    run: Run,
    scratch: &mut Option<Scratch>,
    spent: &AtomicU64,
    budget: u64,
) {
    st.mig.step(model, run);
    st.bound.step(model, run);
    if let Some(rep) = st.rep.as_mut() {
        if spent.load(Ordering::Relaxed) > budget {
            st.rep = None;
            return;
        }
        let s = scratch.get_or_insert_with(|| Scratch::new(model.nodes));
        let before = rep.work;
        rep.step(model, run, s);
        spent.fetch_add(rep.work - before, Ordering::Relaxed);
    }
}

/// The policy's per-word price of a recorded run (as the simulator charged it).
fn policy_price(m: &CostModel, r: &Record) -> u64 {
    let (a, t) = (r.node as usize, r.target as usize);
    match (r.cached, m.cached_read) {
        (true, Some(c)) => c,
        _ if r.write => m.write(a, t),
        _ => m.read(a, t),
    }
}

/// The policy's movement cost on a page, from its counts.
pub fn policy_moves(m: &CostModel, p: &PageMoves) -> Cost {
    Cost {
        refs: 0,
        moves: m
            .migrate
            .saturating_mul(p.migrations)
            .saturating_add(m.replicate.saturating_mul(p.replications)),
        coherency: m
            .coherency_fixed
            .saturating_mul(p.coherency_faults)
            .saturating_add(m.coherency_per_copy.saturating_mul(p.copies_dropped)),
    }
}

/// Solves the trace at `path`.
pub fn solve(path: &Path, opts: SolveOptions) -> Result<Solution, OracleError> {
    let mut reader = TraceReader::open(path).map_err(OracleError::io(path))?;
    let machine = Machine::new(reader.header.machine.clone()).map_err(SimError::from)?;
    let model = CostModel::of(&machine);
    let n = model.nodes;
    let (mut replication, mut refused) = if !opts.replication {
        (false, Some("not asked for".to_string()))
    } else if n > MAX_REPLICATION_NODES {
        (
            false,
            Some(format!(
                "the machine has {n} nodes; the replication model's O(T·2^n) programme is solved for at most {MAX_REPLICATION_NODES}, so only the migration-only optimum is given (a lower bound only for policies that never replicate)"
            )),
        )
    } else {
        (true, None)
    };
    let nshards = (rayon::current_num_threads() * 4).max(1);
    let mut shards: Vec<Shard> = (0..nshards)
        .map(|_| Shard {
            pages: Vec::new(),
            scratch: None,
        })
        .collect();
    let mut buckets: Vec<Vec<Record>> = vec![Vec::new(); nshards];
    let mut chunk: Vec<Record> = Vec::with_capacity(CHUNK_RECORDS + crate::trace::BLOCK_RECORDS);
    let started = Instant::now();
    let mut records = 0u64;
    let mut last_time = 0u64;
    let mut state_bytes = 0u64;
    // Copy-set updates of the replication programme so far, over all shards: past the
    // budget every page stops advancing it (the total only grows, so whether it is given
    // up does not depend on the order the shards ran in).
    let spent = AtomicU64::new(0);
    let budget = opts.replication_budget;
    loop {
        chunk.clear();
        let mut more = true;
        while chunk.len() < CHUNK_RECORDS {
            if !reader
                .next_block(&mut chunk)
                .map_err(OracleError::io(path))?
            {
                more = false;
                break;
            }
        }
        records += chunk.len() as u64;
        for b in buckets.iter_mut() {
            b.clear();
        }
        for r in &chunk {
            buckets[r.page as usize % nshards].push(*r);
            last_time = last_time.max(r.time);
        }
        let model = &model;
        let spent = &spent;
        let held: u64 = shards
            .par_iter_mut()
            .zip(buckets.par_iter())
            .map(|(shard, recs)| {
                for r in recs {
                    let local = r.page as usize / nshards;
                    if shard.pages.len() <= local {
                        shard.pages.resize(local + 1, None);
                    }
                    let st = shard.pages[local].get_or_insert_with(|| PageSt {
                        pending: None,
                        mig: MigrationDp::new(n),
                        bound: ReplicationBound::new(n),
                        rep: replication.then(|| ReplicationDp::new(n)),
                        policy_refs: 0,
                        runs: 0,
                        words: 0,
                    });
                    let run = Run {
                        node: r.node,
                        write: r.write,
                        count: r.count,
                    };
                    let folded = st
                        .pending
                        .as_mut()
                        .is_some_and(|p| crate::dp::merge(p, run));
                    if !folded {
                        if let Some(p) = st.pending.replace(run) {
                            advance(st, model, p, &mut shard.scratch, spent, budget);
                        }
                    }
                    st.policy_refs = st
                        .policy_refs
                        .saturating_add((r.count as u64).saturating_mul(policy_price(model, r)));
                    st.runs += 1;
                    st.words += r.count as u64;
                }
                shard
                    .pages
                    .iter()
                    .flatten()
                    .map(|p| {
                        (p.mig.bytes()
                            + p.bound.bytes()
                            + p.rep.as_ref().map_or(0, |r| r.bytes())
                            + 64) as u64
                    })
                    .sum::<u64>()
                    + shard.scratch.as_ref().map_or(0, |_| (4u64 << n) + 1024)
            })
            .sum();
        let chunk_bytes = (chunk.len() * std::mem::size_of::<Record>()) as u64 * 2;
        state_bytes = state_bytes.max(held + chunk_bytes);
        if !more {
            break;
        }
        if replication {
            let work = spent.load(Ordering::Relaxed);
            if work > opts.replication_budget {
                replication = false;
                refused = Some(format!(
                    "given up after {work} copy-set updates over the first {records} runs (budget {}): the pages' reachable copy sets are too many for this trace; solve fewer nodes or a shorter run, or raise --replication-budget",
                    opts.replication_budget
                ));
                for p in shards.iter_mut().flat_map(|s| s.pages.iter_mut().flatten()) {
                    p.rep = None;
                }
            }
        }
    }
    if replication && spent.load(Ordering::Relaxed) > opts.replication_budget {
        replication = false;
        refused = Some(format!(
            "given up after {} copy-set updates (budget {}): the pages' reachable copy sets are too many for this trace; solve fewer nodes or a shorter run, or raise --replication-budget",
            spent.load(Ordering::Relaxed),
            opts.replication_budget
        ));
    }
    // The runs still pending.
    for shard in shards.iter_mut() {
        let scratch = &mut shard.scratch;
        for st in shard.pages.iter_mut().flatten() {
            if let Some(p) = st.pending.take() {
                advance(st, &model, p, scratch, &spent, budget);
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let footer = reader.footer.clone();
    let mut pages = Vec::new();
    let mut total_policy = Cost::default();
    let mut total_mig = Cost::default();
    let mut total_rep = Cost::default();
    let mut policy_replicated = false;
    let mut total_bound = 0u64;
    // Pages in page order, whatever shard they were in.
    let max_local = shards.iter().map(|s| s.pages.len()).max().unwrap_or(0);
    for local in 0..max_local {
        for (si, shard) in shards.iter().enumerate() {
            let Some(Some(st)) = shard.pages.get(local) else {
                continue;
            };
            let vpn = (local * nshards + si) as u32;
            let moves = footer
                .pages
                .get(vpn as usize)
                .map(|p| {
                    policy_replicated |= p.replications > 0;
                    policy_moves(&model, p)
                })
                .unwrap_or_default();
            let policy = Cost {
                refs: st.policy_refs,
                ..moves
            };
            let pr = PageResult {
                vpn,
                runs: st.runs,
                words: st.words,
                policy,
                migration: st.mig.optimum(),
                replication: st.rep.as_ref().map(|r| r.optimum()),
                peak_states: st.rep.as_ref().map_or(0, |r| r.peak_states as u32),
                replication_bound: st.bound.bound(),
            };
            total_bound = total_bound.saturating_add(pr.replication_bound);
            total_policy = total_policy + pr.policy;
            total_mig = total_mig + pr.migration;
            if let Some(r) = &pr.replication {
                total_rep = total_rep + *r;
            }
            pages.push(pr);
        }
    }
    // Movements on pages never referenced (a daemon moving an idle page) still count.
    for (vpn, p) in footer.pages.iter().enumerate() {
        if pages
            .binary_search_by_key(&(vpn as u32), |r| r.vpn)
            .is_err()
        {
            let c = policy_moves(&model, p);
            policy_replicated |= p.replications > 0;
            total_policy = total_policy + c;
        }
    }
    let frames: Vec<u64> = (0..n)
        .map(|x| machine.frames(numaplace_core::NodeId(x as u16)) as u64)
        .collect();
    let (capacity, capacity_refused) = match capacity_bound(
        path,
        &model,
        &frames,
        pages.len() as u64,
        footer.words,
        last_time,
        opts.capacity,
    )? {
        Capacity::NotLimited => (None, None),
        Capacity::Refused(why) => (None, Some(why)),
        Capacity::Bound(mut b) => {
            // The relaxation at λ = 0 is the unlimited optimum, which the programme
            // above has as an exact integer; the floating-point sums only approach it.
            b.unlimited = total_mig.total();
            b.bound = b.bound.max(b.unlimited);
            (Some(b), None)
        }
    };
    Ok(Solution {
        header: reader.header,
        footer,
        model,
        pages,
        policy: total_policy,
        migration: total_mig,
        replication: replication.then_some(total_rep),
        replication_refused: refused,
        replication_bound: total_bound,
        policy_replicated,
        capacity,
        capacity_refused,
        records,
        seconds,
        state_bytes,
    })
}
