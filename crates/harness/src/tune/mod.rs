//! Automatic tuning of a policy's parameters: a search over the space the policy declares
//! ([`numaplace_core::tune`]), noise-aware, with its budget counted in simulation runs.
//!
//! A candidate is a value per dimension. Candidates are compared on repeated seeded
//! trials: trial `j` of every candidate runs with the same seed, so two candidates differ
//! by their setting and not by the draws of the machine's run-to-run variation (common
//! random numbers), and a candidate's score is the mean of its trials. Three methods:
//!
//! - `random`: `budget / trials` candidates drawn from the space, each run `trials`
//!   times; the lowest mean wins. The baseline.
//! - `halving`: successive halving over random search. As many random candidates as a
//!   full schedule fits in the budget run `trials` times each; then repeatedly the best
//!   third (`eta` = 3) is kept and run until it has three times the trials, until one is
//!   left.
//! - `tpe` (the default): the policy's defaults first (when given: [`Options::defaults`]),
//!   then [`startup`] random candidates, then batches of [`BATCH`] mixing three kinds of
//!   proposal: a tree-structured Parzen estimator's (the `tpe` crate: per parameter, one
//!   estimator over its arm, the numeric range or one of its special values, and one over
//!   its position in the range, told only when the range was taken), local moves from
//!   the best candidates ([`LOCAL_SHARE`]: one or two parameters moved, which a
//!   per-parameter model cannot do for parameters that matter together) and random draws
//!   ([`EXPLORE_SHARE`]). Each runs `trials` times. Plateaus: a candidate whose every
//!   trial repeats an earlier candidate's result is told to the model as among the worst
//!   (it found nothing new), a proposal whose values a candidate already has is asked
//!   again, and after a batch in which most of the model's proposals repeated known
//!   results the model's slots of the next batch are drawn at random. The last part of
//!   the budget ([`RACE_SHARE`]) is a race: successive halving over the best candidates
//!   found, one per distinct result, so the winner is chosen on more trials than it was
//!   found with.
//! - `random-race`: `tpe` without its model, the control that isolates what the proposals
//!   are worth: the defaults first, then random candidates only, as many as `tpe` explores
//!   with the same budget (the first of them the same as `tpe`'s startup draws, in the
//!   same order), then the same race as wide. Against it, a difference between the two
//!   winners comes from the proposals alone, not from a start at the defaults or from
//!   a winner chosen on more trials.
//!
//! Determinism: proposals are drawn on one thread from generators seeded by the tuner's
//! seed; the runs of a batch go in parallel (rayon) and are collected in the batch's
//! order; so the same seed gives the same candidates, runs and winner whatever the
//! number of threads.

pub mod robust;
pub mod sim;

use numaplace_core::tune::{Arm, Scale, Space, Value};
use rand::SeedableRng as _;
use rayon::prelude::*;
use std::fmt;
use std::str::FromStr;

/// How candidates are proposed and chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// The defaults, random candidates, then TPE proposals, local moves and random
    /// draws; a successive-halving race among the best.
    Tpe,
    /// Successive halving over random candidates.
    Halving,
    /// Random candidates, each run the same number of times.
    Random,
    /// The defaults, random candidates and the race of `tpe`, without its proposals.
    RandomRace,
}

