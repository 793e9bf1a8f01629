//! `sched-activated`: scheduler-activated dynamic page migration for iterative parallel
//! programs (Nikolopoulos, Polychronopoulos, Papatheodorou, Labarta and Ayguadé, JPDC
//! 2002, sec. 4 and 5).
//!
//! Pages are placed on first touch. A user-level runtime keeps a scheduling state per
//! thread (Figure 4: *running*, *migrated*, *preempted*, *resumed*, with `curr_node`,
//! `prev_node` and a timestamp), polled by each thread at the entry and exit of every
//! parallel construct ([`Policy::on_parallel`]): a thread found on another node than
//! `curr_node` has migrated, one found on its node after a preemption has resumed.
//! Preemptions are inferred as in sec. 5.2: a thread taking part in a construct equalises
//! its virtual timestamp with the master's (the construct's number); at the construct's
//! exit the master marks every thread whose timestamp lags as preempted.
//!
//! At the end of each outer iteration ([`Policy::on_iteration_end`]) the runtime reads the
//! hardware counters of every resident page of the program and applies the criterion of
//! Figure 6 to the iteration's accesses (the counters' increase since the previous
//! iteration end; the counts of the first iteration are the reference): if the home node's
//! count dropped and some remote node's count rose, `k` is the node with the most accesses
//! among those that rose, and the page migrates to `k` when a thread of the program
//! (1) migrated from the home node to `k`, (2) was preempted from the home node, or (3)
//! resumed on `k`, in each case more than `t_thr` ago. Then migrated and resumed threads
//! become running. `t_thr = t_mas`, the time to migrate a thread's memory affinity set:
//! the resident pages over the nodes the program started on, times the machine's cost of
//! one migration (sec. 4.2); `t_thr_ns` overrides it.
//!
//! Optional, off by default as in the paper's experiments: the competitive criterion of
//! sec. 4.3 for pages the default criterion leaves (a remote node's accesses exceed the
//! home node's by a threshold), and counter decay on a thread's migration or preemption
//! (the counters of the node it left are decayed when no other thread of the program runs
//! there). The runtime cannot write the hardware counters, so decay lowers its own view of
//! them: it changes the competitive criterion only (the default criterion compares
//! per-iteration differences, which decay does not change).
//!
//! Migrations are made by a thread of the program (sec. 5.3): when the machine's load is
//! below `overlap_below_load_pct`, a helper thread does them while the program runs (a
//! policy daemon stealing time on the last node with processors, one migration per step,
//! its time the daemon's busy time); otherwise the thread that ends the iteration makes
//! them inline and is charged for them (the master in the paper; in the simulator, the last
//! thread to end the iteration). Reading a page's counters and a thread's scheduling state
//! cost `counter_read_ns` and `state_read_ns`, charged to the thread that reads them.
//!
//! Where the simulator stands in for IRIX: the node a thread runs on is read from the
//! mechanism's thread placement (`schedctl()`'s `t_cpu` in the paper), the counters from
//! the mechanism's hardware counters (the `/proc` ioctls), and the load from the
//! fraction of processors that have a thread of the run (threads waiting for a processor
//! are not visible through the mechanism). The engine's own scheduler events
//! ([`Policy::on_sched_event`]) are ignored: the paper's runtime is not told of
//! preemptions and infers them.
//!
//! Choices where the paper is silent or inconsistent: a thread is *preempted since* the
//! construct it missed began (its first entry by any thread), not since the master's exit
//! noticed it, so that the criterion at that iteration's end can see a preemption of the
//! iteration's last construct; a thread that stays preempted keeps its timestamp (the
//! text: every transition between *different* states is timestamped; Figure 4 would
//! restamp it at every poll and the preemption would never last `t_thr`); the resumed
//! state is entered as Figure 4 enters it, without the text's condition that the
//! preemption lasted `t_thr`; preemptions of an iteration's last construct are inferred at
//! the iteration's end when that comes before the master's exit (the adaptive fork-join
//! driver ends an iteration before its last construct's barrier); the master is the
//! program's first thread; the cost defaults and the load threshold are estimates.
//!
//! Left out: IRIX forwarding a refused migration to a neighbouring node (a refused
//! migration is counted and the page stays), the periodic variant for non-iterative
//! programs (sec. 4.3), and the kernel-side cost of a poll beyond `state_read_ns`.

