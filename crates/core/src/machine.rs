//! The machine model: nodes, processors, frames, page and word size, topology and costs.
//!
//! A [`MachineConfig`] is plain data (presets are data files in the harness); [`Machine`]
//! is the validated, resolved form with per node-pair latency tables the engine reads on
//! every reference.

use crate::cache::CacheConfig;
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::types::{NodeId, Ns, ProcId};
use serde::{Deserialize, Serialize};

/// How far nodes are from each other.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Topology {
    /// Every remote node is equally far (Butterfly-class local/remote machines).
    Uniform,
    /// A distance matrix in ACPI SLIT style (the diagonal is the local distance, usually 10).
    /// A remote access at distance `d` costs
    /// `local + (remote - local) * (d - local_distance) / (reference_distance - local_distance)`,
    /// so the `remote_*` costs are those at `reference_distance`.
    Distance {
        /// `matrix[a][b]`: distance from a processor on node `a` to the memory of node `b`.
        matrix: Vec<Vec<u32>>,
        /// The distance at which the `remote_*` costs apply; default: the smallest
        /// off-diagonal distance.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reference_distance: Option<u32>,
    },
}

/// Operation costs in integer nanoseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[serde(deny_unknown_fields)]
pub struct Costs {
    /// Read of one word from the local memory module (ns).
    #[field(min = 1, max = crate::TIME_LIMIT, unit = "ns")]
    pub local_read_ns: u64,
    /// Write of one word to the local memory module (ns).
    #[field(min = 1, max = crate::TIME_LIMIT, unit = "ns")]
    pub local_write_ns: u64,
    /// Read of one word from a remote module at the reference distance (ns).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub remote_read_ns: u64,
    /// Write of one word to a remote module at the reference distance (ns).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub remote_write_ns: u64,
    /// Read of one word of a replicated read-only page a node may cache (TC2000-style, ns);
    /// absent when nodes do not cache shared pages.
    #[field(min = 1, max = crate::TIME_LIMIT, unit = "ns")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_read_ns: Option<u64>,
    /// Page fault: trap, handler entry and establishing one mapping (ns).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub page_fault_ns: u64,
    /// Fixed part of a page migration: allocate, remap, free (ns).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub migrate_fixed_ns: u64,
    /// Fixed part of a page replication: allocate and map a copy (ns).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub replicate_fixed_ns: u64,
    /// Block transfer of one word between modules, per word (ns).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub block_transfer_per_word_ns: u64,
    /// Fixed part of a coherency fault: a write to a replicated page (ns).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub coherency_fault_fixed_ns: u64,
    /// Extra coherency-fault cost per copy invalidated and freed (ns).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub coherency_per_copy_ns: u64,
    /// Interrupting one node to invalidate or restrict its mapping (TLB shootdown, ns).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub shootdown_per_node_ns: u64,
    /// Locking and unlocking one page-table-entry copy (ns).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub pte_lock_ns: u64,
    /// Examining (and clearing) the reference history in one page-table-entry copy (ns).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub pte_examine_ns: u64,
    /// With contention on: time a memory module is occupied per word of a local access
    /// (ns).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub module_service_ns: u64,
    /// With contention on: time a memory module is occupied per word of a remote access
    /// (ns): the memory cycle plus the node controller's handling of the incoming
    /// request. Absent: `module_service_ns`.
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_module_service_ns: Option<u64>,
    /// With contention on: time the interconnect path of a remote access is held per
    /// word (ns). A path holds the switch ports of both ends, so remote accesses into
    /// (or out of) one node serialise there even when they reach different words. A
    /// block transfer holds both ports for its whole duration. 0: the switch never
    /// queues.
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub switch_service_ns: u64,
    /// A fixed delay added to every page migration, replication and coherency fault
    /// (ns), the memory references unchanged: the hypothetical slowed systems of LaRowe,
    /// Ellis & Kaplan (SOSP 1991, sec. 4.2, Figure 6), where steps of 2 ms on the GP1000
    /// give the break-even counts 666, 956, 1246, 1536 and 1826. 0: none.
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub operation_delay_ns: u64,
}

