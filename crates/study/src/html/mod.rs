//! Self-contained HTML pages: a reproduction, a results file, a run. Everything a page
//! needs is in it (style inline, figures as inline SVG, no script, no address outside the
//! page), and the same input gives the same bytes: a page carries no date and nothing of
//! the host.
//!
//! This module holds the parts every page shares: escaping, the page itself, tables,
//! figures, verdict labels and a heatmap drawn as SVG. `repro.rs` renders a
//! reproduction; a results file's page is rendered in `report.rs`.

use std::fmt::Write;

use crate::claims::Status;
use crate::value::fmt_num;

mod repro;

/// `text` with `&`, `<`, `>`, `"` and `'` replaced by character references, fit for an
/// element's content and a quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

/// `text` as an `id` and in-page link target: ASCII letters, digits, `-` and `_` kept,
/// anything else made `-`.
pub fn anchor(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The page's style: plain, for reading and printing.
const STYLE: &str = r#"
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: #1d1d1f; background: #fff; margin: 0; line-height: 1.45; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { font-size: 1.6em; margin: 0.2em 0 0.3em; }
h2 { font-size: 1.3em; margin: 2em 0 0.5em; padding-bottom: 0.2em; border-bottom: 2px solid #d0d4da; }
h3 { font-size: 1.08em; margin: 1.4em 0 0.4em; }
p { margin: 0.4em 0 0.8em; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace; font-size: 0.92em; }
.command { background: #f4f5f7; border: 1px solid #dde0e4; border-radius: 4px; padding: 6px 10px; display: inline-block; }
.muted { color: #5b616b; }
.note { background: #fff8e1; border-left: 4px solid #e0a800; padding: 8px 12px; margin: 10px 0; }
nav ul { columns: 2; margin: 0.3em 0; padding-left: 1.2em; }
.scroll { overflow-x: auto; margin: 0.5em 0 1em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { padding: 4px 9px; border-bottom: 1px solid #e3e6ea; vertical-align: top; }
th { background: #f4f5f7; text-align: left; border-bottom: 2px solid #c9ced6; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.wide { width: 100%; }
td.nw { white-space: nowrap; }
a { color: #1a4f8b; }
tbody tr:nth-child(even) td { background: #fafbfc; }
.v { display: inline-block; min-width: 7.5em; text-align: center; font-weight: 600; font-size: 0.85em;
  padding: 1px 8px; border-radius: 3px; border: 1px solid; white-space: nowrap; }
.v-held { background: #e6f4ea; color: #185c2c; border-color: #7cc08f; }
.v-not-held { background: #fce8e6; color: #8c1d18; border-color: #e49a94; }
.v-noise { background: #fef7e0; color: #6b4e00; border-color: #e6c65c; }
.v-observation { background: #eef1f5; color: #3c4450; border-color: #b5bdc9; }
.v-error { background: #5f1410; color: #fff; border-color: #5f1410; }
.tally { display: flex; flex-wrap: wrap; gap: 10px; margin: 0.6em 0; }
.tally div { border: 1px solid #d0d4da; border-radius: 4px; padding: 6px 14px; text-align: center; }
.tally b { display: block; font-size: 1.5em; }
ul.claims { list-style: none; padding: 0; margin: 0.4em 0 1em; }
ul.claims li { border-left: 3px solid #d0d4da; padding: 6px 12px; margin: 8px 0; }
ul.claims .name { font-weight: 600; }
ul.claims .detail { color: #3c4450; font-size: 0.9em; margin-top: 3px; overflow-wrap: anywhere; }
figure { margin: 0.8em 0 1.2em; }
figure svg { max-width: 100%; height: auto; border: 1px solid #e3e6ea; }
figcaption { color: #5b616b; font-size: 0.88em; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 0.85em; margin: 4px 0; }
.legend span.sw { display: inline-block; width: 12px; height: 12px; border: 1px solid #888; vertical-align: -1px; margin-right: 4px; }
section.calibrated { border: 2px dashed #b08900; border-radius: 6px; padding: 2px 18px 10px; margin-top: 2em; }
section.calibrated h2 { border-bottom: none; margin-top: 0.8em; }
details pre { background: #f4f5f7; padding: 8px; overflow-x: auto; font-size: 0.82em; }
"#;

/// An HTML document being written: a title and a body, finished with
/// [`Page::finish`].
#[derive(Debug, Clone)]
pub struct Page {
    title: String,
    body: String,
}

impl Page {
    /// An empty page called `title`.
    pub fn new(title: &str) -> Page {
        Page {
            title: title.to_string(),
            body: String::new(),
        }
    }

    /// Appends HTML as it is (the caller escaped what needs it).
    pub fn raw(&mut self, html: &str) {
        self.body.push_str(html);
    }

    /// Appends an element `tag` holding `text`, escaped.
    pub fn text(&mut self, tag: &str, text: &str) {
        let _ = writeln!(self.body, "<{tag}>{}</{tag}>", escape(text));
    }

    /// Appends a heading `tag` holding `text` (escaped) with the link target `id`.
    pub fn heading(&mut self, tag: &str, id: &str, text: &str) {
        let _ = writeln!(
            self.body,
            "<{tag} id=\"{}\">{}</{tag}>",
            escape(id),
            escape(text)
        );
    }

    /// The whole document.
    pub fn finish(self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n{}</main>\n\
             </body>\n</html>\n",
            escape(&self.title),
            self.body
        )
    }
}

/// `cells` as a table under `headers`: the first `left` columns are text, the others
/// numbers (right-aligned). Every cell is escaped.
pub fn table(headers: &[String], rows: &[Vec<String>], left: usize) -> String {
    let numeric: Vec<bool> = (0..headers.len()).map(|i| i >= left).collect();
    table_aligned(headers, rows, &numeric)
}

/// Text longer than this wraps in a table that spans the page; shorter text stays on
/// one line.
const LONG_CELL: usize = 28;

/// `cells` as a table under `headers`, the columns marked in `numeric` right-aligned.
/// A table with long text spans the page and wraps it; every cell is escaped.
pub fn table_aligned(headers: &[String], rows: &[Vec<String>], numeric: &[bool]) -> String {
    let is_num = |i: usize| numeric.get(i).copied().unwrap_or(false);
    let wide = rows.iter().any(|r| {
        r.iter()
            .enumerate()
            .any(|(i, c)| !is_num(i) && c.chars().count() > 2 * LONG_CELL)
    });
    let mut out = String::from(if wide {
        "<div class=\"scroll\"><table class=\"wide\">\n<thead><tr>"
    } else {
        "<div class=\"scroll\"><table>\n<thead><tr>"
    });
    for (i, h) in headers.iter().enumerate() {
        let class = if is_num(i) { " class=\"num\"" } else { "" };
        let _ = write!(out, "<th{class}>{}</th>", escape(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in rows {
        out.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let class = if is_num(i) {
                " class=\"num\""
            } else if wide && c.chars().count() <= LONG_CELL {
                " class=\"nw\""
            } else {
                ""
            };
            let _ = write!(out, "<td{class}>{}</td>", escape(c));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
    out
}

/// An SVG document (as plotters writes it) made fit to sit inside a page: no XML
/// prolog, no namespace address (the HTML parser gives `<svg>` its namespace), labelled
/// `label` for readers that do not see it.
pub fn inline_svg(svg: &str, label: &str) -> String {
    let start = svg.find("<svg").unwrap_or(0);
    let svg = &svg[start..];
    let svg = svg.replacen(
        " xmlns=\"http://www.w3.org/2000/svg\"",
        &format!(" role=\"img\" aria-label=\"{}\"", escape(label)),
        1,
    );
    svg.trim_end().to_string()
}

/// A figure: the SVG inline and its caption (escaped).
pub fn figure(svg: &str, caption: &str) -> String {
    format!(
        "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
        inline_svg(svg, caption),
        escape(caption)
    )
}

/// A claim's verdict as a label: its words (`held`, `NOT HELD`, ...) on a colour, so
/// the colour is never the only sign.
pub fn verdict(status: &Status) -> String {
    let (class, words) = match status {
        Status::Held => ("v-held", "held".to_string()),
        Status::NotHeld => ("v-not-held", "NOT HELD".to_string()),
        Status::WithinNoise => ("v-noise", "within noise".to_string()),
        Status::Observation => ("v-observation", "observation".to_string()),
        Status::Error(_) => ("v-error", "ERROR".to_string()),
    };
    format!("<span class=\"v {class}\">{}</span>", escape(&words))
}

/// One state a heatmap's cell can be in: a label and a CSS colour.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatState {
    /// What the state is (`node 3`, `replicated`).
    pub label: String,
    /// Its colour (`#1f77b4`).
    pub color: String,
}

/// A grid of states over rows and columns of an x axis (pages by time, say).
#[derive(Debug, Clone, PartialEq)]
pub struct Heatmap {
    /// Drawn above the grid.
    pub title: String,
    /// What the x axis is, with its unit.
    pub x_desc: String,
    /// The unit of x, for the tooltips (`s`).
    pub x_unit: String,
    /// What the rows are.
    pub y_desc: String,
    /// The columns' edges on the x axis (one more than the columns); empty for a grid
    /// of one column with no axis (a state at one moment).
    pub x_edges: Vec<f64>,
    /// Each row's label.
    pub rows: Vec<String>,
    /// The states.
    pub states: Vec<HeatState>,
    /// Per row, per column: the state (an index into `states`) and a note on it for the
    /// cell's tooltip (`7 of 8 pages`); `None` for a cell with nothing to show.
    pub cells: Vec<Vec<Option<(usize, String)>>>,
}

/// About `n` round numbers spanning `[lo, hi]`.
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater)
        || !lo.is_finite()
        || !hi.is_finite()
    {
        return vec![lo];
    }
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

impl Heatmap {
    /// The grid as an SVG document, `width` wide; runs of equal cells in a row are drawn
    /// as one rectangle, each with a tooltip naming its rows, span and state.
    pub fn svg(&self, width: u32) -> String {
        let rows = self.rows.len().max(1);
        let axis = self.x_edges.len() >= 2;
        let cols = if axis {
            self.x_edges.len() - 1
        } else {
            self.cells.first().map_or(1, Vec::len).max(1)
        };
        let (left, right, top, bottom) = (150.0, 20.0, 40.0, 56.0);
        // Whole pixels, so that rows and spans meet without seams.
        let row_h = (560.0 / rows as f64).floor().clamp(3.0, 18.0);
        let grid_w = width as f64 - left - right;
        let grid_h = row_h * rows as f64;
        let height = (top + grid_h + bottom).ceil();
        let col_w = grid_w / cols as f64;
        let (x0, x1) = (
            self.x_edges.first().copied().unwrap_or(0.0),
            self.x_edges.last().copied().unwrap_or(1.0),
        );
        let px = |x: f64| left + (x - x0) / (x1 - x0).max(f64::MIN_POSITIVE) * grid_w;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" \
             xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\">"
        );
        let _ = writeln!(
            s,
            "<rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>"
        );
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">{}</text>",
            width / 2,
            escape(&self.title)
        );
        let _ = writeln!(
            s,
            "<rect x=\"{left}\" y=\"{top}\" width=\"{}\" height=\"{}\" fill=\"#f7f7f7\" stroke=\"#999999\"/>",
            fmt_px(grid_w),
            fmt_px(grid_h)
        );
        // Cells edge to edge, without seams between rows.
        s.push_str("<g shape-rendering=\"crispEdges\">\n");
        for (r, row) in self.cells.iter().enumerate() {
            let y = top + r as f64 * row_h;
            let mut c = 0;
            while c < row.len() {
                let Some(cell) = &row[c] else {
                    c += 1;
                    continue;
                };
                let mut end = c + 1;
                while end < row.len() && row[end].as_ref() == Some(cell) {
                    end += 1;
                }
                let (state, note) = cell;
                let st = &self.states[*state];
                let span = if axis {
                    format!(
                        ", {} to {}{}{}",
                        fmt_num(self.x_edges[c]),
                        fmt_num(self.x_edges[end.min(self.x_edges.len() - 1)]),
                        if self.x_unit.is_empty() { "" } else { " " },
                        self.x_unit
                    )
                } else {
                    String::new()
                };
                let note = if note.is_empty() {
                    String::new()
                } else {
                    format!(" ({note})")
                };
                let _ = writeln!(
                    s,
                    "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{}{}: {}{}</title></rect>",
                    fmt_px((left + c as f64 * col_w).round()),
                    fmt_px(y),
                    fmt_px((left + end as f64 * col_w).round() - (left + c as f64 * col_w).round()),
                    fmt_px(row_h),
                    escape(&st.color),
                    escape(&self.rows[r]),
                    escape(&span),
                    escape(&st.label),
                    escape(&note)
                );
                c = end;
            }
        }
        s.push_str("</g>\n");
        // Row labels, spaced so that they do not overlap.
        let every = (12.0 / row_h).ceil().max(1.0) as usize;
        for (r, label) in self.rows.iter().enumerate().step_by(every) {
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\" font-size=\"11\">{}</text>",
                fmt_px(left - 6.0),
                fmt_px(top + (r as f64 + 0.5) * row_h),
                escape(label)
            );
        }
        for t in if axis { ticks(x0, x1, 8) } else { Vec::new() } {
            let x = px(t);
            let _ = writeln!(
                s,
                "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#333333\"/>\n\
                 <text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\" font-size=\"11\">{4}</text>",
                fmt_px(x),
                fmt_px(top + grid_h),
                fmt_px(top + grid_h + 5.0),
                fmt_px(top + grid_h + 18.0),
                escape(&fmt_num(t))
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">{}</text>",
            fmt_px(left + grid_w / 2.0),
            fmt_px(top + grid_h + 42.0),
            escape(&self.x_desc)
        );
        let _ = writeln!(
            s,
            "<text transform=\"rotate(-90)\" x=\"{}\" y=\"16\" text-anchor=\"middle\" font-size=\"12\">{}</text>",
            fmt_px(-(top + grid_h / 2.0)),
            escape(&self.y_desc)
        );
        s.push_str("</svg>\n");
        s
    }

    /// The states as a legend: a swatch and the words of each.
    pub fn legend(&self) -> String {
        legend(
            &self
                .states
                .iter()
                .map(|s| (s.label.as_str(), s.color.as_str()))
                .collect::<Vec<_>>(),
        )
    }
}

/// A legend of `(label, colour)` entries, the words beside each swatch.
pub fn legend(entries: &[(&str, &str)]) -> String {
    let mut out = String::from("<div class=\"legend\">");
    for (label, color) in entries {
        let _ = write!(
            out,
            "<span><span class=\"sw\" style=\"background:{}\"></span>{}</span>",
            escape(color),
            escape(label)
        );
    }
    out.push_str("</div>\n");
    out
}

/// A coordinate with at most two decimals, trailing zeros dropped.
fn fmt_px(x: f64) -> String {
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Distinct colours for `n` categories (nodes): twenty fixed ones, then hues spread
/// around the wheel.
pub fn category_colors(n: usize) -> Vec<String> {
    const TWENTY: [&str; 20] = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
        "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2",
        "#dbdb8d", "#9edae5", "#393b79", "#637939",
    ];
    if n <= TWENTY.len() {
        return TWENTY[..n].iter().map(|c| c.to_string()).collect();
    }
    (0..n)
        .map(|i| {
            let hue = (i * 360) as f64 / n as f64;
            let light = if i % 2 == 0 { 45 } else { 65 };
            format!("hsl({hue:.1},70%,{light}%)")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_replaces_the_five_characters_html_gives_meaning() {
        assert_eq!(
            escape(r#"a<b & c>"d" 'e'"#),
            "a&lt;b &amp; c&gt;&quot;d&quot; &#39;e&#39;"
        );
        assert_eq!(escape("plain ± text"), "plain ± text");
    }

    #[test]
    fn a_table_escapes_its_cells_and_right_aligns_numbers() {
        let h = vec!["name".to_string(), "value".to_string()];
        let rows = vec![vec!["<x>".to_string(), "1.5".to_string()]];
        let t = table(&h, &rows, 1);
        assert!(
            t.contains("<td>&lt;x&gt;</td><td class=\"num\">1.5</td>"),
            "{t}"
        );
    }

    #[test]
    fn an_inline_svg_carries_no_namespace_address() {
        let svg = "<svg width=\"10\" height=\"10\" viewBox=\"0 0 10 10\" xmlns=\"http://www.w3.org/2000/svg\">\n</svg>\n";
        let s = inline_svg(svg, "a < b");
        assert!(!s.contains("http"), "{s}");
        assert!(s.contains("aria-label=\"a &lt; b\""), "{s}");
    }

    #[test]
    fn ticks_are_round_and_inside_the_range() {
        let t = ticks(0.0, 1.0, 5);
        assert_eq!((t.len(), t[0], t[5]), (6, 0.0, 1.0), "{t:?}");
        let t = ticks(0.13, 2.61, 8);
        assert!(t.iter().all(|x| (0.13..=2.61).contains(x)), "{t:?}");
        assert!(t.len() >= 4, "{t:?}");
    }

    #[test]
    fn a_heatmap_merges_equal_cells_of_a_row() {
        let h = Heatmap {
            title: "t".into(),
            x_desc: "x".into(),
            x_unit: String::new(),
            y_desc: "y".into(),
            x_edges: vec![0.0, 1.0, 2.0, 3.0],
            rows: vec!["page 0".into()],
            states: vec![HeatState {
                label: "node 0".into(),
                color: "#000000".into(),
            }],
            cells: vec![vec![Some((0, String::new())); 3]],
        };
        let svg = h.svg(600);
        assert_eq!(svg.matches("<title>").count(), 1, "{svg}");
        assert!(
            svg.contains("<title>page 0, 0 to 3: node 0</title>"),
            "{svg}"
        );
        let at_end = Heatmap {
            x_edges: Vec::new(),
            cells: vec![vec![Some((0, "1 of 2 pages".into()))]],
            ..h
        };
        let svg = at_end.svg(600);
        assert!(
            svg.contains("<title>page 0: node 0 (1 of 2 pages)</title>"),
            "{svg}"
        );
    }
}
