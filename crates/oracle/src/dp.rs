//! The exact per-page solvers: dynamic programmes over a page's reference runs.
//!
//! A page's runs are independent of every other page's in both models (no capacity
//! limit couples them; [`crate::capacity`] bounds the optimum where one does), so each
//! page is solved on its own, online: the solvers take one run at a time and keep only
//! the current layer of the programme.
//!
//! **Migration only** ([`MigrationDp`]): the state is the page's home node. Before each
//! run the page may move (price `migrate`, the same between any two nodes in this
//! machine model); the run costs `count` × the per-word price from the reader's node to
//! the home. Layer update: `D'[x] = min(D[x], min_y D[y] + migrate) + count·price(a, x)`,
//! O(n) per run, O(T·n) per page of T runs, with a distance matrix too (prices by
//! distance change only the per-run term). Memory O(n) per page.
//!
//! **Migration + replication, write-invalidate** ([`ReplicationDp`], the PLATINUM/DUnX
//! model): the state is the set S of nodes holding a copy. Between runs any sequence of
//! these actions: replicate onto a node (`replicate`), move a single copy (`migrate`),
//! collapse to one of the copies (a coherency fault: `fixed + per_copy·(|S|-1)`). A read
//! by `a` costs `count` × the cheapest copy's price ([`CostModel::read_from`]); a write
//! needs a single copy. The layer is over subsets: O(2^n) states, O(T·2^n·n) time in the
//! worst case, so it refuses machines above [`MAX_REPLICATION_NODES`] nodes. It keeps
//! only reachable states and drops two kinds of states that cannot lead to a better
//! schedule: a state dearer than the cheapest one plus the price of turning the cheapest
//! into it (`collapse + migrate + replicate·(|S|-1)`), and a state S\{x} dearer than S
//! plus what holding the extra copy can ever cost (`per_copy`, plus the coherency fixed
//! part when S\{x} is a single copy). Transitions are normalised without loss: before
//! each run the page may go to a single copy (collapse, then migrate, or replicate onto
//! a new node and collapse onto it) and then gain copies; copies other than the
//! reader's are deferred to their own reads, except on distance-matrix or caching
//! machines, where a copy elsewhere can make this read cheaper and every node is tried.
//!
//! **Traceback** ([`ReplicationDp::step_traced`], [`replication_schedule`]): the same
//! step, compiled a second time with bookkeeping (a const parameter, so the plain
//! solver is untouched), records per step how each state was reached ([`Origin`]: the
//! set before, the way to a single copy, the copy added), leaving out states that were
//! the same set before with nothing done. Walking back from the cheapest final state
//! gives the page's first copy and the normalised actions before each run
//! ([`CopySchedule`]), whose price in the model ([`price_copy_schedule`]) is the
//! optimum's.
//!
//! Both start from one copy on any node, free (the simulator places pages at time 0 or
//! first touch free of charge). Each state carries the parts of its cheapest schedule
//! (references, moves, coherency), so the optimum's cost comes broken down by cause.

use crate::model::CostModel;

/// Largest machine the replication solver accepts (2^16 subsets per layer).
pub const MAX_REPLICATION_NODES: usize = 16;

/// The parts of a schedule's cost (ns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cost {
    /// Reference runs, priced by where they were served.
    pub refs: u64,
    /// Migrations and replications.
    pub moves: u64,
    /// Coherency faults (collapsing copies).
    pub coherency: u64,
}

impl Cost {
    /// The whole cost.
    #[inline]
    pub fn total(&self) -> u64 {
        self.refs
            .saturating_add(self.moves)
            .saturating_add(self.coherency)
    }

    fn plus(self, refs: u64, moves: u64, coherency: u64) -> Cost {
        Cost {
            refs: self.refs.saturating_add(refs),
            moves: self.moves.saturating_add(moves),
            coherency: self.coherency.saturating_add(coherency),
        }
    }
}

impl std::ops::Add for Cost {
    type Output = Cost;
    /// The sum of two costs, part by part.
    fn add(self, o: Cost) -> Cost {
        self.plus(o.refs, o.moves, o.coherency)
    }
}

