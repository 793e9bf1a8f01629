//! `numaplace reproduce PAPER`: run a paper's studies, show our numbers
//! beside the paper's, and check its claims.
//!
//! A paper lives in `experiments/PAPER/` with a `paper.toml`:
//!
//! ```toml
//! title = "..."
//! citation = "..."
//! studies = ["jacobi.toml"]        # spec files, relative to the paper dir
//!
//! [[reported]]                     # a number transcribed from the paper
//! study = "jacobi-numa-vs-uma"     # optional when there is one study
//! table = "Table 5"
//! row = { "policy.kind" = "static" }
//! metric = "makespan_ns"           # optional: the study's metric
//! value = 129.7                    # in `paper_unit` (default: the metric's unit)
//! paper_unit = "s"                 # the paper prints seconds; ours (ns) is converted
//! unit_note = "..."                # optional note on transcription
//! calibrated = "..."               # optional: an input was fitted to this number
//!
//! [[calibrated]]                   # an input fitted to the paper, not produced by the model
//! input = "workload.compute_ns"
//! value = 566000
//! fitted_to = "Table 5, None, 512: 129.7 s"
//!
//! [[claim]]                        # see `claims::Claim`
//! name = "daemon-slower-small-pages"
//! text = "..."
//! study = "jacobi-numa-vs-uma"
//! kind = "ratio"
//! left = { where = { "policy.kind" = "daemon" }, metric = "makespan_ns" }
//! right = { where = { "policy.kind" = "static" } }
//! at_least = 1.10
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::claims::{
    evaluate, evaluate_reported, validate, Check, Claim, ClaimResult, ReportedPoint, Status,
};
use crate::plot::{draw_records, PlotRequest};
use crate::spec::{
    default_group_by, field_prefix, line_of, line_suffix, parse_spec, parse_toml, Spec, SpecError,
};
use crate::stats::Statistic;
use crate::sweep::{plan_sweep, run_plan, Runner, SweepOptions, DEFAULT_MAX_RUNS};
use crate::table::{render_aligned, render_markdown, summarize, SummaryTable, TableOptions};
// Public here too: it was defined in this module before, and `reproduce::PaperUnit`
// stays a valid path.
pub use crate::unit::PaperUnit;
use crate::value::{fmt_num, label, toml_to_json};

/// Name of the paper description file inside a paper directory.
pub const PAPER_FILE: &str = "paper.toml";

/// A paper description (`paper.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Paper {
    /// Title of the paper.
    pub title: String,
    /// Bibliographic citation.
    #[serde(default)]
    pub citation: String,
    /// Spec files of the studies, relative to the paper directory.
    pub studies: Vec<String>,
    /// Numbers transcribed from the paper.
    #[serde(default)]
    pub reported: Vec<Reported>,
    /// Claims to check.
    #[serde(default, rename = "claim")]
    pub claims: Vec<Claim>,
    /// Inputs fitted to the paper's numbers (printed apart, marked `calibrated`).
    #[serde(default)]
    pub calibrated: Vec<CalibratedInput>,
}

impl Paper {
    /// The paper's numbers that study `study` is checked against, as a `reported` claim
    /// sees them: in nanoseconds where the paper prints a time unit, `metric` where a row
    /// names none, at `confidence`. A row without a study belongs to `first_study`. A
    /// number an input was fitted to agrees by construction, so no claim checks it.
    pub fn reported_points(
        &self,
        study: &str,
        first_study: &str,
        metric: &str,
        confidence: f64,
    ) -> Vec<ReportedPoint> {
        self.reported
            .iter()
            .filter(|r| r.study.as_deref().unwrap_or(first_study) == study)
            .filter(|r| r.calibrated.is_none())
            .map(|r| ReportedPoint {
                table: r.table.clone(),
                selector: r
                    .row
                    .iter()
                    .map(|(k, v)| (k.clone(), toml_to_json(v)))
                    .collect(),
                metric: r.metric.clone().unwrap_or_else(|| metric.to_string()),
                value: r.value * r.paper_unit.map_or(1.0, PaperUnit::ns),
                statistic: r.statistic,
                confidence,
            })
            .collect()
    }
}

/// An input of the model that was fitted to a number of the paper rather than taken from
/// it (`[[calibrated]]`). A reproduction prints these apart from its results, so a reader
/// never takes a fitted figure for agreement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibratedInput {
    /// The configuration field fitted (e.g. `workload.compute_per_point_ns`).
    pub input: String,
    /// Its fitted value.
    pub value: toml::Value,
    /// The paper's number it was fitted to (e.g. "Table 5, None, 512: 129.7 s").
    pub fitted_to: String,
    /// How it was fitted, or why the paper gives no figure.
    #[serde(default)]
    pub note: String,
}

