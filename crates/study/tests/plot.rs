//! Plots contain the expected series; PNG files decode to the right size.

mod common;

use common::{FakeRunner, SPEC_3X5};
use numaplace_study::plot::{plot_records, PlotRequest};
use numaplace_study::spec::{Band, PlotKind};
use numaplace_study::sweep::{run_sweep, SweepOptions};
use numaplace_study::{parse_spec, Record};

fn records() -> Vec<Record> {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let o = SweepOptions {
        jobs: 2,
        progress: false,
        ..SweepOptions::new(dir.path().join("r.jsonl"))
    };
    run_sweep(&spec, &FakeRunner::new(0), &o).unwrap().records
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

/// Data lines are drawn 2 px wide; mesh, ticks and axes are 1 px.
fn data_lines(svg: &str) -> usize {
    svg.split("<polyline")
        .skip(1)
        .filter(|el| {
            el.split('>')
                .next()
                .unwrap_or("")
                .contains("stroke-width=\"2\"")
        })
        .count()
}

fn png_size(path: &std::path::Path) -> (u32, u32) {
    let img = image::open(path).unwrap();
    (img.width(), img.height())
}

#[test]
fn line_plot_has_one_polyline_per_group_with_legend_and_axis_labels() {
    let recs = records();
    let dir = tempfile::tempdir().unwrap();
    let mut req = PlotRequest::new(
        PlotKind::Line,
        "makespan_ns",
        vec!["policy.kind".into(), "machine.nodes".into()],
    );
    req.x = Some("machine.costs.remote_read_ns".into());
    req.title = "fake sweep".into();
    let files = plot_records(&recs, &req, &dir.path().join("lines")).unwrap();
    let svg = std::fs::read_to_string(&files[0]).unwrap();
    assert_eq!(data_lines(&svg), 4, "one line per (policy, nodes) group");
    assert_eq!(count(&svg, "<polygon"), 4, "one CI band per group");
    for label in [
        "kind=static, nodes=2",
        "kind=dynamic, nodes=4",
        "machine.costs.remote_read_ns",
        "makespan_ns",
        "fake sweep",
    ] {
        assert!(svg.contains(label), "missing {label}");
    }
    assert_eq!(png_size(&files[1]), (900, 600));
}

#[test]
fn line_plot_without_band_has_no_polygons() {
    let recs = records();
    let dir = tempfile::tempdir().unwrap();
    let mut req = PlotRequest::new(PlotKind::Line, "makespan_ns", vec!["policy.kind".into()]);
    req.x = Some("machine.nodes".into());
    req.band = Band::None;
    let files = plot_records(&recs, &req, &dir.path().join("nb")).unwrap();
    let svg = std::fs::read_to_string(&files[0]).unwrap();
    assert_eq!(data_lines(&svg), 2);
    assert_eq!(count(&svg, "<polygon"), 0);
}

#[test]
fn speedup_plot_starts_at_one() {
    let recs = records();
    let mut req = PlotRequest::new(PlotKind::Speedup, "makespan_ns", vec!["policy.kind".into()]);
    req.x = Some("machine.nodes".into());
    let fig = numaplace_study::plot::figure(&recs, &req).unwrap();
    assert_eq!(fig.lines.len(), 2);
    for l in &fig.lines {
        assert_eq!(l.points[0].1, 1.0);
        assert_eq!(l.points.len(), 2);
    }
    let dir = tempfile::tempdir().unwrap();
    let files = plot_records(&recs, &req, &dir.path().join("sp")).unwrap();
    assert!(std::fs::read_to_string(&files[0])
        .unwrap()
        .contains("speedup"));
}

#[test]
fn bar_plot_has_one_bar_per_configuration() {
    let recs = records();
    let dir = tempfile::tempdir().unwrap();
    let mut req = PlotRequest::new(PlotKind::Bar, "makespan_ns", vec!["policy.kind".into()]);
    req.size = (640, 480);
    let files = plot_records(&recs, &req, &dir.path().join("bars")).unwrap();
    let svg = std::fs::read_to_string(&files[0]).unwrap();
    assert!(svg.contains("1: kind=static") && svg.contains("2: kind=dynamic"));
    assert_eq!(png_size(&files[1]), (640, 480));
}

#[test]
fn series_plot_draws_each_groups_series() {
    let recs = records();
    let dir = tempfile::tempdir().unwrap();
    let req = PlotRequest::new(PlotKind::Series, "remote", vec!["machine.nodes".into()]);
    let fig = numaplace_study::plot::figure(&recs, &req).unwrap();
    assert_eq!(fig.lines.len(), 2);
    assert_eq!(fig.lines[0].points.len(), 4);
    let files = plot_records(&recs, &req, &dir.path().join("series")).unwrap();
    let svg = std::fs::read_to_string(&files[0]).unwrap();
    assert_eq!(data_lines(&svg), 2);
    assert!(svg.contains("iteration") && svg.contains("nodes=4"));
}

#[test]
fn plot_of_missing_metric_is_an_error() {
    let recs = records();
    let mut req = PlotRequest::new(PlotKind::Line, "no_such_metric", vec![]);
    req.x = Some("machine.nodes".into());
    let err = numaplace_study::plot::figure(&recs, &req).unwrap_err();
    assert!(err.to_string().contains("no_such_metric"));
}
