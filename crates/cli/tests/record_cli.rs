//! `numaplace record` end to end: the recorder built by its setup script, a real OpenMP
//! program compiled here, recorded under Valgrind, replayed under policies and the oracle;
//! the recorded reference count against an independent count (Valgrind's lackey); and
//! damaged traces refused with their byte offset.

mod common;
use common::{assert_user_error, numaplace, numaplace_in, stdout};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds the recorder once (Valgrind's tool kit and gcc are needed; the setup script
/// says what to install where they are missing).
fn recorder() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let o = Command::new(root().join("scripts/setup-recorder"))
                .output()
                .expect("scripts/setup-recorder runs");
            assert!(
                o.status.success(),
                "scripts/setup-recorder failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            root().join("target/recorder")
        })
        .clone()
}

fn record(dir: &Path, out: &str, env: &[(&str, &str)], command: &[&str]) -> String {
    let lib = recorder().join("lib");
    let mut args = vec!["record", "--out", out, "--recorder"];
    let lib_text = lib.display().to_string();
    args.push(&lib_text);
    args.push("--");
    args.extend(command);
    let o = Command::new(env!("CARGO_BIN_EXE_numaplace"))
        .current_dir(dir)
        .envs(env.iter().copied())
        .args(&args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    stdout(&o)
}

/// A number after `word` in `text` ("3492373 references" -> 3492373).
fn number_before(text: &str, word: &str) -> u64 {
    let i = text
        .find(word)
        .unwrap_or_else(|| panic!("`{word}` not in {text}"));
    text[..i]
        .trim_end()
        .rsplit(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// `numaplace run` replaying `trace` (in `dir`) on `machine`, with more arguments.
fn replay(dir: &Path, trace: &str, machine: &str, more: &[&str]) -> std::process::Output {
    let path = format!("workload.path={trace:?}");
    let mut args = vec![
        "run",
        "--workload",
        "trace",
        "--set",
        &path,
        "--machine",
        machine,
    ];
    args.extend(more);
    numaplace_in(dir, &args)
}

const OPENMP: &str = r#"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = 20000;
    double *x = malloc(n * sizeof *x), sum = 0;
    #pragma omp parallel
    {
        #pragma omp for schedule(static)
        for (long i = 0; i < n; i++) x[i] = i;
        #pragma omp for schedule(static) reduction(+:sum)
        for (long i = 0; i < n; i++) sum += x[(i * 7) % n];
        #pragma omp critical
        sum += 1;
        #pragma omp barrier
    }
    printf("%.0f\n", sum);
    return 0;
}
"#;

#[test]
fn an_openmp_program_compiled_here_is_recorded_and_replayed_under_policies_and_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("omp.c"), OPENMP).unwrap();
    let cc = Command::new("gcc")
        .current_dir(dir.path())
        .args(["-O1", "-fopenmp", "-o", "omp", "omp.c"])
        .status()
        .expect("gcc runs");
    assert!(cc.success());
    let text = record(
        dir.path(),
        "t.trace",
        &[("OMP_NUM_THREADS", "4")],
        &["./omp"],
    );
    assert!(text.contains("4 threads"), "{text}");
    let refs = number_before(&text, "references");
    let path = "workload.path=\"t.trace\"";
    for policy in ["static", "platinum", "sched-activated"] {
        let o = replay(
            dir.path(),
            "t.trace",
            "origin2000",
            &["--policy", policy, "--json", "-"],
        );
        assert!(o.status.success(), "{policy}: {}", common::stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["trace_references"].as_u64(), Some(refs), "{policy}");
    }
    let o = numaplace_in(
        dir.path(),
        &[
            "oracle",
            "--workload",
            "trace",
            "--set",
            path,
            "--machine",
            "origin2000",
            "--policy",
            "static",
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(stdout(&o).contains("regret"), "{}", stdout(&o));
}

/// References (total, reads) the recorder and lackey count for `count 2000 ITERS`.
fn counts(dir: &Path, iters: &str) -> ((u64, u64), (u64, u64)) {
    let count = recorder().join("bin/count");
    let count = count.to_str().unwrap();
    let lib = recorder().join("lib").canonicalize().unwrap();
    let text = record(dir, "c.trace", &[], &[count, "2000", iters]);
    let ours = (
        number_before(&text, "references"),
        number_before(&text, "read,"),
    );
    // Lackey with our preload library loaded too, so the dynamic loader does the same work.
    let log = dir.join("lackey.txt");
    let o = Command::new("valgrind")
        .env("VALGRIND_LIB", &lib)
        .env("LD_PRELOAD", lib.join("vgpreload_numaplace-amd64-linux.so"))
        .args(["-q", "--tool=lackey", "--trace-mem=yes"])
        .arg(format!("--log-file={}", log.display()))
        .args([count, "2000", iters])
        .output()
        .unwrap();
    assert!(o.status.success());
    let (mut l, mut s, mut m) = (0u64, 0u64, 0u64);
    for line in std::fs::read_to_string(&log).unwrap().lines() {
        match line.get(..2) {
            Some(" L") => l += 1,
            Some(" S") => s += 1,
            Some(" M") => m += 1,
            _ => {}
        }
    }
    (ours, (l + s + 2 * m, l + m))
}

#[test]
fn a_recorded_programs_reference_count_matches_valgrind_lackeys_count() {
    // Start-up (the dynamic loader, the C library reading its environment) makes a few
    // hundred references that depend on the environment each tool runs the program in;
    // the program's own work is the difference between two sizes (10 and 15 sweeps,
    // whose printed numbers have as many digits): 5 more sweeps of 2,000 words, each
    // word one load and one store, in both counts.
    let dir = tempfile::tempdir().unwrap();
    let (ours10, lackey10) = counts(dir.path(), "10");
    let (ours15, lackey15) = counts(dir.path(), "15");
    let ours = (ours15.0 - ours10.0, ours15.1 - ours10.1);
    let lackey = (lackey15.0 - lackey10.0, lackey15.1 - lackey10.1);
    assert_eq!(ours, lackey);
    assert_eq!(ours, (20_000, 10_000));
}

#[test]
fn a_truncated_trace_is_refused_naming_the_byte_offset() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = root().join("recorder/fixtures/stencil-4.trace");
    let bytes = std::fs::read(fixture).unwrap();
    std::fs::write(dir.path().join("cut.trace"), &bytes[..bytes.len() / 2]).unwrap();
    let o = replay(dir.path(), "cut.trace", "origin2000", &[]);
    assert_user_error(&o, &["cut.trace", "byte offset", "truncated"]);
}

#[test]
fn a_corrupt_batch_is_refused_naming_its_byte_offset() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = root().join("recorder/fixtures/prodcons-2x2.trace");
    let mut bytes = std::fs::read(fixture).unwrap();
    // Damage the middle of the first batch's compressed body.
    for b in &mut bytes[2000..2064] {
        *b = !*b;
    }
    std::fs::write(dir.path().join("bad.trace"), &bytes).unwrap();
    let o = replay(dir.path(), "bad.trace", "epyc-2s", &[]);
    assert_user_error(&o, &["bad.trace", "byte offset", "batch"]);
}

