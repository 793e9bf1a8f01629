//! `hough`: the Hough transform of an image for straight lines (LaRowe, Ellis & Kaplan,
//! SOSP 1991, Table 3: "computes hough transforms"; Table 4: about 100-101 s on the
//! GP1000 under the tuned and the default policy settings).
//!
//! What the paper says of `hough`: one line of Table 3, its run times in Table 4, its
//! tuned setting (freeze-window 31.25 ms, recent-mod 2^16, scan-delay 10 s,
//! sample-passes 0, defrost-trigger 1, trigger-method 2^16) and that it behaves like
//! `gauss` under recent-mod on the GP1000 (read sharing, so replication pays), that on
//! the TC2000 coherency faults matter (Figure 3), that on the GP1000 the scanners help,
//! best near scan-delay 12 s (Figure 9), and that the UMA version under the policy beats
//! the hand-tuned NUMA version on the GP1000, whose "(static) placement ... may not have
//! the best placement" (sec. 4.3). The program itself is assumed, chosen as the plainest
//! one that fits that description:
//!
//! - An `n` x `n` edge image of one byte per pixel, a fraction `edge_permille` / 1000 of
//!   whose pixels are edge points, spread evenly along each row (deterministic, so runs
//!   repeat; which pixels are edges changes only which accumulator bins are hit).
//! - `angles` angles theta_k = k pi / angles. An edge point (x, y) votes, for every
//!   angle, in bin rho = round(x cos theta + y sin theta) + D of that angle's row of
//!   2D + 1 four-byte counters, D = ceil(n sqrt 2).
//! - The angles are dealt to the threads in balanced contiguous blocks (one thread per
//!   processor). Each thread zeroes its own accumulator (its angles' rows), then, angle by
//!   angle, scans the whole image row by row and votes into that angle's row: the image
//!   is read-shared by every thread (once per angle of the thread), an accumulator is
//!   written by its thread only. The angle-outer loop order is assumed: it keeps one
//!   accumulator row in use at a time, and it makes the image the program's dominant
//!   read-shared data, as the paper's account (replication pays as for `gauss`, whose
//!   pivot rows are read-shared) suggests.
//! - After a barrier, the merge: the rho range is cut into one band per thread; each
//!   thread reads its band of every angle row of every accumulator, keeps the bins above
//!   a threshold, and writes them to its slot of the shared line table.
//! - Series: iteration end 0 after loading the image, 1 after accumulation, 2 after the
//!   merge; barriers between the phases.
//!
//! Variants, in the paper's two styles (sec. 3):
//! - `uma`: the image, the accumulators (one after another, with no regard to pages, so
//!   neighbouring accumulators share the pages at their boundaries) and the line table are
//!   plain shared arrays; the main thread (thread 0) reads the image in, so static
//!   first-touch placement puts it on its node, where every thread reads it.
//! - `numa`: the image is cut into one block of rows per thread, each block on pages of
//!   its own placed on its thread's node and read in by that thread; each accumulator and
//!   line-table slot starts on a page of its own, placed on its thread's node. Every
//!   thread still reads the blocks of the others remotely: a cheap static placement, not
//!   the best one (replicating the image would be).
//!
//! Sizes (chosen, not from the paper): a 1024 x 1024 image (1 MB, 256 pages: a replica fits
//! in a quarter of a GP1000 node's 4 MB) with 10% edge points and 360 angles (half-degree
//! steps) take about 95 s of simulated time on the `gp1000` preset under `larowe`'s
//! defaults, near Table 4's 100-101 s (static first-touch placement: `uma` about 768 s, the
//! image on the main thread's node; `numa` about 351 s). Compute costs are estimates for
//! the MC68020 at 16.67 MHz (the paper gives none): 2 us per pixel tested (load, compare,
//! branch, loop overhead, about 35 clocks), 10 us per vote (rho = x cos + y sin in fixed
//! point from tables: two 32-bit multiplies of about 44 clocks each, the add, shift, bounds
//! and address arithmetic, about 165 clocks; the counter's read and write are simulated),
//! and the pixel cost again per bin compared in the merge. The sizes were chosen with
//! these costs to land near Table 4's time, so sizes and costs together are a calibrated
//! input (the run time is their product), printed as such by the larowe91 reproduction.

use super::common::{thread_count, Variant};
use super::emit::Emitter;
use crate::component::{Op, Program};
use crate::error::ConfigError;
use crate::estimate::{runs_of, Footprint};
use crate::fields::Fields;
use crate::machine::Machine;
use crate::memory::{ArrayId, Layout};
use crate::types::{Ns, Vpn};
use serde::{Deserialize, Serialize};

