//! The cost model the optimum is computed in: unit prices taken from the machine's cost
//! table, the same prices the policy's own schedule is charged in (see the crate docs
//! for what the model leaves out).

use numaplace_core::{Machine, NodeId};

/// Unit prices of the model (integer ns), derived from a [`Machine`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CostModel {
    /// Number of nodes.
    pub nodes: usize,
    read: Vec<u64>,
    write: Vec<u64>,
    /// Read of a word of a page the reader holds while other copies exist
    /// (TC2000-style caching), when the machine has one.
    pub cached_read: Option<u64>,
    /// Moving the single copy to another node: fixed part plus block transfer.
    pub migrate: u64,
    /// Adding a copy on a node: fixed part plus block transfer.
    pub replicate: u64,
    /// Fixed part of a coherency fault (collapsing a replicated page to one copy).
    pub coherency_fixed: u64,
    /// Coherency cost per copy dropped.
    pub coherency_per_copy: u64,
    /// Whether read prices differ between remote nodes (a distance matrix).
    pub distance: bool,
}

impl CostModel {
    /// The model of `machine`.
    pub fn of(machine: &Machine) -> CostModel {
        let n = machine.nodes();
        let mut read = Vec::with_capacity(n * n);
        let mut write = Vec::with_capacity(n * n);
        for a in 0..n {
            for b in 0..n {
                read.push(machine.read_ns(NodeId(a as u16), NodeId(b as u16)));
                write.push(machine.write_ns(NodeId(a as u16), NodeId(b as u16)));
            }
        }
        let c = machine.costs();
        let distance = !matches!(machine.config.topology, numaplace_core::Topology::Uniform);
        CostModel {
            nodes: n,
            read,
            write,
            cached_read: c.cached_read_ns,
            migrate: machine.migration_cost().0,
            replicate: machine.replication_cost().0,
            coherency_fixed: machine.coherency_fault_fixed().0,
            coherency_per_copy: c.coherency_per_copy_ns,
            distance,
        }
    }

    /// Per-word price of a read by node `a` from the copy on `b`.
    #[inline]
    pub fn read(&self, a: usize, b: usize) -> u64 {
        self.read[a * self.nodes + b]
    }

    /// Per-word price of a write by node `a` to the copy on `b`.
    #[inline]
    pub fn write(&self, a: usize, b: usize) -> u64 {
        self.write[a * self.nodes + b]
    }

    /// Per-word price of a read by node `a` of a page whose copies are `copies` (a bit
    /// mask, not empty): the cheapest copy, a node's own copy at the cached price while
    /// others exist (as the simulator charges it).
    pub fn read_from(&self, a: usize, copies: u64) -> u64 {
        let mut best = u64::MAX;
        let mut m = copies;
        while m != 0 {
            let b = m.trailing_zeros() as usize;
            m &= m - 1;
            let p = if b == a {
                match self.cached_read {
                    Some(c) if copies.count_ones() > 1 => c,
                    _ => self.read(a, a),
                }
            } else {
                self.read(a, b)
            };
            best = best.min(p);
        }
        best
    }

    /// The cheapest per-word read node `a` can make of its own copy (local, or cached
    /// where that is cheaper).
    pub fn own_read(&self, a: usize) -> u64 {
        self.read(a, a).min(self.cached_read.unwrap_or(u64::MAX))
    }

    /// The cheapest per-word read node `a` can make of another node's copy.
    pub fn best_remote_read(&self, a: usize) -> u64 {
        (0..self.nodes)
            .filter(|&b| b != a)
            .map(|b| self.read(a, b))
            .min()
            .unwrap_or(self.read(a, a))
    }

    /// Cost of the coherency fault that leaves one of `copies` copies.
    #[inline]
    pub fn collapse(&self, copies: u32) -> u64 {
        if copies <= 1 {
            return 0;
        }
        self.coherency_fixed
            .saturating_add(self.coherency_per_copy.saturating_mul(copies as u64 - 1))
    }

    /// Whether a superset of copies is never dearer to read from than a subset, which
    /// the replication solver's dominance pruning needs (false only when a cached read
    /// costs more than a local one).
    pub fn reads_monotone(&self) -> bool {
        self.cached_read
            .is_none_or(|c| (0..self.nodes).all(|a| c <= self.read(a, a)))
    }

    /// Whether replicating only onto the node about to read loses nothing: on a uniform
    /// machine without caching another node's copy never makes a read cheaper.
    pub fn replicate_at_reader_only(&self) -> bool {
        !self.distance && self.cached_read.is_none()
    }
}
