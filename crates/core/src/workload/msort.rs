//! `msort`: parallel merge sort as a tree of merges, each merge done by one thread
//! (PLATINUM §5.2, after Anderson's study on the Sequent Symmetry).
//!
//! Each of p threads first sorts its own n/p keys (a bottom-up merge sort: ⌈log2(n/p)⌉
//! passes, each reading the run from one array and writing it to the other). Then, level by
//! level, thread t with t mod 2^l = 0 waits for its partner t + 2^(l-1) (an event count the
//! partner advances when its run is sorted) and merges the two runs into the other array,
//! so one half of every merge's input is already in the merging thread's memory and the
//! other half is read by a linear sweep, as the paper describes. The root merge is done by
//! thread 0 alone.

use super::common::thread_count;
use super::emit::Emitter;
use crate::component::{Op, Program};
use crate::error::ConfigError;
use crate::estimate::{runs_of, Footprint};
use crate::fields::Fields;
use crate::machine::Machine;
use crate::memory::{ArrayId, Layout};
use crate::types::{Ns, Vpn};
use serde::{Deserialize, Serialize};

/// Parameters of `msort`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct MsortConfig {
    /// Keys to sort. Default 262144 (1 MB of 32-bit keys; the paper's size is not given
    /// in the text, only that it is too large for the Sequent's 8 KB caches).
    #[field(min = 2, max = 4_294_967_296)]
    pub n: u64,
    /// Threads; default: one per processor.
    #[field(min = 1, max = crate::estimate::MAX_THREADS)]
    pub threads: Option<u32>,
    /// Key size in bytes. Default 4.
    #[field(min = 1, max = 65_536, unit = "bytes")]
    pub elem_bytes: u64,
    /// Computation per key moved by a merge step (compare, branch, index updates), in
    /// ns. Default 2000: an estimate for a 16.67 MHz MC68020; the paper gives no figure.
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub compute_ns_per_key: u64,
}

impl Default for MsortConfig {
    fn default() -> Self {
        MsortConfig {
            n: 262_144,
            threads: None,
            elem_bytes: 4,
            compute_ns_per_key: 2000,
        }
    }
}

impl crate::registry::Describe for MsortConfig {
    const KIND: &'static str = "msort";
    const DESCRIPTION: &'static str = "parallel merge sort: local sorts, then a tree of merges each done by one thread (PLATINUM 5.2)";
}

impl crate::component::WorkloadParams for MsortConfig {
    fn footprint(&self, machine: &Machine) -> Result<crate::estimate::Footprint, ConfigError> {
        Msort::footprint(self, machine)
    }
    fn build(
        &self,
        machine: &Machine,
    ) -> Result<Vec<Box<dyn crate::component::Program>>, ConfigError> {
        Ok(vec![Box::new(Msort::new(self, machine)?)])
    }
}

inventory::submit!(crate::component::WorkloadEntry::of::<MsortConfig>());

/// The `msort` program.
#[derive(Debug)]
pub struct Msort {
    layout: Layout,
    arrays: [ArrayId; 2],
    flags: ArrayId,
    n: u64,
    threads: u32,
    compute: u64,
    /// Level each thread does next (0 = its local sort); past the last, it is done.
    level: Vec<u32>,
    emit: Emitter,
}

impl Msort {
    /// Builds the program for `machine`.
    pub fn new(c: &MsortConfig, machine: &Machine) -> Result<Msort, ConfigError> {
        let threads = Self::new_checked_threads(c, machine)?;
        let (layout, [a, b, flags], _) = Self::plan(c, threads, machine)?;
        let ps = machine.page_size();
        Ok(Msort {
            layout,
            arrays: [a, b],
            flags,
            n: c.n,
            threads,
            compute: c.compute_ns_per_key,
            level: vec![0; threads as usize],
            emit: Emitter { page_size: ps },
        })
    }

    /// Validates the parameters and returns the thread count.
    fn new_checked_threads(c: &MsortConfig, machine: &Machine) -> Result<u32, ConfigError> {
        c.check_ranges("workload")?;
        let threads = thread_count("workload.threads", c.threads, machine)?;
        if threads as u64 > c.n {
            return Err(ConfigError::new(
                "workload.threads",
                format!(
                    "{threads} threads for {} keys: every thread needs a key",
                    c.n
                ),
            ));
        }
        Ok(threads)
    }

    /// First key of thread `t`'s chunk.
    /// Lays out keys, scratch and flags.
    fn plan(
        c: &MsortConfig,
        threads: u32,
        machine: &Machine,
    ) -> Result<(Layout, [ArrayId; 3], u64), ConfigError> {
        let ps = machine.page_size();
        let mut layout = Layout::new();
        let a = layout.alloc("keys", c.n, c.elem_bytes, ps);
        let b = layout.alloc("scratch", c.n, c.elem_bytes, ps);
        let flags = layout.alloc("done-flags", threads as u64, 4, ps);
        let pages = layout.pages_checked(ps, "workload.n")?;
        Ok((layout, [a, b, flags], pages))
    }

    /// What the program needs, from its parameters alone.
    pub fn footprint(c: &MsortConfig, machine: &Machine) -> Result<Footprint, ConfigError> {
        let threads = Self::new_checked_threads(c, machine)?;
        let (_, _, pages) = Self::plan(c, threads, machine)?;
        // Every pass (local or merge) reads and writes the keys once: about log2(n) + 1
        // passes of two runs per page, plus flags and waits per thread and level.
        let passes = Self::local_passes(c.n) as u64 + 1;
        let ops = passes
            .saturating_mul(4)
            .saturating_mul(runs_of(c.n, c.elem_bytes, machine.page_size()))
            .saturating_add(16 * threads as u64);
        Ok(Footprint {
            pages,
            threads,
            ops,
            buffered_ops: ops.div_ceil(threads as u64).saturating_mul(2),
            bytes: threads as u64 * 4,
            iterations: 0,
            size_field: "workload.n",
            ops_field: "workload.n",
        })
    }