/// A number transcribed from the paper (`[[reported]]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reported {
    /// Study (spec name) to compare with; optional with a single study.
    #[serde(default)]
    pub study: Option<String>,
    /// Where in the paper the number appears (e.g. "Table 5").
    pub table: String,
    /// Selector of our runs corresponding to the paper's row.
    #[serde(default)]
    pub row: BTreeMap<String, toml::Value>,
    /// Metric (defaults to the study's output metric).
    #[serde(default)]
    pub metric: Option<String>,
    /// The paper's value, in `paper_unit` when given, else in the metric's unit.
    pub value: f64,
    /// The unit the paper prints the value in (time metrics only, which are in ns): the
    /// table shows ours converted to it.
    #[serde(default)]
    pub paper_unit: Option<PaperUnit>,
    /// Note on units or transcription.
    #[serde(default)]
    pub unit_note: String,
    /// Set when an input was fitted to this number: says which. The row is printed apart
    /// as a calibration point and never counts as agreement (no claim checks it).
    #[serde(default)]
    pub calibrated: Option<String>,
    /// Compare a speedup instead of a mean: ours is the metric's mean at the smallest
    /// value of this axis field over its mean at `speedup_at` (e.g. the paper's speedup
    /// at 16 processors).
    #[serde(default)]
    pub speedup_over: Option<String>,
    /// The value of `speedup_over` at which the speedup is taken.
    #[serde(default)]
    pub speedup_at: Option<toml::Value>,
    /// The statistic of our runs the value is compared with: `mean` (the default), or
    /// `ci_low` / `ci_high`, an end of the Student-t confidence interval of the mean at
    /// the study's `output.confidence` (for a paper that prints its intervals).
    #[serde(default)]
    pub statistic: Statistic,
}

/// A paper found by [`list_papers`] or [`Experiments::list`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PaperInfo {
    /// Directory name (the argument of `reproduce`).
    pub name: String,
    /// Title from `paper.toml` (or the parse error).
    pub title: String,
    /// Citation from `paper.toml`.
    pub citation: String,
    /// The paper directory (for a built-in paper, `experiments/NAME`).
    pub dir: PathBuf,
}

/// Files built into a program: paths relative to the experiments directory,
/// with `/` separators (`holliday89/paper.toml`), and their text.
pub type BuiltinFiles = &'static [(&'static str, &'static str)];

/// Where papers come from: a directory on disk holding one directory per
/// paper, or a copy of such a tree built into the program.
#[derive(Debug, Clone)]
pub enum Experiments {
    /// A directory on disk.
    Dir(PathBuf),
    /// Files built into the program.
    Builtin(BuiltinFiles),
}

impl Experiments {
    /// Every paper (a directory with a `paper.toml`), sorted by name. A
    /// paper whose file does not parse is listed with the error as its title.
    pub fn list(&self) -> anyhow::Result<Vec<PaperInfo>> {
        match self {
            Experiments::Dir(dir) => list_papers(dir),
            Experiments::Builtin(files) => {
                let mut out: Vec<PaperInfo> = builtin_papers(files)
                    .into_iter()
                    .map(|name| {
                        let source = PaperSource::Builtin {
                            name: name.to_string(),
                            files,
                        };
                        let (title, citation) = match read_paper_from(&source) {
                            Ok(p) => (p.title, p.citation),
                            Err(e) => (format!("(invalid: {e:#})"), String::new()),
                        };
                        PaperInfo {
                            name: name.to_string(),
                            title,
                            citation,
                            dir: PathBuf::from("experiments").join(name),
                        }
                    })
                    .collect();
                out.sort_by(|a, b| a.name.cmp(&b.name));
                Ok(out)
            }
        }
    }

    /// The paper called `name`; an error lists the papers there are.
    pub fn paper(&self, name: &str) -> anyhow::Result<PaperSource> {
        let found = match self {
            Experiments::Dir(dir) => {
                let d = dir.join(name);
                d.join(PAPER_FILE).is_file().then_some(PaperSource::Dir(d))
            }
            Experiments::Builtin(files) => {
                builtin_papers(files)
                    .contains(&name)
                    .then(|| PaperSource::Builtin {
                        name: name.to_string(),
                        files,
                    })
            }
        };
        match found {
            Some(source) => Ok(source),
            None => {
                let have: Vec<String> = self
                    .list()
                    .map(|l| l.into_iter().map(|p| p.name).collect())
                    .unwrap_or_default();
                bail!(
                    "no paper `{name}` in {} (have: {})",
                    self.describe(),
                    if have.is_empty() {
                        "none".to_string()
                    } else {
                        have.join(", ")
                    }
                )
            }
        }
    }

    /// Where the papers are, for messages.
    pub fn describe(&self) -> String {
        match self {
            Experiments::Dir(dir) => dir.display().to_string(),
            Experiments::Builtin(_) => "the built-in experiments".to_string(),
        }
    }
}

/// Names of the built-in papers (directories holding a `paper.toml`).
fn builtin_papers(files: BuiltinFiles) -> Vec<&'static str> {
    let mut names: Vec<&str> = files
        .iter()
        .filter_map(|(path, _)| path.strip_suffix(PAPER_FILE)?.strip_suffix('/'))
        .filter(|name| !name.is_empty() && !name.contains('/'))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// One paper's files: a directory on disk or a built-in copy.
#[derive(Debug, Clone)]
pub enum PaperSource {
    /// The paper's directory.
    Dir(PathBuf),
    /// A built-in paper.
    Builtin {
        /// The paper's directory name.
        name: String,
        /// All built-in files.
        files: BuiltinFiles,
    },
}

