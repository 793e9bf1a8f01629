//! Policy daemons: a step's work is the daemon's busy time; a daemon stealing a node's
//! processor delays the thread there.

use super::*;

impl Engine {
    pub(super) fn daemon_step(&mut self, id: usize, now: Ns) {
        let (node, steal) = (self.daemons[id].node, self.daemons[id].steal_proc);
        let (policy, mut ctx) = self.ctx(now, node);
        let next = policy.on_daemon(&mut ctx, id);
        let busy = ctx.cost;
        self.apply_delays();
        self.stats.daemon_busy_ns += busy.0;
        if let Some(p) = steal {
            let b = &mut self.proc_busy_until[p.idx()];
            *b = (*b).max(now + busy);
        }
        if let DaemonNext::After(wait) = next {
            // A daemon that neither works nor waits would spin at one instant forever.
            let at = (now + busy + wait).max(now + Ns(1));
            self.queue.push(at, Event::Daemon(id as u32));
        }
    }
}
