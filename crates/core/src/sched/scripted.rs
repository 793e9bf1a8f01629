//! `scripted`: dedicated placement at start, then timed preemptions, resumptions and
//! moves from a list (e.g. "at 5 ms preempt threads 8..15"), or changes at a program's
//! parallel construct (e.g. "when program 0 enters iteration 100, preempt its threads
//! 16..31": the first experiment of Nikolopoulos et al. 2002; with a program that adapts
//! its thread count, the preempted threads' work is redistributed to the others and its
//! barriers stop waiting for them).

use crate::component::{ProgramShape, SchedChange, Scheduler, SchedulerParams};
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::machine::Machine;
use crate::types::{Ns, ProcId, ThreadId};
use serde::{Deserialize, Serialize};

/// One timed change of a `scripted` scheduler.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptEvent {
    /// When (ns); ignored (leave it out) when `at_construct` is given.
    #[serde(default)]
    pub at_ns: u64,
    /// Instead of a time: when `program` (default 0) first enters this parallel
    /// construct (iteration of its outer loop), before the construct's work is dealt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_construct: Option<u32>,
    /// `preempt`, `resume` or `move`.
    pub action: ScriptAction,
    /// First and last thread (inclusive) it applies to: global thread numbers (programs'
    /// threads numbered one program after another), or numbers within `program`.
    pub threads: [u32; 2],
    /// The program whose threads `threads` numbers; absent: global numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<u32>,
    /// For `resume` and `move`: the processor of the first thread; the others follow on
    /// consecutive processors.
    #[serde(default)]
    pub proc: Option<u16>,
}

/// What a script event does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScriptAction {
    /// Stop the threads.
    Preempt,
    /// Run the threads again.
    Resume,
    /// Move running threads.
    Move,
}

/// Parameters of `scripted`: dedicated placement at start, then the events in time order.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptedConfig {
    /// Processor of thread 0 at start.
    #[field(min = 0, max = 65_535)]
    pub first_proc: u16,
    /// The changes.
    pub events: Vec<ScriptEvent>,
}

impl crate::registry::Describe for ScriptedConfig {
    const KIND: &'static str = "scripted";
    const DESCRIPTION: &'static str =
        "dedicated, then timed preemptions, resumptions and moves from a list";
}

impl SchedulerParams for ScriptedConfig {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(Scripted::new(self.first_proc, self.events.clone()))
    }
}

inventory::submit!(crate::component::SchedulerEntry::of::<ScriptedConfig>());

/// Dedicated placement followed by timed events (no events: the dedicated scheduler).
#[derive(Debug)]
pub struct Scripted {
    first_proc: u16,
    events: Vec<ScriptEvent>,
    next: usize,
    /// Events at construct entries (program, construct, event), each applied once.
    at_construct: Vec<(u32, u32, ScriptEvent)>,
}

impl Scripted {
    pub(crate) fn new(first_proc: u16, mut events: Vec<ScriptEvent>) -> Scripted {
        // A stable sort keeps same-time events in the order written.
        events.sort_by_key(|e| e.at_ns);
        Scripted {
            first_proc,
            events,
            next: 0,
            at_construct: Vec::new(),
        }
    }
}