impl PaperSource {
    /// The paper's name (its directory's name).
    pub fn name(&self) -> String {
        match self {
            PaperSource::Dir(dir) => dir
                .canonicalize()
                .unwrap_or_else(|_| dir.to_path_buf())
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "paper".to_string()),
            PaperSource::Builtin { name, .. } => name.clone(),
        }
    }

    /// Reads a file of the paper (`rel` relative to the paper's directory):
    /// returns its name for messages and its text.
    pub fn read(&self, rel: &str) -> anyhow::Result<(String, String)> {
        match self {
            PaperSource::Dir(dir) => {
                let path = dir.join(rel);
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                Ok((path.display().to_string(), text))
            }
            PaperSource::Builtin { name, files } => {
                let path = normalize(&format!("{name}/{rel}"));
                let origin = format!("experiments/{path} (built in)");
                match files.iter().find(|(p, _)| *p == path) {
                    Some((_, text)) => Ok((origin, text.to_string())),
                    None => bail!("cannot read {origin}: no such built-in file"),
                }
            }
        }
    }
}

/// Resolves `.` and `..` in a `/`-separated relative path.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

/// Lists the paper directories (those containing `paper.toml`) under
/// `experiments_dir`, sorted by name. A paper whose file does not parse is
/// listed with the error as its title.
pub fn list_papers(experiments_dir: &Path) -> anyhow::Result<Vec<PaperInfo>> {
    let entries = std::fs::read_dir(experiments_dir)
        .with_context(|| format!("cannot list {}", experiments_dir.display()))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", experiments_dir.display()))?;
        let dir = entry.path();
        let file = dir.join(PAPER_FILE);
        if !file.is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let (title, citation) = match read_paper(&dir) {
            Ok(p) => (p.title, p.citation),
            Err(e) => (format!("(invalid: {e:#})"), String::new()),
        };
        out.push(PaperInfo {
            name,
            title,
            citation,
            dir,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Reads and parses `paper_dir/paper.toml` (without loading the specs).
pub fn read_paper(paper_dir: &Path) -> anyhow::Result<Paper> {
    read_paper_from(&PaperSource::Dir(paper_dir.to_path_buf()))
}

fn read_paper_from(source: &PaperSource) -> anyhow::Result<Paper> {
    let (origin, text) = source.read(PAPER_FILE)?;
    Ok(parse_paper(&text, &origin)?)
}

/// An error in a paper file, naming the file, the entry at fault (a claim also by its
/// name), the line where the entry starts and the field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PaperError {
    /// The file does not parse, or a field outside the claims is unacceptable.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A claim is malformed, repeats a name or names no study of the paper.
    #[error(
        "{origin}: claim[{index}] `{name}`{}: {}{message}",
        line_suffix(.line),
        field_prefix(.field)
    )]
    Claim {
        /// File name (or other origin) of the text.
        origin: String,
        /// Position among the claims (0-based).
        index: usize,
        /// The claim's name.
        name: String,
        /// 1-based line where the claim starts, if known.
        line: Option<usize>,
        /// The claim's field at fault, if one is.
        field: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A reported number names no study of the paper, or none where one is needed.
    #[error(
        "{origin}: reported[{index}]{}: {}{message}",
        line_suffix(.line),
        field_prefix(.field)
    )]
    Reported {
        /// File name (or other origin) of the text.
        origin: String,
        /// Position among the reported numbers (0-based).
        index: usize,
        /// 1-based line where the entry starts, if known.
        line: Option<usize>,
        /// The entry's field at fault, if one is.
        field: Option<String>,
        /// What is wrong.
        message: String,
    },
}

/// Each `[[claim]]` and `[[reported]]` of a paper file as plain TOML with its place in
/// the text, for messages about them.
#[derive(Deserialize, Default)]
struct PaperEntries {
    #[serde(default)]
    claim: Vec<toml::Spanned<toml::Value>>,
    #[serde(default)]
    reported: Vec<toml::Spanned<toml::Value>>,
}

impl PaperEntries {
    /// The lines where each claim and each reported number starts.
    fn lines(text: &str) -> (Vec<usize>, Vec<usize>) {
        let entries: PaperEntries = toml::from_str(text).unwrap_or_default();
        let at = |v: &[toml::Spanned<toml::Value>]| {
            v.iter().map(|s| line_of(text, s.span().start)).collect()
        };
        (at(&entries.claim), at(&entries.reported))
    }

    /// The name of claim `index`, if it has one.
    fn claim_name(text: &str, index: usize) -> Option<String> {
        let entries: PaperEntries = toml::from_str(text).ok()?;
        let claim = entries.claim.get(index)?;
        Some(claim.get_ref().get("name")?.as_str()?.to_string())
    }
}

/// Parses a paper file. An error about a claim as a whole (a field its kind needs is
/// missing) names the claim, as the other errors about a claim do.
fn parse_paper(text: &str, origin: &str) -> Result<Paper, PaperError> {
    parse_toml::<Paper>(text, origin).map_err(|err| {
        if let SpecError::Parse {
            origin,
            field: Some(field),
            line,
            message,
        } = &err
        {
            let index = field
                .strip_prefix("claim[")
                .and_then(|f| f.strip_suffix(']'))
                .and_then(|i| i.parse().ok());
            if let Some((index, name)) =
                index.and_then(|i| Some((i, PaperEntries::claim_name(text, i)?)))
            {
                return PaperError::Claim {
                    origin: origin.clone(),
                    index,
                    name,
                    line: *line,
                    field: None,
                    message: message.clone(),
                };
            }
        }
        err.into()
    })
}

/// Reads a paper and its specs, checking that claims and reported numbers
/// name existing studies and that every claim is well formed.
pub fn load_paper(paper_dir: &Path) -> anyhow::Result<(Paper, Vec<Spec>)> {
    load_paper_from(&PaperSource::Dir(paper_dir.to_path_buf()))
}

