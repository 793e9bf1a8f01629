//! `space-sharing`: dynamic space sharing with equipartition and process control
//! (Tucker's process control, as Nikolopoulos et al., JPDC 2002, sec. 6.4 emulate it).
//!
//! Every program asks for processors: a program that adapts its thread count asks for
//! all its threads inside a parallel construct and one outside (the fork-join programs
//! here go from one construct straight into the next, so outside lasts no time and the
//! request is all its threads); any other program asks for its live threads, sleeping ones
//! included: a background job keeps its claim, and its processor, while it waits for
//! input or output, as the paper's background load "requires at least one processor
//! throughout the execution of the workload" (sec. 6.4). Equipartition
//! shares the processors: one at a time to each program in turn until every request is
//! met or the processors run out. A program gains processors at the entry of its next
//! construct (its parked threads resume before the construct's work is dealt, so they
//! join its team) and gives them up there too (threads that have passed the previous
//! construct's barrier but not yet entered the new one are parked while the program holds
//! more than its share), so the program adapts its thread count at construct boundaries;
//! its first thread, and the one entering, are never parked.
//! A program that does not adapt takes free processors as its threads become runnable.
//! Threads resume on their last processor when it is free, else on its node, else
//! anywhere (IRIX's affinity links, which the paper left enabled).
//!
//! Left out: the shared-memory load index and its polling delay (a program's request is
//! seen at once), and the cost of a reallocation.

use crate::component::{
    Boundary, Parallel, ProgramShape, SchedChange, SchedView, Scheduler, SchedulerParams,
    ThreadChange, ThreadState,
};
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::machine::Machine;
use crate::stats::Counter;
use crate::types::{Ns, ProcId, ThreadId};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Parameters of `space-sharing`.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct SpaceSharingConfig {
    /// Processors kept out of the partition (e.g. for daemons), from the last processor
    /// down. Default 0.
    #[field(min = 0, max = 65_535)]
    pub reserved_procs: u16,
}

impl crate::registry::Describe for SpaceSharingConfig {
    const KIND: &'static str = "space-sharing";
    const DESCRIPTION: &'static str = "dynamic space sharing: equipartition, process control \
         (programs adapt their thread count at parallel constructs)";
}

impl SchedulerParams for SpaceSharingConfig {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(SpaceSharing::new(self.clone()))
    }
}

inventory::submit!(crate::component::SchedulerEntry::of::<SpaceSharingConfig>());

/// The space-sharing scheduler's state.
#[derive(Debug)]
pub struct SpaceSharing {
    cfg: SpaceSharingConfig,
    /// Per processor: the thread holding it.
    current: Vec<Option<u32>>,
    /// Per thread: the processor it holds or last held.
    last: Vec<Option<u32>>,
    /// Per program: processors its threads hold.
    held: Vec<u32>,
    /// Per program: its equipartition share.
    target: Vec<u32>,
    /// Per program: the last construct whose entry was seen.
    construct: Vec<Option<u32>>,
    /// Per thread: the last construct it entered.
    entered: Vec<Option<u32>>,
    /// Per program: a thread finished, so its parked threads must run to finish too.
    draining: Vec<bool>,
    /// Runnable threads of programs that do not adapt, waiting for a processor.
    waiting: VecDeque<u32>,
    procs_per_node: u16,
    parks: u64,
    migrations: u64,
    reallocations: u64,
}

impl SpaceSharing {
    /// A scheduler with these parameters.
    pub fn new(cfg: SpaceSharingConfig) -> SpaceSharing {
        SpaceSharing {
            cfg,
            current: Vec::new(),
            last: Vec::new(),
            held: Vec::new(),
            target: Vec::new(),
            construct: Vec::new(),
            entered: Vec::new(),
            draining: Vec::new(),
            waiting: VecDeque::new(),
            procs_per_node: 1,
            parks: 0,
            migrations: 0,
            reallocations: 0,
        }
    }

    fn node(&self, p: u32) -> u32 {
        p / self.procs_per_node as u32
    }

    /// What program `p` asks for now: all its live threads, whether adapting or not (one
    /// waiting at a barrier or for input or output holds its processor).
    fn request(view: &dyn SchedView, p: u32) -> u32 {
        view.program(p).live
    }

    /// Equipartition: one processor at a time to each program in turn until every
    /// request is met or the processors run out.
    fn equipartition(&mut self, view: &dyn SchedView) {
        let n = view.programs();
        let requests: Vec<u32> = (0..n).map(|p| Self::request(view, p)).collect();
        let mut left = self.current.len() as u32;
        let mut share = vec![0u32; n as usize];
        while left > 0 {
            let mut gave = false;
            for p in 0..n as usize {
                if left > 0 && share[p] < requests[p] {
                    share[p] += 1;
                    left -= 1;
                    gave = true;
                }
            }
            if !gave {
                break;
            }
        }
        if share != self.target {
            self.reallocations += 1;
            self.target = share;
        }
    }

