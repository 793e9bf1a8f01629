//! `platinum`: the interim replication policy of PLATINUM's coherent memory (Cox & Fowler,
//! SOSP 1989, §4.2).
//!
//! On a fault the page is replicated (read miss) or migrated (write miss) by the coherent
//! memory mechanism of the core ([`Mm::coherent_read_miss`], [`Mm::coherent_write_miss`]),
//! unless the page's last invalidation by the coherency protocol lies less than `t1` in the
//! past: then the page is *frozen*, kept as its single physical copy and mapped remotely
//! by everyone else. Every `t2` a defrost daemon invalidates all mappings of the frozen
//! pages and thaws them, so their next faults may replicate or migrate them again.
//!
//! §4.2 describes two ways of treating a fault on a frozen page after `t1` has expired:
//! the default keeps mapping it remotely until the daemon thaws it; the alternative thaws
//! it at that fault, so it may be replicated or migrated at once. Both are here
//! (`thaw_on_access`).

use super::{DaemonNext, DaemonPlacement, DaemonSpec, Fault, Mm, Policy};
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::machine::Machine;
use crate::memory::Access;
use crate::types::{NodeId, Ns, Vpn};
use serde::{Deserialize, Serialize};

/// Parameters of `platinum`, with the paper's settings as defaults.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct PlatinumConfig {
    /// Freeze window: a fault on a page invalidated less than `t1_ns` ago freezes it.
    /// Default 10 ms ("t1 is currently set to 10 ms"; applications were insensitive from
    /// 10 to about 100 ms).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub t1_ns: u64,
    /// Defrost period: the daemon thaws every frozen page each `t2_ns`. Default 1 s
    /// ("t2 is currently set to 1 second"); 0 disables the defrost daemon (pages frozen
    /// for good, as before thawing was added to the kernel).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub t2_ns: u64,
    /// The alternative thaw policy of §4.2: a fault on a frozen page at least `t1_ns`
    /// after it froze thaws it and may replicate or migrate it. Default false (the
    /// default policy: stay frozen until the daemon runs).
    pub thaw_on_access: bool,
    /// The node whose first processor the defrost daemon interrupts (a clock interrupt
    /// steals time there). Default 0.
    #[field(min = 0, max = 63)]
    pub daemon_node: u16,
}

impl Default for PlatinumConfig {
    fn default() -> Self {
        PlatinumConfig {
            t1_ns: 10_000_000,
            t2_ns: 1_000_000_000,
            thaw_on_access: false,
            daemon_node: 0,
        }
    }
}

impl crate::registry::Describe for PlatinumConfig {
    const KIND: &'static str = "platinum";
    const DESCRIPTION: &'static str = "PLATINUM coherent memory: replicate on read miss, migrate on write miss, freeze if invalidated within t1, defrost every t2 (Cox & Fowler 1989)";
}

impl crate::policy::PolicyParams for PlatinumConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn crate::policy::Policy>, ConfigError> {
        Ok(Box::new(PlatinumPolicy::new(self.clone(), machine)?))
    }
}

inventory::submit!(crate::policy::PolicyEntry::of::<PlatinumConfig>());

/// The policy.
#[derive(Debug)]
pub struct PlatinumPolicy {
    config: PlatinumConfig,
    /// Per page, indexed by page number; sized in `init`.
    pages: Vec<PageMeta>,
}

/// What PLATINUM remembers of a page (the mechanism knows nothing of freezing).
#[derive(Clone, Copy, Debug, Default)]
struct PageMeta {
    /// When the page froze, while it is frozen.
    frozen_since: Option<Ns>,
    /// When the coherency protocol last invalidated other nodes' copies or mappings
    /// (the defrost daemon's invalidations do not count).
    last_invalidation: Option<Ns>,
}

/// Shortest defrost period accepted (ns).
pub const MIN_DEFROST_PERIOD_NS: u64 = 1_000;