/// [`load_paper`] from any source.
pub fn load_paper_from(source: &PaperSource) -> anyhow::Result<(Paper, Vec<Spec>)> {
    let (file, text) = source.read(PAPER_FILE)?;
    let paper = parse_paper(&text, &file)?;
    let (claim_lines, reported_lines) = PaperEntries::lines(&text);
    let claim_error =
        |i: usize, c: &Claim, field: Option<&str>, message: String| PaperError::Claim {
            origin: file.clone(),
            index: i,
            name: c.name.clone(),
            line: claim_lines.get(i).copied(),
            field: field.map(str::to_string),
            message,
        };
    let reported_error = |i: usize, field: Option<&str>, message: String| PaperError::Reported {
        origin: file.clone(),
        index: i,
        line: reported_lines.get(i).copied(),
        field: field.map(str::to_string),
        message,
    };
    if paper.studies.is_empty() {
        return Err(SpecError::Invalid {
            origin: file,
            field: "studies".into(),
            message: "must list at least one spec file".into(),
        }
        .into());
    }
    let mut specs: Vec<Spec> = Vec::new();
    for s in &paper.studies {
        let (origin, text) = source.read(s)?;
        let spec = parse_spec(&text, &origin)?;
        if specs.iter().any(|o| o.name == spec.name) {
            bail!("{file}: two studies are named `{}`", spec.name);
        }
        specs.push(spec);
    }
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    let mut seen = Vec::new();
    for (i, c) in paper.claims.iter().enumerate() {
        if seen.contains(&c.name) {
            return Err(claim_error(i, c, None, "duplicate claim name".into()).into());
        }
        seen.push(c.name.clone());
        if !names.contains(&c.study.as_str()) {
            let message = format!("no study named `{}` (have: {})", c.study, names.join(", "));
            return Err(claim_error(i, c, Some("study"), message).into());
        }
        validate(c).map_err(|e| claim_error(i, c, None, e.to_string()))?;
    }
    for (i, r) in paper.reported.iter().enumerate() {
        match &r.study {
            Some(s) if !names.contains(&s.as_str()) => {
                let message = format!("no study named `{s}`");
                return Err(reported_error(i, Some("study"), message).into());
            }
            None if specs.len() > 1 => {
                let message =
                    "field `study` is required when the paper has several studies".to_string();
                return Err(reported_error(i, None, message).into());
            }
            _ => {}
        }
        if r.paper_unit.is_some() {
            let study = r.study.as_deref().unwrap_or(names[0]);
            let metric = r.metric.clone().unwrap_or_else(|| {
                specs
                    .iter()
                    .find(|s| s.name == study)
                    .map(|s| s.output.metric.clone())
                    .unwrap_or_default()
            });
            if r.speedup_over.is_some() {
                let message = "a speedup has no unit; leave `paper_unit` out".to_string();
                return Err(reported_error(i, Some("paper_unit"), message).into());
            }
            if !metric.ends_with("_ns") {
                let message = format!(
                    "the metric `{metric}` is not a time in ns; `paper_unit` converts times only"
                );
                return Err(reported_error(i, Some("paper_unit"), message).into());
            }
        }
        if r.speedup_over.is_some() && r.statistic != Statistic::Mean {
            let message = "a speedup is compared as it is; leave `statistic` out".to_string();
            return Err(reported_error(i, Some("statistic"), message).into());
        }
        if r.calibrated.as_deref().is_some_and(|c| c.trim().is_empty()) {
            let message = "say which input was fitted to this number".to_string();
            return Err(reported_error(i, Some("calibrated"), message).into());
        }
    }
    for (i, c) in paper.calibrated.iter().enumerate() {
        if c.input.trim().is_empty() || c.fitted_to.trim().is_empty() {
            bail!("{file}: calibrated[{i}]: `input` and `fitted_to` must say which input was fitted to which number");
        }
    }
    Ok((paper, specs))
}

/// How to reproduce a paper.
#[derive(Debug, Clone)]
pub struct ReproduceOptions {
    /// Use the specs' `[quick]` overrides (results go to `STUDY.quick.jsonl`).
    pub quick: bool,
    /// Worker threads (0 = all cores).
    pub jobs: usize,
    /// Root of the outputs: results in `out_dir/PAPER/STUDY.jsonl`.
    pub out_dir: PathBuf,
    /// Exit with 0 even when claims do not hold.
    pub no_fail: bool,
    /// Show progress bars (only on a terminal).
    pub progress: bool,
    /// Continue existing results files.
    pub resume: bool,
    /// Stop flag (e.g. set by Ctrl-C): no new runs start once set.
    pub stop: Option<Arc<AtomicBool>>,
    /// Most runs one study may have; `None`: no limit.
    pub max_runs: Option<usize>,
}

impl ReproduceOptions {
    /// Options writing under `out_dir`: full mode, all cores, no resume,
    /// failing claims fail, progress bars, the default run limit.
    pub fn new(out_dir: impl Into<PathBuf>) -> Self {
        ReproduceOptions {
            quick: false,
            jobs: 0,
            out_dir: out_dir.into(),
            no_fail: false,
            progress: true,
            resume: false,
            stop: None,
            max_runs: Some(DEFAULT_MAX_RUNS),
        }
    }
}

