//! Replaying the optimum: the optimal schedule of every page, extracted from a trace in
//! either model (migration only, or migration + replication with write-invalidate), and
//! `oracle-replay`, the policy that carries it out in the simulator.
//!
//! The per-page optimum is computed in a cost model without timing: it ignores fault
//! handling, TLB shootdowns, page-table-entry locks, memory-module contention and the
//! synchronisation that couples threads, and its actions are free of any lateness. The
//! replay puts those couplings back: each page starts where the optimum starts it, and
//! each page's actions before a run (collapse to one copy, migrate the single copy, add
//! a copy) are made together, in order, by a daemon of the node receiving the first
//! copy made (the kept node for a lone collapse), stealing time on its first processor
//! as the machine's cost table charges it, at the trace time between the page's two
//! runs they fall between. If the replayed run's interleaving drifts from the recorded
//! one, actions land a little early or late. A write that finds the page still
//! replicated takes the mechanism's coherency fault: when it comes before the page's
//! next scheduled collapse it keeps the copy that collapse keeps; when it comes after
//! replications the schedule made only after it, it keeps the writer's copy and the
//! copies it took away are made again at their nodes' next reads (the policy follows
//! the copy set the schedule says the page holds, so one late write does not leave
//! every later read remote: on gauss, where a row's last write and first read are a
//! millisecond apart, a replay without this fell further behind at every step). A read
//! maps the nearest copy. The replayed run's own cost in the model, set beside the
//! optimum, shows how much the drift costs.

use crate::dp::{
    merge, Action, CopySchedule, ReplicationDp, Run, Scratch, Traceback, MAX_REPLICATION_NODES,
};
use crate::error::OracleError;
use crate::model::CostModel;
use crate::trace::TraceReader;
use numaplace_core::component::{
    default_fault, DaemonNext, DaemonPlacement, DaemonSpec, Fault, Policy, PolicyEntry,
    PolicyParams,
};
use numaplace_core::error::ConfigError;
use numaplace_core::fields::Fields;
use numaplace_core::memory::Access;
use numaplace_core::mm::Mm;
use numaplace_core::registry::Describe;
use numaplace_core::{Machine, NodeId, NodeSet, Ns, Vpn};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// One move of a version-1 schedule (migration only): the page moves to `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Move {
    /// When to make it (ns, trace time).
    pub time: u64,
    /// The page.
    pub vpn: u32,
    /// Where it goes.
    pub to: u16,
}

/// What a scheduled action does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// The page's single copy moves to `node`.
    Migrate,
    /// A copy is added on `node`.
    Replicate,
    /// A coherency fault leaves only the copy on `node`.
    Collapse,
}

/// One timed action of the optimal schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scheduled {
    /// When to make it (ns, trace time).
    pub time: u64,
    /// The page.
    pub vpn: u32,
    /// What to do.
    pub op: Op,
    /// The node it concerns (destination, or the copy a collapse keeps).
    pub node: u16,
}

/// Which optimum a schedule carries out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScheduleModel {
    /// Migration only.
    #[default]
    Migration,
    /// Migration + replication with write-invalidate.
    Replication,
}

impl ScheduleModel {
    /// The model's name, as the schedule file and the CLI spell it.
    pub fn name(self) -> &'static str {
        match self {
            ScheduleModel::Migration => "migration",
            ScheduleModel::Replication => "replication",
        }
    }
}

/// The version of the schedule format written. Version 1 (no `version` field) held a
/// migration-only schedule as `moves`; version 2 holds `model` and `actions`, where the
/// actions of one page at one time are made in the order listed.
pub const SCHEDULE_VERSION: u32 = 2;

/// The optimal schedule of a run's pages.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Schedule {
    /// Which optimum it carries out.
    pub model: ScheduleModel,
    /// Where each page starts (by page number; `None`: never referenced).
    pub initial: Vec<Option<u16>>,
    /// The actions, by time then page (a page's actions at one time in their order).
    pub actions: Vec<Scheduled>,
    /// The schedule's cost in the model (ns).
    pub cost: u64,
}