/// One reference run of a page, as the solvers see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// The reading or writing node.
    pub node: u16,
    /// Whether it writes.
    pub write: bool,
    /// Words referenced.
    pub count: u32,
}

/// The migration-only programme of one page (see the module docs).
#[derive(Clone, Debug)]
pub struct MigrationDp {
    layer: Vec<Cost>,
}

impl MigrationDp {
    /// A page not referenced yet, on any node for free.
    pub fn new(nodes: usize) -> MigrationDp {
        MigrationDp {
            layer: vec![Cost::default(); nodes],
        }
    }

    /// The cheapest home before the next run and its cost (lowest node on ties).
    fn best(&self) -> (usize, Cost) {
        let mut bi = 0;
        for (i, c) in self.layer.iter().enumerate() {
            if c.total() < self.layer[bi].total() {
                bi = i;
            }
        }
        (bi, self.layer[bi])
    }

    /// Takes one run.
    pub fn step(&mut self, m: &CostModel, r: Run) {
        let (_, best) = self.best();
        let moved = best.plus(0, m.migrate, 0);
        let a = r.node as usize;
        let c = r.count as u64;
        for (x, d) in self.layer.iter_mut().enumerate() {
            if moved.total() < d.total() {
                *d = moved;
            }
            let price = if r.write { m.write(a, x) } else { m.read(a, x) };
            *d = d.plus(c.saturating_mul(price), 0, 0);
        }
    }

    /// The optimum so far.
    pub fn optimum(&self) -> Cost {
        self.best().1
    }

    /// Bytes this page's programme holds.
    pub fn bytes(&self) -> usize {
        self.layer.capacity() * std::mem::size_of::<Cost>()
    }
}

/// Scratch space of the replication solver, one per worker (a slot per subset).
pub struct Scratch {
    slot: Vec<u32>,
    next: Vec<(u32, Cost)>,
    /// How each entry of `next` was reached (filled only by a traced step).
    origin: Vec<Origin>,
}

impl Scratch {
    /// Scratch for a machine of `nodes` nodes (at most [`MAX_REPLICATION_NODES`]).
    pub fn new(nodes: usize) -> Scratch {
        Scratch {
            slot: vec![u32::MAX; 1usize << nodes],
            next: Vec::new(),
            origin: Vec::new(),
        }
    }

    /// Offers state `set` at cost `c`, reached as `o` says (kept only when `TRACE`: the
    /// untraced solver compiles without it). Ties keep the first offer, traced or not,
    /// so both pick the same schedule.
    #[inline]
    fn offer<const TRACE: bool>(&mut self, set: u32, c: Cost, o: Origin) {
        let s = &mut self.slot[set as usize];
        if *s == u32::MAX {
            *s = self.next.len() as u32;
            self.next.push((set, c));
            if TRACE {
                self.origin.push(o);
            }
        } else {
            let i = *s as usize;
            let e = &mut self.next[i].1;
            if c.total() < e.total() {
                *e = c;
                if TRACE {
                    self.origin[i] = o;
                }
            }
        }
    }
}

/// No node: [`Origin::add`] when no copy was added, [`Origin::via`] when the page did
/// not go to a single copy first.
pub const NO_NODE: u8 = u8::MAX;

/// How the page went to a single copy before a run, in a traced step ([`Origin::via`]).
pub mod via {
    /// It did not.
    pub const NONE: u8 = 0;
    /// A collapse (coherency fault) onto the copy on [`super::Origin::single`].
    pub const COLLAPSE: u8 = 1;
    /// A collapse onto the copy on [`super::Origin::keep`], then a migration of that
    /// single copy to [`super::Origin::single`].
    pub const MIGRATE: u8 = 2;
    /// A replication onto [`super::Origin::single`] (which held no copy), then a
    /// collapse onto that new copy.
    pub const NEW: u8 = 3;
}

