//! Newtypes for identifiers and simulated time.
//!
//! Simulated time is integer nanoseconds everywhere: floating-point time would make
//! event order depend on rounding and break bit-for-bit reproducibility.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub};

/// A configured duration that may be infinite: an integer of nanoseconds, or `"inf"`
/// (also `"infinity"`, and TOML's bare `inf`). Serialized as the integer or `"inf"`, so
/// a record reads back to the same value. Ranges declared on a field of this type apply
/// to the finite value only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NsOrInf {
    /// A finite duration (ns).
    Ns(u64),
    /// Infinity: the event never comes.
    Inf,
}

impl NsOrInf {
    /// The finite duration, or `None` for infinity.
    pub fn finite(self) -> Option<u64> {
        match self {
            NsOrInf::Ns(v) => Some(v),
            NsOrInf::Inf => None,
        }
    }

    /// Whether `elapsed` is less than this duration (always, for infinity).
    pub fn exceeds(self, elapsed: u64) -> bool {
        match self {
            NsOrInf::Ns(v) => elapsed < v,
            NsOrInf::Inf => true,
        }
    }
}

impl fmt::Display for NsOrInf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NsOrInf::Ns(v) => write!(f, "{v}"),
            NsOrInf::Inf => f.write_str("inf"),
        }
    }
}

impl Serialize for NsOrInf {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            NsOrInf::Ns(v) => s.serialize_u64(*v),
            NsOrInf::Inf => s.serialize_str("inf"),
        }
    }
}

impl<'de> Deserialize<'de> for NsOrInf {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = NsOrInf;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a non-negative integer of nanoseconds or \"inf\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<NsOrInf, E> {
                Ok(NsOrInf::Ns(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<NsOrInf, E> {
                u64::try_from(v)
                    .map(NsOrInf::Ns)
                    .map_err(|_| E::custom(format!("{v} is negative; expected {}", Expecting)))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<NsOrInf, E> {
                if v == f64::INFINITY {
                    Ok(NsOrInf::Inf)
                } else {
                    Err(E::custom(format!("{v} is not {}", Expecting)))
                }
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<NsOrInf, E> {
                match v.trim().to_ascii_lowercase().as_str() {
                    "inf" | "infinity" | "+inf" => Ok(NsOrInf::Inf),
                    _ => Err(E::custom(format!("`{v}` is not {}", Expecting))),
                }
            }
        }
        struct Expecting;
        impl fmt::Display for Expecting {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a non-negative integer of nanoseconds or \"inf\"")
            }
        }
        d.deserialize_any(V)
    }
}

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
///
/// A plain value (128 bytes) for policies and the mechanism's interface; memory keeps the
/// per-page sets in a compact form of its own (the first 64 nodes inline with the page),
/// so the width of this type costs nothing per page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeSet([u64; NodeSet::WORDS]);

impl Default for NodeSet {
    fn default() -> NodeSet {
        NodeSet::EMPTY
    }
}

impl NodeSet {
    /// Words of 64 nodes in a set.
    pub const WORDS: usize = 16;
    /// The largest number of nodes a set can hold.
    pub const CAPACITY: usize = 64 * NodeSet::WORDS;
    /// The empty set.
    pub const EMPTY: NodeSet = NodeSet([0; NodeSet::WORDS]);

    /// The set whose word `i` (nodes `64 i .. 64 i + 63`) is `words[i]`; missing words are empty.
    #[inline]
    pub fn from_words(words: &[u64]) -> NodeSet {
        let mut s = NodeSet::EMPTY;
        for (d, w) in s.0.iter_mut().zip(words) {
            *d = *w;
        }
        s
    }
    /// The set of nodes `0 .. 64` given as a bit mask (bit `i` is node `i`).
    #[inline]
    pub fn from_bits(bits: u64) -> NodeSet {
        NodeSet::from_words(&[bits])
    }
    /// Word `i` of the set (nodes `64 i .. 64 i + 63`).
    #[inline]
    pub fn word(&self, i: usize) -> u64 {
        self.0[i]
    }
    /// A set holding one node.
    #[inline]
    pub fn single(n: NodeId) -> NodeSet {
        let mut s = NodeSet::EMPTY;
        s.insert(n);
        s
    }
    /// Whether `n` is in the set.
    #[inline]
    pub fn contains(&self, n: NodeId) -> bool {
        self.0[n.idx() >> 6] & (1u64 << (n.0 & 63)) != 0
    }
    /// Adds `n`.
    #[inline]
    pub fn insert(&mut self, n: NodeId) {
        self.0[n.idx() >> 6] |= 1u64 << (n.0 & 63);
    }
    /// Removes `n`.
    #[inline]
    pub fn remove(&mut self, n: NodeId) {
        self.0[n.idx() >> 6] &= !(1u64 << (n.0 & 63));
    }
    /// The nodes in both sets.
    #[inline]
    pub fn intersection(&self, other: &NodeSet) -> NodeSet {
        let mut s = *self;
        for (a, b) in s.0.iter_mut().zip(other.0) {
            *a &= b;
        }
        s
    }
    /// The nodes in either set.
    #[inline]
    pub fn union(&self, other: &NodeSet) -> NodeSet {
        let mut s = *self;
        for (a, b) in s.0.iter_mut().zip(other.0) {
            *a |= b;
        }
        s
    }
    /// Number of nodes in the set.
    #[inline]
    pub fn len(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }
    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }
    /// The lowest-numbered node, if any.
    #[inline]
    pub fn first(&self) -> Option<NodeId> {
        self.iter().next()
    }
    /// The nodes in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = NodeId> + 'static {
        let words = self.0;
        let mut i = 0usize;
        let mut bits = words[0];
        std::iter::from_fn(move || loop {
            if bits != 0 {
                let n = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                return Some(NodeId((i * 64 + n) as u16));
            }
            i += 1;
            if i >= NodeSet::WORDS {
                return None;
            }
            bits = words[i];
        })
    }
}

impl FromIterator<NodeId> for NodeSet {
    fn from_iter<I: IntoIterator<Item = NodeId>>(it: I) -> NodeSet {
        let mut s = NodeSet::EMPTY;
        for n in it {
            s.insert(n);
        }
        s
    }
}

/// Simulated time a run may reach (2^62 ns, about 146 years); beyond it a result would
/// be meaningless, so the engine stops the run with
/// [`SimError::TimeOverflow`](crate::engine::SimError::TimeOverflow).
pub const TIME_LIMIT: u64 = 1 << 62;