/// A machine as configured: the data of a preset with any overrides applied.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[serde(deny_unknown_fields)]
pub struct MachineConfig {
    /// The preset this machine came from (or a user label).
    #[serde(default)]
    pub preset: String,
    /// One line saying what the machine is and where its numbers come from.
    #[serde(default)]
    pub description: String,
    /// Number of nodes (memory modules).
    #[field(min = 1, max = crate::types::NodeSet::CAPACITY)]
    pub nodes: u16,
    /// Processors per node.
    #[field(min = 1, max = 65_535)]
    pub procs_per_node: u16,
    /// Page frames in each node's memory module (unless `node_frames` lists them).
    #[field(min = 1, max = crate::estimate::MAX_PAGES, unit = "frames")]
    pub frames_per_node: u32,
    /// Page frames of each node, one entry per node, where the nodes' memories differ
    /// (a small fast tier and a large slow one); empty: `frames_per_node` each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_frames: Vec<u32>,
    /// How many of the last nodes are memory without processors (a CXL expander, an NVM
    /// or far-memory tier): threads and daemons run only on the nodes before them.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[field(min = 0, max = crate::types::NodeSet::CAPACITY)]
    pub memory_only_nodes: u16,
    /// Page size in bytes (> 0, a multiple of the word size).
    #[field(min = 1, max = 1_073_741_824, unit = "bytes")]
    pub page_size_bytes: u64,
    /// Word size in bytes: the unit of one reference.
    #[field(min = 1, max = 4096, unit = "bytes")]
    pub word_size_bytes: u64,
    /// Node distances.
    pub topology: Topology,
    /// Operation costs.
    #[field(nested)]
    pub costs: Costs,
    /// Seeded run-to-run variation from physical sources (all off unless a preset or
    /// the configuration sets them).
    #[serde(default, skip_serializing_if = "Variation::is_off")]
    #[field(nested)]
    pub variation: Variation,
    /// Whether memory modules and switch ports serve one access at a time (each queues
    /// on its own `busy_until`; see the `*_service_ns` costs).
    #[serde(default)]
    pub contention: bool,
    /// Each processor's cache (none unless a preset or the configuration gives one):
    /// references that hit never reach memory (see [`crate::cache`]).
    #[serde(default, skip_serializing_if = "CacheConfig::is_off")]
    #[field(nested)]
    pub cache: CacheConfig,
    /// Computation time as a percentage of what the workloads state (their `compute_*`
    /// costs): a processor faster than the one a workload's costs were estimated for
    /// takes less. The Butterfly-era workloads' costs are estimates for the MC68020; the
    /// TC2000's MC88100 is faster (LaRowe, Ellis & Kaplan 1991, sec. 3: page operations
    /// cost about the same on both machines but "as much as an order of magnitude" more
    /// relative to processor speed on the TC2000). Memory references and page operations
    /// are unaffected. Default 100.
    #[serde(default = "hundred", skip_serializing_if = "is_hundred")]
    #[field(min = 1, max = 100_000, unit = "%")]
    pub compute_time_pct: u32,
    /// The processors' clock, where the preset's sources give it: what turns a recorded
    /// program's instruction counts into time (the `trace` workload, at its
    /// cycles-per-instruction). Workloads that state their computation in time ignore it.
    /// None: not given (a trace replay then asks for `workload.clock_mhz`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[field(min = 1, max = 100_000, unit = "MHz")]
    pub clock_mhz: Option<u32>,
    /// Loaded latency: each node's latency rises with the bandwidth drawn from its
    /// memory (its windows, peaks and curves: the machines chapter). None (every
    /// historical preset): latencies are the costs above at any load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded_latency: Option<crate::bandwidth::LoadedLatency>,
}

fn hundred() -> u32 {
    100
}

fn is_hundred(x: &u32) -> bool {
    *x == 100
}

