//! Running the `numaplace` binary in the CLI tests.

#![allow(dead_code)] // each test file uses its own subset

use std::path::Path;
use std::process::{Command, Output};

/// Runs `numaplace ARGS` in the current directory.
pub fn numaplace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_numaplace"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Runs `numaplace ARGS` with `dir` as the current directory.
pub fn numaplace_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_numaplace"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Exit code 2, no panic, and every needle in standard error.
pub fn assert_user_error(o: &Output, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {e}");
    for n in needles {
        assert!(e.contains(n), "`{n}` not in: {e}");
    }
    assert!(!e.contains("panicked"), "{e}");
}
