//! Operations: what a thread of a program asks the engine to do next.

use crate::types::{Ns, Vpn};

/// One operation of a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// A run of `count` word references to one page of the program (the unit that keeps
    /// the simulator fast: references to one page in a row cost one event).
    Ref {
        /// Page, numbered within the program's address space.
        vpn: Vpn,
        /// Writes (true) or reads (false).
        write: bool,
        /// Number of word references.
        count: u32,
        /// Where in the page the words the run walks begin (bytes). Only processor caches
        /// read it (which lines a run walks); 0 for a run from the page's start.
        at: u32,
        /// Bytes of the page the run walks from `at` (its lines, for processor caches);
        /// 0: `count` references of the program's reference size, one after another.
        span: u32,
    },
    /// Computation without shared references.
    Compute(Ns),
    /// Wait until every thread of the program arrives.
    Barrier,
    /// Acquire a lock of the program.
    Lock(u32),
    /// Release a lock of the program.
    Unlock(u32),
    /// A phase-change hint (DUnX).
    PhaseHint,
    /// The thread finished an iteration of the program's outer loop.
    IterationEnd(u32),
    /// The thread enters parallel construct `k` of its program (a fork-join loop's
    /// iteration): where an OpenMP-style runtime would ask the scheduler for processors.
    /// Not work: it costs only what the scheduler and the policy do about it.
    ParallelEnter(u32),
    /// The thread leaves parallel construct `k`, after the construct's closing barrier.
    ParallelExit(u32),
    /// The thread is about to reference this page (program-local) heavily: the perfect
    /// knowledge Holliday's Foresight baseline migrates on. Other policies ignore it.
    Advise(Vpn),
    /// Spin-wait: poll `vpn` with a run of `count` references (reads, or writes for a
    /// test-and-set), again and again, until the program's event count `event` has
    /// reached `at_least` when a poll starts. Every poll is a real reference run, so
    /// where the synchronisation page lives (local, replicated, frozen and remote) decides
    /// what waiting costs.
    Spin {
        /// The page holding the event count or lock word.
        vpn: Vpn,
        /// Whether a poll writes (test-and-set) or only reads.
        write: bool,
        /// Word references per poll.
        count: u32,
        /// The program's event count polled.
        event: u32,
        /// The value that ends the wait.
        at_least: u32,
    },
    /// Advances the program's event count `event` to at least `to` (the write to its
    /// word is a separate `Ref`). Spinning threads see it at their next poll.
    Advance {
        /// The event count.
        event: u32,
        /// Its new value (event counts never go back).
        to: u32,
    },
    /// Blocks the thread, without polling and without references, until the program's
    /// event count `event` has reached `at_least` (a futex-style wait: a replayed trace's
    /// thread creation and join, lock hand-over in the recorded order, and barriers whose
    /// parties are a team rather than the program). An [`Op::Advance`] that reaches the
    /// value releases it at that instant.
    Await {
        /// The program's event count waited on.
        event: u32,
        /// The value that ends the wait.
        at_least: u32,
    },
    /// The thread waits this long for input or output (an I/O-bound job's disk wait):
    /// it is not runnable meanwhile, and the scheduler, told it sleeps and wakes, may
    /// give its processor to another thread.
    Sleep(Ns),
}

impl Op {
    /// A run of `count` references to `vpn` from the page's start.
    pub fn run(vpn: Vpn, write: bool, count: u32) -> Op {
        Op::Ref {
            vpn,
            write,
            count,
            at: 0,
            span: 0,
        }
    }
}