/// Run-to-run variation: physical sources of the differences between two runs of one
/// program on one machine, each drawn from the run's seed (a stream of its own, so
/// drawing them never changes a policy's random numbers). The same seed gives the same
/// bits; different seeds give different runs, so trials and their confidence intervals
/// mean something. `enabled = false` turns every source off with one switch.
///
/// Arrival order at memory modules is not drawn separately: it follows from the
/// sources below (requests that would arrive together in a run without variation
/// arrive in a seed-dependent order), so the reference path draws no random number.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[serde(deny_unknown_fields)]
pub struct Variation {
    /// Whether the sources below apply (default true when the table is given).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Thread start skew: each thread's first operation starts a uniform time in
    /// `[0, start_skew_ns)` after its program starts (creating and dispatching the
    /// thread on its processor takes a varying time). 0: none.
    #[serde(default)]
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub start_skew_ns: u64,
    /// Clock-interrupt period on every processor (ns); each processor's phase is
    /// drawn uniformly within one period. 0: no clock interrupts.
    #[serde(default)]
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub tick_ns: u64,
    /// Time one clock interrupt (and the operating-system work it triggers) takes from
    /// the thread running on its processor (ns).
    #[serde(default)]
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub tick_cost_ns: u64,
    /// Daemon and scanner phase: each policy daemon's first wake-up is drawn uniformly
    /// in `(0, first wake]` instead of at its first period's end (the daemon's timer has
    /// no fixed phase relative to the program's start).
    #[serde(default)]
    pub daemon_phase: bool,
}

fn yes() -> bool {
    true
}

impl Default for Variation {
    /// Enabled, with no source: setting one source turns it on.
    fn default() -> Self {
        Variation {
            enabled: true,
            start_skew_ns: 0,
            tick_ns: 0,
            tick_cost_ns: 0,
            daemon_phase: false,
        }
    }
}

impl Variation {
    /// Whether no source applies.
    pub fn is_off(&self) -> bool {
        !self.enabled
            || (self.start_skew_ns == 0
                && (self.tick_ns == 0 || self.tick_cost_ns == 0)
                && !self.daemon_phase)
    }
}

/// A validated machine with derived tables.
#[derive(Clone, Debug)]
pub struct Machine {
    /// The configuration it was built from.
    pub config: MachineConfig,
    nodes: usize,
    read_ns: Vec<u64>,
    write_ns: Vec<u64>,
    words_per_page: u64,
}

