//! The placement-policy interface: small event hooks that do nothing by default, acting
//! through the memory-management mechanism ([`Mm`]), which charges every cost; the default
//! fault handling; and how a policy's configuration builds it (its registry entry).
//!
//! Contract: a policy reads page state and history only through [`Mm`] and changes
//! them only through its actions; it keeps any per-page state of its own in dense arrays
//! indexed by [`Vpn`]. The machine and memory never grow policy-specific fields.

use super::scheduler::Parallel;
use crate::error::ConfigError;
use crate::history::HistoryMode;
use crate::machine::Machine;
use crate::memory::Access;
use crate::mm::{CounterSpec, Mm, MonitorSpec};
use crate::registry::{Component, Describe, Meta, Params};
use crate::stats::Counter;
use crate::tune::{Dim, Space};
use crate::types::{NodeId, Ns, ProcId, ThreadId, Vpn};

/// A fault handed to the policy: a reference found no mapping, or a read-only mapping for a
/// write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The faulting thread.
    pub thread: ThreadId,
    /// Its node.
    pub node: NodeId,
    /// The page.
    pub vpn: Vpn,
    /// Whether the reference was a write.
    pub write: bool,
}

/// Where a daemon runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DaemonPlacement {
    /// On a processor of its own, not used by any thread (Holliday's daemons). The engine
    /// picks the lowest-numbered free processor.
    OwnProcessor,
    /// Stealing time from the first processor of a node (DUnX's per-node scanners): the
    /// processor's thread is delayed while the daemon works.
    StealOn(NodeId),
}

/// A periodic activity a policy asks the engine to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DaemonSpec {
    /// Name for reports.
    pub name: String,
    /// Where it runs.
    pub placement: DaemonPlacement,
    /// When it first wakes.
    pub first_wake: Ns,
}

/// What a daemon does after a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DaemonNext {
    /// Wake again this long after the step's work ends.
    After(Ns),
    /// Never wake again.
    Stop,
}

/// A scheduler event the policy is told of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedEvent {
    /// A thread stopped running.
    Preempted(ThreadId),
    /// A thread started running again on a processor.
    Resumed(ThreadId, ProcId),
    /// A running thread moved to another processor.
    Migrated {
        /// The thread.
        thread: ThreadId,
        /// Where it was.
        from: ProcId,
        /// Where it is now.
        to: ProcId,
    },
}

/// The placement policy interface. Every hook has a default that does nothing (or, for
/// faults, the plain static behaviour), so a policy overrides only what it needs.
pub trait Policy {
    /// The registry name.
    fn name(&self) -> &'static str;

    /// The reference-history mechanism the engine must maintain for this policy.
    fn history(&self) -> HistoryMode {
        HistoryMode::None
    }

    /// Whether the policy takes page-table-entry copies with [`Mm::acquire_pte`]; only
    /// then does the engine keep the user run through each copy that an acquisition
    /// must wait for.
    fn acquires_ptes(&self) -> bool {
        false
    }

    /// Whether the policy may give a page more than one copy. Replicated pages keep a
    /// row of per-node mapping targets while they have copies; the run's memory estimate
    /// counts the most rows that can exist only for policies that may replicate (the
    /// conservative default).
    fn replicates(&self) -> bool {
        true
    }

    /// Bytes of per-page state the policy allocates in `init` (for the run's memory
    /// estimate, which is checked before anything is allocated).
    fn state_bytes_per_page(&self) -> u64 {
        0
    }

    /// Called once before time 0, after initial placement; a policy sizes its per-page
    /// state here (`ctx.npages()`).
    fn init(&mut self, _ctx: &mut dyn Mm) {}

    /// Initial placement of page `vpn` at time 0 (no cost is charged: the papers exclude
    /// initialisation). `hint` is the node the program asks for (program-directed
    /// placement), if any. `None` leaves the page unplaced until its first touch.
    fn initial_placement(
        &mut self,
        _machine: &Machine,
        _vpn: Vpn,
        _hint: Option<NodeId>,
    ) -> Option<NodeId> {
        None
    }

    /// A reference found no suitable mapping. The policy must leave the faulting node
    /// with a mapping that allows the access; whatever it leaves undone the engine
    /// completes with [`default_fault`].
    fn on_fault(&mut self, ctx: &mut dyn Mm, fault: Fault) {
        default_fault(ctx, fault);
    }

    /// Whether the policy's faults get [`default_fault`] and nothing else: true only for
    /// a policy that keeps [`Policy::on_fault`] as it is. The engine then handles them
    /// without calls through `dyn` (a first-touch fault costs the host a few hundred
    /// instructions, and GUPS over gigabytes faults on every eighth reference). Default
    /// false, which is right for every policy.
    fn faults_by_default(&self) -> bool {
        false
    }

    /// The policy's daemons.
    fn daemons(&self, _machine: &Machine) -> Vec<DaemonSpec> {
        Vec::new()
    }

    /// One step of daemon `id`; the work it charges through `ctx` is the daemon's busy time.
    fn on_daemon(&mut self, _ctx: &mut dyn Mm, _id: usize) -> DaemonNext {
        DaemonNext::Stop
    }

    /// A scheduler event.
    fn on_sched_event(&mut self, _ctx: &mut dyn Mm, _event: SchedEvent) {}

