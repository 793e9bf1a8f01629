//! Plots of study results with plotters, written as SVG and PNG.
//!
//! Fonts: plotters' `ab_glyph` text backend has no fonts of its own, so the
//! crate embeds Noto Sans Regular (SIL Open Font License) from the
//! `ttf-noto-sans` crate and registers it for the `sans-serif`, `serif` and
//! `monospace` families before the first plot. PNG output therefore has real
//! text on every machine, independent of installed system fonts; SVG output
//! names the family and lets the viewer pick its font.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{anyhow, bail, Context};
use plotters::coord::Shift;
use plotters::prelude::*;
use serde_json::Value;

use crate::spec::{default_group_by, Band, PlotKind, PlotSpec, Spec, XScale};
use crate::stats::Summary;
use crate::store::Record;
use crate::table::group_records;
use crate::unit::PaperUnit;
use crate::value::{
    as_f64, compare_values, fmt_num, get_dotted, label, toml_to_json, values_equal,
};

/// Default image size in pixels (width, height).
pub const DEFAULT_SIZE: (u32, u32) = (900, 600);

/// A fully resolved plot request.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotRequest {
    /// Kind of plot.
    pub kind: PlotKind,
    /// X parameter: a configuration field for `line`/`speedup`; a field of
    /// each series record for `series` (default `iteration`).
    pub x: Option<String>,
    /// Metric: a result field; for `series`, a field of each series record.
    pub metric: String,
    /// Fields naming the lines (or bars).
    pub group_by: Vec<String>,
    /// Band drawn around lines.
    pub band: Band,
    /// Confidence level of CI bands and whiskers.
    pub confidence: f64,
    /// Title drawn above the plot.
    pub title: String,
    /// Only records matching this selector are plotted.
    pub filter: Vec<(String, Value)>,
    /// Image size in pixels.
    pub size: (u32, u32),
    /// How x values are placed (`line` plots).
    pub x_scale: XScale,
    /// Unit x (a time in ns) is shown in.
    pub x_unit: Option<PaperUnit>,
    /// Unit the metric (a time in ns) is shown in.
    pub y_unit: Option<PaperUnit>,
    /// Selectors of runs drawn as horizontal reference levels (`line` plots).
    pub levels: Vec<Vec<(String, Value)>>,
}

impl PlotRequest {
    /// A request with defaults: CI bands at 99%, no filter, default size.
    pub fn new(kind: PlotKind, metric: &str, group_by: Vec<String>) -> Self {
        PlotRequest {
            kind,
            x: None,
            metric: metric.to_string(),
            group_by,
            band: Band::Ci,
            confidence: 0.99,
            title: String::new(),
            filter: Vec::new(),
            size: DEFAULT_SIZE,
            x_scale: XScale::Linear,
            x_unit: None,
            y_unit: None,
            levels: Vec::new(),
        }
    }

    /// The request described by a spec's `[[output.plot]]` entry.
    pub fn from_spec(spec: &Spec, plot: &PlotSpec) -> Self {
        let metric = plot.metric.clone().unwrap_or_else(|| match plot.kind {
            PlotKind::Series => "remote".to_string(),
            _ => spec.output.metric.clone(),
        });
        let group_by = plot.group_by.clone().unwrap_or_else(|| {
            default_group_by(spec)
                .into_iter()
                .filter(|g| Some(g) != plot.x.as_ref())
                .collect()
        });
        PlotRequest {
            kind: plot.kind,
            x: plot.x.clone(),
            metric,
            group_by,
            band: plot.band,
            confidence: spec.output.confidence,
            title: plot.title.clone().unwrap_or_else(|| spec.name.clone()),
            filter: plot
                .filter
                .iter()
                .map(|(k, v)| (k.clone(), toml_to_json(v)))
                .collect(),
            size: DEFAULT_SIZE,
            x_scale: plot.x_scale,
            x_unit: plot.x_unit,
            y_unit: plot.y_unit,
            levels: plot
                .levels
                .iter()
                .map(|sel| {
                    sel.iter()
                        .map(|(k, v)| (k.clone(), toml_to_json(v)))
                        .collect()
                })
                .collect(),
        }
    }
}

