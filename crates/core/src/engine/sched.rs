//! The scheduler's side of the run: programs starting, threads changing state, the
//! scheduler told of both and its changes (preempt, resume, move) applied, the policy told
//! of every change.

use super::*;

/// The run as a scheduler reads it ([`SchedView`]), borrowed from the engine for one call.
struct View<'a> {
    seed: u64,
    machine: &'a Machine,
    threads: &'a [ThreadRt],
    progs: &'a [ProgRt],
}

impl SchedView for View<'_> {
    fn machine(&self) -> &Machine {
        self.machine
    }

    fn seed(&self) -> u64 {
        self.seed
    }

    fn programs(&self) -> u32 {
        self.progs.len() as u32
    }

    fn program(&self, p: u32) -> ProgramView {
        let p = &self.progs[p as usize];
        ProgramView {
            shape: ProgramShape {
                threads: p.threads,
                first_thread: p.first_thread,
                start: p.start,
            },
            live: if p.started { p.live } else { 0 },
            runnable: p.runnable,
            running: p.running_ready,
            in_parallel: p.in_parallel,
            adaptive: p.adaptive,
        }
    }

    fn threads(&self) -> u32 {
        self.threads.len() as u32
    }

    fn thread(&self, t: ThreadId) -> ThreadView {
        let th = &self.threads[t.idx()];
        ThreadView {
            program: th.prog,
            local: th.local,
            proc: th.proc,
            state: match th.status {
                Status::NotStarted => ThreadState::NotStarted,
                Status::Ready => ThreadState::Runnable,
                Status::AtBarrier | Status::AtLock | Status::AtEvent => ThreadState::Blocked,
                Status::Sleeping => ThreadState::Sleeping,
                Status::Done => ThreadState::Finished,
            },
        }
    }
}

impl Engine {
    /// Calls one scheduler hook with a view of the run, then applies the changes it made.
    pub(super) fn tell_scheduler(
        &mut self,
        now: Ns,
        hook: impl FnOnce(&mut dyn Scheduler, &dyn SchedView, &mut Vec<SchedChange>),
    ) {
        let mut changes = std::mem::take(&mut self.changes);
        changes.clear();
        let view = View {
            seed: self.seed,
            machine: &self.mm.machine,
            threads: &self.threads,
            progs: &self.progs,
        };
        hook(self.scheduler.as_mut(), &view, &mut changes);
        if !changes.is_empty() {
            self.apply_changes(now, &changes);
        }
        self.changes = changes;
        self.requeue_sched(now);
    }

    /// Queues the scheduler's next timed change when it comes before the one queued (a
    /// hook may have started the scheduler's timer again).
    fn requeue_sched(&mut self, now: Ns) {
        if !self.sched_armed {
            return;
        }
        if let Some(t) = self.scheduler.next_event() {
            let t = t.max(now);
            if self.sched_at.is_none_or(|q| t < q) {
                self.queue.push(t, Event::Sched);
                self.sched_at = Some(t);
            }
        }
    }

    /// The scheduler's timed changes due at `now`, and its next one queued.
    pub(super) fn sched_event(&mut self, now: Ns) {
        if self.sched_armed {
            if self.sched_at != Some(now) {
                // Superseded by an earlier one queued since.
                return;
            }
            self.sched_at = None;
        }
        self.tell_scheduler(now, |s, v, out| s.on_event(now, v, out));
        if let Some(t) = self.scheduler.next_event() {
            let t = t.max(now);
            if self.sched_at.is_none_or(|q| t < q) {
                self.queue.push(t, Event::Sched);
                self.sched_at = Some(t);
            }
        }
    }

    /// Tells the scheduler what happened to thread `tid`.
    pub(super) fn thread_changed(&mut self, tid: u32, change: ThreadChange, now: Ns) {
        self.tell_scheduler(now, |s, v, out| {
            s.on_thread(now, v, ThreadId(tid), change, out)
        });
    }

    /// Program `pi` starts at `now`: its threads are created (each on the processor the
    /// scheduler planned for it), the scheduler is told, and the running ones are queued.
    pub(super) fn start_program(&mut self, pi: usize, now: Ns) {
        self.create_threads(pi, now);
        let p = &self.progs[pi];
        for t in p.first_thread..p.first_thread + p.threads {
            if self.threads[t as usize].proc.is_some() {
                let at = now + self.start_skew(t);
                self.queue_thread(t, at);
            }
        }
    }

    /// Thread `t`'s start skew (zero without variation), recorded in its statistics.
    pub(super) fn start_skew(&mut self, t: u32) -> Ns {
        let skew = self.variation.as_ref().map_or(Ns::ZERO, |v| v.skew(t));
        self.threads[t as usize].stats.start_skew_ns = skew.0;
        skew
    }

    /// Creates program `pi`'s threads and tells the scheduler of each (without queueing
    /// them: at time 0 the queue order of the first steps is the setup's).
    pub(super) fn create_threads(&mut self, pi: usize, now: Ns) {
        let p = &mut self.progs[pi];
        p.started = true;
        self.pending_starts -= 1;
        let (first, n) = (p.first_thread, p.threads);
        if let Some(v) = &mut self.variation {
            v.draw_skews(first..first + n);
        }
        for t in first..first + n {
            self.set_status(t, Status::Ready);
            let th = &self.threads[t as usize];
            self.mm.thread_nodes[t as usize] = th.proc.map(|_| th.node);
        }
        for t in first..first + n {
            self.thread_changed(t, ThreadChange::Created, now);
        }
    }

