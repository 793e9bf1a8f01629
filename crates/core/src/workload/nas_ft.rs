//! `nas-ft`: the NAS FT benchmark (3-D FFT solution of a PDE on an `n` x `n` x `n/2`
//! grid, NPB 2), as an OpenMP reference pattern (see [`super::nas`]). Class A: 256 x 256
//! x 128, 6 iterations. Arrays: u0 and u1 (complex, 16 bytes a point) and the twiddle
//! factors (8 bytes a point), split into `n/2` planes.
//!
//! Per iteration: `evolve` over own planes (u0 updated, u1 written, twiddle read); the
//! FFTs along the first two dimensions over own planes (one pass in and one out each);
//! the FFT along the third dimension, which NPB-OMP parallelises over the second index,
//! so each thread walks its rows of every plane (the transpose-like remote traffic).
//! Left out: the FFT's in-cache butterflies (as computation per line), the checksum,
//! setup and verification.

use super::nas::{constructs, nas_config, own, ArraySpec, KernelSpec, Sweep};

nas_config! {
    /// Parameters of `nas-ft`.
    NasFtConfig, kind "nas-ft",
    "NAS FT (OpenMP): 3-D FFT; two dimensions over own planes, the third across (class A: 256x256x128, 6 iterations)",
    n: "Points along the first two dimensions (the third has n/2). Default 256 (class A)." = 256 in 4 ..= 65_536,
    iterations: "Iterations. Default 6 (class A)." = 6
}

impl NasFtConfig {
    /// The kernel's arrays and sweeps for these parameters.
    pub fn spec(&self) -> KernelSpec {
        let (n, planes) = (self.n, self.n / 2);
        let plane = |name, bytes: u64| ArraySpec {
            name,
            planes,
            plane_bytes: n.saturating_mul(n).saturating_mul(bytes),
            per_thread: false,
        };
        let arrays = vec![plane("u0", 16), plane("u1", 16), plane("twiddle", 8)];
        // The time step's parallel constructs (NPB 3.4-OMP `FT/ft.f90`: `evolve`, then the
        // inverse FFT's `cffts3`, `cffts2`, `cffts1`, each a `parallel do`; `checksum`'s
        // region left out with its reads).
        let (sweeps, constructs) = constructs([
            (
                "evolve",
                vec![own(0, true, 1), own(2, false, 1), own(1, true, 1)],
            ),
            ("cffts1", vec![own(1, true, 2)]),
            ("cffts2", vec![own(1, true, 2)]),
            // cffts3: parallel over the second index
            (
                "cffts3",
                vec![Sweep::Across {
                    array: 1,
                    write: true,
                    passes: 2,
                }],
            ),
        ]);
        KernelSpec {
            name: "nas-ft",
            arrays,
            sweeps,
            constructs,
            iterations: self.iterations,
            ops_per_iteration: ops_per_iteration(n * n * planes),
        }
    }
}

/// Operations of one iteration on a grid of `points` points, as FT counts them for its
/// Mop/s report (NPB 3.4-OMP, `FT/ft.f90`: points x (5.23518 + 7.21113 ln points) per
/// iteration; the formula's once-only term, the initial forward FFT, is left out with the
/// setup).
pub fn ops_per_iteration(points: u64) -> f64 {
    let p = points as f64;
    (p * (5.23518 + 7.21113 * p.ln())).max(0.0)
}
