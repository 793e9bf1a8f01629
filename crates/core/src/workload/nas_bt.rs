//! `nas-bt`: the NAS BT benchmark (block-tridiagonal ADI solver of the compressible
//! Navier-Stokes equations on an `n`^3 grid, NPB 2), as an OpenMP reference pattern (see
//! [`super::nas`]). Class A: `n` = 64, 200 iterations; its arrays (u, rhs, forcing of five
//! components, us, vs, ws, qs, rho_i, square of one, and the solvers' work arrays fjac,
//! njac and lhs counted as three more) take 3,072 16 KB pages, against the 3,056 resident
//! pages Nikolopoulos et al. (2002, Table 1) report.
//!
//! Per iteration: `compute_rhs` over each thread's own k-planes (u and forcing read, the
//! six auxiliary arrays written, rhs updated by the three flux differences); `x_solve` and
//! `y_solve` over the same k-planes; `z_solve`, which NPB-OMP parallelises over j, so each
//! thread walks its rows of every k-plane (other threads' pages: the remote accesses a
//! dedicated run already has); `add` over own planes. Left out: the block-tridiagonal
//! arithmetic itself (as computation per line), boundary planes, setup and verification.

use super::nas::{across, grid, nas_config, own, KernelSpec};

nas_config! {
    /// Parameters of `nas-bt`.
    NasBtConfig, kind "nas-bt",
    "NAS BT (OpenMP): ADI block-tridiagonal solver; own k-planes, z_solve across j (class A: 64^3, 200 iterations)",
    n: "Grid points per dimension. Default 64 (class A)." = 64 in 2 ..= 4096,
    iterations: "Outer (time-step) iterations. Default 200 (class A)." = 200
}

impl NasBtConfig {
    /// The kernel's arrays and sweeps for these parameters.
    pub fn spec(&self) -> KernelSpec {
        let n = self.n;
        let one = ["us", "vs", "ws", "qs", "rho_i", "square"];
        let mut arrays = vec![grid("u", n, 5), grid("rhs", n, 5), grid("forcing", n, 5)];
        arrays.extend(one.iter().map(|name| grid(name, n, 1)));
        arrays.push(grid("lhs", n, 3));
        let (u, rhs, forcing, lhs) = (0, 1, 2, 9);
        let mut sweeps = vec![own(u, false, 1)];
        sweeps.extend((3..9).map(|a| own(a, true, 1)));
        sweeps.extend([
            own(forcing, false, 1),
            own(rhs, true, 3),
            // x_solve, y_solve: own k-planes.
            own(lhs, true, 1),
            own(u, false, 1),
            own(rhs, true, 2),
            own(lhs, true, 1),
            own(u, false, 1),
            own(rhs, true, 2),
            // z_solve: parallel over j.
            across(lhs, true, 1),
            across(u, false, 1),
            across(rhs, true, 2),
            // add
            own(u, true, 1),
            own(rhs, false, 1),
        ]);
        KernelSpec {
            name: "nas-bt",
            arrays,
            sweeps,
            iterations: self.iterations,
            ops_per_iteration: ops_per_iteration(n),
        }
    }
}

/// Operations of one time step on an `n`^3 grid, as BT counts them for its Mop/s report
/// (NPB 3.4-OMP, `BT/bt.f90`: 3478.8 n^3 - 17655.7 n^2 + 28023.7 n per iteration, n the
/// mean grid dimension).
pub fn ops_per_iteration(n: u64) -> f64 {
    let n = n as f64;
    (3478.8 * n * n * n - 17655.7 * n * n + 28023.7 * n).max(0.0)
}
