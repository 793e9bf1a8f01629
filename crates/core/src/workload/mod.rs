//! Workloads: programs whose threads issue operations, generated lazily.
//!
//! A program is either fork-join (a [`LoopBody`](fork_join::LoopBody) driven by
//! [`ForkJoin`](fork_join::ForkJoin): each iteration's chunks, its memory affinity sets,
//! are dealt to the threads running at the start of the iteration, so a preempted
//! thread's chunk moves to another node) or free-running (it implements
//! [`Program`](crate::component::Program) directly). One file per workload; `emit` builds
//! reference runs, `fork_join` drives loop bodies, `common` holds what several share.

pub mod background;
pub mod backprop;
pub mod common;
pub mod emit;
pub mod fork_join;
pub mod gauss;
pub mod gups;
pub mod hh3d;
pub mod hough;
pub mod jacobi;
pub mod matvec;
pub mod matvec_sparse;
pub mod matvec_synthetic;
pub mod msort;
pub mod nas;
pub mod nas_bt;
pub mod nas_cg;
pub mod nas_ft;
pub mod nas_lu;
pub mod nas_mg;
pub mod nas_sp;
pub mod pair_rows;
pub mod psolu;
pub mod surface_wave;
pub mod wave;

pub use backprop::BackpropConfig;
pub use gauss::{GaussConfig, SizeRead};
pub use hh3d::Hh3dConfig;
pub use hough::HoughConfig;
pub use jacobi::{CheckerReads, JacobiConfig, PageLayout};
pub use matvec::MatvecConfig;
pub use matvec_sparse::{MatvecSparseConfig, SparseRows};
pub use matvec_synthetic::MatvecSyntheticConfig;
pub use msort::MsortConfig;
pub use psolu::{PsoluConfig, PsoluSetup, PsoluVariant};
pub use surface_wave::SurfaceWaveConfig;
pub use wave::WaveConfig;
