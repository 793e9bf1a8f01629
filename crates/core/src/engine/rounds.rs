//! Threads taking turns at reference runs of one duration, made without the queue.
//!
//! When several threads each make one short reference run per operation at the same pace
//! (Holliday's synthetic matrix product: one word per operation on every processor),
//! every operation is an event: the thread's next run starts after the other threads'
//! next runs, so none can run ahead. Each such turn costs a queue removal and insertion
//! and a pass through the event loop for a few dozen instructions of work.
//!
//! The *group* is the run of earliest events (the front of the queue's `run`) that are
//! threads' steps, all starting within `d` of the first, where `d` is the duration of the
//! first one's next run. As long as every run the group's threads make takes exactly `d`
//! (no fault, no wait at a module or switch port, no clock interrupt), their events come
//! round by round in the group's order, and nothing else happens before the earliest other
//! event (`Y`): so the runs are made here in that order, each as the reference path makes
//! it, until a run would start at or after `Y`, or one of them is not such a run (then
//! the event loop makes it). The queue is left as the runs one by one leave it: each
//! thread's next step with the sequence number it would have had.
//!
//! The runs of the group may share modules: they are made in the order the event loop
//! would make them, so each finds the module as it would; one that would wait ends the
//! group there.

use super::event::{code_of, key, thread_of, time_of};
use super::*;
use crate::stats::RefClass;

/// Fewest rounds the window must leave room for before a group is formed (a group that
/// makes one round saves nothing).
const ROUNDS_AT_LEAST: u64 = 3;

/// Most thread steps let pass between attempts that find no group.
const BACKOFF_AT_MOST: u8 = 63;

/// A thread of a group: its event's code, when its next run starts, and that run.
#[derive(Clone, Copy, Debug)]
pub(super) struct Turn {
    thread: u32,
    code: u32,
    at: Ns,
    run: PlainRun,
}

/// A reference run the rounds can make, as the reference path would price it.
#[derive(Clone, Copy, Debug)]
pub(super) struct PlainRun {
    /// Its duration.
    d: u64,
    vpn: Vpn,
    node: NodeId,
    target: NodeId,
    write: bool,
    count: u32,
    class: RefClass,
}

impl Engine {
    /// Makes the runs of the group led by the event being handled (thread `tid`'s step at
    /// `now`), when it has at least two threads; returns whether it made any (else
    /// nothing changed and the event is handled as usual).
    pub(super) fn run_rounds(&mut self, tid: u32, now: Ns) -> bool {
        let made = self.try_rounds(tid, now);
        self.rounds_backoff.after(made, BACKOFF_AT_MOST);
        made
    }

    /// Whether rounds have found no group for a while (their wait is the longest):
    /// then threads interleaving at different paces are made by `interleave.rs`, which
    /// takes more work a step than a round does where rounds form.
    #[inline]
    pub(super) fn rounds_failing(&self) -> bool {
        self.rounds_backoff.saturated(BACKOFF_AT_MOST)
    }