    /// A free processor for thread `t`: its last one, else one on its node, else the
    /// first free.
    fn free_proc_for(&self, t: u32) -> Option<u32> {
        let free = |p: u32| self.current[p as usize].is_none();
        let n = self.current.len() as u32;
        if let Some(l) = self.last[t as usize] {
            if free(l) {
                return Some(l);
            }
            if let Some(p) = (0..n).find(|&p| free(p) && self.node(p) == self.node(l)) {
                return Some(p);
            }
        }
        (0..n).find(|&p| free(p))
    }

    fn run(&mut self, view: &dyn SchedView, t: u32, p: u32, out: &mut Vec<SchedChange>) {
        if self.last[t as usize].is_some_and(|l| self.node(l) != self.node(p)) {
            self.migrations += 1;
        }
        self.last[t as usize] = Some(p);
        self.current[p as usize] = Some(t);
        self.held[view.thread(ThreadId(t)).program as usize] += 1;
        out.push(SchedChange::Resume(ThreadId(t), ProcId(p as u16)));
    }

    /// Takes thread `t`'s processor (if it holds one).
    fn release(&mut self, view: &dyn SchedView, t: u32, out: Option<&mut Vec<SchedChange>>) {
        let Some(p) = self.last[t as usize] else {
            return;
        };
        if self.current[p as usize] == Some(t) {
            self.current[p as usize] = None;
            self.held[view.thread(ThreadId(t)).program as usize] -= 1;
            if let Some(out) = out {
                out.push(SchedChange::Preempt(ThreadId(t)));
            }
        }
    }

    fn holds(&self, t: u32) -> bool {
        self.last[t as usize].is_some_and(|p| self.current[p as usize] == Some(t))
    }

    /// Parked threads of program `p` (adaptive, live, without a processor).
    fn parked(&self, view: &dyn SchedView, p: u32) -> Vec<u32> {
        let shape = view.program(p).shape;
        (shape.first_thread..shape.first_thread + shape.threads)
            .filter(|&t| {
                let th = view.thread(ThreadId(t));
                !self.holds(t) && matches!(th.state, ThreadState::Runnable | ThreadState::Blocked)
            })
            .collect()
    }

    /// Resumes up to `want` parked threads of program `p` on free processors.
    fn grow(&mut self, view: &dyn SchedView, p: u32, want: u32, out: &mut Vec<SchedChange>) {
        let mut left = want;
        for t in self.parked(view, p) {
            if left == 0 {
                break;
            }
            let Some(proc) = self.free_proc_for(t) else {
                break;
            };
            self.run(view, t, proc, out);
            left -= 1;
        }
    }

    /// Hands free processors out: first to the parked threads of programs that are
    /// finishing, then to adapting programs that hold none (none of their threads is in a
    /// construct, so they may start their next one at any time), then to waiting threads
    /// of programs below their share.
    fn fill(&mut self, view: &dyn SchedView, out: &mut Vec<SchedChange>) {
        for p in 0..view.programs() {
            let pi = p as usize;
            if self.draining[pi] {
                self.grow(view, p, u32::MAX, out);
            } else if self.held[pi] == 0 && view.program(p).adaptive && view.program(p).live > 0 {
                self.grow(view, p, self.target[pi], out);
            }
        }
        let mut keep = VecDeque::new();
        while let Some(t) = self.waiting.pop_front() {
            let th = view.thread(ThreadId(t));
            if th.state != ThreadState::Runnable || self.holds(t) {
                continue;
            }
            let pi = th.program as usize;
            match self.free_proc_for(t) {
                Some(proc) if self.held[pi] < self.target[pi] => self.run(view, t, proc, out),
                _ => keep.push_back(t),
            }
        }
        self.waiting = keep;
    }
}

impl Scheduler for SpaceSharing {
    fn start(
        &mut self,
        machine: &Machine,
        programs: &[ProgramShape],
    ) -> Result<Vec<Option<ProcId>>, ConfigError> {
        let procs = machine.procs();
        if self.cfg.reserved_procs as usize >= procs {
            return Err(ConfigError::new(
                "scheduler.reserved_procs",
                format!(
                    "{} reserved of {procs} processors leaves none to share",
                    self.cfg.reserved_procs
                ),
            ));
        }
        let threads: u32 = programs.iter().map(|p| p.threads).sum();
        self.current = vec![None; procs - self.cfg.reserved_procs as usize];
        self.last = vec![None; threads as usize];
        self.held = vec![0; programs.len()];
        self.target = vec![0; programs.len()];
        self.construct = vec![None; programs.len()];
        self.entered = vec![None; threads as usize];
        self.draining = vec![false; programs.len()];
        self.procs_per_node = machine.config.procs_per_node;
        Ok(vec![None; threads as usize])
    }