use crate::component::{Boundary, Parallel};
use crate::component::{DaemonNext, DaemonPlacement, DaemonSpec, Policy};
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::machine::Machine;
use crate::mm::CounterSpec;
use crate::mm::Mm;
use crate::stats::Counter;
use crate::types::{NodeId, NodeSet, Ns, ThreadId, Vpn};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Parameters of `sched-activated`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct SchedActivatedConfig {
    /// The time a thread must stay in a scheduling state before its pages move (ns);
    /// 0: t_mas, the resident pages over the nodes the program started on times the
    /// machine's migration cost (sec. 4.2), recomputed at each iteration end.
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub t_thr_ns: u64,
    /// Cost of reading one page's counters from user level (ns). The paper gives no
    /// figure; default 1,000, an estimate for one /proc ioctl's share.
    #[field(min = 0, max = 1_000_000_000, unit = "ns")]
    pub counter_read_ns: u64,
    /// Cost of reading one thread's scheduling state or timestamp (ns). The paper gives
    /// no figure; default 100, an estimate for a read of schedctl()'s shared page.
    #[field(min = 0, max = 1_000_000_000, unit = "ns")]
    pub state_read_ns: u64,
    /// Also apply the competitive criterion to the pages the default criterion does not
    /// move (sec. 4.3). Off in the paper's experiments.
    pub competitive: bool,
    /// The competitive criterion's threshold: a remote node's accesses (as the runtime
    /// sees the counters, after decay) in excess of the home node's. Not in the paper;
    /// default 256.
    #[field(min = 0, max = 4_294_967_294)]
    pub competitive_threshold: u32,
    /// Decay the counters of the node a thread leaves (migration or preemption) when no
    /// other thread of the program runs there (sec. 4.3). Off in the paper's experiments.
    pub decay: bool,
    /// What a decay subtracts from the node's counters; 4,294,967,295 resets them to 0
    /// (the default; the paper allows either).
    #[field(min = 1, max = 4_294_967_295)]
    pub decay_amount: u32,
    /// Migrations are overlapped on a helper thread when the fraction of the machine's
    /// processors that have a thread is below this (percent), else made inline by the
    /// thread ending the iteration; 0: always inline, 101: always overlapped. The paper
    /// gives no figure; default 75.
    #[field(min = 0, max = 101, unit = "%")]
    pub overlap_below_load_pct: u32,
    /// How often the idle helper thread looks for migrations to make (ns). Default
    /// 1,000,000 (1 ms).
    #[field(min = 1_000, max = crate::TIME_LIMIT, unit = "ns")]
    pub helper_period_ns: u64,
    /// Programs (indices in run order) linked with the runtime; empty: every program.
    pub programs: Vec<u32>,
}

impl Default for SchedActivatedConfig {
    fn default() -> Self {
        SchedActivatedConfig {
            t_thr_ns: 0,
            counter_read_ns: 1_000,
            state_read_ns: 100,
            competitive: false,
            competitive_threshold: 256,
            decay: false,
            decay_amount: u32::MAX,
            overlap_below_load_pct: 75,
            helper_period_ns: 1_000_000,
            programs: Vec::new(),
        }
    }
}

impl crate::registry::Describe for SchedActivatedConfig {
    const KIND: &'static str = "sched-activated";
    const DESCRIPTION: &'static str = "Nikolopoulos et al. 2002: first touch, thread states polled at parallel constructs, pages follow migrated, preempted and resumed threads at iteration ends";
}

impl crate::component::PolicyParams for SchedActivatedConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn Policy>, ConfigError> {
        Ok(Box::new(SchedActivated::new(self.clone(), machine)?))
    }
}

inventory::submit!(crate::component::PolicyEntry::of::<SchedActivatedConfig>());

/// A thread's scheduling state (Figure 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadState {
    /// Runs on `curr_node` (and its pages are taken to be there).
    Running,
    /// Moved from `prev_node` to `curr_node`.
    Migrated,
    /// Stopped running on `curr_node`.
    Preempted,
    /// Runs again on `curr_node` after a preemption.
    Resumed,
}

