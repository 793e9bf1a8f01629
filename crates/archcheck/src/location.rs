//! Where an edge of the module graph is made.

use std::fmt;
use std::path::PathBuf;

/// A line of a source file.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// The file, as the crate's source directory given to
    /// [`ModuleGraph::of_crate`](crate::ModuleGraph::of_crate) joined with its path
    /// inside it.
    pub file: PathBuf,
    /// The line, counted from 1.
    pub line: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// A dependency of one top-level module on another, with one place that makes it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Edge {
    /// The module whose code names the other.
    pub from: String,
    /// The module named.
    pub to: String,
    /// The first place (by file, then line) where `from` names `to`.
    pub at: Location,
}

impl fmt::Display for Edge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} -> {} at {}", self.from, self.to, self.at)
    }
}
