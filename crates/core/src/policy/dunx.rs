//! `dunx`: the dynamic multiple-copy policy of the DUnX kernel on the BBN GP1000
//! (LaRowe, Wilkes & Ellis, PPoPP 1991, section 2; the same policy with its parameters
//! named in LaRowe, Ellis & Holliday, SOSP 1991, section 2).
//!
//! Initial placement is the static policy's: where the program asks, else on the node of
//! the first processor to touch the page. The rest has two parts.
//!
//! *Fault handler.* A fault on a page with one copy on another node maps that copy
//! remotely when the page is frozen or was invalidated (migrated, or its replicas dropped
//! by a coherency fault) less than `freeze_window_ns` ago, and freezes it. Otherwise the
//! page migrates here (the source copy's other mappings are invalidated) on a write fault
//! or when it was recently modified (its aged modification count exceeds `recent_mod`),
//! and is replicated here on a read fault. A write to a replicated page invalidates every
//! other copy (a coherency fault); if this node holds no copy, one replica is kept and
//! migrated here. A read of a replicated page uses or makes a local copy (no freeze
//! check: a page that should be frozen is never replicated).
//!
//! *Page scanners.* One per node, stealing time on it, every `scan_delay_ns`: each pass
//! ages the modification bits of the node's frames and samples the reference bits of its
//! frozen frames, counting a local sample when the node's own mapping referenced the page
//! and one remote sample for each other node whose mapping did. After `sample_passes`
//! passes of collecting only, a pass also checks each frozen frame: remote samples at least
//! the local ones count a success (else the count restarts), and `defrost_trigger`
//! successes defrost the page: all its mappings are invalidated when its aged modification
//! count exceeds `trigger_method`, else only the remote ones, and it is no longer frozen.
//!
//! *Phase-change hint.* A program's hint makes the scanners invalidate every remote
//! mapping and defrost every frozen page. The engine cannot wake a daemon early, so the
//! hint's work is done at once and charged to the hinting thread (the system call's
//! caller), which is where the paper's one-line hint puts it.
//!
//! The reference samples come from one Referenced bit per node and page (the mapping's
//! hardware bit), which the mechanism keeps for this policy only.

use super::{DaemonNext, DaemonPlacement, DaemonSpec, Fault, Mm, Policy};
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::history::HistoryMode;
use crate::machine::Machine;
use crate::memory::Access;
use crate::stats::Counter;
use crate::types::{NodeId, NodeSet, Ns, ThreadId, Vpn};
use serde::{Deserialize, Serialize};

/// Parameters of `dunx`. Defaults: the settings LaRowe, Ellis & Holliday (SOSP 1991,
/// Table 3) give for `psolu` on the GP1000; the PPoPP paper says its policy was tuned to
/// psolu but prints no values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct DunxConfig {
    /// Freeze window: a fault on a remote page that migrated or had its replicas
    /// invalidated less than this long ago maps it remotely and freezes it. Default
    /// 187.5 ms (Table 3, psolu).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub freeze_window_ns: u64,
    /// Recently modified: a read fault migrates instead of replicating when the page's
    /// aged modification count (16 bits, the newest scan interval the most significant)
    /// exceeds this. -1: never replicate; 65536: replicate on every read fault. Default
    /// 65536 (Table 3, psolu).
    #[field(min = -1, max = 65_536)]
    pub recent_mod: i32,
    /// Period of each node's page scanner. Default 10 s (Table 3, psolu).
    #[field(min = 1_000, max = crate::TIME_LIMIT, unit = "ns")]
    pub scan_delay_ns: u64,
    /// Scanner passes that only collect reference samples before a pass that also
    /// checks the frozen frames. Default 0 (Table 3, psolu): every pass checks.
    #[field(min = 0, max = 1_000_000)]
    pub sample_passes: u32,
    /// Checks in a row in which a frozen frame's remote samples were at least its local
    /// ones before it is defrosted (0: at the first check). Default 1 (Table 3, psolu).
    #[field(min = 0, max = 1_000_000)]
    pub defrost_trigger: u32,
    /// A defrost invalidates every mapping of the page when its aged modification count
    /// exceeds this, else only the remote mappings. Default 65536 (Table 3, psolu):
    /// always only the remote ones.
    #[field(min = -1, max = 65_536)]
    pub trigger_method: i32,
}

