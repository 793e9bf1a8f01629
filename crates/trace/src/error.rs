//! Why a trace could not be written or read: every error names the file and, where the
//! fault lies in its bytes, the byte offset.

use std::path::PathBuf;

/// An error reading or writing a trace (or the recorder's raw stream).
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The operating system refused a read or write.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The bytes are not a valid trace: truncated, corrupt or inconsistent.
    #[error("{}: byte offset {offset}: {what}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Where in the file the fault was found (the start of the unit that holds it).
        offset: u64,
        /// What is wrong.
        what: String,
    },
    /// A line of a text trace (an imported format) that does not read.
    #[error("{}:{line}: {what}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: u64,
        /// What is wrong.
        what: String,
    },
    /// A value given to the writer that the format cannot hold.
    #[error("{0}")]
    Invalid(String),
}

impl TraceError {
    /// A fault in the file's bytes at `offset`.
    pub fn corrupt(path: &std::path::Path, offset: u64, what: impl Into<String>) -> TraceError {
        TraceError::Corrupt {
            path: path.to_path_buf(),
            offset,
            what: what.into(),
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: &std::path::Path, source: std::io::Error) -> TraceError {
        TraceError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