/// Registers the embedded font with plotters (once per process).
pub fn ensure_font() -> anyhow::Result<()> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        for family in ["sans-serif", "serif", "monospace"] {
            plotters::style::register_font(family, FontStyle::Normal, ttf_noto_sans::REGULAR)
                .map_err(|_| "embedded font is invalid".to_string())?;
        }
        Ok(())
    })
    .clone()
    .map_err(|e| anyhow!(e))
}

/// One line (or bar) of a figure: points (x, y, band low, band high).
#[derive(Debug, Clone, PartialEq)]
pub struct PlotLine {
    /// Legend label.
    pub label: String,
    /// Points sorted by x.
    pub points: Vec<(f64, f64, f64, f64)>,
}

/// Data of a figure, computed from records; exposed for tests and callers
/// who want the numbers behind a plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Title.
    pub title: String,
    /// X axis description.
    pub x_desc: String,
    /// Y axis description.
    pub y_desc: String,
    /// Lines (for bar charts: one single-point line per bar, x = position).
    pub lines: Vec<PlotLine>,
    /// Draw bands from the low/high values.
    pub band: bool,
    /// Draw bars instead of lines.
    pub bars: bool,
    /// For a category x scale: the label of each position 0, 1, ...
    pub x_labels: Vec<String>,
    /// Horizontal reference levels: label and height.
    pub levels: Vec<(String, f64)>,
}