/// A schedule file as written by any version (the fields of both).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScheduleFile {
    version: Option<u32>,
    model: Option<ScheduleModel>,
    initial: Vec<Option<u16>>,
    moves: Option<Vec<Move>>,
    actions: Option<Vec<Scheduled>>,
    cost: u64,
}

impl Schedule {
    /// Actions of kind `op`.
    pub fn count(&self, op: Op) -> usize {
        self.actions.iter().filter(|a| a.op == op).count()
    }

    /// The schedule as JSON (the current version).
    pub fn to_json(&self) -> serde_json::Result<String> {
        #[derive(Serialize)]
        struct Out<'a> {
            version: u32,
            #[serde(flatten)]
            s: &'a Schedule,
        }
        serde_json::to_string(&Out {
            version: SCHEDULE_VERSION,
            s: self,
        })
    }

    /// Reads a schedule of any version from JSON; the error says what is wrong.
    pub fn from_json(text: &str) -> Result<Schedule, String> {
        let f: ScheduleFile =
            serde_json::from_str(text).map_err(|e| format!("not a schedule: {e}"))?;
        match f.version.unwrap_or(1) {
            1 => {
                if f.actions.is_some() || f.model.is_some() {
                    return Err("`actions` and `model` belong to version 2 schedules, but `version` is absent or 1 (add \"version\": 2)".into());
                }
                let actions = f
                    .moves
                    .unwrap_or_default()
                    .into_iter()
                    .map(|m| Scheduled {
                        time: m.time,
                        vpn: m.vpn,
                        op: Op::Migrate,
                        node: m.to,
                    })
                    .collect();
                Ok(Schedule {
                    model: ScheduleModel::Migration,
                    initial: f.initial,
                    actions,
                    cost: f.cost,
                })
            }
            2 => {
                if f.moves.is_some() {
                    return Err(
                        "`moves` belongs to version 1 schedules; version 2 lists `actions`".into(),
                    );
                }
                Ok(Schedule {
                    model: f.model.unwrap_or_default(),
                    initial: f.initial,
                    actions: f.actions.unwrap_or_default(),
                    cost: f.cost,
                })
            }
            v => Err(format!(
                "version {v}: this numaplace reads schedule versions 1 to {SCHEDULE_VERSION}"
            )),
        }
    }
}

/// Per page: the programme's layer and, per merged run, what traceback needs.
struct Track {
    layer: Vec<u64>,
    steps: Vec<Step>,
    /// The run being merged: the run, its first and last record's times.
    pending: Option<(Run, u64, u64)>,
    /// The last record time of the run before it.
    prev_last: u64,
}

struct Step {
    moved_to: u64,
    from: u8,
    /// Trace time of this run's first record and of the previous run's last one.
    first: u64,
    prev_last: u64,
}

/// Largest machine a schedule is extracted for (a step's moves are a 64-bit mask).
pub const MAX_SCHEDULE_NODES: usize = 64;

/// Bytes of traceback a schedule may hold before it is refused.
pub const MAX_SCHEDULE_BYTES: u64 = 4 << 30;