impl Method {
    /// Every method's name.
    pub const NAMES: [&'static str; 4] = ["tpe", "halving", "random", "random-race"];

    /// The method's name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Tpe => "tpe",
            Method::Halving => "halving",
            Method::Random => "random",
            Method::RandomRace => "random-race",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> Result<Method, String> {
        match s {
            "tpe" => Ok(Method::Tpe),
            "halving" => Ok(Method::Halving),
            "random" => Ok(Method::Random),
            "random-race" => Ok(Method::RandomRace),
            _ => Err(format!(
                "unknown method `{s}`; known: {}",
                Method::NAMES.join(", ")
            )),
        }
    }
}

/// Candidates the TPE method proposes at a time (runs of a batch go in parallel).
pub const BATCH: usize = 8;
/// Kept share at each rung of successive halving is 1/ETA; survivors get ETA times the
/// trials.
pub const ETA: usize = 3;
/// Share of the TPE method's budget kept for the final race.
pub const RACE_SHARE: f64 = 0.2;
/// TPE's split between good and bad candidates (the best `GAMMA` share are good; the
/// crate's default).
pub const GAMMA: f64 = 0.1;

/// Random candidates before TPE proposes: a quarter of those the budget allows, at least
/// ten.
pub fn startup(candidates: usize) -> usize {
    (candidates / 4).max(10)
}

/// Share of each later batch of the TPE method drawn at random rather than proposed by
/// the model (at least one a batch), so that a model settled on one region does not stop
/// the search from looking elsewhere.
pub const EXPLORE_SHARE: f64 = 0.25;

/// Share of each later batch of the TPE method that are local moves: one of the best
/// candidates found with one or two parameters drawn again. The model is per parameter
/// and cannot see that two parameters matter together; a local move keeps what a good
/// candidate has found in all but the parameters it changes.
pub const LOCAL_SHARE: f64 = 0.375;

/// Local moves start from one of this many best candidates (of distinct results).
pub const LOCAL_PARENTS: usize = 3;

/// Proposals the TPE model may make for one slot before a random draw takes it: a
/// proposal whose values a candidate already has is asked again.
pub const PROPOSAL_TRIES: usize = 8;

/// What a tuning run does.
#[derive(Clone, Debug)]
pub struct Options {
    /// The method.
    pub method: Method,
    /// Simulation runs (objective evaluations) it may use.
    pub budget: u64,
    /// Trials (seeds) a candidate first runs; survivors of a race get more.
    pub trials: u32,
    /// Seed of the proposals.
    pub seed: u64,
    /// The policy's own setting (its values in the space's order): the `tpe` and
    /// `random-race` methods evaluate it as their first candidate, so their winners have
    /// been compared with it. The other methods ignore it.
    pub defaults: Option<Vec<Value>>,
}

/// A candidate setting.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// Its number, in order of proposal.
    pub id: usize,
    /// Its arm per dimension.
    pub arms: Vec<Arm>,
    /// Its value per dimension.
    pub values: Vec<Value>,
    /// Who proposed it: `default` (the policy's own setting), `random`, `tpe` (the model)
    /// or `local` (a local move from a good candidate).
    pub origin: &'static str,
    /// Its objective per trial, in trial order (infinite for a failed run).
    pub results: Vec<f64>,
}

impl Candidate {
    /// The mean of its trials (infinite if any failed, NaN without trials).
    pub fn mean(&self) -> f64 {
        if self.results.is_empty() {
            return f64::NAN;
        }
        self.results.iter().sum::<f64>() / self.results.len() as f64
    }
}

/// One run: which candidate, which trial, what it gave.
#[derive(Clone, Debug, PartialEq)]
pub struct Eval {
    /// Runs used once this one is counted (1 for the first).
    pub run: u64,
    /// The candidate.
    pub candidate: usize,
    /// The trial (seed index).
    pub trial: u32,
    /// The objective, or why the run failed.
    pub result: Result<f64, String>,
}

/// What evaluates a candidate: one run of `values` at trial `trial`. Called from several
/// threads at once.
pub trait Objective: Sync {
    /// The objective (lower is better) of one run.
    fn eval(&self, values: &[Value], trial: u32) -> Result<f64, String>;
}

impl<F> Objective for F
where
    F: Fn(&[Value], u32) -> Result<f64, String> + Sync,
{
    fn eval(&self, values: &[Value], trial: u32) -> Result<f64, String> {
        self(values, trial)
    }
}

/// Told of the search as it goes, on the calling thread, in a fixed order.
pub trait Observer {
    /// A batch of runs finished: the candidates (all so far), the new runs, and the
    /// incumbent after them.
    fn batch(&mut self, candidates: &[Candidate], evals: &[Eval], incumbent: Option<usize>) {
        let _ = (candidates, evals, incumbent);
    }
}

