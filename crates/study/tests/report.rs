//! `report` renders tables, CSV and plots from a stored results file.

mod common;

use common::{FakeRunner, SPEC_3X5};
use numaplace_study::parse_spec;
use numaplace_study::report::{parse_assignments, report, ReportOptions};
use numaplace_study::spec::PlotKind;
use numaplace_study::sweep::{run_sweep, SweepOptions};

#[test]
fn report_renders_table_csv_and_plot_from_results_file() {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("res.jsonl");
    let o = SweepOptions {
        jobs: 2,
        progress: false,
        ..SweepOptions::new(&results)
    };
    run_sweep(&spec, &FakeRunner::new(0), &o).unwrap();

    let opts = ReportOptions {
        group_by: vec!["policy.kind".into(), "machine.nodes".into()],
        baseline: parse_assignments("policy.kind=static").unwrap(),
        csv: Some(tmp.path().join("summary.csv")),
        raw_csv: Some(tmp.path().join("raw.csv")),
        plot: Some(PlotKind::Line),
        x: Some("machine.nodes".into()),
        ..ReportOptions::default()
    };
    let out = report(&results, &opts).unwrap();
    assert!(out.text.contains("60 runs"), "{}", out.text);
    assert!(
        out.text.contains("baseline") && out.text.contains("dynamic"),
        "{}",
        out.text
    );
    assert_eq!(
        out.text
            .lines()
            .filter(|l| l.starts_with("static") || l.starts_with("dynamic"))
            .count(),
        4
    );
    let raw = std::fs::read_to_string(tmp.path().join("raw.csv")).unwrap();
    assert_eq!(raw.lines().count(), 61);
    assert!(tmp.path().join("res-line.svg").is_file() && tmp.path().join("res-line.png").is_file());
    assert_eq!(out.files.len(), 4);

    let md = report(
        &results,
        &ReportOptions {
            markdown: true,
            ..ReportOptions::default()
        },
    )
    .unwrap();
    assert!(
        md.text
            .contains("| machine.nodes | machine.costs.remote_read_ns | policy.kind | n |"),
        "{}",
        md.text
    );
}

#[test]
fn bad_assignment_is_an_error() {
    assert!(parse_assignments("policy.kind").is_err());
    assert_eq!(parse_assignments("a=2, b=x").unwrap().len(), 2);
}

fn results(dir: &std::path::Path) -> std::path::PathBuf {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let path = dir.join("res.jsonl");
    let o = SweepOptions {
        jobs: 2,
        progress: false,
        ..SweepOptions::new(&path)
    };
    run_sweep(&spec, &FakeRunner::new(0), &o).unwrap();
    path
}

fn report_err(opts: ReportOptions) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let path = results(tmp.path());
    format!("{:#}", report(&path, &opts).unwrap_err())
}

#[test]
fn an_unknown_metric_is_refused_listing_the_available_ones() {
    let e = report_err(ReportOptions {
        metric: Some("makespan".into()),
        ..ReportOptions::default()
    });
    assert!(e.contains("res.jsonl") && e.contains("--metric"), "{e}");
    assert!(
        e.contains("`makespan`") && e.contains("makespan_ns, refs.cached"),
        "{e}"
    );
}

#[test]
fn an_unknown_group_by_field_is_refused_listing_the_available_ones() {
    let e = report_err(ReportOptions {
        group_by: vec!["machine.nodes".into(), "policy.knd".into()],
        ..ReportOptions::default()
    });
    assert!(
        e.contains("--group-by") && e.contains("`policy.knd`"),
        "{e}"
    );
    assert!(e.contains("policy.kind") && e.contains("seed"), "{e}");
}

#[test]
fn an_unknown_baseline_field_is_refused() {
    let e = report_err(ReportOptions {
        baseline: parse_assignments("polcy.kind=static").unwrap(),
        ..ReportOptions::default()
    });
    assert!(
        e.contains("--baseline") && e.contains("`polcy.kind`"),
        "{e}"
    );
}

#[test]
fn an_unknown_x_field_is_refused() {
    let e = report_err(ReportOptions {
        plot: Some(PlotKind::Line),
        x: Some("machine.node".into()),
        ..ReportOptions::default()
    });
    assert!(e.contains("--x") && e.contains("`machine.node`"), "{e}");
}

#[test]
fn a_confidence_outside_zero_to_one_is_refused() {
    for c in [0.0, 1.0, 99.0, -0.5, f64::NAN] {
        let e = report_err(ReportOptions {
            confidence: c,
            ..ReportOptions::default()
        });
        assert!(
            e.contains("--confidence") && e.contains("between 0 and 1"),
            "{e}"
        );
    }
}

#[test]
fn report_rows_follow_the_run_order_whatever_the_file_order() {
    let tmp = tempfile::tempdir().unwrap();
    let path = results(tmp.path());
    let sorted = report(&path, &ReportOptions::default()).unwrap().text;
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_by_key(|l| {
        let r: numaplace_study::Record = serde_json::from_str(l).unwrap();
        std::cmp::Reverse(r.index)
    });
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    assert_eq!(
        report(&path, &ReportOptions::default()).unwrap().text,
        sorted
    );
}
