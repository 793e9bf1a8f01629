//! Arbitrary text through run-configuration resolution, the resource estimate and, for
//! configurations small enough, the simulation itself.
//!
//! Besides "no panic, no hang, no huge allocation" (which the fuzzer checks), a
//! configuration that resolves must have an estimate, and a run the estimate admits
//! must either finish or fail with an error (never a panic).
//!
//! The estimate bounds the operations the programs issue, not the events a policy adds:
//! a daemon waking every microsecond (PLATINUM's defrost period may be that short) makes
//! millions of wake-ups in a run of a few simulated seconds, which is legitimate work,
//! not a hang. So an admitted run is stopped, through the engine's monitor, after
//! [`MAX_WORK`] operations and events (the statistics so far come back marked partial,
//! which exercises that path too). What the budget must not hide is a livelock: events
//! handled without simulated time moving on. The monitor panics on that, so the fuzzer
//! reports it as a crash.

use numaplace_core::{Monitor, Progress};
use numaplace_harness::{admit, resolve_text, run_to_json_monitored, Limits, Overrides};

/// Operations and events an admitted run may take before it is stopped.
pub const MAX_WORK: u64 = 300_000;

/// How often (in operations and events) the monitor looks at the run.
const POLL_EVERY: u64 = 10_000;

/// Polls in a row without simulated time moving on that count as a livelock: 200,000
/// operations and events at one instant, far more than a run's threads and daemons
/// have to do at any one time.
const STALLED_POLLS: u32 = 20;

/// Stops a run after [`MAX_WORK`]; panics when simulated time stalls.
#[derive(Default)]
struct Budget {
    last_now: Option<u64>,
    stalled: u32,
}

impl Monitor for Budget {
    fn progress(&mut self, p: Progress) -> bool {
        if self.last_now == Some(p.now.0) {
            self.stalled += 1;
            assert!(
                self.stalled < STALLED_POLLS,
                "simulated time stalled at {} ns: {} operations and {} events without it moving on",
                p.now.0,
                p.ops,
                p.events
            );
        } else {
            self.last_now = Some(p.now.0);
            self.stalled = 0;
        }
        p.ops + p.events < MAX_WORK
    }
}

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
        let _ = run_to_json_monitored(&cfg, Some((Box::new(Budget::default()), POLL_EVERY)));
    }
}
