//! Results as JSON Lines: one [`Record`] per finished run, appended and
//! flushed as each run finishes so that a killed sweep loses at most the
//! line being written.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::value::{get_dotted, values_equal};

/// The metrics a run that did not finish still has (see [`Record::metric`]): whether it
/// finished and whether it was stopped, so a claim can say that it did not finish.
pub const UNFINISHED_METRICS: &[&str] = &["finished", "partial"];

/// The stored outcome of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Run identifier (`r000017`).
    pub id: String,
    /// Index of the run in the spec's expansion.
    pub index: usize,
    /// Seed the run used.
    pub seed: u64,
    /// Axis values of the run, keyed by dotted configuration path.
    pub settings: Map<String, Value>,
    /// The runner's result JSON (`null` when the run failed).
    #[serde(default)]
    pub result: Value,
    /// Why the run failed, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The run's configuration as the spec gave it (before the runner resolved it), so a
    /// resumed sweep notices a changed base configuration.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub spec_config: Value,
}

impl Record {
    /// Whether the run succeeded.
    pub fn ok(&self) -> bool {
        self.error.is_none()
    }

    /// Whether the run finished: a result marked `partial` (stopped before its threads
    /// finished) or `finished: false` (out of its simulated-time budget) did not.
    pub fn finished(&self) -> bool {
        let flag = |key: &str| self.result.get(key).and_then(Value::as_bool);
        self.ok() && flag("partial") != Some(true) && flag("finished") != Some(false)
    }

    /// A numeric metric of the result (dotted path), if present. A run that did not
    /// finish has no numbers but [`UNFINISHED_METRICS`]: its times and counts stop
    /// where it was stopped, and are not results.
    pub fn metric(&self, path: &str) -> Option<f64> {
        if !self.ok() || (!self.finished() && !UNFINISHED_METRICS.contains(&path)) {
            return None;
        }
        crate::value::metric_of(&self.result, path)
    }

    /// Value of a configuration field for this run: the axis setting if the
    /// field was swept, else the resolved `config` the runner reported, else
    /// the run's `seed`, `id` or `index`.
    pub fn field(&self, path: &str) -> Option<Value> {
        if let Some(v) = self.settings.get(path) {
            return Some(v.clone());
        }
        if let Some(cfg) = self.result.get("config") {
            if let Some(v) = get_dotted(cfg, path) {
                return Some(v.clone());
            }
        }
        match path {
            "seed" => Some(Value::from(self.seed)),
            "id" => Some(Value::from(self.id.clone())),
            "index" => Some(Value::from(self.index)),
            _ => None,
        }
    }

    /// This record with only the given dotted paths of its result (see
    /// [`crate::value::project`]) and no `spec_config`: what a summary needs,
    /// without the bulk of a whole result.
    pub fn keep_only(self, paths: &[String]) -> Record {
        Record {
            result: crate::value::project(&self.result, paths),
            spec_config: Value::Null,
            ..self
        }
    }

    /// Whether every `(field, value)` of the selector matches this run.
    pub fn matches(&self, selector: &[(String, Value)]) -> bool {
        selector
            .iter()
            .all(|(k, v)| self.field(k).is_some_and(|mine| values_equal(&mine, v)))
    }
}

/// Errors reading a results file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The results file.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// A line other than the last is not a valid record.
    #[error("{path}: line {line}: corrupt record: {message}")]
    Corrupt {
        /// The results file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// Parser message.
        message: String,
    },
    /// The same run id appears twice with different contents.
    #[error("{path}: line {line}: run {id} is stored twice with different contents")]
    Conflict {
        /// The results file.
        path: PathBuf,
        /// 1-based line number of the second occurrence.
        line: usize,
        /// The run id.
        id: String,
    },
}

