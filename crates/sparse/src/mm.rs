//! Matrix Market coordinate files: reader and writer.
//!
//! Supported: `%%MatrixMarket matrix coordinate real|integer|pattern
//! general|symmetric|skew-symmetric|hermitian`. Dense `array` storage and
//! `complex` values are rejected as unsupported because the simulator's
//! workloads only use real sparse matrices.
//!
//! Deliberate leniencies, all harmless for real data: keywords are
//! case-insensitive, blank lines and `%` comment lines may appear anywhere
//! after the banner, and `hermitian` / pattern `skew-symmetric` (which the
//! reference `mmio` library rejects in combination with real or pattern data)
//! are accepted so that every matrix this crate can hold also round-trips.

use std::fmt::Write as _;

use crate::error::{ErrorKind, MatrixError};
use crate::matrix::{check_dimension, check_entry_count, RawEntry, SparseMatrix, Symmetry};

/// Value type declared in the banner.
#[derive(Clone, Copy, PartialEq)]
enum Field {
    Real,
    Integer,
    Pattern,
}

/// Reads a Matrix Market coordinate file from `text`; `name` is used in error
/// messages and as the matrix name.
///
/// The size line's entry count is checked exactly: a file with fewer entries
/// (typically a truncated download) or more entries than declared is an
/// error. Indices are 1-based in the file and 0-based in the result.
pub fn read_matrix_market(text: &str, name: &str) -> Result<SparseMatrix, MatrixError> {
    let at = |line: usize, kind: ErrorKind| MatrixError::at(name, line, kind);
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));

    let (_, banner) = lines
        .next()
        .ok_or_else(|| at(1, ErrorKind::BadHeader("empty input".into())))?;
    let (field, symmetry) = parse_banner(banner).map_err(|k| at(1, k))?;

    // Size line: first line that is neither blank nor a comment.
    let mut last_line = 1;
    let mut size = None;
    for (no, line) in lines.by_ref() {
        last_line = no;
        let t = line.trim();
        if t.is_empty() || t.starts_with('%') {
            continue;
        }
        size = Some((no, t));
        break;
    }
    let (size_line, size_text) = size.ok_or_else(|| {
        at(
            last_line + 1,
            ErrorKind::Truncated("missing size line".into()),
        )
    })?;
    let (rows, cols, declared) = parse_size(size_text).map_err(|k| at(size_line, k))?;
    check_dimension("rows", rows).map_err(|k| at(size_line, k))?;
    check_dimension("columns", cols).map_err(|k| at(size_line, k))?;
    if symmetry.is_triangular_storage() && rows != cols {
        return Err(at(
            size_line,
            ErrorKind::Symmetry(format!(
                "{symmetry:?} matrix must be square, size line says {rows}x{cols}"
            )),
        ));
    }
    check_entry_count("entries", declared, rows, cols, symmetry).map_err(|k| at(size_line, k))?;

    let expected_fields = if field == Field::Pattern { 2 } else { 3 };
    // Every entry needs a line of its own, so the lines left bound what the
    // declared count may reserve; a count the file does not bear out ends in
    // a "truncated" error below, after reading only what is there.
    let mut entries = Vec::with_capacity(declared.min(lines.clone().count()));
    for (no, line) in lines {
        last_line = no;
        let t = line.trim();
        if t.is_empty() || t.starts_with('%') {
            continue;
        }
        if entries.len() == declared {
            return Err(at(
                no,
                ErrorKind::ExtraData(format!(
                    "more entries than the {declared} declared on line {size_line}"
                )),
            ));
        }
        // Count the fields without collecting them: a line may be long.
        let mut tokens = [""; 3];
        let mut found = 0usize;
        for token in t.split_whitespace() {
            if let Some(slot) = tokens.get_mut(found) {
                *slot = token;
            }
            found += 1;
        }
        if found != expected_fields {
            return Err(at(
                no,
                ErrorKind::FieldCount {
                    expected: expected_fields,
                    found,
                },
            ));
        }
        let row = parse_index(tokens[0], "row", rows).map_err(|k| at(no, k))?;
        let col = parse_index(tokens[1], "column", cols).map_err(|k| at(no, k))?;
        let value = match field {
            Field::Pattern => 1.0,
            Field::Real => parse_real(tokens[2]).map_err(|k| at(no, k))?,
            Field::Integer => tokens[2].parse::<i64>().map(|v| v as f64).map_err(|_| {
                at(
                    no,
                    ErrorKind::BadNumber {
                        text: tokens[2].to_string(),
                        reason: "not an integer".into(),
                    },
                )
            })?,
        };
        entries.push(RawEntry {
            row,
            col,
            value,
            line: no,
        });
    }
    if entries.len() < declared {
        return Err(at(
            last_line + 1,
            ErrorKind::Truncated(format!(
                "expected {declared} entries (line {size_line}), found {}",
                entries.len()
            )),
        ));
    }
    SparseMatrix::build(name, rows, cols, symmetry, field == Field::Pattern, entries)
}