/// How one state of the replication programme was reached in one step: the copy set
/// before it and the normalised actions taken before the run (see the module docs).
/// Eight bytes; a traced solver keeps one per state whose origin is not "the same set,
/// nothing done".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    /// The copy set reached (before the run's own price).
    pub set: u16,
    /// The copy set before the step.
    pub prev: u16,
    /// How the page went to a single copy first ([`via`]).
    pub via: u8,
    /// For [`via::MIGRATE`]: the copy the collapse kept before the migration.
    pub keep: u8,
    /// The single copy's node, when `via` is not [`via::NONE`].
    pub single: u8,
    /// The node a copy was added on after that, or [`NO_NODE`].
    pub add: u8,
}

impl Origin {
    fn trivial(&self) -> bool {
        self.via == via::NONE && self.add == NO_NODE && self.prev == self.set
    }
}

/// The traceback record of a traced [`ReplicationDp`]: per step, the origins of the
/// states whose origin is not trivial (a state without one was the same set before the
/// step, with nothing done). Its size grows with the programme's work, so its holder
/// bounds it ([`Traceback::bytes`]).
#[derive(Clone, Debug, Default)]
pub struct Traceback {
    /// Where each step's origins end in `origins`.
    ends: Vec<usize>,
    origins: Vec<Origin>,
}

/// One action of a copy-set schedule, made before a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// A coherency fault keeping only the copy on this node.
    Collapse(u16),
    /// The single copy moves to this node.
    Migrate(u16),
    /// A copy is added on this node.
    Replicate(u16),
}

/// A page's optimal copy-set schedule: the node of its first copy and the actions made
/// before each run (by the run's index, in order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopySchedule {
    /// The node of the first copy.
    pub initial: u16,
    /// (run index, action), by run then in the order they are made.
    pub actions: Vec<(u32, Action)>,
    /// The schedule's cost in the model (the optimum's).
    pub cost: Cost,
}

impl Traceback {
    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.ends.capacity() * std::mem::size_of::<usize>()
            + self.origins.capacity() * std::mem::size_of::<Origin>()
    }

    /// The schedule that ends in copy set `last` (walking the steps backwards).
    fn walk(&self, last: u32) -> (u16, Vec<(u32, Action)>) {
        let mut set = last as u16;
        let mut actions = Vec::new();
        for t in (0..self.ends.len()).rev() {
            let from = if t == 0 { 0 } else { self.ends[t - 1] };
            let step = &self.origins[from..self.ends[t]];
            let Some(o) = step.iter().find(|o| o.set == set) else {
                continue;
            };
            // Pushed in reverse, reversed once at the end.
            let t = t as u32;
            if o.add != NO_NODE {
                actions.push((t, Action::Replicate(o.add as u16)));
            }
            match o.via {
                via::COLLAPSE if o.prev.count_ones() > 1 => {
                    actions.push((t, Action::Collapse(o.single as u16)));
                }
                via::MIGRATE => {
                    actions.push((t, Action::Migrate(o.single as u16)));
                    if o.prev.count_ones() > 1 {
                        actions.push((t, Action::Collapse(o.keep as u16)));
                    }
                }
                via::NEW => {
                    actions.push((t, Action::Collapse(o.single as u16)));
                    actions.push((t, Action::Replicate(o.single as u16)));
                }
                _ => {}
            }
            set = o.prev;
        }
        actions.reverse();
        (set.trailing_zeros() as u16, actions)
    }
}

/// The replication programme of one page: its reachable copy sets and their cheapest
/// schedules' costs (see the module docs).
#[derive(Clone, Debug)]
pub struct ReplicationDp {
    live: Vec<(u32, Cost)>,
    /// The largest number of states held at once.
    pub peak_states: usize,
    /// States updated so far (the solver's work).
    pub work: u64,
}

impl ReplicationDp {
    /// A page not referenced yet, one copy on any node for free.
    pub fn new(nodes: usize) -> ReplicationDp {
        ReplicationDp {
            live: (0..nodes).map(|x| (1u32 << x, Cost::default())).collect(),
            peak_states: nodes,
            work: 0,
        }
    }

    /// Takes one run.
    pub fn step(&mut self, m: &CostModel, r: Run, s: &mut Scratch) {
        self.step_impl::<false>(m, r, s, None);
    }

