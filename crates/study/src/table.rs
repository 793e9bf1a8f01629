//! Summary tables over records grouped by configuration fields, rendered as
//! aligned text, Markdown or CSV; plus CSV export of raw per-run records.

use std::path::Path;

use anyhow::Context;
use serde::Serialize;
use serde_json::Value;

use crate::stats::Summary;
use crate::store::Record;
use crate::value::{fmt_num, label, values_equal};

/// What to summarize and how.
#[derive(Debug, Clone, PartialEq)]
pub struct TableOptions {
    /// Metric: dotted path into each result (e.g. `makespan_ns`).
    pub metric: String,
    /// Configuration fields whose values name the rows.
    pub group_by: Vec<String>,
    /// Baseline selector: each row is compared with the row that has the
    /// same values except these fields set to these values.
    pub baseline: Vec<(String, Value)>,
    /// Confidence level of the interval column (e.g. 0.99).
    pub confidence: f64,
}

impl TableOptions {
    /// The paths of a result a summary with these options reads: the metric,
    /// and `config.F` for every grouping and baseline field `F` (a field that
    /// was not swept is read from the configuration the runner reported). See
    /// [`crate::sweep::SweepOptions::keep`].
    pub fn result_paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = crate::value::metric_paths(&self.metric)
            .into_iter()
            .map(str::to_string)
            .collect();
        // Whether a run finished decides whether its metric counts.
        paths.extend(
            crate::store::UNFINISHED_METRICS
                .iter()
                .map(|m| m.to_string()),
        );
        let fields = self
            .group_by
            .iter()
            .chain(self.baseline.iter().map(|(f, _)| f));
        for f in fields {
            let p = format!("config.{f}");
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
        paths
    }
}

/// One row: a group of runs with equal group-field values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRow {
    /// Group-field values, in `group_by` order (`null` when a run lacks it).
    pub key: Vec<Value>,
    /// Statistics of the metric (`None` when no run had it).
    pub summary: Option<Summary>,
    /// Runs of the group that failed or lacked the metric.
    pub missing: usize,
    /// Runs of the group that did not finish (stopped, or out of their simulated-time
    /// budget): their numbers are left out of the statistics.
    pub unfinished: usize,
    /// Relative difference of the mean against the baseline row, percent.
    pub rel_pct: Option<f64>,
    /// Whether this row is its own baseline.
    pub is_baseline: bool,
    /// Mean regret of the group's runs that were solved against the offline optimum
    /// (the policy's cost over the optimum's, in the oracle's model; a point with an
    /// `[oracle]` table), `None` when none was.
    pub regret: Option<f64>,
    /// Whether `regret` is only an upper bound (the runs' `regret_at_most`: a policy that
    /// replicated, whose replication model was not solved exactly).
    pub regret_at_most: bool,
}

/// A summary table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryTable {
    /// Summarized metric.
    pub metric: String,
    /// Grouping fields (column headers of the key).
    pub group_by: Vec<String>,
    /// Confidence level of `ci_half`.
    pub confidence: f64,
    /// Whether a baseline was requested.
    pub has_baseline: bool,
    /// Rows in order of first appearance (records sorted by index give axis
    /// order).
    pub rows: Vec<SummaryRow>,
}

