//! Why the oracle could not answer.

use numaplace_core::SimError;
use std::io;
use std::path::Path;

/// Why the oracle could not answer.
#[derive(Debug, thiserror::Error)]
pub enum OracleError {
    /// The run could not be simulated.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// A trace or schedule file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What went wrong.
        source: io::Error,
    },
}

impl OracleError {
    pub(crate) fn io(path: &Path) -> impl FnOnce(io::Error) -> OracleError + '_ {
        move |source| OracleError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