    fn on_thread(
        &mut self,
        _now: Ns,
        view: &dyn SchedView,
        thread: ThreadId,
        change: ThreadChange,
        out: &mut Vec<SchedChange>,
    ) {
        let t = thread.0;
        let th = view.thread(thread);
        let pi = th.program as usize;
        self.equipartition(view);
        match change {
            // A job whose input or output is done goes on on the processor it kept.
            ThreadChange::Wakes if self.holds(t) => {}
            ThreadChange::Created | ThreadChange::Wakes => {
                let free = self.free_proc_for(t);
                match free {
                    Some(proc) if self.held[pi] < self.target[pi] => self.run(view, t, proc, out),
                    // An adapting program's thread waits parked for a construct entry.
                    _ if view.program(th.program).adaptive => {}
                    _ => self.waiting.push_back(t),
                }
            }
            ThreadChange::Finished => {
                self.release(view, t, None);
                if view.program(th.program).adaptive {
                    self.draining[pi] = true;
                }
            }
            ThreadChange::Sleeps | ThreadChange::Blocked | ThreadChange::Unblocked => {}
        }
        self.fill(view, out);
    }

    fn on_parallel(
        &mut self,
        _now: Ns,
        view: &dyn SchedView,
        e: Parallel,
        out: &mut Vec<SchedChange>,
    ) {
        let pi = e.program as usize;
        if !view.program(e.program).adaptive {
            return;
        }
        self.equipartition(view);
        if e.boundary == Boundary::Exit {
            return;
        }
        self.entered[e.thread.idx()] = Some(e.construct);
        if self.construct[pi].is_some_and(|c| c >= e.construct) {
            return;
        }
        // The construct's first entry, before its work is dealt: the program's
        // processors change now.
        self.construct[pi] = Some(e.construct);
        if self.held[pi] > self.target[pi] {
            let shape = view.program(e.program).shape;
            let mut surplus = self.held[pi] - self.target[pi];
            // The highest-numbered threads go first, so the team stays 0..n.
            for t in (shape.first_thread + 1..shape.first_thread + shape.threads).rev() {
                if surplus == 0 {
                    break;
                }
                let behind = self.entered[t as usize].is_none_or(|c| c < e.construct);
                if behind && self.holds(t) {
                    self.release(view, t, Some(out));
                    self.parks += 1;
                    surplus -= 1;
                }
            }
            self.fill(view, out);
        } else {
            let want = self.target[pi] - self.held[pi];
            self.grow(view, e.program, want, out);
        }
    }

