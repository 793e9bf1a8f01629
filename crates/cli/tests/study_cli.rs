//! `numaplace sweep`, `report` and `reproduce` as a user meets them: specs resolved
//! before anything runs, size limits, bounded records, checked report options, output
//! independent of `--jobs`, and the built-in papers from any directory.

use std::path::{Path, PathBuf};

mod common;

use common::{assert_user_error, numaplace_in, stderr, stdout};
use std::time::{Duration, Instant};

/// A fresh, empty directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("numaplace-study-cli-{}", std::process::id()))
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const SMALL_SPEC: &str = r#"name = "small"
trials = 3
[base.workload]
kind = "jacobi"
n = 64
iterations = 2
[[axis]]
field = "machine.nodes"
values = [2, 4]
[[axis]]
field = "machine.costs.remote_read_ns"
values = [1000, 2000, 3000]
"#;

/// Writes the small spec into `dir` and sweeps it into `small.jsonl`.
fn small_results(dir: &Path) -> PathBuf {
    std::fs::write(dir.join("small.toml"), SMALL_SPEC).unwrap();
    let o = numaplace_in(dir, &["sweep", "small.toml", "--jobs", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    dir.join("small.jsonl")
}

fn records(path: &Path) -> Vec<serde_json::Value> {
    let mut v: Vec<serde_json::Value> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    v.sort_by_key(|r| r["index"].as_u64());
    v
}

#[test]
fn sweep_with_a_typo_in_the_last_axis_value_fails_before_any_run() {
    let dir = scratch("typo-last-value");
    let spec = SMALL_SPEC.to_string()
        + "[[axis]]\nfield = \"policy.placement\"\nvalues = [\"program\", \"progrm\"]\n";
    std::fs::write(dir.join("typo.toml"), spec).unwrap();
    let o = numaplace_in(&dir, &["sweep", "typo.toml", "--out", "typo.jsonl"]);
    assert_user_error(
        &o,
        &[
            "typo.toml",
            "run r000003",
            "policy.placement = \"progrm\"",
            "unknown variant `progrm`",
            "nothing was run",
        ],
    );
    assert!(!dir.join("typo.jsonl").exists(), "no results file is made");
}

#[test]
fn sweep_with_a_point_too_large_for_the_memory_limit_fails_before_any_run() {
    let dir = scratch("too-large-point");
    let spec = SMALL_SPEC.to_string() + "[[axis]]\nfield = \"workload.n\"\nvalues = [64, 1024]\n";
    std::fs::write(dir.join("big.toml"), spec).unwrap();
    let o = numaplace_in(
        &dir,
        &[
            "sweep",
            "big.toml",
            "--out",
            "big.jsonl",
            "--jobs",
            "1",
            "--max-memory",
            "3MB",
        ],
    );
    assert_user_error(
        &o,
        &[
            "workload.n",
            "the run needs about",
            "--max-memory",
            "nothing was run",
        ],
    );
    assert!(!dir.join("big.jsonl").exists(), "no results file is made");
}

#[test]
fn sweep_with_an_unknown_spec_field_names_the_file_field_and_line() {
    let dir = scratch("unknown-spec-field");
    let spec = SMALL_SPEC.replace(
        "[base.workload]",
        "[output]\nmetrc = \"x\"\n[base.workload]",
    );
    std::fs::write(dir.join("bad.toml"), spec).unwrap();
    let o = numaplace_in(&dir, &["sweep", "bad.toml"]);
    assert_user_error(&o, &["bad.toml", "output.metrc", "line 4"]);
}

#[test]
fn sweep_over_the_run_limit_is_refused_at_once_with_a_hint_to_force() {
    let dir = scratch("run-limit");
    // 9 million runs: expanding them used to take more than 8 GB.
    let spec = r#"name = "huge"
trials = 18
[base.workload]
kind = "jacobi"
[[axis]]
field = "machine.costs.remote_read_ns"
range = { from = 1, to = 100000, step = 1 }
[[axis]]
field = "policy.placement"
values = ["first-touch", "round-robin", "fixed", "program", "progrm"]
"#;
    std::fs::write(dir.join("huge.toml"), spec).unwrap();
    let start = Instant::now();
    let o = numaplace_in(&dir, &["sweep", "huge.toml"]);
    let took = start.elapsed();
    assert_user_error(
        &o,
        &[
            "huge.toml",
            "9000000 runs",
            "100000 values of machine.costs.remote_read_ns",
            "limit of 100000",
            "--force",
        ],
    );
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert!(!dir.join("huge.jsonl").exists());
}

#[test]
fn sweep_with_force_runs_past_max_runs() {
    let dir = scratch("force");
    std::fs::write(dir.join("small.toml"), SMALL_SPEC).unwrap();
    let o = numaplace_in(&dir, &["sweep", "small.toml", "--max-runs", "17"]);
    assert_user_error(&o, &["18 runs", "limit of 17"]);
    let o = numaplace_in(
        &dir,
        &["sweep", "small.toml", "--max-runs", "17", "--force"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(records(&dir.join("small.jsonl")).len(), 18);
}

#[test]
fn sweep_summary_and_sorted_records_are_identical_for_one_and_two_jobs() {
    let dir = scratch("jobs");
    std::fs::write(dir.join("small.toml"), SMALL_SPEC).unwrap();
    let one = numaplace_in(
        &dir,
        &["sweep", "small.toml", "--jobs", "1", "--out", "one.jsonl"],
    );
    let two = numaplace_in(
        &dir,
        &["sweep", "small.toml", "--jobs", "2", "--out", "two.jsonl"],
    );
    assert!(
        one.status.success() && two.status.success(),
        "{}",
        stderr(&two)
    );
    assert!(!one.stdout.is_empty());
    assert_eq!(stdout(&one), stdout(&two));
    assert_eq!(
        records(&dir.join("one.jsonl")),
        records(&dir.join("two.jsonl"))
    );
}

#[test]
fn sweep_records_have_no_pages_unless_the_spec_asks() {
    let dir = scratch("no-pages");
    let plain = records(&small_results(&dir));
    assert!(plain.iter().all(|r| r["result"].get("pages").is_none()));
    let asked = SMALL_SPEC.replace("name = \"small\"", "name = \"asked\"")
        + "[base.report]\nper_page = true\n";
    std::fs::write(dir.join("asked.toml"), asked).unwrap();
    let o = numaplace_in(&dir, &["sweep", "asked.toml"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let asked = records(&dir.join("asked.jsonl"));
    assert!(asked.iter().all(|r| r["result"]["pages"]
        .as_array()
        .is_some_and(|p| !p.is_empty())));
}

#[test]
fn report_with_an_unknown_metric_lists_the_available_ones() {
    let dir = scratch("report-metric");
    small_results(&dir);
    let o = numaplace_in(&dir, &["report", "small.jsonl", "--metric", "refs.remot"]);
    assert_user_error(
        &o,
        &[
            "small.jsonl",
            "--metric",
            "`refs.remot`",
            "makespan_ns",
            "refs.remote",
        ],
    );
}

#[test]
fn report_with_an_unknown_group_by_field_lists_the_available_ones() {
    let dir = scratch("report-group-by");
    small_results(&dir);
    let o = numaplace_in(
        &dir,
        &["report", "small.jsonl", "--group-by", "machine.node"],
    );
    assert_user_error(
        &o,
        &[
            "--group-by",
            "`machine.node`",
            "machine.nodes",
            "workload.kind",
        ],
    );
}

#[test]
fn report_with_an_unknown_baseline_field_is_a_user_error() {
    let dir = scratch("report-baseline");
    small_results(&dir);
    let o = numaplace_in(
        &dir,
        &["report", "small.jsonl", "--baseline", "machin.nodes=2"],
    );
    assert_user_error(&o, &["--baseline", "`machin.nodes`", "machine.nodes"]);
}

#[test]
fn report_with_an_unknown_x_field_is_a_user_error() {
    let dir = scratch("report-x");
    small_results(&dir);
    let o = numaplace_in(
        &dir,
        &["report", "small.jsonl", "--plot", "line", "--x", "nodes"],
    );
    assert_user_error(&o, &["--x", "`nodes`", "machine.nodes"]);
}

#[test]
fn report_with_a_confidence_outside_zero_to_one_is_a_user_error() {
    let dir = scratch("report-confidence");
    small_results(&dir);
    for c in ["1", "0", "99"] {
        let o = numaplace_in(&dir, &["report", "small.jsonl", "--confidence", c]);
        assert_user_error(&o, &["--confidence", "between 0 and 1"]);
    }
}

#[test]
fn reproduce_list_works_from_any_directory() {
    let dir = scratch("list-anywhere");
    let o = numaplace_in(&dir, &["reproduce", "--list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for paper in [
        "dunx91",
        "holliday89",
        "numa-basics",
        "platinum89",
        "tiering",
    ] {
        assert!(text.contains(paper), "{paper} missing from:\n{text}");
    }
}

#[test]
fn reproduce_runs_a_built_in_paper_from_any_directory() {
    let dir = scratch("reproduce-anywhere");
    let o = numaplace_in(&dir, &["reproduce", "numa-basics", "--quick"]);
    let text = stdout(&o);
    assert!(o.status.success(), "{text}\n{}", stderr(&o));
    assert!(text.contains("3 of 3 claims held"), "{text}");
    assert!(dir.join("results/numa-basics").is_dir());
}

#[test]
fn reproduce_of_an_unknown_paper_lists_the_built_in_ones() {
    let dir = scratch("reproduce-unknown");
    let o = numaplace_in(&dir, &["reproduce", "holliday98"]);
    assert_user_error(&o, &["no paper `holliday98`", "holliday89", "platinum89"]);
}

#[test]
fn reproduce_with_a_bad_point_in_a_later_study_runs_nothing() {
    let dir = scratch("reproduce-bad-later-study");
    let paper = dir.join("experiments/two");
    std::fs::create_dir_all(&paper).unwrap();
    std::fs::write(paper.join("first.toml"), SMALL_SPEC).unwrap();
    let second = SMALL_SPEC.replace("name = \"small\"", "name = \"second\"")
        + "[[axis]]\nfield = \"policy.placement\"\nvalues = [\"program\", \"progrm\"]\n";
    std::fs::write(paper.join("second.toml"), second).unwrap();
    std::fs::write(
        paper.join("paper.toml"),
        "title = \"two studies\"\nstudies = [\"first.toml\", \"second.toml\"]\n",
    )
    .unwrap();
    let o = numaplace_in(&dir, &["reproduce", "two", "--experiments", "experiments"]);
    assert_user_error(
        &o,
        &[
            "study `second`",
            "second.toml",
            "policy.placement = \"progrm\"",
        ],
    );
    assert!(
        !dir.join("results/two/small.jsonl").exists(),
        "the first study ran"
    );
}

#[test]
fn reproduce_over_the_run_limit_is_refused() {
    let dir = scratch("reproduce-limit");
    let o = numaplace_in(&dir, &["reproduce", "numa-basics", "--max-runs", "3"]);
    assert_user_error(&o, &["limit of 3", "--force"]);
    assert!(!dir.join("results").exists());
}

#[test]
fn a_sweep_axis_can_vary_one_program_of_a_multiprogrammed_run() {
    let dir = scratch("program-axis");
    let spec = r#"name = "two"
[[base.program]]
workload = { kind = "jacobi", n = 64, iterations = 2, threads = 4 }
[[base.program]]
workload = { kind = "matvec", n = 64, threads = 4 }
[[axis]]
field = "program.1.start_ns"
values = [0, 1000000]
"#;
    std::fs::write(dir.join("two.toml"), spec).unwrap();
    let o = numaplace_in(&dir, &["sweep", "two.toml", "--jobs", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let starts: Vec<u64> = records(&dir.join("two.jsonl"))
        .iter()
        .map(|r| r["result"]["programs"][1]["start_ns"].as_u64().unwrap())
        .collect();
    assert_eq!(starts, [0, 1_000_000]);
}