/// Words of a thread's slot in the line table (the lines its merge band keeps).
const LINE_SLOT_WORDS: u64 = 16;

/// Parameters of `hough`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct HoughConfig {
    /// Image order N (an N x N image of one-byte pixels). Default 1024 (chosen: the paper
    /// gives no size).
    #[field(min = 1, max = 1_000_000)]
    pub n: u64,
    /// Angles, theta_k = k pi / angles. Default 360 (half-degree steps, chosen).
    #[field(min = 1, max = 1_000_000)]
    pub angles: u32,
    /// Edge points per thousand pixels, spread evenly along each row. Default 100.
    #[field(min = 0, max = 1000)]
    pub edge_permille: u32,
    /// Threads; default: one per processor. At most `angles` (every thread an angle).
    #[field(min = 1, max = crate::estimate::MAX_THREADS)]
    pub threads: Option<u32>,
    /// Computation per pixel tested (and per bin compared in the merge), in ns. Default
    /// 2000: an estimate for about 35 MC68020 clocks; the paper gives none. Calibrated
    /// with the image size (the run time is their product): larowe91 prints it among its
    /// calibrated inputs.
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub compute_ns_per_pixel: u64,
    /// Computation per vote besides the counter's read and write, in ns. Default 10000:
    /// an estimate for rho = x cos + y sin in fixed point on the MC68020 (about 165
    /// clocks); the paper gives none. Calibrated with the image size, as the pixel cost.
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub compute_ns_per_vote: u64,
    /// `uma` (plain shared arrays, the image read in by the main thread) or `numa` (image
    /// blocks, accumulators and line slots on their threads' nodes). Default uma.
    pub variant: Variant,
}

impl Default for HoughConfig {
    fn default() -> Self {
        HoughConfig {
            n: 1024,
            angles: 360,
            edge_permille: 100,
            threads: None,
            compute_ns_per_pixel: 2000,
            compute_ns_per_vote: 10_000,
            variant: Variant::Uma,
        }
    }
}

impl crate::registry::Describe for HoughConfig {
    const KIND: &'static str = "hough";
    const DESCRIPTION: &'static str = "Hough transform of an NxN edge image: angles per thread, read-shared image, per-thread accumulators merged at the end (LaRowe, Ellis & Kaplan 1991)";
}

impl crate::component::WorkloadParams for HoughConfig {
    fn footprint(&self, machine: &Machine) -> Result<crate::estimate::Footprint, ConfigError> {
        Hough::footprint(self, machine)
    }
    fn build(
        &self,
        machine: &Machine,
    ) -> Result<Vec<Box<dyn crate::component::Program>>, ConfigError> {
        Ok(vec![Box::new(Hough::new(self, machine)?)])
    }
}

inventory::submit!(crate::component::WorkloadEntry::of::<HoughConfig>());

/// Where a thread is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Load,
    /// Accumulating; the next (own angle, image row), numbered angle-major.
    Accumulate(u64),
    Merge,
    Done,
}

/// The `hough` program.
#[derive(Debug)]
pub struct Hough {
    layout: Layout,
    image: ArrayId,
    acc: ArrayId,
    lines: ArrayId,
    n: u64,
    angles: u64,
    edge_permille: u64,
    threads: u32,
    /// Image rows per block (the numa placement unit).
    rpb: u64,
    /// D: rho runs over -D..=D.
    diag: u64,
    uma: bool,
    pixel: u64,
    vote: u64,
    cos_sin: Vec<(f64, f64)>,
    hints: Vec<Option<u32>>,
    phase: Vec<Phase>,
    emit: Emitter,
}

/// D = ceil(n sqrt 2), the largest |rho|.
fn diag_of(n: u64) -> u64 {
    let mut d = ((n as f64) * std::f64::consts::SQRT_2).ceil() as u64;
    // Exact in integers: the smallest d with d^2 >= 2 n^2.
    while d > 0 && (d - 1).saturating_mul(d - 1) >= n.saturating_mul(n).saturating_mul(2) {
        d -= 1;
    }
    while d.saturating_mul(d) < n.saturating_mul(n).saturating_mul(2) {
        d += 1;
    }
    d
}

/// A validated plan.
struct Plan {
    layout: Layout,
    arrays: [ArrayId; 3],
    threads: u32,
    rpb: u64,
    apt: u64,
    diag: u64,
    pages: u64,
}