/// The migration-only optimal schedule of the trace at `path` (with traceback: it
/// keeps about 32 bytes per merged run of each page; refused above
/// [`MAX_SCHEDULE_BYTES`]).
pub fn migration_schedule(path: &Path) -> Result<Schedule, OracleError> {
    let mut reader = TraceReader::open(path).map_err(OracleError::io(path))?;
    let machine =
        Machine::new(reader.header.machine.clone()).map_err(numaplace_core::SimError::from)?;
    let m = CostModel::of(&machine);
    if m.nodes > MAX_SCHEDULE_NODES {
        return Err(OracleError::io(path)(std::io::Error::other(format!(
            "the machine has {} nodes; schedules are extracted for at most {MAX_SCHEDULE_NODES}",
            m.nodes
        ))));
    }
    if reader
        .footer
        .records
        .saturating_mul(std::mem::size_of::<Step>() as u64)
        > MAX_SCHEDULE_BYTES
    {
        return Err(OracleError::io(path)(std::io::Error::other(format!(
            "{} runs: the schedule's traceback would need more than {} GiB",
            reader.footer.records,
            MAX_SCHEDULE_BYTES >> 30
        ))));
    }
    let npages = reader.footer.npages as usize;
    let mut tracks: Vec<Option<Track>> = Vec::new();
    tracks.resize_with(npages, || None);
    reader
        .for_each(|r| {
            let p = r.page as usize;
            if p >= tracks.len() {
                tracks.resize_with(p + 1, || None);
            }
            let t = tracks[p].get_or_insert_with(|| Track {
                layer: vec![0; m.nodes],
                steps: Vec::new(),
                pending: None,
                prev_last: r.time,
            });
            let run = Run {
                node: r.node,
                write: r.write,
                count: r.count,
            };
            if let Some((p, _, last)) = t.pending.as_mut() {
                if merge(p, run) {
                    *last = r.time;
                    return;
                }
            }
            if let Some((p, first, last)) = t.pending.replace((run, r.time, r.time)) {
                step(&m, t, p, first);
                t.prev_last = last;
            }
        })
        .map_err(OracleError::io(path))?;
    let mut sched = Schedule {
        initial: vec![None; tracks.len()],
        ..Schedule::default()
    };
    for (vpn, t) in tracks.iter_mut().enumerate() {
        let Some(t) = t else { continue };
        if let Some((p, first, _)) = t.pending.take() {
            step(&m, t, p, first);
        }
        // Traceback from the cheapest final home.
        let (mut x, cost) = t
            .layer
            .iter()
            .enumerate()
            .min_by_key(|&(i, c)| (*c, i))
            .map(|(i, c)| (i, *c))
            .unwrap_or((0, 0));
        sched.cost = sched.cost.saturating_add(cost);
        for s in t.steps.iter().rev() {
            if s.moved_to & (1 << x) != 0 {
                let from = s.from as usize;
                sched.actions.push(Scheduled {
                    time: midpoint(s.prev_last, s.first),
                    vpn: vpn as u32,
                    op: Op::Migrate,
                    node: x as u16,
                });
                x = from;
            }
        }
        sched.initial[vpn] = Some(x as u16);
    }
    sched.actions.sort_by_key(|mv| (mv.time, mv.vpn));
    Ok(sched)
}

/// The trace time of a page's actions before a run: midway between the previous run's
/// last record and this run's first.
fn midpoint(prev_last: u64, first: u64) -> u64 {
    prev_last + first.saturating_sub(prev_last) / 2
}

/// One step of the migration programme with what traceback needs (the same update as
/// [`crate::dp::MigrationDp`], on totals).
fn step(m: &CostModel, t: &mut Track, r: Run, first: u64) {
    let (bi, best) = t
        .layer
        .iter()
        .enumerate()
        .min_by_key(|&(i, c)| (*c, i))
        .map(|(i, c)| (i, *c))
        .unwrap_or((0, 0));
    let moved = best.saturating_add(m.migrate);
    let a = r.node as usize;
    let mut moved_to = 0u64;
    for (x, d) in t.layer.iter_mut().enumerate() {
        if moved < *d {
            *d = moved;
            moved_to |= 1 << x;
        }
        let price = if r.write { m.write(a, x) } else { m.read(a, x) };
        *d = d.saturating_add((r.count as u64).saturating_mul(price));
    }
    t.steps.push(Step {
        moved_to,
        from: bi as u8,
        first,
        prev_last: t.prev_last.min(first),
    });
}

/// A page's merged run with the trace times its actions are placed by.
#[derive(Clone, Copy)]
struct TimedRun {
    run: Run,
    /// Trace time of the run's first record and of the previous run's last one.
    first: u64,
    prev_last: u64,
}