/// One thread's entry of the runtime's scheduling table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadRecord {
    /// Its state.
    pub state: ThreadState,
    /// The node it ran on before `curr_node`.
    pub prev_node: Option<NodeId>,
    /// The node it runs (or last ran) on; `None` for a thread never seen running.
    pub curr_node: Option<NodeId>,
    /// When it entered its state.
    pub timestamp: Ns,
    /// Its virtual timestamp: the last construct it took part in.
    pub construct: Option<u32>,
    /// When it arrived on `curr_node` by a migration, while that stay has not yet been
    /// counted as lasting over `t_thr` (Tables 2 and 3: "migrations over t_thr").
    pub migrated_at: Option<Ns>,
    /// Whether its current preemption has been counted as lasting over `t_thr`.
    pub long_preemption_counted: bool,
}

/// Why a page migrates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    /// A thread migrated from the home node to `k` (case 1).
    Migrated,
    /// A thread was preempted on the home node (case 2).
    Preempted,
    /// A thread resumed on `k` (case 3).
    Resumed,
    /// The competitive criterion (sec. 4.3).
    Competitive,
}

/// What the runtime knows of one program.
#[derive(Clone, Debug, Default)]
struct ProgState {
    /// The latest construct entered and when it was first entered.
    construct: Option<(u32, Ns)>,
    /// The last construct whose absentees were marked preempted.
    inferred: Option<u32>,
    /// Iteration ends seen.
    iterations: u32,
    /// Nodes the program's threads were first seen on before its first iteration end.
    start_nodes: NodeSet,
}

/// The program's shape: threads and pages.
#[derive(Clone, Copy, Debug)]
struct Shape {
    first_thread: u32,
    threads: u32,
    first_vpn: u32,
    pages: u32,
}

/// The policy.
#[derive(Debug)]
pub struct SchedActivated {
    config: SchedActivatedConfig,
    nodes: usize,
    /// The helper's node (the last node with processors).
    helper_node: NodeId,
    /// Per global thread.
    threads: Vec<Option<ThreadRecord>>,
    progs: Vec<ProgState>,
    /// Per page and node: the counter read at the last iteration end.
    last: Vec<u32>,
    /// Per page and node: the accesses in the previous iteration.
    prev: Vec<u32>,
    /// Per page and node: how much of the counter the runtime's view leaves out (decay);
    /// only with the competitive criterion or decay on.
    base: Vec<u32>,
    /// Per page: its counters restarted since the last iteration end (the helper moved it);
    /// the next iteration end takes its counts as a new reference.
    fresh: Vec<bool>,
    /// Migrations left to the helper thread.
    queue: VecDeque<(Vpn, NodeId, Case)>,
    t_thr: Ns,
    counts: Counts,
}

#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    examined: u64,
    candidates: u64,
    over_thr: u64,
    by_case: [u64; 4],
    failed: u64,
    overlapped: u64,
    to_migrated: u64,
    to_resumed: u64,
    to_running: u64,
    preemptions: u64,
    long_preemptions: u64,
    long_migrations: u64,
    decays: u64,
}

/// Thread `t`'s record slot, the table grown to hold it (a free function, so that the
/// caller can update the policy's counts while it holds the slot).
fn record_slot(threads: &mut Vec<Option<ThreadRecord>>, t: u32) -> &mut Option<ThreadRecord> {
    let i = t as usize;
    if threads.len() <= i {
        threads.resize(i + 1, None);
    }
    &mut threads[i]
}

/// Counts, once each, a preemption of `r` and a stay of `r` on a node it migrated to
/// that have lasted over `t_thr` by `now` (the paper's Tables 2 and 3 count the scheduling
/// changes that last long enough to activate the criterion). Nothing is counted before
/// the first iteration end has fixed `t_thr`.
fn count_long_states(r: &mut ThreadRecord, counts: &mut Counts, now: Ns, t_thr: Ns) {
    if t_thr == Ns::ZERO {
        return;
    }
    if r.state == ThreadState::Preempted
        && !r.long_preemption_counted
        && now.saturating_sub(r.timestamp) > t_thr
    {
        r.long_preemption_counted = true;
        counts.long_preemptions += 1;
    }
    if r.migrated_at
        .is_some_and(|at| now.saturating_sub(at) > t_thr)
    {
        r.migrated_at = None;
        counts.long_migrations += 1;
    }
}