/// An observer that does nothing.
pub struct Quiet;
impl Observer for Quiet {}

/// The result of a tuning run.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Every candidate, in order of proposal.
    pub candidates: Vec<Candidate>,
    /// Every run, in order.
    pub evals: Vec<Eval>,
    /// The winner.
    pub best: Option<usize>,
    /// (runs used, the incumbent's mean) after each batch.
    pub trace: Vec<(u64, f64)>,
}

impl Outcome {
    /// Runs used.
    pub fn runs(&self) -> u64 {
        self.evals.len() as u64
    }
}

/// The candidate that would win now: the lowest mean among the candidates with the most
/// trials (ties to the earlier candidate).
fn incumbent(cands: &[Candidate]) -> Option<usize> {
    let most = cands.iter().map(|c| c.results.len()).max()?;
    if most == 0 {
        return None;
    }
    cands
        .iter()
        .filter(|c| c.results.len() == most)
        .min_by(|a, b| a.mean().total_cmp(&b.mean()).then(a.id.cmp(&b.id)))
        .map(|c| c.id)
}

struct Search<'a, O: Objective, W: Observer> {
    space: &'a Space,
    objective: &'a O,
    observer: &'a mut W,
    budget: u64,
    candidates: Vec<Candidate>,
    evals: Vec<Eval>,
    trace: Vec<(u64, f64)>,
}

impl<O: Objective, W: Observer> Search<'_, O, W> {
    fn left(&self) -> u64 {
        self.budget.saturating_sub(self.evals.len() as u64)
    }

    fn add(&mut self, arms: Vec<Arm>, origin: &'static str) -> usize {
        let values = self.space.values(&arms);
        self.add_values(arms, values, origin)
    }

    /// Adds a candidate of given values (`arms` are what the model learns them as).
    fn add_values(&mut self, arms: Vec<Arm>, values: Vec<Value>, origin: &'static str) -> usize {
        let id = self.candidates.len();
        self.candidates.push(Candidate {
            id,
            arms,
            values,
            origin,
            results: Vec::new(),
        });
        id
    }

    /// Runs `jobs` (candidate, trial), at most what the budget has left, in parallel;
    /// records them in the order given.
    fn run(&mut self, mut jobs: Vec<(usize, u32)>) {
        jobs.truncate(self.left().min(usize::MAX as u64) as usize);
        if jobs.is_empty() {
            return;
        }
        let objective = self.objective;
        let cands = &self.candidates;
        let results: Vec<Result<f64, String>> = jobs
            .par_iter()
            .map(|&(c, t)| objective.eval(&cands[c].values, t))
            .collect();
        let first = self.evals.len();
        for (&(c, t), r) in jobs.iter().zip(results) {
            let v = match &r {
                Ok(v) if v.is_finite() => *v,
                _ => f64::INFINITY,
            };
            let cand = &mut self.candidates[c];
            debug_assert_eq!(cand.results.len(), t as usize);
            cand.results.push(v);
            self.evals.push(Eval {
                run: self.evals.len() as u64 + 1,
                candidate: c,
                trial: t,
                result: r,
            });
        }
        let inc = incumbent(&self.candidates);
        if let Some(i) = inc {
            self.trace
                .push((self.evals.len() as u64, self.candidates[i].mean()));
        }
        self.observer
            .batch(&self.candidates, &self.evals[first..], inc);
    }

    /// Runs each of `ids` up to `trials` trials.
    fn top_up(&mut self, ids: &[usize], trials: u32) {
        let jobs = ids
            .iter()
            .flat_map(|&c| (self.candidates[c].results.len() as u32..trials).map(move |t| (c, t)))
            .collect();
        self.run(jobs);
    }

    /// Successive halving over `pool`, whose candidates have `trials` trials each: keep
    /// the best 1/ETA, run them to ETA times the trials, until one is left or the budget
    /// cannot give every survivor another trial.
    fn halve(&mut self, mut pool: Vec<usize>, mut trials: u32) {
        loop {
            pool.sort_by(|&a, &b| {
                let (ca, cb) = (&self.candidates[a], &self.candidates[b]);
                ca.mean().total_cmp(&cb.mean()).then(a.cmp(&b))
            });
            let keep = pool.len().div_ceil(ETA);
            if keep == 1 && pool.len() > 1 {
                // The last choice: whatever the budget has left goes to the finalists
                // first, so the winner is chosen on as many trials as it allows.
                let extra = (self.left() / pool.len() as u64).min(u32::MAX as u64) as u32;
                if extra > 0 {
                    trials = trials.saturating_add(extra);
                    self.top_up(&pool, trials);
                    continue;
                }
            }
            if keep == pool.len() {
                return;
            }
            pool.truncate(keep);
            if keep == 1 {
                return;
            }
            // Survivors get ETA times the trials, or as many more as the budget allows.
            let want = trials.saturating_mul(ETA as u32);
            let affordable = trials as u64 + self.left() / keep as u64;
            let next = (want as u64).min(affordable) as u32;
            if next <= trials {
                return;
            }
            self.top_up(&pool, next);
            trials = next;
        }
    }
}