#[test]
fn record_without_a_program_is_a_usage_error() {
    let o = numaplace(&["record", "--out", "x.trace"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn record_refuses_a_page_size_that_is_not_a_power_of_two() {
    let dir = tempfile::tempdir().unwrap();
    let o = numaplace_in(
        dir.path(),
        &[
            "record",
            "--out",
            "x.trace",
            "--page-size",
            "5000",
            "--",
            "true",
        ],
    );
    assert_user_error(&o, &["--page-size 5000"]);
}

#[test]
fn a_lackey_log_is_imported_and_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let log = root().join("recorder/fixtures/lackey-count.txt");
    let o = numaplace_in(
        dir.path(),
        &[
            "import",
            "--format",
            "lackey",
            "--out",
            "l.trace",
            log.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(stdout(&o).contains("813 references"), "{}", stdout(&o));
    let o = replay(dir.path(), "l.trace", "epyc-2s", &["--json", "-"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["trace_references"].as_u64(), Some(813));
}

#[test]
fn a_lackey_log_with_a_bad_line_is_refused_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.txt"), "I  0400,3\n L 1000,zz\n").unwrap();
    let o = numaplace_in(
        dir.path(),
        &[
            "import", "--format", "lackey", "--out", "b.trace", "bad.txt",
        ],
    );
    assert_user_error(&o, &["bad.txt:2:", "not a size"]);
    assert!(!dir.path().join("b.trace").exists());
}
