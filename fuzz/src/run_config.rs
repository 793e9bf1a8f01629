//! Arbitrary text through run-configuration resolution, the resource estimate and, for
//! configurations small enough, the simulation itself.
//!
//! Besides "no panic, no hang, no huge allocation" (which the fuzzer checks), a
//! configuration that resolves must have an estimate, and a run the estimate admits
//! must either finish or fail with an error (never a panic).

use numaplace_harness::{admit, resolve_text, run_to_json, Limits, Overrides};

/// One input.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(cfg) = resolve_text("fuzz.toml", text, &Overrides::default()) else {
        return;
    };
    let limits = Limits {
        max_bytes: 256 << 20,
        bytes_source: "the fuzz limit".into(),
        max_ops: 200_000,
    };
    if admit(&cfg, &limits).is_ok() {
        let _ = run_to_json(&cfg);
    }
}
