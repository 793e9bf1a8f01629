//! Golden snapshots: a fixed set of runs must give the same results, bit for bit, as the
//! snapshots committed in `tests/golden/`.
//!
//! - `runs.txt`: every workload x policy pair at a small size on the default machine, one
//!   line per pair with its headline numbers and a SHA-256 digest of the whole JSON
//!   result (per-page report and series included), so any change anywhere shows.
//! - `reproduce-PAPER.md` and `reproduce-PAPER.txt`: each built-in paper's quick
//!   reproduction: the report as printed, and per run its makespan and the digest of
//!   its result.
//!
//! A change that is meant to alter results regenerates the snapshots in the same commit
//! and says why in its message:
//!
//! ```sh
//! NUMAPLACE_BLESS=1 cargo test -p numaplace-harness --test golden
//! ```

use numaplace_core::component::WorkloadConfig;
use numaplace_core::PolicyConfig;
use numaplace_harness::{resolve, run_to_json, Overrides, SimRunner};
use numaplace_study::reproduce::{reproduce_from, Experiments, ReproduceOptions};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt::Write;
use std::path::PathBuf;

mod common;
use common::small;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The first 16 hex digits of the SHA-256 of `v`'s JSON text (keys in a fixed order).
fn digest(v: &Value) -> String {
    let text = serde_json::to_string(v).expect("a result serializes");
    let d = Sha256::digest(text.as_bytes());
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Compares `actual` with the snapshot `name`, or writes it with `NUMAPLACE_BLESS=1`.
/// On a mismatch the message shows the first differing lines.
fn check(name: &str, actual: &str) {
    let path = golden_dir().join(name);
    if std::env::var_os("NUMAPLACE_BLESS").is_some() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; create it with NUMAPLACE_BLESS=1 cargo test -p numaplace-harness --test golden",
            path.display()
        )
    });
    if expected != actual {
        let diff: Vec<String> = expected
            .lines()
            .zip(actual.lines())
            .filter(|(e, a)| e != a)
            .take(8)
            .map(|(e, a)| format!("  snapshot: {e}\n  now:      {a}"))
            .collect();
        panic!(
            "{} differs from the results ({} vs {} lines); first differences:\n{}\n\
             If the change is intended, regenerate with NUMAPLACE_BLESS=1 and say why in the commit.",
            path.display(),
            expected.lines().count(),
            actual.lines().count(),
            diff.join("\n")
        );
    }
}

fn metric(v: &Value, path: &str) -> String {
    path.split('.')
        .try_fold(v, |v, k| v.get(k))
        .map(|v| v.to_string())
        .unwrap_or_else(|| "-".into())
}

#[test]
fn every_workload_and_policy_pair_gives_its_snapshot_results() {
    let mut out = String::from(
        "# workload policy makespan_ns refs.local refs.remote faults migrations replications digest\n",
    );
    for w in WorkloadConfig::all() {
        for p in PolicyConfig::all() {
            let ov = Overrides {
                workload: Some(w.kind().to_string()),
                policy: Some(p.kind().to_string()),
                seed: Some(1),
                sets: small(w.kind()),
                ..Default::default()
            };
            // A policy that does not apply to the machine (tiering on one tier) refuses
            // it, and the snapshot says so.
            let r = match resolve(None, &ov)
                .map_err(|e| e.to_string())
                .and_then(|cfg| run_to_json(&cfg).map_err(|e| e.to_string()))
            {
                Ok(out) => out.json,
                Err(e) if e.contains("needs a slow tier") => {
                    writeln!(out, "{} {} refused", w.kind(), p.kind()).unwrap();
                    continue;
                }
                Err(e) => panic!("{}/{}: {e}", w.kind(), p.kind()),
            };
            let cols: Vec<String> = [
                "makespan_ns",
                "refs.local",
                "refs.remote",
                "faults",
                "migrations",
                "replications",
            ]
            .iter()
            .map(|m| metric(&r, m))
            .collect();
            writeln!(
                out,
                "{} {} {} {}",
                w.kind(),
                p.kind(),
                cols.join(" "),
                digest(&r)
            )
            .unwrap();
        }
    }
    check("runs.txt", &out);
}

/// Runs a built-in paper's quick reproduction into a scratch directory; returns the
/// report and one line per run.
fn quick_reproduction(paper: &str) -> (String, String) {
    let out_dir = std::env::temp_dir()
        .join(format!("numaplace-golden-{}", std::process::id()))
        .join(paper);
    let _ = std::fs::remove_dir_all(&out_dir);
    let experiments = Experiments::Dir(root().join("experiments"));
    let source = experiments.paper(paper).unwrap();
    let opts = ReproduceOptions {
        quick: true,
        no_fail: true,
        jobs: 2,
        ..ReproduceOptions::new(out_dir.clone())
    };
    let rep = reproduce_from(&source, &SimRunner::default(), &opts).unwrap();
    let mut runs = String::from("# study id makespan_ns digest\n");
    let mut files: Vec<PathBuf> = std::fs::read_dir(out_dir.join(paper))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    for f in files {
        let study = f
            .file_name()
            .unwrap()
            .to_string_lossy()
            .trim_end_matches(".quick.jsonl")
            .to_string();
        let mut records: Vec<Value> = std::fs::read_to_string(&f)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        records.sort_by_key(|r| r["index"].as_u64());
        for r in records {
            writeln!(
                runs,
                "{study} {} {} {}",
                r["id"].as_str().unwrap_or("?"),
                metric(&r["result"], "makespan_ns"),
                digest(&r["result"])
            )
            .unwrap();
        }
    }
    let _ = std::fs::remove_dir_all(&out_dir);
    // The report names its output files; the scratch directory is not part of the result.
    let report = rep
        .render_markdown()
        .replace(&out_dir.display().to_string(), "results");
    (report, runs)
}

fn paper_snapshot(paper: &str) {
    let (report, runs) = quick_reproduction(paper);
    check(&format!("reproduce-{paper}.md"), &report);
    check(&format!("reproduce-{paper}.txt"), &runs);
}

#[test]
fn numa_basics_quick_reproduction_gives_its_snapshot() {
    paper_snapshot("numa-basics");
}

#[test]
fn holliday89_quick_reproduction_gives_its_snapshot() {
    paper_snapshot("holliday89");
}

#[test]
fn platinum89_quick_reproduction_gives_its_snapshot() {
    paper_snapshot("platinum89");
}

#[test]
fn dunx91_quick_reproduction_gives_its_snapshot() {
    paper_snapshot("dunx91");
}

#[test]
fn nikolopoulos02_quick_reproduction_gives_its_snapshot() {
    paper_snapshot("nikolopoulos02");
}

#[test]
fn larowe91_quick_reproduction_gives_its_snapshot() {
    paper_snapshot("larowe91");
}

#[test]
fn tiering_quick_reproduction_gives_its_snapshot() {
    paper_snapshot("tiering");
}