/// Groups records by `fields` (in order of first appearance).
pub fn group_records<'a>(
    records: &'a [Record],
    fields: &[String],
) -> Vec<(Vec<Value>, Vec<&'a Record>)> {
    let mut groups: Vec<(Vec<Value>, Vec<&Record>)> = Vec::new();
    for r in records {
        let key: Vec<Value> = fields
            .iter()
            .map(|f| r.field(f).unwrap_or(Value::Null))
            .collect();
        match groups.iter_mut().find(|(k, _)| keys_equal(k, &key)) {
            Some((_, members)) => members.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    groups
}

fn keys_equal(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| values_equal(x, y))
}

/// Builds the summary table of `records`.
pub fn summarize(records: &[Record], opts: &TableOptions) -> SummaryTable {
    let mut rows: Vec<SummaryRow> = group_records(records, &opts.group_by)
        .into_iter()
        .map(|(key, members)| {
            let values: Vec<f64> = members
                .iter()
                .filter_map(|r| r.metric(&opts.metric))
                .collect();
            let regrets: Vec<f64> = members.iter().filter_map(|r| r.metric("regret")).collect();
            let bounds: Vec<f64> = members
                .iter()
                .filter_map(|r| r.metric("regret_at_most"))
                .collect();
            // Exact regrets when every solved run has one; else the runs' upper bounds.
            let (regret, regret_at_most) = if regrets.len() >= bounds.len() {
                (crate::stats::mean(&regrets), false)
            } else {
                (crate::stats::mean(&bounds), true)
            };
            let unfinished = members.iter().filter(|r| r.ok() && !r.finished()).count();
            SummaryRow {
                key,
                summary: Summary::of(&values, opts.confidence),
                missing: members.len() - values.len() - unfinished,
                unfinished,
                rel_pct: None,
                is_baseline: false,
                regret,
                regret_at_most,
            }
        })
        .collect();
    if !opts.baseline.is_empty() {
        let keys: Vec<Vec<Value>> = rows.iter().map(|r| r.key.clone()).collect();
        let means: Vec<Option<f64>> = rows.iter().map(|r| r.summary.map(|s| s.mean)).collect();
        for row in rows.iter_mut() {
            let mut target = row.key.clone();
            let mut applicable = false;
            for (field, value) in &opts.baseline {
                if let Some(pos) = opts.group_by.iter().position(|g| g == field) {
                    target[pos] = value.clone();
                    applicable = true;
                }
            }
            if !applicable {
                continue;
            }
            row.is_baseline = keys_equal(&target, &row.key);
            let base = keys
                .iter()
                .position(|k| keys_equal(k, &target))
                .and_then(|i| means[i]);
            if let (Some(b), Some(s)) = (base, row.summary) {
                if b != 0.0 {
                    row.rel_pct = Some((s.mean - b) / b * 100.0);
                }
            }
        }
    }
    SummaryTable {
        metric: opts.metric.clone(),
        group_by: opts.group_by.clone(),
        confidence: opts.confidence,
        has_baseline: !opts.baseline.is_empty(),
        rows,
    }
}

fn opt_num(x: Option<f64>) -> String {
    x.map(fmt_num).unwrap_or_else(|| "-".to_string())
}

impl SummaryTable {
    /// Column headers.
    pub fn headers(&self) -> Vec<String> {
        let mut h: Vec<String> = self.group_by.clone();
        let pct = self.confidence * 100.0;
        h.extend([
            "n".to_string(),
            format!("mean {}", self.metric),
            "sd".to_string(),
            format!("±{}% CI", fmt_num(pct)),
            "min".to_string(),
            "max".to_string(),
        ]);
        if self.rows.iter().any(|r| r.missing > 0) {
            h.push("failed".to_string());
        }
        if self.has_unfinished() {
            h.push("did not finish".to_string());
        }
        if self.has_baseline {
            h.push("vs baseline".to_string());
        }
        if self.has_regret() {
            h.push("regret".to_string());
        }
        h
    }

    /// Whether any run did not finish (stopped, or out of its simulated-time budget).
    pub fn has_unfinished(&self) -> bool {
        self.rows.iter().any(|r| r.unfinished > 0)
    }

    /// Whether any row has a regret (its runs were solved against the optimum).
    pub fn has_regret(&self) -> bool {
        self.rows.iter().any(|r| r.regret.is_some())
    }

    /// Cells of each row as display strings.
    pub fn cells(&self) -> Vec<Vec<String>> {
        let show_missing = self.rows.iter().any(|r| r.missing > 0);
        self.rows
            .iter()
            .map(|r| {
                let mut c: Vec<String> = r.key.iter().map(label).collect();
                match &r.summary {
                    Some(s) => c.extend([
                        s.n.to_string(),
                        fmt_num(s.mean),
                        opt_num(s.sd),
                        opt_num(s.ci_half),
                        fmt_num(s.min),
                        fmt_num(s.max),
                    ]),
                    None => c.extend(["0", "-", "-", "-", "-", "-"].map(String::from)),
                }
                if show_missing {
                    c.push(r.missing.to_string());
                }
                if self.has_unfinished() {
                    c.push(r.unfinished.to_string());
                }
                if self.has_baseline {
                    c.push(if r.is_baseline {
                        "baseline".to_string()
                    } else {
                        r.rel_pct
                            .map(|p| format!("{p:+.1}%"))
                            .unwrap_or_else(|| "-".to_string())
                    });
                }
                if self.has_regret() {
                    c.push(match r.regret {
                        Some(x) if r.regret_at_most => format!("<= {x:.3}"),
                        Some(x) => format!("{x:.3}"),
                        None => "-".to_string(),
                    });
                }
                c
            })
            .collect()
    }

    /// Renders as aligned plain text (key columns left-aligned, numbers
    /// right-aligned).
    pub fn render_text(&self) -> String {
        render_aligned(&self.headers(), &self.cells(), self.group_by.len())
    }

    /// Renders as a Markdown table.
    pub fn render_markdown(&self) -> String {
        render_markdown(&self.headers(), &self.cells(), self.group_by.len())
    }

    /// Renders as CSV with full-precision numbers.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        let mut h: Vec<String> = self.group_by.clone();
        h.extend(
            [
                "n",
                "mean",
                "sd",
                "ci_half",
                "confidence",
                "min",
                "max",
                "failed",
                "rel_pct",
            ]
            .map(String::from),
        );
        let unfinished = self.has_unfinished();
        if unfinished {
            h.push("unfinished".to_string());
        }
        let regret = self.has_regret();
        if regret {
            h.push("regret".to_string());
        }
        push_csv_row(&mut out, &h);
        let num = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
        for r in &self.rows {
            let mut c: Vec<String> = r.key.iter().map(csv_value).collect();
            let s = r.summary.as_ref();
            c.push(s.map(|s| s.n).unwrap_or(0).to_string());
            c.push(num(s.map(|s| s.mean)));
            c.push(num(s.and_then(|s| s.sd)));
            c.push(num(s.and_then(|s| s.ci_half)));
            c.push(self.confidence.to_string());
            c.push(num(s.map(|s| s.min)));
            c.push(num(s.map(|s| s.max)));
            c.push(r.missing.to_string());
            c.push(num(r.rel_pct));
            if unfinished {
                c.push(r.unfinished.to_string());
            }
            if regret {
                c.push(num(r.regret));
            }
            push_csv_row(&mut out, &c);
        }
        out
    }

    /// Writes [`SummaryTable::to_csv`] to a file.
    pub fn write_csv(&self, path: &Path) -> anyhow::Result<()> {
        std::fs::write(path, self.to_csv())
            .with_context(|| format!("cannot write {}", path.display()))
    }
}

