//! Paper reproduction: claims evaluate to Held / NotHeld / Error and drive
//! the exit code; reported numbers appear beside ours; results resume.

mod common;

use std::path::Path;

use common::{FakeRunner, SPEC_3X5};
use numaplace_study::reproduce::{list_papers, reproduce, ReproduceOptions};
use numaplace_study::Status;

const TRUE_CLAIMS: &str = r#"
[[claim]]
name = "dynamic-slower"
text = "dynamic placement is slower than static in this fake"
study = "three-axes"
kind = "ratio"
left = { where = { "policy.kind" = "dynamic" }, metric = "makespan_ns" }
right = { where = { "policy.kind" = "static" } }
at_least = 1.0

[[claim]]
name = "static-faster"
study = "three-axes"
kind = "compare"
left = { where = { "policy.kind" = "static" } }
right = { where = { "policy.kind" = "dynamic" } }
expect = "less"

[[claim]]
name = "remote-cost-hurts"
study = "three-axes"
kind = "trend"
over = "machine.costs.remote_read_ns"
left = { where = { "policy.kind" = "static" } }
expect = "increasing"
"#;

const FALSE_CLAIM: &str = r#"
[[claim]]
name = "impossibly-fast"
text = "runs take at most 10 ns"
study = "three-axes"
kind = "value"
left = { where = { "machine.nodes" = 2 } }
at_most = 10.0
"#;

const MISSING_CLAIM: &str = r#"
[[claim]]
name = "no-such-policy"
study = "three-axes"
kind = "value"
left = { where = { "policy.kind" = "holliday-daemon" } }
at_least = 0.0
"#;

fn write_paper(root: &Path, name: &str, claims: &str) -> std::path::PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let spec = SPEC_3X5.replace("trials = 5", "trials = 2")
        + "[[output.plot]]\nkind = \"line\"\nx = \"machine.costs.remote_read_ns\"\nfile = \"cost\"\n";
    std::fs::write(dir.join("study.toml"), spec).unwrap();
    let paper = format!(
        r#"title = "A fake paper"
citation = "Nobody, 1989"
studies = ["study.toml"]

[[reported]]
table = "Table 1"
row = {{ "policy.kind" = "static", "machine.nodes" = 2 }}
value = 5000.0
unit_note = "ns"
{claims}"#
    );
    std::fs::write(dir.join("paper.toml"), paper).unwrap();
    dir
}

fn opts(out: &Path) -> ReproduceOptions {
    ReproduceOptions {
        quick: false,
        jobs: 2,
        out_dir: out.to_path_buf(),
        no_fail: false,
        progress: false,
        resume: false,
        stop: None,
        max_runs: None,
    }
}

#[test]
fn true_claims_hold_and_exit_code_is_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_paper(tmp.path(), "fake", TRUE_CLAIMS);
    let rep = reproduce(&dir, &FakeRunner::new(0), &opts(&tmp.path().join("out"))).unwrap();
    for c in &rep.claims {
        assert_eq!(c.status, Status::Held, "{}: {}", c.name, c.detail);
    }
    assert_eq!(rep.exit_code(), 0);
    assert!(tmp.path().join("out/fake/three-axes.jsonl").is_file());
    assert!(tmp.path().join("out/fake/cost.svg").is_file());
    let text = rep.render_text();
    assert!(text.contains("[held] dynamic-slower"), "{text}");
    assert!(text.contains("Table 1") && text.contains("5000"), "{text}");
    assert!(rep.render_markdown().contains("**held**"));
}

#[test]
fn false_claim_is_not_held_and_fails_the_exit_code() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_paper(tmp.path(), "fake", &format!("{TRUE_CLAIMS}{FALSE_CLAIM}"));
    let mut o = opts(&tmp.path().join("out"));
    let rep = reproduce(&dir, &FakeRunner::new(0), &o).unwrap();
    let c = rep
        .claims
        .iter()
        .find(|c| c.name == "impossibly-fast")
        .unwrap();
    assert_eq!(c.status, Status::NotHeld);
    assert!(c.values[0].1 > 10.0);
    assert_ne!(rep.exit_code(), 0);
    assert!(rep.render_text().contains("[NOT HELD] impossibly-fast"));

    // --no-fail: same verdicts, zero exit; resuming re-runs nothing.
    o.no_fail = true;
    o.resume = true;
    let runner = FakeRunner::new(0);
    let rep = reproduce(&dir, &runner, &o).unwrap();
    assert_eq!(runner.total_calls(), 0);
    assert_eq!(rep.studies[0].skipped, 24);
    assert_eq!(rep.exit_code(), 0);
}

