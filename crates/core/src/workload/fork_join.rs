//! The fork-join driver: a loop body's chunks dealt, parallel construct by construct, to
//! the threads running when the construct starts (or, adaptively, to a construct's team).
//! An outer iteration is one or more constructs ([`LoopBody::constructs`]).

use super::emit::{hold_back, STREAM_OPS};
use crate::component::Op;
use crate::types::Ns;

/// The body of a fork-join loop program.
pub trait LoopBody {
    /// Number of outer iterations.
    fn iterations(&self) -> u32;
    /// Parallel constructs per outer iteration, each dealt and ended by its own barrier.
    /// Default: one. Construct `k` of iteration `i` is the run's construct
    /// `i * constructs() + k`: the number its entry and exit carry, and the `construct`
    /// the methods below are given.
    fn constructs(&self) -> u32 {
        1
    }
    /// Number of chunks (memory affinity sets) per construct.
    fn chunks(&self) -> u32;
    /// Appends the operations of chunk `chunk` in the run's construct `construct`.
    fn chunk(&self, construct: u32, chunk: u32, out: &mut Vec<Op>);
    /// How many parts the driver asks for chunk `chunk` of construct `construct` in (so
    /// that a large chunk is generated a part at a time, while its thread works through
    /// it). Default: one, the whole chunk.
    fn parts(&self, _construct: u32, _chunk: u32) -> u32 {
        1
    }
    /// Appends part `part` of chunk `chunk` in construct `construct`; the parts in order
    /// append what [`LoopBody::chunk`] appends. Default: the whole chunk as part 0.
    fn part(&self, construct: u32, chunk: u32, part: u32, out: &mut Vec<Op>) {
        debug_assert_eq!(part, 0);
        self.chunk(construct, chunk, out);
    }
}

/// Drives a [`LoopBody`]: at each construct, each thread runs the chunks dealt to it, then
/// a barrier; the last construct of an iteration ends it. Chunk `c` goes to thread
/// `c mod threads` when it runs; chunks of threads that do not run are dealt round robin
/// to the running ones.
///
/// An adaptive driver ([`ForkJoin::adaptive`]) models an OpenMP runtime whose construct
/// ends when its work is done (a work-completion join) rather than when every thread has
/// arrived: each construct's team is the threads running when its work is dealt (after
/// the construct's entry, so a scheduler that reallocates processors at the entry decides
/// the team, as under process control, and a thread the operating system has preempted
/// has its chunks dealt to the others), only the team meets at the construct's barrier
/// and iteration end, and a thread outside it sits the construct out (idle, polling the
/// runtime every [`IDLE_POLL`]) and joins the next construct it is running for.
///
/// A thread's work of a construct is appended a few hundred operations at a time
/// ([`STREAM_OPS`], in the body's parts), the thread's place kept between calls.
#[derive(Debug)]
pub struct ForkJoin<B> {
    body: B,
    threads: u32,
    /// Constructs per iteration (the body's, at least one).
    per_iter: u32,
    /// Constructs in the run.
    total: u32,
    /// Each thread's next construct.
    next: Vec<u32>,
    dealt: Option<u32>,
    deal: Vec<Vec<u32>>,
    adaptive: Option<Team>,
    /// Each thread's place in the work of the construct it is in, while some is left.
    work: Vec<Option<Work>>,
    /// Each thread's reference run taken back at the end of a call ([`hold_back`]).
    pending: Vec<Option<Op>>,
}

/// A thread's place in its work of a construct: the next of its dealt chunks, and the
/// next part of it.
#[derive(Clone, Copy, Debug)]
struct Work {
    construct: u32,
    next: usize,
    part: u32,
}

/// How long an idle thread of an adaptive program waits before it looks for work again
/// (an OpenMP idle worker's poll of its runtime).
pub const IDLE_POLL: Ns = Ns(50_000);

/// The adaptive driver's view of its teams.
#[derive(Debug)]
struct Team {
    /// Whether each thread has announced its entry into the construct it is at.
    entered: Vec<bool>,
    /// Whether each thread is in the team of the last dealt construct.
    member: Vec<bool>,
    /// The highest construct any thread has entered.
    frontier: Option<u32>,
    /// (construct, team size) of the last two dealt constructs: a construct's iteration
    /// end can come after the next one is dealt, never after the one after.
    sizes: [(u32, u32); 2],
}

impl<B: LoopBody> ForkJoin<B> {
    /// A driver for `body` with `threads` threads.
    pub fn new(body: B, threads: u32) -> ForkJoin<B> {
        let per_iter = body.constructs().max(1);
        let total = body.iterations().saturating_mul(per_iter);
        ForkJoin {
            body,
            threads,
            per_iter,
            total,
            next: vec![0; threads as usize],
            dealt: None,
            deal: vec![Vec::new(); threads as usize],
            adaptive: None,
            work: vec![None; threads as usize],
            pending: vec![None; threads as usize],
        }
    }

