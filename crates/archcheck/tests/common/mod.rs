//! Small crates written to a temporary directory for the tests.

use std::path::Path;
use tempfile::TempDir;

/// A crate's source directory holding `files` (path inside `src/`, text).
pub fn source(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().expect("temporary directory");
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().expect("a file has a parent"))
            .expect("create directory");
        std::fs::write(&path, text).expect("write source file");
    }
    dir
}

/// The graph's edges as `from -> to @ file:line`, files relative to `dir`.
#[allow(dead_code)] // Each test binary uses its own part of this module.
pub fn edges(graph: &numaplace_archcheck::ModuleGraph, dir: &Path) -> Vec<String> {
    graph
        .edges()
        .iter()
        .map(|e| {
            let file = e.at.file.strip_prefix(dir).unwrap_or(&e.at.file);
            format!("{} -> {} @ {}:{}", e.from, e.to, file.display(), e.at.line)
        })
        .collect()
}
