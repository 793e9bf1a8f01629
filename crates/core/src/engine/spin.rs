//! Spinning threads' polls in bulk.
//!
//! A thread spinning on an event count ([`Op::Spin`]) polls its page again and again, and
//! each poll is an operation: while the threads of a program wait for one of them, the
//! polls are most of the run's operations (Gaussian elimination: 71% at n = 1260). One
//! by one, each costs a turn of the event loop. Here the polls that come before anything
//! else happens are done in one step, with the same result.
//!
//! When the event being handled is a poll, the *group* is the run of earliest events
//! (the front of the queue's `run`) that are polls, all of one duration `d`, all starting
//! within `d` of the first: they take turns, each poll scheduling the thread's next one
//! after every other poll of the group, in the same order every round. Nothing else
//! happens before the earliest other event (`Y`): the polls only read their pages'
//! mappings and the event counts, which only other events change, and each uses a memory
//! module (and switch ports) of its own, free when it starts, so no poll waits and every
//! poll takes `d`. So each thread of the group makes every poll that starts before `Y`
//! (and its first one, which was queued before `Y`), and its statistics, reference
//! history and module occupancy are what that many polls leave. The queue is left as the
//! polls one by one leave it: each thread's next poll with the sequence number it would
//! have had (round by round, in the group's order).
//!
//! A poll that would wait for its module, take a clock interrupt, fault, or go through
//! processor caches, page-table-entry locks, hardware counters or an observer is not
//! done here: the group ends before it (or no group is formed) and the event loop does
//! it.

use super::event::{code_of, key, thread_of, time_of};
use super::*;
use crate::stats::RefClass;

/// One thread's poll, as the group runs it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Poll {
    thread: u32,
    code: u32,
    /// When its first poll starts.
    at: Ns,
    vpn: Vpn,
    node: NodeId,
    target: NodeId,
    write: bool,
    count: u32,
    class: RefClass,
    /// How long each poll takes.
    d: u64,
    /// Whether it occupies the target's module (and, with `ports`, both ends' switch
    /// ports), with contention modelled.
    occupies: bool,
    ports: bool,
}

/// Most of its own steps a spinning thread lets pass between attempts that find no group.
/// Gaussian elimination's spinners mostly poll among threads at work, where no group
/// forms: at 31, its failed attempts were 7% of the instructions without contention; at
/// 127, runs with contention, where groups do form, lost some of them. 63 between.
const BACKOFF_AT_MOST: u8 = 63;

impl Engine {
    /// [`Engine::spin_rounds`] for thread `tid`'s poll, unless its last attempts found no
    /// group (then it waits a few of its own steps, twice as many after each).
    pub(super) fn try_spin_rounds(&mut self, tid: u32, now: Ns) -> bool {
        if self.threads[tid as usize].spin_backoff.waiting() {
            return false;
        }
        let made = self.spin_rounds(now);
        self.threads[tid as usize]
            .spin_backoff
            .after(made, BACKOFF_AT_MOST);
        made
    }