/// Parses the `%%MatrixMarket` banner.
fn parse_banner(line: &str) -> Result<(Field, Symmetry), ErrorKind> {
    let tokens: Vec<String> = line
        .split_whitespace()
        .map(|t| t.to_ascii_lowercase())
        .collect();
    if tokens.first().map(String::as_str) != Some("%%matrixmarket") {
        return Err(ErrorKind::BadHeader(
            "first line must start with %%MatrixMarket".into(),
        ));
    }
    if tokens.len() < 5 {
        return Err(ErrorKind::BadHeader(
            "banner needs object, format, field and symmetry".into(),
        ));
    }
    match tokens[1].as_str() {
        "matrix" => {}
        "vector" => return Err(ErrorKind::Unsupported("vector objects".into())),
        other => return Err(ErrorKind::BadHeader(format!("unknown object {other:?}"))),
    }
    match tokens[2].as_str() {
        "coordinate" => {}
        "array" => {
            return Err(ErrorKind::Unsupported(
                "dense array format (only coordinate is read)".into(),
            ))
        }
        other => return Err(ErrorKind::BadHeader(format!("unknown format {other:?}"))),
    }
    let field = match tokens[3].as_str() {
        "real" => Field::Real,
        "integer" => Field::Integer,
        "pattern" => Field::Pattern,
        "complex" => return Err(ErrorKind::Unsupported("complex values".into())),
        other => return Err(ErrorKind::BadHeader(format!("unknown field {other:?}"))),
    };
    let symmetry = match tokens[4].as_str() {
        "general" => Symmetry::General,
        "symmetric" => Symmetry::Symmetric,
        "skew-symmetric" => Symmetry::SkewSymmetric,
        "hermitian" => Symmetry::Hermitian,
        other => return Err(ErrorKind::BadHeader(format!("unknown symmetry {other:?}"))),
    };
    Ok((field, symmetry))
}

/// Parses `rows cols entries`; the numbers are range-checked by the caller.
fn parse_size(text: &str) -> Result<(usize, usize, usize), ErrorKind> {
    let tokens: Vec<&str> = text.split_whitespace().take(4).collect();
    if tokens.len() != 3 {
        let found = text.split_whitespace().count();
        return Err(ErrorKind::BadSize(format!(
            "expected 3 numbers (rows columns entries), found {found} fields"
        )));
    }
    let mut nums = [0usize; 3];
    for ((n, t), what) in nums
        .iter_mut()
        .zip(&tokens)
        .zip(["rows", "columns", "entries"])
    {
        *n = t.parse().map_err(|_| {
            let t: String = t.chars().take(40).collect();
            ErrorKind::BadSize(format!(
                "{what}: {t:?} is not a nonnegative integer that fits in {} bits",
                usize::BITS
            ))
        })?;
    }
    Ok((nums[0], nums[1], nums[2]))
}

/// Parses a 1-based index and converts it to 0-based.
fn parse_index(text: &str, what: &'static str, max: usize) -> Result<usize, ErrorKind> {
    let index: i64 = text.parse().map_err(|_| ErrorKind::BadNumber {
        text: text.to_string(),
        reason: format!("{what} index is not an integer"),
    })?;
    if index < 1 || index as u64 > max as u64 {
        return Err(ErrorKind::IndexOutOfRange { what, index, max });
    }
    Ok(index as usize - 1)
}

/// Parses a real value; `inf` and `nan` spellings are refused because they
/// cannot be meaningful matrix entries for the workloads.
fn parse_real(text: &str) -> Result<f64, ErrorKind> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(ErrorKind::BadNumber {
            text: text.to_string(),
            reason: "not a finite real number".into(),
        }),
    }
}

/// Writes `m` as a Matrix Market coordinate file.
///
/// Values use Rust's shortest round-trip notation, so reading the output
/// back gives bit-identical values. Symmetric kinds write the stored (lower)
/// triangle, as the format requires; pattern matrices write no values.
pub fn to_matrix_market(m: &SparseMatrix) -> String {
    let field = if m.pattern_only() { "pattern" } else { "real" };
    let symmetry = match m.symmetry() {
        Symmetry::General => "general",
        Symmetry::Symmetric => "symmetric",
        Symmetry::SkewSymmetric => "skew-symmetric",
        Symmetry::Hermitian => "hermitian",
    };
    let mut out = String::with_capacity(32 * (m.nnz() + 4));
    // Writing to a String cannot fail, so the fmt::Results are ignored.
    let _ = writeln!(out, "%%MatrixMarket matrix coordinate {field} {symmetry}");
    let name: String = m
        .name()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if !name.trim().is_empty() {
        let _ = writeln!(out, "% {}", name.trim());
    }
    let _ = writeln!(out, "{} {} {}", m.rows(), m.cols(), m.nnz());
    for (r, c, v) in m.entries() {
        if m.pattern_only() {
            let _ = writeln!(out, "{} {}", r + 1, c + 1);
        } else {
            let _ = writeln!(out, "{} {} {:e}", r + 1, c + 1, v);
        }
    }
    out
}
