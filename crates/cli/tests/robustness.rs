//! Inputs a researcher types every day, each of which once crashed, hung or misled the
//! program: every one now gets a clear error (exit 2) or the documented behaviour.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};

mod common;

use common::{assert_user_error, numaplace, stderr, stdout};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("numaplace-robust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn a_million_point_grid_is_refused_before_anything_is_allocated() {
    let o = numaplace(&["run", "--set", "workload.n=1000000"]);
    assert_user_error(&o, &["workload.n", "pages", "frames"]);
}

#[test]
fn a_million_point_grid_with_frames_to_spare_is_refused_by_its_memory_estimate() {
    let o = numaplace(&[
        "run",
        "--set",
        "workload.n=1000000",
        "--set",
        "machine.frames_per_node=2000000000",
        "--set",
        "report.per_page=false",
    ]);
    assert_user_error(&o, &["workload.n", "the run needs about", "--force"]);
}

#[test]
fn large_surface_wave_and_synthetic_matvec_are_refused() {
    for w in ["surface-wave", "matvec-synthetic"] {
        let o = numaplace(&["run", "--workload", w, "--set", "workload.n=1000000"]);
        assert_user_error(&o, &["workload.n"]);
    }
}

#[test]
fn a_grid_whose_point_count_overflows_is_an_error_not_a_wrap() {
    // 2^32 is the largest order the field allows; its square does not fit in 64 bits.
    let o = numaplace(&["run", "--set", "workload.n=4294967296"]);
    assert_user_error(&o, &["workload.n", "64 bits"]);
}

#[test]
fn a_field_outside_its_declared_range_is_refused_with_the_range() {
    let o = numaplace(&["run", "--set", "machine.nodes=1025"]);
    assert_user_error(&o, &["machine.nodes", "1025 is out of range", "1..=1024"]);
}

#[test]
fn a_billion_iterations_are_refused_with_the_estimate_and_the_field() {
    let o = numaplace(&["run", "--set", "workload.iterations=1000000000"]);
    assert_user_error(&o, &["workload.iterations", "--force"]);
}

#[test]
fn more_operations_than_the_limit_are_refused() {
    let o = numaplace(&["run", "--max-ops", "1000", "--set", "workload.n=64"]);
    assert_user_error(&o, &["operations", "--max-ops"]);
}

