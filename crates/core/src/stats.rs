//! Statistics: plain counter structs, filled by the engine and the action API. Formatting
//! lives in the harness.

use crate::types::{NodeId, Ns};
use numaplace_derive::Counters;
use serde::{Deserialize, Serialize};

/// One counter of a statistics struct, as `#[derive(Counters)]` lists them: what the
/// JSON record, the text table and CSV columns are made from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counter {
    /// Field name (the JSON key).
    pub name: &'static str,
    /// Label for tables.
    pub label: &'static str,
    /// The value.
    pub value: u64,
}

/// References by where they were served.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Counters)]
pub struct RefCounts {
    /// Served by the referencing node's own module.
    pub local: u64,
    /// Served by another node's module.
    pub remote: u64,
    /// Reads of replicated pages served from a node's cache (TC2000-style machines).
    pub cached: u64,
    /// All references: local + remote + cached.
    pub total: u64,
}

impl RefCounts {
    /// Adds `count` references of one class.
    #[inline]
    pub fn add(&mut self, class: RefClass, count: u64) {
        match class {
            RefClass::Local => self.local += count,
            RefClass::Remote => self.remote += count,
            RefClass::Cached => self.cached += count,
        }
        self.total += count;
    }
}

/// Where one reference was served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefClass {
    /// Local module.
    Local,
    /// Remote module.
    Remote,
    /// Local cache of a replicated page.
    Cached,
}

/// Counters of page-placement events. Each is a top-level key of the JSON record, a row
/// of the text summary and a column of each series point: declare a counter here and
/// count it where it happens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Counters)]
pub struct EventCounts {
    /// Page faults taken by user threads.
    pub faults: u64,
    /// Pages migrated.
    pub migrations: u64,
    /// Copies made by replication.
    pub replications: u64,
    /// Writes to replicated pages that invalidated other copies.
    pub coherency_faults: u64,
    /// Mappings invalidated or restricted on other nodes (shootdowns).
    pub invalidations: u64,
    /// Pages frozen.
    pub freezes: u64,
    /// Frozen pages thawed (defrosted).
    pub defrosts: u64,
    /// Migrations or replications refused because the target node had no free frame.
    #[counter(label = "refused (no frame)")]
    pub refused: u64,
}

/// One thread's outcome.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadStats {
    /// Global thread id.
    pub id: u32,
    /// Index of the program it belongs to.
    pub program: u32,
    /// Node it ran on at the end.
    pub node: u16,
    /// Simulated time at which it finished (ns).
    pub completion_ns: u64,
    /// Its references.
    pub refs: RefCounts,
    /// Faults it took.
    pub faults: u64,
    /// Time spent waiting at barriers and locks (ns).
    pub sync_wait_ns: u64,
    /// Time spent waiting for page-table entries locked by a daemon (ns).
    pub pte_wait_ns: u64,
    /// Time spent queueing at busy memory modules (ns).
    pub contention_wait_ns: u64,
    /// Time spent in fault handling and the actions it triggered (ns).
    pub fault_ns: u64,
    /// Time spent waiting for another fault on the same page to be handled (ns).
    pub fault_wait_ns: u64,
    /// How long after its program's start it started: its start skew (ns; run-to-run
    /// variation).
    pub start_skew_ns: u64,
    /// Time clock interrupts took from it (ns; run-to-run variation).
    pub interrupt_ns: u64,
}

/// One program's outcome (a multiprogrammed run has several; each is its threads'
/// totals and its own times).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramStats {
    /// The program's name (its workload).
    pub name: String,
    /// Its threads (global ids `first_thread ..`).
    pub threads: u32,
    /// Global id of its first thread.
    pub first_thread: u32,
    /// Pages of its address space (the run's pages `first_vpn ..`).
    pub pages: u64,
    /// The run's number of its first page.
    pub first_vpn: u32,
    /// When it started (ns).
    pub start_ns: u64,
    /// When its last thread finished (ns).
    pub completion_ns: u64,
    /// Its turnaround: completion minus start (ns).
    pub turnaround_ns: u64,
    /// Its threads' references.
    pub refs: RefCounts,
    /// Faults its threads took.
    pub faults: u64,
    /// Its threads' time waiting at barriers and locks (ns).
    pub sync_wait_ns: u64,
    /// Its threads' time in fault handling (ns).
    pub fault_ns: u64,
    /// Migrations of its pages.
    pub migrations: u64,
    /// Its pages with a copy at the end (its resident set).
    pub resident_pages: u64,
}