    /// A thread entered or left a parallel construct (where a scheduler-aware policy
    /// polls thread states); what the policy does is charged to the thread.
    fn on_parallel(&mut self, _ctx: &mut dyn Mm, _event: Parallel) {}

    /// All threads of `program` finished iteration `iteration`; `construct` is the last
    /// parallel construct the last thread to arrive entered (the iteration's last, for a
    /// program that marks its constructs). The cost of what the policy does is charged to
    /// that thread.
    fn on_iteration_end(
        &mut self,
        _ctx: &mut dyn Mm,
        _program: u32,
        _iteration: u32,
        _construct: Option<u32>,
    ) {
    }

    /// A thread announced a phase change (the DUnX hint).
    fn on_phase_hint(&mut self, _ctx: &mut dyn Mm, _thread: ThreadId) {}

    /// A thread announced that it is about to reference page `vpn` heavily (the
    /// information Holliday's Foresight baseline acts on). What the policy does is charged
    /// to the thread.
    fn on_advise(&mut self, _ctx: &mut dyn Mm, _thread: ThreadId, _vpn: Vpn) {}

    /// Counts of the policy's own, read once at the end of the run (e.g. DUnX's replicas
    /// invalidated); each becomes a top-level key of the run's record. Default: none.
    fn counters(&self) -> Vec<Counter> {
        Vec::new()
    }

    /// The hardware per-page access counters the policy needs (allocated only then).
    /// Default: none.
    fn page_counters(&self) -> Option<CounterSpec> {
        None
    }

    /// The access monitors the policy needs: sampled access records, hinting faults,
    /// per-node bandwidth accounting (each allocated only then, see [`crate::mm`]'s
    /// `monitor`). Default: none.
    fn monitors(&self) -> MonitorSpec {
        MonitorSpec::default()
    }

    /// Page `vpn`'s counters raised an interrupt: node `node`'s accesses exceed the home
    /// node's by the threshold. The cost of what the policy does is charged to the thread
    /// whose reference raised it.
    fn on_counter_interrupt(&mut self, _ctx: &mut dyn Mm, _vpn: Vpn, _node: NodeId) {}
}

/// The plain fault handling every policy can fall back on: place an unplaced page on the
/// faulting node (first touch), resolve a write to a replicated page by the coherency
/// protocol, and map the nearest copy with the rights the access needs.
pub fn default_fault<M: Mm + ?Sized>(ctx: &mut M, f: Fault) {
    if ctx.copy_count(f.vpn) == 0 {
        ctx.place_near(f.vpn, f.node);
    }
    if f.write && ctx.copy_count(f.vpn) > 1 {
        let keep = if ctx.has_copy(f.vpn, f.node) {
            f.node
        } else {
            ctx.home(f.vpn)
        };
        ctx.coherency_fault(f.vpn, keep);
    }
    let access = if f.write { Access::Write } else { Access::Read };
    ctx.map_nearest(f.vpn, f.node, access);
}

/// What a policy's configuration type declares besides its name and description (in
/// [`Describe`]): how to build the policy. A policy registers itself in its own file with
/// `inventory::submit!(PolicyEntry::of::<ItsConfig>())`.
pub trait PolicyParams: Describe {
    /// Builds the policy for `machine`, validating the parameters first.
    fn build(&self, machine: &Machine) -> Result<Box<dyn Policy>, ConfigError>;

    /// The parameters `numaplace tune` searches and the space of each (see
    /// [`crate::tune`]). Default: none (the policy cannot be tuned).
    const SEARCH_SPACE: &'static [Dim] = &[];
}

type BuildFn = fn(&dyn Params, &Machine) -> Result<Box<dyn Policy>, ConfigError>;

/// A policy's registry entry.
pub struct PolicyEntry {
    /// Name, description, fields, defaults and parsing.
    pub meta: Meta,
    /// The constructor.
    pub build: BuildFn,
    /// The parameters a tuner searches ([`PolicyParams::SEARCH_SPACE`]).
    pub search_space: &'static [Dim],
}

fn build_of<C: PolicyParams>(p: &dyn Params, m: &Machine) -> Result<Box<dyn Policy>, ConfigError> {
    let c: &C = p
        .as_any()
        .downcast_ref()
        .expect("an entry builds its own type");
    c.build(m)
}

impl PolicyEntry {
    /// The entry of configuration type `C`.
    pub const fn of<C: PolicyParams>() -> PolicyEntry {
        PolicyEntry {
            meta: Meta::of::<C>(),
            build: build_of::<C>,
            search_space: C::SEARCH_SPACE,
        }
    }
}

crate::registry::family! {
    /// The policy family of the registry.
    Policies: PolicyEntry, PolicyParams, section "policy", default "static"
}

/// A registered policy with its parameters (serialized as a table with `kind`).
pub type PolicyConfig = Component<Policies>;

impl PolicyConfig {
    /// The space a tuner searches for this policy (empty: not tunable).
    pub fn search_space(&self) -> Space {
        Space::new(self.entry().search_space)
    }

    /// Builds the policy for `machine`, its declared ranges checked first (so no
    /// registered policy can skip them).
    pub fn build(&self, machine: &Machine) -> Result<Box<dyn Policy>, ConfigError> {
        self.check_ranges("policy")?;
        (self.entry().build)(self.params(), machine)
    }
}
