//! A reproduction as a page: the tally, each study with its tables, figures, the
//! paper's numbers beside ours and its claims, and the calibrated inputs apart.

use std::fmt::Write;

use super::{anchor, escape, figure, table, table_aligned, verdict, Page};
use crate::claims::{ClaimResult, Status};
use crate::reproduce::{ReportedRow, ReproReport, StudyReport};
use crate::value::fmt_num;

impl ReproReport {
    /// The report as a self-contained HTML page: what [`ReproReport::render_markdown`]
    /// says, organised by study, with the figures inline and the intervals of our
    /// numbers at each study's confidence. `command` is shown as the command that made
    /// the page. The page has no date: the same report gives the same bytes.
    pub fn render_html(&self, command: &str) -> String {
        let quick = if self.quick { " (quick)" } else { "" };
        let mut page = Page::new(&format!("{}: {}{quick}", self.paper, self.title));
        page.raw("<header>\n");
        page.text("h1", &format!("{}: {}{quick}", self.paper, self.title));
        if !self.citation.is_empty() {
            page.text("p", &self.citation);
        }
        page.raw(&format!(
            "<p>Command: <code class=\"command\">{}</code></p>\n",
            escape(command)
        ));
        if self.quick {
            page.raw(
                "<p class=\"note\">Quick mode: each study at the reduced sizes and few runs of \
                 its spec's <code>[quick]</code> settings. Its intervals are wide and its \
                 verdicts say nothing about the paper.</p>\n",
            );
        }
        page.raw("</header>\n");

        self.tally_section(&mut page);
        self.contents(&mut page);
        for s in &self.studies {
            self.study_section(&mut page, s);
        }
        self.calibrated_section(&mut page);
        page.finish()
    }

    /// The verdict counts, the tally's sentence and every claim at a glance.
    fn tally_section(&self, page: &mut Page) {
        page.heading("h2", "verdicts", "Verdicts");
        let count =
            |f: &dyn Fn(&Status) -> bool| self.claims.iter().filter(|c| f(&c.status)).count();
        let boxes = [
            ("held", count(&|s| *s == Status::Held)),
            ("NOT HELD", count(&|s| *s == Status::NotHeld)),
            ("within noise", count(&|s| *s == Status::WithinNoise)),
            ("errors", count(&|s| matches!(s, Status::Error(_)))),
            ("observations", count(&|s| *s == Status::Observation)),
        ];
        page.raw("<div class=\"tally\">");
        for (label, n) in boxes {
            page.raw(&format!("<div><b>{n}</b>{}</div>", escape(label)));
        }
        page.raw("</div>\n");
        if self.claims.is_empty() {
            page.text("p", "The paper states no claims.");
            return;
        }
        page.raw(&format!(
            "<p class=\"tally-line\">{}</p>\n",
            escape(&self.tally())
        ));
        let mut rows = String::new();
        for c in &self.claims {
            let _ = writeln!(
                rows,
                "<tr><td>{}</td><td><a href=\"#claim-{}\"><code>{}</code></a></td><td>{}</td></tr>",
                verdict(&c.status),
                escape(&anchor(&c.name)),
                escape(&c.name),
                escape(&c.study)
            );
        }
        page.raw(&format!(
            "<div class=\"scroll\"><table>\n<thead><tr><th>verdict</th><th>claim</th>\
             <th>study</th></tr></thead>\n<tbody>\n{rows}</tbody>\n</table></div>\n"
        ));
    }

    /// Links to every section.
    fn contents(&self, page: &mut Page) {
        page.raw("<nav>\n<h2 id=\"contents\">Contents</h2>\n<ul>\n");
        for s in &self.studies {
            page.raw(&format!(
                "<li><a href=\"#study-{}\">Study <code>{}</code></a></li>\n",
                escape(&anchor(&s.name)),
                escape(&s.name)
            ));
        }
        page.raw("<li><a href=\"#calibrated\">Calibrated inputs</a></li>\n</ul>\n</nav>\n");
    }