impl PlatinumPolicy {
    /// A `platinum` policy for `machine`.
    pub fn new(config: PlatinumConfig, machine: &Machine) -> Result<PlatinumPolicy, ConfigError> {
        config.check_ranges("policy")?;
        if config.daemon_node as usize >= machine.nodes() {
            return Err(ConfigError::new(
                "policy.daemon_node",
                format!(
                    "node {} does not exist (the machine has {})",
                    config.daemon_node,
                    machine.nodes()
                ),
            ));
        }
        // A defrost daemon waking more often than once a microsecond is below any
        // machine's interrupt cost and would turn the run into daemon wake-ups.
        if config.t2_ns != 0 && config.t2_ns < MIN_DEFROST_PERIOD_NS {
            return Err(ConfigError::new(
                "policy.t2_ns",
                format!(
                    "{} ns: the defrost period is 0 (no daemon) or at least {MIN_DEFROST_PERIOD_NS} ns",
                    config.t2_ns
                ),
            ));
        }
        Ok(PlatinumPolicy {
            config,
            pages: Vec::new(),
        })
    }

    /// Since when `vpn` is frozen, if it is.
    pub fn frozen_since(&self, vpn: Vpn) -> Option<Ns> {
        self.pages[vpn.idx()].frozen_since
    }

    /// When the coherency protocol last invalidated other copies or mappings of `vpn`.
    pub fn last_invalidation(&self, vpn: Vpn) -> Option<Ns> {
        self.pages[vpn.idx()].last_invalidation
    }

    /// Whether `vpn` was invalidated by the coherency protocol less than `t1` before now.
    fn recently_invalidated(&self, ctx: &dyn Mm, vpn: Vpn) -> bool {
        match self.last_invalidation(vpn) {
            Some(at) => (ctx.now() - at).0 < self.config.t1_ns,
            None => false,
        }
    }

    fn freeze(&mut self, ctx: &mut dyn Mm, vpn: Vpn) {
        self.pages[vpn.idx()].frozen_since = Some(ctx.now());
        ctx.freeze(vpn);
    }

    fn thaw(&mut self, ctx: &mut dyn Mm, vpn: Vpn) {
        self.pages[vpn.idx()].frozen_since = None;
        ctx.thaw(vpn);
    }

    /// Maps the single copy of a frozen page on `node` with the rights the access needs.
    /// A frozen page has one copy (invalidation leaves one, and nothing replicates it
    /// while frozen); should it have several, a write first invalidates the others.
    fn map_frozen(&mut self, ctx: &mut dyn Mm, f: Fault) {
        let access = if f.write { Access::Write } else { Access::Read };
        if f.write && ctx.page(f.vpn).copies.len() > 1 {
            let keep = ctx
                .nearest_copy(f.vpn, f.node)
                .unwrap_or(ctx.page(f.vpn).home);
            ctx.coherency_fault(f.vpn, keep);
            self.pages[f.vpn.idx()].last_invalidation = Some(ctx.now());
        }
        ctx.map_nearest(f.vpn, f.node, access);
    }
}