    /// A driver that adapts its team to the running threads at each construct (see the
    /// type's documentation).
    pub fn adaptive(body: B, threads: u32) -> ForkJoin<B> {
        let mut fj = ForkJoin::new(body, threads);
        fj.adaptive = Some(Team {
            entered: vec![false; threads as usize],
            member: vec![false; threads as usize],
            frontier: None,
            sizes: [(u32::MAX, 0); 2],
        });
        fj
    }

    /// The loop body.
    pub fn body(&self) -> &B {
        &self.body
    }

    /// Whether the driver adapts its team ([`Program::adapts_threads`]).
    pub fn is_adaptive(&self) -> bool {
        self.adaptive.is_some()
    }

    /// Bytes a driver of `threads` threads keeps besides its dealt chunks (for
    /// footprints).
    pub fn bytes(threads: u32) -> u64 {
        threads as u64
            * (16
                + (std::mem::size_of::<Option<Work>>() + std::mem::size_of::<Option<Op>>()) as u64)
            + 64
    }

    /// The iteration construct `k` ends, if it is its iteration's last.
    fn ends_iteration(&self, k: u32) -> Option<u32> {
        (k + 1)
            .is_multiple_of(self.per_iter)
            .then_some(k / self.per_iter)
    }

    fn deal_chunks(&mut self, running: &[bool]) {
        for d in &mut self.deal {
            d.clear();
        }
        let live: Vec<u32> = (0..self.threads).filter(|&t| running[t as usize]).collect();
        let mut orphan = 0usize;
        for c in 0..self.body.chunks() {
            let owner = c % self.threads;
            let t = if running[owner as usize] || live.is_empty() {
                owner
            } else {
                let t = live[orphan % live.len()];
                orphan += 1;
                t
            };
            self.deal[t as usize].push(c);
        }
    }

    /// Emits thread `t`'s next operations (see [`Program::next_ops`]): a construct's
    /// entry and work, more of its work, or the end of its work, its barrier and exit
    /// (and the iteration's end after its last construct).
    pub fn next_ops(&mut self, t: u32, running: &[bool], out: &mut Vec<Op>) {
        if self.adaptive.is_some() {
            return self.next_ops_adaptive(t, running, out);
        }
        let ti = t as usize;
        if self.work[ti].is_none() {
            let k = self.next[ti];
            if k >= self.total {
                return;
            }
            if self.dealt != Some(k) {
                self.deal_chunks(running);
                self.dealt = Some(k);
            }
            out.push(Op::ParallelEnter(k));
            self.work[ti] = Some(Work {
                construct: k,
                next: 0,
                part: 0,
            });
        }
        if !self.stream_work(ti, out) {
            return;
        }
        let k = self.work[ti].take().expect("work under way").construct;
        out.push(Op::Barrier);
        out.push(Op::ParallelExit(k));
        if let Some(i) = self.ends_iteration(k) {
            out.push(Op::IterationEnd(i));
        }
        self.next[ti] = k + 1;
    }

    /// Appends thread `ti`'s work of its construct, part by part, until about
    /// [`STREAM_OPS`] operations are in `out`; `true` once all of it is appended.
    fn stream_work(&mut self, ti: usize, out: &mut Vec<Op>) -> bool {
        if let Some(op) = self.pending[ti].take() {
            out.push(op);
        }
        let w = self.work[ti].as_mut().expect("work under way");
        let deal = &self.deal[ti];
        loop {
            let Some(&c) = deal.get(w.next) else {
                return true;
            };
            let parts = self.body.parts(w.construct, c);
            if w.part < parts {
                self.body.part(w.construct, c, w.part, out);
                w.part += 1;
            }
            if w.part >= parts {
                w.next += 1;
                w.part = 0;
            }
            if out.len() > STREAM_OPS && w.next < deal.len() {
                self.pending[ti] = hold_back(out);
                return false;
            }
        }
    }

