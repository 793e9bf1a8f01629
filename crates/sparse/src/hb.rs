//! Harwell-Boeing files: reader and writer.
//!
//! Layout (Duff, Grimes & Lewis, "Users' guide for the Harwell-Boeing sparse
//! matrix collection", 1992):
//!
//! | line | contents (Fortran format) |
//! |---|---|
//! | 1 | title (A72), key (A8) |
//! | 2 | totcrd ptrcrd indcrd valcrd rhscrd (5I14) |
//! | 3 | mxtype (A3), 11 blanks, nrow ncol nnzero neltvl (4I14) |
//! | 4 | ptrfmt indfmt (2A16), valfmt rhsfmt (2A20) |
//! | 5 | only when rhscrd > 0: rhstyp (A3), 11 blanks, nrhs nrhsix (2I14) |
//!
//! followed by `ptrcrd` cards of column pointers, `indcrd` cards of row
//! indices, `valcrd` cards of values and `rhscrd` cards of right-hand sides,
//! each section read with its Fortran format. The matrix is stored by
//! columns (CSC); symmetric types store the lower triangle.
//!
//! Supported types: first letter `R` (real), `P` (pattern) or `I` (integer,
//! a Rutherford-Boeing extension, read as real); second letter `S`, `U`,
//! `Z` (skew), `R` (rectangular, treated as unsymmetric) or `H` (Hermitian,
//! equivalent to symmetric for real values); third letter `A` (assembled).
//! Complex (`C`) and elemental (`E`) matrices are rejected as unsupported.
//! Right-hand sides are skipped (their cards are counted, not parsed).
//!
//! Card counts are checked strictly: every section must hold exactly the
//! cards its format needs for the declared number of values, and `totcrd`
//! must be the sum of the section counts. Real collection files satisfy
//! this, and it is what makes truncated or spliced files detectable.

use std::fmt::Write as _;

use crate::error::{ErrorKind, MatrixError};
use crate::fortran::{
    parse_integer_field, read_int_slot, read_real_slot, BlankMode, FortranFormat, ReadError,
};
use crate::matrix::{check_dimension, check_entry_count, RawEntry, SparseMatrix, Symmetry};

/// Header fields the reader needs.
struct Header {
    ptrcrd: usize,
    indcrd: usize,
    valcrd: usize,
    rhscrd: usize,
    symmetry: Symmetry,
    pattern: bool,
    nrow: usize,
    ncol: usize,
    nnz: usize,
    ptrfmt: FortranFormat,
    indfmt: FortranFormat,
    valfmt: Option<FortranFormat>,
    /// Number of header lines (4, or 5 with right-hand sides).
    lines: usize,
}