    /// Takes one run and records in `tb` how each new state was reached (the same
    /// programme as [`ReplicationDp::step`], same ties, so the same optimum).
    pub fn step_traced(&mut self, m: &CostModel, r: Run, s: &mut Scratch, tb: &mut Traceback) {
        self.step_impl::<true>(m, r, s, Some(tb));
    }

    /// The step, with the traceback's bookkeeping compiled in only when `TRACE`, so the
    /// plain solver runs as fast as it did without it.
    #[inline(always)]
    fn step_impl<const TRACE: bool>(
        &mut self,
        m: &CostModel,
        r: Run,
        s: &mut Scratch,
        tb: Option<&mut Traceback>,
    ) {
        self.work += self.live.len() as u64;
        let n = m.nodes;
        let a = r.node as usize;
        let c = r.count as u64;
        // Ways to a single copy on each node: collapse onto a copy, collapse and
        // migrate, or replicate onto a new node and collapse onto it.
        let mut single = [Cost {
            refs: u64::MAX,
            moves: 0,
            coherency: 0,
        }; MAX_REPLICATION_NODES];
        // Per node, how its single copy was reached: (previous set, via, kept copy).
        let mut single_from = [(0u32, via::NONE, 0u8); MAX_REPLICATION_NODES];
        let mut any_collapse: Option<Cost> = None;
        let mut any_from = 0u32;
        let mut via_new: Option<Cost> = None;
        let mut new_from = 0u32;
        for &(set, d) in &self.live {
            let k = set.count_ones();
            let col = d.plus(0, 0, m.collapse(k));
            let mut b = set;
            while b != 0 {
                let x = b.trailing_zeros() as usize;
                b &= b - 1;
                if col.total() < single[x].total() {
                    single[x] = col;
                    if TRACE {
                        single_from[x] = (set, via::COLLAPSE, x as u8);
                    }
                }
            }
            if any_collapse.is_none_or(|e| col.total() < e.total()) {
                any_collapse = Some(col);
                if TRACE {
                    any_from = set;
                }
            }
            let nw = d.plus(0, m.replicate, m.collapse(k + 1));
            if via_new.is_none_or(|e| nw.total() < e.total()) {
                via_new = Some(nw);
                if TRACE {
                    new_from = set;
                }
            }
        }
        let (Some(any_collapse), Some(via_new)) = (any_collapse, via_new) else {
            // No state (never after `new`): the step still counts for the traceback.
            if let Some(tb) = tb {
                tb.ends.push(tb.origins.len());
            }
            return;
        };
        let migrated = any_collapse.plus(0, m.migrate, 0);
        // The migration's source: any copy of the set collapsed (the price is the same
        // from each); the lowest.
        let keep = any_from.trailing_zeros() as u8;
        for (x, cell) in single.iter_mut().enumerate().take(n) {
            if migrated.total() < cell.total() {
                *cell = migrated;
                if TRACE {
                    single_from[x] = (any_from, via::MIGRATE, keep);
                }
            }
            if via_new.total() < cell.total() {
                *cell = via_new;
                if TRACE {
                    single_from[x] = (new_from, via::NEW, keep);
                }
            }
        }
        s.next.clear();
        if TRACE {
            s.origin.clear();
        }
        let price = |set: u32| -> u64 {
            if r.write {
                m.write(a, set.trailing_zeros() as usize)
            } else {
                m.read_from(a, set as u64)
            }
        };
        let every_node = !m.replicate_at_reader_only();
        // `base` is how the set before any added copy was reached.
        let offer_run = |s: &mut Scratch, set: u32, d: Cost, base: Origin, add: u8| {
            let p = price(set);
            let o = Origin {
                set: set as u16,
                add,
                ..base
            };
            s.offer::<TRACE>(set, d.plus(c.saturating_mul(p), 0, 0), o);
        };
        let from_single = |x: usize| {
            if !TRACE {
                return Origin::default();
            }
            let (prev, how, keep) = single_from[x];
            Origin {
                set: 0,
                prev: prev as u16,
                via: how,
                keep,
                single: x as u8,
                add: NO_NODE,
            }
        };
        if r.write {
            for (x, &d) in single.iter().enumerate().take(n) {
                offer_run(s, 1 << x, d, from_single(x), NO_NODE);
            }
        } else {
            // Untraced, the origin is a constant the optimiser drops (carried through
            // the chain, even unused, it cost about 1% of the step).
            let live = self.live.iter().map(|&(set, d)| {
                let o = if TRACE {
                    Origin {
                        set: 0,
                        prev: set as u16,
                        via: via::NONE,
                        keep: 0,
                        single: 0,
                        add: NO_NODE,
                    }
                } else {
                    Origin::default()
                };
                (set, d, o)
            });
            let singles = (0..n).map(|x| (1u32 << x, single[x], from_single(x)));
            for (set, d, o) in live.chain(singles) {
                offer_run(s, set, d, o, NO_NODE);
                let add = d.plus(0, m.replicate, 0);
                if every_node {
                    for y in 0..n {
                        if set & (1 << y) == 0 {
                            offer_run(s, set | 1 << y, add, o, y as u8);
                        }
                    }
                } else if set & (1 << a) == 0 {
                    offer_run(s, set | 1 << a, add, o, a as u8);
                }
            }
        }
        self.prune(m, s);
        for &(set, _) in &s.next {
            s.slot[set as usize] = u32::MAX;
        }
        if TRACE {
            if let Some(tb) = tb {
                let kept = s.next.iter().zip(&s.origin);
                tb.origins.extend(
                    kept.filter(|(e, o)| e.1.refs != u64::MAX && !o.trivial())
                        .map(|(_, o)| *o),
                );
                tb.ends.push(tb.origins.len());
            }
        }
        self.live.clear();
        self.live
            .extend(s.next.iter().copied().filter(|e| e.1.refs != u64::MAX));
        self.peak_states = self.peak_states.max(self.live.len());
    }

