//! Sparse matrices for numaplace's `matvec-sparse` workload.
//!
//! Holliday (ASPLOS 1989, "Reference history, page size, and migration
//! daemons in local/remote architectures") drove a vector-matrix multiply
//! with real sparse matrices from the Harwell-Boeing collection, stored in
//! the three-vector representation (row pointers, column indices, values;
//! `rows + 2 * nonzeros` words). This crate reads such matrices and
//! generates the ones that can be rebuilt exactly. It is pure parsing and
//! generation: no simulation logic.
//!
//! * [`read_matrix_market`] / [`to_matrix_market`]: Matrix Market
//!   coordinate files.
//! * [`read_harwell_boeing`] / [`to_harwell_boeing`]: Harwell-Boeing files,
//!   read with a real Fortran fixed-width format interpreter ([`fortran`]).
//! * [`read_str`] / [`read_path`]: detect the format from the content.
//! * [`grid9`], [`gr_30_30`], and stand-ins for matrices not shipped here.
//!
//! Every reader returns a [`SparseMatrix`] holding the *stored* entries in
//! CSR form, which for symmetric files is the stored (lower) triangle: the
//! count Holliday and the Harwell-Boeing catalogue quote. Malformed input
//! never panics; it yields a [`MatrixError`] displayed as `NAME:LINE: message`.
//!
//! # Limits
//!
//! Files come from outside the program, so no number read from a header
//! decides an allocation before it has been checked against the input that
//! is actually present ("validate, then allocate"):
//!
//! * Rows and columns are at most [`MAX_DIMENSION`] (2^24 = 16,777,216).
//!   CSR storage keeps one row pointer (8 bytes) per row, empty or not, and
//!   the simulator's `matvec-sparse` workload needs that pointer array too,
//!   so a declared row count costs memory even when the file has few
//!   entries; at the limit the pointers take 128 MiB. Larger declarations
//!   are refused at the header line with an error naming the field, e.g.
//!   `big.mtx:2: rows: 134217728 declared, above the limit of 16777216 ...`.
//! * A declared entry count larger than the number of positions the matrix
//!   has (`rows * cols`, or `n * (n + 1) / 2` for one stored triangle) is
//!   refused at the header line. Any other count is only believed as far as
//!   the file bears it out: buffers grow with the entries actually read, and
//!   reservations are capped by what the remaining text can hold, so a count
//!   the file does not back up ends in a "truncated" error, not in a large
//!   allocation.
//! * Fortran formats in Harwell-Boeing headers may expand to at most
//!   100,000 edit steps, and a field is at most
//!   [`fortran::MAX_FIELD_WIDTH`] characters wide.
//! * [`read_path`] reads at most [`MAX_FILE_BYTES`] (256 MiB); reading
//!   needs a small multiple of the file size in memory (entries are kept as
//!   triplets until the CSR arrays are built).
//!
//! # Holliday's matrices
//!
//! | Holliday | rows | nonzeros | matrix | available as |
//! |---|---|---|---|---|
//! | 003 | 147 | 1298 | LUND A | `testdata/lund_a.rsa`, `testdata/lund_a.mtx` |
//! | 009 | 207 | 572 | IMPCOL A (identified by size) | [`standin_holliday_009`] (synthetic) |
//! | 014 | 238 | 1128 | SAYLR1 (identified by size) | [`standin_holliday_014`] (synthetic) |
//! | 021 | 900 | 4322 | GR 30 30 | [`gr_30_30`] (exact structure) |
//!
//! "009" and "014" were identified by matching Holliday's sizes against the
//! Harwell-Boeing collection (Duff, Grimes, Lewis 1989): IMPCOL A is 207 × 207
//! with 572 entries (unsymmetric, chemical engineering), SAYLR1 is 238 × 238
//! with 1128 entries (unsymmetric values, symmetric pattern, a 14 × 17 grid,
//! which is exactly the 5-point operator's count). Holliday's paper gives
//! only numbers and sizes, so the identification rests on those sizes; no
//! other matrix of the 1989 collection with the same pair is known to us.
//! Their data is not shipped, so the stand-in generators provide matrices of
//! exactly the same size and stored-entry count, named so that they cannot
//! be mistaken for the originals.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
pub mod fortran;
mod generate;
mod hb;
mod matrix;
mod mm;

use std::io::Read as _;
use std::path::Path;

pub use error::{ErrorKind, MatrixError};
pub use generate::{
    gr_30_30, grid9, standin_holliday_009, standin_holliday_014, GRID9_DIAGONAL, GRID9_OFF_DIAGONAL,
};
pub use hb::{read_harwell_boeing, to_harwell_boeing};
pub use matrix::{SparseMatrix, Symmetry, MAX_DIMENSION};
pub use mm::{read_matrix_market, to_matrix_market};

/// Largest file [`read_path`] reads (256 MiB).
///
/// The readers need a small multiple of the text's size in memory, so the
/// file size itself must be bounded; a device such as `/dev/zero` would
/// otherwise be read until memory runs out. Real Harwell-Boeing and Matrix
/// Market files of the sizes a simulation can use are far smaller.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// Reads a matrix from `text`, choosing the format from the content: a
/// first line starting with `%%MatrixMarket` (any case) means Matrix
/// Market, anything else is read as Harwell-Boeing.
pub fn read_str(text: &str, name: &str) -> Result<SparseMatrix, MatrixError> {
    let first = text.lines().next().unwrap_or("");
    let is_mm = first
        .trim_start()
        .get(..14)
        .is_some_and(|s| s.eq_ignore_ascii_case("%%MatrixMarket"));
    if is_mm {
        read_matrix_market(text, name)
    } else {
        read_harwell_boeing(text, name)
    }
}

/// Reads the file at `path` and parses it with [`read_str`]; the path as
/// displayed is the name in error messages.
///
/// Bytes that are not UTF-8 (old titles sometimes hold Latin-1 text) are
/// replaced rather than rejected, since only numeric fields matter and those
/// are checked to be ASCII.
pub fn read_path(path: impl AsRef<Path>) -> Result<SparseMatrix, MatrixError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let io_err = |e: std::io::Error| MatrixError::whole(&name, ErrorKind::Io(e.to_string()));
    let too_large = || {
        MatrixError::whole(
            &name,
            ErrorKind::Unsupported(format!(
                "file larger than the limit of {MAX_FILE_BYTES} bytes (MAX_FILE_BYTES)"
            )),
        )
    };
    let file = std::fs::File::open(path).map_err(io_err)?;
    let known_len = file
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    if known_len.is_some_and(|len| len > MAX_FILE_BYTES) {
        return Err(too_large());
    }
    // The reported size is only a hint (devices and pipes report 0 and may
    // never end), so the read itself is bounded too: one byte past the limit
    // tells "at the limit" from "beyond it".
    let hint = known_len.unwrap_or(0).min(MAX_FILE_BYTES) as usize;
    let mut bytes = Vec::with_capacity(hint.saturating_add(1));
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io_err)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large());
    }
    let text = String::from_utf8_lossy(&bytes);
    read_str(&text, &name)
}