/// Reads a Harwell-Boeing file from `text`; `name` is used in error messages
/// and as the matrix name.
///
/// The result holds the stored entries converted to CSR: for symmetric types
/// that is the lower triangle exactly as stored, so LUND A gives 147 rows and
/// 1298 entries. Duplicate positions within a column are rejected.
pub fn read_harwell_boeing(text: &str, name: &str) -> Result<SparseMatrix, MatrixError> {
    let at = |line: usize, kind: ErrorKind| MatrixError::at(name, line, kind);
    let lines: Vec<&str> = text.lines().collect();
    let h = parse_header(&lines, name)?;

    // Check the total length first: a truncated file is by far the most
    // common defect, and reporting the first missing line is most useful.
    let sections = [
        ("pointer", h.ptrcrd),
        ("row index", h.indcrd),
        ("value", h.valcrd),
        ("right-hand side", h.rhscrd),
    ];
    let mut start = h.lines;
    for (what, cards) in sections {
        let end = start.saturating_add(cards);
        if lines.len() < end {
            return Err(at(
                lines.len() + 1,
                ErrorKind::Truncated(format!(
                    "{what} card {} of {cards} missing (header declares {cards} {what} cards \
                     starting at line {})",
                    lines.len() - start + 1,
                    start + 1
                )),
            ));
        }
        start = end;
    }
    if let Some(extra) = lines[start..].iter().position(|l| !l.trim().is_empty()) {
        return Err(at(
            start + extra + 1,
            ErrorKind::ExtraData("non-blank line after the cards declared in the header".into()),
        ));
    }

    // Column pointers.
    let ptr_first = h.lines; // 0-based index of first pointer card
    let pointers = read_section(
        name,
        &lines,
        ptr_first,
        h.ptrcrd,
        "pointer",
        &h.ptrfmt,
        h.ncol + 1,
        read_int_slot,
    )?;
    let ptr_line = |k: usize| ptr_first + pointers[k].1 + 1;
    if pointers[0].0 != 1 {
        return Err(at(
            ptr_line(0),
            ErrorKind::InconsistentPointers(format!(
                "first pointer is {}, must be 1",
                pointers[0].0
            )),
        ));
    }
    for k in 1..pointers.len() {
        if pointers[k].0 < pointers[k - 1].0 {
            return Err(at(
                ptr_line(k),
                ErrorKind::InconsistentPointers(format!(
                    "pointer {} of column {} is {}, less than the previous {}",
                    k + 1,
                    k,
                    pointers[k].0,
                    pointers[k - 1].0
                )),
            ));
        }
    }
    let last = pointers[h.ncol].0;
    // `last >= 1` here, so `last - 1` cannot overflow.
    if (last - 1) as u64 != h.nnz as u64 {
        return Err(at(
            ptr_line(h.ncol),
            ErrorKind::InconsistentPointers(format!(
                "last pointer is {last}, must be nnzero + 1 = {}",
                h.nnz as u64 + 1
            )),
        ));
    }

    // Row indices.
    let ind_first = ptr_first + h.ptrcrd;
    let indices = read_section(
        name,
        &lines,
        ind_first,
        h.indcrd,
        "row index",
        &h.indfmt,
        h.nnz,
        read_int_slot,
    )?;
    for &(index, record) in &indices {
        if index < 1 || index as u64 > h.nrow as u64 {
            return Err(at(
                ind_first + record + 1,
                ErrorKind::IndexOutOfRange {
                    what: "row",
                    index,
                    max: h.nrow,
                },
            ));
        }
    }

    // Values.
    let val_first = ind_first + h.indcrd;
    let values = match &h.valfmt {
        Some(fmt) => Some(read_section(
            name,
            &lines,
            val_first,
            h.valcrd,
            "value",
            fmt,
            h.nnz,
            read_real_slot,
        )?),
        None => None,
    };

    // `indices` holds nnz values read from the file, so this reservation is
    // backed by text that is present, not just by the header's count.
    let mut entries = Vec::with_capacity(indices.len());
    for col in 0..h.ncol {
        // Pointers were validated as 1 <= p[j] <= p[j+1] <= nnz + 1.
        let from = pointers[col].0 as usize - 1;
        let to = pointers[col + 1].0 as usize - 1;
        for k in from..to {
            entries.push(RawEntry {
                row: indices[k].0 as usize - 1,
                col,
                value: values.as_ref().map_or(1.0, |v| v[k].0),
                line: ind_first + indices[k].1 + 1,
            });
        }
    }
    SparseMatrix::build(name, h.nrow, h.ncol, h.symmetry, h.pattern, entries)
}

/// Reads `count` values from the `cards` lines starting at 0-based line
/// `first`, requiring the format to use exactly that many cards.
#[allow(clippy::too_many_arguments)]
fn read_section<T>(
    name: &str,
    lines: &[&str],
    first: usize,
    cards: usize,
    what: &str,
    fmt: &FortranFormat,
    count: usize,
    convert: impl FnMut(&crate::fortran::Slot, &str) -> Result<T, ErrorKind>,
) -> Result<Vec<(T, usize)>, MatrixError> {
    let section = &lines[first..first + cards];
    match fmt.read_with(section, count, convert) {
        Ok((values, used)) if used == cards => Ok(values),
        Ok((_, used)) => Err(MatrixError::at(
            name,
            first + used + 1,
            ErrorKind::ExtraData(format!(
                "{count} {what} values with format {} fill {used} cards, header declares {cards}",
                fmt.text()
            )),
        )),
        Err(ReadError::OutOfRecords { got }) => Err(MatrixError::at(
            name,
            (first + cards).max(2),
            ErrorKind::Truncated(format!(
                "{what} cards (lines {}-{}) hold only {got} of {count} values with format {}",
                first + 1,
                first + cards,
                fmt.text()
            )),
        )),
        Err(ReadError::Field { record, kind }) => {
            Err(MatrixError::at(name, first + record + 1, kind))
        }
    }
}