    /// Makes the polls of the group led by the event being handled (a poll at `now`),
    /// when a group makes at least two rounds; returns whether it did (else nothing
    /// changed and the event is handled as usual).
    pub(super) fn spin_rounds(&mut self, now: Ns) -> bool {
        if self.bulk_ruled_out() {
            return false;
        }
        let Some((run, _)) = self.queue.held_run() else {
            return false;
        };
        let Some(first) = thread_of(code_of(run[0])).and_then(|t| self.quiet_poll(t, now)) else {
            return false;
        };
        let d = first.d;
        // When the next event is not within `d`, the thread polls alone and, with that
        // event within `2d`, makes at most two polls before it: no better than running
        // ahead as usual.
        let (run, heap_first) = self.queue.held_run().expect("checked above");
        let second = match (run.get(1), heap_first) {
            (Some(&r), Some(h)) => Some(r.min(h)),
            (r, h) => r.copied().or(h),
        };
        if second.is_some_and(|k| {
            time_of(k).0 - now.0 >= d && time_of(k).0 - now.0 <= d.saturating_mul(2)
        }) {
            return false;
        }
        // The candidates: the earliest events, starting within `d` of the first; `y` is
        // the earliest other event.
        let mut keys = std::mem::take(&mut self.spin_keys);
        keys.clear();
        let (run, heap_first) = self.queue.held_run().expect("checked above");
        let mut y = heap_first;
        for &k in run {
            if heap_first.is_some_and(|h| h < k) {
                break;
            }
            if time_of(k).0 - now.0 >= d {
                y = Some(k);
                break;
            }
            keys.push(k);
        }
        // The group: the candidates up to the first that is not a poll of duration `d`
        // on a module (and ports) of its own. Its polls start before the earliest other
        // event and before the last start from which a poll would end at or after its
        // thread's next clock interrupt: the window.
        self.spin_gen += 1;
        let mut group = std::mem::take(&mut self.spin_group);
        group.clear();
        let mut window = u64::MAX;
        for (j, &k) in keys.iter().enumerate() {
            let t = time_of(k);
            let member = match j {
                0 => Some(first),
                _ => thread_of(code_of(k))
                    .and_then(|q| self.quiet_poll(q, t))
                    .filter(|p| p.d == d),
            };
            let Some(mut p) = member.filter(|p| self.claim(p)) else {
                y = Some(k);
                break;
            };
            p.code = code_of(k);
            if let Some(ticks) = &self.ticks {
                let proc = self.threads[p.thread as usize].proc.map_or(0, |p| p.idx());
                window = window.min(ticks.next_at(proc).0 - d);
            }
            group.push(p);
        }
        let m = group.len() as u64;
        // With nothing else to come the polls would go on forever: the event loop finds
        // out what happens.
        let y = y.map(time_of).filter(|y| y.0 < TIME_LIMIT);
        let rounds = match y {
            Some(y) => {
                window = window.min(y.0);
                window.saturating_sub(now.0).div_ceil(d)
            }
            None => 0,
        };
        // Only polls before the monitor is due (it is called between events).
        let budget = self
            .next_poll
            .saturating_sub(self.stats.ops + self.events + 1);
        let rounds = rounds.min(budget / m);
        if rounds < 2 || !self.queue.has_seq_room(rounds * m) {
            self.spin_keys = keys;
            self.spin_group = group;
            return false;
        }
        let window = window.min(now.0 + rounds * d);
        // Every thread of the group polls `rounds` times, or once fewer when its poll of
        // the last round would start at or after the window's end: those (a suffix of
        // the group, which starts later) lead the next round.
        let polls = |p: &Poll| (window - p.at.0).div_ceil(d).max(1);
        let full = group.iter().filter(|p| polls(p) == rounds).count();
        let base = self.queue.seq();
        keys.clear();
        let mut total = 0;
        let order = group.iter().enumerate().skip(full);
        for (j, p) in order.chain(group.iter().enumerate().take(full)) {
            let n = polls(p);
            total += n;
            self.apply_polls(p, n);
            // Each poll is an event and schedules the next; a thread alone runs ahead
            // and schedules its next poll once.
            let seq = if m == 1 {
                1
            } else {
                m * (n - 1) + j as u64 + 1
            };
            keys.push(key(Ns(p.at.0 + n * d), base + seq, p.code));
        }
        let taken = if m == 1 { 1 } else { total };
        self.queue.replace_held_run(m as usize, &keys, taken);
        self.events += taken - 1;
        if m > 1 {
            self.now = Ns(group[full - 1].at.0 + (rounds - 1) * d);
        }
        self.spin_keys = keys;
        self.spin_group = group;
        true
    }