/// The replication model's optimal schedule of the trace at `path` (at most
/// [`MAX_REPLICATION_NODES`] nodes): every page's merged runs are gathered (refused
/// above [`MAX_SCHEDULE_BYTES`]), then each page's programme is run again with its
/// traceback, pages in parallel, and walked back. The tracebacks held at once are
/// bounded by [`MAX_SCHEDULE_BYTES`] too, and the copy-set updates by `budget` (as the
/// solver's: a trace the solver gave up on is given up here).
pub fn replication_schedule(path: &Path, budget: u64) -> Result<Schedule, OracleError> {
    let mut reader = TraceReader::open(path).map_err(OracleError::io(path))?;
    let machine =
        Machine::new(reader.header.machine.clone()).map_err(numaplace_core::SimError::from)?;
    let m = CostModel::of(&machine);
    let refuse = |why: String| OracleError::io(path)(std::io::Error::other(why));
    if m.nodes > MAX_REPLICATION_NODES {
        return Err(refuse(format!(
            "the machine has {} nodes; the replication optimum is solved, and its schedule extracted, for at most {MAX_REPLICATION_NODES}",
            m.nodes
        )));
    }
    let run_bytes = std::mem::size_of::<TimedRun>() as u64;
    if reader.footer.records.saturating_mul(run_bytes) > MAX_SCHEDULE_BYTES {
        return Err(refuse(format!(
            "{} runs: gathering them for the replication schedule would need more than {} GiB",
            reader.footer.records,
            MAX_SCHEDULE_BYTES >> 30
        )));
    }
    // Per page: its merged runs and the last record time of the last one.
    let mut pages: Vec<Option<(Vec<TimedRun>, u64)>> = Vec::new();
    pages.resize_with(reader.footer.npages as usize, || None);
    reader
        .for_each(|r| {
            let p = r.page as usize;
            if p >= pages.len() {
                pages.resize_with(p + 1, || None);
            }
            let (runs, last) = pages[p].get_or_insert_with(|| (Vec::new(), r.time));
            let run = Run {
                node: r.node,
                write: r.write,
                count: r.count,
            };
            let folded = runs.last_mut().is_some_and(|t| merge(&mut t.run, run));
            if !folded {
                runs.push(TimedRun {
                    run,
                    first: r.time,
                    prev_last: (*last).min(r.time),
                });
            }
            *last = r.time;
        })
        .map_err(OracleError::io(path))?;
    let npages = pages.len();
    let held = AtomicU64::new(0);
    let spent = AtomicU64::new(0);
    let solved: Vec<Option<(Vec<TimedRun>, CopySchedule)>> = pages
        .into_par_iter()
        .map_init(
            || Scratch::new(m.nodes),
            |scratch, page| -> Result<_, String> {
                let Some((runs, _)) = page else {
                    return Ok(None);
                };
                let mut dp = ReplicationDp::new(m.nodes);
                let mut tb = Traceback::default();
                let mut reported = 0u64;
                let give_back = |reported: u64| held.fetch_sub(reported, Ordering::Relaxed);
                for (i, t) in runs.iter().enumerate() {
                    let before = dp.work;
                    dp.step_traced(&m, t.run, scratch, &mut tb);
                    let work = spent.fetch_add(dp.work - before, Ordering::Relaxed);
                    // Checked every 256 runs and at the end (the vectors only grow).
                    if i % 256 == 255 || i + 1 == runs.len() {
                        let now = tb.bytes() as u64;
                        let total = held.fetch_add(now - reported, Ordering::Relaxed) + now
                            - reported;
                        reported = now;
                        if total > MAX_SCHEDULE_BYTES {
                            give_back(reported);
                            return Err(format!(
                                "the replication schedule's tracebacks would need more than {} GiB at once",
                                MAX_SCHEDULE_BYTES >> 30
                            ));
                        }
                        if work > budget {
                            give_back(reported);
                            return Err(format!(
                                "given up after {work} copy-set updates (budget {budget}): the pages' reachable copy sets are too many for this trace; raise --replication-budget"
                            ));
                        }
                    }
                }
                let sched = dp.schedule(&tb);
                drop(tb);
                give_back(reported);
                Ok(Some((runs, sched)))
            },
        )
        .collect::<Result<_, String>>()
        .map_err(refuse)?;
    let mut sched = Schedule {
        model: ScheduleModel::Replication,
        initial: vec![None; npages],
        ..Schedule::default()
    };
    for (vpn, page) in solved.into_iter().enumerate() {
        let Some((runs, page)) = page else { continue };
        sched.initial[vpn] = Some(page.initial);
        sched.cost = sched.cost.saturating_add(page.cost.total());
        for (t, act) in page.actions {
            let run = &runs[t as usize];
            let (op, node) = match act {
                Action::Collapse(k) => (Op::Collapse, k),
                Action::Migrate(y) => (Op::Migrate, y),
                Action::Replicate(y) => (Op::Replicate, y),
            };
            sched.actions.push(Scheduled {
                time: midpoint(run.prev_last, run.first),
                vpn: vpn as u32,
                op,
                node,
            });
        }
    }
    // Stable: a page's actions at one time keep their order.
    sched.actions.sort_by_key(|a| (a.time, a.vpn));
    Ok(sched)
}

