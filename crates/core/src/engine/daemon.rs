//! Policy daemons: a step's work is the daemon's busy time; a daemon stealing a node's
//! processor delays the thread there.

use super::*;
use crate::mm::DaemonAhead;

impl Engine {
    /// Daemon `id`'s step at `now`, and the steps after it that come before every other
    /// event (a daemon runs ahead as a thread does: the same result as queueing each
    /// step, without the queue).
    pub(super) fn daemon_step(&mut self, id: usize, mut now: Ns) -> Result<(), SimError> {
        loop {
            let (node, steal) = (self.daemons[id].node, self.daemons[id].steal_proc);
            // The steps the daemon may take within the call: those the loop below would
            // take next (before every other event and the time limit, before the monitor
            // is due), while nothing else can happen meanwhile (a run that cannot go on
            // fails after the first step, as below).
            let ahead = if self.bulk && self.check_progress(now).is_ok() {
                let until = self
                    .queue
                    .next_time()
                    .map_or(TIME_LIMIT, |t| t.0.min(TIME_LIMIT));
                let steps_left = self
                    .next_poll
                    .saturating_sub(self.stats.ops + 1)
                    .saturating_sub(self.events);
                DaemonAhead {
                    until: Ns(until),
                    steps_left,
                    started: now,
                }
            } else {
                DaemonAhead::default()
            };
            let (policy, mut ctx) = self.ctx(now, node);
            ctx.ahead = ahead;
            let next = policy.on_daemon(&mut ctx, id);
            let busy = ctx.cost;
            // Each step taken within the call is an event, as it would have been here.
            self.events += ahead.steps_left - ctx.ahead.steps_left;
            self.apply_delays();
            self.stats.daemon_busy_ns += busy.0;
            if let Some(p) = steal {
                let b = &mut self.proc_busy_until[p.idx()];
                *b = (*b).max(now + busy);
            }
            self.check_progress(now)?;
            let DaemonNext::After(wait) = next else {
                return Ok(());
            };
            // A daemon that neither works nor waits would spin at one instant forever.
            let at = (now + busy + wait).max(now + Ns(1));
            // Queued, the next step would be taken first when it comes strictly before
            // every other event; the event loop then counts it, checks the time limit
            // and calls the monitor when it is due, so those steps go through the queue.
            let first = self.queue.next_time().is_none_or(|t| at < t);
            if !first || at.0 >= TIME_LIMIT || self.stats.ops + self.events + 1 >= self.next_poll {
                self.queue.push(at, Event::Daemon(id as u32));
                return Ok(());
            }
            self.events += 1;
            self.now = at;
            now = at;
        }
    }
}