#[test]
fn claim_selecting_no_runs_is_an_error_outcome() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_paper(tmp.path(), "fake", MISSING_CLAIM);
    let rep = reproduce(&dir, &FakeRunner::new(0), &opts(&tmp.path().join("out"))).unwrap();
    assert!(matches!(&rep.claims[0].status, Status::Error(e) if e.contains("holliday-daemon")));
    assert_eq!(rep.exit_code(), 1);
}

#[test]
fn claim_naming_unknown_study_is_rejected_before_running() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_paper(
        tmp.path(),
        "fake",
        &TRUE_CLAIMS.replacen("study = \"three-axes\"", "study = \"nope\"", 1),
    );
    let runner = FakeRunner::new(0);
    let err = reproduce(&dir, &runner, &opts(&tmp.path().join("out"))).unwrap_err();
    assert!(
        format!("{err:#}").contains("no study named `nope`"),
        "{err:#}"
    );
    assert_eq!(runner.total_calls(), 0);
}

#[test]
fn reported_numbers_show_our_mean_beside_theirs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_paper(tmp.path(), "fake", "");
    let rep = reproduce(&dir, &FakeRunner::new(0), &opts(&tmp.path().join("out"))).unwrap();
    let r = &rep.reported[0];
    assert_eq!(r.n, 6);
    assert_eq!(r.theirs, 5000.0);
    assert!(r.ours.unwrap() > 0.0);
}

#[test]
fn list_papers_finds_paper_directories() {
    let tmp = tempfile::tempdir().unwrap();
    write_paper(tmp.path(), "b-paper", "");
    write_paper(tmp.path(), "a-paper", "");
    std::fs::create_dir_all(tmp.path().join("not-a-paper")).unwrap();
    let papers = list_papers(tmp.path()).unwrap();
    let names: Vec<&str> = papers.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["a-paper", "b-paper"]);
    assert_eq!(papers[0].title, "A fake paper");
}

#[test]
fn a_bad_point_in_the_last_study_fails_before_the_first_study_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_paper(tmp.path(), "fake", "");
    let second = SPEC_3X5
        .replace("name = \"three-axes\"", "name = \"second\"")
        .replace(
            "values = [\"static\", \"dynamic\"]",
            "values = [\"static\", \"dynamc\"]",
        );
    std::fs::write(dir.join("second.toml"), second).unwrap();
    let paper = std::fs::read_to_string(dir.join("paper.toml"))
        .unwrap()
        .replace(
            "studies = [\"study.toml\"]",
            "studies = [\"study.toml\", \"second.toml\"]",
        )
        .replace("[[reported]]\n", "[[reported]]\nstudy = \"three-axes\"\n");
    std::fs::write(dir.join("paper.toml"), paper).unwrap();
    let runner = FakeRunner {
        reject: Some(("policy.kind".into(), "dynamc".into())),
        ..FakeRunner::default()
    };
    let out = tmp.path().join("out");
    let err = format!("{:#}", reproduce(&dir, &runner, &opts(&out)).unwrap_err());
    assert_eq!(runner.total_calls(), 0, "nothing may run");
    assert!(!out.join("fake").join("three-axes.jsonl").exists());
    for needle in ["study `second`", "second.toml", "policy.kind = \"dynamc\""] {
        assert!(err.contains(needle), "`{needle}` not in: {err}");
    }
}