    /// The poll thread `t` would make at `at` if it is one a group can make: the thread
    /// runs, owes nothing, its next op is a spin it has already polled in vain, and the
    /// poll neither faults nor waits.
    fn quiet_poll(&self, t: u32, at: Ns) -> Option<Poll> {
        if self.mm.monitors.is_some() {
            // Monitored polls are priced by load and sampled one by one.
            return None;
        }
        let (th, proc) = self.unhindered(t, at)?;
        let Op::Spin {
            vpn,
            write,
            count,
            event,
            at_least,
        } = *th.buf.get(th.pos)?
        else {
            return None;
        };
        if th.spin_on != Some((event, at_least)) || self.event_value(th.prog, event) >= at_least {
            return None;
        }
        let vpn = Vpn(th.base_vpn.checked_add(vpn.0)?);
        if vpn.idx() >= self.mm.mem.npages() {
            return None;
        }
        let node = th.node;
        let target = self.mm.mem.reaches(vpn, node, write)?;
        let machine = &self.mm.machine;
        let costs = machine.costs();
        let (per_word, class) = self.mm.price(node, target, vpn, write);
        let count = count.max(1);
        let n = count as u64;
        let d = per_word.saturating_mul(n).max(1);
        let occupies = machine.config.contention && class != RefClass::Cached;
        let ports = occupies && class == RefClass::Remote && costs.switch_service_ns > 0;
        if occupies {
            // Free when the poll starts, and again when the next one starts.
            let module_ns = if class == RefClass::Remote {
                machine.remote_module_service_ns()
            } else {
                costs.module_service_ns
            };
            if self.mm.modules[target.idx()] > at || module_ns.saturating_mul(n) > d {
                return None;
            }
            if ports
                && (self.mm.ports[node.idx()] > at
                    || self.mm.ports[target.idx()] > at
                    || costs.switch_service_ns.saturating_mul(n) > d)
            {
                return None;
            }
        }
        if let Some(ticks) = &self.ticks {
            // The first poll ends before the processor's next clock interrupt.
            if ticks.next_at(proc.idx()).0 <= at.0.saturating_add(d) {
                return None;
            }
        }
        Some(Poll {
            thread: t,
            code: 0,
            at,
            vpn,
            node,
            target,
            write,
            count,
            class,
            d,
            occupies,
            ports,
        })
    }

    /// Claims the module (and ports) poll `p` occupies for the group being formed;
    /// `false` when another poll of the group has one of them.
    fn claim(&mut self, p: &Poll) -> bool {
        if !p.occupies {
            return true;
        }
        let nodes = self.mm.machine.nodes();
        if self.spin_claims.len() < 2 * nodes {
            self.spin_claims.resize(2 * nodes, 0);
        }
        let gen = self.spin_gen;
        let module = p.target.idx();
        let ends = [nodes + p.node.idx(), nodes + p.target.idx()];
        let claims = &mut self.spin_claims;
        if claims[module] == gen || (p.ports && ends.iter().any(|&i| claims[i] == gen)) {
            return false;
        }
        self.spin_claims[module] = gen;
        if p.ports {
            for i in ends {
                self.spin_claims[i] = gen;
            }
        }
        true
    }

    /// What `n` polls of `p`, one every `p.d` from `p.at`, leave: references counted,
    /// reference history recorded, the module (and ports) occupied by the last one, the
    /// page written for test-and-set polls.
    fn apply_polls(&mut self, p: &Poll, n: u64) {
        let refs = n * p.count as u64;
        let th = &mut self.threads[p.thread as usize];
        th.stats.refs.add(p.class, refs);
        self.stats.refs.add(p.class, refs);
        self.stats.ops += n;
        if let Some(r) = self.stats.pages.get_mut(p.vpn.idx()) {
            r.refs.add(p.class, refs);
        }
        self.mm.hist.record_many(p.vpn, p.node, p.count, n);
        if p.occupies {
            let last = p.at.0 + (n - 1) * p.d;
            let machine = &self.mm.machine;
            let c = p.count as u64;
            let module_ns = if p.class == RefClass::Remote {
                machine.remote_module_service_ns()
            } else {
                machine.costs().module_service_ns
            };
            if p.ports {
                let held = Ns(last) + Ns(machine.costs().switch_service_ns.saturating_mul(c));
                self.mm.ports[p.node.idx()] = held;
                self.mm.ports[p.target.idx()] = held;
            }
            self.mm.modules[p.target.idx()] = Ns(last) + Ns(module_ns.saturating_mul(c));
        }
        if p.write {
            self.mm.mem.mark_written(p.vpn);
        }
    }
}