impl Machine {
    /// Validates `config` and derives the latency tables.
    pub fn new(config: MachineConfig) -> Result<Machine, ConfigError> {
        config.check_ranges("machine")?;
        let err = |field: &str, msg: String| Err(ConfigError::new(format!("machine.{field}"), msg));
        let n = config.nodes as usize;
        if (n * config.procs_per_node as usize) > u16::MAX as usize {
            return err("procs_per_node", "too many processors in total".into());
        }
        if config.memory_only_nodes >= config.nodes {
            return err(
                "memory_only_nodes",
                format!(
                    "{} of {} nodes leaves no node with processors",
                    config.memory_only_nodes, config.nodes
                ),
            );
        }
        if !config.node_frames.is_empty() {
            if config.node_frames.len() != n {
                return err(
                    "node_frames",
                    format!(
                        "lists {} nodes; the machine has {n} (one entry per node)",
                        config.node_frames.len()
                    ),
                );
            }
            for (i, &f) in config.node_frames.iter().enumerate() {
                if f == 0 || f as u64 > crate::estimate::MAX_PAGES {
                    return err(
                        &format!("node_frames[{i}]"),
                        format!("{f} is out of range 1..={}", crate::estimate::MAX_PAGES),
                    );
                }
            }
        }
        if !config
            .page_size_bytes
            .is_multiple_of(config.word_size_bytes)
        {
            return err(
                "page_size_bytes",
                format!(
                    "{} is not a multiple of the word size {}",
                    config.page_size_bytes, config.word_size_bytes
                ),
            );
        }
        config.cache.validate(config.page_size_bytes)?;
        if let Some(l) = &config.loaded_latency {
            l.validate(n)?;
        }
        let c = &config.costs;
        // The same rule on every topology: a remote access never costs less than a local
        // one (a distance matrix scales between the two, so a reversed pair would make
        // nearer nodes dearer than farther ones).
        for (field, local, remote) in [
            ("costs.remote_read_ns", c.local_read_ns, c.remote_read_ns),
            ("costs.remote_write_ns", c.local_write_ns, c.remote_write_ns),
        ] {
            if remote < local {
                return err(
                    field,
                    format!("{remote} ns is less than the local cost {local} ns; remote must be >= local"),
                );
            }
        }
        let v = &config.variation;
        if v.tick_cost_ns > 0 && v.tick_ns > 0 && v.tick_cost_ns >= v.tick_ns {
            return err(
                "variation.tick_cost_ns",
                format!(
                    "{} ns is not less than the clock period {} ns: the processors would do nothing else",
                    v.tick_cost_ns, v.tick_ns
                ),
            );
        }
        if let Some(cached) = c.cached_read_ns {
            if cached == 0 {
                return err("costs.cached_read_ns", "must be positive when given".into());
            }
        }
        let mut read_ns = vec![0u64; n * n];
        let mut write_ns = vec![0u64; n * n];
        match &config.topology {
            Topology::Uniform => {
                for a in 0..n {
                    for b in 0..n {
                        let local = a == b;
                        read_ns[a * n + b] = if local {
                            c.local_read_ns
                        } else {
                            c.remote_read_ns
                        };
                        write_ns[a * n + b] = if local {
                            c.local_write_ns
                        } else {
                            c.remote_write_ns
                        };
                    }
                }
            }
            Topology::Distance {
                matrix,
                reference_distance,
            } => {
                if matrix.len() != n || matrix.iter().any(|r| r.len() != n) {
                    return err(
                        "topology.matrix",
                        format!("must be {n}x{n} (one row and column per node)"),
                    );
                }
                let local_d = matrix[0][0];
                if (0..n).any(|i| matrix[i][i] != local_d) || local_d == 0 {
                    return err(
                        "topology.matrix",
                        "the diagonal must hold one positive local distance".into(),
                    );
                }
                let min_remote = (0..n)
                    .flat_map(|a| (0..n).filter(move |&b| b != a).map(move |b| (a, b)))
                    .map(|(a, b)| matrix[a][b])
                    .min();
                if let Some(m) = min_remote {
                    if m <= local_d {
                        return err(
                            "topology.matrix",
                            format!("remote distances must exceed the local distance {local_d}"),
                        );
                    }
                }
                let reference = reference_distance.or(min_remote).unwrap_or(local_d + 1);
                if reference <= local_d {
                    return err(
                        "topology.reference_distance",
                        format!("must exceed the local distance {local_d}"),
                    );
                }
                let scale = |local: u64, remote: u64, d: u32| -> u64 {
                    if d == local_d {
                        return local;
                    }
                    let extra = (remote - local) as u128 * (d - local_d) as u128
                        / (reference - local_d) as u128;
                    local + extra as u64
                };
                for a in 0..n {
                    for b in 0..n {
                        let d = matrix[a][b];
                        read_ns[a * n + b] = scale(c.local_read_ns, c.remote_read_ns, d);
                        write_ns[a * n + b] = scale(c.local_write_ns, c.remote_write_ns, d);
                    }
                }
            }
        }
        let words_per_page = config.page_size_bytes / config.word_size_bytes;
        Ok(Machine {
            nodes: n,
            read_ns,
            write_ns,
            words_per_page,
            config,
        })
    }

    /// Number of nodes.
    #[inline]
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// Total number of processors (memory-only nodes have none).
    #[inline]
    pub fn procs(&self) -> usize {
        (self.nodes - self.config.memory_only_nodes as usize) * self.config.procs_per_node as usize
    }