impl Policy for PlatinumPolicy {
    fn name(&self) -> &'static str {
        "platinum"
    }

    fn state_bytes_per_page(&self) -> u64 {
        std::mem::size_of::<PageMeta>() as u64
    }

    fn init(&mut self, ctx: &mut dyn Mm) {
        self.pages = vec![PageMeta::default(); ctx.npages()];
    }

    fn on_fault(&mut self, ctx: &mut dyn Mm, f: Fault) {
        if ctx.page(f.vpn).copies.is_empty() {
            // First touch: the page's first physical copy is on the toucher's node.
            ctx.place_near(f.vpn, f.node);
        }
        if let Some(since) = self.frozen_since(f.vpn) {
            let expired = (ctx.now() - since).0 >= self.config.t1_ns;
            if self.config.thaw_on_access && expired {
                self.thaw(ctx, f.vpn);
            } else {
                self.map_frozen(ctx, f);
                return;
            }
        }
        if self.recently_invalidated(ctx, f.vpn) {
            self.freeze(ctx, f.vpn);
            self.map_frozen(ctx, f);
            return;
        }
        let done = if f.write {
            ctx.coherent_write_miss(f.vpn, f.node).map(|invalidated| {
                if invalidated {
                    self.pages[f.vpn.idx()].last_invalidation = Some(ctx.now());
                }
            })
        } else if ctx.page(f.vpn).copies.contains(f.node) {
            ctx.map_to(f.vpn, f.node, f.node, Access::Read)
        } else {
            ctx.coherent_read_miss(f.vpn, f.node)
        };
        if done.is_err() {
            // No free frame here: use a remote copy, as a frozen page would be used.
            self.map_frozen(ctx, f);
        }
    }

    fn daemons(&self, _machine: &Machine) -> Vec<DaemonSpec> {
        if self.config.t2_ns == 0 {
            return Vec::new();
        }
        vec![DaemonSpec {
            name: "defrost".into(),
            placement: DaemonPlacement::StealOn(NodeId(self.config.daemon_node)),
            first_wake: Ns(self.config.t2_ns),
        }]
    }

    fn on_daemon(&mut self, ctx: &mut dyn Mm, _id: usize) -> DaemonNext {
        ctx.count_daemon_pass();
        for v in 0..ctx.npages() as u32 {
            let vpn = Vpn(v);
            if self.frozen_since(vpn).is_some() {
                // Invalidating every mapping makes the next access fault, so the page
                // may be replicated or migrated again (a daemon's invalidation is not
                // the coherency protocol's, so it does not count towards t1).
                let mapped = ctx.page(vpn).mapped;
                ctx.invalidate_mappings(vpn, mapped);
                self.thaw(ctx, vpn);
            }
        }
        DaemonNext::After(Ns(self.config.t2_ns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::HistoryMode;
    use crate::machine::MachineConfig;
    use crate::memory::Mapping;
    use crate::mm::{test_machine_config, Action, Recording};
    use crate::types::{NodeSet, ThreadId};

    const T1: u64 = 10_000;
    const T2: u64 = 1_000_000;

    fn config() -> PlatinumConfig {
        PlatinumConfig {
            t1_ns: T1,
            t2_ns: T2,
            ..PlatinumConfig::default()
        }
    }

    /// `config` over `npages` unplaced pages of the unit-test machine with `nodes` nodes
    /// of `frames` frames (costs: replication 800 + 16 words at 2, shootdown 30).
    fn setup(
        nodes: u16,
        frames: u32,
        npages: usize,
        config: PlatinumConfig,
    ) -> (PlatinumPolicy, Recording) {
        let machine = Machine::new(MachineConfig {
            frames_per_node: frames,
            ..test_machine_config(nodes)
        })
        .unwrap();
        let rec = Recording::new(machine, npages, HistoryMode::None);
        let mut rec = rec;
        let mut policy = PlatinumPolicy::new(config, rec.machine()).unwrap();
        policy.init(&mut rec);
        (policy, rec)
    }

    /// Hands `policy` a fault by node `node`'s thread, run on that node as the engine
    /// runs it.
    fn fault(policy: &mut PlatinumPolicy, rec: &mut Recording, node: u16, vpn: u32, write: bool) {
        rec.actor = NodeId(node);
        let f = Fault {
            thread: ThreadId(node.into()),
            node: NodeId(node),
            vpn: Vpn(vpn),
            write,
        };
        policy.on_fault(rec, f);
    }

    fn mapped(target: u16, access: Access) -> Mapping {
        Mapping {
            target: NodeId(target),
            access,
        }
    }

    /// Page 0 first touched by node 0, replicated by a read on node 1, then written by
    /// node 0 at `at` (the coherency protocol invalidates node 1's copy): one copy on
    /// node 0, mapped writable there. All through the policy, which records the
    /// invalidation.
    fn invalidated_at(policy: &mut PlatinumPolicy, rec: &mut Recording, at: u64) {
        rec.now = Ns(at);
        fault(policy, rec, 0, 0, false);
        fault(policy, rec, 1, 0, false);
        fault(policy, rec, 0, 0, true);
        assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(0)));
        rec.clear();
    }

    /// Page 0 invalidated at 1 us and frozen by node 1's read fault at 2 us (within t1),
    /// its copy on node 0.
    fn frozen(policy: &mut PlatinumPolicy, rec: &mut Recording) {
        invalidated_at(policy, rec, 1_000);
        rec.now = Ns(2_000);
        fault(policy, rec, 1, 0, false);
        assert_eq!(policy.frozen_since(Vpn(0)), Some(Ns(2_000)));
        rec.clear();
    }

    #[test]
    fn a_first_touch_places_the_page_on_the_faulting_node_and_maps_it_there() {
        let (mut policy, mut rec) = setup(2, 8, 1, config());
        fault(&mut policy, &mut rec, 1, 0, false);
        assert_eq!(
            rec.actions(),
            [
                Action::PlaceNear(Vpn(0), NodeId(1)),
                Action::MapTo(Vpn(0), NodeId(1), NodeId(1), Access::Read),
            ]
        );
        assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(1)));
        assert_eq!(rec.mapping(Vpn(0), NodeId(1)), mapped(1, Access::Read));
    }

    #[test]
    fn a_read_fault_on_a_remote_page_replicates_it_and_maps_the_local_copy() {
        let (mut policy, mut rec) = setup(2, 8, 1, config());
        let (v, n0) = (Vpn(0), NodeId(0));
        rec.place(v, n0).unwrap();
        rec.map_to(v, n0, n0, Access::Write).unwrap();
        rec.clear();
        fault(&mut policy, &mut rec, 1, 0, false);
        assert_eq!(rec.actions(), [Action::CoherentReadMiss(v, NodeId(1))]);
        let copies: Vec<NodeId> = rec.page(v).copies.iter().collect();
        assert_eq!(copies, [NodeId(0), NodeId(1)]);
        assert_eq!(rec.mapping(v, NodeId(1)), mapped(1, Access::Read));
        assert_eq!(
            rec.mapping(v, n0),
            mapped(0, Access::Read),
            "the writer is restricted to read-only first"
        );
        // Replication (800 + 16 words at 2) and the writer's shootdown (30).
        assert_eq!(rec.cost(), Ns(800 + 32 + 30));
    }

    #[test]
    fn a_read_fault_on_a_node_without_a_free_frame_maps_a_remote_copy() {
        let (mut policy, mut rec) = setup(2, 1, 2, config());
        rec.place(Vpn(0), NodeId(0)).unwrap();
        rec.place(Vpn(1), NodeId(1)).unwrap(); // node 1's only frame
        rec.clear();
        fault(&mut policy, &mut rec, 1, 0, false);
        assert_eq!(
            rec.actions(),
            [
                Action::CoherentReadMiss(Vpn(0), NodeId(1)),
                Action::MapNearest(Vpn(0), NodeId(1), Access::Read),
            ]
        );
        assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(0)));
        assert_eq!(rec.mapping(Vpn(0), NodeId(1)), mapped(0, Access::Read));
        assert!(policy.frozen_since(Vpn(0)).is_none(), "refused, not frozen");
    }

    #[test]
    fn a_write_fault_on_a_replicated_page_invalidates_the_other_copies() {
        let (mut policy, mut rec) = setup(2, 8, 1, config());
        let (v, n0, n1) = (Vpn(0), NodeId(0), NodeId(1));
        rec.place(v, n0).unwrap();
        rec.map_to(v, n0, n0, Access::Read).unwrap();
        rec.replicate(v, n1).unwrap();
        rec.map_to(v, n1, n1, Access::Read).unwrap();
        rec.now = Ns(5_000);
        rec.clear();
        fault(&mut policy, &mut rec, 1, 0, true);
        assert_eq!(rec.actions(), [Action::CoherentWriteMiss(v, n1)]);
        assert_eq!(rec.page(v).copies, NodeSet::single(n1));
        assert_eq!(rec.mapping(v, n0).access, Access::None);
        assert_eq!(rec.mapping(v, n1), mapped(1, Access::Write));
        assert_eq!(policy.last_invalidation(v), Some(Ns(5_000)));
    }

    #[test]
    fn a_write_fault_on_a_remote_single_copy_migrates_it() {
        let (mut policy, mut rec) = setup(2, 8, 1, config());
        let (v, n0, n1) = (Vpn(0), NodeId(0), NodeId(1));
        rec.place(v, n0).unwrap();
        rec.map_to(v, n0, n0, Access::Write).unwrap();
        rec.clear();
        fault(&mut policy, &mut rec, 1, 0, true);
        assert_eq!(rec.actions(), [Action::CoherentWriteMiss(v, n1)]);
        assert_eq!(rec.page(v).copies, NodeSet::single(n1));
        assert_eq!(rec.page(v).home, n1);
        assert_eq!(rec.mapping(v, n0).access, Access::None);
        assert_eq!(rec.mapping(v, n1), mapped(1, Access::Write));
    }

    #[test]
    fn a_fault_less_than_t1_after_an_invalidation_freezes_the_page_and_maps_it_remotely() {
        let (mut policy, mut rec) = setup(2, 8, 1, config());
        invalidated_at(&mut policy, &mut rec, 1_000);
        rec.now = Ns(1_000 + T1 - 1);
        fault(&mut policy, &mut rec, 1, 0, false);
        assert_eq!(
            rec.actions(),
            [
                Action::Freeze(Vpn(0)),
                Action::MapNearest(Vpn(0), NodeId(1), Access::Read),
            ]
        );
        let page = rec.page(Vpn(0));
        assert_eq!(policy.frozen_since(Vpn(0)), Some(Ns(1_000 + T1 - 1)));
        assert_eq!(page.copies, NodeSet::single(NodeId(0)));
        assert_eq!(rec.mapping(Vpn(0), NodeId(1)).target, NodeId(0));
    }

    #[test]
    fn a_fault_t1_after_an_invalidation_replicates_again() {
        let (mut policy, mut rec) = setup(2, 8, 1, config());
        invalidated_at(&mut policy, &mut rec, 1_000);
        rec.now = Ns(1_000 + T1);
        fault(&mut policy, &mut rec, 1, 0, false);
        assert_eq!(rec.actions(), [Action::CoherentReadMiss(Vpn(0), NodeId(1))]);
        assert!(policy.frozen_since(Vpn(0)).is_none());
    }

    #[test]
    fn a_write_fault_on_a_frozen_page_maps_its_copy_writable_where_it_is() {
        let (mut policy, mut rec) = setup(2, 8, 1, config());
        frozen(&mut policy, &mut rec);
        rec.now = Ns(3_000);
        fault(&mut policy, &mut rec, 1, 0, true);
        assert_eq!(
            rec.actions(),
            [Action::MapNearest(Vpn(0), NodeId(1), Access::Write)]
        );
        assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(0)));
        assert_eq!(rec.mapping(Vpn(0), NodeId(1)), mapped(0, Access::Write));
    }

    #[test]
    fn a_frozen_page_stays_frozen_after_t1_until_the_defrost_daemon_thaws_it() {
        let (mut policy, mut rec) = setup(2, 8, 1, config());
        frozen(&mut policy, &mut rec);
        rec.now = Ns(2_000 + 10 * T1);
        fault(&mut policy, &mut rec, 1, 0, false);
        assert_eq!(
            rec.actions(),
            [Action::MapNearest(Vpn(0), NodeId(1), Access::Read)]
        );
        assert!(policy.frozen_since(Vpn(0)).is_some());
        assert_eq!(rec.page(Vpn(0)).copies, NodeSet::single(NodeId(0)));
    }

    #[test]
    fn thaw_on_access_thaws_a_page_frozen_t1_ago_and_replicates_it() {
        let thaw = PlatinumConfig {
            thaw_on_access: true,
            ..config()
        };
        let (mut policy, mut rec) = setup(2, 8, 1, thaw);
        frozen(&mut policy, &mut rec);
        rec.now = Ns(2_000 + T1);
        fault(&mut policy, &mut rec, 1, 0, false);
        assert_eq!(
            rec.actions(),
            [
                Action::Thaw(Vpn(0)),
                Action::CoherentReadMiss(Vpn(0), NodeId(1)),
            ]
        );
        assert!(policy.frozen_since(Vpn(0)).is_none());
        assert_eq!(rec.page(Vpn(0)).copies.len(), 2);
    }

    #[test]
    fn thaw_on_access_keeps_a_page_frozen_less_than_t1_ago_frozen() {
        // t1 has passed since the invalidation (at 1 us) but not since the freeze (2 us).
        let thaw = PlatinumConfig {
            thaw_on_access: true,
            ..config()
        };
        let (mut policy, mut rec) = setup(2, 8, 1, thaw);
        frozen(&mut policy, &mut rec);
        rec.now = Ns(2_000 + T1 - 1);
        fault(&mut policy, &mut rec, 1, 0, false);
        assert_eq!(
            rec.actions(),
            [Action::MapNearest(Vpn(0), NodeId(1), Access::Read)]
        );
        assert!(policy.frozen_since(Vpn(0)).is_some());
    }

    #[test]
    fn the_defrost_daemon_invalidates_every_mapping_of_a_frozen_page_and_thaws_it() {
        let (mut policy, mut rec) = setup(3, 8, 2, config());
        frozen(&mut policy, &mut rec);
        let (v, other) = (Vpn(0), Vpn(1));
        rec.map_to(v, NodeId(1), NodeId(0), Access::Read).unwrap();
        rec.map_to(v, NodeId(2), NodeId(0), Access::Read).unwrap();
        rec.place(other, NodeId(1)).unwrap();
        rec.map_to(other, NodeId(1), NodeId(1), Access::Read)
            .unwrap();
        rec.now = Ns(T2);
        rec.clear();
        let next = policy.on_daemon(&mut rec, 0);
        let all: NodeSet = (0..3).map(NodeId).fold(NodeSet::EMPTY, |mut s, n| {
            s.insert(n);
            s
        });
        assert_eq!(
            rec.actions(),
            [
                Action::DaemonPass,
                Action::InvalidateMappings(v, all),
                Action::Thaw(v),
            ]
        );
        assert_eq!(next, DaemonNext::After(Ns(T2)));
        assert!(policy.frozen_since(v).is_none());
        assert!(rec.page(v).mapped.is_empty());
        assert_eq!(
            policy.last_invalidation(v),
            Some(Ns(1_000)),
            "the daemon's invalidation does not count towards t1"
        );
        assert_eq!(rec.mapping(other, NodeId(1)), mapped(1, Access::Read));
        // Nodes 1 and 2 are interrupted; node 0 runs the daemon.
        assert_eq!(rec.cost(), Ns(2 * 30));
    }

    #[test]
    fn the_defrost_daemon_steals_time_on_its_node_every_t2() {
        let on_1 = PlatinumConfig {
            daemon_node: 1,
            ..config()
        };
        let (policy, rec) = setup(2, 8, 1, on_1);
        let specs = policy.daemons(rec.machine());
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].placement, DaemonPlacement::StealOn(NodeId(1)));
        assert_eq!(specs[0].first_wake, Ns(T2));
    }

    #[test]
    fn a_defrost_period_of_zero_means_no_daemon() {
        let never = PlatinumConfig {
            t2_ns: 0,
            ..config()
        };
        let (policy, rec) = setup(2, 8, 1, never);
        assert_eq!(policy.daemons(rec.machine()), []);
    }

    /// PLATINUM §3.2: for a frozen page "the handler creates a mapping for the remote
    /// physical page granting the full access rights permitted by the virtual memory
    /// system", so a node that read a frozen page can write it without faulting again.
    /// The policy maps it with only the rights the faulting access needs.
    #[test]
    #[ignore = "a read fault on a frozen page maps it read-only (PLATINUM grants full rights)"]
    fn a_read_fault_on_a_frozen_page_maps_it_with_full_access_rights() {
        let (mut policy, mut rec) = setup(2, 8, 1, config());
        frozen(&mut policy, &mut rec);
        rec.now = Ns(3_000);
        fault(&mut policy, &mut rec, 1, 0, false);
        assert_eq!(rec.mapping(Vpn(0), NodeId(1)), mapped(0, Access::Write));
    }
}
