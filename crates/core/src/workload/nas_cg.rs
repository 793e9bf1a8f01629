//! `nas-cg`: the NAS CG benchmark (conjugate gradient on a random sparse symmetric matrix
//! of order `n`, NPB 2), as an OpenMP reference pattern (see [`super::nas`]). Class A:
//! `n` = 14,000, nonzer = 11, 15 outer iterations of 25 CG steps; the matrix is sized as
//! NPB allocates it, (nonzer + 1)^2 entries a row (values `a` and column indices
//! `colidx`), with the vectors x, z, p, q and r.
//!
//! Per outer iteration each thread makes 25 passes over its own block of rows of `a`,
//! `colidx` and `rowstr` and its block of q, z, r and p (the matrix-vector product, the
//! dot products and the vector updates), reads all of `p` in each product (the only
//! remote data of a dedicated run), and updates its block of x once. Left out: the
//! matrix's random column pattern (the product reads all of p in order), the reductions'
//! synchronisation, the matrix generation and verification.

use super::nas::{constructs, nas_config, own, ArraySpec, KernelSpec, Sweep};

/// NPB's `nonzer` for class A: the random non-zeros a row of the matrix is built from.
const NONZER: u64 = 11;
/// Non-zeros a row, as NPB sizes the class A matrix: (nonzer + 1)^2.
const PER_ROW: u64 = (NONZER + 1) * (NONZER + 1);
/// CG steps per outer iteration (NPB's cgitmax).
const CG_STEPS: u32 = 25;

nas_config! {
    /// Parameters of `nas-cg`.
    NasCgConfig, kind "nas-cg",
    "NAS CG (OpenMP): sparse CG, own row blocks, every thread reads all of p (class A: order 14000, 15 iterations)",
    n: "Matrix order (rows). Default 14,000 (class A)." = 14_000 in 2 ..= 1_000_000_000,
    iterations: "Outer iterations (each 25 CG steps). Default 15 (class A)." = 15
}

impl NasCgConfig {
    /// The kernel's arrays and sweeps for these parameters.
    pub fn spec(&self) -> KernelSpec {
        let n = self.n;
        let rows = |name, bytes| ArraySpec {
            name,
            planes: n,
            plane_bytes: bytes,
            per_thread: false,
        };
        let arrays = vec![
            rows("a", PER_ROW * 8),
            rows("colidx", PER_ROW * 4),
            rows("rowstr", 4),
            rows("x", 8),
            rows("z", 8),
            rows("p", 8),
            rows("q", 8),
            rows("r", 8),
        ];
        // The outer iteration's parallel constructs (NPB 3.4-OMP `CG/cg.f90`: `conj_grad`'s
        // one region around its 25 steps, then the region that takes the norms and
        // updates x).
        let (sweeps, constructs) = constructs([
            (
                "conj_grad",
                vec![
                    own(0, false, CG_STEPS),
                    own(1, false, CG_STEPS),
                    own(2, false, CG_STEPS),
                    Sweep::All {
                        array: 5,
                        passes: CG_STEPS,
                    },
                    own(6, true, CG_STEPS),
                    own(4, true, CG_STEPS),
                    own(7, true, CG_STEPS),
                    own(5, true, CG_STEPS),
                ],
            ),
            ("norm", vec![own(3, true, 1)]),
        ]);
        KernelSpec {
            name: "nas-cg",
            arrays,
            sweeps,
            constructs,
            iterations: self.iterations,
            ops_per_iteration: ops_per_iteration(n),
        }
    }
}

/// Operations of one outer iteration (25 CG steps) on a matrix of order `n`, as CG counts
/// them for its Mop/s report (NPB 3.4-OMP, `CG/cg.f90`: 2 na (3 + nonzer (nonzer + 1) +
/// 25 (5 + nonzer (nonzer + 1)) + 3) per iteration, nonzer = 11).
pub fn ops_per_iteration(n: u64) -> f64 {
    let nz = (NONZER * (NONZER + 1)) as f64;
    2.0 * n as f64 * (3.0 + nz + 25.0 * (5.0 + nz) + 3.0)
}
