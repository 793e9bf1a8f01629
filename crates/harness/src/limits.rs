//! Resource limits: a run's estimate (see [`numaplace_core::estimate`]) against the
//! memory this host has and the work a user is willing to wait for. A run over a limit is
//! refused before anything is allocated, naming the estimate and the field that drives it;
//! `--force` runs it anyway.

use crate::error::UserError;
use numaplace_core::estimate::{human_bytes, Part};
use numaplace_core::{Estimate, RunConfig};

/// Operations a run may simulate without `--force` (at the order of 10^7 operations per
/// second this is most of an hour).
pub const DEFAULT_MAX_OPS: u64 = 20_000_000_000;

/// Memory assumed when the host does not say how much is available.
const FALLBACK_MEMORY: u64 = 8_000_000_000;

/// Bytes of the JSON record per per-page report entry and per series point: the JSON value
/// tree, the page's array names and the pretty-printed text together (about 5.8 kB per page
/// was measured on Jacobi with 64-byte pages; the series figure has the same margin). The
/// estimate test holds runs to them.
const JSON_BYTES_PER_PAGE: u64 = 8_192;
/// Bytes per page of the record when its per-page list is written a page at a time
/// (`run --json`): only the text (about 440 bytes a page measured on GUPS).
const JSON_TEXT_BYTES_PER_PAGE: u64 = 640;
const JSON_BYTES_PER_POINT: u64 = 4_096;
/// Bytes of the JSON record per thread: its entry in `threads` and, a program having at
/// least one thread, its program's entry in `programs` (with the same margin).
const JSON_BYTES_PER_THREAD: u64 = 4_096;

/// Limits a run is checked against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Peak heap bytes a run may need.
    pub max_bytes: u64,
    /// Where `max_bytes` comes from, for messages.
    pub bytes_source: String,
    /// Operations a run may simulate.
    pub max_ops: u64,
}

impl Limits {
    /// 80% of the memory the host reports available (Linux `MemAvailable`), and
    /// [`DEFAULT_MAX_OPS`].
    pub fn from_host() -> Limits {
        let (max_bytes, bytes_source) = match available_memory() {
            Some(b) => (
                b / 5 * 4,
                format!("80% of the {} this host has available", human_bytes(b)),
            ),
            None => (
                FALLBACK_MEMORY,
                "the default limit (this host does not report its free memory)".to_string(),
            ),
        };
        Limits {
            max_bytes,
            bytes_source,
            max_ops: DEFAULT_MAX_OPS,
        }
    }

    /// The limits of one of `jobs` runs that share the host at once: the memory limit
    /// divided among them (the operation limit is per run already).
    pub fn shared(mut self, jobs: usize) -> Limits {
        if jobs > 1 && self.max_bytes != u64::MAX {
            self.max_bytes /= jobs as u64;
            self.bytes_source = format!("{}, shared by {jobs} parallel runs", self.bytes_source);
        }
        self
    }

    /// No limits (`--force`).
    pub fn none() -> Limits {
        Limits {
            max_bytes: u64::MAX,
            bytes_source: "no limit".into(),
            max_ops: u64::MAX,
        }
    }
}

/// Memory the host has available, from `/proc/meminfo` (None elsewhere).
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// How a run's JSON record is held, which decides what its per-page list costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// Built whole in memory (sweeps, the oracle): a JSON value per page.
    InMemory,
    /// Written with its per-page list a page at a time (`run --json`): the text only.
    Streamed,
    /// Not made (`run` without `--json`).
    Absent,
}

/// The run's estimate with what the harness adds: the JSON record of its per-page report
/// and series, the record built whole in memory.
pub fn estimate(cfg: &RunConfig) -> Result<Estimate, UserError> {
    estimate_with(cfg, Record::InMemory)
}

/// [`estimate`] for a record held as `record` says.
pub fn estimate_with(cfg: &RunConfig, record: Record) -> Result<Estimate, UserError> {
    let mut est = cfg.estimate()?;
    est.add(Part {
        what: "JSON record of the series",
        field: est.ops_field.clone(),
        bytes: est.iteration_points.saturating_mul(JSON_BYTES_PER_POINT),
    });
    est.add(Part {
        what: "JSON record of the threads and programs",
        field: if cfg.program.is_empty() {
            "workload.threads"
        } else {
            "program"
        }
        .into(),
        bytes: est.threads.saturating_mul(JSON_BYTES_PER_THREAD),
    });
    let per_page = match record {
        Record::InMemory => JSON_BYTES_PER_PAGE,
        Record::Streamed => JSON_TEXT_BYTES_PER_PAGE,
        Record::Absent => 0,
    };
    if cfg.report.per_page && per_page > 0 {
        est.add(Part {
            what: "JSON record of the per-page report",
            field: "report.per_page".into(),
            bytes: est.pages.saturating_mul(per_page),
        });
    }
    if cfg.report.series_interval_ns > 0 {
        est.add(Part {
            what: "JSON record of the interval series",
            field: "report.series_interval_ns".into(),
            bytes: numaplace_core::estimate::MAX_INTERVAL_POINTS
                .saturating_mul(JSON_BYTES_PER_POINT),
        });
    }
    Ok(est)
}

/// Checks the run's estimate against `limits`; the error names the driving field, the
/// estimate and how to proceed.
pub fn admit(cfg: &RunConfig, limits: &Limits) -> Result<Estimate, UserError> {
    admit_with(cfg, limits, Record::InMemory)
}

/// [`admit`] for a record held as `record` says.
pub fn admit_with(cfg: &RunConfig, limits: &Limits, record: Record) -> Result<Estimate, UserError> {
    let est = estimate_with(cfg, record)?;
    if est.bytes > limits.max_bytes {
        let driver = est.driver().cloned().unwrap_or(Part {
            what: "the run",
            field: "workload".into(),
            bytes: est.bytes,
        });
        return Err(UserError::Limit {
            field: driver.field,
            message: format!(
                "the run needs about {} ({}: {}); limit {} ({}). \
             Make it smaller, or pass --max-memory or --force to run it anyway",
                human_bytes(est.bytes),
                driver.what,
                human_bytes(driver.bytes),
                human_bytes(limits.max_bytes),
                limits.bytes_source,
            ),
        });
    }
    if est.ops > limits.max_ops {
        return Err(UserError::Limit {
            field: est.ops_field.clone(),
            message: format!(
                "the run simulates about {:.2e} operations; limit {:.2e}. \
                 Make it smaller, or pass --max-ops or --force to run it anyway",
                est.ops as f64, limits.max_ops as f64
            ),
        });
    }
    Ok(est)
}

/// Parses a byte size: `12000000`, `512MB`, `16GB`, `1.5TB` (decimal units; `KiB`,
/// `MiB`, `GiB`, `TiB` binary).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}`: expected a size such as 8GB or 512MiB"))?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" | "k" => 1e3,
        "mb" | "m" => 1e6,
        "gb" | "g" => 1e9,
        "tb" | "t" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        u => {
            return Err(format!(
                "`{s}`: unknown unit `{u}` (B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)"
            ))
        }
    };
    let b = v * mult;
    if !b.is_finite() || b < 1.0 || b > u64::MAX as f64 {
        return Err(format!("`{s}`: not a usable size"));
    }
    Ok(b as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_decimal_and_binary_units() {
        assert_eq!(parse_bytes("512MB"), Ok(512_000_000));
        assert_eq!(parse_bytes("2GiB"), Ok(2 << 30));
        assert_eq!(parse_bytes("1000"), Ok(1000));
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("5 parsecs").is_err());
    }
}