    /// Sets thread `tid`'s status, keeping its program's runnable and running counts.
    pub(super) fn set_status(&mut self, tid: u32, status: Status) {
        let th = &mut self.threads[tid as usize];
        let (was, has_proc) = (th.status, th.proc.is_some());
        th.status = status;
        let p = &mut self.progs[th.prog as usize];
        let delta = i32::from(status == Status::Ready) - i32::from(was == Status::Ready);
        p.runnable = p.runnable.wrapping_add_signed(delta);
        if has_proc {
            p.running_ready = p.running_ready.wrapping_add_signed(delta);
        }
    }

    /// Sets thread `tid`'s processor (and node), keeping its program's counts and the
    /// mechanism's view of where threads run.
    fn set_proc(&mut self, tid: u32, proc: Option<ProcId>) {
        let th = &mut self.threads[tid as usize];
        let had = th.proc.is_some();
        th.proc = proc;
        if let Some(p) = proc {
            th.node = self.mm.machine.node_of(p);
        }
        let p = &mut self.progs[th.prog as usize];
        p.running[th.local as usize] = proc.is_some();
        if th.status == Status::Ready {
            let delta = i32::from(proc.is_some()) - i32::from(had);
            p.running_ready = p.running_ready.wrapping_add_signed(delta);
        }
        let created = th.status != Status::NotStarted;
        self.mm.thread_nodes[tid as usize] = proc.filter(|_| created).map(|_| th.node);
    }

    /// Applies scheduler changes in order: threads preempted, resumed and moved, each
    /// change told to the policy (its work is charged as daemon time). A change to a
    /// thread not yet created changes where it will run when created; a change to a
    /// finished thread is ignored.
    fn apply_changes(&mut self, now: Ns, changes: &[SchedChange]) {
        for &c in changes {
            let tid = match c {
                SchedChange::Preempt(t) | SchedChange::Resume(t, _) | SchedChange::Move(t, _) => t,
            };
            let Some(th) = self.threads.get(tid.idx()) else {
                continue;
            };
            if th.status == Status::Done {
                continue;
            }
            let ev = match c {
                SchedChange::Preempt(t) => SchedEvent::Preempted(t),
                SchedChange::Resume(t, p) => SchedEvent::Resumed(t, p),
                SchedChange::Move(t, p) => SchedEvent::Migrated {
                    thread: t,
                    from: th.proc.unwrap_or(p),
                    to: p,
                },
            };
            let proc = match c {
                SchedChange::Preempt(_) => None,
                SchedChange::Resume(_, p) | SchedChange::Move(_, p) => Some(p),
            };
            // A thread taken off its processor in the middle of an operation finishes it
            // there: the operation is not split, so the processor stays busy until it ends
            // and the next thread starts then (a preemption takes effect at the end of the
            // running operation). Else both would run on one processor until it ends.
            if let (Some(old), SchedChange::Preempt(_) | SchedChange::Move(..)) = (th.proc, c) {
                if th.status == Status::Ready && th.queued && Some(old) != proc {
                    if let Some(end) = self.queue.pending_step(tid.0).filter(|&e| e > now) {
                        let busy = &mut self.proc_busy_until[old.idx()];
                        *busy = (*busy).max(end);
                    }
                }
            }
            self.set_proc(tid.0, proc);
            let th = &self.threads[tid.idx()];
            if th.status == Status::NotStarted {
                continue;
            }
            let node = th.node;
            if proc.is_some() && th.status == Status::Ready {
                self.queue_thread(tid.0, now);
            }
            let (policy, mut ctx) = self.ctx(now, node);
            policy.on_sched_event(&mut ctx, ev);
            self.stats.daemon_busy_ns += ctx.cost.0;
        }
    }

    /// Thread `tid` crosses a parallel construct's boundary: the scheduler and the policy
    /// are told; returns when the thread continues (the policy's work is charged to it).
    pub(super) fn parallel(&mut self, tid: u32, construct: u32, boundary: Boundary, now: Ns) -> Ns {
        let th = &mut self.threads[tid as usize];
        let (program, node) = (th.prog, th.node);
        if boundary == Boundary::Enter {
            th.construct = Some(construct);
        }
        let p = &mut self.progs[program as usize];
        match boundary {
            Boundary::Enter => p.in_parallel += 1,
            Boundary::Exit => p.in_parallel = p.in_parallel.saturating_sub(1),
        }
        let event = Parallel {
            thread: ThreadId(tid),
            program,
            construct,
            boundary,
        };
        self.tell_scheduler(now, |s, v, out| s.on_parallel(now, v, event, out));
        let (policy, mut ctx) = self.ctx(now, node);
        policy.on_parallel(&mut ctx, event);
        let end = now + ctx.cost;
        self.apply_delays();
        end
    }
}
