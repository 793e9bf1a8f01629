//! The in-memory matrix: compressed sparse row (CSR) storage of the entries a
//! file stores.

use crate::error::{ErrorKind, MatrixError};

/// Largest number of rows or columns a file may declare (2^24).
///
/// CSR storage allocates one pointer per row, empty rows included, so an
/// absurd size line (a corrupted or hostile file) would otherwise exhaust
/// memory before any entry is read. The limit is far above any matrix a
/// simulation can use (Holliday's largest has 900 rows) and keeps the
/// pointer array of a file at the limit to 128 MiB. Columns get the same
/// limit so that writing a matrix back (the Harwell-Boeing writer keeps one
/// pointer per column) is bounded in the same way.
pub const MAX_DIMENSION: usize = 1 << 24;

/// Which part of the matrix the stored entries describe.
///
/// For every variant except [`Symmetry::General`] only one triangle is stored
/// (always the lower one here, see [`SparseMatrix`]) and the other is implied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Symmetry {
    /// Every nonzero is stored.
    General,
    /// `a(i,j) == a(j,i)`; only the lower triangle with the diagonal is stored.
    Symmetric,
    /// `a(i,j) == -a(j,i)` (so the diagonal is zero); only the strictly lower
    /// triangle is normally stored.
    SkewSymmetric,
    /// `a(i,j) == conj(a(j,i))`; with the real values this crate supports it
    /// means the same as [`Symmetry::Symmetric`], and it is kept distinct only
    /// so the file's declaration survives a read/write round trip.
    Hermitian,
}

impl Symmetry {
    /// Whether only one triangle is stored.
    pub fn is_triangular_storage(self) -> bool {
        self != Symmetry::General
    }
}

/// A sparse matrix holding exactly the entries stored in its source, in CSR
/// form.
///
/// Why "stored" entries rather than the full matrix: Holliday's experiments
/// (and the Harwell-Boeing catalogue) count the stored triangle of symmetric
/// matrices, e.g. LUND A has 147 rows and 1298 stored entries, and the memory
/// footprint of the three-vector representation is `rows + 2 * nnz` words.
/// Use [`SparseMatrix::expanded_nnz`] for the full count.
///
/// Invariants (established by every constructor):
/// * `row_ptr.len() == rows + 1`, `row_ptr[0] == 0`, nondecreasing,
///   `row_ptr[rows] == nnz`;
/// * within a row, column indices are strictly increasing (no duplicates);
/// * for triangular storage the matrix is square and every entry has
///   `col <= row` (upper-triangle entries in the input are mirrored into the
///   lower triangle when building);
/// * values are finite; for pattern-only matrices every value is `1.0`, so a
///   vector-matrix product works without special cases.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseMatrix {
    name: String,
    rows: usize,
    cols: usize,
    symmetry: Symmetry,
    pattern_only: bool,
    row_ptr: Vec<usize>,
    col_idx: Vec<usize>,
    values: Vec<f64>,
}

/// One entry handed to the builder: 0-based position, value, and the input
/// line it came from (0 when there is no line, e.g. generated data).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawEntry {
    pub row: usize,
    pub col: usize,
    pub value: f64,
    pub line: usize,
}

impl SparseMatrix {
    /// Builds a matrix from 0-based `(row, column, value)` triplets in any
    /// order.
    ///
    /// For triangular storage ([`Symmetry::Symmetric`], `SkewSymmetric`,
    /// `Hermitian`) entries above the diagonal are moved to the mirrored
    /// position (negated for skew-symmetric), so that the stored triangle is
    /// always the lower one whatever convention the source used.
    ///
    /// Duplicate positions are rejected rather than summed: in the file formats
    /// read here a duplicate is almost always a corrupted file, and silently
    /// summing would change the stored-entry count the simulator relies on.
    /// When `pattern_only` is true the given values are ignored and stored as
    /// `1.0`.
    pub fn from_triplets(
        name: &str,
        rows: usize,
        cols: usize,
        symmetry: Symmetry,
        pattern_only: bool,
        triplets: &[(usize, usize, f64)],
    ) -> Result<Self, MatrixError> {
        for (field, n) in [("rows", rows), ("columns", cols)] {
            check_dimension(field, n).map_err(|k| MatrixError::whole(name, k))?;
        }
        let mut raw = Vec::with_capacity(triplets.len());
        for &(row, col, value) in triplets {
            if row >= rows {
                return Err(MatrixError::whole(
                    name,
                    ErrorKind::IndexOutOfRange {
                        what: "row",
                        index: saturating_i64(row).saturating_add(1),
                        max: rows,
                    },
                ));
            }
            if col >= cols {
                return Err(MatrixError::whole(
                    name,
                    ErrorKind::IndexOutOfRange {
                        what: "column",
                        index: saturating_i64(col).saturating_add(1),
                        max: cols,
                    },
                ));
            }
            raw.push(RawEntry {
                row,
                col,
                value,
                line: 0,
            });
        }
        Self::build(name, rows, cols, symmetry, pattern_only, raw)
    }

