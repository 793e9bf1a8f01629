//! The workspace's own crates: no import circle between a crate's top-level modules,
//! and, where a crate has a layer table, its modules keep to it.
//!
//! A failure lists each circle with every edge inside it and the first place in the
//! source that makes the edge; moving what one of those places names into a module
//! below both ends breaks that edge.

use numaplace_archcheck::ModuleGraph;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/archcheck is two levels below the workspace root")
        .to_path_buf()
}

fn graph_of(krate: &str) -> ModuleGraph {
    let src = workspace_root().join("crates").join(krate).join("src");
    ModuleGraph::of_crate(&src).unwrap_or_else(|e| panic!("crates/{krate}: {e}"))
}

/// A place in the source, relative to the workspace root.
fn shown(at: &numaplace_archcheck::Location) -> String {
    let root = workspace_root();
    let file = at.file.strip_prefix(&root).unwrap_or(&at.file);
    format!("{}:{}", file.display(), at.line)
}

fn assert_no_circle(krate: &str) {
    let graph = graph_of(krate);
    let cycles = graph.cycles();
    if cycles.is_empty() {
        return;
    }
    let mut message = format!("crates/{krate} has import circles between its modules:\n");
    for cycle in &cycles {
        writeln!(message, "\n  circle: {}", cycle.join(", ")).unwrap();
        for edge in graph.edges_among(cycle) {
            writeln!(
                message,
                "    {} -> {}  ({})",
                edge.from,
                edge.to,
                shown(&edge.at)
            )
            .unwrap();
        }
    }
    panic!("{message}");
}

fn assert_layers(krate: &str, layers: &[(&str, &[&str])]) {
    let graph = graph_of(krate);
    let violations = graph.check_layers(layers);
    if violations.is_empty() {
        return;
    }
    let mut message = format!("crates/{krate} breaks its layer table:\n");
    let root = format!("{}/", workspace_root().display());
    for violation in &violations {
        writeln!(message, "  {}", violation.to_string().replace(&root, "")).unwrap();
    }
    panic!("{message}");
}

/// Every crate under `crates/`, each checked by a test below.
const CRATES: &[&str] = &[
    "archcheck",
    "cli",
    "core",
    "derive",
    "harness",
    "oracle",
    "sparse",
    "study",
    "trace",
];

#[test]
fn every_crate_of_the_workspace_is_checked() {
    let mut found: Vec<String> = std::fs::read_dir(workspace_root().join("crates"))
        .expect("the crates directory")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.join("Cargo.toml").is_file())
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    found.sort();
    assert_eq!(found, CRATES, "a new crate needs its test here");
}

#[test]
fn core_has_no_import_circle() {
    assert_no_circle("core");
}

/// The core's layers, from the lowest up (ARCHITECTURE.md, "Layers of the core"): each
/// entry a layer's name and its top-level modules. A module may use its own layer and
/// lower ones only; every module must be placed, so a new module is placed here. The
/// engine and the implementations share a layer because both stand on the vocabulary
/// alone: neither may name the other ([`CORE_APART`]).
const CORE_LAYERS: &[(&str, &[&str])] = &[
    (
        "plain types",
        &[
            "types", "error", "fields", "bigvec", "registry", "tune", "estimate", "observe",
        ],
    ),
    (
        "machine",
        &["machine", "cache", "bandwidth", "stats", "breakeven"],
    ),
    ("mechanism", &["memory", "history", "mm"]),
    ("vocabulary of components", &["component"]),
    (
        "engine and implementations",
        &["engine", "policy", "workload", "sched"],
    ),
    ("configuration", &["config"]),
];

/// Modules of one layer that never use each other, in either direction: the engine runs
/// any program, policy and scheduler through the vocabulary, and they implement it
/// without naming the engine.
const CORE_APART: (&[&str], &[&str]) = (&["engine"], &["policy", "workload", "sched"]);

#[test]
fn core_layers() {
    assert_layers("core", CORE_LAYERS);
}

#[test]
fn core_engine_and_implementations_never_name_each_other() {
    let graph = graph_of("core");
    let (a, b) = CORE_APART;
    let crossing: Vec<String> = graph
        .edges()
        .iter()
        .filter(|e| {
            (a.contains(&e.from.as_str()) && b.contains(&e.to.as_str()))
                || (b.contains(&e.from.as_str()) && a.contains(&e.to.as_str()))
        })
        .map(|e| format!("  {} -> {}  ({})", e.from, e.to, shown(&e.at)))
        .collect();
    assert!(
        crossing.is_empty(),
        "the engine and the implementations name each other:\n{}",
        crossing.join("\n")
    );
}

#[test]
fn derive_has_no_import_circle() {
    assert_no_circle("derive");
}

#[test]
fn harness_has_no_import_circle() {
    assert_no_circle("harness");
}

#[test]
fn cli_has_no_import_circle() {
    assert_no_circle("cli");
}

#[test]
fn study_has_no_import_circle() {
    assert_no_circle("study");
}

#[test]
fn sparse_has_no_import_circle() {
    assert_no_circle("sparse");
}

#[test]
fn oracle_has_no_import_circle() {
    assert_no_circle("oracle");
}

#[test]
fn trace_has_no_import_circle() {
    assert_no_circle("trace");
}

/// The trace crate's layers (ARCHITECTURE.md, "Crates"): the format and its errors, the
/// reader and writer on them, the sources that write traces, the workload that reads one.
const TRACE_LAYERS: &[(&str, &[&str])] = &[
    ("format", &["error", "format"]),
    ("reading and writing", &["read", "write"]),
    ("sources", &["raw", "lackey"]),
    ("replay", &["workload"]),
];

#[test]
fn trace_layers() {
    assert_layers("trace", TRACE_LAYERS);
}

#[test]
fn archcheck_has_no_import_circle() {
    assert_no_circle("archcheck");
}

#[test]
fn archcheck_layers() {
    assert_layers(
        "archcheck",
        &[
            ("places", &["location"]),
            ("errors", &["error"]),
            ("reading", &["scan"]),
            ("graph", &["graph"]),
            ("checks", &["layers"]),
        ],
    );
}

/// The workspace's crates of numaplace itself named in `manifest`'s `[dependencies]`.
fn numaplace_dependencies(manifest: &Path) -> Vec<String> {
    let text =
        std::fs::read_to_string(manifest).unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    let mut in_deps = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
            continue;
        }
        if in_deps && line.starts_with("numaplace") {
            let name = line.split(['=', ' ', '.']).next().unwrap_or("");
            out.push(name.to_string());
        }
    }
    out.sort();
    out
}

/// The Python binding (`python/`, outside `crates/`): a layer over the harness and the
/// study crate (ARCHITECTURE.md, "Crates"), which no crate depends on, its module graph
/// checked like the crates'.
#[test]
fn the_python_binding_stands_on_core_harness_and_study_and_nothing_stands_on_it() {
    let root = workspace_root();
    assert_eq!(
        numaplace_dependencies(&root.join("python/Cargo.toml")),
        ["numaplace-core", "numaplace-harness", "numaplace-study"],
        "python/Cargo.toml: the binding depends on the core, the harness and the study crate only"
    );
    for krate in CRATES {
        let deps = numaplace_dependencies(&root.join("crates").join(krate).join("Cargo.toml"));
        assert!(
            !deps.iter().any(|d| d == "numaplace-python"),
            "crates/{krate} depends on the Python binding"
        );
    }
    let graph =
        ModuleGraph::of_crate(root.join("python/src")).unwrap_or_else(|e| panic!("python: {e}"));
    assert!(graph.cycles().is_empty(), "python/src has import circles");
}