/// Runs of successive halving from `n` candidates at `trials` trials each, the first
/// rung included.
pub fn halving_cost(n: usize, trials: u32) -> u64 {
    let mut cost = n as u64 * trials as u64;
    let (mut alive, mut t) = (n, trials as u64);
    loop {
        let keep = alive.div_ceil(ETA);
        if keep == alive || keep == 1 {
            return cost;
        }
        cost += keep as u64 * (t * ETA as u64 - t);
        alive = keep;
        t *= ETA as u64;
    }
}

/// The most candidates a full successive-halving schedule at `trials` fits in `budget`.
pub fn halving_width(budget: u64, trials: u32) -> usize {
    // The cost is not monotone in the width (a rung more or less), so every width the
    // budget could start is tried.
    let most = (budget / trials.max(1) as u64).min(1 << 20) as usize;
    (1..=most)
        .rev()
        .find(|&n| halving_cost(n, trials) <= budget)
        .unwrap_or(0)
}

/// Why a tuning run cannot start.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TuneError {
    /// The space has no dimension.
    #[error("the policy has no parameter to tune (every one fixed, or none declared)")]
    EmptySpace,
    /// The budget is below one candidate's trials.
    #[error("--budget {budget} is less than one candidate's --trials {trials}")]
    Budget {
        /// The budget.
        budget: u64,
        /// The trials.
        trials: u32,
    },
}

/// Per-dimension TPE state: an estimator over the arm (range or special), when the
/// dimension has specials, and one over the position in the range (categories for a
/// small integer range).
struct DimModel {
    arm: Option<tpe::TpeOptimizer>,
    position: tpe::TpeOptimizer,
    /// Values of a small integer range, modelled as categories; 0: a continuous range.
    levels: usize,
}

fn optimizer(categories: usize) -> tpe::TpeOptimizer {
    let mut b = tpe::TpeOptimizerBuilder::new();
    b.gamma(GAMMA);
    let built = if categories > 0 {
        tpe::categorical_range(categories).map(|r| b.build(tpe::histogram_estimator(), r))
    } else {
        tpe::range(0.0, 1.0).map(|r| b.build(tpe::parzen_estimator(), r))
    };
    built
        .expect("a non-empty range")
        .expect("gamma within 0..=1 and candidates > 0")
}

impl DimModel {
    fn new(d: &numaplace_core::tune::Dim) -> DimModel {
        let span = d.hi - d.lo + 1.0;
        let levels = if d.integer && d.scale == Scale::Linear && span <= 16.0 {
            span as usize
        } else {
            0
        };
        DimModel {
            arm: (!d.specials.is_empty()).then(|| optimizer(d.specials.len() + 1)),
            position: optimizer(levels),
            levels,
        }
    }

