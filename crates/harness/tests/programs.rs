//! Multiprogrammed runs from configuration files: `[[program]]` tables, their errors
//! (named with the program's path and line), `--set` into a program, and per-program
//! results.

use numaplace_harness::{resolve_text, run_to_json, Overrides, UserError};

const TWO: &str = r#"
[machine]
preset = "butterfly-plus"

[[program]]
workload = { kind = "jacobi", n = 64, iterations = 2, threads = 4 }

[[program]]
start_ns = 1000000
workload = { kind = "matvec", n = 64, threads = 4 }
"#;

fn resolve(text: &str, sets: &[&str]) -> Result<numaplace_harness::RunConfig, UserError> {
    let ov = Overrides {
        sets: sets.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    resolve_text("two.toml", text, &ov)
}

#[test]
fn two_programs_run_with_a_result_each() {
    let cfg = resolve(TWO, &[]).unwrap();
    let out = run_to_json(&cfg).unwrap();
    let programs = out.json["programs"].as_array().unwrap();
    assert_eq!(programs.len(), 2);
    assert_eq!(programs[0]["name"], "jacobi");
    assert_eq!(programs[1]["name"], "matvec");
    assert_eq!(programs[1]["start_ns"], 1_000_000);
    assert_eq!(programs[1]["first_thread"], 4);
    assert!(out.stats.makespan_ns >= out.stats.programs[1].completion_ns);
}

#[test]
fn the_second_programs_threads_take_the_next_processors() {
    let cfg = resolve(TWO, &[]).unwrap();
    let out = run_to_json(&cfg).unwrap();
    // Dedicated: global thread i on processor i, one processor per node here.
    let nodes: Vec<u16> = out.stats.threads.iter().map(|t| t.node).collect();
    assert_eq!(nodes, (0..8).collect::<Vec<u16>>());
}

#[test]
fn a_resolved_multiprogram_configuration_reads_back_to_the_same_run() {
    let cfg = resolve(TWO, &[]).unwrap();
    let text = toml::to_string(&cfg).unwrap();
    let again = resolve(&text, &[]).unwrap();
    assert_eq!(cfg, again);
    assert!(!text.contains("\n[workload]"), "{text}");
}

#[test]
fn a_bad_field_of_a_program_names_its_path_and_line() {
    let text = TWO.replace("kind = \"matvec\", n = 64", "kind = \"matvec\", n = 0");
    let e = resolve(&text, &[]).unwrap_err();
    assert_eq!(e.field(), Some("program[1].workload.n"), "{e}");
    assert!(e.to_string().starts_with("two.toml:10: "), "{e}");
}

#[test]
fn an_unknown_field_of_a_programs_workload_is_named_under_the_program() {
    let text = TWO.replace("n = 64, iterations = 2", "n = 64, iteratons = 2");
    let e = resolve(&text, &[]).unwrap_err();
    assert_eq!(e.field(), Some("program[0].workload.iteratons"), "{e}");
}

#[test]
fn an_unknown_workload_of_a_program_lists_the_known_ones() {
    let text = TWO.replace("kind = \"matvec\"", "kind = \"matvek\"");
    let e = resolve(&text, &[]).unwrap_err().to_string();
    assert!(
        e.contains("program[1].workload.kind: unknown workload `matvek`"),
        "{e}"
    );
}

#[test]
fn a_workload_and_programs_together_are_refused() {
    let text = format!("[workload]\nkind = \"jacobi\"\n{TWO}");
    let e = resolve(&text, &[]).unwrap_err().to_string();
    assert!(e.contains("not both"), "{e}");
}

#[test]
fn a_program_without_a_workload_is_refused() {
    let text = "[[program]]\nstart_ns = 5\n";
    let e = resolve(text, &[]).unwrap_err().to_string();
    assert!(e.contains("program[0].workload: missing"), "{e}");
}

#[test]
fn set_reaches_a_program_by_index() {
    let cfg = resolve(TWO, &["program[1].start_ns=7", "program.0.workload.n=32"]).unwrap();
    assert_eq!(cfg.program[1].start_ns, 7);
    let n = toml::Value::try_from(&cfg.program[0].workload).unwrap()["n"].clone();
    assert_eq!(n.as_integer(), Some(32));
}

#[test]
fn set_beyond_the_list_of_programs_is_an_error() {
    let e = resolve(TWO, &["program[2].start_ns=7"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("`program` has 2 elements"), "{e}");
}

#[test]
fn programs_that_need_more_processors_than_the_machine_has_are_refused() {
    let text = TWO.replace(
        "threads = 4 }\n\n[[program]]",
        "threads = 16 }\n\n[[program]]",
    );
    let e = resolve(&text, &[]).unwrap_err().to_string();
    assert!(e.contains("programs of 16 + 4 threads"), "{e}");
}

#[test]
fn a_scripted_event_may_number_threads_within_a_program() {
    let text = format!(
        "{TWO}\n[scheduler]\nkind = \"scripted\"\n[[scheduler.events]]\nat_ns = 0\n\
         action = \"preempt\"\nprogram = 1\nthreads = [0, 0]\n\
         [[scheduler.events]]\nat_ns = 2000000\naction = \"resume\"\nprogram = 1\n\
         threads = [0, 0]\nproc = 4\n"
    );
    let cfg = resolve(&text, &[]).unwrap();
    let out = run_to_json(&cfg).unwrap();
    // Program 1's thread 0 is the run's thread 4: created not running, it missed the
    // dealing of the first iteration, whose chunks went to its program's other threads.
    assert!(out.stats.threads[4].refs.total < out.stats.threads[5].refs.total);
    assert!(out.stats.threads[4].completion_ns >= 2_000_000);
}

#[test]
fn a_scripted_event_naming_a_missing_program_is_refused() {
    let text = format!(
        "{TWO}\n[scheduler]\nkind = \"scripted\"\n[[scheduler.events]]\nat_ns = 0\n\
         action = \"preempt\"\nprogram = 2\nthreads = [0, 0]\n"
    );
    let e = resolve(&text, &[]).unwrap_err().to_string();
    assert!(e.contains("scheduler.events[0].program"), "{e}");
}

#[test]
fn the_estimate_covers_every_program() {
    let cfg = resolve(TWO, &[]).unwrap();
    let both = cfg.estimate().unwrap();
    let mut first = cfg.clone();
    first.program.truncate(1);
    let one = first.estimate().unwrap();
    assert!(both.pages > one.pages, "{} vs {}", both.pages, one.pages);
    assert_eq!(both.threads, 8);
    assert!(both.bytes > one.bytes);
}

const SHARED: &str = r#"
[machine]
preset = "butterfly-plus"

[scheduler]
kind = "time-sharing"

[[program]]
workload = { kind = "jacobi", n = 64, iterations = 3, threads = 16 }

[[program]]
workload = { kind = "jacobi", n = 64, iterations = 3, threads = 16 }
"#;

#[test]
fn a_program_alone_on_dedicated_processors_has_slowdown_one() {
    let cfg = resolve(TWO, &["program[1].start_ns=0"]).unwrap();
    let one = numaplace_harness::slowdown::dedicated_config(&cfg, &cfg.programs().unwrap()[0]);
    let out = run_to_json(&one).unwrap();
    let s = numaplace_harness::slowdown::slowdowns(&one, &out.stats).unwrap();
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].ratio(), 1.0);
}

