//! `background`: sequential I/O-bound background load, as the repeated `make` of the gcc
//! source tree in Nikolopoulos et al. (JPDC 2002, sec. 6.1): "I/O intensive and consists
//! of many sequential threads with short execution times", which "interfere in a random
//! manner" with the parallel programs.
//!
//! Each stream (a `make` loop, one thread) runs `jobs` jobs one after another (the
//! compiler invocations); a job alternates CPU bursts, in which it touches its private
//! pages and computes, with waits for input or output ([`Op::Sleep`]), during which a
//! scheduler may give its processor to another thread. Burst and wait lengths are drawn
//! uniformly within half their mean either side, from the workload's own seed, so the
//! pattern is the same for every run of one configuration. Left out: the file system and
//! disks (a wait is a fixed delay), process creation, and the memory a real compiler
//! allocates afresh for each job (a stream reuses its pages).

use crate::component::{Op, Program};
use crate::error::ConfigError;
use crate::estimate::Footprint;
use crate::fields::Fields;
use crate::machine::Machine;
use crate::memory::Layout;
use crate::types::{Ns, Vpn};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// Parameters of `background`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct BackgroundConfig {
    /// Streams of jobs running side by side (threads). Default 1 (the paper's one loop
    /// around `make`).
    #[field(min = 1, max = 4096)]
    pub streams: u32,
    /// Jobs each stream runs. Default 100.
    #[field(min = 1, max = 1_000_000)]
    pub jobs: u32,
    /// CPU bursts of a job. Default 20.
    #[field(min = 1, max = 1_000_000)]
    pub bursts_per_job: u32,
    /// Mean CPU burst (ns). Not in the paper; default 2,000,000 (2 ms).
    #[field(min = 2, max = 1_000_000_000_000, unit = "ns")]
    pub burst_ns: u64,
    /// Mean wait for input or output after a burst (ns). Not in the paper; default
    /// 5,000,000 (5 ms).
    #[field(min = 2, max = 1_000_000_000_000, unit = "ns")]
    pub io_ns: u64,
    /// Private pages a stream touches in each burst (one reference per 128-byte line).
    /// Default 8.
    #[field(min = 1, max = 1_048_576)]
    pub pages: u32,
    /// Seed of the bursts' and waits' lengths. Default 1.
    #[field(min = 0)]
    pub seed: u64,
}

impl Default for BackgroundConfig {
    fn default() -> Self {
        BackgroundConfig {
            streams: 1,
            jobs: 100,
            bursts_per_job: 20,
            burst_ns: 2_000_000,
            io_ns: 5_000_000,
            pages: 8,
            seed: 1,
        }
    }
}

impl crate::registry::Describe for BackgroundConfig {
    const KIND: &'static str = "background";
    const DESCRIPTION: &'static str =
        "sequential I/O-bound jobs (CPU bursts and I/O waits), like a repeated make";
}

impl crate::component::WorkloadParams for BackgroundConfig {
    fn footprint(&self, machine: &Machine) -> Result<Footprint, ConfigError> {
        Background::footprint(self, machine)
    }
    fn build(&self, machine: &Machine) -> Result<Vec<Box<dyn Program>>, ConfigError> {
        Ok(vec![Box::new(Background::new(self, machine)?)])
    }
}

inventory::submit!(crate::component::WorkloadEntry::of::<BackgroundConfig>());

/// Salt of stream `s`'s random stream.
const STREAM: u64 = 0x6267_6c6f_6164_0000;

/// The program.
#[derive(Debug)]
pub struct Background {
    cfg: BackgroundConfig,
    layout: Layout,
    /// Lines a page holds (references a burst makes to each page).
    lines_per_page: u32,
    /// Per stream: bursts still to run, and its random stream.
    left: Vec<u64>,
    rng: Vec<Pcg64>,
}

impl Background {
    /// Validates and lays out: `pages` pages per stream.
    fn plan(c: &BackgroundConfig, machine: &Machine) -> Result<(Layout, u64, u64), ConfigError> {
        c.check_ranges("workload")?;
        let ps = machine.page_size();
        let mut layout = Layout::new();
        let words = (c.streams as u64)
            .checked_mul(c.pages as u64)
            .and_then(|p| p.checked_mul(ps))
            .ok_or_else(|| ConfigError::new("workload.pages", "too many pages"))?;
        layout.alloc("private", words, 1, ps);
        let pages = layout.pages_checked(ps, "workload.pages")?;
        let bursts = (c.jobs as u64)
            .checked_mul(c.bursts_per_job as u64)
            .ok_or_else(|| ConfigError::new("workload.jobs", "too many bursts"))?;
        Ok((layout, pages, bursts))
    }