    fn study_section(&self, page: &mut Page, s: &StudyReport) {
        page.raw(&format!(
            "<section class=\"study\">\n<h2 id=\"study-{}\">Study <code>{}</code></h2>\n",
            escape(&anchor(&s.name)),
            escape(&s.name)
        ));
        if !s.description.is_empty() {
            page.text("p", &s.description);
        }
        page.raw(&format!(
            "<p class=\"muted\">{}</p>\n",
            escape(&Self::study_header(s))
        ));
        page.text(
            "h3",
            &format!(
                "Our runs: {} by setting, {}% intervals",
                s.table.metric,
                fmt_num(s.table.confidence * 100.0)
            ),
        );
        page.raw(&table(
            &s.table.headers(),
            &s.table.cells(),
            s.table.group_by.len(),
        ));
        for f in &s.figures {
            page.raw(&figure(&f.svg, &format!("plot {}", f.name)));
        }
        for e in &s.plot_errors {
            page.text("p", &format!("Plot failed: {e}"));
        }
        let reported: Vec<&ReportedRow> = self
            .reported
            .iter()
            .filter(|r| r.study == s.name && r.calibrated.is_none())
            .collect();
        if !reported.is_empty() {
            page.text("h3", "The paper's numbers beside ours");
            let (h, rows) = reported_table(&reported, false);
            page.raw(&table_aligned(&h, &rows, &REPORTED_NUMERIC));
        }
        let (claims, observations): (Vec<&ClaimResult>, Vec<&ClaimResult>) = self
            .claims
            .iter()
            .filter(|c| c.study == s.name)
            .partition(|c| c.status != Status::Observation);
        if !claims.is_empty() {
            page.text("h3", "Claims");
            page.raw("<ul class=\"claims\">\n");
            for c in claims {
                page.raw(&claim_item(c));
            }
            page.raw("</ul>\n");
        }
        if !observations.is_empty() {
            page.text("h3", "Observations (no verdict)");
            page.raw("<ul class=\"claims\">\n");
            for c in observations {
                page.raw(&claim_item(c));
            }
            page.raw("</ul>\n");
        }
        page.raw("</section>\n");
    }

    /// The inputs fitted to the paper and the numbers they were fitted to, apart.
    fn calibrated_section(&self, page: &mut Page) {
        page.raw("<section class=\"calibrated\">\n");
        page.heading(
            "h2",
            "calibrated",
            "Calibrated inputs (fitted to the paper; not results)",
        );
        if self.calibrated.is_empty() {
            page.text(
                "p",
                "None: no input of the model was fitted to the paper's numbers.",
            );
        } else {
            page.text(
                "p",
                "These inputs were fitted to numbers of the paper rather than taken from it; \
                 agreement at those numbers is by construction.",
            );
            let (h, rows) = self.calibrated_table();
            page.raw(&table(&h, &rows, 4));
        }
        let points: Vec<&ReportedRow> = self
            .reported
            .iter()
            .filter(|r| r.calibrated.is_some())
            .collect();
        if !points.is_empty() {
            page.text(
                "h3",
                "Calibration points (an input was fitted to these; not agreement)",
            );
            let (h, rows) = reported_table(&points, true);
            page.raw(&table_aligned(&h, &rows, &REPORTED_NUMERIC));
        }
        page.raw("</section>\n");
    }
}

/// A claim or an observation: its verdict, name, statement and the numbers behind it.
fn claim_item(c: &ClaimResult) -> String {
    let mut out = format!(
        "<li id=\"claim-{}\">{} <span class=\"name\"><code>{}</code></span>: {}\n\
         <div class=\"detail\">{}</div>\n",
        escape(&anchor(&c.name)),
        verdict(&c.status),
        escape(&c.name),
        escape(&c.text),
        escape(&c.detail)
    );
    if let Status::Error(e) = &c.status {
        let _ = writeln!(out, "<div class=\"detail\">Error: {}</div>", escape(e));
    }
    if let Some(why) = &c.observation {
        let _ = writeln!(
            out,
            "<div class=\"detail\">No verdict: {}</div>",
            escape(why)
        );
    }
    out.push_str("</li>\n");
    out
}

/// Which columns of [`reported_table`] are numbers.
const REPORTED_NUMERIC: [bool; 10] = [
    false, false, false, false, true, true, true, true, true, false,
];

/// The paper's numbers beside ours, with our interval at the study's confidence.
fn reported_table(rows: &[&ReportedRow], calibration: bool) -> (Vec<String>, Vec<Vec<String>>) {
    let level = rows.first().map_or(String::from("CI"), |r| {
        format!("{}% CI", fmt_num(r.confidence * 100.0))
    });
    let same_level = rows
        .iter()
        .all(|r| Some(r.confidence) == rows.first().map(|f| f.confidence));
    let headers = [
        "where",
        "row",
        "metric",
        "unit",
        "paper",
        "ours",
        if same_level { level.as_str() } else { "CI" },
        "n",
        "ours/paper",
        if calibration { "fitted" } else { "note" },
    ]
    .map(String::from)
    .to_vec();
    let cells = rows
        .iter()
        .map(|r| {
            vec![
                r.table.clone(),
                r.row.clone(),
                r.metric.clone(),
                r.unit.clone(),
                fmt_num(r.theirs),
                r.ours.map(fmt_num).unwrap_or_else(|| "-".into()),
                match r.ci {
                    Some(h) if same_level => format!("±{}", fmt_num(h)),
                    Some(h) => format!("±{} ({}%)", fmt_num(h), fmt_num(r.confidence * 100.0)),
                    None => "-".into(),
                },
                r.n.to_string(),
                r.ratio_cell(),
                r.note_cell(),
            ]
        })
        .collect();
    (headers, cells)
}