fn group_label(fields: &[String], key: &[Value], fallback: &str) -> String {
    if fields.is_empty() {
        return fallback.to_string();
    }
    fields
        .iter()
        .zip(key)
        .map(|(f, v)| {
            let short = f.rsplit('.').next().unwrap_or(f);
            format!("{short}={}", label(v))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `x` (ns) in `unit`, or as it is.
fn in_unit(x: f64, unit: Option<PaperUnit>) -> f64 {
    unit.map_or(x, |u| x / u.ns())
}

/// A description with its unit, e.g. `makespan_ns (s)`.
fn with_unit(desc: &str, unit: Option<PaperUnit>) -> String {
    match unit {
        Some(u) => format!("{desc} ({})", u.symbol()),
        None => desc.to_string(),
    }
}

/// The label of a selector's level: its values, joined.
fn level_label(sel: &[(String, Value)]) -> String {
    sel.iter()
        .map(|(_, v)| label(v))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Computes the figure data of a request.
pub fn figure(records: &[Record], req: &PlotRequest) -> anyhow::Result<Figure> {
    let is_level = |r: &Record| req.levels.iter().any(|sel| r.matches(sel));
    let selected: Vec<Record> = records
        .iter()
        .filter(|r| r.ok() && r.matches(&req.filter) && !is_level(r))
        .cloned()
        .collect();
    let mut levels = Vec::new();
    if req.kind == PlotKind::Line {
        for sel in &req.levels {
            let ys: Vec<f64> = records
                .iter()
                .filter(|r| r.ok() && r.matches(&req.filter) && r.matches(sel))
                .filter_map(|r| r.metric(&req.metric))
                .collect();
            if let Some(m) = crate::stats::mean(&ys) {
                levels.push((level_label(sel), in_unit(m, req.y_unit)));
            }
        }
    }
    let groups = group_records(&selected, &req.group_by);
    let mut lines = Vec::new();
    let mut x_labels = Vec::new();
    let (x_desc, y_desc, band, bars);
    match req.kind {
        PlotKind::Line | PlotKind::Speedup => {
            let x_field = req
                .x
                .as_deref()
                .ok_or_else(|| anyhow!("a {:?} plot needs an x field", req.kind))?;
            let category = req.kind == PlotKind::Line && req.x_scale == XScale::Category;
            // On a category scale: every distinct x in order, each at its position.
            let mut xs: Vec<Value> = Vec::new();
            if category {
                for r in &selected {
                    let xv = r
                        .field(x_field)
                        .ok_or_else(|| anyhow!("run {} has no field `{x_field}`", r.id))?;
                    if !xs.iter().any(|x| values_equal(x, &xv)) {
                        xs.push(xv);
                    }
                }
                xs.sort_by(compare_values);
                x_labels = xs
                    .iter()
                    .map(|x| match as_f64(x) {
                        Some(v) => fmt_num(in_unit(v, req.x_unit)),
                        None => label(x),
                    })
                    .collect();
            }
            for (key, members) in &groups {
                let mut by_x: Vec<(f64, Vec<f64>)> = Vec::new();
                for r in members {
                    let xv = r
                        .field(x_field)
                        .ok_or_else(|| anyhow!("run {} has no field `{x_field}`", r.id))?;
                    let x = if category {
                        xs.iter().position(|x| values_equal(x, &xv)).unwrap_or(0) as f64
                    } else {
                        let x = as_f64(&xv).ok_or_else(|| {
                            anyhow!(
                                "x field `{x_field}` is not numeric ({}) in run {}; \
                                 `x_scale = \"category\"` places such values",
                                xv,
                                r.id
                            )
                        })?;
                        in_unit(x, req.x_unit)
                    };
                    let Some(y) = r.metric(&req.metric) else {
                        continue;
                    };
                    let y = in_unit(y, req.y_unit);
                    match by_x.iter_mut().find(|(px, _)| *px == x) {
                        Some((_, ys)) => ys.push(y),
                        None => by_x.push((x, vec![y])),
                    }
                }
                by_x.sort_by(|a, b| a.0.total_cmp(&b.0));
                let mut points = Vec::new();
                for (x, ys) in &by_x {
                    let Some(s) = Summary::of(ys, req.confidence) else {
                        continue;
                    };
                    let (lo, hi) = match req.band {
                        Band::Ci => s.ci(),
                        Band::Minmax => (s.min, s.max),
                        Band::None => (s.mean, s.mean),
                    };
                    points.push((*x, s.mean, lo, hi));
                }
                if req.kind == PlotKind::Speedup {
                    let Some(&(_, y0, _, _)) = points.first() else {
                        continue;
                    };
                    points = points
                        .iter()
                        .filter(|p| p.1 != 0.0)
                        .map(|&(x, y, _, _)| (x, y0 / y, y0 / y, y0 / y))
                        .collect();
                }
                if !points.is_empty() {
                    lines.push(PlotLine {
                        label: group_label(&req.group_by, key, &req.metric),
                        points,
                    });
                }
            }
            x_desc = with_unit(x_field, req.x_unit);
            y_desc = if req.kind == PlotKind::Speedup {
                format!(
                    "speedup ({} at smallest {x_field} / {})",
                    req.metric, req.metric
                )
            } else {
                with_unit(&req.metric, req.y_unit)
            };
            band = req.kind == PlotKind::Line && req.band != Band::None;
            bars = false;
        }
        PlotKind::Bar => {
            for (key, members) in &groups {
                let ys: Vec<f64> = members
                    .iter()
                    .filter_map(|r| r.metric(&req.metric))
                    .map(|y| in_unit(y, req.y_unit))
                    .collect();
                let Some(s) = Summary::of(&ys, req.confidence) else {
                    continue;
                };
                let (lo, hi) = match req.band {
                    Band::Ci => s.ci(),
                    Band::Minmax => (s.min, s.max),
                    Band::None => (s.mean, s.mean),
                };
                let x = lines.len() as f64;
                lines.push(PlotLine {
                    label: group_label(&req.group_by, key, &req.metric),
                    points: vec![(x, s.mean, lo, hi)],
                });
            }
            x_desc = req.group_by.join(", ");
            y_desc = with_unit(&req.metric, req.y_unit);
            band = req.band != Band::None;
            bars = true;
        }
        PlotKind::Series => {
            let x_field = req.x.as_deref().unwrap_or("iteration");
            for (key, members) in &groups {
                // The first trial of the group stands for it.
                let Some(r) = members.first() else { continue };
                let Some(Value::Array(series)) = r.result.get("series") else {
                    bail!("run {} has no `series` array", r.id)
                };
                let mut points: Vec<(f64, f64, f64, f64)> = series
                    .iter()
                    .enumerate()
                    .filter_map(|(i, rec)| {
                        let x = get_dotted(rec, x_field)
                            .and_then(as_f64)
                            .unwrap_or(i as f64);
                        let y = crate::value::metric_of(rec, &req.metric)?;
                        Some((x, y, y, y))
                    })
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                if !points.is_empty() {
                    lines.push(PlotLine {
                        label: group_label(&req.group_by, key, &req.metric),
                        points,
                    });
                }
            }
            x_desc = x_field.to_string();
            y_desc = req.metric.clone();
            band = false;
            bars = false;
        }
    }
    if lines.is_empty() {
        bail!(
            "nothing to plot: no successful run has `{}`{}",
            req.metric,
            if req.filter.is_empty() {
                ""
            } else {
                " among the selected runs"
            }
        );
    }
    Ok(Figure {
        title: req.title.clone(),
        x_desc,
        y_desc,
        lines,
        band,
        bars,
        x_labels,
        levels,
    })
}

/// Draws a request to `STEM.svg` and `STEM.png`; returns the files written.
pub fn plot_records(
    records: &[Record],
    req: &PlotRequest,
    stem: &Path,
) -> anyhow::Result<Vec<PathBuf>> {
    Ok(draw_records(records, req, stem)?.files)
}

/// A figure drawn to files: the files written and the SVG's text, for a page that
/// carries the figure inline.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawn {
    /// The files written (`STEM.svg`, `STEM.png`).
    pub files: Vec<PathBuf>,
    /// The text of `STEM.svg`.
    pub svg: String,
}

/// [`plot_records`], keeping the SVG's text.
pub fn draw_records(records: &[Record], req: &PlotRequest, stem: &Path) -> anyhow::Result<Drawn> {
    let fig = figure(records, req)?;
    draw_figure(&fig, req.size, stem)
}

/// Draws a figure to `STEM.svg` and `STEM.png`; returns the files written.
pub fn write_figure(fig: &Figure, size: (u32, u32), stem: &Path) -> anyhow::Result<Vec<PathBuf>> {
    Ok(draw_figure(fig, size, stem)?.files)
}

/// [`write_figure`], keeping the SVG's text.
pub fn draw_figure(fig: &Figure, size: (u32, u32), stem: &Path) -> anyhow::Result<Drawn> {
    let text = figure_svg(fig, size)?;
    if let Some(dir) = stem.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let svg = stem.with_extension("svg");
    let png = stem.with_extension("png");
    std::fs::write(&svg, &text).with_context(|| format!("cannot write {}", svg.display()))?;
    {
        let root = BitMapBackend::new(&png, size).into_drawing_area();
        draw(root, fig).map_err(|e| anyhow!("drawing {}: {e}", png.display()))?;
    }
    Ok(Drawn {
        files: vec![svg, png],
        svg: text,
    })
}

/// A figure as the text of an SVG document (no file written).
pub fn figure_svg(fig: &Figure, size: (u32, u32)) -> anyhow::Result<String> {
    ensure_font()?;
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        draw(root, fig).map_err(|e| anyhow!("drawing {}: {e}", fig.title))?;
    }
    Ok(text)
}

const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn padded(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        return (lo - d, hi + d);
    }
    let pad = (hi - lo) * 0.05;
    (lo - pad, hi + pad)
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, fig: &Figure) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let all = fig.lines.iter().flat_map(|l| l.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for &(x, y, lo, hi) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y).min(lo);
        y1 = y1.max(y).max(hi);
    }
    for &(_, y) in &fig.levels {
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    let category = !fig.x_labels.is_empty();
    let (x0, x1) = if fig.bars {
        (-0.6, fig.lines.len() as f64 - 0.4)
    } else if category {
        (-0.5, fig.x_labels.len() as f64 - 0.5)
    } else {
        padded(x0, x1)
    };
    let (y0, y1) = if fig.bars {
        let (_, top) = padded(y0.min(0.0), y1.max(0.0));
        (y0.min(0.0), top)
    } else {
        padded(y0, y1)
    };

    let mut chart = ChartBuilder::on(&root)
        .caption(&fig.title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(90)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    let bar_labels: Vec<String> = fig.lines.iter().map(|l| l.label.clone()).collect();
    let x_fmt = |x: &f64| {
        if category {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < fig.x_labels.len() {
                return fig.x_labels[i as usize].clone();
            }
            return String::new();
        }
        if fig.bars {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < bar_labels.len() {
                return format!("{}", i as usize + 1);
            }
            return String::new();
        }
        fmt_num(*x)
    };
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(fig.x_desc.as_str())
        .y_desc(fig.y_desc.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&|y: &f64| fmt_num(*y));
    if fig.bars {
        mesh.disable_x_mesh().x_labels(fig.lines.len().max(2));
    }
    if category {
        mesh.x_labels(fig.x_labels.len().max(2));
    }
    mesh.draw()?;

    // Reference levels: heavy horizontal lines across the plot, as the papers draw them.
    const LEVEL_COLORS: [RGBColor; 3] = [BLACK, RGBColor(110, 110, 110), RGBColor(160, 60, 60)];
    for (i, (name, y)) in fig.levels.iter().enumerate() {
        let color = LEVEL_COLORS[i % LEVEL_COLORS.len()];
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x0, *y), (x1, *y)],
                color.stroke_width(3),
            )))?
            .label(name.clone())
            .legend(move |(lx, ly)| {
                Rectangle::new([(lx, ly - 2), (lx + 16, ly + 2)], color.filled())
            });
    }

    for (i, line) in fig.lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        if fig.bars {
            let &(x, y, lo, hi) = &line.points[0];
            let base = if y < 0.0 { y } else { 0.0 };
            let top = if y < 0.0 { 0.0 } else { y };
            let label = format!("{}: {}", i + 1, line.label);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x - 0.35, base), (x + 0.35, top)],
                    color.filled(),
                )))?
                .label(label)
                .legend(move |(lx, ly)| {
                    Rectangle::new([(lx, ly - 5), (lx + 14, ly + 5)], color.filled())
                });
            if fig.band && hi > lo {
                // Whisker with caps (plotters' ErrorBar needs a feature we do not enable).
                let whisker = [
                    vec![(x, lo), (x, hi)],
                    vec![(x - 0.08, lo), (x + 0.08, lo)],
                    vec![(x - 0.08, hi), (x + 0.08, hi)],
                ];
                chart.draw_series(
                    whisker
                        .into_iter()
                        .map(|pts| PathElement::new(pts, BLACK.stroke_width(1))),
                )?;
            }
            continue;
        }
        if fig.band {
            let mut poly: Vec<(f64, f64)> = line.points.iter().map(|p| (p.0, p.3)).collect();
            poly.extend(line.points.iter().rev().map(|p| (p.0, p.2)));
            chart.draw_series(std::iter::once(Polygon::new(
                poly,
                color.mix(0.18).filled(),
            )))?;
        }
        chart
            .draw_series(LineSeries::new(
                line.points.iter().map(|p| (p.0, p.1)),
                color.stroke_width(2),
            ))?
            .label(line.label.clone())
            .legend(move |(lx, ly)| {
                Rectangle::new([(lx, ly - 3), (lx + 16, ly + 3)], color.filled())
            });
        if line.points.len() <= 60 {
            chart.draw_series(
                line.points
                    .iter()
                    .map(|p| Circle::new((p.0, p.1), 3, color.filled())),
            )?;
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .label_font(("sans-serif", 14))
        .draw()?;
    root.present()?;
    Ok(())
}