    /// Shared constructor for readers and generators. Indices must already be
    /// range-checked; `line` of each entry is used for error messages.
    pub(crate) fn build(
        name: &str,
        rows: usize,
        cols: usize,
        symmetry: Symmetry,
        pattern_only: bool,
        mut entries: Vec<RawEntry>,
    ) -> Result<Self, MatrixError> {
        let err = |line: usize, kind: ErrorKind| {
            if line == 0 {
                MatrixError::whole(name, kind)
            } else {
                MatrixError::at(name, line, kind)
            }
        };
        // Readers check their headers before reading any entry; this guards
        // the allocation below for every other caller.
        for (field, n) in [("rows", rows), ("columns", cols)] {
            check_dimension(field, n).map_err(|k| err(0, k))?;
        }
        if symmetry.is_triangular_storage() && rows != cols {
            return Err(err(
                0,
                ErrorKind::Symmetry(format!(
                    "{symmetry:?} storage needs a square matrix, got {rows}x{cols}"
                )),
            ));
        }
        for e in &mut entries {
            if pattern_only {
                e.value = 1.0;
            } else if !e.value.is_finite() {
                return Err(err(
                    e.line,
                    ErrorKind::BadNumber {
                        text: e.value.to_string(),
                        reason: "value is not finite".into(),
                    },
                ));
            }
            if symmetry.is_triangular_storage() && e.col > e.row {
                std::mem::swap(&mut e.row, &mut e.col);
                // A pattern matrix has no values to negate: its mirrored
                // entry is a nonzero like any other.
                if symmetry == Symmetry::SkewSymmetric && !pattern_only {
                    e.value = -e.value;
                }
            }
            if symmetry == Symmetry::SkewSymmetric
                && e.row == e.col
                && e.value != 0.0
                && !pattern_only
            {
                return Err(err(
                    e.line,
                    ErrorKind::Symmetry(format!(
                        "skew-symmetric matrix has nonzero diagonal entry at row {}",
                        e.row + 1
                    )),
                ));
            }
        }
        // Stable sort keeps equal positions in input order, so a duplicate is
        // reported at the later of the two lines.
        entries.sort_by_key(|e| (e.row, e.col));
        for pair in entries.windows(2) {
            if pair[0].row == pair[1].row && pair[0].col == pair[1].col {
                let later = pair[0].line.max(pair[1].line);
                return Err(err(
                    later,
                    ErrorKind::Duplicate {
                        row: pair[1].row + 1,
                        col: pair[1].col + 1,
                    },
                ));
            }
        }
        let mut row_ptr = vec![0usize; rows + 1];
        for e in &entries {
            row_ptr[e.row + 1] += 1;
        }
        for i in 0..rows {
            row_ptr[i + 1] += row_ptr[i];
        }
        let col_idx = entries.iter().map(|e| e.col).collect();
        let values = entries.iter().map(|e| e.value).collect();
        Ok(SparseMatrix {
            name: name.to_string(),
            rows,
            cols,
            symmetry,
            pattern_only,
            row_ptr,
            col_idx,
            values,
        })
    }

    /// Assembles a matrix from rows whose columns are already strictly
    /// increasing and in range; used by generators that produce valid
    /// structure by construction, so no validation pass is needed.
    pub(crate) fn from_sorted_rows(
        name: &str,
        rows: usize,
        cols: usize,
        symmetry: Symmetry,
        row_entries: impl IntoIterator<Item = Vec<(usize, f64)>>,
    ) -> Self {
        let mut row_ptr = Vec::with_capacity(rows + 1);
        let mut col_idx = Vec::new();
        let mut values = Vec::new();
        row_ptr.push(0);
        for row in row_entries {
            debug_assert!(row.windows(2).all(|w| w[0].0 < w[1].0));
            for (c, v) in row {
                col_idx.push(c);
                values.push(v);
            }
            row_ptr.push(col_idx.len());
        }
        debug_assert_eq!(row_ptr.len(), rows + 1);
        SparseMatrix {
            name: name.to_string(),
            rows,
            cols,
            symmetry,
            pattern_only: false,
            row_ptr,
            col_idx,
            values,
        }
    }