/// Renders rows as aligned text; the first `left` columns are left-aligned.
pub fn render_aligned(headers: &[String], rows: &[Vec<String>], left: usize) -> String {
    let ncol = headers.len();
    let mut width: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(ncol) {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let fmt_row = |cells: &[String]| -> String {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .take(ncol)
            .map(|(i, c)| {
                if i < left {
                    format!("{c:<w$}", w = width[i])
                } else {
                    format!("{c:>w$}", w = width[i])
                }
            })
            .collect();
        parts.join("  ").trim_end().to_string()
    };
    let mut out = fmt_row(headers);
    out.push('\n');
    let rule: Vec<String> = width.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&rule.join("  "));
    out.push('\n');
    for r in rows {
        out.push_str(&fmt_row(r));
        out.push('\n');
    }
    out
}

/// Renders rows as a Markdown table; the first `left` columns are
/// left-aligned, the rest right-aligned.
pub fn render_markdown(headers: &[String], rows: &[Vec<String>], left: usize) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut out = String::new();
    out.push_str("| ");
    out.push_str(
        &headers
            .iter()
            .map(|h| esc(h))
            .collect::<Vec<_>>()
            .join(" | "),
    );
    out.push_str(" |\n|");
    for i in 0..headers.len() {
        out.push_str(if i < left { " --- |" } else { " ---: |" });
    }
    out.push('\n');
    for r in rows {
        out.push_str("| ");
        out.push_str(&r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | "));
        out.push_str(" |\n");
    }
    out
}

