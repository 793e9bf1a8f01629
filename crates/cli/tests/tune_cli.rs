//! `numaplace tune` and `numaplace robustness` end to end, on msort (a run takes
//! milliseconds) and with small budgets.

use std::path::Path;

mod common;

use common::{assert_user_error, numaplace, stderr, stdout};

/// `tune` on msort with a budget of 12 runs and 2 held-out runs unless `extra` says
/// otherwise (a later option replaces an earlier one).
/// `tune` on gp1000 with only the workload, the policy and `extra` given.
fn bare_tune<'a>(workload: &'a str, policy: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "tune",
        "--workload",
        workload,
        "--machine",
        "gp1000",
        "--policy",
        policy,
    ];
    v.extend(extra);
    v
}

fn tune_args<'a>(out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut budget = "12";
    let mut holdout = "2";
    let mut rest = Vec::new();
    let mut it = extra.iter();
    while let Some(&a) = it.next() {
        match a {
            "--budget" => budget = it.next().unwrap(),
            "--holdout" => holdout = it.next().unwrap(),
            _ => rest.push(a),
        }
    }
    let mut v = bare_tune(
        "msort",
        "larowe",
        &["--budget", budget, "--holdout", holdout, "--out", out],
    );
    v.extend(rest);
    v
}

#[test]
fn an_unknown_workload_is_refused_naming_the_option() {
    let o = numaplace(&bare_tune("nope", "larowe", &[]));
    assert_user_error(&o, &["--workload", "nope", "known:"]);
}

#[test]
fn a_budget_of_zero_is_refused_naming_the_option() {
    let o = numaplace(&bare_tune("msort", "larowe", &["--budget", "0"]));
    assert_user_error(&o, &["--budget"]);
}

#[test]
fn a_budget_below_one_candidates_trials_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let o = numaplace(&tune_args(
        out.to_str().unwrap(),
        &["--budget", "2", "--trials", "3"],
    ));
    assert_user_error(&o, &["--budget 2", "--trials 3"]);
}

#[test]
fn a_reversed_or_out_of_range_parameter_range_is_refused_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let out = out.to_str().unwrap();
    let o = numaplace(&tune_args(out, &["--range", "freeze_window_ns=1e9..1e6"]));
    assert_user_error(&o, &["--range freeze_window_ns=1e9..1e6", "exceeds"]);
    let o = numaplace(&tune_args(out, &["--range", "recent_mod=1..1e9"]));
    assert_user_error(&o, &["--range recent_mod=1..1e9", "declared range"]);
    let o = numaplace(&tune_args(out, &["--range", "freeze_windw_ns=1..2"]));
    assert_user_error(&o, &["--range freeze_windw_ns=1..2", "freeze_window_ns"]);
    let o = numaplace(&tune_args(out, &["--range", "freeze_window_ns=a..b"]));
    assert_user_error(&o, &["--range", "two finite numbers"]);
    assert!(!Path::new(out).exists(), "nothing written for bad input");
}

#[test]
fn a_policy_without_a_search_space_is_refused_naming_the_tunable_ones() {
    let o = numaplace(&bare_tune("msort", "static", &[]));
    assert_user_error(&o, &["--policy static", "no search space", "larowe"]);
}

#[test]
fn an_unknown_method_is_refused_naming_the_option() {
    let o = numaplace(&bare_tune("msort", "larowe", &["--method", "grid"]));
    assert_user_error(&o, &["--method", "tpe, halving, random"]);
}