    /// The adaptive driver: entry announced on its own (so the scheduler's answer to it
    /// decides the team), then the work; an iteration's end comes before its last
    /// construct's barrier (the last thread to end it is the one that releases the
    /// barrier, so the end is the same moment), so a thread a scheduler stops between the
    /// barrier and the exit has ended its iteration.
    fn next_ops_adaptive(&mut self, t: u32, running: &[bool], out: &mut Vec<Op>) {
        let ti = t as usize;
        if self.work[ti].is_some() {
            return self.finish_adaptive(ti, out);
        }
        let last = self.total;
        let mut k = self.next[ti];
        if k >= last {
            return;
        }
        let team = self.adaptive.as_mut().expect("adaptive driver");
        if let Some(f) = team.frontier {
            // Behind the program: the thread sat the constructs in between out (it was
            // in none of their teams, or their barriers could not have released).
            let member_here = self.dealt == Some(k) && team.member[ti];
            if k < f && !member_here {
                k = f;
                self.next[ti] = f;
                team.entered[ti] = false;
            }
            let dealt_without = self.dealt == Some(k) && !team.member[ti];
            if dealt_without && !team.entered[ti] {
                // The construct it is at runs without it: idle until the next one, or
                // done if it was the last.
                if k + 1 >= last {
                    self.next[ti] = last;
                    return;
                }
                out.push(Op::Compute(IDLE_POLL));
                return;
            }
        }
        if !team.entered[ti] {
            team.entered[ti] = true;
            team.frontier = Some(team.frontier.map_or(k, |f| f.max(k)));
            out.push(Op::ParallelEnter(k));
            return;
        }
        team.entered[ti] = false;
        if self.dealt != Some(k) {
            for (m, &r) in team.member.iter_mut().zip(running) {
                *m = r;
            }
            let size = running.iter().filter(|&&r| r).count() as u32;
            team.sizes = [team.sizes[1], (k, size)];
            self.deal_chunks(running);
            self.dealt = Some(k);
        }
        let team = self.adaptive.as_ref().expect("adaptive driver");
        if !team.member[ti] {
            // Entered after the work was dealt without it: leave, and idle.
            out.push(Op::ParallelExit(k));
            return;
        }
        self.work[ti] = Some(Work {
            construct: k,
            next: 0,
            part: 0,
        });
        self.finish_adaptive(ti, out);
    }

    /// The adaptive driver's work of a construct, a part at a time, then its end.
    fn finish_adaptive(&mut self, ti: usize, out: &mut Vec<Op>) {
        if !self.stream_work(ti, out) {
            return;
        }
        let k = self.work[ti].take().expect("work under way").construct;
        if let Some(i) = self.ends_iteration(k) {
            out.push(Op::IterationEnd(i));
        }
        out.push(Op::Barrier);
        out.push(Op::ParallelExit(k));
        self.next[ti] = k + 1;
    }

    /// For [`Program::barrier_parties`]: the team of the construct thread `t` is in.
    pub fn barrier_parties(&self, t: u32) -> Option<u32> {
        let k = self.next.get(t as usize)?.checked_sub(1)?;
        self.construct_parties(k)
    }

    /// For [`Program::iteration_parties`]: the team of iteration `i`'s last construct,
    /// whose members end it.
    pub fn iteration_parties(&self, i: u32) -> Option<u32> {
        let k = i
            .checked_mul(self.per_iter)?
            .checked_add(self.per_iter - 1)?;
        self.construct_parties(k)
    }

