//! `nas-bt`: the NAS BT benchmark (block-tridiagonal ADI solver of the compressible
//! Navier-Stokes equations on an `n`^3 grid, NPB 2), as an OpenMP reference pattern (see
//! [`super::nas`]). Class A: `n` = 64, 200 iterations; its shared arrays (u, rhs, forcing
//! of five components, us, vs, ws, qs, rho_i, square of one) take 2,688 16 KB pages, and the
//! solvers' work arrays fjac, njac and lhs, threadprivate in NPB-OMP (`BT/work_lhs.f90`:
//! fjac and njac 5 x 5 x (n+1), lhs 5 x 5 x 3 x (n+1) doubles, 65,000 bytes a thread), are
//! a copy per thread: 2,817 pages with 32 threads, against the 3,056 resident pages
//! Nikolopoulos et al. (2002, Table 1) report (the program's other threadprivate data,
//! stacks and runtime are not modelled).
//!
//! Per iteration, five parallel constructs: `compute_rhs` over each thread's own k-planes
//! (u and forcing read, the six auxiliary arrays written, rhs updated by the three flux
//! differences); `x_solve` and `y_solve` over the same k-planes; `z_solve`, which NPB-OMP
//! parallelises over j, so each thread walks its rows of every k-plane (other threads'
//! pages: the remote accesses a dedicated run already has); `add` over own planes. Each
//! solve walks the thread's own work arrays once (their reuse from one grid line to the
//! next hits in the cache). Left out: the block-tridiagonal arithmetic itself (as
//! computation per line), boundary planes, setup and verification.

use super::nas::{across, constructs, grid, nas_config, own, per_thread, KernelSpec, Sweep};

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
        // Threadprivate work arrays: doubles of 5 x 5 x (n+1), 5 x 5 x (n+1), 5 x 5 x 3 x (n+1).
        let line = (n + 1) * 8;
        arrays.push(per_thread("fjac", 25 * line));
        arrays.push(per_thread("njac", 25 * line));
        arrays.push(per_thread("lhs", 75 * line));
        let (u, rhs, forcing) = (0, 1, 2);
        let work = [own(9, true, 1), own(10, true, 1), own(11, true, 1)];
        let mut compute_rhs = vec![own(u, false, 1)];
        compute_rhs.extend((3..9).map(|a| own(a, true, 1)));
        compute_rhs.extend([own(forcing, false, 1), own(rhs, true, 3)]);
        // x_solve, y_solve: own k-planes; z_solve: parallel over j. Each with the thread's
        // own work arrays.
        let solve = |sweep: fn(usize, bool, u32) -> Sweep| {
            let mut s = work.to_vec();
            s.extend([sweep(u, false, 1), sweep(rhs, true, 2)]);
            s
        };
        // The time step's parallel constructs (NPB 3.4-OMP `BT/adi.f90`: one region in
        // `rhs.f90`, a `parallel do` in each solver and in `add.f90`).
        let (sweeps, constructs) = constructs([
            ("compute_rhs", compute_rhs),
            ("x_solve", solve(own)),
            ("y_solve", solve(own)),
            ("z_solve", solve(across)),
            ("add", vec![own(u, true, 1), own(rhs, false, 1)]),
        ]);
        KernelSpec {
            name: "nas-bt",
            arrays,
            sweeps,
            constructs,
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