#[test]
fn tune_writes_a_best_setting_that_run_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let o = numaplace(&tune_args(out.to_str().unwrap(), &[]));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("best: freeze_window_ns="), "{text}");
    assert!(text.contains("held out (2 seeds)"), "{text}");
    for f in [
        "runs.jsonl",
        "candidates.json",
        "candidates.csv",
        "best.toml",
        "convergence.svg",
        "convergence.png",
        "summary.json",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    let runs = std::fs::read_to_string(out.join("runs.jsonl")).unwrap();
    assert_eq!(runs.lines().count(), 12);
    let best = out.join("best.toml");
    let r = numaplace(&[
        "run",
        "--config",
        best.to_str().unwrap(),
        "--workload",
        "msort",
        "--machine",
        "gp1000",
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(stdout(&r).contains("larowe"), "{}", stdout(&r));
}

#[test]
fn tune_runs_the_policys_defaults_first_under_the_users_sets() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let o = numaplace(&tune_args(
        out.to_str().unwrap(),
        &["--holdout", "0", "--set", "policy.preset=\"msort\""],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let runs = std::fs::read_to_string(out.join("runs.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(runs.lines().next().unwrap()).unwrap();
    assert_eq!(first["origin"], "default");
    // msort's Table 3 setting: 50 ms, 0, 10 s, 0, 0, 0.
    assert_eq!(
        first["params"],
        serde_json::json!({
            "freeze_window_ns": 50_000_000,
            "recent_mod": 0,
            "scan_delay_ns": 10_000_000_000u64,
            "sample_passes": 0,
            "defrost_trigger": 0,
            "trigger_method": 0,
        })
    );
}

#[test]
fn tune_gives_the_same_runs_for_a_seed_whatever_the_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let runs = |jobs: &str, name: &str| {
        let out = dir.path().join(name);
        let o = numaplace(&tune_args(
            out.to_str().unwrap(),
            &["--jobs", jobs, "--holdout", "0"],
        ));
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read_to_string(out.join("runs.jsonl")).unwrap()
    };
    assert_eq!(runs("1", "a"), runs("2", "b"));
}

#[test]
fn an_existing_search_is_refused_without_resume_and_resumed_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let out = out.to_str().unwrap();
    let o = numaplace(&tune_args(out, &["--holdout", "0"]));
    assert!(o.status.success(), "{}", stderr(&o));
    let before = std::fs::read_to_string(Path::new(out).join("runs.jsonl")).unwrap();
    let o = numaplace(&tune_args(out, &["--holdout", "0"]));
    assert_user_error(&o, &["runs.jsonl exists", "--resume"]);
    // Half the runs lost: resuming runs only those again and ends where the first did.
    let half: String = before.lines().take(6).map(|l| format!("{l}\n")).collect();
    std::fs::write(Path::new(out).join("runs.jsonl"), &half).unwrap();
    let o = numaplace(&tune_args(out, &["--holdout", "0", "--resume"]));
    assert!(o.status.success(), "{}", stderr(&o));
    let after = std::fs::read_to_string(Path::new(out).join("runs.jsonl")).unwrap();
    assert_eq!(after, before);
}

#[test]
fn robustness_names_the_minimax_setting_of_a_grid() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = numaplace(&[
        "robustness",
        "--workloads",
        "msort",
        "--machines",
        "gp1000,tc2000",
        "--policy",
        "larowe",
        "--candidates",
        "default,preset:msort,tuned,sampled:2",
        "--budget",
        "6",
        "--eval-trials",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("minimax-regret setting:"), "{text}");
    assert!(text.contains("tuned:msort/gp1000"), "{text}");
    assert!(text.contains("preset:msort"), "{text}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("robustness.json")).unwrap())
            .unwrap();
    assert_eq!(j["cells"].as_array().unwrap().len(), 2);
    assert!(j["minimax"].is_string());
    // Each cell's tuned best has no regret against itself.
    let tuned = j["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["setting"]
                .as_str()
                .unwrap()
                .contains("tuned:msort/gp1000")
        })
        .unwrap();
    assert_eq!(tuned["regret"][0].as_f64(), Some(0.0));
}

#[test]
fn robustness_refuses_an_unknown_machine_naming_the_option() {
    let o = numaplace(&[
        "robustness",
        "--workloads",
        "msort",
        "--machines",
        "gp1000,nope",
        "--policy",
        "larowe",
    ]);
    assert_user_error(&o, &["--machine `nope`", "known:"]);
}