impl Hough {
    fn plan(c: &HoughConfig, machine: &Machine) -> Result<Plan, ConfigError> {
        c.check_ranges("workload")?;
        let threads = thread_count("workload.threads", c.threads, machine)?;
        if threads > c.angles {
            return Err(ConfigError::new(
                "workload.threads",
                format!(
                    "{threads} threads for {} angles: every thread needs an angle",
                    c.angles
                ),
            ));
        }
        let ps = machine.page_size();
        let rpb = c.n.div_ceil(threads as u64);
        let apt = (c.angles as u64).div_ceil(threads as u64);
        let diag = diag_of(c.n);
        let bins = 2 * diag + 1;
        let (align, block_align) = match c.variant {
            Variant::Uma => (4, 1),
            Variant::Numa => (ps, ps),
        };
        let mut layout = Layout::new();
        // The image as `threads` blocks of `rpb` rows: plain row-major when packed (uma).
        let image = layout.alloc_2d("image", threads as u64, rpb * c.n, 1, ps, block_align);
        let acc = layout.alloc_2d(
            "accumulators",
            threads as u64,
            apt.saturating_mul(bins),
            4,
            align,
            block_align,
        );
        let lines = layout.alloc_2d(
            "lines",
            threads as u64,
            LINE_SLOT_WORDS,
            4,
            align,
            block_align,
        );
        let pages = layout.pages_checked(ps, "workload.n")?;
        Ok(Plan {
            layout,
            arrays: [image, acc, lines],
            threads,
            rpb,
            apt,
            diag,
            pages,
        })
    }

    /// What the program needs, from its parameters alone.
    pub fn footprint(c: &HoughConfig, machine: &Machine) -> Result<Footprint, ConfigError> {
        let plan = Self::plan(c, machine)?;
        let ps = machine.page_size();
        let bins = 2 * plan.diag + 1;
        let t = plan.threads as u64;
        // A row for an angle: the image walk, a compute op, and a read and a write run to
        // each page of the angle's accumulator row its votes reach.
        let per_row = runs_of(c.n, 1, ps)
            .saturating_add(1)
            .saturating_add(runs_of(bins, 4, ps).saturating_mul(2));
        let accumulate = c.n.saturating_mul(per_row).saturating_mul(c.angles as u64);
        let zero = t.saturating_mul(runs_of(plan.apt.saturating_mul(bins), 4, ps));
        let load = runs_of(c.n.saturating_mul(c.n), 1, ps).saturating_add(t);
        let merge_per_thread = t
            .saturating_mul(plan.apt)
            .saturating_mul(runs_of(bins.div_ceil(t), 4, ps))
            .saturating_add(8);
        Ok(Footprint {
            pages: plan.pages,
            threads: plan.threads,
            ops: accumulate
                .saturating_add(zero)
                .saturating_add(load)
                .saturating_add(merge_per_thread.saturating_mul(t))
                .saturating_add(8 * t),
            buffered_ops: per_row.max(merge_per_thread).max(load).saturating_mul(2),
            bytes: Footprint::hint_bytes(plan.pages)
                .saturating_add((c.angles as u64).saturating_mul(16))
                .saturating_add(t * 16),
            iterations: 3,
            size_field: "workload.n",
            ops_field: "workload.angles",
        })
    }

    /// Builds the program for `machine`.
    pub fn new(c: &HoughConfig, machine: &Machine) -> Result<Hough, ConfigError> {
        let Plan {
            layout,
            arrays: [image, acc, lines],
            threads,
            rpb,
            apt: _,
            diag,
            pages,
        } = Self::plan(c, machine)?;
        let ps = machine.page_size();
        let cos_sin = (0..c.angles)
            .map(|k| {
                let theta = k as f64 * std::f64::consts::PI / c.angles as f64;
                (theta.cos(), theta.sin())
            })
            .collect();
        let mut h = Hough {
            layout,
            image,
            acc,
            lines,
            n: c.n,
            angles: c.angles as u64,
            edge_permille: c.edge_permille as u64,
            threads,
            rpb,
            diag,
            uma: c.variant == Variant::Uma,
            pixel: c.compute_ns_per_pixel,
            vote: c.compute_ns_per_vote,
            cos_sin,
            hints: Vec::new(),
            phase: vec![Phase::Load; threads as usize],
            emit: Emitter { page_size: ps },
        };
        if c.variant == Variant::Numa {
            let spans: Vec<(u64, u64, u64)> = [image, acc, lines]
                .iter()
                .map(|&g| {
                    let a = h.layout.array(g);
                    (a.base, a.base + a.span(), a.row_stride)
                })
                .collect();
            h.hints = super::common::hints_by_first_byte(pages, ps, |byte| {
                spans
                    .iter()
                    .find(|(lo, hi, _)| byte >= *lo && byte < *hi)
                    .map(|(lo, _, stride)| ((byte - lo) / stride) as u32)
            });
        }
        Ok(h)
    }

