//! The resource limits runs are held to: the host's, or what the command line says.

use clap::Args;

/// The size limits of a sweep or a reproduction, checked before the first run.
#[derive(Args, Debug)]
pub struct StudyLimits {
    /// Refuse a sweep or study (or shard) with more runs than this.
    #[arg(long, value_name = "N", default_value_t = numaplace_study::DEFAULT_MAX_RUNS)]
    max_runs: usize,
    /// Run however many runs there are and however large their points are (no
    /// --max-runs, memory or operation limit).
    #[arg(long)]
    force: bool,
    /// Refuse a point whose memory estimate exceeds SIZE (default: 80% of the memory
    /// available, shared among the parallel runs).
    #[arg(long, value_name = "SIZE", value_parser = numaplace_harness::limits::parse_bytes)]
    max_memory: Option<u64>,
}

impl StudyLimits {
    /// Whether `--force` was given.
    pub fn forced(&self) -> bool {
        self.force
    }

    /// The run-count limit, none with `--force`.
    pub fn max_runs(&self) -> Option<usize> {
        (!self.force).then_some(self.max_runs)
    }

    /// The runner of a sweep or reproduction: every point held to the host's limits
    /// shared among the `jobs` runs that go at once (0: one per core), or to none with
    /// `--force`.
    pub fn runner(&self, jobs: usize) -> numaplace_harness::SimRunner {
        let limits = host_limits(self.force, self.max_memory);
        let jobs = match jobs {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        numaplace_harness::SimRunner::with_limits(limits.shared(jobs))
    }
}

/// The limits of one run: none with `--force`, else the host's, with `--max-memory`
/// replacing the memory limit.
pub fn host_limits(force: bool, max_memory: Option<u64>) -> numaplace_harness::Limits {
    let mut limits = if force {
        numaplace_harness::Limits::none()
    } else {
        numaplace_harness::Limits::from_host()
    };
    if let Some(b) = max_memory {
        limits.max_bytes = b;
        limits.bytes_source = "--max-memory".into();
    }
    limits
}