impl Default for DunxConfig {
    fn default() -> Self {
        DunxConfig {
            freeze_window_ns: 187_500_000,
            recent_mod: 65_536,
            scan_delay_ns: 10_000_000_000,
            sample_passes: 0,
            defrost_trigger: 1,
            trigger_method: 65_536,
        }
    }
}

impl crate::registry::Describe for DunxConfig {
    const KIND: &'static str = "dunx";
    const DESCRIPTION: &'static str = "DUnX dynamic policy: remote/migrate/replicate at fault time, freeze within a window, per-node scanners defrost, phase-change hint (LaRowe, Wilkes & Ellis 1991)";
}

impl crate::policy::PolicyParams for DunxConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn crate::policy::Policy>, ConfigError> {
        Ok(Box::new(DunxPolicy::new(self.clone(), machine)?))
    }
}

inventory::submit!(crate::policy::PolicyEntry::of::<DunxConfig>());

/// What DUnX keeps per page (the mechanism knows nothing of freezing or samples).
#[derive(Clone, Copy, Debug, Default)]
struct PageMeta {
    frozen: bool,
    /// When the page last migrated or had replicas dropped by a coherency fault.
    last_invalidation: Option<Ns>,
    /// Reference samples since the last check: the home node's mapping referenced it.
    local: u32,
    /// ... and other nodes' mappings referenced it (one per node and pass).
    remote: u32,
    /// Checks in a row with remote samples at least the local ones.
    successes: u32,
}

/// The policy.
#[derive(Debug)]
pub struct DunxPolicy {
    config: DunxConfig,
    nodes: u16,
    /// Per page, indexed by page number; sized in `init`.
    pages: Vec<PageMeta>,
    /// Passes each node's scanner has made.
    passes: Vec<u64>,
    /// Copies dropped by coherency faults (the paper's "replicas invalidated").
    replicas_invalidated: u64,
    /// Phase-change hints received.
    hints: u64,
}

impl DunxPolicy {
    /// A `dunx` policy for `machine`.
    pub fn new(config: DunxConfig, machine: &Machine) -> Result<DunxPolicy, ConfigError> {
        config.check_ranges("policy")?;
        Ok(DunxPolicy {
            config,
            nodes: machine.nodes() as u16,
            pages: Vec::new(),
            passes: vec![0; machine.nodes()],
            replicas_invalidated: 0,
            hints: 0,
        })
    }

    /// Whether `vpn` is frozen.
    pub fn is_frozen(&self, vpn: Vpn) -> bool {
        self.pages[vpn.idx()].frozen
    }

    /// When `vpn` last migrated or lost replicas to a coherency fault.
    pub fn last_invalidation(&self, vpn: Vpn) -> Option<Ns> {
        self.pages[vpn.idx()].last_invalidation
    }

    /// Checks in a row in which `vpn`'s remote samples matched its local ones.
    pub fn successes(&self, vpn: Vpn) -> u32 {
        self.pages[vpn.idx()].successes
    }

    /// Copies dropped by coherency faults so far.
    pub fn replicas_invalidated(&self) -> u64 {
        self.replicas_invalidated
    }

    fn recently_invalidated(&self, now: Ns, vpn: Vpn) -> bool {
        match self.pages[vpn.idx()].last_invalidation {
            Some(at) => (now - at).0 < self.config.freeze_window_ns,
            None => false,
        }
    }

    /// The aged modification count: the newest 16 scan intervals' modification bits.
    fn aged_modifications(ctx: &dyn Mm, vpn: Vpn) -> i64 {
        (ctx.page(vpn).mod_history >> 16) as i64
    }

    fn recently_modified(&self, ctx: &dyn Mm, vpn: Vpn) -> bool {
        Self::aged_modifications(ctx, vpn) > self.config.recent_mod as i64
    }

    fn freeze(&mut self, ctx: &mut dyn Mm, vpn: Vpn) {
        let m = &mut self.pages[vpn.idx()];
        m.frozen = true;
        m.local = 0;
        m.remote = 0;
        m.successes = 0;
        ctx.freeze(vpn);
        // Samples start afresh: clear what the bits gathered before the freeze.
        for n in 0..self.nodes {
            ctx.examine_history(vpn, NodeId(n));
        }
    }