    fn ask(&mut self, rng: &mut rand010::rngs::StdRng) -> Arm {
        let arm = match &mut self.arm {
            Some(o) => o.ask(rng).map(|x| x as usize).unwrap_or(0),
            None => 0,
        };
        if arm > 0 {
            return Arm::Special(arm - 1);
        }
        let p = self.position.ask(rng).unwrap_or(0.5);
        if self.levels > 0 {
            Arm::Range((p.floor() + 0.5) / self.levels as f64)
        } else {
            Arm::Range(p)
        }
    }

    fn tell(&mut self, arm: Arm, value: f64) {
        // The estimators refuse NaN only; a failed run is infinitely bad.
        let value = if value.is_nan() { f64::INFINITY } else { value };
        match arm {
            Arm::Special(i) => {
                if let Some(o) = &mut self.arm {
                    let _ = o.tell((i + 1) as f64, value);
                }
            }
            Arm::Range(u) => {
                if let Some(o) = &mut self.arm {
                    let _ = o.tell(0.0, value);
                }
                let p = if self.levels > 0 {
                    ((u * self.levels as f64).floor()).min(self.levels as f64 - 1.0)
                } else {
                    u.clamp(0.0, 1.0 - f64::EPSILON)
                };
                let _ = self.position.tell(p, value);
            }
        }
    }
}

/// What the model is told of candidate `id`: its mean, or infinity (among the worst) if
/// every trial repeats an earlier candidate's result: it found nothing new, and the model
/// should not crowd a plateau it has already seen.
fn model_score(cands: &[Candidate], id: usize) -> f64 {
    if repeats(cands, id) {
        f64::INFINITY
    } else {
        cands[id].mean()
    }
}

/// Whether every trial of candidate `id` gave what an earlier candidate's gave.
fn repeats(cands: &[Candidate], id: usize) -> bool {
    cands[..id].iter().any(|o| o.results == cands[id].results)
}

/// A TPE proposal whose values no candidate in `seen` has, from at most
/// [`PROPOSAL_TRIES`] asks; none if every ask repeated one.
fn propose(
    models: &mut [DimModel],
    space: &Space,
    seen: &[Candidate],
    rng: &mut rand010::rngs::StdRng,
) -> Option<Vec<Arm>> {
    (0..PROPOSAL_TRIES).find_map(|_| {
        let arms: Vec<Arm> = models.iter_mut().map(|m| m.ask(rng)).collect();
        let values = space.values(&arms);
        (!seen.iter().any(|c| c.values == values)).then_some(arms)
    })
}

/// Standard deviation of a local move's step within a numeric range, as a share of the
/// range (on its scale).
pub const LOCAL_STEP: f64 = 0.15;

/// A local move of one parameter from `arm`: half the time (always without specials)
/// a step within the range, normal of [`LOCAL_STEP`] from the position (from a position
/// drawn uniformly if the arm is a special), else another arm than the current, each
/// alike (the range at a uniform position), so a special value is tried as often as the
/// range.
fn step<R: rand::Rng>(d: &numaplace_core::tune::Dim, arm: Arm, rng: &mut R) -> Arm {
    let in_range = d.specials.is_empty() || rng.gen_bool(0.5);
    match arm {
        Arm::Range(u) if in_range => {
            // A normal step from the sum of four uniforms (variance 4/12).
            let z: f64 =
                (0..4).map(|_| rng.gen::<f64>() - 0.5).sum::<f64>() / (1.0f64 / 3.0).sqrt();
            Arm::Range((u + LOCAL_STEP * z).clamp(0.0, 1.0))
        }
        Arm::Special(_) if in_range => Arm::Range(rng.gen()),
        _ => {
            // Arms: 0 the range, 1.. the specials; any but the current.
            let current = match arm {
                Arm::Range(_) => 0,
                Arm::Special(i) => i + 1,
            };
            let mut pick = rng.gen_range(0..d.specials.len());
            if pick >= current {
                pick += 1;
            }
            if pick == 0 {
                Arm::Range(rng.gen())
            } else {
                Arm::Special(pick - 1)
            }
        }
    }
}