    fn counters(&self) -> Vec<Counter> {
        vec![
            Counter {
                name: "sched_parks",
                label: "threads parked at a construct entry",
                value: self.parks,
            },
            Counter {
                name: "sched_thread_migrations",
                label: "threads resumed on another node",
                value: self.migrations,
            },
            Counter {
                name: "sched_reallocations",
                label: "changes of the equipartition",
                value: self.reallocations,
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::fake::FakeView;

    fn tell(s: &mut SpaceSharing, view: &mut FakeView, t: u32, c: ThreadChange) {
        let mut out = Vec::new();
        s.on_thread(Ns::ZERO, view, ThreadId(t), c, &mut out);
        view.apply(&out);
    }

    fn boundary(s: &mut SpaceSharing, view: &mut FakeView, t: u32, k: u32, b: Boundary) {
        let mut out = Vec::new();
        let program = view.threads[t as usize].program;
        s.on_parallel(
            Ns::ZERO,
            view,
            Parallel {
                thread: ThreadId(t),
                program,
                construct: k,
                boundary: b,
            },
            &mut out,
        );
        view.apply(&out);
    }

    /// Creates program `p`'s threads (all runnable), as the engine does.
    fn create(s: &mut SpaceSharing, view: &mut FakeView, p: usize) {
        let shape = view.shapes[p];
        for t in shape.first_thread..shape.first_thread + shape.threads {
            view.set(t, ThreadState::Runnable);
        }
        for t in shape.first_thread..shape.first_thread + shape.threads {
            tell(s, view, t, ThreadChange::Created);
        }
    }

    /// Two adaptive programs of 4 threads on 2 nodes x 2 processors, the first created.
    fn two_programs() -> (SpaceSharing, FakeView) {
        let mut view = FakeView::new(2, 2, &[4, 4]);
        view.adaptive = vec![true, true];
        let mut s = SpaceSharing::new(SpaceSharingConfig::default());
        s.start(&view.machine, &view.shapes).unwrap();
        create(&mut s, &mut view, 0);
        (s, view)
    }

    #[test]
    fn a_lone_program_gets_every_processor() {
        let (_s, view) = two_programs();
        assert_eq!(view.running(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn equipartition_halves_the_processors_between_two_programs() {
        let (mut s, mut view) = two_programs();
        create(&mut s, &mut view, 1);
        assert_eq!(s.target, vec![2, 2]);
    }

    #[test]
    fn a_program_over_its_share_parks_threads_at_a_construct_entry() {
        let (mut s, mut view) = two_programs();
        create(&mut s, &mut view, 1);
        // Program 0 holds 4 of its share of 2; thread 0 enters construct 0.
        boundary(&mut s, &mut view, 0, 0, Boundary::Enter);
        assert_eq!(view.proc(3), None);
        assert_eq!(view.proc(2), None);
        assert_eq!(view.proc(1), Some(1));
        assert_eq!(s.parks, 2);
    }

    #[test]
    fn a_thread_already_in_the_new_construct_is_not_parked() {
        let (mut s, mut view) = two_programs();
        create(&mut s, &mut view, 1);
        boundary(&mut s, &mut view, 3, 0, Boundary::Enter);
        // Thread 3 entered first; threads 2 and 1 go instead.
        assert_eq!(view.proc(3), Some(3));
        assert_eq!(view.proc(1), None);
    }

    #[test]
    fn a_program_below_its_share_grows_at_a_construct_entry() {
        let (mut s, mut view) = two_programs();
        create(&mut s, &mut view, 1);
        boundary(&mut s, &mut view, 0, 0, Boundary::Enter);
        // Program 1 had nothing; its entry into construct 0 takes the two freed.
        boundary(&mut s, &mut view, 4, 0, Boundary::Enter);
        let running1: Vec<u32> = view.running().into_iter().filter(|&t| t >= 4).collect();
        assert_eq!(running1.len(), 2);
    }

    #[test]
    fn the_first_thread_of_a_program_is_never_parked() {
        let (mut s, mut view) = two_programs();
        create(&mut s, &mut view, 1);
        boundary(&mut s, &mut view, 2, 0, Boundary::Enter);
        assert_eq!(view.proc(0), Some(0));
    }

    #[test]
    fn a_fixed_teams_threads_at_a_barrier_still_count_in_its_request() {
        // A fixed team of 3 on 2 processors and a job: the job finishes, freeing processor
        // 0 while the team's two running threads wait at the barrier.
        let mut view = FakeView::new(1, 2, &[1, 3]);
        let mut s = SpaceSharing::new(SpaceSharingConfig::default());
        s.start(&view.machine, &view.shapes).unwrap();
        create(&mut s, &mut view, 0);
        create(&mut s, &mut view, 1);
        assert_eq!(view.proc(3), None);
        for t in [1, 2] {
            view.set(t, ThreadState::Blocked);
            tell(&mut s, &mut view, t, ThreadChange::Blocked);
        }
        view.set(0, ThreadState::Finished);
        tell(&mut s, &mut view, 0, ThreadChange::Finished);
        assert_eq!(view.proc(3), Some(0));
    }

    #[test]
    fn a_sleeping_job_keeps_its_processor() {
        let mut view = FakeView::new(1, 2, &[1, 1, 1]);
        let mut s = SpaceSharing::new(SpaceSharingConfig::default());
        s.start(&view.machine, &view.shapes).unwrap();
        for p in 0..3 {
            create(&mut s, &mut view, p);
        }
        assert_eq!(view.proc(2), None);
        view.set(0, ThreadState::Sleeping);
        tell(&mut s, &mut view, 0, ThreadChange::Sleeps);
        assert_eq!(view.proc(0), Some(0));
        assert_eq!(view.proc(2), None);
        view.set(0, ThreadState::Runnable);
        tell(&mut s, &mut view, 0, ThreadChange::Wakes);
        assert_eq!(view.proc(0), Some(0));
    }

    #[test]
    fn a_sleeping_job_keeps_its_claim_of_one_processor() {
        // Two adapting programs of 4 threads and a job on 2 x 2 processors: the shares
        // stay 2, 1 and 1 while the job waits for input or output.
        let mut view = FakeView::new(2, 2, &[4, 4, 1]);
        view.adaptive = vec![true, true, false];
        let mut s = SpaceSharing::new(SpaceSharingConfig::default());
        s.start(&view.machine, &view.shapes).unwrap();
        for p in 0..3 {
            create(&mut s, &mut view, p);
        }
        assert_eq!(s.target, vec![2, 1, 1]);
        view.set(8, ThreadState::Sleeping);
        tell(&mut s, &mut view, 8, ThreadChange::Sleeps);
        assert_eq!(s.target, vec![2, 1, 1]);
    }
}