fn case_index(c: Case) -> usize {
    match c {
        Case::Migrated => 0,
        Case::Preempted => 1,
        Case::Resumed => 2,
        Case::Competitive => 3,
    }
}

impl SchedActivated {
    /// The policy with these parameters on `machine`, its ranges checked.
    pub fn new(config: SchedActivatedConfig, machine: &Machine) -> Result<Self, ConfigError> {
        config.check_ranges("policy")?;
        let helper_node = (0..machine.nodes())
            .rev()
            .map(|n| NodeId(n as u16))
            .find(|&n| machine.has_procs(n))
            .ok_or_else(|| ConfigError::new("machine", "no node has processors"))?;
        Ok(SchedActivated {
            config,
            nodes: machine.nodes(),
            helper_node,
            threads: Vec::new(),
            progs: Vec::new(),
            last: Vec::new(),
            prev: Vec::new(),
            base: Vec::new(),
            fresh: Vec::new(),
            queue: VecDeque::new(),
            t_thr: Ns::ZERO,
            counts: Counts::default(),
        })
    }

    /// Thread `t`'s entry of the scheduling table, if it was ever polled or inferred.
    pub fn thread(&self, t: ThreadId) -> Option<ThreadRecord> {
        self.threads.get(t.idx()).copied().flatten()
    }

    /// The `t_thr` of the last iteration end.
    pub fn t_thr(&self) -> Ns {
        self.t_thr
    }

    fn keeps_base(&self) -> bool {
        self.config.competitive || self.config.decay
    }

    fn enabled(&self, program: u32) -> bool {
        self.config.programs.is_empty() || self.config.programs.contains(&program)
    }

    /// Program `program`'s shape; without program entries (a unit test's double), every
    /// thread and page belongs to program 0.
    fn shape(ctx: &dyn Mm, program: u32) -> Option<Shape> {
        let progs = &ctx.stats().programs;
        if progs.is_empty() {
            return (program == 0).then(|| Shape {
                first_thread: 0,
                threads: ctx.thread_nodes().len() as u32,
                first_vpn: 0,
                pages: ctx.npages() as u32,
            });
        }
        let p = progs.get(program as usize)?;
        let end = (u64::from(p.first_vpn) + p.pages).min(ctx.npages() as u64);
        Some(Shape {
            first_thread: p.first_thread,
            threads: p.threads,
            first_vpn: p.first_vpn,
            pages: end.saturating_sub(u64::from(p.first_vpn)) as u32,
        })
    }

    fn prog(&mut self, program: u32) -> &mut ProgState {
        let i = program as usize;
        if self.progs.len() <= i {
            self.progs.resize(i + 1, ProgState::default());
        }
        &mut self.progs[i]
    }

    fn record_mut(&mut self, t: u32) -> &mut Option<ThreadRecord> {
        record_slot(&mut self.threads, t)
    }

    /// Figure 4 for a thread found running on node `n` at `now`.
    fn observe_running(&mut self, ctx: &mut dyn Mm, program: u32, t: u32, n: NodeId) {
        let now = ctx.now();
        let slot = record_slot(&mut self.threads, t);
        let Some(r) = slot else {
            *slot = Some(ThreadRecord {
                state: ThreadState::Running,
                prev_node: None,
                curr_node: Some(n),
                timestamp: now,
                construct: None,
                migrated_at: None,
                long_preemption_counted: false,
            });
            let p = self.prog(program);
            if p.iterations == 0 {
                p.start_nodes.insert(n);
            }
            return;
        };
        let moved = r.curr_node != Some(n);
        if moved || r.state == ThreadState::Preempted {
            count_long_states(r, &mut self.counts, now, self.t_thr);
        }
        let left = match r.state {
            ThreadState::Preempted if !moved => {
                r.state = ThreadState::Resumed;
                r.timestamp = now;
                self.counts.to_resumed += 1;
                return;
            }
            _ if !moved => return,
            // A migration following a preemption: the node was left at the preemption.
            ThreadState::Preempted => None,
            _ => r.curr_node,
        };
        r.state = ThreadState::Migrated;
        r.prev_node = r.curr_node;
        r.curr_node = Some(n);
        r.timestamp = now;
        r.migrated_at = Some(now);
        self.counts.to_migrated += 1;
        if let Some(from) = left {
            self.decay_left(ctx, program, from);
        }
    }