/// Counters over one interval of a run (one program iteration, or one fixed time interval).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// Program whose iteration ended (or `u32::MAX` for fixed-interval points).
    pub program: u32,
    /// Iteration index (0-based) or interval index.
    pub iteration: u32,
    /// Simulated time at the end of the interval (ns).
    pub time_ns: u64,
    /// References during the interval.
    pub refs: RefCounts,
    /// References of the program's own threads since its previous iteration end (at an
    /// iteration end; zero at a fixed-interval point). In a run of one program, the same
    /// as `refs`; with several, what this program did while the others ran too.
    pub program_refs: RefCounts,
    /// Events during the interval.
    pub events: EventCounts,
    /// References to each of the program's arrays since its previous iteration end (with
    /// `report.series_by_array`; empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arrays: Vec<ArrayRefs>,
}

/// References to one array over a series interval.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayRefs {
    /// The array's name, as the workload gives it.
    pub name: String,
    /// References to its pages (local, remote, cached).
    pub refs: RefCounts,
}

/// What happened to one page: the post-mortem report of PLATINUM §4.2, extended.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageReport {
    /// Page number.
    pub vpn: u32,
    /// References served locally, remotely and from cache.
    pub refs: RefCounts,
    /// Faults on the page.
    pub faults: u64,
    /// Time fault handlers spent on the page (ns).
    pub fault_ns: u64,
    /// Faults that found the page's fault handler busy with another fault (contention
    /// in the fault handler, as PLATINUM's post-mortem measured it).
    pub contended_faults: u64,
    /// Time faults waited for the page's fault handler (ns).
    pub fault_wait_ns: u64,
    /// Times it migrated.
    pub migrations: u64,
    /// Copies made of it.
    pub replications: u64,
    /// Coherency faults on it.
    pub coherency_faults: u64,
    /// Times it froze.
    pub freezes: u64,
    /// Total time it spent frozen (ns).
    pub frozen_ns: u64,
    /// Frozen at the end of the run.
    pub frozen_at_end: bool,
    /// When the page froze, while it is frozen: the bookkeeping behind `frozen_ns`.
    #[serde(skip)]
    pub frozen_since: Option<u64>,
    /// Home node at the end of the run.
    pub home: u16,
    /// Number of copies at the end of the run.
    pub copies: u32,
}

/// Everything a run measured.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// Time at which the last thread finished (ns).
    pub makespan_ns: u64,
    /// All references.
    pub refs: RefCounts,
    /// Placement events.
    pub events: EventCounts,
    /// Time daemons spent working (ns).
    pub daemon_busy_ns: u64,
    /// Daemon passes (policy-defined unit of daemon work).
    pub daemon_passes: u64,
    /// Pages in the address space.
    pub npages: u64,
    /// Per-program outcomes, in the run's order.
    pub programs: Vec<ProgramStats>,
    /// Per-thread outcomes.
    pub threads: Vec<ThreadStats>,
    /// Per-interval counters.
    pub series: Vec<SeriesPoint>,
    /// Per-page report (empty unless requested).
    pub pages: Vec<PageReport>,
    /// Simulated operations executed (reference runs, computes, synchronisation): the
    /// engine's unit of work, for throughput measurements.
    pub ops: u64,
    /// The policy's and the programs' own counts at the end of the run
    /// ([`crate::component::Policy::counters`], [`crate::component::Program::counters`]);
    /// empty when they keep none.
    #[serde(skip)]
    pub own_counters: Vec<Counter>,
    /// The run was stopped before every thread finished: the statistics cover the run up
    /// to `makespan_ns` only.
    pub partial: bool,
    /// The run did not finish within its simulated-time budget
    /// ([`crate::EngineOptions::budget`]): it was stopped there (and is `partial`), or it
    /// ended after it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub budget_exceeded: bool,
    /// What the processor caches did, when the machine has them (`refs` then counts
    /// memory accesses: the lines that missed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<crate::cache::CacheStats>,
}

impl Stats {
    /// The program whose address space holds `vpn` (programs are laid out one after
    /// another; their entries exist from the start of the run).
    pub(crate) fn program_of(&mut self, vpn: crate::types::Vpn) -> Option<&mut ProgramStats> {
        let i = self.programs.partition_point(|p| p.first_vpn <= vpn.0);
        self.programs.get_mut(i.checked_sub(1)?)
    }

    /// A mutable page report, when per-page reporting is on.
    #[inline]
    pub(crate) fn page(&mut self, vpn: crate::types::Vpn) -> Option<&mut PageReport> {
        self.pages.get_mut(vpn.idx())
    }

    /// Makespan as [`Ns`].
    pub fn makespan(&self) -> Ns {
        Ns(self.makespan_ns)
    }

    /// Node of thread `t` at the end.
    pub fn thread_node(&self, t: usize) -> NodeId {
        NodeId(self.threads[t].node)
    }
}