/// A local move: one of `parents` (drawn uniformly) with one parameter, or two with
/// probability one half, moved by [`step`], whose values no candidate in `seen` has,
/// from at most [`PROPOSAL_TRIES`] tries; none if every try repeated one.
fn local<R: rand::Rng>(
    space: &Space,
    seen: &[Candidate],
    parents: &[usize],
    rng: &mut R,
) -> Option<Vec<Arm>> {
    (0..PROPOSAL_TRIES).find_map(|_| {
        let mut arms = seen[parents[rng.gen_range(0..parents.len())]].arms.clone();
        let n = arms.len();
        let first = rng.gen_range(0..n);
        let mut moved = vec![first];
        if n > 1 && rng.gen_bool(0.5) {
            let second = (first + rng.gen_range(1..n)) % n;
            moved.push(second);
        }
        for d in moved {
            arms[d] = step(&space.dims[d], arms[d], rng);
        }
        let values = space.values(&arms);
        (!seen.iter().any(|c| c.values == values)).then_some(arms)
    })
}

/// The race's entrants: the `width` candidates of lowest mean among those with `trials`
/// trials, one per distinct result (candidates whose every trial gave the same objective
/// behave alike on these seeds: the first of them stands for all).
fn finalists(cands: &[Candidate], trials: u32, width: usize) -> Vec<usize> {
    let mut pool: Vec<usize> = cands
        .iter()
        .filter(|c| c.results.len() == trials as usize)
        .map(|c| c.id)
        .collect();
    pool.sort_by(|&a, &b| cands[a].mean().total_cmp(&cands[b].mean()).then(a.cmp(&b)));
    let mut out: Vec<usize> = Vec::with_capacity(width);
    for id in pool {
        if out.len() == width {
            break;
        }
        if !out.iter().any(|&o| cands[o].results == cands[id].results) {
            out.push(id);
        }
    }
    out
}