    /// Marks the threads of `program` that did not take part in construct `c` as
    /// preempted (sec. 5.2: the master reads the slaves' timestamps at the exit).
    fn infer_preemptions(&mut self, ctx: &mut dyn Mm, program: u32, c: u32) {
        let Some(shape) = Self::shape(ctx, program) else {
            return;
        };
        let p = self.prog(program);
        if p.inferred.is_some_and(|i| i >= c) {
            return;
        }
        p.inferred = Some(c);
        let since = match p.construct {
            Some((pc, at)) if pc == c => at,
            _ => ctx.now(),
        };
        for t in shape.first_thread + 1..shape.first_thread.saturating_add(shape.threads) {
            ctx.charge(Ns(self.config.state_read_ns));
            let slot = record_slot(&mut self.threads, t);
            let lags = slot.is_none_or(|r| r.construct.is_none_or(|x| x < c));
            if !lags {
                continue;
            }
            let left = match slot {
                Some(r) if r.state == ThreadState::Preempted => continue,
                Some(r) => {
                    // The preemption ends the stay of a migrated thread on its node.
                    count_long_states(r, &mut self.counts, since, self.t_thr);
                    r.migrated_at = None;
                    r.state = ThreadState::Preempted;
                    r.timestamp = since;
                    r.long_preemption_counted = false;
                    r.curr_node
                }
                None => {
                    *slot = Some(ThreadRecord {
                        state: ThreadState::Preempted,
                        prev_node: None,
                        curr_node: None,
                        timestamp: since,
                        construct: None,
                        migrated_at: None,
                        long_preemption_counted: false,
                    });
                    None
                }
            };
            self.counts.preemptions += 1;
            if let Some(from) = left {
                self.decay_left(ctx, program, from);
            }
        }
    }

    /// Sec. 4.3: a thread left node `from`; when no other thread of the program runs
    /// there, the runtime's view of that node's counters of the program's resident pages
    /// is decayed.
    fn decay_left(&mut self, ctx: &mut dyn Mm, program: u32, from: NodeId) {
        if !self.config.decay {
            return;
        }
        let Some(shape) = Self::shape(ctx, program) else {
            return;
        };
        let occupied = (shape.first_thread..shape.first_thread.saturating_add(shape.threads))
            .filter_map(|t| self.thread(ThreadId(t)))
            .any(|r| r.state != ThreadState::Preempted && r.curr_node == Some(from));
        if occupied || self.base.is_empty() {
            return;
        }
        let Some(counters) = ctx.page_counters() else {
            return;
        };
        self.counts.decays += 1;
        for v in shape.first_vpn..shape.first_vpn + shape.pages {
            if ctx.copy_count(Vpn(v)) == 0 {
                continue;
            }
            let i = v as usize * self.nodes + from.idx();
            let raw = counters.get(Vpn(v), from);
            self.base[i] = self.base[i]
                .saturating_add(self.config.decay_amount)
                .min(raw);
        }
    }

    /// `t_thr` for a program with `resident` pages (sec. 4.2), or the override.
    fn threshold(&self, ctx: &dyn Mm, program: u32, resident: u64) -> Ns {
        if self.config.t_thr_ns > 0 {
            return Ns(self.config.t_thr_ns);
        }
        let nodes = self
            .progs
            .get(program as usize)
            .map_or(0, |p| p.start_nodes.len())
            .max(1);
        let per_thread = resident.div_ceil(u64::from(nodes));
        Ns(per_thread.saturating_mul(ctx.machine().migration_cost().0))
    }

