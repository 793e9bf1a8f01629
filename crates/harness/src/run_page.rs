//! A run's record (what `run --json` writes) as a self-contained HTML page: its numbers,
//! where its pages were over time (a heatmap, from the record's `locations`), the pages
//! each node held over time, its remote references per iteration, its busiest pages and
//! its configuration.

use crate::locations::Locations;
use anyhow::{bail, Context};
use numaplace_study::html::{
    category_colors, escape, figure, legend, table, HeatState, Heatmap, Page,
};
use numaplace_study::plot::{figure_svg, Figure, PlotLine, DEFAULT_SIZE};
use numaplace_study::value::fmt_num;
use serde_json::Value;
use std::io::BufRead;
use std::path::Path;

/// Most rows of the heatmap: more pages than this are drawn in groups of consecutive
/// pages.
const MAX_ROWS: usize = 128;
/// Columns of the heatmap (spans of simulated time).
const COLUMNS: usize = 100;

/// Whether `v` is a run's record (not a line of a results file, whose run sits under
/// `result`).
pub fn is_run_record(v: &Value) -> bool {
    v.get("makespan_ns").is_some() && v.get("config").is_some() && v.get("result").is_none()
}

/// The run's record in `path`, or `None` when the file is something else (a results
/// file of a sweep). Only the first line is read of a file that is not a record.
pub fn read_run_record(path: &Path) -> anyhow::Result<Option<Value>> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut first = String::new();
    std::io::BufReader::new(file)
        .read_line(&mut first)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let candidate = if first.trim() == "{" {
        // Pretty JSON, as `run --json` writes it: the whole file is one value.
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_str::<Value>(&text).ok()
    } else {
        serde_json::from_str::<Value>(first.trim()).ok()
    };
    Ok(candidate.filter(is_run_record))
}

fn num(v: &Value, path: &str) -> Option<f64> {
    path.split('.')
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_f64)
}

fn count(v: &Value, path: &str) -> String {
    num(v, path).map(fmt_num).unwrap_or_else(|| "-".into())
}

fn seconds(ns: f64) -> String {
    format!("{:.6} s", ns * 1e-9)
}

fn share(part: f64, total: f64) -> String {
    if total > 0.0 {
        format!("{:.1}%", part / total * 100.0)
    } else {
        "-".into()
    }
}

/// `config.F` as text, `-` when absent.
fn config_text(rec: &Value, path: &str) -> String {
    match path.split('.').try_fold(&rec["config"], |v, k| v.get(k)) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "-".into(),
        Some(v) => v.to_string(),
    }
}