    /// Marks states that cannot lead to a cheaper schedule (refs = MAX), while the
    /// scratch slots still index the new layer. Inlined into both steps, as it was into
    /// the single step before the traced one existed, so the untraced solver runs the
    /// same instructions as before.
    #[inline(always)]
    fn prune(&self, m: &CostModel, s: &mut Scratch) {
        let Some(&(bset, best)) = s.next.iter().min_by_key(|e| e.1.total()) else {
            return;
        };
        let base = best
            .total()
            .saturating_add(m.collapse(bset.count_ones()))
            .saturating_add(m.migrate);
        let monotone = m.reads_monotone();
        for i in 0..s.next.len() {
            let (set, d) = s.next[i];
            if d.refs == u64::MAX {
                continue;
            }
            let k = set.count_ones();
            let reach = base.saturating_add(m.replicate.saturating_mul(k as u64 - 1));
            if set != bset && d.total() > reach {
                s.next[i].1.refs = u64::MAX;
                continue;
            }
            if !monotone || k < 2 {
                continue;
            }
            let mut b = set;
            while b != 0 {
                let x = b.trailing_zeros();
                b &= b - 1;
                let sub = set & !(1 << x);
                let j = s.slot[sub as usize];
                if j == u32::MAX {
                    continue;
                }
                let extra = m.coherency_per_copy + if k == 2 { m.coherency_fixed } else { 0 };
                let e = &mut s.next[j as usize].1;
                if e.refs != u64::MAX && d.total().saturating_add(extra) <= e.total() {
                    e.refs = u64::MAX;
                }
            }
        }
    }

    /// The optimal schedule so far, from the traceback its traced steps recorded (every
    /// step must have been traced): the cheapest final state's, as [`Self::optimum`]
    /// picks it.
    pub fn schedule(&self, tb: &Traceback) -> CopySchedule {
        let last = self
            .live
            .iter()
            .min_by_key(|e| e.1.total())
            .copied()
            .unwrap_or((1, Cost::default()));
        let (initial, actions) = tb.walk(last.0);
        CopySchedule {
            initial,
            actions,
            cost: last.1,
        }
    }

    /// The optimum so far.
    pub fn optimum(&self) -> Cost {
        self.live
            .iter()
            .map(|e| e.1)
            .min_by_key(|c| c.total())
            .unwrap_or_default()
    }