/// What happened to one study.
#[derive(Debug, Clone, Serialize)]
pub struct StudyReport {
    /// Spec name.
    pub name: String,
    /// Spec description.
    pub description: String,
    /// Results file.
    pub results: PathBuf,
    /// Runs in the study.
    pub total: usize,
    /// Runs executed now.
    pub executed: usize,
    /// Runs reused from the results file.
    pub skipped: usize,
    /// Runs that failed (in the whole results file).
    pub failed: usize,
    /// Whether the sweep was interrupted.
    pub interrupted: bool,
    /// Summary table.
    pub table: SummaryTable,
    /// Plot files written.
    pub plots: Vec<PathBuf>,
    /// Plots that could not be drawn, with the reason.
    pub plot_errors: Vec<String>,
    /// The plots drawn, as SVG text, for a page that carries them inline.
    #[serde(skip)]
    pub figures: Vec<InlineFigure>,
}

/// A plot of a study as SVG text.
#[derive(Debug, Clone, PartialEq)]
pub struct InlineFigure {
    /// The plot's file stem in the spec (`gauss-speedup`).
    pub name: String,
    /// The SVG document.
    pub svg: String,
}

/// One reported number beside ours.
#[derive(Debug, Clone, Serialize)]
pub struct ReportedRow {
    /// Study compared.
    pub study: String,
    /// Where the paper reports it.
    pub table: String,
    /// Row selector, as text.
    pub row: String,
    /// Metric compared.
    pub metric: String,
    /// The paper's value, in `unit`.
    pub theirs: f64,
    /// Our mean over matching successful runs, in `unit` (`None`: no such run).
    pub ours: Option<f64>,
    /// Half-width of the 95% confidence interval of `ours` over the runs (Student's t),
    /// in `unit` (`None` with fewer than two runs or for a speedup).
    pub ci95: Option<f64>,
    /// Half-width of the interval of `ours` at `confidence` (the study's, as its claims
    /// use), in `unit`: Student's t over the runs for a mean, the interval of the ratio
    /// of two means for a speedup; `None` with fewer than two runs on a side or for an
    /// interval end compared as it is.
    pub ci: Option<f64>,
    /// The level of `ci`.
    pub confidence: f64,
    /// Runs behind `ours`.
    pub n: usize,
    /// The unit of `theirs` and `ours` (empty: the metric's own).
    pub unit: String,
    /// Units or transcription note.
    pub unit_note: String,
    /// What was fitted to this number, for a calibration point.
    pub calibrated: Option<String>,
}

impl ReportedRow {
    /// Ours over the paper's, as a table cell ("-" without both).
    pub fn ratio_cell(&self) -> String {
        match self.ours {
            Some(o) if self.theirs != 0.0 => format!("{:.3}", o / self.theirs),
            _ => "-".into(),
        }
    }

    /// The note cell: the calibration, if the row's value was fitted, and the unit note.
    pub fn note_cell(&self) -> String {
        match &self.calibrated {
            Some(c) if self.unit_note.is_empty() => format!("calibrated: {c}"),
            Some(c) => format!("calibrated: {c}; {}", self.unit_note),
            None => self.unit_note.clone(),
        }
    }
}

/// The outcome of reproducing a paper.
#[derive(Debug, Clone, Serialize)]
pub struct ReproReport {
    /// Paper directory name.
    pub paper: String,
    /// Paper title.
    pub title: String,
    /// Citation.
    pub citation: String,
    /// Whether quick mode was used.
    pub quick: bool,
    /// Per-study results, in `studies` order.
    pub studies: Vec<StudyReport>,
    /// Reported numbers beside ours.
    pub reported: Vec<ReportedRow>,
    /// Claim outcomes, in file order.
    pub claims: Vec<ClaimResult>,
    /// Inputs fitted to the paper's numbers.
    pub calibrated: Vec<CalibratedInput>,
    /// Whether failing claims should not fail the command.
    pub no_fail: bool,
}

impl ReproReport {
    /// Whether every claim held (an observation has no verdict to hold).
    pub fn all_held(&self) -> bool {
        self.claims
            .iter()
            .all(|c| c.held() || c.status == Status::Observation)
    }

    /// Whether every study ran to completion.
    pub fn complete(&self) -> bool {
        self.studies.iter().all(|s| !s.interrupted)
    }

    /// Process exit code: 2 when a sweep was interrupted, 1 when a claim did
    /// not hold (or could not be evaluated) unless `no_fail`, else 0.
    pub fn exit_code(&self) -> i32 {
        if !self.complete() {
            2
        } else if !self.all_held() && !self.no_fail {
            1
        } else {
            0
        }
    }

    /// The reported rows beside ours: the results (`calibration` false) or the
    /// calibration points (true), which are printed apart.
    fn reported_table(&self, calibration: bool) -> (Vec<String>, Vec<Vec<String>>) {
        let headers = [
            "where",
            "study",
            "row",
            "metric",
            "unit",
            "paper",
            "ours",
            "ci95",
            "n",
            "ours/paper",
            if calibration { "fitted" } else { "note" },
        ]
        .map(String::from)
        .to_vec();
        let rows = self
            .reported
            .iter()
            .filter(|r| r.calibrated.is_some() == calibration)
            .map(|r| {
                vec![
                    r.table.clone(),
                    r.study.clone(),
                    r.row.clone(),
                    r.metric.clone(),
                    r.unit.clone(),
                    fmt_num(r.theirs),
                    r.ours.map(fmt_num).unwrap_or_else(|| "-".into()),
                    r.ci95
                        .map(|h| format!("±{}", fmt_num(h)))
                        .unwrap_or_else(|| "-".into()),
                    r.n.to_string(),
                    r.ratio_cell(),
                    r.note_cell(),
                ]
            })
            .collect();
        (headers, rows)
    }