/// What ran: the workload (or each program's), the policy and the machine.
fn what_ran(rec: &Value) -> String {
    let workload = match rec["config"].get("programs").and_then(Value::as_array) {
        Some(progs) if !progs.is_empty() => progs
            .iter()
            .map(|p| {
                p.pointer("/workload/kind")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join(" + "),
        _ => config_text(rec, "workload.kind"),
    };
    let machine = match config_text(rec, "machine.preset") {
        m if m == "-" => format!("{} nodes", config_text(rec, "machine.nodes")),
        m => m,
    };
    format!(
        "{workload} under {} on {machine}",
        config_text(rec, "policy.kind")
    )
}

/// The run's record as a page; `command` is shown as the command that made it. The
/// same record gives the same bytes.
pub fn render(rec: &Value, command: &str) -> anyhow::Result<String> {
    if !is_run_record(rec) {
        bail!("not a run's record (it has no makespan_ns and config)");
    }
    let title = format!("Run: {}", what_ran(rec));
    let mut page = Page::new(&title);
    page.text("h1", &title);
    if !command.is_empty() {
        page.raw(&format!(
            "<p>Command: <code class=\"command\">{}</code></p>\n",
            escape(command)
        ));
    }
    page.text(
        "p",
        &format!(
            "Machine {} ({} nodes x {} processors), scheduler {}, seed {}.",
            config_text(rec, "machine.preset"),
            config_text(rec, "machine.nodes"),
            config_text(rec, "machine.procs_per_node"),
            config_text(rec, "scheduler.kind"),
            config_text(rec, "seed"),
        ),
    );
    if rec.get("partial") == Some(&Value::Bool(true)) {
        page.raw("<p class=\"note\">The run was stopped: its numbers are partial.</p>\n");
    }
    if rec.get("finished") == Some(&Value::Bool(false)) {
        page.raw(
            "<p class=\"note\">The run did not finish within its simulated-time budget.</p>\n",
        );
    }
    numbers(&mut page, rec);
    placement(&mut page, rec);
    series(&mut page, rec);
    programs(&mut page, rec);
    busiest_pages(&mut page, rec);
    page.heading("h2", "configuration", "Configuration");
    page.raw(&format!(
        "<details><summary>The fully resolved configuration (JSON)</summary><pre>{}</pre></details>\n",
        escape(&serde_json::to_string_pretty(&rec["config"]).unwrap_or_default())
    ));
    Ok(page.finish())
}

fn numbers(page: &mut Page, rec: &Value) {
    page.heading("h2", "numbers", "Numbers");
    let total = num(rec, "refs.total").unwrap_or(0.0);
    let refs = |k: &str| {
        let n = num(rec, &format!("refs.{k}")).unwrap_or(0.0);
        vec![format!("references, {k}"), fmt_num(n), share(n, total)]
    };
    let mut rows = vec![
        vec![
            "makespan".to_string(),
            num(rec, "makespan_ns").map(seconds).unwrap_or_default(),
            String::new(),
        ],
        vec!["references".to_string(), fmt_num(total), String::new()],
        refs("local"),
        refs("remote"),
        refs("cached"),
    ];
    for (key, label) in [
        ("faults", "faults"),
        ("migrations", "migrations"),
        ("replications", "replications"),
        ("coherency_faults", "coherency faults"),
        ("invalidations", "invalidations"),
        ("freezes", "freezes"),
        ("defrosts", "defrosts"),
        ("refused", "refused (no frame)"),
    ] {
        if rec.get(key).is_some() {
            rows.push(vec![label.to_string(), count(rec, key), String::new()]);
        }
    }
    page.raw(&table(
        &["quantity", "value", "share"].map(String::from),
        &rows,
        1,
    ));
}

/// Pages of the run: from the per-page report, the programs and the locations.
fn page_count(rec: &Value, loc: Option<&Locations>) -> usize {
    let reported = rec["pages"].as_array().map_or(0, Vec::len);
    let programs: u64 = rec["programs"]
        .as_array()
        .map_or(0, |p| p.iter().filter_map(|p| p["pages"].as_u64()).sum());
    let seen = loc
        .and_then(|l| l.changes.iter().map(|c| c.vpn as usize + 1).max())
        .unwrap_or(0);
    reported.max(programs as usize).max(seen)
}

/// The arrays on each page, from the per-page report (empty names without one).
fn page_data(rec: &Value, npages: usize) -> Vec<String> {
    let mut data = vec![String::new(); npages];
    for p in rec["pages"].as_array().into_iter().flatten() {
        if let (Some(v), Some(d)) = (p["vpn"].as_u64(), p["data"].as_str()) {
            if let Some(slot) = data.get_mut(v as usize) {
                *slot = d.to_string();
            }
        }
    }
    data
}

/// Rows of consecutive pages: `(first, last)` of each.
fn page_rows(npages: usize) -> Vec<(usize, usize)> {
    let per_row = npages.div_ceil(MAX_ROWS).max(1);
    (0..npages.div_ceil(per_row))
        .map(|r| (r * per_row, ((r + 1) * per_row).min(npages) - 1))
        .collect()
}

fn row_label(first: usize, last: usize, data: &[String]) -> String {
    let pages = if first == last {
        format!("page {first}")
    } else {
        format!("pages {first}-{last}")
    };
    let name = &data[first];
    if !name.is_empty() && data[first..=last].iter().all(|d| d == name) {
        format!("{pages} {name}")
    } else {
        pages
    }
}

/// The states of the heatmap: one per node, then replicated.
fn states(nodes: usize) -> Vec<HeatState> {
    let mut s: Vec<HeatState> = category_colors(nodes)
        .into_iter()
        .enumerate()
        .map(|(i, color)| HeatState {
            label: format!("node {i}"),
            color,
        })
        .collect();
    s.push(HeatState {
        label: "replicated (copies on several nodes)".into(),
        color: "#3a3a3a".into(),
    });
    s
}

/// A page's state for a set of nodes: its node, or replicated.
fn state_of(nodes: &[u16], n_nodes: usize) -> Option<usize> {
    match nodes {
        [] => None,
        [one] => Some((*one as usize).min(n_nodes.saturating_sub(1))),
        _ => Some(n_nodes),
    }
}

/// The heatmap of pages by time and the pages each node held over time, from the
/// locations.
fn located(rec: &Value, loc: &Locations, n_nodes: usize) -> (Heatmap, Figure) {
    let npages = page_count(rec, Some(loc));
    let data = page_data(rec, npages);
    let rows = page_rows(npages);
    let row_of: Vec<usize> = rows
        .iter()
        .enumerate()
        .flat_map(|(r, &(a, b))| std::iter::repeat_n(r, b - a + 1))
        .collect();
    let makespan = num(rec, "makespan_ns")
        .unwrap_or(0.0)
        .max(loc.changes.last().map_or(0.0, |c| c.time_ns as f64))
        .max(1.0);
    let n_states = n_nodes + 1;
    // Per row, the pages in each state (the last slot: not seen yet).
    let mut counts = vec![0u32; rows.len() * (n_states + 1)];
    for (r, &(a, b)) in rows.iter().enumerate() {
        counts[r * (n_states + 1) + n_states] = (b - a + 1) as u32;
    }
    let mut state: Vec<usize> = vec![n_states; npages];
    let mut on: Vec<Vec<u16>> = vec![Vec::new(); npages];
    let mut held = vec![0i64; n_nodes];
    let mut cells = vec![Vec::with_capacity(COLUMNS); rows.len()];
    let mut resident: Vec<Vec<(f64, f64, f64, f64)>> = vec![Vec::new(); n_nodes];
    let mut next = 0;
    let edges: Vec<f64> = (0..=COLUMNS)
        .map(|i| makespan * i as f64 / COLUMNS as f64)
        .collect();
    for col in 0..COLUMNS {
        let end = edges[col + 1];
        let last = col + 1 == COLUMNS;
        while next < loc.changes.len() && ((loc.changes[next].time_ns as f64) < end || last) {
            let c = &loc.changes[next];
            next += 1;
            let page = c.vpn as usize;
            let r = row_of[page];
            let new = state_of(&c.nodes, n_nodes).unwrap_or(n_states);
            counts[r * (n_states + 1) + state[page]] -= 1;
            counts[r * (n_states + 1) + new] += 1;
            state[page] = new;
            for &n in &on[page] {
                held[(n as usize).min(n_nodes - 1)] -= 1;
            }
            for &n in &c.nodes {
                held[(n as usize).min(n_nodes - 1)] += 1;
            }
            on[page] = c.nodes.clone();
        }
        for (r, &(a, b)) in rows.iter().enumerate() {
            let row = &counts[r * (n_states + 1)..(r + 1) * (n_states + 1)];
            // The state most of the row's pages are in (the lowest on a tie); nothing
            // while most have not been seen.
            let (best, k) =
                row.iter()
                    .enumerate()
                    .fold((0, 0), |acc, (i, &k)| if k > acc.1 { (i, k) } else { acc });
            let size = b - a + 1;
            cells[r].push((best < n_states).then(|| {
                let note = if size == 1 {
                    String::new()
                } else {
                    format!("{k} of {size} pages")
                };
                (best, note)
            }));
        }
        for (n, line) in resident.iter_mut().enumerate() {
            let y = held[n] as f64;
            line.push((end * 1e-9, y, y, y));
        }
    }
    let per_row = rows.first().map_or(1, |&(a, b)| b - a + 1);
    let heat = Heatmap {
        title: "Where each page was (as its references saw it)".into(),
        x_desc: "simulated time (s)".into(),
        x_unit: "s".into(),
        y_desc: if per_row == 1 {
            "page".into()
        } else {
            format!("pages, {per_row} to a row")
        },
        x_edges: edges.iter().map(|e| e * 1e-9).collect(),
        rows: rows.iter().map(|&(a, b)| row_label(a, b, &data)).collect(),
        states: states(n_nodes),
        cells,
    };
    let fig = Figure {
        title: "Pages with a copy on each node".into(),
        x_desc: "simulated time (s)".into(),
        y_desc: "pages".into(),
        lines: resident
            .into_iter()
            .enumerate()
            .map(|(n, points)| PlotLine {
                label: format!("node {n}"),
                points,
            })
            .collect(),
        band: false,
        bars: false,
        x_labels: Vec::new(),
        levels: Vec::new(),
    };
    (heat, fig)
}

/// Where the pages were: over time from `locations`, else at the end from the per-page
/// report.
fn placement(page: &mut Page, rec: &Value) {
    page.heading("h2", "placement", "Where the pages were");
    let n_nodes = num(rec, "config.machine.nodes").unwrap_or(1.0).max(1.0) as usize;
    let loc = rec.get("locations").and_then(Locations::from_json);
    match loc {
        Some(loc) => {
            page.text(
                "p",
                &format!(
                    "Each row is a page (or a group of consecutive pages), each column a \
                     hundredth of the run's {}. A cell's colour is the node that held the \
                     page when its references last saw it (in a group: where most of its \
                     pages were; the cell's tooltip gives how many); dark grey: copies on \
                     several nodes; blank: no reference seen yet. A page moved without a \
                     reference shows at its new place from its next reference on.",
                    seconds(num(rec, "makespan_ns").unwrap_or(0.0))
                ),
            );
            let (heat, fig) = located(rec, &loc, n_nodes);
            let mut entries: Vec<(&str, &str)> = heat
                .states
                .iter()
                .map(|s| (s.label.as_str(), s.color.as_str()))
                .collect();
            entries.push(("no reference seen yet", "#f7f7f7"));
            page.raw(&figure(
                &heat.svg(DEFAULT_SIZE.0),
                "pages by simulated time, coloured by the node holding each",
            ));
            page.raw(&legend(&entries));
            page.text(
                "p",
                &format!(
                    "{} changes of location seen ({} pages).",
                    loc.changes.len(),
                    page_count(rec, Some(&loc))
                ),
            );
            if n_nodes <= 32 {
                match figure_svg(&fig, DEFAULT_SIZE) {
                    Ok(svg) => page.raw(&figure(
                        &svg,
                        "pages with a copy on each node, at the end of each column's span",
                    )),
                    Err(e) => page.text("p", &format!("Plot failed: {e:#}")),
                }
            }
        }
        None => {
            page.raw(
                "<p>This record has no locations over time (<code>numaplace run \
                 --locations</code> or <code>--html</code> records them). Below: where each \
                 page was at the end of the run, from the per-page report.</p>\n",
            );
            end_placement(page, rec, n_nodes);
        }
    }
}

/// Each page's node at the end of the run, from the per-page report.
fn end_placement(page: &mut Page, rec: &Value, n_nodes: usize) {
    let Some(pages) = rec["pages"].as_array().filter(|p| !p.is_empty()) else {
        page.text("p", "The record has no per-page report either.");
        return;
    };
    let npages = page_count(rec, None);
    let data = page_data(rec, npages);
    let rows = page_rows(npages);
    let mut state: Vec<Option<usize>> = vec![None; npages];
    for p in pages {
        let (Some(v), Some(home), Some(copies)) =
            (p["vpn"].as_u64(), p["home"].as_u64(), p["copies"].as_u64())
        else {
            continue;
        };
        if let Some(slot) = state.get_mut(v as usize) {
            *slot = match copies {
                0 => None,
                1 => Some((home as usize).min(n_nodes - 1)),
                _ => Some(n_nodes),
            };
        }
    }
    let n_states = n_nodes + 1;
    let cells = rows
        .iter()
        .map(|&(a, b)| {
            let mut k = vec![0usize; n_states];
            for s in state[a..=b].iter().flatten() {
                k[*s] += 1;
            }
            let (best, n) = k
                .iter()
                .enumerate()
                .fold((0, 0), |acc, (i, &n)| if n > acc.1 { (i, n) } else { acc });
            let size = b - a + 1;
            let note = if size == 1 {
                String::new()
            } else {
                format!("{n} of {size} pages")
            };
            vec![(n > 0).then_some((best, note))]
        })
        .collect();
    let per_row = rows.first().map_or(1, |&(a, b)| b - a + 1);
    let heat = Heatmap {
        title: "Where each page was at the end".into(),
        x_desc: "at the end of the run".into(),
        x_unit: String::new(),
        y_desc: if per_row == 1 {
            "page".into()
        } else {
            format!("pages, {per_row} to a row")
        },
        x_edges: Vec::new(),
        rows: rows.iter().map(|&(a, b)| row_label(a, b, &data)).collect(),
        states: states(n_nodes),
        cells,
    };
    page.raw(&figure(
        &heat.svg(420),
        "each page's node at the end of the run",
    ));
    page.raw(&heat.legend());
}

/// The share of remote references per iteration, from the record's `series`.
fn series(page: &mut Page, rec: &Value) {
    page.heading("h2", "series", "Remote references over time");
    let Some(points) = rec["series"].as_array().filter(|s| !s.is_empty()) else {
        page.text("p", "The record has no series.");
        return;
    };
    let mut lines: Vec<PlotLine> = Vec::new();
    let names: Vec<String> = rec["programs"]
        .as_array()
        .map(|p| {
            p.iter()
                .map(|p| p["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    for p in points {
        let program = p["program"].as_u64().unwrap_or(0) as usize;
        let (Some(t), Some(remote), Some(total)) = (
            num(p, "time_ns"),
            num(p, "program_refs.remote").or_else(|| num(p, "refs.remote")),
            num(p, "program_refs.total").or_else(|| num(p, "refs.total")),
        ) else {
            continue;
        };
        if total <= 0.0 {
            continue;
        }
        let label = match names.get(program) {
            Some(n) if !n.is_empty() => format!("program {program}: {n}"),
            _ => format!("program {program}"),
        };
        let y = remote / total * 100.0;
        match lines.iter_mut().find(|l| l.label == label) {
            Some(l) => l.points.push((t * 1e-9, y, y, y)),
            None => lines.push(PlotLine {
                label,
                points: vec![(t * 1e-9, y, y, y)],
            }),
        }
    }
    if lines.is_empty() {
        page.text("p", "The series has no references.");
        return;
    }
    let fig = Figure {
        title: "Remote references per iteration".into(),
        x_desc: "simulated time at the iteration's end (s)".into(),
        y_desc: "remote references (% of the iteration's)".into(),
        lines,
        band: false,
        bars: false,
        x_labels: Vec::new(),
        levels: Vec::new(),
    };
    match figure_svg(&fig, DEFAULT_SIZE) {
        Ok(svg) => page.raw(&figure(
            &svg,
            "the share of each iteration's references that were remote",
        )),
        Err(e) => page.text("p", &format!("Plot failed: {e:#}")),
    }
}

fn programs(page: &mut Page, rec: &Value) {
    let Some(progs) = rec["programs"].as_array().filter(|p| p.len() > 1) else {
        return;
    };
    page.heading("h2", "programs", "Programs");
    let rows: Vec<Vec<String>> = progs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let total = num(p, "refs.total").unwrap_or(0.0);
            vec![
                i.to_string(),
                p["name"].as_str().unwrap_or("").to_string(),
                count(p, "threads"),
                num(p, "start_ns").map(seconds).unwrap_or_default(),
                num(p, "turnaround_ns").map(seconds).unwrap_or_default(),
                fmt_num(total),
                share(num(p, "refs.remote").unwrap_or(0.0), total),
                count(p, "faults"),
                count(p, "migrations"),
            ]
        })
        .collect();
    page.raw(&table(
        &[
            "program",
            "name",
            "threads",
            "start",
            "turnaround",
            "references",
            "remote",
            "faults",
            "migrations",
        ]
        .map(String::from),
        &rows,
        2,
    ));
}

/// The ten pages with the most faults, as `run --pages 10` lists them.
fn busiest_pages(page: &mut Page, rec: &Value) {
    let Some(pages) = rec["pages"].as_array().filter(|p| !p.is_empty()) else {
        return;
    };
    page.heading("h2", "pages", "The pages with the most faults");
    let mut order: Vec<&Value> = pages.iter().collect();
    order.sort_by(|a, b| {
        let f = |p: &Value| p["faults"].as_u64().unwrap_or(0);
        f(b).cmp(&f(a))
            .then(a["vpn"].as_u64().cmp(&b["vpn"].as_u64()))
    });
    let rows: Vec<Vec<String>> = order
        .iter()
        .take(10)
        .map(|p| {
            vec![
                count(p, "vpn"),
                p["data"].as_str().unwrap_or("").to_string(),
                count(p, "faults"),
                count(p, "migrations"),
                count(p, "replications"),
                count(p, "coherency_faults"),
                count(p, "freezes"),
                count(p, "refs.local"),
                count(p, "refs.remote"),
                count(p, "home"),
                count(p, "copies"),
            ]
        })
        .collect();
    page.raw(&table(
        &[
            "page",
            "data",
            "faults",
            "migrations",
            "replications",
            "coherency faults",
            "freezes",
            "local refs",
            "remote refs",
            "home at end",
            "copies at end",
        ]
        .map(String::from),
        &rows,
        2,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{resolve, Overrides};

    fn record(located: bool) -> Value {
        let ov = Overrides {
            workload: Some("gauss".into()),
            policy: Some("platinum".into()),
            sets: vec!["workload.n=64".into()],
            ..Default::default()
        };
        let cfg = resolve(None, &ov).unwrap();
        let (stats, data, loc) = crate::locations::run_located(&cfg, None).unwrap();
        let mut rec = crate::result::stats_json(&cfg, &stats, &data);
        if located {
            crate::locations::add_to_record(&mut rec, &loc);
        }
        rec
    }

    #[test]
    fn a_run_with_locations_gets_its_heatmap_and_the_same_bytes_twice() {
        let rec = record(true);
        let page = render(&rec, "numaplace run --html run.html").unwrap();
        assert_eq!(page, render(&rec, "numaplace run --html run.html").unwrap());
        assert!(page.contains("Where each page was (as its references saw it)"));
        assert!(page.contains("<svg"));
        assert!(
            page.contains("<title>page 0 matrix, 0 to "),
            "each cell says what it shows"
        );
        assert!(page.contains("Remote references per iteration"));
        assert!(!page.contains("http://") && !page.contains("https://"));
    }

    #[test]
    fn a_run_without_locations_shows_where_pages_ended() {
        let page = render(&record(false), "").unwrap();
        assert!(page.contains("Where each page was at the end"));
        assert!(page.contains("has no locations over time"));
    }

    #[test]
    fn many_pages_are_drawn_in_groups() {
        let rows = page_rows(1000);
        assert!(rows.len() <= MAX_ROWS);
        assert_eq!(rows.first(), Some(&(0, 7)));
        assert_eq!(rows.last().map(|r| r.1), Some(999));
    }

    #[test]
    fn a_results_line_is_not_a_run_record() {
        assert!(!is_run_record(
            &serde_json::json!({"id": "r0", "result": {"makespan_ns": 1}})
        ));
        assert!(is_run_record(
            &serde_json::json!({"makespan_ns": 1, "config": {}})
        ));
    }
}