    /// Whether node `n` has processors (it is not a memory-only node).
    #[inline]
    pub fn has_procs(&self, n: NodeId) -> bool {
        n.idx() < self.nodes - self.config.memory_only_nodes as usize
    }

    /// Node `n` if it has processors, else the node with processors nearest to it (by
    /// read cost, ties to the lower node): where work on a memory-only node's behalf runs.
    pub fn nearest_with_procs(&self, n: NodeId) -> NodeId {
        if self.has_procs(n) {
            return n;
        }
        (0..self.nodes as u16)
            .map(NodeId)
            .filter(|&m| self.has_procs(m))
            .min_by_key(|&m| (self.read_ns(m, n), m.0))
            .unwrap_or(NodeId(0))
    }

    /// Page frames in node `n`'s memory.
    #[inline]
    pub fn frames(&self, n: NodeId) -> u32 {
        self.config
            .node_frames
            .get(n.idx())
            .copied()
            .unwrap_or(self.config.frames_per_node)
    }

    /// Page frames of all nodes together.
    pub fn total_frames(&self) -> u64 {
        (0..self.nodes as u16)
            .map(|n| self.frames(NodeId(n)) as u64)
            .sum()
    }

    /// The node a processor belongs to.
    #[inline]
    pub fn node_of(&self, p: ProcId) -> NodeId {
        NodeId(p.0 / self.config.procs_per_node)
    }

    /// Page size in bytes.
    #[inline]
    pub fn page_size(&self) -> u64 {
        self.config.page_size_bytes
    }

    /// Words in one page.
    #[inline]
    pub fn words_per_page(&self) -> u64 {
        self.words_per_page
    }

    /// Module occupancy per word of a remote access (ns), with contention on.
    #[inline]
    pub fn remote_module_service_ns(&self) -> u64 {
        let c = &self.config.costs;
        c.remote_module_service_ns.unwrap_or(c.module_service_ns)
    }

    /// The cost table.
    #[inline]
    pub fn costs(&self) -> &Costs {
        &self.config.costs
    }

    /// Cost of one word read by a processor on `from` of memory on `to` (ns).
    #[inline]
    pub fn read_ns(&self, from: NodeId, to: NodeId) -> u64 {
        self.read_ns[from.idx() * self.nodes + to.idx()]
    }

    /// Cost of one word written by a processor on `from` to memory on `to` (ns).
    #[inline]
    pub fn write_ns(&self, from: NodeId, to: NodeId) -> u64 {
        self.write_ns[from.idx() * self.nodes + to.idx()]
    }

    /// Time to copy one whole page between two modules (the block-transfer part only).
    #[inline]
    pub fn page_transfer(&self) -> Ns {
        Ns(self
            .words_per_page
            .saturating_mul(self.config.costs.block_transfer_per_word_ns))
    }

    /// Full cost of migrating one page, without shootdowns: fixed part + operation delay
    /// + block transfer.
    pub fn migration_cost(&self) -> Ns {
        let c = &self.config.costs;
        Ns(c.migrate_fixed_ns.saturating_add(c.operation_delay_ns)) + self.page_transfer()
    }

    /// Full cost of replicating one page, without shootdowns: fixed part + operation
    /// delay + block transfer.
    pub fn replication_cost(&self) -> Ns {
        let c = &self.config.costs;
        Ns(c.replicate_fixed_ns.saturating_add(c.operation_delay_ns)) + self.page_transfer()
    }

    /// Fixed cost of a coherency fault, before its per-copy part and shootdowns: fixed
    /// part + operation delay.
    pub fn coherency_fault_fixed(&self) -> Ns {
        let c = &self.config.costs;
        Ns(c.coherency_fault_fixed_ns
            .saturating_add(c.operation_delay_ns))
    }

    /// The ratio of the reference remote read cost to the local read cost.
    pub fn remote_local_ratio(&self) -> f64 {
        self.config.costs.remote_read_ns as f64 / self.config.costs.local_read_ns as f64
    }
}

fn is_zero(v: &u16) -> bool {
    *v == 0
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}
