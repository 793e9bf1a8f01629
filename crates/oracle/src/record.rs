//! Recording a run: the simulation with a [`Recorder`] installed, the trace finished
//! with the policy's per-page movements.

use crate::error::OracleError;
use crate::trace::{Footer, Header, PageMoves, Recorder, TraceWriter};
use numaplace_core::{RunConfig, Stats};
use std::cell::RefCell;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::rc::Rc;

/// Runs `cfg` (with its per-page report on: the policy's movements per page come from
/// it) and writes its trace to `path`; returns the run's statistics.
pub fn record(cfg: &RunConfig, path: &Path) -> Result<Stats, OracleError> {
    let mut cfg = cfg.clone();
    cfg.report.per_page = true;
    let mut engine = cfg.engine()?;
    let header = Header {
        machine: cfg.machine.clone(),
        policy: cfg.policy.kind().to_string(),
        config: serde_json::to_value(&cfg).unwrap_or_default(),
    };
    let file = File::create(path).map_err(OracleError::io(path))?;
    let writer = TraceWriter::new(BufWriter::with_capacity(1 << 20, file), &header)
        .map_err(OracleError::io(path))?;
    let shared = Rc::new(RefCell::new(writer));
    engine.set_observer(Box::new(Recorder(shared.clone())));
    let stats = engine.run()?;
    let writer = Rc::try_unwrap(shared)
        .map_err(|_| OracleError::io(path)(std::io::Error::other("the recorder outlived the run")))?
        .into_inner();
    let footer = Footer {
        npages: stats.npages,
        makespan_ns: stats.makespan_ns,
        pages: stats.pages.iter().map(page_moves).collect(),
        ..Footer::default()
    };
    writer.finish(footer).map_err(OracleError::io(path))?;
    Ok(stats)
}

/// A page's movements from its report. Copies are only ever dropped by coherency
/// faults (a migration moves the copy), so the copies dropped are the copies ever made
/// (the first placement and every replication) less those left at the end.
fn page_moves(p: &numaplace_core::stats::PageReport) -> PageMoves {
    let made = (p.copies > 0) as u64 + p.replications;
    PageMoves {
        migrations: p.migrations,
        replications: p.replications,
        coherency_faults: p.coherency_faults,
        copies_dropped: made.saturating_sub(p.copies as u64),
    }
}
