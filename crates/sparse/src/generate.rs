//! Generated matrices: exact reconstructions of grid operators from the
//! Harwell-Boeing collection, and clearly labelled stand-ins for matrices
//! whose data is not shipped with this crate.

use std::collections::BTreeSet;

use crate::matrix::{SparseMatrix, Symmetry};

/// Diagonal value of [`grid9`]: the number of neighbours of an interior point,
/// so interior rows sum to zero like a discrete Laplacian.
pub const GRID9_DIAGONAL: f64 = 8.0;
/// Off-diagonal value of [`grid9`].
pub const GRID9_OFF_DIAGONAL: f64 = -1.0;

/// The 9-point operator on an `nx` × `ny` grid: every grid point is coupled
/// to itself and its up to 8 neighbours (horizontal, vertical, diagonal).
///
/// Points are numbered row by row, `p = y * nx + x` (x varies fastest), as in
/// the Harwell-Boeing GR matrices. The result is [`Symmetry::Symmetric`] and
/// stores the lower triangle with the diagonal, which is what the collection
/// (and Holliday) count: `grid9(30, 30)` has 900 rows and 4322 stored
/// entries. Values are [`GRID9_DIAGONAL`] on the diagonal and
/// [`GRID9_OFF_DIAGONAL`] elsewhere; only the structure matters to the
/// simulator, and the collection's own GR values are not reproduced.
///
/// # Panics
/// If `nx * ny` overflows `usize` (such a matrix could not be stored anyway).
pub fn grid9(nx: usize, ny: usize) -> SparseMatrix {
    let n = nx.checked_mul(ny).expect("grid9: nx * ny overflows usize");
    let rows = (0..n).map(|p| {
        let (x, y) = (p % nx, p / nx);
        let mut row = Vec::with_capacity(5);
        // Lower neighbours in increasing column order: the row above
        // (x-1, x, x+1), then the left neighbour, then the point itself.
        if y > 0 {
            let above = p - nx;
            if x > 0 {
                row.push((above - 1, GRID9_OFF_DIAGONAL));
            }
            row.push((above, GRID9_OFF_DIAGONAL));
            if x + 1 < nx {
                row.push((above + 1, GRID9_OFF_DIAGONAL));
            }
        }
        if x > 0 {
            row.push((p - 1, GRID9_OFF_DIAGONAL));
        }
        row.push((p, GRID9_DIAGONAL));
        row
    });
    SparseMatrix::from_sorted_rows(&format!("grid9 {nx}x{ny}"), n, n, Symmetry::Symmetric, rows)
}

/// GR 30 30 of the Harwell-Boeing collection, Holliday's matrix "021": the
/// 9-point operator on a 30 × 30 grid (900 rows, 4322 stored entries), as
/// produced by [`grid9`] (structure exact, values as documented there).
pub fn gr_30_30() -> SparseMatrix {
    grid9(30, 30).with_name("GR 30 30")
}

/// Stand-in for Holliday's matrix "009" (207 rows, 572 entries).
///
/// NOT the real matrix. "009" is almost certainly IMPCOL A of the
/// Harwell-Boeing collection (207 × 207, 572 entries, unsymmetric, a heat
/// exchanger network model), whose data this crate does not ship. This
/// generator gives a matrix of exactly the same size and stored-entry count
/// with a synthetic structure: the full diagonal plus 365 off-diagonal
/// positions drawn from a fixed-seed pseudo-random generator, values in
/// [-1, 1) off the diagonal and a dominant diagonal. It is deterministic:
/// every call returns the identical matrix. Storage is
/// [`Symmetry::General`], like IMPCOL A.
pub fn standin_holliday_009() -> SparseMatrix {
    const N: usize = 207;
    const NNZ: usize = 572;
    let mut rng = SplitMix64(0x0009_1989_0009_1989);
    let mut positions = BTreeSet::new();
    while positions.len() < NNZ - N {
        let i = rng.below(N);
        let j = rng.below(N);
        if i != j {
            positions.insert((i, j));
        }
    }
    let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); N];
    for &(i, j) in &positions {
        rows[i].push((j, rng.unit() * 2.0 - 1.0));
    }
    for (i, row) in rows.iter_mut().enumerate() {
        let dominance: f64 = row.iter().map(|(_, v)| v.abs()).sum::<f64>() + 1.0;
        let at = row.partition_point(|&(c, _)| c < i);
        row.insert(at, (i, dominance));
    }
    SparseMatrix::from_sorted_rows(
        "standin-009 (synthetic, not IMPCOL A)",
        N,
        N,
        Symmetry::General,
        rows,
    )
}

/// Stand-in for Holliday's matrix "014" (238 rows, 1128 entries).
///
/// NOT the real matrix. "014" is almost certainly SAYLR1 of the
/// Harwell-Boeing collection (238 × 238, 1128 entries, P. Saylor's
/// unsymmetric matrix from a 14 × 17 two-dimensional grid, pattern
/// symmetric), whose data this crate does not ship. Its size and count are
/// exactly those of the 5-point operator on a 14 × 17 grid, which this
/// function builds with natural ordering (`p = y * 14 + x`) and full
/// ([`Symmetry::General`]) storage. Whether SAYLR1 uses the same ordering
/// has not been verified, and the values are synthetic: 4 on the diagonal,
/// -1.1 towards lower-numbered neighbours and -0.9 towards higher ones, so
/// the matrix is, like SAYLR1, structurally but not numerically symmetric.
pub fn standin_holliday_014() -> SparseMatrix {
    const NX: usize = 14;
    const NY: usize = 17;
    let rows = (0..NX * NY).map(|p| {
        let (x, y) = (p % NX, p / NX);
        let mut row = Vec::with_capacity(5);
        if y > 0 {
            row.push((p - NX, -1.1));
        }
        if x > 0 {
            row.push((p - 1, -1.1));
        }
        row.push((p, 4.0));
        if x + 1 < NX {
            row.push((p + 1, -0.9));
        }
        if y + 1 < NY {
            row.push((p + NX, -0.9));
        }
        row
    });
    SparseMatrix::from_sorted_rows(
        "standin-014 (synthetic 14x17 5-point grid, not SAYLR1)",
        NX * NY,
        NX * NY,
        Symmetry::General,
        rows,
    )
}

/// Small, fixed, well-known pseudo-random generator (SplitMix64), written
/// out here so the stand-ins do not change if a dependency's algorithm does.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (the modulo bias is irrelevant for n = 207).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in [0, 1) with 53 random bits.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}
