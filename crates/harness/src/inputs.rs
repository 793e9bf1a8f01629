//! Inputs a run needs from outside the core: the sparse matrix of `matvec-sparse`, read
//! from a built-in name or a Matrix Market / Harwell-Boeing file.

use crate::error::UserError;
use numaplace_core::workload::{MatvecSparseConfig, SparseRows};
use numaplace_core::RunConfig;
use numaplace_sparse::{
    gr_30_30, read_path, read_str, standin_holliday_009, standin_holliday_014, SparseMatrix,
};
use std::sync::Arc;

/// Built-in matrices: the real ones shipped with the project and the generated ones.
pub const BUILTIN_MATRICES: &[(&str, &str)] = &[
    (
        "lund-a",
        "LUND A, 147 rows, 1298 entries: Holliday's matrix 003 (real)",
    ),
    (
        "gr-30-30",
        "GR 30 30, 900 rows, 4322 entries: Holliday's matrix 021 (generated exactly)",
    ),
    (
        "standin-009",
        "207 rows, 572 entries: a synthetic stand-in for Holliday's 009",
    ),
    (
        "standin-014",
        "238 rows, 1128 entries: a synthetic stand-in for Holliday's 014",
    ),
    ("bcsstk01", "BCSSTK01, 48 rows, 224 entries (real)"),
    ("arc130", "ARC130, 130 rows, 1282 entries (real)"),
    ("pores-1", "PORES 1, 30 rows, 180 entries (real)"),
];

fn builtin(name: &str) -> Option<Result<SparseMatrix, String>> {
    let text = match name {
        "lund-a" => include_str!("../../sparse/testdata/lund_a.rsa"),
        "bcsstk01" => include_str!("../../sparse/testdata/bcsstk01.rsa"),
        "arc130" => include_str!("../../sparse/testdata/arc130.rua"),
        "pores-1" => include_str!("../../sparse/testdata/pores_1.mtx"),
        "gr-30-30" => return Some(Ok(gr_30_30())),
        "standin-009" => return Some(Ok(standin_holliday_009())),
        "standin-014" => return Some(Ok(standin_holliday_014())),
        _ => return None,
    };
    Some(read_str(text, name).map_err(|e| e.to_string()))
}

/// The row structure of matrix `name` (a built-in name or a file path).
pub fn sparse_rows(name: &str) -> Result<SparseRows, UserError> {
    sparse_rows_at("workload", name)
}

/// [`sparse_rows`] for the workload written at dotted path `workload` (errors name its
/// `matrix` field).
fn sparse_rows_at(workload: &str, name: &str) -> Result<SparseRows, UserError> {
    let m = match builtin(name) {
        Some(r) => r.map_err(|e| UserError::new(format!("built-in matrix `{name}`: {e}")))?,
        None => read_path(name).map_err(|e| {
            UserError::new(format!(
                "{workload}.matrix: {e} (built-in matrices: {})",
                BUILTIN_MATRICES
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?,
    };
    // Consume the matrix so that its pointer array is reused (usize and u64
    // have the same layout on 64-bit targets) instead of copied: only the row
    // structure is needed, and it may be large (up to MAX_DIMENSION rows).
    let row_ptr = m.into_row_ptr().into_iter().map(|p| p as u64).collect();
    SparseRows::new(name, row_ptr).map_err(|e| UserError::new(e.to_string()))
}

/// Loads whatever `cfg`'s workload reads from outside the core.
pub fn load_inputs(cfg: &mut RunConfig) -> Result<(), UserError> {
    for (path, w) in cfg.workloads_mut() {
        if let Some(c) = w.get_mut::<MatvecSparseConfig>() {
            if c.rows.is_none() {
                c.rows = Some(Arc::new(sparse_rows_at(&path, &c.matrix)?));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_matrix_loads() {
        for (name, _) in BUILTIN_MATRICES {
            let rows = sparse_rows(name).unwrap();
            assert!(rows.rows() > 0 && rows.nnz() > 0, "{name}");
        }
    }

    #[test]
    fn lund_a_has_the_papers_dimensions() {
        let m = sparse_rows("lund-a").unwrap();
        assert_eq!((m.rows(), m.nnz()), (147, 1298));
    }

    #[test]
    fn gr_30_30_has_the_papers_dimensions() {
        let m = sparse_rows("gr-30-30").unwrap();
        assert_eq!((m.rows(), m.nnz()), (900, 4322));
    }

    #[test]
    fn missing_matrix_file_names_the_field_and_the_file() {
        let e = sparse_rows("no/such/matrix.mtx").unwrap_err().to_string();
        assert!(
            e.contains("workload.matrix") && e.contains("no/such/matrix.mtx"),
            "{e}"
        );
    }
}
