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
