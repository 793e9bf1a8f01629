//! Replaying the optimum: the migration-only optimal schedule of every page, extracted
//! from a trace, and `oracle-replay`, the policy that carries it out in the simulator.
//!
//! The per-page optimum is computed in a cost model without timing: it ignores fault
//! handling, TLB shootdowns, page-table-entry locks, memory-module contention and the
//! synchronisation that couples threads, and its moves are free of any lateness. The
//! replay puts those couplings back: each page starts where the optimum starts it, and
//! each move is made by a daemon of the receiving node (stealing time on its first
//! processor, as the machine's cost table charges it) at the trace time between the
//! page's two runs the move falls between. If the replayed run's interleaving drifts
//! from the recorded one, the moves land a little early or late; the replayed run's
//! own cost in the model, set beside the optimum, shows how much that costs.

use crate::dp::{merge, Run};
use crate::model::CostModel;
use crate::solve::OracleError;
use crate::trace::{Record, TraceReader};
use numaplace_core::error::ConfigError;
use numaplace_core::fields::Fields;
use numaplace_core::policy::{
    DaemonNext, DaemonPlacement, DaemonSpec, Mm, Policy, PolicyEntry, PolicyParams,
};
use numaplace_core::registry::Describe;
use numaplace_core::{Machine, NodeId, Ns, Vpn};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One move of the optimal schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Move {
    /// When to make it (ns, trace time).
    pub time: u64,
    /// The page.
    pub vpn: u32,
    /// Where it goes.
    pub to: u16,
}

/// The migration-only optimal schedule of a run's pages.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    /// Where each page starts (by page number; `None`: never referenced).
    pub initial: Vec<Option<u16>>,
    /// The moves, by time then page.
    pub moves: Vec<Move>,
    /// The schedule's cost in the model (ns).
    pub cost: u64,
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
    let mut block: Vec<Record> = Vec::new();
    while reader
        .next_block(&mut block)
        .map_err(OracleError::io(path))?
    {
        for r in &block {
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
                    continue;
                }
            }
            if let Some((p, first, last)) = t.pending.replace((run, r.time, r.time)) {
                step(&m, t, p, first);
                t.prev_last = last;
            }
        }
        block.clear();
    }
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
                sched.moves.push(Move {
                    time: s.prev_last + (s.first.saturating_sub(s.prev_last)) / 2,
                    vpn: vpn as u32,
                    to: x as u16,
                });
                x = from;
            }
        }
        sched.initial[vpn] = Some(x as u16);
    }
    sched.moves.sort_by_key(|mv| (mv.time, mv.vpn));
    Ok(sched)
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

/// Parameters of `oracle-replay`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct ReplayConfig {
    /// A schedule file written by `numaplace oracle --replay` (JSON: each page's first
    /// node and the timed moves). Empty: no schedule, every page placed at first touch
    /// and never moved.
    pub schedule: String,
}

impl Describe for ReplayConfig {
    const KIND: &'static str = "oracle-replay";
    const DESCRIPTION: &'static str = "the offline optimum's migration schedule replayed: each page starts where the optimum starts it and moves when it moves (numaplace oracle --replay writes the schedule)";
}

impl PolicyParams for ReplayConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn Policy>, ConfigError> {
        if self.schedule.is_empty() {
            return Ok(Box::new(Replay::new(Schedule::default(), machine.nodes())));
        }
        let text = std::fs::read_to_string(&self.schedule)
            .map_err(|e| ConfigError::new("policy.schedule", format!("{}: {e}", self.schedule)))?;
        let s: Schedule = serde_json::from_str(&text).map_err(|e| {
            ConfigError::new(
                "policy.schedule",
                format!("{}: not a schedule: {e}", self.schedule),
            )
        })?;
        let n = machine.nodes();
        if let Some(bad) = s
            .initial
            .iter()
            .flatten()
            .chain(s.moves.iter().map(|m| &m.to))
            .find(|&&x| x as usize >= n)
        {
            return Err(ConfigError::new(
                "policy.schedule",
                format!(
                    "{}: node {bad} does not exist (the machine has {n}): the schedule was made for another machine",
                    self.schedule
                ),
            ));
        }
        Ok(Box::new(Replay::new(s, n)))
    }
}

numaplace_core::inventory::submit!(PolicyEntry::of::<ReplayConfig>());

/// The policy: initial homes from the schedule, moves by one daemon per receiving node.
struct Replay {
    initial: Vec<Option<u16>>,
    /// Per node, its moves in time order, and how many are done.
    by_node: Vec<(Vec<Move>, usize)>,
}

impl Replay {
    fn new(s: Schedule, nodes: usize) -> Replay {
        let mut by_node: Vec<(Vec<Move>, usize)> = vec![(Vec::new(), 0); nodes];
        for mv in s.moves {
            by_node[mv.to as usize].0.push(mv);
        }
        Replay {
            initial: s.initial,
            by_node,
        }
    }
}

impl Policy for Replay {
    fn name(&self) -> &'static str {
        "oracle-replay"
    }

    fn replicates(&self) -> bool {
        false
    }

    fn initial_placement(&mut self, _: &Machine, vpn: Vpn, _: Option<NodeId>) -> Option<NodeId> {
        self.initial.get(vpn.idx()).copied().flatten().map(NodeId)
    }

    fn daemons(&self, _machine: &Machine) -> Vec<DaemonSpec> {
        self.by_node
            .iter()
            .enumerate()
            .filter_map(|(n, (moves, _))| {
                moves.first().map(|first| DaemonSpec {
                    name: format!("replay-{n}"),
                    placement: DaemonPlacement::StealOn(NodeId(n as u16)),
                    first_wake: Ns(first.time),
                })
            })
            .collect()
    }

    fn on_daemon(&mut self, ctx: &mut dyn Mm, id: usize) -> DaemonNext {
        // Daemon `id` is the id-th node with moves (as listed by `daemons`).
        let Some(node) = self
            .by_node
            .iter()
            .enumerate()
            .filter(|(_, (m, _))| !m.is_empty())
            .map(|(n, _)| n)
            .nth(id)
        else {
            return DaemonNext::Stop;
        };
        let now = ctx.now().0;
        let (moves, done) = &mut self.by_node[node];
        while let Some(mv) = moves.get(*done) {
            if mv.time > now {
                break;
            }
            let vpn = Vpn(mv.vpn);
            if (vpn.idx()) < ctx.npages() && ctx.page(vpn).copies.len() == 1 {
                // A full node refuses the move; the page then stays where it is.
                let _ = ctx.migrate(vpn, NodeId(mv.to));
            }
            *done += 1;
        }
        match moves.get(*done) {
            Some(next) => {
                let ready = now.saturating_add(ctx.cost().0);
                DaemonNext::After(Ns(next.time.saturating_sub(ready).max(1)))
            }
            None => DaemonNext::Stop,
        }
    }
}
