//! A [`SchedView`] over plain vectors, for the schedulers' unit tests: the test sets
//! thread states and applies the scheduler's changes itself.

use crate::component::{
    ProgramShape, ProgramView, SchedChange, SchedView, ThreadState, ThreadView,
};
use crate::machine::Machine;
use crate::types::{ProcId, ThreadId};

/// A run as a scheduler sees it, kept by hand.
pub struct FakeView {
    pub machine: Machine,
    pub shapes: Vec<ProgramShape>,
    pub adaptive: Vec<bool>,
    pub threads: Vec<ThreadView>,
    pub in_parallel: Vec<u32>,
}

impl FakeView {
    /// `nodes` nodes of `per_node` processors; programs of these thread counts, all
    /// starting at 0, their threads not yet created.
    pub fn new(nodes: u16, per_node: u16, programs: &[u32]) -> FakeView {
        let mut cfg = crate::mm::test_machine_config(nodes);
        cfg.procs_per_node = per_node;
        let machine = Machine::new(cfg).expect("valid test machine");
        let mut shapes = Vec::new();
        let mut threads = Vec::new();
        let mut first = 0;
        for (p, &n) in programs.iter().enumerate() {
            shapes.push(ProgramShape {
                threads: n,
                first_thread: first,
                start: crate::types::Ns::ZERO,
            });
            for local in 0..n {
                threads.push(ThreadView {
                    program: p as u32,
                    local,
                    proc: None,
                    state: ThreadState::NotStarted,
                });
            }
            first += n;
        }
        FakeView {
            machine,
            adaptive: vec![false; shapes.len()],
            in_parallel: vec![0; shapes.len()],
            shapes,
            threads,
        }
    }

    /// Sets thread `t`'s state.
    pub fn set(&mut self, t: u32, state: ThreadState) {
        self.threads[t as usize].state = state;
    }

    /// Applies changes as the engine would.
    pub fn apply(&mut self, changes: &[SchedChange]) {
        for c in changes {
            match *c {
                SchedChange::Preempt(t) => self.threads[t.idx()].proc = None,
                SchedChange::Resume(t, p) | SchedChange::Move(t, p) => {
                    self.threads[t.idx()].proc = Some(p)
                }
            }
        }
    }

    /// Thread `t`'s processor.
    pub fn proc(&self, t: u32) -> Option<u16> {
        self.threads[t as usize].proc.map(|p: ProcId| p.0)
    }

    /// Threads with a processor, and no two on one.
    pub fn running(&self) -> Vec<u32> {
        let mut seen = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        for (t, th) in self.threads.iter().enumerate() {
            if let (Some(p), ThreadState::Runnable | ThreadState::Blocked) = (th.proc, th.state) {
                assert!(seen.insert(p.0), "two threads on processor {}", p.0);
                out.push(t as u32);
            }
        }
        out
    }
}

impl SchedView for FakeView {
    fn machine(&self) -> &Machine {
        &self.machine
    }
    fn seed(&self) -> u64 {
        7
    }
    fn programs(&self) -> u32 {
        self.shapes.len() as u32
    }
    fn program(&self, p: u32) -> ProgramView {
        let shape = self.shapes[p as usize];
        let mine = || self.threads.iter().filter(move |t| t.program == p);
        let live = mine()
            .filter(|t| !matches!(t.state, ThreadState::NotStarted | ThreadState::Finished))
            .count() as u32;
        let runnable = mine().filter(|t| t.state == ThreadState::Runnable).count() as u32;
        let running = mine()
            .filter(|t| t.state == ThreadState::Runnable && t.proc.is_some())
            .count() as u32;
        ProgramView {
            shape,
            live,
            runnable,
            running,
            in_parallel: self.in_parallel[p as usize],
            adaptive: self.adaptive[p as usize],
        }
    }
    fn threads(&self) -> u32 {
        self.threads.len() as u32
    }
    fn thread(&self, t: ThreadId) -> ThreadView {
        self.threads[t.idx()]
    }
}