    fn start(&self, t: u32) -> u64 {
        self.n * t as u64 / self.threads as u64
    }

    /// Passes of the local sort of `len` keys.
    fn local_passes(len: u64) -> u32 {
        if len <= 1 {
            0
        } else {
            64 - (len - 1).leading_zeros()
        }
    }

    /// The array holding thread `t`'s run after it finished level `l` (0 = local sort).
    /// Every level a run goes through flips the array; a thread with no partner at a
    /// level keeps its run where it is.
    fn array_after(&self, t: u32, l: u32) -> usize {
        let len = self.start(t + 1) - self.start(t);
        let mut flips = Self::local_passes(len);
        for level in 1..=l {
            let span = 1u32 << level;
            let half = span / 2;
            if t.is_multiple_of(span) && t + half < self.threads {
                // It merged at this level: from its own run's array into the other.
                flips += 1;
            }
        }
        (flips % 2) as usize
    }

    /// Levels of the merge tree.
    fn levels(&self) -> u32 {
        Self::local_passes(self.threads as u64)
    }

    fn flag_page(&self, t: u32) -> Vpn {
        let f = self.layout.array(self.flags);
        Vpn((f.addr(0, t as u64) / self.emit.page_size) as u32)
    }

    /// Emits one merge step over keys `lo..hi`: reads from `from` (the two runs split at
    /// `mid`, consumed at the same pace) and writes into `to`, a page's worth at a time.
    fn merge(&self, from: [usize; 2], to: usize, lo: u64, mid: u64, hi: u64, out: &mut Vec<Op>) {
        let keys_per_page =
            (self.emit.page_size / self.layout.array(self.arrays[0]).elem_bytes).max(1);
        let (left, right) = (mid - lo, hi - mid);
        let total = hi - lo;
        let mut done = 0;
        let (mut l, mut r) = (0u64, 0u64);
        while done < total {
            let step = keys_per_page.min(total - done);
            done += step;
            // Keys taken from each run so far, in proportion to their lengths.
            let l_to = left * done / total;
            let r_to = right * done / total;
            let src0 = self.layout.array(self.arrays[from[0]]);
            let src1 = self.layout.array(self.arrays[from[1]]);
            let dst = self.layout.array(self.arrays[to]);
            self.emit.range(
                out,
                src0.addr(0, lo + l),
                l_to - l,
                src0.elem_bytes,
                1,
                false,
            );
            self.emit.range(
                out,
                src1.addr(0, mid + r),
                r_to - r,
                src1.elem_bytes,
                1,
                false,
            );
            if self.compute > 0 {
                out.push(Op::Compute(Ns(self.compute * step)));
            }
            self.emit.range(
                out,
                dst.addr(0, lo + done - step),
                step,
                dst.elem_bytes,
                1,
                true,
            );
            l = l_to;
            r = r_to;
        }
    }

    /// Thread `t` finished level `l`: it writes its flag and advances its event count.
    fn signal(&self, t: u32, l: u32, out: &mut Vec<Op>) {
        out.push(Op::Ref {
            vpn: self.flag_page(t),
            write: true,
            count: 1,
            at: 0,
            span: 0,
        });
        out.push(Op::Advance {
            event: t,
            to: l + 1,
        });
    }
}

impl Program for Msort {
    fn name(&self) -> &str {
        "msort"
    }
    fn threads(&self) -> u32 {
        self.threads
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn placement_hints(&self) -> &[Option<u32>] {
        &[]
    }
    fn next_ops(&mut self, t: u32, _running: &[bool], out: &mut Vec<Op>) {
        let l = self.level[t as usize];
        if l > self.levels() {
            return;
        }
        self.level[t as usize] = l + 1;
        let (lo, hi) = (self.start(t), self.start(t + 1));
        if l == 0 {
            // The local sort: each pass reads the run from one array, writes it to the other.
            for pass in 0..Self::local_passes(hi - lo) {
                let from = (pass % 2) as usize;
                self.merge([from, from], 1 - from, lo, lo + (hi - lo) / 2, hi, out);
            }
            self.signal(t, 0, out);
            out.push(Op::IterationEnd(0));
            return;
        }
        let span = 1u32 << l;
        let half = span / 2;
        if !t.is_multiple_of(span) {
            // Merged into a partner's run at an earlier level: nothing left to do.
            self.level[t as usize] = self.levels() + 1;
            return;
        }
        let partner = t + half;
        if partner < self.threads {
            // Wait until the partner's run is sorted (its event count reaches l), polling
            // its flag word.
            out.push(Op::Spin {
                vpn: self.flag_page(partner),
                write: false,
                count: 1,
                event: partner,
                at_least: l,
            });
            let mid = self.start(partner);
            let end = self.start((t + span).min(self.threads));
            let from = [self.array_after(t, l - 1), self.array_after(partner, l - 1)];
            self.merge(from, 1 - from[0], lo, mid, end, out);
        }
        self.signal(t, l, out);
        out.push(Op::IterationEnd(l));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_sort_takes_ceil_log2_passes() {
        assert_eq!(Msort::local_passes(1), 0);
        assert_eq!(Msort::local_passes(2), 1);
        assert_eq!(Msort::local_passes(1000), 10);
        assert_eq!(Msort::local_passes(1024), 10);
    }
}
