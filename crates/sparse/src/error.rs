//! The single error type of the crate.
//!
//! Every reader reports malformed input through [`MatrixError`] instead of
//! panicking, because matrix files come from outside the program (downloads,
//! hand edits, truncated copies) and a simulator run must fail with a message
//! that points at the offending line rather than abort.

use std::fmt;

use thiserror::Error;

/// What went wrong, independent of where.
///
/// Kept separate from [`MatrixError`] so callers (and tests) can match on the
/// kind of failure without parsing the message text.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A valid file in a variant this crate deliberately does not read
    /// (complex values, dense `array` storage, elemental Harwell-Boeing, ...).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The banner or a Harwell-Boeing header line is malformed.
    #[error("bad header: {0}")]
    BadHeader(String),
    /// The Matrix Market size line is malformed or inconsistent.
    #[error("bad size line: {0}")]
    BadSize(String),
    /// A data line has the wrong number of fields.
    #[error("expected {expected} fields, found {found}")]
    FieldCount {
        /// Number of fields the line must have.
        expected: usize,
        /// Number of fields actually present.
        found: usize,
    },
    /// A row or column index lies outside the declared dimensions.
    #[error("{what} index {index} out of range 1..={max}")]
    IndexOutOfRange {
        /// `"row"` or `"column"`.
        what: &'static str,
        /// The 1-based index as written in the file.
        index: i64,
        /// The largest valid 1-based index.
        max: usize,
    },
    /// A field that should hold a number does not.
    #[error("unreadable number {text:?}: {reason}")]
    BadNumber {
        /// The field text as found (trimmed).
        text: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A Fortran format specification could not be parsed or is not supported.
    #[error("bad Fortran format {format:?}: {reason}")]
    BadFormat {
        /// The format text from the header.
        format: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A size declared in a header is impossible (more entries than the
    /// matrix has positions) or above a documented limit of this crate (see
    /// [`MAX_DIMENSION`](crate::MAX_DIMENSION)); `field` names the header
    /// field as the format's documentation calls it.
    #[error("{field}: {reason}")]
    DeclaredSize {
        /// The header field, e.g. `"rows"` or `"nnzero"`.
        field: &'static str,
        /// What is wrong with the declared value.
        reason: String,
    },
    /// The file ends before all declared data was read.
    #[error("unexpected end of file: {0}")]
    Truncated(String),
    /// The file holds more data than its header declares.
    #[error("extra data: {0}")]
    ExtraData(String),
    /// Column (or row) pointers are not a valid compressed-storage pointer array.
    #[error("inconsistent pointers: {0}")]
    InconsistentPointers(String),
    /// The same (row, column) position is stored twice.
    #[error("duplicate entry at row {row}, column {col} (1-based)")]
    Duplicate {
        /// 1-based row.
        row: usize,
        /// 1-based column.
        col: usize,
    },
    /// The declared symmetry cannot hold for this data (non-square matrix,
    /// nonzero diagonal of a skew-symmetric matrix).
    #[error("symmetry violation: {0}")]
    Symmetry(String),
    /// The file could not be read at all.
    #[error("cannot read file: {0}")]
    Io(String),
}

/// A failure to read or build a matrix, with the input's name and, where it
/// applies, the 1-based line number.
///
/// Displays as `NAME:LINE: message`, or `NAME: message` when no single line
/// is to blame, the same shape compilers use so editors can jump to the line.
#[derive(Debug, Clone, PartialEq, Error)]
pub struct MatrixError {
    /// Name of the input (usually the file name) as given by the caller.
    pub name: String,
    /// 1-based line number, when the problem sits on a specific line.
    pub line: Option<usize>,
    /// What went wrong.
    pub kind: ErrorKind,
}

impl fmt::Display for MatrixError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.name, line, self.kind),
            None => write!(f, "{}: {}", self.name, self.kind),
        }
    }
}

impl MatrixError {
    /// An error located on `line` (1-based) of input `name`.
    pub fn at(name: &str, line: usize, kind: ErrorKind) -> Self {
        MatrixError {
            name: name.to_string(),
            line: Some(line),
            kind,
        }
    }

    /// An error about input `name` as a whole.
    pub fn whole(name: &str, kind: ErrorKind) -> Self {
        MatrixError {
            name: name.to_string(),
            line: None,
            kind,
        }
    }
}