#[test]
fn a_malformed_claim_is_reported_with_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let claim = "\n[[claim]]\nname = \"unbounded\"\nstudy = \"three-axes\"\nkind = \"value\"\n";
    let dir = write_paper(tmp.path(), "fake", claim);
    let text = std::fs::read_to_string(dir.join("paper.toml")).unwrap();
    let line = text.lines().position(|l| l == "[[claim]]").unwrap() + 1;
    let runner = FakeRunner::new(0);
    let err = format!(
        "{:#}",
        reproduce(&dir, &runner, &opts(&tmp.path().join("out"))).unwrap_err()
    );
    assert!(
        err.contains("paper.toml") && err.contains("claim[0] `unbounded`"),
        "{err}"
    );
    assert!(
        err.contains(&format!("(line {line})")),
        "line {line} not in: {err}"
    );
}

static BUILTIN: &[(&str, &str)] = &[
    (
        "b-paper/paper.toml",
        "title = \"Built in\"\nstudies = [\"s.toml\"]\n",
    ),
    ("b-paper/s.toml", "name = \"s\"\ntrials = 2\n"),
    ("notes/readme.toml", "x = 1\n"),
];

#[test]
fn built_in_papers_are_listed_and_reproduced_from_memory() {
    use numaplace_study::reproduce::{reproduce_from, Experiments};
    let exp = Experiments::Builtin(BUILTIN);
    let papers = exp.list().unwrap();
    assert_eq!(papers.len(), 1);
    assert_eq!(
        (papers[0].name.as_str(), papers[0].title.as_str()),
        ("b-paper", "Built in")
    );
    let err = exp.paper("nope").unwrap_err().to_string();
    assert!(
        err.contains("no paper `nope`") && err.contains("b-paper"),
        "{err}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let source = exp.paper("b-paper").unwrap();
    let runner = FakeRunner::new(0);
    let rep = reproduce_from(&source, &runner, &opts(&tmp.path().join("out"))).unwrap();
    assert_eq!(rep.paper, "b-paper");
    assert_eq!(runner.total_calls(), 2);
    assert!(tmp.path().join("out/b-paper/s.jsonl").is_file());
}

/// A paper whose one reported number is given in microseconds, with extra fields on it.
fn write_paper_with_reported(root: &Path, reported_extra: &str, tail: &str) -> std::path::PathBuf {
    let dir = write_paper(root, "units", tail);
    let text = std::fs::read_to_string(dir.join("paper.toml")).unwrap();
    let text = text.replace(
        "value = 5000.0\nunit_note = \"ns\"\n",
        &format!("value = 5.0\n{reported_extra}\n"),
    );
    std::fs::write(dir.join("paper.toml"), text).unwrap();
    dir
}

#[test]
fn a_paper_unit_shows_ours_converted_to_the_papers_unit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_paper_with_reported(tmp.path(), "paper_unit = \"us\"", "");
    let rep = reproduce(&dir, &FakeRunner::new(0), &opts(&tmp.path().join("out"))).unwrap();
    let plain = {
        let d = write_paper(tmp.path(), "plain", "");
        reproduce(&d, &FakeRunner::new(0), &opts(&tmp.path().join("out2"))).unwrap()
    };
    let r = &rep.reported[0];
    assert_eq!(r.unit, "us");
    assert_eq!(r.theirs, 5.0);
    let ns = plain.reported[0].ours.unwrap();
    assert!((r.ours.unwrap() - ns / 1e3).abs() < 1e-9 * ns);
}

#[test]
fn the_confidence_interval_is_given_in_the_papers_unit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_paper_with_reported(tmp.path(), "paper_unit = \"us\"", "");
    let rep = reproduce(&dir, &FakeRunner::new(0), &opts(&tmp.path().join("out"))).unwrap();
    let r = &rep.reported[0];
    let plain = {
        let d = write_paper(tmp.path(), "plain", "");
        reproduce(&d, &FakeRunner::new(0), &opts(&tmp.path().join("out2"))).unwrap()
    };
    match (r.ci95, plain.reported[0].ci95) {
        (Some(us), Some(ns)) => assert!((us - ns / 1e3).abs() <= 1e-9 * ns.max(1.0)),
        (a, b) => assert_eq!(a.is_some(), b.is_some()),
    }
    assert!(rep.render_text().contains("ci95"));
}

