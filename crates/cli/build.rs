//! Builds the `experiments/` tree into the binary, so that `numaplace reproduce` finds
//! the papers from any directory after `cargo install`. Every `.toml` file under the
//! workspace's `experiments/` directory becomes an entry of `BUILTIN_EXPERIMENTS` in
//! `$OUT_DIR/experiments.rs`: (path relative to `experiments/` with `/` separators, text).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, rel: &str, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        let rel_name = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if path.is_dir() {
            collect(&path, &rel_name, out);
        } else if name.ends_with(".toml") {
            out.push((rel_name, path));
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest.join("../../experiments");
    // A directory here makes cargo rerun this script when anything inside it changes.
    println!("cargo:rerun-if-changed=../../experiments");
    println!("cargo:rerun-if-changed=build.rs");
    let mut files = Vec::new();
    collect(&root, "", &mut files);
    let mut code = String::from(
        "/// The `experiments/` tree built into the binary: (path, text) pairs.\n\
         static BUILTIN_EXPERIMENTS: &[(&str, &str)] = &[\n",
    );
    for (rel, path) in &files {
        let abs = path.canonicalize().unwrap_or_else(|_| path.clone());
        let _ = writeln!(
            code,
            "    ({rel:?}, include_str!({:?})),",
            abs.display().to_string()
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    std::fs::write(out.join("experiments.rs"), code).expect("OUT_DIR is writable");
}