    /// Defrosts frozen `vpn`: invalidates all its mappings when it was recently modified
    /// (a migration is likely next), else the remote ones (a replication is).
    fn defrost(&mut self, ctx: &mut dyn Mm, vpn: Vpn) {
        let all = Self::aged_modifications(ctx, vpn) > self.config.trigger_method as i64;
        let victims = if all {
            ctx.page(vpn).mapped
        } else {
            remote_mappings(ctx, vpn)
        };
        ctx.invalidate_mappings(vpn, victims);
        let m = &mut self.pages[vpn.idx()];
        m.frozen = false;
        m.successes = 0;
        ctx.thaw(vpn);
    }

    /// Moves single-copy `vpn` to `node` as a migration does in DUnX: the source copy's
    /// mappings elsewhere are invalidated (their next references fault and find the page
    /// recently migrated). Refused with nothing changed when `node` has no free frame.
    fn migrate_here(&mut self, ctx: &mut dyn Mm, vpn: Vpn, node: NodeId) -> bool {
        if ctx.free_frames(node) == 0 {
            // Let the mechanism refuse it, so the refusal is counted.
            return ctx.migrate(vpn, node).is_ok();
        }
        let mut others = ctx.page(vpn).mapped;
        others.remove(node);
        ctx.invalidate_mappings(vpn, others);
        if ctx.migrate(vpn, node).is_err() {
            return false;
        }
        self.pages[vpn.idx()].last_invalidation = Some(ctx.now());
        true
    }

    /// The coherency fault of a write to replicated `vpn`, keeping the copy on `keep`.
    fn invalidate_replicas(&mut self, ctx: &mut dyn Mm, vpn: Vpn, keep: NodeId) {
        let dropped = ctx.page(vpn).copies.len().saturating_sub(1);
        ctx.coherency_fault(vpn, keep);
        self.replicas_invalidated += dropped as u64;
        self.pages[vpn.idx()].last_invalidation = Some(ctx.now());
    }

    fn write_to_replicated(&mut self, ctx: &mut dyn Mm, f: Fault) {
        if ctx.page(f.vpn).copies.contains(f.node) {
            self.invalidate_replicas(ctx, f.vpn, f.node);
        } else {
            let keep = ctx
                .nearest_copy(f.vpn, f.node)
                .unwrap_or(ctx.page(f.vpn).home);
            self.invalidate_replicas(ctx, f.vpn, keep);
            if !self.migrate_here(ctx, f.vpn, f.node) {
                ctx.map_nearest(f.vpn, f.node, Access::Write);
                return;
            }
        }
        let _ = ctx.map_to(f.vpn, f.node, f.node, Access::Write);
    }

    fn read_replicated(&mut self, ctx: &mut dyn Mm, f: Fault) {
        if ctx.page(f.vpn).copies.contains(f.node) || ctx.replicate(f.vpn, f.node).is_ok() {
            let _ = ctx.map_to(f.vpn, f.node, f.node, Access::Read);
        } else {
            ctx.map_nearest(f.vpn, f.node, Access::Read);
        }
    }

    /// A fault on a single copy held by another node.
    fn remote_single(&mut self, ctx: &mut dyn Mm, f: Fault) {
        let access = if f.write { Access::Write } else { Access::Read };
        if self.pages[f.vpn.idx()].frozen || self.recently_invalidated(ctx.now(), f.vpn) {
            if !self.pages[f.vpn.idx()].frozen {
                self.freeze(ctx, f.vpn);
            }
            ctx.map_nearest(f.vpn, f.node, access);
            return;
        }
        let moved = if f.write || self.recently_modified(ctx, f.vpn) {
            self.migrate_here(ctx, f.vpn, f.node)
        } else {
            // Replication restricts every writable mapping to read-only first.
            ctx.replicate(f.vpn, f.node).is_ok()
        };
        if moved {
            let local = if ctx.page(f.vpn).copies.len() > 1 {
                Access::Read
            } else {
                access
            };
            let _ = ctx.map_to(f.vpn, f.node, f.node, local);
        } else {
            // No free frame here: use the remote copy.
            ctx.map_nearest(f.vpn, f.node, access);
        }
    }