#[test]
fn a_paper_unit_on_a_metric_that_is_not_a_time_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_paper_with_reported(
        tmp.path(),
        "paper_unit = \"s\"\nmetric = \"migrations\"",
        "",
    );
    let err = reproduce(&dir, &FakeRunner::new(0), &opts(&tmp.path().join("out"))).unwrap_err();
    let msg = format!("{err:#}");
    assert!(
        msg.contains("paper_unit") && msg.contains("migrations"),
        "{msg}"
    );
}

#[test]
fn a_calibration_point_is_printed_apart_and_marked_calibrated() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_paper_with_reported(
        tmp.path(),
        "paper_unit = \"us\"\ncalibrated = \"the remote read cost\"",
        "\n[[calibrated]]\ninput = \"machine.costs.remote_read_ns\"\nvalue = 1000\nfitted_to = \"Table 1: 5 us\"\n",
    );
    let rep = reproduce(&dir, &FakeRunner::new(0), &opts(&tmp.path().join("out"))).unwrap();
    let text = rep.render_text();
    assert!(!text.contains("-- reported (paper) vs ours --"), "{text}");
    assert!(text.contains("-- calibration points"), "{text}");
    assert!(text.contains("calibrated: the remote read cost"), "{text}");
    assert!(text.contains("-- calibrated inputs"), "{text}");
    assert!(text.contains("Table 1: 5 us"), "{text}");
    assert!(rep.render_markdown().contains("## Calibrated inputs"));
}

#[test]
fn a_claim_on_reported_numbers_leaves_calibration_points_out() {
    let tmp = tempfile::tempdir().unwrap();
    let claim = "\n[[claim]]\nname = \"close\"\nstudy = \"three-axes\"\nkind = \"reported\"\ntable = \"Table 1\"\ntolerance = 1e30\n";
    let dir = write_paper_with_reported(tmp.path(), "calibrated = \"the remote read cost\"", claim);
    let rep = reproduce(&dir, &FakeRunner::new(0), &opts(&tmp.path().join("out"))).unwrap();
    assert!(
        matches!(&rep.claims[0].status, Status::Error(e) if e.contains("Table 1")),
        "{:?}",
        rep.claims[0].status
    );
}

#[test]
fn a_reported_interval_end_is_compared_with_ours_at_the_studys_confidence() {
    let tmp = tempfile::tempdir().unwrap();
    let low = write_paper_with_reported(tmp.path(), "statistic = \"ci_low\"", "");
    let rep = reproduce(&low, &FakeRunner::new(0), &opts(&tmp.path().join("out"))).unwrap();
    let mean = {
        let d = write_paper(tmp.path(), "plain", "");
        reproduce(&d, &FakeRunner::new(0), &opts(&tmp.path().join("out2"))).unwrap()
    };
    let r = &rep.reported[0];
    let m = mean.reported[0].ours.unwrap();
    // The fake runs differ by seed, so the interval has a width; the spec's confidence
    // is the default 99%.
    assert!(r.ours.unwrap() < m, "{:?} vs {m}", r.ours);
    assert_eq!(r.metric, "makespan_ns (99% CI low)");
    assert_eq!(r.ci95, None);
    let high = write_paper_with_reported(tmp.path(), "statistic = \"ci_high\"", "");
    let rep = reproduce(&high, &FakeRunner::new(0), &opts(&tmp.path().join("out3"))).unwrap();
    let h = rep.reported[0].ours.unwrap();
    assert!(
        (h - m - (m - r.ours.unwrap())).abs() < 1e-6 * m,
        "symmetric about the mean"
    );
}

#[test]
fn an_interval_end_of_a_speedup_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_paper_with_reported(
        tmp.path(),
        "statistic = \"ci_low\"\nspeedup_over = \"machine.nodes\"\nspeedup_at = 4",
        "",
    );
    let err = reproduce(&dir, &FakeRunner::new(0), &opts(&tmp.path().join("out"))).unwrap_err();
    assert!(format!("{err:#}").contains("statistic"), "{err:#}");
}