/// Tunes: proposes candidates from `space` by `opts.method`, runs them through
/// `objective` within `opts.budget` runs, and returns every candidate and run with the
/// winner. `observer` hears each batch as it finishes.
pub fn tune<O: Objective, W: Observer>(
    space: &Space,
    objective: &O,
    opts: &Options,
    observer: &mut W,
) -> Result<Outcome, TuneError> {
    if space.dims.is_empty() {
        return Err(TuneError::EmptySpace);
    }
    let trials = opts.trials.max(1);
    if opts.budget < trials as u64 {
        return Err(TuneError::Budget {
            budget: opts.budget,
            trials,
        });
    }
    let mut s = Search {
        space,
        objective,
        observer,
        budget: opts.budget,
        candidates: Vec::new(),
        evals: Vec::new(),
        trace: Vec::new(),
    };
    // Random draws (rand 0.8, as the core samples) and TPE's (the crate's rand) come from
    // two generators seeded from the one seed.
    let mut rng = rand_pcg::Pcg64::seed_from_u64(opts.seed);
    let mut tpe_rng = <rand010::rngs::StdRng as rand010::SeedableRng>::seed_from_u64(
        opts.seed ^ 0x7470_655f_7475_6e65,
    );
    // Local moves draw from a third generator, so the random candidates of the `tpe`
    // method stay those of the `random` method with the same seed, in the same order.
    let mut local_rng = rand_pcg::Pcg64::seed_from_u64(opts.seed ^ 0x6c6f_6361_6c5f_6d76);
    match opts.method {
        Method::Random => {
            let n = (opts.budget / trials as u64) as usize;
            let ids: Vec<usize> = (0..n)
                .map(|_| s.add(space.draw(&mut rng), "random"))
                .collect();
            // Batches of BATCH candidates, so progress and the trace come as they go.
            for chunk in ids.chunks(BATCH) {
                s.top_up(chunk, trials);
            }
        }
        Method::Halving => {
            let n = halving_width(opts.budget, trials).max(1);
            let ids: Vec<usize> = (0..n)
                .map(|_| s.add(space.draw(&mut rng), "random"))
                .collect();
            for chunk in ids.chunks(BATCH) {
                s.top_up(chunk, trials);
            }
            s.halve(ids, trials);
        }
        Method::Tpe | Method::RandomRace => {
            // Proposals after the random start (tpe), or none (its control).
            let model = opts.method == Method::Tpe;
            // The race: successive halving over the best `width` candidates found, as
            // wide as RACE_SHARE of the budget allows.
            let race_budget = (opts.budget as f64 * RACE_SHARE) as u64;
            let race_cost = |w: usize| halving_cost(w, trials) - w as u64 * trials as u64;
            let mut width = 1;
            while race_cost(width + 1) <= race_budget && width < 1 << 20 {
                width += 1;
            }
            let explore = ((opts.budget - race_cost(width)) / trials as u64).max(1) as usize;
            let width = width.min(explore);
            let defaults = opts
                .defaults
                .as_ref()
                .filter(|d| d.len() == space.dims.len());
            // The defaults, then `first` random candidates, then batches of TPE
            // proposals with a share of random ones.
            let first = startup(explore).min(explore) + usize::from(defaults.is_some());
            let mut models: Vec<DimModel> = space.dims.iter().map(DimModel::new).collect();
            let mut made = 0;
            // Whether most of the model's proposals in the last batch repeated known
            // results (landed on plateaus already seen).
            let mut plateau = false;
            while made < explore && s.left() >= trials as u64 {
                let n = BATCH.min(explore - made);
                let mut ids = Vec::with_capacity(n);
                // A batch past the start: the model's slots, then local moves, then
                // random draws; after a batch whose proposals mostly repeated known
                // results, the model's slots are drawn at random too.
                let random_slots = ((n as f64 * EXPLORE_SHARE).round() as usize).min(n);
                let local_slots = ((n as f64 * LOCAL_SHARE).round() as usize).min(n - random_slots);
                let model_slots = n - random_slots - local_slots;
                let parents = finalists(&s.candidates, trials, LOCAL_PARENTS);
                for slot in 0..n {
                    let local_slot = (model_slots..model_slots + local_slots).contains(&slot);
                    let id = if made == 0 && defaults.is_some() {
                        let d = defaults.cloned().unwrap_or_default();
                        s.add_values(space.arms_of(&d), d, "default")
                    } else if !model
                        || made < first
                        || slot >= model_slots + local_slots
                        || (plateau && !local_slot)
                    {
                        s.add(space.draw(&mut rng), "random")
                    } else if local_slot && !parents.is_empty() {
                        match local(space, &s.candidates, &parents, &mut local_rng) {
                            Some(arms) => s.add(arms, "local"),
                            None => s.add(space.draw(&mut rng), "random"),
                        }
                    } else {
                        match propose(&mut models, space, &s.candidates, &mut tpe_rng) {
                            Some(arms) => s.add(arms, "tpe"),
                            None => s.add(space.draw(&mut rng), "random"),
                        }
                    };
                    ids.push(id);
                    made += 1;
                }
                s.top_up(&ids, trials);
                if !model {
                    // Nothing to tell: the control draws every candidate at random.
                    continue;
                }
                let (mut proposed, mut repeated) = (0, 0);
                for &id in &ids {
                    let c = &s.candidates[id];
                    if c.results.len() < trials as usize {
                        continue;
                    }
                    let repeat = repeats(&s.candidates, id);
                    let score = model_score(&s.candidates, id);
                    if c.origin == "tpe" {
                        proposed += 1;
                        repeated += usize::from(repeat);
                    }
                    for (m, &a) in models.iter_mut().zip(&c.arms) {
                        m.tell(a, score);
                    }
                }
                plateau = proposed > 0 && 2 * repeated >= proposed;
            }
            let pool = finalists(&s.candidates, trials, width.max(1));
            s.halve(pool, trials);
        }
    }
    let best = incumbent(&s.candidates);
    Ok(Outcome {
        candidates: s.candidates,
        evals: s.evals,
        best,
        trace: s.trace,
    })
}

#[cfg(test)]
mod tests;