    fn has_calibration_points(&self) -> bool {
        self.reported.iter().any(|r| r.calibrated.is_some())
    }

    fn has_results(&self) -> bool {
        self.reported.iter().any(|r| r.calibrated.is_none())
    }

    pub(crate) fn calibrated_table(&self) -> (Vec<String>, Vec<Vec<String>>) {
        let headers = ["input", "value", "fitted to", "note"]
            .map(String::from)
            .to_vec();
        let rows = self
            .calibrated
            .iter()
            .map(|c| {
                vec![
                    c.input.clone(),
                    crate::value::label(&toml_to_json(&c.value)),
                    c.fitted_to.clone(),
                    c.note.clone(),
                ]
            })
            .collect();
        (headers, rows)
    }

    pub(crate) fn study_header(s: &StudyReport) -> String {
        format!(
            "{} runs ({} executed, {} reused, {} failed{}); results: {}",
            s.total,
            s.executed,
            s.skipped,
            s.failed,
            if s.interrupted { ", INTERRUPTED" } else { "" },
            s.results.display()
        )
    }

    /// Renders the report as terminal text.
    pub fn render_text(&self) -> String {
        let mut out = format!(
            "== {}: {}{} ==\n",
            self.paper,
            self.title,
            if self.quick { " (quick)" } else { "" }
        );
        if !self.citation.is_empty() {
            out.push_str(&format!("{}\n", self.citation));
        }
        for s in &self.studies {
            out.push_str(&format!("\n-- study {} --\n", s.name));
            if !s.description.is_empty() {
                out.push_str(&format!("{}\n", s.description));
            }
            out.push_str(&format!("{}\n\n", Self::study_header(s)));
            out.push_str(&s.table.render_text());
            for p in &s.plots {
                out.push_str(&format!("plot: {}\n", p.display()));
            }
            for e in &s.plot_errors {
                out.push_str(&format!("plot failed: {e}\n"));
            }
        }
        if !self.calibrated.is_empty() {
            out.push_str("\n-- calibrated inputs (fitted to the paper; not results) --\n");
            let (h, rows) = self.calibrated_table();
            out.push_str(&render_aligned(&h, &rows, 4));
        }
        if self.has_results() {
            out.push_str("\n-- reported (paper) vs ours --\n");
            let (h, rows) = self.reported_table(false);
            out.push_str(&render_aligned(&h, &rows, 4));
        }
        if self.has_calibration_points() {
            out.push_str(
                "\n-- calibration points (an input was fitted to these; not agreement) --\n",
            );
            let (h, rows) = self.reported_table(true);
            out.push_str(&render_aligned(&h, &rows, 4));
        }
        let (claims, observations) = self.claims_and_observations();
        if !claims.is_empty() {
            out.push_str("\n-- claims --\n");
            for c in &claims {
                out.push_str(&format!(
                    "[{}] {}: {}\n    {}\n",
                    c.verdict(),
                    c.name,
                    c.text,
                    c.detail
                ));
            }
        }
        if !observations.is_empty() {
            out.push_str("\n-- observations (no verdict) --\n");
            for c in &observations {
                out.push_str(&format!(
                    "{}: {}\n    {}\n    no verdict: {}\n",
                    c.name,
                    c.text,
                    c.detail,
                    c.observation.as_deref().unwrap_or_default()
                ));
            }
        }
        if !self.claims.is_empty() {
            out.push_str(&format!("\n{}\n", self.tally()));
        }
        out
    }

    /// The claims with a verdict, and the observations, each in the paper's order.
    fn claims_and_observations(&self) -> (Vec<&ClaimResult>, Vec<&ClaimResult>) {
        self.claims
            .iter()
            .partition(|c| c.status != Status::Observation)
    }

    /// How the claims came out: `H of C claims held (N not held, W within noise, E
    /// errors); O observations`.
    pub fn tally(&self) -> String {
        let count =
            |f: &dyn Fn(&Status) -> bool| self.claims.iter().filter(|c| f(&c.status)).count();
        let observations = count(&|s| *s == Status::Observation);
        let claims = self.claims.len() - observations;
        let mut out = format!(
            "{} of {claims} claims held ({} not held, {} within noise, {} errors)",
            count(&|s| *s == Status::Held),
            count(&|s| *s == Status::NotHeld),
            count(&|s| *s == Status::WithinNoise),
            count(&|s| matches!(s, Status::Error(_))),
        );
        if observations > 0 {
            out.push_str(&format!("; {observations} observations without a verdict"));
        }
        out
    }