/// Parameters of `oracle-replay`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct ReplayConfig {
    /// A schedule file written by `numaplace oracle --replay` (JSON: each page's first
    /// node and the timed actions: migrations, replications, collapses). Empty: no
    /// schedule, every page placed at first touch and never moved.
    pub schedule: String,
}

impl Describe for ReplayConfig {
    const KIND: &'static str = "oracle-replay";
    const DESCRIPTION: &'static str = "the offline optimum's schedule replayed (migration only, or with replication): each page starts where the optimum starts it and is migrated, replicated and collapsed when the optimum does (numaplace oracle --replay writes the schedule)";
}

impl PolicyParams for ReplayConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn Policy>, ConfigError> {
        if self.schedule.is_empty() {
            return Ok(Box::new(Replay::new(Schedule::default(), machine.nodes())));
        }
        let bad =
            |why: String| ConfigError::new("policy.schedule", format!("{}: {why}", self.schedule));
        let text = std::fs::read_to_string(&self.schedule).map_err(|e| bad(e.to_string()))?;
        let s = Schedule::from_json(&text).map_err(bad)?;
        let n = machine.nodes();
        let nodes = s
            .initial
            .iter()
            .flatten()
            .map(|&x| ("initial", x))
            .chain(s.actions.iter().map(|a| ("actions", a.node)));
        for (field, x) in nodes {
            if x as usize >= n {
                return Err(bad(format!(
                    "`{field}` names node {x}, which does not exist (the machine has {n}): the schedule was made for another machine"
                )));
            }
        }
        Ok(Box::new(Replay::new(s, n)))
    }
}

numaplace_core::inventory::submit!(PolicyEntry::of::<ReplayConfig>());

/// The policy: initial copies from the schedule, actions by one daemon per node.
struct Replay {
    initial: Vec<Option<u16>>,
    /// Per node, the actions its daemon makes in time order, and how many are done.
    by_node: Vec<(Vec<Scheduled>, usize)>,
    /// Daemon id to node (the nodes with actions, in order).
    daemon_nodes: Vec<usize>,
    /// Every collapse as (page, time, kept node), sorted: a write that finds its page
    /// still replicated keeps the copy the schedule keeps next.
    collapses: Vec<(u32, u64, u16)>,
    /// Whether the schedule adds copies.
    replicates: bool,
    /// Per page (sized in `init`, only when the schedule replicates): the copies the
    /// schedule says it holds now, a bit per node (nodes 0-63), and the trace time of
    /// the last replication made of it.
    scheduled: Vec<(u64, u64)>,
}

