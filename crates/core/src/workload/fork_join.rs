//! The fork-join driver: a loop body's chunks dealt, iteration by iteration, to the
//! threads running when the iteration starts (or, adaptively, to a construct's team).

use super::emit::{hold_back, STREAM_OPS};
use crate::component::Op;
use crate::types::Ns;

/// The body of a fork-join loop program.
pub trait LoopBody {
    /// Number of outer iterations.
    fn iterations(&self) -> u32;
    /// Number of chunks (memory affinity sets) per iteration.
    fn chunks(&self) -> u32;
    /// Appends the operations of chunk `chunk` in iteration `iter`.
    fn chunk(&self, iter: u32, chunk: u32, out: &mut Vec<Op>);
    /// How many parts the driver asks for chunk `chunk` of iteration `iter` in (so that a
    /// large chunk is generated a part at a time, while its thread works through it).
    /// Default: one, the whole chunk.
    fn parts(&self, _iter: u32, _chunk: u32) -> u32 {
        1
    }
    /// Appends part `part` of chunk `chunk` in iteration `iter`; the parts in order append
    /// what [`LoopBody::chunk`] appends. Default: the whole chunk as part 0.
    fn part(&self, iter: u32, chunk: u32, part: u32, out: &mut Vec<Op>) {
        debug_assert_eq!(part, 0);
        self.chunk(iter, chunk, out);
    }
}

/// Drives a [`LoopBody`]: each thread runs the chunks dealt to it, then a barrier and an
/// iteration end. Chunk `c` goes to thread `c mod threads` when it runs; chunks of threads
/// that do not run are dealt round robin to the running ones.
///
/// An adaptive driver ([`ForkJoin::adaptive`]) models an OpenMP runtime under process
/// control: each construct's team is the threads running when its work is dealt (after
/// the construct's entry, so a scheduler that reallocates processors at the entry decides
/// the team), only the team meets at the construct's barrier and iteration end, and a
/// thread outside it sits the construct out (idle, polling the runtime every
/// [`IDLE_POLL`]) and joins the next construct it is running for.
///
/// A thread's work of an iteration is appended a few hundred operations at a time
/// ([`STREAM_OPS`], in the body's parts), the thread's place kept between calls.
#[derive(Debug)]
pub struct ForkJoin<B> {
    body: B,
    threads: u32,
    next_iter: Vec<u32>,
    dealt_iter: Option<u32>,
    deal: Vec<Vec<u32>>,
    adaptive: Option<Team>,
    /// Each thread's place in the work of the iteration it is in, while some is left.
    work: Vec<Option<Work>>,
    /// Each thread's reference run taken back at the end of a call ([`hold_back`]).
    pending: Vec<Option<Op>>,
}

/// A thread's place in its work of an iteration: the next of its dealt chunks, and the
/// next part of it.
#[derive(Clone, Copy, Debug)]
struct Work {
    iter: u32,
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
        ForkJoin {
            body,
            threads,
            next_iter: vec![0; threads as usize],
            dealt_iter: None,
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

    /// Emits thread `t`'s next operations (see [`Program::next_ops`]): an iteration's
    /// entry and work, more of its work, or the end of its work and the iteration.
    pub fn next_ops(&mut self, t: u32, running: &[bool], out: &mut Vec<Op>) {
        if self.adaptive.is_some() {
            return self.next_ops_adaptive(t, running, out);
        }
        let ti = t as usize;
        if self.work[ti].is_none() {
            let iter = self.next_iter[ti];
            if iter >= self.body.iterations() {
                return;
            }
            if self.dealt_iter != Some(iter) {
                self.deal_chunks(running);
                self.dealt_iter = Some(iter);
            }
            out.push(Op::ParallelEnter(iter));
            self.work[ti] = Some(Work {
                iter,
                next: 0,
                part: 0,
            });
        }
        if !self.stream_work(ti, out) {
            return;
        }
        let iter = self.work[ti].take().expect("work under way").iter;
        out.push(Op::Barrier);
        out.push(Op::ParallelExit(iter));
        out.push(Op::IterationEnd(iter));
        self.next_iter[ti] = iter + 1;
    }

    /// Appends thread `ti`'s work of its iteration, part by part, until about
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
            let parts = self.body.parts(w.iter, c);
            if w.part < parts {
                self.body.part(w.iter, c, w.part, out);
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
    /// decides the team), then the work; the iteration end comes before the barrier (the
    /// last thread to end it is the one that releases the barrier, so the end is the same
    /// moment), so a thread a scheduler stops between the barrier and the exit has ended
    /// its iteration.
    fn next_ops_adaptive(&mut self, t: u32, running: &[bool], out: &mut Vec<Op>) {
        let ti = t as usize;
        if self.work[ti].is_some() {
            return self.finish_adaptive(ti, out);
        }
        let last = self.body.iterations();
        let mut iter = self.next_iter[ti];
        if iter >= last {
            return;
        }
        let team = self.adaptive.as_mut().expect("adaptive driver");
        if let Some(f) = team.frontier {
            // Behind the program: the thread sat the constructs in between out (it was
            // in none of their teams, or their barriers could not have released).
            let member_here = self.dealt_iter == Some(iter) && team.member[ti];
            if iter < f && !member_here {
                iter = f;
                self.next_iter[ti] = f;
                team.entered[ti] = false;
            }
            let dealt_without = self.dealt_iter == Some(iter) && !team.member[ti];
            if dealt_without && !team.entered[ti] {
                // The construct it is at runs without it: idle until the next one, or
                // done if it was the last.
                if iter + 1 >= last {
                    self.next_iter[ti] = last;
                    return;
                }
                out.push(Op::Compute(IDLE_POLL));
                return;
            }
        }
        if !team.entered[ti] {
            team.entered[ti] = true;
            team.frontier = Some(team.frontier.map_or(iter, |f| f.max(iter)));
            out.push(Op::ParallelEnter(iter));
            return;
        }
        team.entered[ti] = false;
        if self.dealt_iter != Some(iter) {
            for (m, &r) in team.member.iter_mut().zip(running) {
                *m = r;
            }
            let size = running.iter().filter(|&&r| r).count() as u32;
            team.sizes = [team.sizes[1], (iter, size)];
            self.deal_chunks(running);
            self.dealt_iter = Some(iter);
        }
        let team = self.adaptive.as_ref().expect("adaptive driver");
        if !team.member[ti] {
            // Entered after the work was dealt without it: leave, and idle.
            out.push(Op::ParallelExit(iter));
            return;
        }
        self.work[ti] = Some(Work {
            iter,
            next: 0,
            part: 0,
        });
        self.finish_adaptive(ti, out);
    }

    /// The adaptive driver's work of an iteration, a part at a time, then its end.
    fn finish_adaptive(&mut self, ti: usize, out: &mut Vec<Op>) {
        if !self.stream_work(ti, out) {
            return;
        }
        let iter = self.work[ti].take().expect("work under way").iter;
        out.push(Op::IterationEnd(iter));
        out.push(Op::Barrier);
        out.push(Op::ParallelExit(iter));
        self.next_iter[ti] = iter + 1;
    }

    /// For [`Program::barrier_parties`]: the team of the construct thread `t` is in.
    pub fn barrier_parties(&self, t: u32) -> Option<u32> {
        let k = self.next_iter.get(t as usize)?.checked_sub(1)?;
        self.iteration_parties(k)
    }

    /// For [`Program::iteration_parties`]: the team of construct `k`.
    pub fn iteration_parties(&self, k: u32) -> Option<u32> {
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
}