    /// The team of the run's construct `k` (adaptive drivers only).
    fn construct_parties(&self, k: u32) -> Option<u32> {
        let team = self.adaptive.as_ref()?;
        team.sizes.iter().find(|s| s.0 == k).map(|s| s.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Vpn;
    use crate::workload::emit::push_ref;

    struct Chunks;
    impl LoopBody for Chunks {
        fn iterations(&self) -> u32 {
            1
        }
        fn chunks(&self) -> u32 {
            4
        }
        fn chunk(&self, _iter: u32, chunk: u32, out: &mut Vec<Op>) {
            out.push(Op::Compute(Ns(chunk as u64)));
        }
    }

    #[test]
    fn chunks_of_a_stopped_thread_go_to_running_threads() {
        let mut fj = ForkJoin::new(Chunks, 4);
        let running = [true, false, true, true];
        let mut out = Vec::new();
        fj.next_ops(0, &running, &mut out);
        // Thread 0 runs its own chunk 0 and, first in line, the orphaned chunk 1.
        assert_eq!(&out[1..3], &[Op::Compute(Ns(0)), Op::Compute(Ns(1))]);
        out.clear();
        fj.next_ops(2, &running, &mut out);
        assert_eq!(out[1], Op::Compute(Ns(2)));
        assert_eq!(out[2], Op::Barrier);
    }

    /// A body whose parts append runs that merge across parts (ten parts a page).
    struct Runs;
    impl LoopBody for Runs {
        fn iterations(&self) -> u32 {
            2
        }
        fn chunks(&self) -> u32 {
            3
        }
        fn chunk(&self, iter: u32, chunk: u32, out: &mut Vec<Op>) {
            for p in 0..self.parts(iter, chunk) {
                self.part(iter, chunk, p, out);
            }
        }
        fn parts(&self, _iter: u32, chunk: u32) -> u32 {
            700 + chunk
        }
        fn part(&self, iter: u32, chunk: u32, part: u32, out: &mut Vec<Op>) {
            push_ref(
                out,
                Vpn(chunk * 1000 + part / 10),
                iter.is_multiple_of(2),
                1,
            );
            if part.is_multiple_of(7) {
                out.push(Op::Ref {
                    vpn: Vpn(part),
                    write: true,
                    count: 1,
                    at: 0,
                    span: 0,
                });
            }
        }
    }

    #[test]
    fn streamed_work_is_the_work_appended_at_once_merges_and_all() {
        let mut fj = ForkJoin::new(Runs, 2);
        let running = [true, true];
        let mut calls = 0;
        let mut streamed = Vec::new();
        let mut out = Vec::new();
        loop {
            out.clear();
            fj.next_ops(0, &running, &mut out);
            if out.is_empty() {
                break;
            }
            assert!(out.len() <= STREAM_OPS + 8, "{}", out.len());
            calls += 1;
            streamed.extend_from_slice(&out);
        }
        let mut whole = Vec::new();
        for iter in 0..2 {
            whole.push(Op::ParallelEnter(iter));
            for c in [0, 2] {
                Runs.chunk(iter, c, &mut whole);
            }
            whole.extend([Op::Barrier, Op::ParallelExit(iter), Op::IterationEnd(iter)]);
        }
        assert!(calls > 4);
        assert_eq!(streamed, whole);
    }

    /// Two iterations of three constructs over two chunks; a chunk's work is a compute
    /// operation naming its construct and chunk.
    struct Steps;
    impl LoopBody for Steps {
        fn iterations(&self) -> u32 {
            2
        }
        fn constructs(&self) -> u32 {
            3
        }
        fn chunks(&self) -> u32 {
            2
        }
        fn chunk(&self, construct: u32, chunk: u32, out: &mut Vec<Op>) {
            out.push(Op::Compute(Ns(100 * construct as u64 + chunk as u64)));
        }
    }

    /// Everything thread `t` is handed until it is done.
    fn drain<B: LoopBody>(fj: &mut ForkJoin<B>, t: u32, running: &[bool]) -> Vec<Op> {
        let mut all = Vec::new();
        let mut out = Vec::new();
        loop {
            out.clear();
            fj.next_ops(t, running, &mut out);
            if out.is_empty() {
                return all;
            }
            all.extend_from_slice(&out);
        }
    }

    #[test]
    fn each_construct_ends_at_a_barrier_and_an_iterations_last_construct_ends_it() {
        let mut fj = ForkJoin::new(Steps, 2);
        let ops = drain(&mut fj, 1, &[true, true]);
        let mut want = Vec::new();
        for k in 0..6u32 {
            want.extend([
                Op::ParallelEnter(k),
                Op::Compute(Ns(100 * k as u64 + 1)),
                Op::Barrier,
                Op::ParallelExit(k),
            ]);
            if k % 3 == 2 {
                want.push(Op::IterationEnd(k / 3));
            }
        }
        assert_eq!(ops, want);
    }

    #[test]
    fn a_thread_not_running_when_a_construct_is_dealt_skips_it() {
        let mut fj = ForkJoin::adaptive(Steps, 2);
        let both = [true, true];
        // Thread 0 enters construct 0 and is dealt its work while thread 1 is not running.
        let mut out = Vec::new();
        fj.next_ops(0, &both, &mut out);
        assert_eq!(out, [Op::ParallelEnter(0)]);
        out.clear();
        fj.next_ops(0, &[true, false], &mut out);
        assert_eq!(
            out,
            [
                Op::Compute(Ns(0)),
                Op::Compute(Ns(1)),
                Op::Barrier,
                Op::ParallelExit(0)
            ]
        );
        assert_eq!(fj.barrier_parties(0), Some(1));
        // Thread 1, running again, sits construct 0 out: it idles until construct 1 is
        // entered, and takes no part in construct 0.
        out.clear();
        fj.next_ops(1, &both, &mut out);
        assert_eq!(out, [Op::Compute(IDLE_POLL)]);
        out.clear();
        fj.next_ops(0, &both, &mut out);
        assert_eq!(out, [Op::ParallelEnter(1)]);
        out.clear();
        fj.next_ops(1, &both, &mut out);
        assert_eq!(out, [Op::ParallelEnter(1)]);
    }

    #[test]
    fn an_iterations_parties_are_its_last_constructs_team() {
        let mut fj = ForkJoin::adaptive(Steps, 2);
        let mut out = Vec::new();
        // Constructs 0 and 1 with both threads, construct 2 with thread 0 alone.
        for k in 0..3u32 {
            let running = if k == 2 { [true, false] } else { [true, true] };
            for t in 0..2 {
                if k == 2 && t == 1 {
                    continue;
                }
                fj.next_ops(t, &running, &mut out);
                fj.next_ops(t, &running, &mut out);
            }
        }
        assert!(out.contains(&Op::IterationEnd(0)));
        assert_eq!(fj.iteration_parties(0), Some(1));
    }
}