    /// Renders the report as Markdown.
    pub fn render_markdown(&self) -> String {
        let mut out = format!(
            "# {}: {}{}\n\n",
            self.paper,
            self.title,
            if self.quick { " (quick)" } else { "" }
        );
        if !self.citation.is_empty() {
            out.push_str(&format!("{}\n\n", self.citation));
        }
        for s in &self.studies {
            out.push_str(&format!("## Study `{}`\n\n", s.name));
            if !s.description.is_empty() {
                out.push_str(&format!("{}\n\n", s.description));
            }
            out.push_str(&format!("{}\n\n", Self::study_header(s)));
            out.push_str(&s.table.render_markdown());
            out.push('\n');
            for p in &s.plots {
                if p.extension().is_some_and(|e| e == "svg") {
                    out.push_str(&format!("![{}]({})\n\n", s.name, p.display()));
                }
            }
        }
        if !self.calibrated.is_empty() {
            out.push_str("## Calibrated inputs (fitted to the paper; not results)\n\n");
            let (h, rows) = self.calibrated_table();
            out.push_str(&render_markdown(&h, &rows, 4));
            out.push('\n');
        }
        if self.has_results() {
            out.push_str("## Reported (paper) vs ours\n\n");
            let (h, rows) = self.reported_table(false);
            out.push_str(&render_markdown(&h, &rows, 4));
            out.push('\n');
        }
        if self.has_calibration_points() {
            out.push_str("## Calibration points (an input was fitted to these; not agreement)\n\n");
            let (h, rows) = self.reported_table(true);
            out.push_str(&render_markdown(&h, &rows, 4));
            out.push('\n');
        }
        let (claims, observations) = self.claims_and_observations();
        if !claims.is_empty() {
            out.push_str("## Claims\n\n");
            for c in &claims {
                out.push_str(&format!(
                    "- **{}** `{}`: {}  \n  {}\n",
                    c.verdict(),
                    c.name,
                    c.text,
                    c.detail
                ));
            }
            out.push('\n');
        }
        if !observations.is_empty() {
            out.push_str("## Observations (no verdict)\n\n");
            for c in &observations {
                out.push_str(&format!(
                    "- `{}`: {}  \n  {}  \n  No verdict: {}\n",
                    c.name,
                    c.text,
                    c.detail,
                    c.observation.as_deref().unwrap_or_default()
                ));
            }
            out.push('\n');
        }
        if !self.claims.is_empty() {
            out.push_str(&format!("{}\n", self.tally()));
        }
        out
    }
}

/// Results file of a study for a paper.
pub fn study_results_path(out_dir: &Path, paper: &str, study: &str, quick: bool) -> PathBuf {
    let file = if quick {
        format!("{study}.quick.jsonl")
    } else {
        format!("{study}.jsonl")
    };
    out_dir.join(paper).join(file)
}

/// Table options implied by a spec's `[output]`.
pub fn table_options(spec: &Spec) -> TableOptions {
    TableOptions {
        metric: spec.output.metric.clone(),
        group_by: default_group_by(spec),
        baseline: spec
            .output
            .baseline
            .iter()
            .map(|(k, v)| (k.clone(), toml_to_json(v)))
            .collect(),
        confidence: spec.output.confidence,
    }
}

/// Runs every study of the paper in `paper_dir` (resumably), draws its
/// plots, compares reported numbers and evaluates the claims.
pub fn reproduce(
    paper_dir: &Path,
    runner: &dyn Runner,
    opts: &ReproduceOptions,
) -> anyhow::Result<ReproReport> {
    reproduce_from(&PaperSource::Dir(paper_dir.to_path_buf()), runner, opts)
}

