//! The real matrices in `testdata/` parse with their documented sizes.

mod common;

use common::{read, testdata};
use numaplace_sparse::{read_harwell_boeing, read_matrix_market, read_path, Symmetry};

#[test]
fn lund_a_rsa_has_147_rows_and_1298_stored_entries() {
    let m = read_harwell_boeing(&read("lund_a.rsa"), "lund_a.rsa").unwrap();
    assert_eq!((m.rows(), m.cols(), m.nnz()), (147, 147, 1298));
    assert_eq!(m.symmetry(), Symmetry::Symmetric);
    assert!(!m.pattern_only());
    // Storage as Holliday counts it: rows + 2 * nonzeros.
    assert_eq!(m.rows() + 2 * m.nnz(), 2743);
}

#[test]
fn lund_a_mtx_has_147_rows_and_1298_stored_entries() {
    let m = read_matrix_market(&read("lund_a.mtx"), "lund_a.mtx").unwrap();
    assert_eq!((m.rows(), m.cols(), m.nnz()), (147, 147, 1298));
    assert_eq!(m.symmetry(), Symmetry::Symmetric);
}

#[test]
fn bcsstk01_has_48_rows_and_224_stored_entries() {
    let m = read_harwell_boeing(&read("bcsstk01.rsa"), "bcsstk01.rsa").unwrap();
    assert_eq!((m.rows(), m.cols(), m.nnz()), (48, 48, 224));
    assert_eq!(m.symmetry(), Symmetry::Symmetric);
    // The first value card starts `   .283226851852E+07`: no digit before
    // the point. It is a(1,1), the first entry of column 1.
    let a11 = m.row(0).find(|&(c, _)| c == 0).unwrap().1;
    assert_eq!(a11, 0.283226851852e7);
}

#[test]
fn arc130_has_130_rows_and_1282_stored_entries() {
    let m = read_harwell_boeing(&read("arc130.rua"), "arc130.rua").unwrap();
    assert_eq!((m.rows(), m.cols(), m.nnz()), (130, 130, 1282));
    assert_eq!(m.symmetry(), Symmetry::General);
}

#[test]
fn arc130_d_exponent_values_are_read() {
    let m = read_harwell_boeing(&read("arc130.rua"), "arc130.rua").unwrap();
    // The file's last value card holds `1.025157410651445D+00` and an
    // earlier one `-3.905636718750000D+04`.
    assert!(m.values().contains(&1.025157410651445));
    assert!(m.values().contains(&-3.90563671875e4));
}

#[test]
fn pores_1_has_30_rows_and_180_stored_entries() {
    let m = read_matrix_market(&read("pores_1.mtx"), "pores_1.mtx").unwrap();
    assert_eq!((m.rows(), m.cols(), m.nnz()), (30, 30, 180));
    assert_eq!(m.symmetry(), Symmetry::General);
    let a11 = m.row(0).find(|&(c, _)| c == 0).unwrap().1;
    assert_eq!(a11, -9.4810113490000e+02);
}

#[test]
fn lund_a_rsa_and_mtx_give_the_same_matrix() {
    let hb = read_harwell_boeing(&read("lund_a.rsa"), "lund_a").unwrap();
    let mm = read_matrix_market(&read("lund_a.mtx"), "lund_a").unwrap();
    assert_eq!(hb.row_ptr(), mm.row_ptr());
    assert_eq!(hb.col_idx(), mm.col_idx());
    for (a, b) in hb.values().iter().zip(mm.values()) {
        assert!((a - b).abs() <= 1e-12 * a.abs().max(b.abs()), "{a} vs {b}");
    }
    assert_eq!(hb, mm);
}

#[test]
fn stored_symmetric_triangle_is_lower() {
    let m = read_harwell_boeing(&read("lund_a.rsa"), "lund_a").unwrap();
    assert!(m.entries().all(|(r, c, _)| c <= r));
    assert_eq!(m.expanded_nnz(), 2 * 1298 - 147);
}

#[test]
fn rows_are_sorted_by_column() {
    for file in ["lund_a.rsa", "bcsstk01.rsa", "arc130.rua", "pores_1.mtx"] {
        let m = read_path(testdata(file)).unwrap();
        for i in 0..m.rows() {
            let cols: Vec<usize> = m.row(i).map(|(c, _)| c).collect();
            assert!(cols.windows(2).all(|w| w[0] < w[1]), "{file} row {i}");
        }
    }
}

#[test]
fn read_path_detects_both_formats() {
    let hb = read_path(testdata("lund_a.rsa")).unwrap();
    let mm = read_path(testdata("lund_a.mtx")).unwrap();
    assert_eq!(hb.nnz(), mm.nnz());
    assert!(hb.name().ends_with("lund_a.rsa"));
}

#[test]
fn read_path_reports_missing_file_without_line() {
    let err = read_path(testdata("no_such_file.mtx")).unwrap_err();
    assert!(err.line.is_none());
    assert!(err
        .to_string()
        .contains("no_such_file.mtx: cannot read file"));
}

#[test]
fn row_beyond_range_is_empty() {
    let m = read_path(testdata("pores_1.mtx")).unwrap();
    assert_eq!(m.row(30).count(), 0);
}
