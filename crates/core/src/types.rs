//! Newtypes for identifiers and simulated time.
//!
//! Simulated time is integer nanoseconds everywhere: floating-point time would make
//! event order depend on rounding and break bit-for-bit reproducibility.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub};

/// Simulated time or duration in integer nanoseconds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Ns(pub u64);

impl Ns {
    /// Zero nanoseconds.
    pub const ZERO: Ns = Ns(0);
    /// The end of time: used for "never" deadlines.
    pub const MAX: Ns = Ns(u64::MAX);

    /// Nanoseconds from microseconds.
    pub const fn from_us(us: u64) -> Ns {
        Ns(us * 1_000)
    }

    /// Nanoseconds from milliseconds.
    pub const fn from_ms(ms: u64) -> Ns {
        Ns(ms * 1_000_000)
    }

    /// The value in (fractional) seconds, for reports only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }

    /// Saturating subtraction: durations never go negative.
    pub fn saturating_sub(self, other: Ns) -> Ns {
        Ns(self.0.saturating_sub(other.0))
    }
}

impl Add for Ns {
    type Output = Ns;
    fn add(self, rhs: Ns) -> Ns {
        Ns(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for Ns {
    fn add_assign(&mut self, rhs: Ns) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}

impl Sub for Ns {
    type Output = Ns;
    fn sub(self, rhs: Ns) -> Ns {
        Ns(self.0.saturating_sub(rhs.0))
    }
}

impl Mul<u64> for Ns {
    type Output = Ns;
    fn mul(self, rhs: u64) -> Ns {
        Ns(self.0.saturating_mul(rhs))
    }
}

impl fmt::Display for Ns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ns", self.0)
    }
}

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident, $inner:ty) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub $inner);

        impl $name {
            /// The id as an index into dense arrays.
            #[inline]
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

id_type!(
    /// A node: a memory module with its processors.
    NodeId,
    u16
);
id_type!(
    /// A processor, numbered across the machine (node = proc / procs_per_node).
    ProcId,
    u16
);
id_type!(
    /// A thread of a program, numbered across all programs of a run.
    ThreadId,
    u32
);
id_type!(
    /// A virtual page of the shared address space.
    Vpn,
    u32
);

/// A set of nodes as a bit mask; machines have at most [`NodeSet::CAPACITY`] nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeSet(pub u64);

impl NodeSet {
    /// The largest number of nodes a set can hold.
    pub const CAPACITY: usize = 64;
    /// The empty set.
    pub const EMPTY: NodeSet = NodeSet(0);

    /// A set holding one node.
    #[inline]
    pub fn single(n: NodeId) -> NodeSet {
        NodeSet(1u64 << n.0)
    }
    /// Whether `n` is in the set.
    #[inline]
    pub fn contains(self, n: NodeId) -> bool {
        self.0 & (1u64 << n.0) != 0
    }
    /// Adds `n`.
    #[inline]
    pub fn insert(&mut self, n: NodeId) {
        self.0 |= 1u64 << n.0;
    }
    /// Removes `n`.
    #[inline]
    pub fn remove(&mut self, n: NodeId) {
        self.0 &= !(1u64 << n.0);
    }
    /// Number of nodes in the set.
    #[inline]
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }
    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The lowest-numbered node, if any.
    #[inline]
    pub fn first(self) -> Option<NodeId> {
        if self.0 == 0 {
            None
        } else {
            Some(NodeId(self.0.trailing_zeros() as u16))
        }
    }
    /// The nodes in increasing order.
    pub fn iter(self) -> impl Iterator<Item = NodeId> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            if bits == 0 {
                None
            } else {
                let n = bits.trailing_zeros();
                bits &= bits - 1;
                Some(NodeId(n as u16))
            }
        })
    }
}