    /// What the program needs, from its parameters alone.
    pub fn footprint(c: &BackgroundConfig, machine: &Machine) -> Result<Footprint, ConfigError> {
        let (_, pages, bursts) = Self::plan(c, machine)?;
        let per_burst = c.pages as u64 + 2;
        Ok(Footprint {
            pages,
            threads: c.streams,
            ops: bursts
                .saturating_mul(per_burst)
                .saturating_mul(c.streams as u64),
            buffered_ops: per_burst,
            bytes: c.streams as u64 * (std::mem::size_of::<Pcg64>() as u64 + 8),
            iterations: 0,
            size_field: "workload.pages",
            ops_field: "workload.jobs",
        })
    }

    /// Builds the program for `machine`.
    pub fn new(c: &BackgroundConfig, machine: &Machine) -> Result<Background, ConfigError> {
        let (layout, _, bursts) = Self::plan(c, machine)?;
        let lines = (machine.page_size() / super::nas::LINE_BYTES).max(1);
        Ok(Background {
            layout,
            lines_per_page: lines.min(u32::MAX as u64) as u32,
            left: vec![bursts; c.streams as usize],
            rng: (0..c.streams as u64)
                .map(|s| Pcg64::seed_from_u64(c.seed ^ STREAM ^ s))
                .collect(),
            cfg: c.clone(),
        })
    }
}

/// A length drawn uniformly within half of `mean` either side.
fn around(rng: &mut Pcg64, mean: u64) -> Ns {
    Ns(rng.gen_range(mean - mean / 2..=mean + mean / 2))
}

impl Program for Background {
    fn name(&self) -> &str {
        "background"
    }
    fn threads(&self) -> u32 {
        self.cfg.streams
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn placement_hints(&self) -> &[Option<u32>] {
        &[]
    }
    fn next_ops(&mut self, t: u32, _running: &[bool], out: &mut Vec<Op>) {
        let s = t as usize;
        if self.left[s] == 0 {
            return;
        }
        self.left[s] -= 1;
        let first = t * self.cfg.pages;
        for p in first..first + self.cfg.pages {
            out.push(Op::Ref {
                vpn: Vpn(p),
                write: true,
                count: self.lines_per_page,
                at: 0,
                span: 0,
            });
        }
        let rng = &mut self.rng[s];
        out.push(Op::Compute(around(rng, self.cfg.burst_ns)));
        out.push(Op::Sleep(around(rng, self.cfg.io_ns)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(c: &BackgroundConfig) -> Background {
        let machine = Machine::new(crate::mm::test_machine_config(2)).unwrap();
        Background::new(c, &machine).unwrap()
    }

    #[test]
    fn a_burst_touches_the_streams_pages_computes_and_sleeps() {
        let c = BackgroundConfig {
            streams: 2,
            pages: 2,
            ..Default::default()
        };
        let mut b = program(&c);
        let mut out = Vec::new();
        b.next_ops(1, &[true, true], &mut out);
        assert!(matches!(out[0], Op::Ref { vpn: Vpn(2), .. }));
        assert!(matches!(out[2], Op::Compute(_)));
        assert!(matches!(out[3], Op::Sleep(_)));
    }

    #[test]
    fn a_stream_ends_after_its_jobs_bursts() {
        let c = BackgroundConfig {
            jobs: 2,
            bursts_per_job: 3,
            ..Default::default()
        };
        let mut b = program(&c);
        let mut n = 0;
        loop {
            let mut out = Vec::new();
            b.next_ops(0, &[true], &mut out);
            if out.is_empty() {
                break;
            }
            n += 1;
        }
        assert_eq!(n, 6);
    }

    #[test]
    fn lengths_stay_within_half_the_mean() {
        let mut rng = Pcg64::seed_from_u64(3);
        for _ in 0..100 {
            let d = around(&mut rng, 1000).0;
            assert!((500..=1500).contains(&d));
        }
    }
}
