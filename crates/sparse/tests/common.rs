//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// Path of a file in the crate's `testdata` directory.
pub fn testdata(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(file)
}

/// Contents of a test file.
pub fn read(file: &str) -> String {
    std::fs::read_to_string(testdata(file)).expect("test file readable")
}

/// `text` with its 1-based line `line` replaced by `f(old line)`.
pub fn edit_line(text: &str, line: usize, f: impl FnOnce(&str) -> String) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[line - 1] = f(&lines[line - 1]);
    lines.join("\n") + "\n"
}

/// `text` without its last `n` lines.
pub fn drop_last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[..lines.len() - n].join("\n") + "\n"
}

/// Replaces columns `from..to` (1-based, inclusive) of `line` by `with`.
pub fn replace_columns(line: &str, from: usize, to: usize, with: &str) -> String {
    assert_eq!(with.len(), to - from + 1);
    format!("{}{}{}", &line[..from - 1], with, &line[to..])
}