impl Scheduler for Scripted {
    fn start(
        &mut self,
        machine: &Machine,
        programs: &[ProgramShape],
    ) -> Result<Vec<Option<ProcId>>, ConfigError> {
        let procs = machine.procs() as u32;
        let threads: u32 = programs.iter().map(|p| p.threads).sum();
        if self.first_proc as u32 + threads > procs {
            let per = if programs.len() > 1 {
                format!(
                    " (programs of {} threads)",
                    programs
                        .iter()
                        .map(|p| p.threads.to_string())
                        .collect::<Vec<_>>()
                        .join(" + ")
                )
            } else {
                String::new()
            };
            return Err(ConfigError::new(
                "scheduler",
                format!(
                    "{threads} threads{per} from processor {} need {} processors, one each; \
                     the machine has {procs}",
                    self.first_proc,
                    self.first_proc as u32 + threads
                ),
            ));
        }
        for (i, e) in self.events.iter_mut().enumerate() {
            let [lo, hi] = e.threads;
            // Program-local numbers become global ones here, once.
            let (base, count, whose) = match e.program {
                None => (0, threads, format!("the {threads} threads")),
                Some(p) => {
                    let Some(shape) = programs.get(p as usize) else {
                        return Err(ConfigError::new(
                            format!("scheduler.events[{i}].program"),
                            format!("program {p} does not exist; the run has {}", programs.len()),
                        ));
                    };
                    (
                        shape.first_thread,
                        shape.threads,
                        format!("the {} threads of program {p}", shape.threads),
                    )
                }
            };
            if lo > hi || hi >= count {
                return Err(ConfigError::new(
                    format!("scheduler.events[{i}].threads"),
                    format!("[{lo}, {hi}] is not a range of {whose}"),
                ));
            }
            match (e.action, e.proc) {
                (ScriptAction::Preempt, _) => {}
                (_, None) => {
                    return Err(ConfigError::new(
                        format!("scheduler.events[{i}].proc"),
                        "resume and move need a processor",
                    ))
                }
                (_, Some(p)) => {
                    if p as u32 + (hi - lo) >= procs {
                        return Err(ConfigError::new(
                            format!("scheduler.events[{i}].proc"),
                            format!("processors {p}..{} do not all exist", p as u32 + hi - lo),
                        ));
                    }
                }
            }
            e.threads = [base + lo, base + hi];
            if let Some(k) = e.at_construct {
                if e.at_ns != 0 {
                    return Err(ConfigError::new(
                        format!("scheduler.events[{i}].at_ns"),
                        "give either at_ns or at_construct, not both",
                    ));
                }
                self.at_construct
                    .push((e.program.unwrap_or(0), k, e.clone()));
            }
            e.program = None;
        }
        if !self.at_construct.is_empty() {
            self.events.retain(|e| e.at_construct.is_none());
        }
        Ok((0..threads)
            .map(|t| Some(ProcId(self.first_proc + t as u16)))
            .collect())
    }

    fn next_event(&self) -> Option<Ns> {
        self.events.get(self.next).map(|e| Ns(e.at_ns))
    }

    fn on_event(
        &mut self,
        now: Ns,
        _view: &dyn crate::component::SchedView,
        out: &mut Vec<SchedChange>,
    ) {
        while let Some(e) = self.events.get(self.next) {
            if Ns(e.at_ns) > now {
                break;
            }
            changes_of(e, out);
            self.next += 1;
        }
    }

    /// A finished thread of a program that adapts its thread count leaves its processor to
    /// a thread of the program the script stopped: past the last construct it has nothing
    /// left but to finish, and it needs a processor for that.
    fn on_thread(
        &mut self,
        _now: Ns,
        view: &dyn crate::component::SchedView,
        thread: ThreadId,
        change: crate::component::ThreadChange,
        out: &mut Vec<SchedChange>,
    ) {
        let th = view.thread(thread);
        let (Some(proc), crate::component::ThreadChange::Finished) = (th.proc, change) else {
            return;
        };
        let p = view.program(th.program);
        if !p.adaptive {
            return;
        }
        let first = p.shape.first_thread;
        let stopped = (first..first + p.shape.threads).find(|&t| {
            let v = view.thread(ThreadId(t));
            v.proc.is_none()
                && matches!(
                    v.state,
                    crate::component::ThreadState::Runnable
                        | crate::component::ThreadState::Blocked
                )
        });
        if let Some(t) = stopped {
            out.push(SchedChange::Resume(ThreadId(t), proc));
        }
    }

    fn on_parallel(
        &mut self,
        _now: Ns,
        _view: &dyn crate::component::SchedView,
        event: crate::component::Parallel,
        out: &mut Vec<SchedChange>,
    ) {
        if event.boundary != crate::component::Boundary::Enter || self.at_construct.is_empty() {
            return;
        }
        let due = |&(p, k, _): &(u32, u32, ScriptEvent)| p == event.program && k == event.construct;
        for (_, _, e) in self.at_construct.iter().filter(|x| due(x)) {
            changes_of(e, out);
        }
        self.at_construct.retain(|x| !due(x));
    }
}

/// The changes one script event makes (its thread numbers already global).
fn changes_of(e: &ScriptEvent, out: &mut Vec<SchedChange>) {
    let [lo, hi] = e.threads;
    for (k, t) in (lo..=hi).enumerate() {
        let tid = ThreadId(t);
        let proc = e.proc.map(|p| ProcId(p + k as u16));
        out.push(match (e.action, proc) {
            (ScriptAction::Preempt, _) | (_, None) => SchedChange::Preempt(tid),
            (ScriptAction::Resume, Some(p)) => SchedChange::Resume(tid, p),
            (ScriptAction::Move, Some(p)) => SchedChange::Move(tid, p),
        });
    }
}