    fn try_rounds(&mut self, tid: u32, now: Ns) -> bool {
        if self.bulk_ruled_out() {
            return false;
        }
        let Some((run, heap_first)) = self.queue.held_run() else {
            return false;
        };
        // Quick refusals first: a second thread's step must come next, and the earliest
        // other event late enough for a few rounds (else there is little to gain).
        let second = match run.get(1) {
            Some(&k) if heap_first.is_none_or(|h| k < h) => k,
            _ => return false,
        };
        if thread_of(code_of(second)).is_none() {
            return false;
        }
        let Some(first) = self.plain_run(tid, now) else {
            return false;
        };
        let d = first.d;
        let (run, heap_first) = self.queue.held_run().expect("checked above");
        let within = run
            .iter()
            .take_while(|&&k| {
                heap_first.is_none_or(|h| k < h)
                    && time_of(k).0 - now.0 < d
                    && thread_of(code_of(k)).is_some()
            })
            .count();
        let y = match (run.get(within), heap_first) {
            (Some(&k), Some(h)) => Some(k.min(h)),
            (k, h) => k.copied().or(h),
        };
        let end = y.map_or(TIME_LIMIT, |y| time_of(y).0.min(TIME_LIMIT));
        if end.saturating_sub(now.0) < ROUNDS_AT_LEAST * d {
            return false;
        }
        // The group: those of them whose next runs take `d` (up to the first that does
        // not, whose step is then the earliest other event).
        let mut group = std::mem::take(&mut self.turns);
        group.clear();
        let mut end = end;
        for j in 0..within {
            let k = self.queue.held_run().expect("checked above").0[j];
            let (t, q) = (time_of(k), thread_of(code_of(k)).expect("a thread's step"));
            let run = if j == 0 {
                Some(first)
            } else {
                self.plain_run(q, t)
            };
            match run.filter(|r| r.d == d) {
                Some(run) => group.push(Turn {
                    thread: q,
                    code: code_of(k),
                    at: t,
                    run,
                }),
                None => {
                    end = t.0;
                    break;
                }
            }
        }
        let m = group.len();
        // Only runs before the monitor is due (it is called between events).
        let budget = self
            .next_poll
            .saturating_sub(self.stats.ops + self.events + 1);
        if m < 2 || budget < m as u64 {
            self.turns = group;
            return false;
        }
        // Round by round, in the group's order, until a run would start at or after the
        // end, would not take `d`, or the monitor is due: (round, thread) of the first run
        // not made.
        let (mut made, mut round) = (0u64, 0u64);
        let stop = 'rounds: loop {
            for (j, turn) in group.iter_mut().enumerate() {
                // A thread's first run here was queued before the end; later ones start
                // before it. Each run is looked at again just before it is made: one
                // made before it may have taken its module.
                if round > 0 && (turn.at.0 >= end || made == budget) {
                    break 'rounds j;
                }
                if made > 0 {
                    match self.plain_run(turn.thread, turn.at) {
                        Some(run) if run.d == d => turn.run = run,
                        _ => break 'rounds j,
                    }
                }
                self.make_run(turn.thread, turn.at, turn.run);
                turn.at = Ns(turn.at.0 + d);
                made += 1;
            }
            round += 1;
        };
        if made == 0 {
            self.turns = group;
            return false;
        }
        // Thread j made `round + 1` runs when it comes before the stop, else `round`; one
        // that made none keeps its queued step.
        let runs = |j: usize| round + u64::from(j < stop);
        let base = self.queue.seq();
        let mut keys = std::mem::take(&mut self.spin_keys);
        keys.clear();
        // In time order: the threads from the stop on (one run fewer) lead.
        let order = (stop..m).chain(0..stop);
        for j in order {
            let (turn, n) = (&group[j], runs(j));
            let seq = match n {
                // Still the step it was queued with.
                0 => {
                    keys.push(run_key(self, j));
                    continue;
                }
                _ => m as u64 * (n - 1) + j as u64 + 1,
            };
            keys.push(key(turn.at, base + seq, turn.code));
        }
        self.queue.replace_held_run(m, &keys, made);
        self.events += made - 1;
        let last = if stop > 0 {
            group[stop - 1].at.0 - d
        } else {
            group[m - 1].at.0 - d
        };
        self.now = Ns(last);
        self.spin_keys = keys;
        self.turns = group;
        true
    }

    /// The duration and the class of the reference run thread `t`'s next operation makes
    /// at `at`, when it is one the rounds can make: the thread runs and owes nothing, its
    /// next operation (already generated) is a reference run whose mapping allows it, that
    /// takes some time, waits at no module or switch port, and ends before the processor's
    /// next clock interrupt; and no access monitor watches the run.
    #[inline]
    fn plain_run(&self, t: u32, at: Ns) -> Option<PlainRun> {
        if self.mm.monitors.is_some() {
            // Monitored runs are priced by load and sampled one by one.
            return None;
        }
        let (th, proc) = self.unhindered(t, at)?;
        let Op::Ref {
            vpn, write, count, ..
        } = *th.buf.get(th.pos)?
        else {
            return None;
        };
        let vpn = Vpn(th.base_vpn.checked_add(vpn.0)?);
        if vpn.idx() >= self.mm.mem.npages() {
            return None;
        }
        let node = th.node;
        let target = self.mm.mem.reaches(vpn, node, write)?;
        let (per_word, class) = self.mm.price(node, target, vpn, write);
        let d = per_word.checked_mul(count as u64).filter(|&d| d > 0)?;
        if self.mm.machine.config.contention && class != RefClass::Cached {
            let remote = class == RefClass::Remote;
            if self.mm.modules[target.idx()] > at
                || (remote
                    && self.mm.machine.costs().switch_service_ns > 0
                    && (self.mm.ports[node.idx()] > at || self.mm.ports[target.idx()] > at))
            {
                return None;
            }
        }
        if let Some(ticks) = &self.ticks {
            if ticks.next_at(proc.idx()).0 <= at.0.saturating_add(d) {
                return None;
            }
        }
        Some(PlainRun {
            d,
            vpn,
            node,
            target,
            write,
            count,
            class,
        })
    }

    /// Makes thread `t`'s next operation, the reference run `r` that
    /// [`Engine::plain_run`] found, at `at`: what the reference path does for it, with no
    /// fault, wait or interrupt to take.
    #[inline]
    fn make_run(&mut self, t: u32, at: Ns, r: PlainRun) {
        let th = &mut self.threads[t as usize];
        th.pos += 1;
        self.stats.ops += 1;
        let c = r.count as u64;
        th.stats.refs.add(r.class, c);
        if self.mm.machine.config.contention && r.class != RefClass::Cached {
            let remote = r.class == RefClass::Remote;
            self.mm
                .occupy(&mut th.stats, r.node, r.target, remote, r.count, at);
        }
        self.stats.refs.add(r.class, c);
        if let Some(p) = self.stats.pages.get_mut(r.vpn.idx()) {
            p.refs.add(r.class, c);
        }
        self.mm.hist.record(r.vpn, r.node, r.count);
        if r.write {
            self.mm.mem.mark_written(r.vpn);
        }
    }
}

/// The queued key of the `j`-th event of the group (the `j`-th of `run`).
fn run_key(e: &Engine, j: usize) -> u128 {
    e.queue.held_run().expect("the group leads run").0[j]
}