/// [`reproduce`] from any source. Every study is planned (counted against
/// the run limit and checked point by point by the runner) before the first
/// run of any study starts.
pub fn reproduce_from(
    source: &PaperSource,
    runner: &dyn Runner,
    opts: &ReproduceOptions,
) -> anyhow::Result<ReproReport> {
    let (paper, specs) = load_paper_from(source)?;
    let paper_name = source.name();

    let mut plans = Vec::new();
    for spec in &specs {
        let results = study_results_path(&opts.out_dir, &paper_name, &spec.name, opts.quick);
        let sweep_opts = SweepOptions {
            jobs: opts.jobs,
            resume: opts.resume,
            shard: None,
            out: results.clone(),
            quick: opts.quick,
            progress: opts.progress,
            stop: opts.stop.clone(),
            max_runs: opts.max_runs,
            keep: None,
        };
        let plan = plan_sweep(spec, runner, &sweep_opts)
            .with_context(|| format!("study `{}` of {}", spec.name, paper_name))?;
        plans.push((plan, sweep_opts, results));
    }

    let mut studies = Vec::new();
    let mut records_of: BTreeMap<String, Vec<crate::store::Record>> = BTreeMap::new();
    for (plan, sweep_opts, results) in &plans {
        let spec = plan.spec();
        let outcome = run_plan(plan, runner, sweep_opts)
            .with_context(|| format!("study `{}` of {}", spec.name, paper_name))?;
        let results = results.clone();
        let table = summarize(&outcome.records, &table_options(spec));
        let mut plots = Vec::new();
        let mut plot_errors = Vec::new();
        let mut figures = Vec::new();
        for p in &spec.output.plot {
            let req = PlotRequest::from_spec(spec, p);
            let stem_name = if opts.quick {
                format!("{}.quick", p.file)
            } else {
                p.file.clone()
            };
            let stem = opts.out_dir.join(&paper_name).join(stem_name);
            match draw_records(&outcome.records, &req, &stem) {
                Ok(drawn) => {
                    plots.extend(drawn.files);
                    figures.push(InlineFigure {
                        name: p.file.clone(),
                        svg: drawn.svg,
                    });
                }
                Err(e) => plot_errors.push(format!("{}: {e:#}", p.file)),
            }
        }
        let interrupted = outcome.interrupted;
        studies.push(StudyReport {
            name: spec.name.clone(),
            description: spec.description.clone(),
            results,
            total: outcome.total,
            executed: outcome.executed,
            skipped: outcome.skipped,
            failed: outcome.records.iter().filter(|r| !r.ok()).count(),
            interrupted,
            table,
            plots,
            plot_errors,
            figures,
        });
        records_of.insert(spec.name.clone(), outcome.records);
        if interrupted {
            break;
        }
    }

    let metric_of = |study: &str| {
        specs
            .iter()
            .find(|s| s.name == study)
            .map(|s| s.output.metric.clone())
            .unwrap_or_else(|| "makespan_ns".to_string())
    };
    let confidence_of = |study: &str| {
        specs
            .iter()
            .find(|s| s.name == study)
            .map_or(0.99, |s| s.output.confidence)
    };
    let empty = Vec::new();
    let reported = paper
        .reported
        .iter()
        .map(|r| {
            let study = r.study.clone().unwrap_or_else(|| specs[0].name.clone());
            let metric = r.metric.clone().unwrap_or_else(|| metric_of(&study));
            let sel: Vec<(String, Value)> = r
                .row
                .iter()
                .map(|(k, v)| (k.clone(), toml_to_json(v)))
                .collect();
            let recs = records_of.get(&study).unwrap_or(&empty);
            let values_at = |extra: &[(String, Value)]| -> Vec<f64> {
                let mut s2 = sel.clone();
                s2.extend(extra.iter().cloned());
                recs.iter()
                    .filter(|rec| rec.matches(&s2))
                    .filter_map(|rec| rec.metric(&metric))
                    .collect()
            };
            let mean_at = |extra: &[(String, Value)]| -> (Option<f64>, usize) {
                let v = values_at(extra);
                (crate::stats::mean(&v), v.len())
            };
            let scale = r.paper_unit.map_or(1.0, PaperUnit::ns);
            let confidence = confidence_of(&study);
            let (mut ci95, mut ci) = if r.speedup_over.is_some() || r.statistic != Statistic::Mean {
                (None, None)
            } else {
                let v = values_at(&[]);
                (
                    crate::stats::ci_half_width(&v, 0.95).map(|h| h / scale),
                    crate::stats::ci_half_width(&v, confidence).map(|h| h / scale),
                )
            };
            let (ours, n) = match (&r.speedup_over, &r.speedup_at) {
                (Some(over), Some(at)) => {
                    let mut xs: Vec<Value> = recs
                        .iter()
                        .filter(|rec| rec.matches(&sel))
                        .filter_map(|rec| rec.field(over))
                        .collect();
                    xs.sort_by(crate::value::compare_values);
                    let base = xs.first().cloned();
                    let at = toml_to_json(at);
                    match base {
                        Some(b) => {
                            let one = values_at(&[(over.clone(), b.clone())]);
                            let many = values_at(&[(over.clone(), at.clone())]);
                            ci95 = crate::stats::ratio_ci_half_width(&one, &many, 0.95);
                            ci = crate::stats::ratio_ci_half_width(&one, &many, confidence);
                            let (m1, _) = mean_at(&[(over.clone(), b)]);
                            let (mp, n) = mean_at(&[(over.clone(), at)]);
                            match (m1, mp) {
                                (Some(a), Some(p)) if p != 0.0 => (Some(a / p), n),
                                _ => (None, 0),
                            }
                        }
                        None => (None, 0),
                    }
                }
                _ => {
                    let v = values_at(&[]);
                    (r.statistic.of(&v, confidence), v.len())
                }
            };
            ReportedRow {
                row: sel
                    .iter()
                    .map(|(k, v)| format!("{k}={}", label(v)))
                    .collect::<Vec<_>>()
                    .join(", "),
                study,
                table: r.table.clone(),
                metric: match r.statistic {
                    Statistic::Mean => metric,
                    other => format!("{metric} ({})", other.describe(confidence)),
                },
                theirs: r.value,
                ours: ours.map(|o| {
                    if r.speedup_over.is_some() {
                        o
                    } else {
                        o / scale
                    }
                }),
                ci95,
                ci,
                confidence,
                n,
                unit: r
                    .paper_unit
                    .map(PaperUnit::symbol)
                    .unwrap_or("")
                    .to_string(),
                unit_note: r.unit_note.clone(),
                calibrated: r.calibrated.clone(),
            }
        })
        .collect();

    let points_of = |study: &str| -> Vec<ReportedPoint> {
        paper.reported_points(
            study,
            &specs[0].name,
            &metric_of(study),
            confidence_of(study),
        )
    };
    let claims = paper
        .claims
        .iter()
        .map(|c| match records_of.get(&c.study) {
            Some(recs) if matches!(c.check, Check::Reported(_)) => {
                evaluate_reported(c, &points_of(&c.study), recs)
            }
            Some(recs) => evaluate(c, recs, &metric_of(&c.study)),
            None => ClaimResult {
                name: c.name.clone(),
                text: c.text.clone(),
                study: c.study.clone(),
                observation: c.observation.clone(),
                status: Status::Error("study did not run (interrupted)".into()),
                values: Vec::new(),
                detail: "study did not run (interrupted)".into(),
            },
        })
        .collect();

    Ok(ReproReport {
        paper: paper_name,
        title: paper.title,
        citation: paper.citation,
        quick: opts.quick,
        studies,
        reported,
        claims,
        calibrated: paper.calibrated,
        no_fail: opts.no_fail,
    })
}