    fn bins(&self) -> u64 {
        2 * self.diag + 1
    }

    /// The angles of thread `t`: a balanced contiguous block.
    fn angles_of(&self, t: u32) -> std::ops::Range<u64> {
        let p = self.threads as u64;
        (t as u64 * self.angles / p)..((t as u64 + 1) * self.angles / p)
    }

    /// Byte address of pixel (y, x).
    fn pixel_addr(&self, y: u64, x: u64) -> u64 {
        self.layout
            .array(self.image)
            .addr(y / self.rpb, (y % self.rpb) * self.n + x)
    }

    /// Byte address of bin `b` of angle `k` in thread `t`'s accumulator.
    fn acc_addr(&self, t: u32, k: u64, b: u64) -> u64 {
        let first = self.angles_of(t).start;
        self.layout
            .array(self.acc)
            .addr(t as u64, (k - first) * self.bins() + b)
    }

    /// Edge points in image row `y`.
    fn edges_in_row(&self, y: u64) -> u64 {
        let per = |r: u64| r * self.n * self.edge_permille / 1000;
        per(y + 1) - per(y)
    }

    /// Writes image rows `rows` (reading them in).
    fn load_rows(&self, rows: std::ops::Range<u64>, out: &mut Vec<Op>) {
        for y in rows {
            self.emit
                .range(out, self.pixel_addr(y, 0), self.n, 1, 1, true);
        }
    }

    /// Thread `t` scans image row `y` for angle `k` (one of its own) and votes.
    fn accumulate_row(&self, t: u32, k: u64, y: u64, out: &mut Vec<Op>) {
        let n = self.n;
        self.emit.range(out, self.pixel_addr(y, 0), n, 1, 1, false);
        let edges = self.edges_in_row(y);
        let compute = self
            .pixel
            .saturating_mul(n)
            .saturating_add(self.vote.saturating_mul(edges));
        if compute > 0 {
            out.push(Op::Compute(Ns(compute)));
        }
        if edges == 0 {
            return;
        }
        let ps = self.emit.page_size;
        let d = self.diag as f64;
        let maxbin = self.bins() - 1;
        let (c, s) = self.cos_sin[k as usize];
        // Votes of the row's edge points in x order, counted per accumulator page (each a
        // read and a write of its counter).
        let mut page = u64::MAX;
        let mut count = 0u64;
        for e in 0..edges {
            let x = (2 * e + 1) * n / (2 * edges);
            let rho = x as f64 * c + y as f64 * s;
            let bin = ((rho + d).round().max(0.0) as u64).min(maxbin);
            let p = self.acc_addr(t, k, bin) / ps;
            if p != page {
                self.votes(page, count, out);
                page = p;
                count = 0;
            }
            count += 1;
        }
        self.votes(page, count, out);
    }

    /// `count` read-modify-writes of counters on `page`.
    fn votes(&self, page: u64, count: u64, out: &mut Vec<Op>) {
        if count == 0 {
            return;
        }
        let vpn = Vpn(page as u32);
        super::emit::push_ref(out, vpn, false, count);
        super::emit::push_ref(out, vpn, true, count);
    }

    /// Thread `t` merges its rho band of every accumulator into its line-table slot.
    fn merge(&self, t: u32, out: &mut Vec<Op>) {
        let bins = self.bins();
        let band = bins.div_ceil(self.threads as u64);
        let b0 = (t as u64 * band).min(bins);
        let b1 = (b0 + band).min(bins);
        if b1 > b0 {
            for u in 0..self.threads {
                for k in self.angles_of(u) {
                    self.emit
                        .range(out, self.acc_addr(u, k, b0), b1 - b0, 4, 1, false);
                }
            }
            let compared = (b1 - b0).saturating_mul(self.angles);
            if self.pixel > 0 {
                out.push(Op::Compute(Ns(self.pixel.saturating_mul(compared))));
            }
        }
        let lines = self.layout.array(self.lines);
        self.emit
            .range(out, lines.addr(t as u64, 0), LINE_SLOT_WORDS, 4, 1, true);
    }
}

