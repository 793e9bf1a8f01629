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

/// A sweep of a parameter whose last value is "inf", beside two runs without it (a
/// static placement's reference levels), as the SOSP 1991 figures draw them.
fn sweep_with_levels() -> Vec<Record> {
    let mut out = Vec::new();
    let mut push = |point: serde_json::Value, x: Option<serde_json::Value>, y: f64| {
        let mut settings = serde_json::Map::new();
        settings.insert("point".into(), point);
        let mut result = serde_json::json!({ "makespan_ns": y, "config": { "policy": {} } });
        if let Some(x) = x {
            result["config"]["policy"]["scan_delay_ns"] = x;
        }
        out.push(Record {
            id: format!("r{:06}", out.len()),
            index: out.len(),
            seed: 1,
            settings,
            result,
            error: None,
            spec_config: serde_json::Value::Null,
        });
    };
    use serde_json::json;
    push(json!("UMA/static"), None, 9e9);
    push(json!("NUMA/static"), None, 2e9);
    for (x, y) in [
        (json!(1_000_000_000), 5e9),
        (json!(10_000_000_000u64), 4e9),
        (json!("inf"), 3e9),
    ] {
        push(json!(x.to_string()), Some(x), y);
    }
    out
}

#[test]
fn a_category_scale_places_inf_last_and_levels_are_drawn_across() {
    use numaplace_study::spec::XScale;
    let recs = sweep_with_levels();
    let mut req = PlotRequest::new(PlotKind::Line, "makespan_ns", vec![]);
    req.x = Some("policy.scan_delay_ns".into());
    req.x_scale = XScale::Category;
    req.x_unit = Some(numaplace_study::reproduce::PaperUnit::S);
    req.y_unit = Some(numaplace_study::reproduce::PaperUnit::S);
    req.band = Band::Minmax;
    req.levels = vec![
        vec![("point".into(), serde_json::json!("UMA/static"))],
        vec![("point".into(), serde_json::json!("NUMA/static"))],
    ];
    let fig = numaplace_study::plot::figure(&recs, &req).unwrap();
    assert_eq!(fig.x_labels, ["1", "10", "inf"]);
    assert_eq!(fig.lines.len(), 1, "the levels are no line of the sweep");
    let ys: Vec<(f64, f64)> = fig.lines[0].points.iter().map(|p| (p.0, p.1)).collect();
    assert_eq!(ys, [(0.0, 5.0), (1.0, 4.0), (2.0, 3.0)]);
    assert_eq!(
        fig.levels,
        [
            ("UMA/static".to_string(), 9.0),
            ("NUMA/static".to_string(), 2.0)
        ]
    );
    assert_eq!(fig.y_desc, "makespan_ns (s)");
    let dir = tempfile::tempdir().unwrap();
    let files = plot_records(&recs, &req, &dir.path().join("levels")).unwrap();
    let svg = std::fs::read_to_string(&files[0]).unwrap();
    for text in [
        "UMA/static",
        "NUMA/static",
        "\ninf\n",
        "policy.scan_delay_ns (s)",
    ] {
        assert!(svg.contains(text), "missing {text}");
    }
    // Without a category scale, "inf" is no number to place.
    req.x_scale = XScale::Linear;
    let err = numaplace_study::plot::figure(&recs, &req).unwrap_err();
    assert!(err.to_string().contains("category"), "{err}");
}