    /// Bytes this page's programme holds.
    pub fn bytes(&self) -> usize {
        self.live.capacity() * std::mem::size_of::<(u32, Cost)>()
    }
}

/// The optimal copy-set schedule of a whole page's runs (at most
/// [`MAX_REPLICATION_NODES`] nodes); its traceback holds about eight bytes per state
/// changed per run, unbounded here (the replay bounds it).
pub fn replication_schedule(m: &CostModel, runs: &[Run]) -> CopySchedule {
    let mut s = Scratch::new(m.nodes);
    let mut dp = ReplicationDp::new(m.nodes);
    let mut tb = Traceback::default();
    for &r in runs {
        dp.step_traced(m, r, &mut s, &mut tb);
    }
    dp.schedule(&tb)
}

/// Why a copy-set schedule cannot be carried out in the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Infeasible {
    /// The run before which (or at which) it fails.
    pub run: usize,
    /// What fails.
    pub why: &'static str,
}

/// Prices a copy-set schedule on a page's runs in the replication model, independently
/// of the programme: the copy set is carried through the actions and each run priced by
/// it (a read by its cheapest copy, a write needing a single copy).
pub fn price_copy_schedule(
    m: &CostModel,
    runs: &[Run],
    sched: &CopySchedule,
) -> Result<Cost, Infeasible> {
    let n = m.nodes;
    if sched.initial as usize >= n {
        return Err(Infeasible {
            run: 0,
            why: "initial node out of range",
        });
    }
    let mut set = 1u64 << sched.initial;
    let mut cost = Cost::default();
    let mut acts = sched.actions.iter().peekable();
    for (t, r) in runs.iter().enumerate() {
        while let Some(&&(at, act)) = acts.peek() {
            if at as usize != t {
                break;
            }
            acts.next();
            let fail = |why| Err(Infeasible { run: t, why });
            match act {
                Action::Collapse(k) if (k as usize) < n && set & (1 << k) != 0 => {
                    cost = cost.plus(0, 0, m.collapse(set.count_ones()));
                    set = 1 << k;
                }
                Action::Collapse(_) => return fail("collapse onto a node without a copy"),
                Action::Migrate(y) if (y as usize) < n && set.count_ones() == 1 => {
                    cost = cost.plus(0, m.migrate, 0);
                    set = 1 << y;
                }
                Action::Migrate(_) => return fail("migration of a replicated page"),
                Action::Replicate(y) if (y as usize) < n && set & (1 << y) == 0 => {
                    cost = cost.plus(0, m.replicate, 0);
                    set |= 1 << y;
                }
                Action::Replicate(_) => return fail("replication onto a node with a copy"),
            }
        }
        let a = r.node as usize;
        let price = if r.write {
            if set.count_ones() != 1 {
                return Err(Infeasible {
                    run: t,
                    why: "write to a replicated page",
                });
            }
            m.write(a, set.trailing_zeros() as usize)
        } else {
            m.read_from(a, set)
        };
        cost = cost.plus((r.count as u64).saturating_mul(price), 0, 0);
    }
    if let Some(&(at, _)) = acts.next() {
        return Err(Infeasible {
            run: at as usize,
            why: "action after the last run or out of order",
        });
    }
    Ok(cost)
}

/// A lower bound of the replication optimum for any number of nodes, O(n) per write
/// and O(1) per read: a relaxation that splits the page's cost among the nodes.
///
/// Each node keeps its own two-state programme (it holds a copy or not). Its reads cost
/// its own copy's price when it holds one (local, or cached where cheaper), else the
/// cheapest remote price; acquiring a copy costs `min(replicate, migrate)`; its writes
/// cost the local write price (if another node kept the only copy, that node pays the
/// difference); at another node's write it drops its copy for free or keeps it, paying
/// the writer's remote-write surcharge. One node may start with a copy for free. Any real
/// schedule splits this way at no more than its cost (each acquisition is a replication
/// or a migration, at least one keeper per write pays the surcharge, coherency and drops
/// cost at least 0), so the sum of the nodes' optima is a lower bound.
#[derive(Clone, Debug)]
pub struct ReplicationBound {
    /// Per node: (without, with) a copy, starting without; and the same starting with.
    from_none: Vec<[u64; 2]>,
    from_copy: Vec<[u64; 2]>,
}

