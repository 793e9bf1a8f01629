//! `numaplace reproduce`: a paper's studies beside its numbers, and its claims checked.

use crate::failure::{user, Failure};
use crate::limits::StudyLimits;
use crate::output::{command_line, out, write_page};
use clap::Args;
use std::path::PathBuf;

/// `numaplace reproduce`.
#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// The paper (a directory name under the experiments directory).
    paper: Option<String>,
    /// List the papers available.
    #[arg(long)]
    list: bool,
    /// Reduced sizes fit for CI (seconds).
    #[arg(long)]
    quick: bool,
    /// Report failed claims but exit 0.
    #[arg(long)]
    no_fail: bool,
    /// Continue interrupted studies.
    #[arg(long)]
    resume: bool,
    /// Parallel runs (0 = one per core).
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// Where results go (`OUT/PAPER/STUDY.jsonl`).
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Read the papers from this directory (one directory per paper) instead of the
    /// copy of `experiments/` built into numaplace.
    #[arg(long, value_name = "DIR")]
    experiments: Option<PathBuf>,
    /// Print Markdown.
    #[arg(long)]
    markdown: bool,
    /// Also write the report as a self-contained HTML page: the verdicts, each study's
    /// tables and figures (inline SVG), the paper's numbers beside ours, the calibrated
    /// inputs apart.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    #[command(flatten)]
    limits: StudyLimits,
}

/// Lists the papers, or reproduces the one `a` names and prints the comparison.
pub fn run(a: ReproduceArgs) -> Result<(), Failure> {
    use numaplace_study::reproduce::{reproduce_from, Experiments, ReproduceOptions};
    let experiments = match &a.experiments {
        Some(dir) => Experiments::Dir(dir.clone()),
        None => Experiments::Builtin(BUILTIN_EXPERIMENTS),
    };
    if a.list || a.paper.is_none() {
        let papers = experiments.list().map_err(user)?;
        let list: String = papers
            .iter()
            .map(|p| format!("{:<16} {}\n", p.name, p.title))
            .collect();
        return out(&list);
    }
    let paper = a.paper.unwrap_or_default();
    let source = experiments.paper(&paper).map_err(user)?;
    let opts = ReproduceOptions {
        quick: a.quick,
        jobs: a.jobs,
        no_fail: a.no_fail,
        resume: a.resume,
        max_runs: a.limits.max_runs(),
        ..ReproduceOptions::new(a.out)
    };
    let runner = a.limits.runner(a.jobs);
    let rep = reproduce_from(&source, &runner, &opts).map_err(user)?;
    if a.markdown {
        out(&rep.render_markdown())?;
    } else {
        out(&rep.render_text())?;
    }
    if let Some(path) = &a.html {
        write_page(path, &rep.render_html(&command_line()))?;
    }
    match rep.exit_code() {
        0 => Ok(()),
        code => Err(Failure {
            code: code.clamp(1, 255) as u8,
            err: anyhow::anyhow!("claims of `{paper}` did not hold"),
        }),
    }
}

// The `experiments/` tree, built in by build.rs.
include!(concat!(env!("OUT_DIR"), "/experiments.rs"));
