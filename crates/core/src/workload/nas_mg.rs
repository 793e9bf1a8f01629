//! `nas-mg`: the NAS MG benchmark (V-cycle multigrid for a 3-D Poisson problem on an
//! `n`^3 grid, NPB 2), as an OpenMP reference pattern (see [`super::nas`]). Class A:
//! `n` = 256, 4 iterations. Arrays: v (finest level) and u and r at every level from `n`
//! down to 4 points a side, each level's planes distributed among the threads (coarse
//! levels have fewer planes than threads, so some threads idle there, as in NPB-OMP).
//!
//! Per iteration: the residual on the finest level; down the V-cycle, the restriction
//! (`rprj3`) of r to the next level; the smoother (`psinv`) on the coarsest; up the
//! cycle, interpolation (`interp`) of u, the residual and the smoother at each level.
//! Left out: the boundary exchange (`comm3`, a neighbour's boundary plane), the
//! arithmetic (as computation per line), setup and verification.

use super::nas::{constructs, grid, nas_config, own, KernelSpec};

/// Names of u and r at each level (finest first): 12 levels cover any grid allowed
/// (4096 points a side down to 4 is 11 levels).
const U: [&str; 12] = [
    "u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9", "u10", "u11",
];
const R: [&str; 12] = [
    "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11",
];

nas_config! {
    /// Parameters of `nas-mg`.
    NasMgConfig, kind "nas-mg",
    "NAS MG (OpenMP): V-cycle multigrid, every level over own planes (class A: 256^3, 4 iterations)",
    n: "Grid points per dimension, finest level. Default 256 (class A)." = 256 in 4 ..= 4096,
    iterations: "V-cycles. Default 4 (class A)." = 4
}

impl NasMgConfig {
    /// The kernel's arrays and sweeps for these parameters.
    pub fn spec(&self) -> KernelSpec {
        // Levels from n down to 4 points a side (at least one level).
        let mut sizes = vec![self.n];
        while sizes.len() < U.len() && sizes[sizes.len() - 1] / 2 >= 4 {
            sizes.push(sizes[sizes.len() - 1] / 2);
        }
        let levels = sizes.len();
        let mut arrays = vec![grid("v", self.n, 1)];
        for (l, &s) in sizes.iter().enumerate() {
            arrays.push(grid(U[l], s, 1));
            arrays.push(grid(R[l], s, 1));
        }
        let (u, r) = (|l: usize| 1 + 2 * l, |l: usize| 2 + 2 * l);
        // Each routine call a parallel construct (NPB 3.4-OMP `MG/mg.f90`: a `parallel do`
        // in `resid`, `rprj3`, `psinv` and `interp`); `zero3`'s and `comm3`'s regions are
        // left out with their sweeps.
        let mut list = vec![(
            "resid",
            vec![own(u(0), false, 1), own(0, false, 1), own(r(0), true, 1)],
        )];
        for l in 0..levels - 1 {
            list.push(("rprj3", vec![own(r(l), false, 1), own(r(l + 1), true, 1)]));
        }
        list.push((
            "psinv",
            vec![own(r(levels - 1), false, 1), own(u(levels - 1), true, 1)],
        ));
        for l in (0..levels - 1).rev() {
            list.push(("interp", vec![own(u(l + 1), false, 1), own(u(l), true, 1)]));
            list.push(("resid", vec![own(r(l), true, 1)]));
            list.push(("psinv", vec![own(u(l), true, 1)]));
        }
        let (sweeps, constructs) = constructs(list);
        KernelSpec {
            name: "nas-mg",
            arrays,
            sweeps,
            constructs,
            iterations: self.iterations,
            ops_per_iteration: ops_per_iteration(self.n),
        }
    }
}

/// Operations of one V-cycle with an `n`^3 finest grid, as MG counts them for its Mop/s
/// report (NPB 3.4-OMP, `MG/mg.f90`: 58 operations a finest-grid point per iteration).
pub fn ops_per_iteration(n: u64) -> f64 {
    58.0 * (n as f64).powi(3)
}