impl ReplicationBound {
    /// A page not referenced yet.
    pub fn new(nodes: usize) -> ReplicationBound {
        ReplicationBound {
            from_none: vec![[0, u64::MAX]; nodes],
            from_copy: vec![[u64::MAX, 0]; nodes],
        }
    }

    /// Takes one run.
    pub fn step(&mut self, m: &CostModel, r: Run) {
        let a = r.node as usize;
        let c = r.count as u64;
        let acquire = m.replicate.min(m.migrate);
        for layer in [&mut self.from_none, &mut self.from_copy] {
            if r.write {
                let local = m.write(a, a);
                for (x, d) in layer.iter_mut().enumerate() {
                    if x == a {
                        let best = d[0].min(d[1]);
                        d[0] = best.saturating_add(c.saturating_mul(local));
                        d[1] = d[1].saturating_add(c.saturating_mul(local));
                    } else {
                        let surcharge = c.saturating_mul(m.write(a, x).saturating_sub(local));
                        let keep = d[1].saturating_add(surcharge);
                        d[0] = d[0].min(d[1]);
                        d[1] = keep;
                    }
                }
            } else {
                let d = &mut layer[a];
                let have = d[1].min(d[0].saturating_add(acquire));
                d[0] = d[0].saturating_add(c.saturating_mul(m.best_remote_read(a)));
                d[1] = have.saturating_add(c.saturating_mul(m.own_read(a)));
            }
        }
    }

    /// The bound so far.
    pub fn bound(&self) -> u64 {
        let none: Vec<u64> = self.from_none.iter().map(|d| d[0].min(d[1])).collect();
        let copy: Vec<u64> = self.from_copy.iter().map(|d| d[0].min(d[1])).collect();
        let base = none.iter().fold(0u64, |s, &v| s.saturating_add(v));
        let gain = none
            .iter()
            .zip(&copy)
            .map(|(&n, &c)| n.saturating_sub(c))
            .max()
            .unwrap_or(0);
        base - gain
    }

    /// Bytes this page's bound holds.
    pub fn bytes(&self) -> usize {
        (self.from_none.capacity() + self.from_copy.capacity()) * 16
    }
}

/// The replication relaxation's bound over a whole page's runs.
pub fn replication_bound(m: &CostModel, runs: &[Run]) -> u64 {
    let mut b = ReplicationBound::new(m.nodes);
    for &r in runs {
        b.step(m, r);
    }
    b.bound()
}

/// Folds `next` into `pending` when both are by the same node and of the same kind:
/// between two such runs with nothing else in between, a move made between them could
/// be made before both or after both at no greater cost (the pair's cost is linear in
/// where the boundary falls), so both models' optima are unchanged by the merge.
#[inline]
pub fn merge(pending: &mut Run, next: Run) -> bool {
    if pending.node == next.node && pending.write == next.write {
        if let Some(c) = pending.count.checked_add(next.count) {
            pending.count = c;
            return true;
        }
    }
    false
}

/// A page's runs with consecutive runs of one node and kind merged (see [`merge`]).
pub fn merged(runs: &[Run]) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::new();
    for &r in runs {
        let folded = out.last_mut().is_some_and(|p| merge(p, r));
        if !folded {
            out.push(r);
        }
    }
    out
}

/// The optimum of a whole page's runs in the migration-only model.
pub fn migration_optimum(m: &CostModel, runs: &[Run]) -> Cost {
    let mut dp = MigrationDp::new(m.nodes);
    for &r in runs {
        dp.step(m, r);
    }
    dp.optimum()
}

/// The optimum of a whole page's runs in the replication model (at most
/// [`MAX_REPLICATION_NODES`] nodes).
pub fn replication_optimum(m: &CostModel, runs: &[Run]) -> Cost {
    let mut s = Scratch::new(m.nodes);
    let mut dp = ReplicationDp::new(m.nodes);
    for &r in runs {
        dp.step(m, r, &mut s);
    }
    dp.optimum()
}
