//! The `numaplace` command as a user meets it: output, JSON, and clear errors with exit
//! code 2 for bad input.

use std::path::PathBuf;
mod common;

use common::{assert_user_error, numaplace, stderr};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("numaplace-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

const SMALL: &[&str] = &["--set", "workload.n=64", "--set", "workload.iterations=2"];

#[test]
fn bare_run_prints_a_summary() {
    let o = numaplace(&["run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("makespan"));
    assert!(out.contains("butterfly-plus"));
}

#[test]
fn json_output_has_the_documented_fields() {
    let path = tmp("fields.json");
    let mut args = vec!["run", "--json", path.to_str().unwrap()];
    args.extend_from_slice(SMALL);
    let o = numaplace(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for key in [
        "makespan_ns",
        "refs",
        "faults",
        "migrations",
        "replications",
        "coherency_faults",
        "freezes",
        "defrosts",
        "threads",
        "config",
    ] {
        assert!(v.get(key).is_some(), "missing `{key}`");
    }
    for key in ["local", "remote", "cached", "total"] {
        assert!(v["refs"].get(key).is_some(), "missing refs.{key}");
    }
    assert_eq!(v["config"]["workload"]["n"], 64);
    assert_eq!(v["config"]["machine"]["preset"], "butterfly-plus");
}

#[test]
fn two_runs_with_one_seed_write_identical_json() {
    let a = tmp("a.json");
    let b = tmp("b.json");
    for p in [&a, &b] {
        let mut args = vec![
            "run",
            "--seed",
            "42",
            "--workload",
            "matvec",
            "--json",
            p.to_str().unwrap(),
        ];
        args.extend_from_slice(&["--set", "workload.n=128"]);
        assert!(numaplace(&args).status.success());
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn config_file_values_apply_and_set_overrides_them() {
    let cfg = tmp("run.toml");
    std::fs::write(
        &cfg,
        "seed = 3\n[machine]\npreset = \"tc2000\"\nnodes = 4\n[workload]\nkind = \"matvec\"\nn = 64\n",
    )
    .unwrap();
    let out = tmp("cfg.json");
    let o = numaplace(&[
        "run",
        "--config",
        cfg.to_str().unwrap(),
        "--set",
        "workload.n=32",
        "--json",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["config"]["machine"]["preset"], "tc2000");
    assert_eq!(v["config"]["machine"]["nodes"], 4);
    assert_eq!(v["config"]["workload"]["n"], 32);
    assert_eq!(v["config"]["seed"], 3);
}

#[test]
fn unknown_machine_is_a_user_error() {
    assert_user_error(
        &numaplace(&["run", "--machine", "cray-1"]),
        &["unknown machine `cray-1`"],
    );
}

#[test]
fn unknown_workload_is_a_user_error() {
    assert_user_error(
        &numaplace(&["run", "--workload", "lu"]),
        &["workload.kind: unknown workload `lu`"],
    );
}

#[test]
fn unknown_policy_is_a_user_error() {
    assert_user_error(
        &numaplace(&["run", "--policy", "lru"]),
        &["policy.kind: unknown policy `lru`"],
    );
}

#[test]
fn zero_page_size_is_a_user_error() {
    assert_user_error(
        &numaplace(&["run", "--set", "machine.page_size_bytes=0"]),
        &["machine.page_size_bytes"],
    );
}

#[test]
fn negative_page_size_is_a_user_error() {
    assert_user_error(
        &numaplace(&["run", "--set", "machine.page_size_bytes=-4096"]),
        &["machine.page_size_bytes"],
    );
}

#[test]
fn malformed_toml_names_the_line() {
    let cfg = tmp("bad.toml");
    std::fs::write(&cfg, "seed = 1\n[workload]\nkind = \"jacobi\"\nn = = 3\n").unwrap();
    assert_user_error(
        &numaplace(&["run", "--config", cfg.to_str().unwrap()]),
        &["bad.toml:4"],
    );
}

#[test]
fn unknown_set_field_is_a_user_error_naming_it() {
    assert_user_error(
        &numaplace(&["run", "--set", "machine.costs.warp_ns=3"]),
        &["warp_ns"],
    );
    assert_user_error(
        &numaplace(&["run", "--set", "workload.sizee=3"]),
        &["sizee"],
    );
}

#[test]
fn set_without_equals_is_a_user_error() {
    assert_user_error(
        &numaplace(&["run", "--set", "workload.n"]),
        &["expected path.to.field=value"],
    );
}

#[test]
fn missing_config_file_is_a_user_error() {
    assert_user_error(
        &numaplace(&["run", "--config", "/nonexistent/run.toml"]),
        &["cannot read"],
    );
}

#[test]
fn list_names_every_registry_entry() {
    let o = numaplace(&["list"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    for name in [
        "butterfly-plus",
        "gp1000",
        "tc2000",
        "origin2000",
        "epyc-2s",
        "matvec",
        "jacobi",
        "static",
        "dedicated",
    ] {
        assert!(out.contains(name), "`{name}` missing from list");
    }
}

#[test]
fn machine_show_prints_resolved_values() {
    let o = numaplace(&["machine", "show", "tc2000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("cached_read_ns = 61"));
    assert!(out.contains("remote/local read ratio 3.52"));
}

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `reproduce PAPER --quick` with the checkout's experiments into a fresh results
/// directory (`--no-fail` too when `no_fail`); asserts success and returns the results
/// directory and the printed report.
fn reproduce_quick(paper: &str, dir: &str, no_fail: bool) -> (PathBuf, String) {
    let out = tmp(dir);
    let exp = workspace_root().join("experiments");
    let mut args = vec!["reproduce", paper, "--quick"];
    if no_fail {
        args.push("--no-fail");
    }
    args.extend(["--experiments", exp.to_str().unwrap()]);
    args.extend(["--out", out.to_str().unwrap()]);
    let o = numaplace(&args);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{text}\n{}", stderr(&o));
    (out, text)
}

#[test]
fn builtin_study_reproduces_in_quick_mode_with_claims_held() {
    let (_, text) = reproduce_quick("numa-basics", "repro-quick", false);
    assert!(text.contains("3 of 3 claims held"), "{text}");
}

#[test]
fn holliday89_reproduces_in_quick_mode_and_evaluates_every_claim() {
    let (_, text) = reproduce_quick("holliday89", "holliday-quick", true);
    // Quick sizes are too small for the paper's conclusions; what CI checks is that every
    // table runs and every claim finds its runs.
    assert!(text.contains("of 25 claims held"), "{text}");
    assert!(
        text.contains("; 8 observations without a verdict"),
        "{text}"
    );
    assert!(!text.contains("ERROR"), "{text}");
    for table in ["Table 1", "Table 4", "Table 5"] {
        assert!(text.contains(table), "{table} missing");
    }
}

#[test]
fn dunx91_reproduces_in_quick_mode_and_evaluates_every_claim() {
    let (out, text) = reproduce_quick("dunx91", "dunx91-quick", true);
    // Quick runs use a smaller grid; CI checks that the study runs, the plots and Table 1
    // appear and every claim finds its runs.
    assert!(text.contains("of 21 claims held"), "{text}");
    assert!(
        text.contains("; 7 observations without a verdict"),
        "{text}"
    );
    assert!(!text.contains("ERROR"), "{text}");
    assert!(text.contains("Table 1"), "{text}");
    for plot in [
        "figure1-completion-time.svg",
        "figure2-speedup.svg",
        "psolu-setup.svg",
    ] {
        assert!(out.join("dunx91").join(plot).is_file(), "{plot} missing");
    }
}

#[test]
fn nikolopoulos02_reproduces_in_quick_mode_and_evaluates_every_claim() {
    let (out, text) = reproduce_quick("nikolopoulos02", "nikolopoulos02-quick", true);
    // Quick runs use a 32^3 grid and two trials: CI checks that every study runs, every
    // claim finds its runs and the tables and plots appear.
    assert!(text.contains("of 36 claims held"), "{text}");
    assert!(
        text.contains("; 12 observations without a verdict"),
        "{text}"
    );
    assert!(!text.contains("ERROR"), "{text}");
    for table in ["Table 1", "Table 2", "Table 3", "Figure 7"] {
        assert!(text.contains(table), "{table} missing");
    }
    for plot in [
        "figure7-rhs-remote-per-iteration.svg",
        "figure8-bt-execution-time.svg",
        "figure9-bt-time-sharing.svg",
        "figure14-space-sharing-all-kernels.svg",
    ] {
        assert!(
            out.join("nikolopoulos02").join(plot).is_file(),
            "{plot} missing"
        );
    }
}

#[test]
fn larowe91_reproduces_in_quick_mode_and_evaluates_every_claim() {
    let (out, text) = reproduce_quick("larowe91", "larowe91-quick", true);
    // Quick runs use small programs and few points; CI checks that every study runs,
    // Table 4 and the figures appear and every claim finds its runs.
    assert!(text.contains("of 31 claims held"), "{text}");
    assert!(!text.contains("ERROR"), "{text}");
    assert!(!text.contains("plot failed"), "{text}");
    assert!(
        text.contains("Table 4") && text.contains("99% CI low"),
        "{text}"
    );
    // The break-even counts are exact in quick mode too.
    for held in ["[held] breakeven-counts", "[held] figure6-breakeven-counts"] {
        assert!(text.contains(held), "missing `{held}` in:\n{text}");
    }
    for n in 1..=9 {
        let found = std::fs::read_dir(out.join("larowe91"))
            .unwrap()
            .filter_map(|e| e.ok())
            .any(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with(&format!("figure{n}-")) && name.ends_with(".svg")
            });
        assert!(found, "figure {n} missing");
    }
}

#[test]
fn platinum89_reproduces_in_quick_mode_with_the_breakeven_claims_held() {
    let (_, text) = reproduce_quick("platinum89", "platinum89-results", true);
    for held in [
        "[held] table1-within-rounding",
        "[held] table1-never-cells",
        "[held] larowe-breakeven-counts",
    ] {
        assert!(text.contains(held), "missing `{held}` in:\n{text}");
    }
}

#[test]
fn tiering_reproduces_in_quick_mode_with_every_study_and_plot() {
    let (out, text) = reproduce_quick("tiering", "tiering-quick", true);
    for study in [
        "gups-hot-set",
        "gups-antagonist",
        "two-socket",
        "gups-regret",
    ] {
        assert!(
            text.contains(&format!("-- study {study} --")),
            "{study} missing:\n{text}"
        );
    }
    for plot in [
        "gups-hot-set-time.svg",
        "gups-hot-set-fast-share.svg",
        "gups-antagonist.svg",
        "two-socket.svg",
    ] {
        assert!(out.join("tiering").join(plot).is_file(), "{plot} missing");
    }
    assert!(!text.contains("plot failed"), "{text}");
}

#[test]
fn breakeven_prints_table_one_and_larowes_counts() {
    let o = numaplace(&["breakeven", "--machine", "gp1000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("Table 1"));
    assert!(text.contains("652.2"), "{text}");
}

#[test]
fn breakeven_with_figure_6s_operation_delays_prints_the_papers_counts() {
    for (k, a) in ["666.7", "956.5", "1246.4", "1536.2", "1826.1"]
        .iter()
        .enumerate()
    {
        let set = format!("costs.operation_delay_ns={}", 2_000_000 * k);
        let o = numaplace(&["breakeven", "--machine", "gp1000", "--set", &set]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.contains(&format!("pays above {a} references")),
            "{set}: {text}"
        );
        assert_eq!(text.contains("operation delay"), k > 0, "{text}");
    }
}

#[test]
fn breakeven_with_an_unknown_machine_is_a_user_error() {
    let o = numaplace(&["breakeven", "--machine", "nope"]);
    assert_user_error(&o, &["nope"]);
}

#[test]
fn breakeven_with_a_bad_machine_field_names_it() {
    let o = numaplace(&["breakeven", "--set", "costs.nope=1"]);
    assert_user_error(&o, &["machine.costs.nope"]);
    let o = numaplace(&["breakeven", "--set", "costs.local_read_ns=\"x\""]);
    assert_user_error(&o, &["machine.costs.local_read_ns"]);
}

#[test]
fn a_bad_platinum_parameter_is_a_user_error_naming_it() {
    let o = numaplace(&["run", "--policy", "platinum", "--set", "policy.t3_ns=5"]);
    assert_user_error(&o, &["t3_ns"]);
}

#[test]
fn a_negative_dunx_freeze_window_is_a_user_error_naming_it() {
    let o = numaplace(&[
        "run",
        "--policy",
        "dunx",
        "--set",
        "policy.freeze_window_ns=-1",
    ]);
    assert_user_error(&o, &["policy.freeze_window_ns"]);
}

#[test]
fn a_run_out_of_its_budget_is_reported_as_not_finished_with_success() {
    let path = tmp("budget.json");
    let mut args = vec![
        "run",
        "--set",
        "budget_ns=1000000",
        "--json",
        path.to_str().unwrap(),
    ];
    args.extend_from_slice(SMALL);
    let o = numaplace(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("DID NOT FINISH within the budget"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["finished"], false);
    assert_eq!(v["partial"], true);
    assert_eq!(v["config"]["budget_ns"], 1000000);

    // With room to finish, the record says so and is otherwise the run's own.
    let mut args = vec!["run", "--set", "budget_ns=1000000000000", "--json", "-"];
    args.extend_from_slice(SMALL);
    let o = numaplace(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["finished"], true);
    assert!(v.get("partial").is_none());
}

#[test]
fn a_budget_past_the_time_limit_is_a_user_error_naming_it() {
    let o = numaplace(&["run", "--set", "budget_ns=9223372036854775807"]);
    assert_user_error(&o, &["budget_ns"]);
}

#[test]
fn a_psolu_with_only_the_checker_is_a_user_error_naming_the_threads() {
    let o = numaplace(&["run", "--workload", "psolu", "--set", "workload.threads=1"]);
    assert_user_error(&o, &["workload.threads"]);
}

#[test]
fn a_third_gups_phase_is_a_user_error_naming_the_field() {
    let o = numaplace(&["run", "--workload", "gups", "--set", "workload.phases=3"]);
    assert_user_error(&o, &["workload.phases"]);
}

#[test]
fn a_second_gups_hot_set_past_the_working_set_is_a_user_error_naming_the_field() {
    let o = numaplace(&[
        "run",
        "--workload",
        "gups",
        "--set",
        "workload.phases=2",
        "--set",
        "workload.second_hot_set_start_bytes=1073741824",
    ]);
    assert_user_error(
        &o,
        &[
            "workload.second_hot_set_start_bytes",
            "past the working set",
        ],
    );
}

#[test]
fn a_false_claim_is_reported_not_held_with_a_nonzero_exit() {
    let exp = tmp("false-claim-experiments");
    let paper = exp.join("false-claim");
    std::fs::create_dir_all(&paper).unwrap();
    let src = workspace_root().join("experiments/numa-basics/matvec.toml");
    std::fs::copy(src, paper.join("matvec.toml")).unwrap();
    std::fs::write(
        paper.join("paper.toml"),
        r#"title = "a deliberately false claim"
studies = ["matvec.toml"]

[[claim]]
name = "uma-faster"
text = "The UMA variant beats the NUMA variant (false)"
study = "matvec-numa-vs-uma"
kind = "compare"
expect = "less"
left = { where = { "workload.variant" = "uma", "machine.nodes" = 16 } }
right = { where = { "workload.variant" = "numa", "machine.nodes" = 16 } }
"#,
    )
    .unwrap();
    let out = tmp("false-claim-results");
    let args = [
        "reproduce",
        "false-claim",
        "--quick",
        "--experiments",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let o = numaplace(&args);
    assert_ne!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("NOT HELD"), "{text}");
    let mut no_fail = args.to_vec();
    no_fail.extend(["--no-fail", "--resume"]);
    assert!(numaplace(&no_fail).status.success());
}

#[test]
fn sweep_writes_one_record_per_run_and_resume_runs_nothing_twice() {
    let spec = tmp("sweep.toml");
    std::fs::write(
        &spec,
        r#"name = "tiny"
trials = 2
[base.workload]
kind = "matvec"
n = 64
[base.report]
per_page = false
[[axis]]
field = "machine.nodes"
values = [2, 4]
[[axis]]
field = "workload.repeat"
range = { from = 1, to = 3, step = 1 }
"#,
    )
    .unwrap();
    let out = tmp("tiny.jsonl");
    let _ = std::fs::remove_file(&out);
    let o = numaplace(&[
        "sweep",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let first = std::fs::read_to_string(&out).unwrap();
    assert_eq!(first.lines().count(), 2 * 3 * 2);
    let again = numaplace(&[
        "sweep",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        again.status.code(),
        Some(2),
        "an existing results file needs --resume"
    );
    let resumed = numaplace(&[
        "sweep",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--resume",
    ]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), first);
    let report = numaplace(&[
        "report",
        out.to_str().unwrap(),
        "--group-by",
        "machine.nodes",
    ]);
    assert!(report.status.success(), "{}", stderr(&report));
}

#[test]
fn a_spec_with_an_empty_axis_is_a_user_error() {
    let spec = tmp("empty-axis.toml");
    std::fs::write(
        &spec,
        "name = \"x\"\n[[axis]]\nfield = \"workload.n\"\nvalues = []\n",
    )
    .unwrap();
    let o = numaplace(&[
        "sweep",
        spec.to_str().unwrap(),
        "--out",
        tmp("empty.jsonl").to_str().unwrap(),
    ]);
    assert_user_error(&o, &["axis"]);
}

#[test]
fn run_with_slowdown_reports_each_program_against_its_dedicated_run() {
    let cfg = tmp("slowdown.toml");
    std::fs::write(
        &cfg,
        // Enough iterations that jacobi outlasts a 30 ms time slice and shares processors.
        "[scheduler]\nkind = \"time-sharing\"\n\
         [[program]]\nworkload = { kind = \"jacobi\", n = 64, iterations = 20, threads = 16 }\n\
         [[program]]\nworkload = { kind = \"matvec\", n = 64, threads = 16 }\n",
    )
    .unwrap();
    let json = tmp("slowdown.json");
    let o = numaplace(&[
        "run",
        "--config",
        cfg.to_str().unwrap(),
        "--slowdown",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("slowdown against each program alone"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for p in v["programs"].as_array().unwrap() {
        assert!(p["slowdown"].as_f64().unwrap() >= 1.0, "{p}");
        assert!(p["dedicated_turnaround_ns"].as_u64().unwrap() > 0);
    }
}

#[test]
fn slowdown_and_oracle_together_are_refused() {
    let o = numaplace(&["run", "--slowdown", "--oracle"]);
    assert_user_error(&o, &["--oracle and --slowdown"]);
}

#[test]
fn a_negative_bench_min_seconds_is_a_user_error_naming_it() {
    assert_user_error(
        &numaplace(&["bench", "--min-seconds=-1"]),
        &["--min-seconds", "from 0 to 3600"],
    );
}

#[test]
fn an_unknown_bench_scenario_is_a_user_error_listing_the_known() {
    assert_user_error(
        &numaplace(&["bench", "--scenario", "nope"]),
        &["no scenario `nope`", "fine-static"],
    );
}
