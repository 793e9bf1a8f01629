//! Scheduler changes: threads preempted, resumed and moved, and the policy told.

use super::*;

impl Engine {
    pub(super) fn sched_event(&mut self, now: Ns) {
        let mut changes = std::mem::take(&mut self.changes);
        changes.clear();
        self.scheduler.on_event(now, &mut changes);
        for &c in &changes {
            let (tid, ev) = match c {
                SchedChange::Preempt(t) => (t, SchedEvent::Preempted(t)),
                SchedChange::Resume(t, p) => (t, SchedEvent::Resumed(t, p)),
                SchedChange::Move(t, p) => {
                    let from = self.threads[t.idx()].proc.unwrap_or(p);
                    (
                        t,
                        SchedEvent::Migrated {
                            thread: t,
                            from,
                            to: p,
                        },
                    )
                }
            };
            let Some(th) = self.threads.get_mut(tid.idx()) else {
                continue;
            };
            if th.status == Status::Done {
                continue;
            }
            match c {
                SchedChange::Preempt(_) => th.proc = None,
                SchedChange::Resume(_, p) | SchedChange::Move(_, p) => {
                    th.proc = Some(p);
                    th.node = self.mm.machine.node_of(p);
                }
            }
            let running = th.proc.is_some();
            let (pi, local, node) = (th.prog as usize, th.local as usize, th.node);
            self.progs[pi].running[local] = running;
            self.mm.thread_nodes[tid.idx()] = th.proc.map(|_| node);
            if running && th.status == Status::Ready {
                self.queue_thread(tid.0, now);
            }
            let (policy, mut ctx) = self.ctx(now, node);
            policy.on_sched_event(&mut ctx, ev);
            self.stats.daemon_busy_ns += ctx.cost.0;
        }
        self.changes = changes;
        if let Some(t) = self.scheduler.next_event() {
            self.queue.push(t.max(now), Event::Sched);
        }
    }
}