#[test]
fn estimate_prints_the_resource_estimate_without_running() {
    let o = numaplace(&["run", "--estimate", "--set", "workload.n=64"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("memory about"), "{out}");
    assert!(!out.contains("makespan"), "{out}");
}

#[test]
fn the_estimate_counts_a_json_record_only_when_one_is_written() {
    let without = stdout(&numaplace(&["run", "--estimate", "--set", "workload.n=64"]));
    assert!(
        !without.contains("JSON record of the per-page report"),
        "{without}"
    );
    let with = stdout(&numaplace(&[
        "run",
        "--estimate",
        "--json",
        "-",
        "--set",
        "workload.n=64",
    ]));
    assert!(
        with.contains("JSON record of the per-page report"),
        "{with}"
    );
}

#[test]
fn a_defrost_period_of_one_nanosecond_is_refused() {
    let o = numaplace(&["run", "--policy", "platinum", "--set", "policy.t2_ns=1"]);
    assert_user_error(&o, &["policy.t2_ns"]);
}

#[test]
fn a_one_nanosecond_series_interval_ends_with_an_error_naming_the_field() {
    let o = numaplace(&[
        "run",
        "--set",
        "workload.n=64",
        "--set",
        "report.series_interval_ns=1",
    ]);
    assert_user_error(&o, &["report.series_interval_ns"]);
}

#[test]
fn list_into_a_closed_pipe_ends_quietly_with_success() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_numaplace"))
        .arg("list")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read nothing: close the pipe at once, as `| head -0` would.
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn seeds_above_two_to_the_63_run_and_are_recorded_exactly() {
    let path = tmp("bigseed.json");
    let o = numaplace(&[
        "run",
        "--seed",
        "18446744073709551615",
        "--set",
        "workload.n=64",
        "--json",
        path.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // Beyond i64 a seed is written as a decimal string (TOML cannot hold it as a number).
    assert_eq!(v["config"]["seed"], "18446744073709551615");
}

#[test]
fn a_seed_written_as_a_string_in_a_file_is_read() {
    let path = tmp("seed.toml");
    std::fs::write(
        &path,
        "seed = \"18446744073709551615\"\n[workload]\nn = 64\n",
    )
    .unwrap();
    let o = numaplace(&["run", "--config", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("seed 18446744073709551615"));
}

#[test]
fn costs_that_overflow_simulated_time_are_an_error_not_a_saturated_makespan() {
    let o = numaplace(&[
        "run",
        "--set",
        "workload.n=64",
        "--set",
        "machine.costs.remote_read_ns=4611686018427387904",
        "--set",
        "machine.costs.remote_write_ns=4611686018427387904",
    ]);
    assert_user_error(&o, &["simulated time passed"]);
}

#[test]
fn remote_cheaper_than_local_is_refused_on_a_uniform_machine() {
    let o = numaplace(&["run", "--set", "machine.costs.remote_read_ns=100"]);
    assert_user_error(
        &o,
        &["machine.costs.remote_read_ns", "remote must be >= local"],
    );
}

#[test]
fn remote_cheaper_than_local_is_refused_on_a_distance_machine() {
    let o = numaplace(&[
        "run",
        "--machine",
        "origin2000",
        "--set",
        "machine.costs.remote_read_ns=100",
    ]);
    assert_user_error(
        &o,
        &["machine.costs.remote_read_ns", "remote must be >= local"],
    );
}

#[test]
fn a_deadlock_reports_the_simulated_time_it_happened_at() {
    let path = tmp("deadlock.toml");
    std::fs::write(
        &path,
        "[workload]\nn = 64\n[scheduler]\nkind = \"scripted\"\n\
         events = [ { at_ns = 1000000, action = \"preempt\", threads = [0, 15] } ]\n",
    )
    .unwrap();
    let o = numaplace(&["run", "--config", path.to_str().unwrap()]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("deadlock at"), "{e}");
    assert!(!e.contains("deadlock at 0 ns"), "{e}");
}

#[test]
fn json_to_standard_output_is_only_json() {
    let o = numaplace(&["run", "--set", "workload.n=64", "--json", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
    assert!(v["makespan_ns"].as_u64().unwrap() > 0);
    assert!(stderr(&o).contains("makespan"), "the table goes to stderr");
}

fn run_json(args: &[&str]) -> serde_json::Value {
    let path = tmp(&format!(
        "rt-{}.json",
        args.join("_").replace(['/', ' ', '"'], "")
    ));
    let mut all = args.to_vec();
    all.extend(["--json", path.to_str().unwrap()]);
    let o = numaplace(&all);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn machine_show_prints_a_configuration_that_runs_back_to_the_same_run() {
    for preset in [
        "butterfly-plus",
        "butterfly-plus-sat",
        "gp1000",
        "tc2000",
        "origin2000",
        "epyc-2s",
    ] {
        let shown = numaplace(&["machine", "show", preset]);
        assert!(shown.status.success(), "{}", stderr(&shown));
        let file = tmp(&format!("{preset}.toml"));
        std::fs::write(&file, &shown.stdout).unwrap();
        let small = ["--set", "workload.n=64", "--set", "workload.threads=4"];
        let mut a = vec!["run", "--config", file.to_str().unwrap()];
        a.extend(small);
        let mut b = vec!["run", "--machine", preset];
        b.extend(small);
        assert_eq!(run_json(&a), run_json(&b), "{preset}");
    }
}

#[test]
fn workload_and_policy_show_print_configurations_that_run_back_to_the_same_run() {
    for (section, name, flag) in [
        ("workload", "gauss", "--workload"),
        ("workload", "msort", "--workload"),
        ("policy", "platinum", "--policy"),
        ("policy", "holliday-daemon", "--policy"),
    ] {
        let shown = numaplace(&[section, "show", name]);
        assert!(shown.status.success(), "{}", stderr(&shown));
        let file = tmp(&format!("{section}-{name}.toml"));
        std::fs::write(&file, &shown.stdout).unwrap();
        let other: &[&str] = if section == "workload" {
            &["--set", "workload.threads=4"]
        } else {
            &["--set", "workload.n=64", "--set", "workload.threads=8"]
        };
        let mut a = vec!["run", "--config", file.to_str().unwrap()];
        a.extend_from_slice(other);
        let mut b = vec!["run", flag, name];
        b.extend_from_slice(other);
        assert_eq!(run_json(&a), run_json(&b), "{section} {name}");
    }
}

#[test]
fn an_unknown_field_in_a_run_config_names_its_line_and_dotted_path() {
    let path = tmp("unknown.toml");
    std::fs::write(
        &path,
        "seed = 2\n\n[workload]\nkind = \"jacobi\"\nsizee = 64\n",
    )
    .unwrap();
    let o = numaplace(&["run", "--config", path.to_str().unwrap()]);
    assert_user_error(&o, &["unknown.toml:5:", "workload.sizee", "unknown field"]);
}

#[test]
fn a_wrongly_typed_value_names_the_field_not_the_table() {
    let path = tmp("typed.toml");
    std::fs::write(&path, "[workload]\nkind = \"jacobi\"\n\nn = \"big\"\n").unwrap();
    let o = numaplace(&["run", "--config", path.to_str().unwrap()]);
    assert_user_error(&o, &["typed.toml:4:", "workload.n"]);
}

#[test]
fn a_value_rejected_by_validation_names_the_line_it_is_on() {
    let path = tmp("zero.toml");
    std::fs::write(&path, "[machine]\npage_size_bytes = 3\n").unwrap();
    let o = numaplace(&["run", "--config", path.to_str().unwrap()]);
    assert_user_error(&o, &["zero.toml:2:", "machine.page_size_bytes"]);
}

#[test]
fn ctrl_c_stops_a_run_and_prints_partial_statistics() {
    let path = tmp("partial.json");
    let child = Command::new(env!("CARGO_BIN_EXE_numaplace"))
        .args([
            "run",
            "--set",
            "workload.n=64",
            "--set",
            "workload.iterations=5000000",
            "--force",
            "--json",
            path.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stdout(&o).contains("PARTIAL"), "{}", stdout(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["partial"], true);
}

#[test]
fn list_fields_prints_each_field_with_the_range_validation_enforces() {
    let o = numaplace(&["list", "--fields"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("nodes "))
        .unwrap_or_else(|| panic!("no `nodes` line in:\n{out}"));
    assert!(line.contains("1..=1024"), "{line}");
    // The listed bound is the enforced one: one past it is refused, naming the range.
    let o = numaplace(&["run", "--set", "machine.nodes=0"]);
    assert_user_error(&o, &["machine.nodes", "1..=1024"]);
}
