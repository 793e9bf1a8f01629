//! Recording a run and solving its offline optimum: `run --oracle` and `oracle` both do it.

use crate::failure::Failure;
use crate::output::emit_streamed;
use numaplace_core::SimError;
use numaplace_harness::{text, UserError};
use std::path::PathBuf;

/// Where a trace goes: the file asked for, or a temporary one removed on drop.
pub struct TracePath {
    /// The file.
    pub path: PathBuf,
    /// Whether the file stays after the drop (it was asked for).
    pub keep: bool,
}

impl TracePath {
    /// The file `asked` for, kept; with none, a temporary file removed on drop.
    pub fn new(asked: Option<PathBuf>) -> TracePath {
        match asked {
            Some(path) => TracePath { path, keep: true },
            None => TracePath {
                path: std::env::temp_dir()
                    .join(format!("numaplace-trace-{}.bin", std::process::id())),
                keep: false,
            },
        }
    }
}

impl Drop for TracePath {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// `e` as a failure: a bad configuration or an unreadable trace is bad input.
pub fn oracle_failure(e: numaplace_oracle::solve::OracleError) -> Failure {
    use numaplace_oracle::solve::OracleError;
    match e {
        OracleError::Sim(SimError::Config(c)) => {
            Failure::from(UserError::new(format!("invalid configuration: {c}")))
        }
        OracleError::Sim(e @ SimError::TimeOverflow { .. }) => {
            Failure::from(UserError::new(e.to_string()))
        }
        OracleError::Io { path, source } if source.kind() == std::io::ErrorKind::InvalidData => {
            Failure::from(UserError::new(format!("{path}: {source}")))
        }
        other => Failure::from(anyhow::Error::new(other).context("oracle failed")),
    }
}

/// Records `cfg`'s run, solves it and prints the run's summary with the oracle's report.
pub fn run_oracle(
    cfg: &numaplace_core::RunConfig,
    trace: Option<PathBuf>,
    top: usize,
    json: Option<PathBuf>,
    opts: numaplace_oracle::solve::SolveOptions,
) -> Result<(), Failure> {
    let trace = TracePath::new(trace);
    eprintln!(
        "oracle: simulating and recording to {}",
        trace.path.display()
    );
    let (run, sol) = numaplace_harness::oracle::run_with_oracle(cfg, &trace.path, opts)
        .map_err(oracle_failure)?;
    let rss = numaplace_harness::bench::peak_rss_bytes();
    let mut report = text::run_summary(cfg, &run.stats);
    report.push_str(&numaplace_harness::oracle::oracle_text(
        &sol,
        &run.page_data,
        top,
        rss,
    ));
    emit_streamed(report, json, |w| {
        let oracle = numaplace_harness::oracle::oracle_json(&sol, false);
        numaplace_harness::oracle::write_oracle_record(w, &run, &oracle, &sol)
    })
}