    /// Name given when the matrix was read or generated (file name, or a
    /// catalogue name such as `"GR 30 30"`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Returns the same matrix under another name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Declared symmetry (which triangle convention the stored entries follow).
    pub fn symmetry(&self) -> Symmetry {
        self.symmetry
    }

    /// True when the source had no values (pattern matrices); values then read
    /// as `1.0`.
    pub fn pattern_only(&self) -> bool {
        self.pattern_only
    }

    /// Number of stored entries (one triangle for symmetric storage).
    pub fn nnz(&self) -> usize {
        self.col_idx.len()
    }

    /// Number of nonzero positions of the full matrix: off-diagonal stored
    /// entries count twice under triangular storage.
    pub fn expanded_nnz(&self) -> usize {
        if !self.symmetry.is_triangular_storage() {
            return self.nnz();
        }
        let diagonal = self.entries().filter(|&(r, c, _)| r == c).count();
        2 * self.nnz() - diagonal
    }

    /// CSR row pointers: row `i` occupies `row_ptr[i]..row_ptr[i + 1]` of
    /// [`col_idx`](Self::col_idx) and [`values`](Self::values); length
    /// `rows + 1`.
    pub fn row_ptr(&self) -> &[usize] {
        &self.row_ptr
    }

    /// 0-based column index of every stored entry, row by row, increasing
    /// within a row.
    pub fn col_idx(&self) -> &[usize] {
        &self.col_idx
    }

    /// Value of every stored entry, parallel to [`col_idx`](Self::col_idx).
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Consumes the matrix and returns its row pointers (see
    /// [`row_ptr`](Self::row_ptr)), for callers that need only the row
    /// structure and should not hold a second copy of it.
    pub fn into_row_ptr(self) -> Vec<usize> {
        self.row_ptr
    }

    /// The stored entries of row `i` as `(column, value)` pairs, by increasing
    /// column. A row index `>= rows` yields an empty iterator instead of
    /// panicking, since callers may iterate over another matrix's row range.
    pub fn row(&self, i: usize) -> impl ExactSizeIterator<Item = (usize, f64)> + '_ {
        let range = if i < self.rows {
            self.row_ptr[i]..self.row_ptr[i + 1]
        } else {
            0..0
        };
        self.col_idx[range.clone()]
            .iter()
            .copied()
            .zip(self.values[range].iter().copied())
    }

    /// All stored entries as 0-based `(row, column, value)`, row by row.
    pub fn entries(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        (0..self.rows).flat_map(move |r| self.row(r).map(move |(c, v)| (r, c, v)))
    }
}

/// Converts an index for an error message without risking overflow.
fn saturating_i64(x: usize) -> i64 {
    i64::try_from(x).unwrap_or(i64::MAX)
}

/// Checks a declared number of rows or columns against [`MAX_DIMENSION`];
/// `field` names it in the error.
pub(crate) fn check_dimension(field: &'static str, n: usize) -> Result<(), ErrorKind> {
    if n > MAX_DIMENSION {
        return Err(ErrorKind::DeclaredSize {
            field,
            reason: format!(
                "{n} declared, above the limit of {MAX_DIMENSION} rows or columns \
                 (one row pointer is stored per row, so the size alone would decide \
                 the memory used)"
            ),
        });
    }
    Ok(())
}

/// Checks a declared number of stored entries against the number of
/// positions a `rows` x `cols` matrix with `symmetry` can store (one
/// triangle with the diagonal for triangular storage); duplicates are
/// refused, so a larger count cannot be met by any file. `field` names the
/// count in the error.
pub(crate) fn check_entry_count(
    field: &'static str,
    entries: usize,
    rows: usize,
    cols: usize,
    symmetry: Symmetry,
) -> Result<(), ErrorKind> {
    // u128 holds the product of any two usize values, so nothing can wrap.
    let (rows_w, cols_w) = (rows as u128, cols as u128);
    let positions = if symmetry.is_triangular_storage() && rows == cols {
        rows_w * (rows_w + 1) / 2
    } else {
        rows_w * cols_w
    };
    if entries as u128 > positions {
        let what = if symmetry.is_triangular_storage() {
            format!("the stored triangle of a {rows}x{cols} {symmetry:?} matrix")
        } else {
            format!("a {rows}x{cols} matrix")
        };
        return Err(ErrorKind::DeclaredSize {
            field,
            reason: format!(
                "{entries} entries declared, but {what} has only {positions} positions"
            ),
        });
    }
    Ok(())
}
