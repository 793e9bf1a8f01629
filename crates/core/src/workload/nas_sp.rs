//! `nas-sp`: the NAS SP benchmark (scalar-pentadiagonal ADI solver on an `n`^3 grid, NPB
//! 2), as an OpenMP reference pattern (see [`super::nas`]). Class A: `n` = 64, 400
//! iterations. Arrays: u, rhs, forcing (five components), us, vs, ws, qs, rho_i, speed,
//! square (one); the solvers' work arrays lhs, lhsp, lhsm (5 x (n+1) doubles), cv and rhov
//! (n doubles), threadprivate in NPB-OMP (`SP/work_lhs.f90`), a copy per thread.
//!
//! Per iteration: `compute_rhs` over own k-planes; `txinvr`; `x_solve` and `ninvr`,
//! `y_solve` and `pinvr` over own k-planes; `z_solve` and `tzetar` parallel over j (each
//! thread's rows of every plane); `add`. Each solve walks the thread's own work arrays
//! once (their reuse from one grid line to the next hits in the cache). Left out: the arithmetic (as computation per
//! line), boundaries, setup and verification.

use super::nas::{across, constructs, grid, nas_config, own, per_thread, KernelSpec, Sweep};

nas_config! {
    /// Parameters of `nas-sp`.
    NasSpConfig, kind "nas-sp",
    "NAS SP (OpenMP): ADI scalar-pentadiagonal solver; own k-planes, z_solve across j (class A: 64^3, 400 iterations)",
    n: "Grid points per dimension. Default 64 (class A)." = 64 in 2 ..= 4096,
    iterations: "Outer (time-step) iterations. Default 400 (class A)." = 400
}

impl NasSpConfig {
    /// The kernel's arrays and sweeps for these parameters.
    pub fn spec(&self) -> KernelSpec {
        let n = self.n;
        let one = ["us", "vs", "ws", "qs", "rho_i", "speed", "square"];
        let mut arrays = vec![grid("u", n, 5), grid("rhs", n, 5), grid("forcing", n, 5)];
        arrays.extend(one.iter().map(|name| grid(name, n, 1)));
        // Threadprivate work arrays: lhs, lhsp, lhsm of 5 x (IMAXP+1) doubles (IMAXP = n/2*2),
        // cv and rhov of n.
        let pent = 5 * (n / 2 * 2 + 1) * 8;
        for name in ["lhs", "lhsp", "lhsm"] {
            arrays.push(per_thread(name, pent));
        }
        arrays.push(per_thread("cv", n * 8));
        arrays.push(per_thread("rhov", n * 8));
        let (u, rhs, forcing) = (0, 1, 2);
        let work: Vec<_> = (10..15).map(|a| own(a, true, 1)).collect();
        let mut compute_rhs = vec![own(u, false, 1)];
        compute_rhs.extend((3..10).map(|a| own(a, true, 1)));
        compute_rhs.extend([own(forcing, false, 1), own(rhs, true, 3)]);
        // x_solve, y_solve: own k-planes; z_solve: parallel over j. Each with the thread's
        // own work arrays, two passes over rhs, and one more in the inversion after it
        // (ninvr, pinvr, tzetar; tzetar reads u).
        let solve = |sweep: fn(usize, bool, u32) -> Sweep| {
            let mut s = work.clone();
            s.push(sweep(rhs, true, 2));
            s
        };
        // The time step's parallel constructs (NPB 3.4-OMP `SP/adi.f90`: `compute_rhs`,
        // `txinvr`, each solver and the inversion it calls, `add`; one region each).
        let (sweeps, constructs) = constructs([
            ("compute_rhs", compute_rhs),
            ("txinvr", vec![own(rhs, true, 1)]),
            ("x_solve", solve(own)),
            ("ninvr", vec![own(rhs, true, 1)]),
            ("y_solve", solve(own)),
            ("pinvr", vec![own(rhs, true, 1)]),
            ("z_solve", solve(across)),
            ("tzetar", vec![across(rhs, true, 1), across(u, false, 1)]),
            ("add", vec![own(u, true, 1), own(rhs, false, 1)]),
        ]);
        KernelSpec {
            name: "nas-sp",
            arrays,
            sweeps,
            constructs,
            iterations: self.iterations,
            ops_per_iteration: ops_per_iteration(n),
        }
    }
}

/// Operations of one time step on an `n`^3 grid, as SP counts them for its Mop/s report
/// (NPB 3.4-OMP, `SP/sp.f90`: 881.174 n^3 - 4683.91 n^2 + 11484.5 n - 19272.4 per
/// iteration; at least 0, which the formula falls below for tiny grids).
pub fn ops_per_iteration(n: u64) -> f64 {
    let n = n as f64;
    (881.174 * n * n * n - 4683.91 * n * n + 11484.5 * n - 19272.4).max(0.0)
}
