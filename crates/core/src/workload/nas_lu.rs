//! `nas-lu`: the NAS LU benchmark (SSOR solver with lower and upper triangular sweeps on
//! an `n`^3 grid, NPB 2), as an OpenMP reference pattern (see [`super::nas`]). Class A:
//! `n` = 64, 250 iterations. Arrays: u, rsd, frct (five components), qs, rho_i (one); the
//! work arrays flux (5 x n doubles) and a, b, c, d (5 x 5 x n), threadprivate in NPB-OMP
//! (`LU/lu_data.f90`), a copy per thread.
//!
//! Per iteration: the residual (`rhs`) over own k-planes; the lower (`jacld`, `blts`) and
//! upper (`jacu`, `buts`) sweeps, which NPB-OMP pipelines over k while splitting each
//! plane's j-rows among threads, so each thread walks its rows of every plane and its own
//! a, b, c, d; the update over own k-planes. Left out: the wavefront pipeline's synchronisation (each thread
//! walks its rows without waiting for its neighbour), the 5x5 block arithmetic (as
//! computation per line), setup and verification.

use super::nas::{across, constructs, grid, nas_config, own, per_thread, KernelSpec};

nas_config! {
    /// Parameters of `nas-lu`.
    NasLuConfig, kind "nas-lu",
    "NAS LU (OpenMP): SSOR, residual over own k-planes, triangular sweeps across j (class A: 64^3, 250 iterations)",
    n: "Grid points per dimension. Default 64 (class A)." = 64 in 2 ..= 4096,
    iterations: "SSOR iterations. Default 250 (class A)." = 250
}

impl NasLuConfig {
    /// The kernel's arrays and sweeps for these parameters.
    pub fn spec(&self) -> KernelSpec {
        let n = self.n;
        let arrays = vec![
            grid("u", n, 5),
            grid("rsd", n, 5),
            grid("frct", n, 5),
            grid("qs", n, 1),
            grid("rho_i", n, 1),
            // Threadprivate work arrays: flux of 5 x n doubles, a, b, c, d of 5 x 5 x n.
            per_thread("flux", 5 * n * 8),
            per_thread("a", 25 * n * 8),
            per_thread("b", 25 * n * 8),
            per_thread("c", 25 * n * 8),
            per_thread("d", 25 * n * 8),
        ];
        let (u, rsd, frct, qs, rho_i, flux) = (0, 1, 2, 3, 4, 5);
        let blocks = [
            own(6, true, 1),
            own(7, true, 1),
            own(8, true, 1),
            own(9, true, 1),
        ];
        let rhs = vec![
            own(u, false, 1),
            own(qs, true, 1),
            own(rho_i, true, 1),
            own(frct, false, 1),
            own(flux, true, 3),
            own(rsd, true, 3),
        ];
        // jacld + blts, jacu + buts: the rows of every plane, and the thread's own blocks.
        let mut ssor = Vec::new();
        for _ in 0..2 {
            ssor.extend([across(u, false, 1), across(rsd, true, 1)]);
            ssor.extend(blocks);
        }
        // update
        ssor.extend([own(u, true, 1), own(rsd, false, 1)]);
        // The time step's parallel constructs (NPB 3.4-OMP `LU/ssor.f90`: one region for
        // the lower and upper sweeps and the update, then `rhs`'s region; here `rhs` comes
        // first, the step's loop rotated; the norms' regions every `inorm` steps left out).
        let (sweeps, constructs) = constructs([("rhs", rhs), ("ssor", ssor)]);
        KernelSpec {
            name: "nas-lu",
            arrays,
            sweeps,
            constructs,
            iterations: self.iterations,
            ops_per_iteration: ops_per_iteration(n),
        }
    }
}

/// Operations of one SSOR iteration on an `n`^3 grid, as LU counts them for its Mop/s
/// report (NPB 3.4-OMP, `LU/lu.f90`: 1984.77 n^3 - 10923.3 n^2 + 27770.9 n - 144010 per
/// iteration; at least 0, which the formula falls below for tiny grids).
pub fn ops_per_iteration(n: u64) -> f64 {
    let n = n as f64;
    (1984.77 * n * n * n - 10923.3 * n * n + 27770.9 * n - 144010.0).max(0.0)
}