/// Cuts columns `from..to` (0-based, by character) out of a header line.
fn columns(line: &str, from: usize, to: usize) -> String {
    line.chars().skip(from).take(to - from).collect()
}

/// Reads `count` integers of width 14 starting at column `offset`; fields
/// past the end of the line read as `None`. Falls back to whitespace
/// splitting when the fixed columns do not hold integers, because
/// hand-written headers are often misaligned while the numbers are clear.
///
/// `fallback_offset` is where the whitespace-separated numbers may start
/// (after the matrix type on line 3).
fn header_ints(
    line: &str,
    offset: usize,
    fallback_offset: usize,
    count: usize,
) -> Option<Vec<Option<i64>>> {
    let fixed: Option<Vec<Option<i64>>> = (0..count)
        .map(|k| {
            let f = columns(line, offset + 14 * k, offset + 14 * (k + 1));
            if f.trim().is_empty() {
                Some(None)
            } else if f.trim().contains(' ') {
                // Two numbers in one fixed field: the line is misaligned.
                None
            } else {
                parse_integer_field(&f, BlankMode::Null).ok().map(Some)
            }
        })
        .collect();
    let rest: String = line.chars().skip(fallback_offset).collect();
    let tokens: Vec<&str> = rest.split_whitespace().collect();
    if let Some(v) = fixed {
        // Trust the fixed columns only if they saw every number on the line.
        if v.iter().flatten().count() == tokens.len().min(count) {
            return Some(v);
        }
    }
    if tokens.len() > count {
        return None;
    }
    let mut out = Vec::with_capacity(count);
    for k in 0..count {
        match tokens.get(k) {
            Some(t) => out.push(Some(t.parse().ok()?)),
            None => out.push(None),
        }
    }
    Some(out)
}

/// Converts a required header count to `usize`.
fn count_field(
    value: Option<i64>,
    what: &str,
    required: bool,
    name: &str,
    line: usize,
) -> Result<usize, MatrixError> {
    match value {
        None if !required => Ok(0),
        None => Err(MatrixError::at(
            name,
            line,
            ErrorKind::BadHeader(format!("missing {what}")),
        )),
        Some(v) => usize::try_from(v).map_err(|_| {
            let problem = if v < 0 { "negative" } else { "too large" };
            MatrixError::at(
                name,
                line,
                ErrorKind::BadHeader(format!("{what} is {problem} ({v})")),
            )
        }),
    }
}

