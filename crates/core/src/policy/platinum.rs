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

use crate::component::{DaemonNext, DaemonPlacement, DaemonSpec, Fault, Policy};
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::machine::Machine;
use crate::memory::Access;
use crate::mm::Mm;
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

impl crate::component::PolicyParams for PlatinumConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn crate::component::Policy>, ConfigError> {
        Ok(Box::new(PlatinumPolicy::new(self.clone(), machine)?))
    }
}

inventory::submit!(crate::component::PolicyEntry::of::<PlatinumConfig>());

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

    /// Maps the single copy of a frozen page on the faulting node "granting the full access
    /// rights permitted by the virtual memory system" (§3.2): writable, whatever the
    /// access, so a node that read a frozen page writes it without faulting again.
    fn map_frozen(&mut self, ctx: &mut dyn Mm, f: Fault) {
        self.map_remote(ctx, f, true);
    }

    /// Maps a remote copy of the page on the faulting node: writable when `full` (a
    /// frozen page) or the access is a write, else read-only. A frozen page has one copy
    /// (invalidation leaves one, and nothing replicates it while frozen); should the page
    /// have several, a write first invalidates the others and a read maps read-only.
    fn map_remote(&mut self, ctx: &mut dyn Mm, f: Fault, full: bool) {
        let single = ctx.page(f.vpn).copies.len() <= 1;
        let access = if f.write || (full && single) {
            Access::Write
        } else {
            Access::Read
        };
        if f.write && !single {
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
            // No free frame here: use a remote copy with the rights the access needs.
            self.map_remote(ctx, f, false);
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
#[path = "tests/platinum.rs"]
mod tests;
