//! Watching a run's references from outside the core: an optional observer the engine
//! calls once per completed reference run, so another crate can record a trace (the
//! core itself does no IO).

use crate::types::{NodeId, NodeSet, Ns, Vpn};

/// One completed reference run, as the engine saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObservedRun {
    /// When the thread issued the run (before any fault, lock or contention wait).
    pub start: Ns,
    /// When the run ended.
    pub end: Ns,
    /// The thread (global id).
    pub thread: u32,
    /// The node the thread ran on.
    pub node: NodeId,
    /// The page (the run's global page number).
    pub vpn: Vpn,
    /// Whether the run wrote.
    pub write: bool,
    /// Words referenced.
    pub count: u32,
    /// The node whose copy served the run (the mapping it used).
    pub target: NodeId,
    /// The page's copies when the run was served (after any fault).
    pub copies: NodeSet,
}

/// Receives every completed reference run of a run, in the order the engine executes
/// them (non-decreasing issue time). Installed with
/// [`Engine::set_observer`](crate::Engine::set_observer); without one the engine pays one
/// predictable branch per run.
pub trait RefObserver {
    /// A reference run completed.
    fn reference(&mut self, run: &ObservedRun);
}
