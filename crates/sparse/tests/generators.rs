//! Generated matrices.

use numaplace_sparse::{gr_30_30, grid9, standin_holliday_009, standin_holliday_014, Symmetry};

#[test]
fn gr_30_30_has_900_rows_and_4322_stored_entries() {
    let m = gr_30_30();
    assert_eq!((m.rows(), m.cols(), m.nnz()), (900, 900, 4322));
    assert_eq!(m.name(), "GR 30 30");
}

#[test]
fn gr_30_30_is_symmetric_lower_triangle_with_diagonal() {
    let m = gr_30_30();
    assert_eq!(m.symmetry(), Symmetry::Symmetric);
    assert!(m.entries().all(|(r, c, _)| c <= r));
    assert!((0..900).all(|i| m.row(i).any(|(c, _)| c == i)));
    assert_eq!(m.expanded_nnz(), 2 * 4322 - 900);
}

#[test]
fn grid9_couples_exactly_the_eight_neighbours() {
    let (nx, ny) = (5, 4);
    let m = grid9(nx, ny);
    for (r, c, v) in m.entries() {
        let (rx, ry) = ((r % nx) as i64, (r / nx) as i64);
        let (cx, cy) = ((c % nx) as i64, (c / nx) as i64);
        assert!((rx - cx).abs() <= 1 && (ry - cy).abs() <= 1);
        assert_eq!(v, if r == c { 8.0 } else { -1.0 });
    }
    // Interior point (2,2) = 12 has 4 lower neighbours plus itself.
    assert_eq!(m.row(12).count(), 5);
    // Corner point 0 only has itself.
    assert_eq!(m.row(0).count(), 1);
}

#[test]
fn grid9_of_empty_grid_is_empty() {
    let m = grid9(0, 7);
    assert_eq!((m.rows(), m.nnz()), (0, 0));
}

#[test]
fn standin_009_has_207_rows_and_572_entries() {
    let m = standin_holliday_009();
    assert_eq!((m.rows(), m.cols(), m.nnz()), (207, 207, 572));
    assert_eq!(m.symmetry(), Symmetry::General);
    assert!(m.name().contains("not IMPCOL A"));
}

#[test]
fn standin_009_is_deterministic() {
    assert_eq!(standin_holliday_009(), standin_holliday_009());
}

#[test]
fn standin_014_has_238_rows_and_1128_entries() {
    let m = standin_holliday_014();
    assert_eq!((m.rows(), m.cols(), m.nnz()), (238, 238, 1128));
    assert!(m.name().contains("not SAYLR1"));
    // Structurally symmetric, numerically not.
    let has = |r: usize, c: usize| m.row(r).any(|(k, _)| k == c);
    assert!(m.entries().all(|(r, c, _)| has(c, r)));
    assert_ne!(m.row(1).next(), Some((0, -0.9)));
}