fn parse_header(lines: &[&str], name: &str) -> Result<Header, MatrixError> {
    let at = |line: usize, kind: ErrorKind| MatrixError::at(name, line, kind);
    if lines.len() < 4 {
        return Err(at(
            lines.len() + 1,
            ErrorKind::Truncated("a Harwell-Boeing header has at least 4 lines".into()),
        ));
    }

    // Line 2: card counts.
    let counts = header_ints(lines[1], 0, 0, 5).ok_or_else(|| {
        at(
            2,
            ErrorKind::BadHeader("expected card counts totcrd ptrcrd indcrd valcrd rhscrd".into()),
        )
    })?;
    let totcrd = count_field(counts[0], "totcrd", true, name, 2)?;
    let ptrcrd = count_field(counts[1], "ptrcrd", true, name, 2)?;
    let indcrd = count_field(counts[2], "indcrd", true, name, 2)?;
    let valcrd = count_field(counts[3], "valcrd", true, name, 2)?;
    let rhscrd = count_field(counts[4], "rhscrd", false, name, 2)?;
    let sum = [ptrcrd, indcrd, valcrd, rhscrd]
        .iter()
        .try_fold(0usize, |acc, &c| acc.checked_add(c));
    if sum != Some(totcrd) {
        return Err(at(
            2,
            ErrorKind::BadHeader(format!(
                "totcrd {totcrd} is not ptrcrd + indcrd + valcrd + rhscrd"
            )),
        ));
    }

    // Line 3: type and dimensions.
    let mxtype: Vec<char> = lines[2]
        .chars()
        .take(3)
        .map(|c| c.to_ascii_uppercase())
        .collect();
    if mxtype.len() < 3 {
        return Err(at(3, ErrorKind::BadHeader("missing matrix type".into())));
    }
    let pattern = match mxtype[0] {
        'R' | 'I' => false,
        'P' => true,
        'C' => {
            return Err(at(
                3,
                ErrorKind::Unsupported("complex matrix (type C..)".into()),
            ))
        }
        c => {
            return Err(at(
                3,
                ErrorKind::BadHeader(format!("unknown value type {c:?} in matrix type")),
            ))
        }
    };
    let symmetry = match mxtype[1] {
        'S' => Symmetry::Symmetric,
        'U' | 'R' => Symmetry::General,
        'Z' => Symmetry::SkewSymmetric,
        'H' => Symmetry::Hermitian,
        c => {
            return Err(at(
                3,
                ErrorKind::BadHeader(format!("unknown structure {c:?} in matrix type")),
            ))
        }
    };
    match mxtype[2] {
        'A' => {}
        'E' => {
            return Err(at(
                3,
                ErrorKind::Unsupported("elemental matrix (type ..E)".into()),
            ))
        }
        c => {
            return Err(at(
                3,
                ErrorKind::BadHeader(format!("unknown storage {c:?} in matrix type")),
            ))
        }
    }
    let dims = header_ints(lines[2], 14, 3, 4).ok_or_else(|| {
        at(
            3,
            ErrorKind::BadHeader("expected nrow ncol nnzero [neltvl]".into()),
        )
    })?;
    let nrow = count_field(dims[0], "nrow", true, name, 3)?;
    let ncol = count_field(dims[1], "ncol", true, name, 3)?;
    let nnz = count_field(dims[2], "nnzero", true, name, 3)?;
    check_dimension("nrow", nrow).map_err(|k| at(3, k))?;
    check_dimension("ncol", ncol).map_err(|k| at(3, k))?;
    check_entry_count("nnzero", nnz, nrow, ncol, symmetry).map_err(|k| at(3, k))?;

    // Line 4: formats.
    let fixed = [
        columns(lines[3], 0, 16),
        columns(lines[3], 16, 32),
        columns(lines[3], 32, 52),
    ];
    let tokens: Vec<&str> = lines[3].split_whitespace().collect();
    let want_values = !pattern && nnz > 0;
    let get = |k: usize| -> Result<FortranFormat, MatrixError> {
        FortranFormat::parse(&fixed[k]).or_else(|first_err| {
            // Misaligned header: formats contain no blanks, so tokens work.
            tokens
                .get(k)
                .and_then(|t| FortranFormat::parse(t).ok())
                .ok_or_else(|| at(4, first_err))
        })
    };
    let ptrfmt = get(0)?;
    let indfmt = get(1)?;
    let valfmt = if want_values { Some(get(2)?) } else { None };
    if !pattern && nnz > 0 && valcrd == 0 {
        return Err(at(
            2,
            ErrorKind::BadHeader("real matrix with entries but valcrd = 0".into()),
        ));
    }

    let header_lines = if rhscrd > 0 {
        if lines.len() < 5 {
            return Err(at(
                lines.len() + 1,
                ErrorKind::Truncated("rhscrd > 0 requires header line 5".into()),
            ));
        }
        5
    } else {
        4
    };
    Ok(Header {
        ptrcrd,
        indcrd,
        // Values of a pattern matrix, if any cards exist, are skipped.
        valcrd,
        rhscrd,
        symmetry,
        pattern,
        nrow,
        ncol,
        nnz,
        ptrfmt,
        indfmt,
        valfmt,
        lines: header_lines,
    })
}

/// Number of decimal digits of `n`.
fn digits(mut n: usize) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// Formats `v` as a Fortran `1PE25.16` field: one digit before the point,
/// 17 significant digits (enough to round-trip any f64), three-digit
/// exponent with its letter.
fn fortran_e(v: f64) -> String {
    let s = format!("{v:.16e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    format!(
        "{:>25}",
        format!("{mantissa}E{sign}{:03}", exp.unsigned_abs())
    )
}