impl Replay {
    fn new(s: Schedule, nodes: usize) -> Replay {
        let mut actions = s.actions;
        // Stable: a page's actions at one time keep their order, whatever the file's.
        actions.sort_by_key(|a| (a.time, a.vpn));
        let mut by_node: Vec<(Vec<Scheduled>, usize)> = vec![(Vec::new(), 0); nodes];
        // The actions of one page at one time go to one daemon, so they are made in
        // their order: the daemon of the first node a copy is made on (it receives the
        // block transfer), else of the copy a lone collapse keeps.
        for group in actions.chunk_by(|a, b| (a.time, a.vpn) == (b.time, b.vpn)) {
            let node = group
                .iter()
                .find(|a| a.op != Op::Collapse)
                .unwrap_or(&group[0])
                .node;
            by_node[node as usize].0.extend_from_slice(group);
        }
        let daemon_nodes = (0..nodes).filter(|&n| !by_node[n].0.is_empty()).collect();
        let mut collapses: Vec<(u32, u64, u16)> = actions
            .iter()
            .filter(|a| a.op == Op::Collapse)
            .map(|a| (a.vpn, a.time, a.node))
            .collect();
        collapses.sort_unstable();
        Replay {
            initial: s.initial,
            replicates: actions.iter().any(|a| a.op == Op::Replicate),
            by_node,
            daemon_nodes,
            collapses,
            scheduled: Vec::new(),
        }
    }

    /// `vpn`'s next collapse at or after `now`: its time and the copy it keeps.
    fn next_collapse(&self, vpn: Vpn, now: u64) -> Option<(u64, NodeId)> {
        let i = self
            .collapses
            .partition_point(|c| (c.0, c.1) < (vpn.0, now));
        self.collapses
            .get(i)
            .filter(|c| c.0 == vpn.0)
            .map(|c| (c.1, NodeId(c.2)))
    }

    /// Bit of node `n` in a scheduled copy set (none beyond node 63).
    fn bit(n: u16) -> u64 {
        1u64.checked_shl(n as u32).unwrap_or(0)
    }

    /// Makes one scheduled action, as far as the page's state in this run allows, and
    /// moves the page's scheduled copy set on, whatever the simulator made of it.
    fn act(&mut self, ctx: &mut dyn Mm, a: &Scheduled) {
        let vpn = Vpn(a.vpn);
        if let Some(s) = self.scheduled.get_mut(vpn.idx()) {
            match a.op {
                Op::Replicate => {
                    s.0 |= Self::bit(a.node);
                    s.1 = a.time;
                }
                Op::Collapse | Op::Migrate => s.0 = Self::bit(a.node),
            }
        }
        if vpn.idx() >= ctx.npages() || ctx.copy_count(vpn) == 0 {
            return;
        }
        let node = NodeId(a.node);
        match a.op {
            Op::Migrate => {
                // A page still replicated (a collapse refused or undone by drift) is
                // left alone; a full node refuses the move and the page stays.
                if ctx.copy_count(vpn) == 1 {
                    let _ = ctx.migrate(vpn, node);
                }
            }
            Op::Replicate => {
                if !ctx.has_copy(vpn, node) && ctx.replicate(vpn, node).is_ok() {
                    Self::map_nearest_copies(ctx, vpn);
                }
            }
            Op::Collapse => {
                // Already one copy (a write collapsed it first): nothing to invalidate.
                if ctx.copy_count(vpn) > 1 {
                    let keep = ctx.nearest_copy(vpn, node).unwrap_or(node);
                    ctx.coherency_fault(vpn, keep);
                }
            }
        }
    }

    /// After a replication, redirects each mapping whose node now has a cheaper copy
    /// to read (its own, or a nearer one on a distance matrix) to that copy, one
    /// shootdown per other node interrupted, so reads use the copy the optimum made
    /// for them (replication does not map the new copy by itself).
    fn map_nearest_copies(ctx: &mut dyn Mm, vpn: Vpn) {
        let page = ctx.page(vpn);
        let mut stale = NodeSet::EMPTY;
        let mut to = Vec::new();
        for x in page.mapped.iter() {
            let cur = ctx.mapping(vpn, x).target;
            let Some(best) = ctx.nearest_copy(vpn, x) else {
                continue;
            };
            let machine = ctx.machine();
            if best != cur && (best == x || machine.read_ns(x, best) < machine.read_ns(x, cur)) {
                stale.insert(x);
                to.push((x, best));
            }
        }
        if to.is_empty() {
            return;
        }
        ctx.invalidate_mappings(vpn, stale);
        for (x, best) in to {
            let _ = ctx.map_to(vpn, x, best, Access::Read);
        }
    }
}

