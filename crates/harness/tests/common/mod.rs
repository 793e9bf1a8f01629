//! Shared settings of the harness tests.

/// Settings that make workload `kind` small, with 8 threads so daemons find a processor.
pub fn small(kind: &str) -> Vec<String> {
    let sets: &[&str] = match kind {
        "matvec" | "jacobi" => &["workload.n=128", "workload.iterations=1"],
        "matvec-synthetic" => &["workload.n=64"],
        "matvec-sparse" => &["workload.matrix=\"pores-1\""],
        "surface-wave" => &["workload.total_ms=500"],
        "gauss" => &["workload.n=96"],
        "hough" => &["workload.n=64", "workload.angles=32"],
        "wave" => &["workload.n=64", "workload.steps=4"],
        "hh3d" => &["workload.n=16", "workload.steps=2"],
        "msort" => &["workload.n=4096"],
        "backprop" => &["workload.epochs=1"],
        "psolu" => &["workload.grid=16", "workload.tolerance_digits=3"],
        "nas-bt" | "nas-sp" | "nas-lu" | "nas-mg" => &["workload.n=16", "workload.iterations=2"],
        "nas-cg" => &["workload.n=512", "workload.iterations=1"],
        "nas-ft" => &["workload.n=32", "workload.iterations=1"],
        "background" => &["workload.jobs=2", "workload.bursts_per_job=3"],
        "gups" => &[
            "workload.updates=2000",
            "workload.working_set_bytes=1048576",
        ],
        // The committed recording of the repository's stencil (4 threads), relative to
        // this crate (where tests run), so the result does not depend on the checkout's
        // place; the default machine declares no clock.
        "trace" => &[
            "workload.path=\"../../recorder/fixtures/stencil-4.trace\"",
            "workload.clock_mhz=16",
        ],
        _ => &[],
    };
    let mut v: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    // A background load's thread count is its number of streams; a trace's, the recording's.
    if kind != "background" && kind != "trace" {
        v.push("workload.threads=8".into());
    }
    v
}