/// Appends `items` to `out`, `per_line` per line.
fn write_cards(out: &mut String, items: &[String], per_line: usize) -> usize {
    let mut cards = 0;
    for chunk in items.chunks(per_line) {
        out.push_str(&chunk.concat());
        out.push('\n');
        cards += 1;
    }
    cards
}

/// Writes `m` as a Harwell-Boeing file with the given 8-character `key`
/// (longer keys are cut, as the format has room for 8 characters).
///
/// The title is the matrix name (first 72 characters). Values are written
/// with format `(1P,3E25.16)`, which keeps 17 significant digits so that
/// reading the file back gives the same `f64` values. Pointer and index
/// widths are chosen from the largest number to write. General matrices
/// get type `RUA` (`RRA` if not square), symmetric ones `RSA`, skew ones
/// `RZA`, Hermitian `RHA`; pattern matrices use `P` and write no values.
pub fn to_harwell_boeing(m: &SparseMatrix, key: &str) -> String {
    // Column-compressed copy of the stored entries.
    let mut col_count = vec![0usize; m.cols() + 1];
    for (_, c, _) in m.entries() {
        col_count[c + 1] += 1;
    }
    for j in 0..m.cols() {
        col_count[j + 1] += col_count[j];
    }
    let col_ptr = col_count.clone();
    let mut next = col_count;
    let mut rows = vec![0usize; m.nnz()];
    let mut vals = vec![0f64; m.nnz()];
    // Row-major traversal keeps row indices increasing within each column.
    for (r, c, v) in m.entries() {
        rows[next[c]] = r;
        vals[next[c]] = v;
        next[c] += 1;
    }

    let ptr_w = digits(m.nnz() + 1) + 1;
    let ptr_per = (80 / ptr_w).max(1);
    let ind_w = digits(m.rows()) + 1;
    let ind_per = (80 / ind_w).max(1);
    let ptr_items: Vec<String> = col_ptr
        .iter()
        .map(|p| format!("{:>ptr_w$}", p + 1))
        .collect();
    let ind_items: Vec<String> = rows.iter().map(|r| format!("{:>ind_w$}", r + 1)).collect();
    let val_items: Vec<String> = if m.pattern_only() {
        Vec::new()
    } else {
        vals.iter().map(|&v| fortran_e(v)).collect()
    };

    let mut body = String::new();
    let ptrcrd = write_cards(&mut body, &ptr_items, ptr_per);
    let indcrd = write_cards(&mut body, &ind_items, ind_per);
    let valcrd = write_cards(&mut body, &val_items, 3);

    let kind = if m.pattern_only() { 'P' } else { 'R' };
    let structure = match m.symmetry() {
        Symmetry::General if m.rows() == m.cols() => 'U',
        Symmetry::General => 'R',
        Symmetry::Symmetric => 'S',
        Symmetry::SkewSymmetric => 'Z',
        Symmetry::Hermitian => 'H',
    };
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect()
    };
    let title: String = clean(m.name()).chars().take(72).collect();
    let key: String = clean(key).chars().take(8).collect();
    let ptrfmt = format!("({ptr_per}I{ptr_w})");
    let indfmt = format!("({ind_per}I{ind_w})");
    let valfmt = if m.pattern_only() {
        String::new()
    } else {
        "(1P,3E25.16)".to_string()
    };

    let mut out = String::with_capacity(body.len() + 400);
    // Writing to a String cannot fail, so the fmt::Results are ignored.
    let _ = writeln!(out, "{}", format!("{title:<72}{key:<8}").trim_end());
    let _ = writeln!(
        out,
        "{:>14}{:>14}{:>14}{:>14}{:>14}",
        ptrcrd + indcrd + valcrd,
        ptrcrd,
        indcrd,
        valcrd,
        0
    );
    let _ = writeln!(
        out,
        "{kind}{structure}A{:11}{:>14}{:>14}{:>14}{:>14}",
        "",
        m.rows(),
        m.cols(),
        m.nnz(),
        0
    );
    let _ = writeln!(
        out,
        "{}",
        format!("{ptrfmt:<16}{indfmt:<16}{valfmt:<20}").trim_end()
    );
    out.push_str(&body);
    out
}