/// The parsed contents of a results file.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// Records in file order, without identical duplicates.
    pub records: Vec<Record>,
    /// Byte length of the valid prefix (through the last good line).
    pub valid_len: u64,
    /// Whether the valid prefix ends without a newline (the last record was
    /// complete but its newline was not written).
    pub needs_newline: bool,
    /// Whether a torn (unparseable) last line was ignored.
    pub torn: bool,
}

/// Loads a results file, ignoring a torn last line left by a killed
/// process; a bad line anywhere else is an error naming the line.
pub fn load(path: &Path) -> Result<Vec<Record>, StoreError> {
    load_detailed(path).map(|l| l.records)
}

/// Like [`load`], also reporting where the valid prefix ends.
pub fn load_detailed(path: &Path) -> Result<Loaded, StoreError> {
    load_mapped(path, |r| r)
}

/// Like [`load_detailed`], passing each record through `map` as it is read (e.g.
/// [`Record::keep_only`]), so only what the caller keeps is held in memory: the file
/// is read line by line, never whole.
pub fn load_mapped(
    path: &Path,
    mut map: impl FnMut(Record) -> Record,
) -> Result<Loaded, StoreError> {
    let io = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = BufReader::new(File::open(path).map_err(io)?);
    let mut out = Loaded::default();
    // Each id's position and a digest of its line: a repeated id must repeat the
    // same bytes (records are written deterministically), and the digest lets that
    // be checked without keeping whole records.
    let mut seen: HashMap<String, u64> = HashMap::new();
    let mut line = Vec::new();
    let mut offset = 0u64;
    let mut number = 0usize;
    // A line that failed to parse, held back until we know whether it is the last
    // non-blank one (a torn line left by a killed writer) or corruption.
    let mut pending: Option<(usize, String)> = None;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(io)?;
        if n == 0 {
            break;
        }
        number += 1;
        let has_newline = line.last() == Some(&b'\n');
        let body = if has_newline {
            &line[..line.len() - 1]
        } else {
            &line[..]
        };
        let end = offset + n as u64;
        offset = end;
        if body.iter().all(u8::is_ascii_whitespace) {
            if pending.is_none() {
                out.valid_len = end;
            }
            continue;
        }
        if let Some((at, message)) = pending.take() {
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                line: at,
                message,
            });
        }
        match serde_json::from_slice::<Record>(body) {
            Ok(rec) => {
                let digest = {
                    let mut h = std::hash::DefaultHasher::new();
                    body.hash(&mut h);
                    h.finish()
                };
                match seen.get(&rec.id) {
                    Some(&d) if d != digest => {
                        return Err(StoreError::Conflict {
                            path: path.to_path_buf(),
                            line: number,
                            id: rec.id,
                        })
                    }
                    Some(_) => {}
                    None => {
                        seen.insert(rec.id.clone(), digest);
                        out.records.push(map(rec));
                    }
                }
                out.valid_len = end;
                out.needs_newline = !has_newline;
            }
            Err(err) => pending = Some((number, err.to_string())),
        }
    }
    out.torn = pending.is_some();
    Ok(out)
}

/// Appends records to a results file, one whole line per write, flushed
/// immediately. Shared between worker threads behind a lock.
#[derive(Debug)]
pub struct ResultWriter {
    path: PathBuf,
    file: Mutex<File>,
}