    /// The Figure 6 criterion for a page whose home is `h`, with this iteration's
    /// accesses `cur` and the previous iteration's `prev` per node: the node `k` and the
    /// case that moves the page, or why not.
    fn criterion(&self, now: Ns, shape: Shape, h: NodeId, cur: &[u32], prev: &[u32]) -> Verdict {
        if cur[h.idx()] >= prev[h.idx()] {
            return Verdict::Stays;
        }
        let k = (0..cur.len())
            .filter(|&j| j != h.idx() && cur[j] > prev[j])
            .max_by(|&a, &b| cur[a].cmp(&cur[b]).then(b.cmp(&a)));
        let Some(k) = k else {
            return Verdict::Stays;
        };
        let k = NodeId(k as u16);
        let elapsed = |r: &ThreadRecord| now.saturating_sub(r.timestamp) > self.t_thr;
        let records = (shape.first_thread..shape.first_thread.saturating_add(shape.threads))
            .filter_map(|t| self.thread(ThreadId(t)));
        let mut found = [false; 3];
        for r in records.filter(elapsed) {
            match r.state {
                ThreadState::Migrated if r.prev_node == Some(h) && r.curr_node == Some(k) => {
                    found[0] = true
                }
                ThreadState::Preempted if r.curr_node == Some(h) => found[1] = true,
                ThreadState::Resumed if r.curr_node == Some(k) => found[2] = true,
                _ => {}
            }
        }
        let case = [Case::Migrated, Case::Preempted, Case::Resumed]
            .into_iter()
            .zip(found)
            .find(|&(_, f)| f)
            .map(|(c, _)| c);
        match case {
            Some(c) => Verdict::Move(k, c),
            None => Verdict::Candidate,
        }
    }

    /// Moves `vpn` to `to` now (inline) and keeps the runtime's view of its counters.
    fn migrate_now(&mut self, ctx: &mut dyn Mm, vpn: Vpn, to: NodeId, case: Case) -> bool {
        if ctx.copy_count(vpn) != 1 || ctx.home(vpn) == to {
            return false;
        }
        match ctx.migrate(vpn, to) {
            Ok(()) => {
                self.counts.by_case[case_index(case)] += 1;
                let row = vpn.idx() * self.nodes..(vpn.idx() + 1) * self.nodes;
                self.last[row.clone()].fill(0);
                if !self.base.is_empty() {
                    self.base[row].fill(0);
                }
                true
            }
            Err(_) => {
                self.counts.failed += 1;
                false
            }
        }
    }

    /// Whether migrations go to the helper thread now (sec. 5.3).
    fn overlap(&self, ctx: &dyn Mm) -> bool {
        let procs = ctx.machine().procs() as u64;
        if self.config.overlap_below_load_pct == 0 || procs == 0 {
            return false;
        }
        let running = ctx.thread_nodes().iter().filter(|n| n.is_some()).count() as u64;
        running * 100 < u64::from(self.config.overlap_below_load_pct) * procs
    }
}

/// The criterion's answer for one page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// Home count did not drop, or no remote count rose.
    Stays,
    /// A candidate, but no thread's state has lasted `t_thr` in a matching case.
    Candidate,
    /// Migrate to the node for the case.
    Move(NodeId, Case),
}