fn csv_escape(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn csv_value(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn push_csv_row(out: &mut String, cells: &[String]) {
    let line: Vec<String> = cells.iter().map(|c| csv_escape(c)).collect();
    out.push_str(&line.join(","));
    out.push('\n');
}

/// CSV of raw per-run records: `id,index,seed`, one column per setting (in
/// order of first appearance), one per metric, then `error`.
pub fn records_csv(records: &[Record], metrics: &[String]) -> String {
    let mut setting_keys: Vec<String> = Vec::new();
    for r in records {
        for k in r.settings.keys() {
            if !setting_keys.contains(k) {
                setting_keys.push(k.clone());
            }
        }
    }
    let mut out = String::new();
    let mut h: Vec<String> = vec!["id".into(), "index".into(), "seed".into()];
    h.extend(setting_keys.iter().cloned());
    h.extend(metrics.iter().cloned());
    h.push("error".into());
    push_csv_row(&mut out, &h);
    for r in records {
        let mut c = vec![r.id.clone(), r.index.to_string(), r.seed.to_string()];
        for k in &setting_keys {
            c.push(r.settings.get(k).map(csv_value).unwrap_or_default());
        }
        for m in metrics {
            let v = match crate::value::metric_paths(m).len() {
                1 => crate::value::get_dotted(&r.result, m).map(csv_value),
                _ => crate::value::metric_of(&r.result, m).map(|x| x.to_string()),
            };
            c.push(v.unwrap_or_default());
        }
        c.push(r.error.clone().unwrap_or_default());
        push_csv_row(&mut out, &c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(i: usize, variant: &str, nodes: i64, m: f64) -> Record {
        let mut settings = serde_json::Map::new();
        settings.insert("workload.variant".into(), json!(variant));
        settings.insert("machine.nodes".into(), json!(nodes));
        Record {
            id: crate::spec::point_id(i),
            index: i,
            seed: 1 + i as u64 % 2,
            settings,
            result: json!({ "makespan_ns": m }),
            error: None,
            spec_config: Value::Null,
        }
    }

    fn sample() -> Vec<Record> {
        vec![
            rec(0, "uma", 2, 100.0),
            rec(1, "uma", 2, 110.0),
            rec(2, "numa", 2, 150.0),
            rec(3, "numa", 2, 160.0),
            rec(4, "uma", 4, 50.0),
            rec(5, "uma", 4, 50.0),
            rec(6, "numa", 4, 80.0),
            rec(7, "numa", 4, 70.0),
        ]
    }

    fn opts() -> TableOptions {
        TableOptions {
            metric: "makespan_ns".into(),
            group_by: vec!["machine.nodes".into(), "workload.variant".into()],
            baseline: vec![("workload.variant".into(), json!("uma"))],
            confidence: 0.95,
        }
    }

    #[test]
    fn runs_solved_against_the_optimum_give_their_group_a_regret_column() {
        let mut records = sample();
        records[0].result["regret"] = json!(1.2);
        records[1].result["regret"] = json!(1.4);
        let t = summarize(&records, &opts());
        assert!((t.rows[0].regret.unwrap() - 1.3).abs() < 1e-12);
        assert_eq!(t.rows[1].regret, None);
        assert_eq!(t.headers().last().unwrap(), "regret");
        assert_eq!(t.cells()[0].last().unwrap(), "1.300");
        assert!(t.to_csv().lines().next().unwrap().ends_with(",regret"));
    }

    #[test]
    fn a_regret_known_only_as_a_bound_is_shown_as_one() {
        let mut records = sample();
        records[0].result["regret_at_most"] = json!(1.1);
        records[1].result["regret_at_most"] = json!(1.3);
        let t = summarize(&records, &opts());
        assert!(t.rows[0].regret_at_most);
        assert_eq!(t.cells()[0].last().unwrap(), "<= 1.200");
    }

    #[test]
    fn a_table_without_solved_runs_has_no_regret_column() {
        let t = summarize(&sample(), &opts());
        assert!(!t.headers().iter().any(|h| h == "regret"));
        assert!(!t.to_csv().contains("regret"));
    }

    #[test]
    fn rows_follow_first_appearance_and_compare_to_matching_baseline() {
        let t = summarize(&sample(), &opts());
        assert_eq!(t.rows.len(), 4);
        assert_eq!(t.rows[1].key, vec![json!(2), json!("numa")]);
        assert!(t.rows[0].is_baseline);
        // numa@2: 155 vs uma@2: 105 → +47.6 %
        assert!((t.rows[1].rel_pct.unwrap() - 47.619).abs() < 1e-3);
        // numa@4: 75 vs uma@4: 50 → +50 %
        assert!((t.rows[3].rel_pct.unwrap() - 50.0).abs() < 1e-9);
    }

    #[test]
    fn text_markdown_and_csv_render_every_row() {
        let t = summarize(&sample(), &opts());
        let text = t.render_text();
        assert_eq!(text.lines().count(), 6);
        assert!(
            text.contains("+47.6%") && text.contains("baseline"),
            "{text}"
        );
        let md = t.render_markdown();
        assert!(
            md.starts_with("| machine.nodes | workload.variant | n |"),
            "{md}"
        );
        assert!(md.contains("| ---: |"));
        let csv = t.to_csv();
        assert_eq!(csv.lines().count(), 5);
        assert!(
            csv.lines().nth(2).unwrap().starts_with("2,numa,2,155,"),
            "{csv}"
        );
    }

    #[test]
    fn raw_csv_has_one_column_per_setting_and_metric() {
        let csv = records_csv(&sample(), &["makespan_ns".to_string()]);
        let mut lines = csv.lines();
        assert_eq!(
            lines.next().unwrap(),
            "id,index,seed,machine.nodes,workload.variant,makespan_ns,error"
        );
        assert_eq!(lines.next().unwrap(), "r000000,0,1,2,uma,100.0,");
    }
}