impl ResultWriter {
    /// Creates (or truncates) a results file.
    pub fn create(path: &Path) -> Result<Self, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        }
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)
            .map_err(|source| StoreError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(ResultWriter {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    /// Opens an existing results file for resuming: loads its records (each passed
    /// through `map`, see [`load_mapped`]), cuts off a torn last line, and positions
    /// for appending.
    pub fn resume(
        path: &Path,
        map: impl FnMut(Record) -> Record,
    ) -> Result<(Self, Loaded), StoreError> {
        let io = |source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        };
        if !path.exists() {
            return Ok((Self::create(path)?, Loaded::default()));
        }
        let loaded = load_mapped(path, map)?;
        let mut file = OpenOptions::new().write(true).open(path).map_err(io)?;
        file.set_len(loaded.valid_len).map_err(io)?;
        file.seek(SeekFrom::End(0)).map_err(io)?;
        if loaded.needs_newline {
            file.write_all(b"\n").map_err(io)?;
        }
        file.flush().map_err(io)?;
        Ok((
            ResultWriter {
                path: path.to_path_buf(),
                file: Mutex::new(file),
            },
            loaded,
        ))
    }

    /// The file written to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record as a single line and flushes it to the OS.
    pub fn append(&self, record: &Record) -> Result<(), StoreError> {
        let mut line = serde_json::to_string(record).map_err(|e| StoreError::Io {
            path: self.path.clone(),
            source: std::io::Error::other(e),
        })?;
        line.push('\n');
        // A poisoned lock only means another writer panicked mid-call; the
        // file itself is still usable.
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.write_all(line.as_bytes())
            .and_then(|_| file.flush())
            .map_err(|source| StoreError::Io {
                path: self.path.clone(),
                source,
            })
    }
}

/// Writes records to a new file (replacing it), e.g. merged shards.
pub fn write_all(path: &Path, records: &[Record]) -> Result<(), StoreError> {
    let w = ResultWriter::create(path)?;
    for r in records {
        w.append(r)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(i: usize) -> Record {
        Record {
            id: crate::spec::point_id(i),
            index: i,
            seed: 1,
            settings: Map::new(),
            result: serde_json::json!({"makespan_ns": i}),
            error: None,
            spec_config: Value::Null,
        }
    }

    #[test]
    fn corrupt_middle_line_is_an_error_naming_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.jsonl");
        let good = serde_json::to_string(&rec(0)).unwrap();
        std::fs::write(&p, format!("{good}\n{{oops\n{good}\n")).unwrap();
        let err = load(&p).unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn complete_last_line_without_newline_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.jsonl");
        let good = serde_json::to_string(&rec(0)).unwrap();
        std::fs::write(&p, &good).unwrap();
        let (w, loaded) = ResultWriter::resume(&p, |r| r).unwrap();
        assert_eq!(loaded.records.len(), 1);
        w.append(&rec(1)).unwrap();
        assert_eq!(load(&p).unwrap().len(), 2);
    }

    #[test]
    fn a_torn_last_line_is_ignored_and_cut_on_resume() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.jsonl");
        let good = serde_json::to_string(&rec(0)).unwrap();
        std::fs::write(&p, format!("{good}\n{{\"id\": \"r0")).unwrap();
        let (w, loaded) = ResultWriter::resume(&p, |r| r).unwrap();
        assert!(loaded.torn);
        assert_eq!(loaded.valid_len, good.len() as u64 + 1);
        w.append(&rec(1)).unwrap();
        assert_eq!(load(&p).unwrap().len(), 2);
    }

    #[test]
    fn a_repeated_id_with_other_contents_is_a_conflict_and_an_identical_one_is_kept_once() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.jsonl");
        let a = serde_json::to_string(&rec(0)).unwrap();
        std::fs::write(&p, format!("{a}\n{a}\n")).unwrap();
        assert_eq!(load(&p).unwrap().len(), 1);
        let mut other = rec(0);
        other.seed = 2;
        let b = serde_json::to_string(&other).unwrap();
        std::fs::write(&p, format!("{a}\n{b}\n")).unwrap();
        let err = load(&p).unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn load_mapped_keeps_only_what_the_map_returns() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.jsonl");
        let mut big = rec(0);
        big.result = serde_json::json!({"makespan_ns": 5, "pages": [1, 2, 3]});
        std::fs::write(&p, serde_json::to_string(&big).unwrap() + "\n").unwrap();
        let loaded = load_mapped(&p, |r| r.keep_only(&["makespan_ns".to_string()])).unwrap();
        assert_eq!(
            loaded.records[0].result,
            serde_json::json!({"makespan_ns": 5})
        );
    }
}