impl Policy for SchedActivated {
    fn name(&self) -> &'static str {
        "sched-activated"
    }

    fn faults_by_default(&self) -> bool {
        true
    }

    fn replicates(&self) -> bool {
        false
    }

    fn state_bytes_per_page(&self) -> u64 {
        let rows = if self.keeps_base() { 3 } else { 2 };
        (self.nodes as u64) * 4 * rows + 1
    }

    fn page_counters(&self) -> Option<CounterSpec> {
        Some(CounterSpec {
            threshold: None,
            programs: self.config.programs.clone(),
            // The runtime reads IRIX's extended counters (refcnt(5)): the kernel moves a
            // hardware count into software before it pegs, so they do not saturate.
            saturate_at: None,
        })
    }

    fn init(&mut self, ctx: &mut dyn Mm) {
        let n = ctx.npages() * self.nodes;
        self.last = vec![0; n];
        self.prev = vec![0; n];
        if self.keeps_base() {
            self.base = vec![0; n];
        }
        self.fresh = vec![false; ctx.npages()];
        self.threads = vec![None; ctx.thread_nodes().len()];
    }

    fn daemons(&self, _machine: &Machine) -> Vec<DaemonSpec> {
        if self.config.overlap_below_load_pct == 0 {
            return Vec::new();
        }
        vec![DaemonSpec {
            name: "page migration helper".into(),
            placement: DaemonPlacement::StealOn(self.helper_node),
            first_wake: Ns(self.config.helper_period_ns),
        }]
    }

    fn on_daemon(&mut self, ctx: &mut dyn Mm, _id: usize) -> DaemonNext {
        if let Some((vpn, to, case)) = self.queue.pop_front() {
            if self.migrate_now(ctx, vpn, to, case) {
                self.counts.overlapped += 1;
                if let Some(f) = self.fresh.get_mut(vpn.idx()) {
                    *f = true;
                }
            }
        }
        if self.queue.is_empty() {
            DaemonNext::After(Ns(self.config.helper_period_ns))
        } else {
            DaemonNext::After(Ns::ZERO)
        }
    }

    fn on_parallel(&mut self, ctx: &mut dyn Mm, ev: Parallel) {
        if !self.enabled(ev.program) {
            return;
        }
        let Some(shape) = Self::shape(ctx, ev.program) else {
            return;
        };
        let Some(&Some(n)) = ctx.thread_nodes().get(ev.thread.idx()) else {
            return;
        };
        ctx.charge(Ns(self.config.state_read_ns));
        self.observe_running(ctx, ev.program, ev.thread.0, n);
        if let Some(r) = self.record_mut(ev.thread.0) {
            r.construct = Some(r.construct.map_or(ev.construct, |c| c.max(ev.construct)));
        }
        let now = ctx.now();
        let p = self.prog(ev.program);
        if ev.boundary == Boundary::Enter && p.construct.is_none_or(|(c, _)| c < ev.construct) {
            p.construct = Some((ev.construct, now));
        }
        if ev.boundary == Boundary::Exit && ev.thread.0 == shape.first_thread {
            self.infer_preemptions(ctx, ev.program, ev.construct);
        }
    }

    fn on_iteration_end(
        &mut self,
        ctx: &mut dyn Mm,
        program: u32,
        _iteration: u32,
        construct: Option<u32>,
    ) {
        if !self.enabled(program) {
            return;
        }
        let Some(shape) = Self::shape(ctx, program) else {
            return;
        };
        // The iteration's last construct, whose exit may come after this end.
        if let Some(c) = construct {
            self.infer_preemptions(ctx, program, c);
        }
        let first = self.prog(program).iterations == 0;
        let pages = shape.first_vpn..shape.first_vpn + shape.pages;
        let resident = pages
            .clone()
            .filter(|&v| ctx.copy_count(Vpn(v)) > 0)
            .count() as u64;
        self.t_thr = self.threshold(ctx, program, resident);
        let overlap = self.overlap(ctx);
        let now = ctx.now();
        for t in shape.first_thread..shape.first_thread.saturating_add(shape.threads) {
            if let Some(Some(r)) = self.threads.get_mut(t as usize) {
                count_long_states(r, &mut self.counts, now, self.t_thr);
            }
        }
        let nodes = self.nodes;
        let mut cur = vec![0u32; nodes];
        let mut raw = vec![0u32; nodes];
        for v in pages {
            let vpn = Vpn(v);
            if ctx.copy_count(vpn) == 0 || ctx.page_counters().is_none() {
                continue;
            }
            ctx.charge(Ns(self.config.counter_read_ns));
            self.counts.examined += 1;
            let row = v as usize * nodes..(v as usize + 1) * nodes;
            if let Some(c) = ctx.page_counters() {
                for (n, r) in raw.iter_mut().enumerate() {
                    *r = c.get(vpn, NodeId(n as u16));
                }
            }
            for ((c, &r), &l) in cur.iter_mut().zip(&raw).zip(&self.last[row.clone()]) {
                // A counter below its last reading restarted (a new frame).
                *c = if r >= l { r - l } else { r };
            }
            let reference = first || std::mem::take(&mut self.fresh[v as usize]);
            let verdict = if reference || ctx.copy_count(vpn) != 1 {
                Verdict::Stays
            } else {
                self.criterion(now, shape, ctx.home(vpn), &cur, &self.prev[row.clone()])
            };
            self.prev[row.clone()].copy_from_slice(&cur);
            self.last[row.clone()].copy_from_slice(&raw);
            let mut moved = None;
            match verdict {
                Verdict::Move(k, case) => {
                    self.counts.candidates += 1;
                    self.counts.over_thr += 1;
                    moved = Some((k, case));
                }
                Verdict::Candidate => self.counts.candidates += 1,
                Verdict::Stays => {}
            }
            if moved.is_none() && self.config.competitive && !reference {
                let h = ctx.home(vpn).idx();
                let seen = |n: usize| raw[n].saturating_sub(self.base[v as usize * nodes + n]);
                let local = seen(h);
                let best = (0..nodes)
                    .filter(|&n| n != h)
                    .max_by(|&a, &b| seen(a).cmp(&seen(b)).then(b.cmp(&a)));
                if let Some(r) = best {
                    if seen(r).saturating_sub(local) > self.config.competitive_threshold {
                        moved = Some((NodeId(r as u16), Case::Competitive));
                    }
                }
            }
            if let Some((k, case)) = moved {
                if overlap {
                    self.queue.push_back((vpn, k, case));
                } else {
                    self.migrate_now(ctx, vpn, k, case);
                }
            }
        }
        for t in shape.first_thread..shape.first_thread.saturating_add(shape.threads) {
            if let Some(Some(r)) = self.threads.get_mut(t as usize) {
                if matches!(r.state, ThreadState::Migrated | ThreadState::Resumed) {
                    r.state = ThreadState::Running;
                    self.counts.to_running += 1;
                }
            }
        }
        self.prog(program).iterations += 1;
    }

    fn counters(&self) -> Vec<Counter> {
        let c = &self.counts;
        let counter = |name, label, value| Counter { name, label, value };
        vec![
            counter(
                "sa_pages_examined",
                "pages examined at iteration ends",
                c.examined,
            ),
            counter(
                "sa_candidates",
                "pages whose home count dropped while a remote count rose",
                c.candidates,
            ),
            counter(
                "sa_candidates_over_thr",
                "candidates with a thread in a matching state for over t_thr",
                c.over_thr,
            ),
            counter(
                "sa_migrations_migrated",
                "pages moved after a thread migration (case 1)",
                c.by_case[0],
            ),
            counter(
                "sa_migrations_preempted",
                "pages moved after a thread preemption (case 2)",
                c.by_case[1],
            ),
            counter(
                "sa_migrations_resumed",
                "pages moved after a thread resumed (case 3)",
                c.by_case[2],
            ),
            counter(
                "sa_migrations_competitive",
                "pages moved by the competitive criterion",
                c.by_case[3],
            ),
            counter("sa_migrations_failed", "migrations refused", c.failed),
            counter(
                "sa_migrations_overlapped",
                "migrations made by the helper thread",
                c.overlapped,
            ),
            counter(
                "sa_preemptions_inferred",
                "threads marked preempted (timestamp behind the master's)",
                c.preemptions,
            ),
            counter(
                "sa_long_preemptions",
                "inferred preemptions that lasted over t_thr",
                c.long_preemptions,
            ),
            counter("sa_to_migrated", "threads found migrated", c.to_migrated),
            counter(
                "sa_long_migrations",
                "thread migrations whose stay on the new node lasted over t_thr",
                c.long_migrations,
            ),
            counter("sa_to_resumed", "threads found resumed", c.to_resumed),
            counter(
                "sa_to_running",
                "migrated or resumed threads made running",
                c.to_running,
            ),
            counter("sa_decays", "counter decays of a node left", c.decays),
            counter(
                "sa_t_thr_ns",
                "t_thr at the last iteration end (ns)",
                self.t_thr.0,
            ),
        ]
    }
}

#[cfg(test)]
#[path = "tests/sched_activated.rs"]
mod tests;