impl Policy for Replay {
    fn name(&self) -> &'static str {
        "oracle-replay"
    }

    fn replicates(&self) -> bool {
        self.replicates
    }

    fn initial_placement(&mut self, _: &Machine, vpn: Vpn, _: Option<NodeId>) -> Option<NodeId> {
        self.initial.get(vpn.idx()).copied().flatten().map(NodeId)
    }

    fn init(&mut self, ctx: &mut dyn Mm) {
        if self.replicates {
            self.scheduled = (0..ctx.npages())
                .map(|p| {
                    let first = self.initial.get(p).copied().flatten();
                    (first.map_or(0, Self::bit), 0)
                })
                .collect();
        }
    }

    fn state_bytes_per_page(&self) -> u64 {
        if self.replicates {
            16
        } else {
            0
        }
    }

    fn on_fault(&mut self, ctx: &mut dyn Mm, f: Fault) {
        let now = ctx.now().0;
        if f.write && ctx.copy_count(f.vpn) > 1 {
            // A write mapping needs a single copy: a write that finds the page
            // replicated takes a coherency fault. Either it came early, before the
            // page's next scheduled collapse (nearer it in time than the last
            // replication): it keeps the copy that collapse keeps, and the page's
            // scheduled set becomes that copy. Or it came late, after replications the
            // schedule made only after it: it keeps the writer's own copy, else the
            // nearest, and the scheduled set stays, so the readers get their copies
            // back at their next read.
            let copies = ctx.page(f.vpn).copies;
            let next = self
                .next_collapse(f.vpn, now)
                .filter(|&(_, k)| copies.contains(k));
            let last_rep = self.scheduled.get(f.vpn.idx()).map_or(0, |s| s.1);
            let early = next.filter(|&(t, _)| t - now <= now.saturating_sub(last_rep));
            let keep = match early {
                Some((_, k)) => {
                    if let Some(s) = self.scheduled.get_mut(f.vpn.idx()) {
                        s.0 = Self::bit(k.0);
                    }
                    Some(k)
                }
                None => ctx.nearest_copy(f.vpn, f.node),
            };
            if let Some(keep) = keep {
                ctx.coherency_fault(f.vpn, keep);
            }
        } else if !f.write {
            // A read by a node the schedule gives a copy that the run lost (a late
            // write collapsed the page): the copy is made again now, as a read miss
            // does, so the drift costs one fault rather than every read until the next
            // scheduled replication.
            let held = self.scheduled.get(f.vpn.idx()).map_or(0, |s| s.0);
            if held & Self::bit(f.node.0) != 0
                && ctx.copy_count(f.vpn) > 0
                && !ctx.has_copy(f.vpn, f.node)
                && ctx.replicate(f.vpn, f.node).is_ok()
            {
                let _ = ctx.map_to(f.vpn, f.node, f.node, Access::Read);
                return;
            }
        }
        // First touch of a page the schedule did not place, and the mapping: the
        // nearest copy, with the rights the access needs.
        default_fault(ctx, f);
    }

    fn daemons(&self, _machine: &Machine) -> Vec<DaemonSpec> {
        self.daemon_nodes
            .iter()
            .map(|&n| DaemonSpec {
                name: format!("replay-{n}"),
                placement: DaemonPlacement::StealOn(NodeId(n as u16)),
                first_wake: Ns(self.by_node[n].0[0].time),
            })
            .collect()
    }

    fn on_daemon(&mut self, ctx: &mut dyn Mm, id: usize) -> DaemonNext {
        let Some(&node) = self.daemon_nodes.get(id) else {
            return DaemonNext::Stop;
        };
        let now = ctx.now().0;
        while let Some(&a) = self.by_node[node].0.get(self.by_node[node].1) {
            if a.time > now {
                break;
            }
            self.act(ctx, &a);
            self.by_node[node].1 += 1;
        }
        let (actions, done) = &self.by_node[node];
        match actions.get(*done) {
            Some(next) => {
                let ready = now.saturating_add(ctx.cost().0);
                DaemonNext::After(Ns(next.time.saturating_sub(ready).max(1)))
            }
            None => DaemonNext::Stop,
        }
    }
}
