//! Why a crate's module graph could not be built.

use crate::location::Location;
use std::path::PathBuf;

/// Why a crate's module graph could not be built.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The source directory holds neither `lib.rs` nor `main.rs`.
    #[error("{}: neither lib.rs nor main.rs is there", .0.display())]
    NoRoot(PathBuf),
    /// A source file could not be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What reading it said.
        source: std::io::Error,
    },
    /// A source file is not valid Rust.
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line of the error, counted from 1.
        line: usize,
        /// The parser's message.
        message: String,
    },
    /// A `mod NAME;` declaration whose file is not there.
    #[error("{at}: no file for module `{name}` (looked for {})", looked_for.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    MissingModule {
        /// The module's name.
        name: String,
        /// The declaration.
        at: Location,
        /// The files it may be in.
        looked_for: Vec<PathBuf>,
    },
}
