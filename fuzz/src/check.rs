//! Checks shared by the fuzz targets: what a parser's result must satisfy
//! beyond not crashing.

use numaplace_sparse::{MatrixError, SparseMatrix};

/// The CSR invariants documented on [`SparseMatrix`].
pub fn matrix(m: &SparseMatrix) {
    let (rows, cols) = (m.rows(), m.cols());
    let ptr = m.row_ptr();
    assert_eq!(ptr.len(), rows + 1, "row_ptr length");
    assert_eq!(ptr[0], 0, "first row pointer");
    assert_eq!(ptr[rows], m.nnz(), "last row pointer");
    assert_eq!(m.col_idx().len(), m.values().len(), "parallel arrays");
    for r in 0..rows {
        assert!(ptr[r] <= ptr[r + 1], "row pointers decrease at row {r}");
        let cols_of_row = &m.col_idx()[ptr[r]..ptr[r + 1]];
        assert!(
            cols_of_row.windows(2).all(|w| w[0] < w[1]),
            "columns of row {r} not strictly increasing"
        );
        if let Some(&last) = cols_of_row.last() {
            assert!(last < cols, "column out of range in row {r}");
            if m.symmetry().is_triangular_storage() {
                assert!(last <= r, "upper-triangle entry in row {r}");
            }
        }
    }
    for &v in m.values() {
        assert!(v.is_finite(), "non-finite value");
        if m.pattern_only() {
            assert_eq!(v, 1.0, "pattern value");
        }
    }
}

/// An error names a line of `text` (or the one after its end), and its
/// message renders with that `NAME:LINE:` prefix.
pub fn error(e: &MatrixError, text: &str) {
    let message = e.to_string();
    if let Some(line) = e.line {
        let lines = text.lines().count();
        assert!(
            (1..=lines + 1).contains(&line),
            "error on line {line} of a {lines}-line input: {message}"
        );
        assert!(
            message.starts_with(&format!("{}:{line}: ", e.name)),
            "{message}"
        );
    }
}
