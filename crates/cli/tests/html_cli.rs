//! `--html`: the pages `reproduce`, `report` and `run` write, as a user meets them.

use std::path::{Path, PathBuf};

mod common;

use common::{assert_user_error, numaplace_in, stderr, stdout};

/// A fresh, empty directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("numaplace-html-cli-{}", std::process::id()))
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Nothing on the page comes from elsewhere.
fn assert_self_contained(page: &str) {
    assert!(!page.contains("http://") && !page.contains("https://"));
    assert!(!page.contains("<script") && !page.contains(" src="));
}

/// The claims the text report lists (`[verdict] name: ...`) and its observations
/// (`name: ...` followed by `no verdict:`).
fn claims_of(text: &str) -> (Vec<(String, String)>, Vec<String>) {
    let mut claims = Vec::new();
    let mut observations = Vec::new();
    let mut section = "";
    for line in text.lines() {
        if line.starts_with("-- ") {
            section = line;
            continue;
        }
        if section.starts_with("-- claims") {
            if let Some(rest) = line.strip_prefix('[') {
                let (verdict, rest) = rest.split_once("] ").unwrap();
                let name = rest.split(':').next().unwrap();
                claims.push((verdict.to_string(), name.to_string()));
            }
        } else if section.starts_with("-- observations") && !line.starts_with(' ') {
            if let Some((name, _)) = line.split_once(':') {
                observations.push(name.to_string());
            }
        }
    }
    (claims, observations)
}

#[test]
fn reproduce_writes_a_page_with_every_claim_its_verdict_and_the_tally() {
    let dir = scratch("reproduce-platinum89");
    let o = numaplace_in(
        &dir,
        &[
            "reproduce",
            "platinum89",
            "--quick",
            "--no-fail",
            "--html",
            "p.html",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("wrote p.html"));
    let text = stdout(&o);
    let page = read(&dir.join("p.html"));
    let (claims, observations) = claims_of(&text);
    assert!(claims.len() >= 5, "{text}");
    for (verdict, name) in &claims {
        let item = page
            .find(&format!("<li id=\"claim-{name}\">"))
            .unwrap_or_else(|| panic!("{name} has no entry"));
        let label = page[item..].find("</span>").map(|e| &page[item..item + e]);
        assert!(
            label.is_some_and(|l| l.ends_with(&format!(">{verdict}"))),
            "{name}: {label:?}, expected {verdict}"
        );
    }
    for name in &observations {
        assert!(
            page.contains(&format!("<li id=\"claim-{name}\">")),
            "{name}"
        );
    }
    let tally = text
        .lines()
        .rev()
        .find(|l| l.contains("claims held"))
        .unwrap();
    assert!(page.contains(tally), "{tally}");
    assert!(page.contains("<svg"), "figures inline");
    assert!(page.contains("id=\"calibrated\""), "a calibrated section");
    assert!(page.contains("numaplace reproduce platinum89 --quick --no-fail --html p.html"));
    assert_self_contained(&page);
}

#[test]
fn run_writes_its_page_with_a_heatmap_of_where_its_pages_were() {
    let dir = scratch("run-page");
    let args = [
        "run",
        "--workload",
        "gauss",
        "--policy",
        "platinum",
        "--set",
        "workload.n=64",
    ];
    let with = |extra: &[&str]| {
        let all: Vec<&str> = args.iter().chain(extra).copied().collect();
        let o = numaplace_in(&dir, &all);
        assert!(o.status.success(), "{}", stderr(&o));
        o
    };
    with(&["--html", "run.html", "--json", "located.json"]);
    with(&["--json", "plain.json"]);
    with(&["--json", "again.json", "--locations"]);
    let page = read(&dir.join("run.html"));
    assert!(page.contains("Run: gauss under platinum on butterfly-plus"));
    assert!(page.contains("Where each page was (as its references saw it)"));
    assert!(page.contains("<title>page 0 matrix, 0 to "), "{page}");
    assert!(page.contains("Remote references per iteration"));
    assert_self_contained(&page);

    // The locations are an opt-in field: the rest of the record is as it was.
    let plain: serde_json::Value = serde_json::from_str(&read(&dir.join("plain.json"))).unwrap();
    let mut located: serde_json::Value =
        serde_json::from_str(&read(&dir.join("located.json"))).unwrap();
    assert!(plain.get("locations").is_none());
    assert!(located["locations"]["changes"]
        .as_array()
        .is_some_and(|c| !c.is_empty()));
    located.as_object_mut().unwrap().remove("locations");
    assert_eq!(located, plain);

    // `report` makes the same page of the record, but for the command that made it.
    let o = numaplace_in(&dir, &["report", "again.json", "--html", "again.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let again = read(&dir.join("again.html"));
    let strip = |p: &str| {
        p.lines()
            .filter(|l| !l.starts_with("<p>Command:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&again), strip(&page));
}

#[test]
fn report_of_a_run_record_without_locations_shows_where_the_pages_ended() {
    let dir = scratch("run-record-plain");
    let o = numaplace_in(&dir, &["run", "--json", "r.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = numaplace_in(&dir, &["report", "r.json", "--html", "r.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = read(&dir.join("r.html"));
    assert!(page.contains("Where each page was at the end"), "{page}");
    assert_self_contained(&page);
}

#[test]
fn report_of_a_run_record_needs_html_and_takes_no_results_options() {
    let dir = scratch("run-record-options");
    let o = numaplace_in(&dir, &["run", "--json", "r.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = numaplace_in(&dir, &["report", "r.json"]);
    assert_user_error(&o, &["run's record", "--html"]);
    let o = numaplace_in(
        &dir,
        &["report", "r.json", "--html", "r.html", "--markdown"],
    );
    assert_user_error(&o, &["only --html applies"]);
    assert!(!dir.join("r.html").exists());
}

#[test]
fn report_writes_a_page_of_a_sweep() {
    let dir = scratch("sweep-page");
    std::fs::write(
        dir.join("small.toml"),
        "name = \"small\"\ntrials = 2\n[base.workload]\nkind = \"jacobi\"\nn = 64\niterations = 2\n\
         [[axis]]\nfield = \"machine.nodes\"\nvalues = [2, 4]\n",
    )
    .unwrap();
    let o = numaplace_in(&dir, &["sweep", "small.toml"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = numaplace_in(&dir, &["report", "small.jsonl", "--html", "small.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("small.jsonl: 4 runs"),
        "the text as before"
    );
    let page = read(&dir.join("small.html"));
    assert!(page.contains("Results: small.jsonl"));
    assert!(page.contains("<svg"));
    assert_self_contained(&page);
}