#[test]
fn programs_sharing_processors_are_slowed_down_against_their_dedicated_runs() {
    let cfg = resolve(SHARED, &[]).unwrap();
    let out = run_to_json(&cfg).unwrap();
    let s = numaplace_harness::slowdown::slowdowns(&cfg, &out.stats).unwrap();
    assert_eq!(s.len(), 2);
    assert!(s.iter().all(|p| p.ratio() >= 1.0), "{s:?}");
    assert!(s.iter().any(|p| p.ratio() > 1.2), "{s:?}");
}

#[test]
fn the_record_gains_each_programs_dedicated_turnaround_and_slowdown() {
    let cfg = resolve(SHARED, &[]).unwrap();
    let mut out = run_to_json(&cfg).unwrap();
    let s = numaplace_harness::slowdown::slowdowns(&cfg, &out.stats).unwrap();
    numaplace_harness::slowdown::add_to_record(&mut out.json, &s);
    let p = &out.json["programs"][1];
    assert_eq!(p["dedicated_turnaround_ns"], s[1].dedicated_ns);
    assert_eq!(p["slowdown"].as_f64(), Some(s[1].ratio()));
}

#[test]
fn each_programs_migrations_and_resident_set_are_its_own() {
    let cfg = resolve(
        SHARED,
        &[
            "policy.kind=\"platinum\"",
            "program[1].workload.iterations=6",
        ],
    )
    .unwrap();
    let out = run_to_json(&cfg).unwrap();
    let p = &out.stats.programs;
    assert!(out.stats.events.migrations > 0);
    assert_eq!(
        p[0].migrations + p[1].migrations,
        out.stats.events.migrations
    );
    for q in p {
        assert!(q.resident_pages > 0 && q.resident_pages <= q.pages, "{q:?}");
    }
    assert_eq!(
        out.json["programs"][1]["resident_pages"],
        p[1].resident_pages
    );
}

#[test]
fn in_a_run_of_one_program_its_series_references_are_the_runs() {
    let cfg = resolve(TWO, &["program[1].start_ns=0"]).unwrap();
    let one = numaplace_harness::slowdown::dedicated_config(&cfg, &cfg.programs().unwrap()[0]);
    let out = run_to_json(&one).unwrap();
    assert!(!out.stats.series.is_empty());
    for p in &out.stats.series {
        assert_eq!(p.program_refs, p.refs, "{p:?}");
    }
}

#[test]
fn each_programs_series_adds_up_to_its_own_references() {
    let cfg = resolve(SHARED, &[]).unwrap();
    let out = run_to_json(&cfg).unwrap();
    for (i, prog) in out.stats.programs.iter().enumerate() {
        let total: u64 = out
            .stats
            .series
            .iter()
            .filter(|p| p.program == i as u32)
            .map(|p| p.program_refs.total)
            .sum();
        assert_eq!(total, prog.refs.total, "program {i}");
    }
}

#[test]
fn the_engine_names_each_pages_arrays_as_the_configuration_does() {
    // Two programs, so the second's pages follow the first's; each holds several arrays.
    let text = TWO.replace(
        "kind = \"jacobi\", n = 64, iterations = 2",
        "kind = \"gauss\", n = 40",
    );
    let cfg = resolve(&text, &[]).unwrap();
    let from_engine = cfg.engine().unwrap().page_data();
    assert_eq!(from_engine, cfg.page_data().unwrap());
    assert_eq!(from_engine.get(0), Some("matrix"));
    assert_eq!(from_engine.get(from_engine.len() - 1), Some("y"));
}