    /// One scanner pass over node `n`'s frames.
    fn scan(&mut self, ctx: &mut dyn Mm, n: NodeId) {
        ctx.count_daemon_pass();
        let pass = self.passes[n.idx()];
        self.passes[n.idx()] = pass + 1;
        let check =
            pass % (self.config.sample_passes as u64 + 1) == self.config.sample_passes as u64;
        let examine = Ns(ctx.machine().costs().pte_examine_ns);
        for v in 0..ctx.npages() as u32 {
            let vpn = Vpn(v);
            let page = ctx.page(vpn);
            if page.copies.is_empty() || page.home != n {
                continue;
            }
            ctx.charge(examine);
            ctx.age_modifications(vpn);
            if !self.pages[v as usize].frozen {
                continue;
            }
            let mut local = 0;
            let mut remote = 0;
            for m in 0..self.nodes {
                let bit = ctx.examine_history(vpn, NodeId(m));
                if m == n.0 {
                    local += bit;
                } else {
                    remote += bit;
                }
            }
            let meta = &mut self.pages[v as usize];
            meta.local = meta.local.saturating_add(local);
            meta.remote = meta.remote.saturating_add(remote);
            if !check {
                continue;
            }
            if meta.remote >= meta.local {
                meta.successes = meta.successes.saturating_add(1);
            } else {
                meta.successes = 0;
            }
            meta.local = 0;
            meta.remote = 0;
            if meta.successes >= self.config.defrost_trigger {
                self.defrost(ctx, vpn);
            }
        }
    }
}

/// The nodes whose mapping of `vpn` points at another node's copy.
fn remote_mappings(ctx: &dyn Mm, vpn: Vpn) -> NodeSet {
    let mut out = NodeSet::EMPTY;
    for n in ctx.page(vpn).mapped.iter() {
        if ctx.mapping(vpn, n).target != n {
            out.insert(n);
        }
    }
    out
}

impl Policy for DunxPolicy {
    fn name(&self) -> &'static str {
        "dunx"
    }

    fn history(&self) -> HistoryMode {
        HistoryMode::RefBit
    }

    fn state_bytes_per_page(&self) -> u64 {
        std::mem::size_of::<PageMeta>() as u64
    }

    fn init(&mut self, ctx: &mut dyn Mm) {
        self.pages = vec![PageMeta::default(); ctx.npages()];
    }

    fn initial_placement(
        &mut self,
        _machine: &Machine,
        _vpn: Vpn,
        hint: Option<NodeId>,
    ) -> Option<NodeId> {
        hint
    }

    fn on_fault(&mut self, ctx: &mut dyn Mm, f: Fault) {
        let access = if f.write { Access::Write } else { Access::Read };
        if ctx.page(f.vpn).copies.is_empty() {
            // First touch: the page's first physical copy is on the toucher's node.
            ctx.place_near(f.vpn, f.node);
        }
        let page = ctx.page(f.vpn);
        if page.copies.len() > 1 {
            if f.write {
                self.write_to_replicated(ctx, f);
            } else {
                self.read_replicated(ctx, f);
            }
        } else if page.home == f.node {
            let _ = ctx.map_to(f.vpn, f.node, f.node, access);
        } else {
            self.remote_single(ctx, f);
        }
    }

    fn daemons(&self, machine: &Machine) -> Vec<DaemonSpec> {
        // A memory-only node's scanner runs on the nearest node with processors.
        (0..self.nodes)
            .map(|n| DaemonSpec {
                name: format!("scanner-{n}"),
                placement: DaemonPlacement::StealOn(machine.nearest_with_procs(NodeId(n))),
                first_wake: Ns(self.config.scan_delay_ns),
            })
            .collect()
    }

    fn on_daemon(&mut self, ctx: &mut dyn Mm, id: usize) -> DaemonNext {
        self.scan(ctx, NodeId(id as u16));
        DaemonNext::After(Ns(self.config.scan_delay_ns))
    }

    fn on_phase_hint(&mut self, ctx: &mut dyn Mm, _thread: ThreadId) {
        self.hints += 1;
        let examine = Ns(ctx.machine().costs().pte_examine_ns);
        for v in 0..ctx.npages() as u32 {
            let vpn = Vpn(v);
            if ctx.page(vpn).copies.is_empty() {
                continue;
            }
            ctx.charge(examine);
            if self.pages[v as usize].frozen {
                self.defrost(ctx, vpn);
            } else {
                let remote = remote_mappings(ctx, vpn);
                ctx.invalidate_mappings(vpn, remote);
            }
        }
    }

    fn counters(&self) -> Vec<Counter> {
        vec![
            Counter {
                name: "replicas_invalidated",
                label: "replicas invalidated",
                value: self.replicas_invalidated,
            },
            Counter {
                name: "phase_hints",
                label: "phase-change hints",
                value: self.hints,
            },
        ]
    }
}

#[cfg(test)]
#[path = "tests/dunx.rs"]
mod tests;
