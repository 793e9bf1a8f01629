//! The HTML pages of a reproduction and of a results file: everything the text says,
//! escaped, figures inline, nothing fetched from elsewhere, the same bytes every time.

mod common;

use std::path::Path;

use common::{FakeRunner, SPEC_3X5};
use numaplace_study::parse_spec;
use numaplace_study::report::{report, ReportOptions};
use numaplace_study::reproduce::{reproduce, ReproReport, ReproduceOptions};
use numaplace_study::sweep::{run_sweep, SweepOptions};

/// A paper with a held claim, a claim that does not hold, an observation, a reported
/// number, a calibrated input and markup in its texts.
fn write_paper(root: &Path) -> std::path::PathBuf {
    let dir = root.join("fake");
    std::fs::create_dir_all(&dir).unwrap();
    let spec = SPEC_3X5.replace("trials = 5", "trials = 2")
        + "[[output.plot]]\nkind = \"line\"\nx = \"machine.costs.remote_read_ns\"\nfile = \"cost\"\n";
    std::fs::write(dir.join("study.toml"), spec).unwrap();
    let paper = r#"title = "A <fake> paper & its claims"
citation = "Nobody, 1989"
studies = ["study.toml"]

[[reported]]
table = "Table 1"
row = { "policy.kind" = "static", "machine.nodes" = 2 }
value = 5000.0
unit_note = "ns, as <printed>"

[[calibrated]]
input = "machine.costs.remote_read_ns"
value = 1000
fitted_to = "Table 1: 5 us"
note = "fitted so that remote < 2 x local"

[[claim]]
name = "static-faster"
text = "static < dynamic & so static is faster"
study = "three-axes"
kind = "compare"
left = { where = { "policy.kind" = "static" } }
right = { where = { "policy.kind" = "dynamic" } }
expect = "less"

[[claim]]
name = "impossibly-fast"
text = "runs take at most 10 ns"
study = "three-axes"
kind = "value"
left = { where = { "machine.nodes" = 2 } }
at_most = 10.0

[[claim]]
name = "remote-cost-hurts"
text = "a remote reference costs more"
study = "three-axes"
kind = "trend"
over = "machine.costs.remote_read_ns"
left = { where = { "policy.kind" = "static" } }
expect = "increasing"
observation = "the paper says it in passing"
"#;
    std::fs::write(dir.join("paper.toml"), paper).unwrap();
    dir
}

fn opts(out: &Path) -> ReproduceOptions {
    ReproduceOptions {
        jobs: 2,
        no_fail: true,
        progress: false,
        max_runs: None,
        ..ReproduceOptions::new(out)
    }
}

fn fake_reproduction(root: &Path, out: &str) -> ReproReport {
    let dir = write_paper(root);
    reproduce(&dir, &FakeRunner::new(0), &opts(&root.join(out))).unwrap()
}

#[test]
fn a_reproductions_page_carries_every_claim_its_verdict_and_the_tally() {
    let tmp = tempfile::tempdir().unwrap();
    let rep = fake_reproduction(tmp.path(), "out");
    let page = rep.render_html("numaplace reproduce fake");
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    for c in &rep.claims {
        assert!(
            page.contains(&format!("id=\"claim-{}\"", c.name)),
            "{}",
            c.name
        );
        let words = match c.verdict().as_str() {
            v if v.starts_with("ERROR") => "ERROR".to_string(),
            v => v.to_string(),
        };
        assert!(page.contains(&format!(">{words}</span>")), "{words}");
    }
    assert!(page.contains(&rep.tally()), "{}", rep.tally());
    assert!(page.contains("Observations (no verdict)"));
    assert!(page.contains("No verdict: the paper says it in passing"));
    assert!(page.contains("<svg"), "the study's plot is inline");
    assert!(page.contains("The paper&#39;s numbers beside ours"));
    assert!(page.contains("99% CI"), "ours carries the study's interval");
}

#[test]
fn a_reproductions_page_escapes_its_texts_and_keeps_calibrated_inputs_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let page = fake_reproduction(tmp.path(), "out").render_html("numaplace reproduce fake");
    assert!(page.contains("static &lt; dynamic &amp; so static is faster"));
    assert!(page.contains("A &lt;fake&gt; paper &amp; its claims"));
    assert!(page.contains("ns, as &lt;printed&gt;"));
    assert!(!page.contains("<fake>") && !page.contains("<printed>"));
    let calibrated = page
        .find("id=\"calibrated\"")
        .expect("a calibrated section");
    let last_study = page.rfind("class=\"study\"").unwrap();
    assert!(
        calibrated > last_study,
        "calibrated inputs come after the studies"
    );
    assert!(page[calibrated..].contains("Calibrated inputs (fitted to the paper; not results)"));
    assert!(page[calibrated..].contains("fitted so that remote &lt; 2 x local"));
}

#[test]
fn a_page_fetches_nothing_and_runs_no_script() {
    let tmp = tempfile::tempdir().unwrap();
    let page = fake_reproduction(tmp.path(), "out").render_html("numaplace reproduce fake");
    assert!(!page.contains("http://") && !page.contains("https://"));
    assert!(!page.contains("<script") && !page.contains(" src="));
    assert!(!page.contains("<link"));
}

#[test]
fn the_same_reproduction_gives_the_same_page() {
    let tmp = tempfile::tempdir().unwrap();
    let a = fake_reproduction(tmp.path(), "a").render_html("cmd");
    let b = fake_reproduction(tmp.path(), "b").render_html("cmd");
    let where_a = tmp.path().join("a").display().to_string();
    let where_b = tmp.path().join("b").display().to_string();
    assert_eq!(a.replace(&where_a, "OUT"), b.replace(&where_b, "OUT"));
}

#[test]
fn a_results_files_page_has_its_table_and_a_figure() {
    let spec = parse_spec(SPEC_3X5, "spec.toml").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("res.jsonl");
    let o = SweepOptions {
        jobs: 2,
        progress: false,
        ..SweepOptions::new(&results)
    };
    run_sweep(&spec, &FakeRunner::new(0), &o).unwrap();
    let page = tmp.path().join("res.html");
    let opts = ReportOptions {
        html: Some(page.clone()),
        command: "numaplace report res.jsonl --html res.html".into(),
        ..ReportOptions::default()
    };
    let out = report(&results, &opts).unwrap();
    assert!(out.files.contains(&page));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("60 runs (0 failed)"), "{html}");
    assert!(
        html.contains("<th class=\"num\">mean makespan_ns</th>"),
        "{html}"
    );
    assert!(html.contains("<svg"), "a figure is drawn without --plot");
    assert!(html.contains("numaplace report res.jsonl --html res.html"));
    assert!(!html.contains("http://") && !html.contains("https://"));
    report(&results, &opts).unwrap();
    assert_eq!(std::fs::read_to_string(&page).unwrap(), html);
}