impl Program for Hough {
    fn name(&self) -> &str {
        "hough"
    }
    fn threads(&self) -> u32 {
        self.threads
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn placement_hints(&self) -> &[Option<u32>] {
        &self.hints
    }
    fn next_ops(&mut self, t: u32, _running: &[bool], out: &mut Vec<Op>) {
        let ti = t as usize;
        match self.phase[ti] {
            Phase::Load => {
                // The main thread reads the whole image in (uma); each thread its block
                // (numa).
                if !self.uma {
                    let y0 = (t as u64 * self.rpb).min(self.n);
                    self.load_rows(y0..(y0 + self.rpb).min(self.n), out);
                } else if t == 0 {
                    self.load_rows(0..self.n, out);
                }
                out.push(Op::Barrier);
                out.push(Op::IterationEnd(0));
                // Zero the own accumulator.
                let mine = self.angles_of(t);
                if !mine.is_empty() {
                    let len = (mine.end - mine.start) * self.bins();
                    self.emit
                        .range(out, self.acc_addr(t, mine.start, 0), len, 4, 1, true);
                }
                self.phase[ti] = Phase::Accumulate(0);
            }
            Phase::Accumulate(i) => {
                // Angle by angle, the whole image for each.
                let mine = self.angles_of(t);
                let k = mine.start + i / self.n;
                if k < mine.end {
                    self.accumulate_row(t, k, i % self.n, out);
                    self.phase[ti] = Phase::Accumulate(i + 1);
                } else {
                    out.push(Op::Barrier);
                    out.push(Op::IterationEnd(1));
                    self.phase[ti] = Phase::Merge;
                }
            }
            Phase::Merge => {
                self.merge(t, out);
                out.push(Op::Barrier);
                out.push(Op::IterationEnd(2));
                self.phase[ti] = Phase::Done;
            }
            Phase::Done => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(nodes: u16) -> Machine {
        let mut m = crate::mm::test_machine_config(nodes);
        m.frames_per_node = 4096;
        Machine::new(m).unwrap()
    }

    /// Pages read (false) or written (true) by `ops`.
    fn pages(ops: &[Op], write: bool) -> Vec<u64> {
        let mut v: Vec<u64> = ops
            .iter()
            .filter_map(|o| match o {
                Op::Ref {
                    vpn: Vpn(p),
                    write: w,
                    ..
                } if *w == write => Some(*p as u64),
                _ => None,
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn pages_of(h: &Hough, a: ArrayId) -> std::ops::Range<u64> {
        let arr = h.layout.array(a);
        let ps = h.emit.page_size;
        arr.base / ps..(arr.base + arr.span()).div_ceil(ps)
    }

    fn small(variant: Variant) -> Hough {
        // A 16 x 16 image (four 64-byte pages of 4 rows), 8 angles, 4 threads.
        let c = HoughConfig {
            n: 16,
            angles: 8,
            edge_permille: 250,
            threads: Some(4),
            variant,
            ..Default::default()
        };
        Hough::new(&c, &machine(4)).unwrap()
    }

    /// Every op of thread `t`'s accumulation phase.
    fn accumulation(h: &mut Hough, t: u32) -> Vec<Op> {
        let mut out = Vec::new();
        h.next_ops(t, &[true; 4], &mut out);
        let mut all = Vec::new();
        loop {
            out.clear();
            h.next_ops(t, &[true; 4], &mut out);
            all.extend_from_slice(&out);
            if out.contains(&Op::IterationEnd(1)) {
                return all;
            }
        }
    }

    #[test]
    fn accumulating_threads_read_the_whole_image_and_write_only_their_accumulator() {
        let mut h = small(Variant::Uma);
        let image = pages_of(&h, h.image);
        let ps = h.emit.page_size;
        for t in 0..4 {
            let ops = accumulation(&mut h, t);
            let read = pages(&ops, false);
            for p in image.clone() {
                assert!(read.contains(&p), "thread {t} misses image page {p}");
            }
            // Writes land only on the pages of the thread's own accumulator rows.
            let mine = h.angles_of(t);
            let lo = h.acc_addr(t, mine.start, 0) / ps;
            let hi = (h.acc_addr(t, mine.end - 1, h.bins() - 1)) / ps;
            let written = pages(&ops, true);
            assert!(!written.is_empty());
            assert!(written.iter().all(|&p| p >= lo && p <= hi), "{written:?}");
        }
    }

    #[test]
    fn the_merge_reads_every_accumulator() {
        let h = small(Variant::Numa);
        let mut out = Vec::new();
        h.merge(1, &mut out);
        let read = pages(&out, false);
        for u in 0..4 {
            let ps = h.emit.page_size;
            let a = h.angles_of(u);
            let lo = h.acc_addr(u, a.start, 0) / ps;
            let hi = h.acc_addr(u, a.end - 1, h.bins() - 1) / ps;
            assert!(
                read.iter().any(|&p| p >= lo && p <= hi),
                "accumulator {u} unread"
            );
        }
        let lines = pages_of(&h, h.lines);
        assert!(pages(&out, true).iter().all(|p| lines.contains(p)));
    }

    #[test]
    fn phases_end_in_barriers_and_iteration_ends() {
        let mut h = small(Variant::Uma);
        let mut ends = Vec::new();
        let mut out = Vec::new();
        loop {
            out.clear();
            h.next_ops(2, &[true; 4], &mut out);
            if out.is_empty() {
                break;
            }
            for (i, o) in out.iter().enumerate() {
                if let Op::IterationEnd(k) = o {
                    assert_eq!(out[i - 1], Op::Barrier);
                    ends.push(*k);
                }
            }
        }
        assert_eq!(ends, vec![0, 1, 2]);
    }

    #[test]
    fn the_uma_main_thread_reads_in_the_whole_image() {
        let mut h = small(Variant::Uma);
        let image = pages_of(&h, h.image);
        let mut out = Vec::new();
        h.next_ops(0, &[true; 4], &mut out);
        let written = pages(&out, true);
        assert!(image.clone().all(|p| written.contains(&p)));
        out.clear();
        h.next_ops(1, &[true; 4], &mut out);
        assert!(pages(&out, true).iter().all(|p| !image.contains(p)));
    }

    #[test]
    fn the_numa_variant_places_each_block_and_accumulator_on_its_threads_node() {
        let h = small(Variant::Numa);
        let hints = h.placement_hints();
        // Image block t (4 rows of 16 bytes: one 64-byte page) on node t.
        for (t, p) in pages_of(&h, h.image).enumerate() {
            assert_eq!(hints[p as usize], Some(t as u32));
        }
        let ps = h.emit.page_size;
        for t in 0..4 {
            let a = h.angles_of(t);
            let lo = h.acc_addr(t, a.start, 0) / ps;
            let hi = h.acc_addr(t, a.end - 1, h.bins() - 1) / ps;
            assert!((lo..=hi).all(|p| hints[p as usize] == Some(t)));
        }
    }

    #[test]
    fn uma_accumulators_share_pages_at_their_boundaries() {
        let h = small(Variant::Uma);
        let ps = h.emit.page_size;
        // 2 angles x 47 bins x 4 bytes = 376 bytes an accumulator: not a page multiple.
        let end0 = h.acc_addr(0, 1, h.bins() - 1) / ps;
        let start1 = h.acc_addr(1, 2, 0) / ps;
        assert_eq!(end0, start1);
        assert!(h.placement_hints().is_empty());
    }

    #[test]
    fn more_threads_than_angles_is_an_error_naming_the_field() {
        let c = HoughConfig {
            angles: 2,
            threads: Some(4),
            ..Default::default()
        };
        let e = Hough::new(&c, &machine(4)).unwrap_err();
        assert!(e.to_string().contains("workload.threads"), "{e}");
    }

    #[test]
    fn an_edge_fraction_above_one_is_an_error_naming_the_field() {
        let c = HoughConfig {
            edge_permille: 1001,
            ..Default::default()
        };
        let e = Hough::new(&c, &machine(4)).unwrap_err();
        assert!(e.to_string().contains("workload.edge_permille"), "{e}");
    }

    #[test]
    fn the_rho_range_covers_the_image_diagonal() {
        assert_eq!(diag_of(1), 2);
        assert_eq!(diag_of(16), 23);
        assert_eq!(diag_of(1024), 1449);
    }

    #[test]
    fn a_run_on_a_small_gp1000_like_machine_completes() {
        let stats = crate::workload::common::gp1000_like_run(
            crate::component::WorkloadConfig::new(HoughConfig {
                n: 64,
                angles: 16,
                ..Default::default()
            }),
        );
        assert!(stats.makespan_ns > 0);
    }
}
