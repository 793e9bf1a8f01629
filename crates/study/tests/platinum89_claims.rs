//! Claims of the built-in `platinum89` paper can fail: each holds on a result shaped as the
//! paper describes it and is not held on one that contradicts it.

use std::path::PathBuf;

use numaplace_study::claims::{evaluate_reported, Check, ReportedPoint};
use numaplace_study::reproduce::{load_paper, Paper};
use numaplace_study::spec::Spec;
use numaplace_study::{evaluate, expand, Claim, ClaimResult, Record, Status};
use serde_json::{json, Map, Value};

mod common;

fn claim(name: &str) -> Claim {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments/platinum89");
    load_paper(&dir)
        .expect("platinum89 loads")
        .0
        .claims
        .into_iter()
        .find(|c| c.name == name)
        .expect("the claim exists")
}

/// Gauss runs at 1 and 16 processors: (policy, variant, speedup at 16).
fn gauss(rows: &[(&str, &str, f64)]) -> Vec<Record> {
    let mut out = Vec::new();
    for (policy, variant, speedup) in rows {
        for (nodes, t) in [(1, 1000.0), (16, 1000.0 / speedup)] {
            let mut settings = Map::new();
            settings.insert("policy.kind".into(), json!(policy));
            settings.insert("workload.variant".into(), json!(variant));
            settings.insert("machine.nodes".into(), json!(nodes));
            out.push(Record {
                id: format!("r{:06}", out.len()),
                index: out.len(),
                seed: 1,
                settings,
                result: json!({ "makespan_ns": t }),
                error: None,
                spec_config: serde_json::Value::Null,
            });
        }
    }
    common::two_trials(out)
}

/// The claim with its check's verdict: an observation's numbers come from its check, which
/// must be able to hold and to fail like any claim's.
fn without_observation(c: &Claim) -> Claim {
    Claim {
        observation: None,
        ..c.clone()
    }
}

#[test]
fn platinum_above_the_uniform_system_program_holds_on_the_papers_speedups() {
    let c = claim("gauss-platinum-above-the-uniform-system-program");
    let recs = gauss(&[
        ("platinum", "uma", 13.5),
        ("static", "numa", 10.6),
        ("static", "uma", 4.0),
    ]);
    assert_eq!(evaluate(&c, &recs, "makespan_ns").status, Status::Held);
}

#[test]
fn platinum_above_the_uniform_system_program_fails_when_the_hand_placed_program_scales_better() {
    let c = claim("gauss-platinum-above-the-uniform-system-program");
    // A first-touch static program far below does not rescue it: the comparison is with
    // the hand-placed program.
    let recs = gauss(&[
        ("platinum", "uma", 13.5),
        ("static", "numa", 14.0),
        ("static", "uma", 4.0),
    ]);
    assert_eq!(evaluate(&c, &recs, "makespan_ns").status, Status::NotHeld);
}

/// Gauss spin-lock runs on 16 processors with the defrost daemon: (size on the lock's
/// page, makespan in seconds).
fn spin_lock(rows: &[(bool, f64)]) -> Vec<Record> {
    let recs = rows
        .iter()
        .enumerate()
        .map(|(i, (shares, secs))| {
            let mut settings = Map::new();
            settings.insert(
                "workload.size_read".into(),
                json!(if *shares { "lock-page" } else { "private" }),
            );
            settings.insert("policy.t2_ns".into(), json!(1_000_000_000u64));
            settings.insert("machine.contention".into(), json!(true));
            settings.insert("machine.nodes".into(), json!(16));
            Record {
                id: format!("r{i:06}"),
                index: i,
                seed: 1,
                settings,
                result: json!({ "makespan_ns": secs * 1e9 }),
                error: None,
                spec_config: serde_json::Value::Null,
            }
        })
        .collect();
    common::two_trials(recs)
}

#[test]
fn defrost_leaves_less_than_two_seconds_holds_at_one_and_a_half() {
    let c = claim("defrost-leaves-less-than-two-seconds");
    let recs = spin_lock(&[(true, 47.5), (false, 46.0)]);
    assert_eq!(evaluate(&c, &recs, "makespan_ns").status, Status::Held);
}

#[test]
fn defrost_leaves_less_than_two_seconds_fails_at_three_seconds_however_small_the_ratio() {
    // 3 s more on a 46 s run is within 20% (the window this claim once had) but not
    // within the paper's two seconds.
    let c = claim("defrost-leaves-less-than-two-seconds");
    let recs = spin_lock(&[(true, 49.0), (false, 46.0)]);
    assert_eq!(evaluate(&c, &recs, "makespan_ns").status, Status::NotHeld);
}

/// One backprop run under platinum at 16 processors with `frozen` of its pages frozen.
fn backprop(frozen: u64) -> Vec<Record> {
    let mut settings = Map::new();
    settings.insert("policy.kind".into(), json!("platinum"));
    settings.insert("machine.preset".into(), json!("butterfly-plus"));
    settings.insert("machine.nodes".into(), json!(16));
    common::two_trials(vec![Record {
        id: "r000000".into(),
        index: 0,
        seed: 1,
        settings,
        result: json!({ "makespan_ns": 1.0, "pages_frozen": frozen }),
        error: None,
        spec_config: serde_json::Value::Null,
    }])
}

#[test]
fn backprop_data_pages_freeze_holds_when_the_two_written_pages_freeze() {
    let c = claim("backprop-data-pages-freeze");
    assert_eq!(
        evaluate(&c, &backprop(2), "makespan_ns").status,
        Status::Held
    );
}

#[test]
fn backprop_data_pages_freeze_fails_when_the_read_only_pattern_page_freezes_too() {
    let c = claim("backprop-data-pages-freeze");
    assert_eq!(
        evaluate(&c, &backprop(3), "makespan_ns").status,
        Status::NotHeld
    );
}

#[test]
fn backprop_data_pages_freeze_fails_when_a_written_page_is_left_unfrozen() {
    let c = claim("backprop-data-pages-freeze");
    assert_eq!(
        evaluate(&c, &backprop(1), "makespan_ns").status,
        Status::NotHeld
    );
}

// Every claim, on the studies' own runs (full mode) with made-up results shaped as the paper
// describes them, then with one change that contradicts the claim.

fn paper() -> (Paper, Vec<Spec>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments/platinum89");
    load_paper(&dir).expect("platinum89 loads")
}

fn text(r: &Record, field: &str) -> String {
    match r.field(field) {
        Some(Value::String(s)) => s,
        Some(v) => v.to_string(),
        None => String::new(),
    }
}

fn num(r: &Record, field: &str) -> f64 {
    r.field(field).and_then(|v| v.as_f64()).unwrap_or(f64::NAN)
}

/// A result shaped as the paper describes the run `r` of `study` (times in s, speedups
/// linear in the processors with the paper's slope; pages and regrets as it reports them;
/// analysis studies at the paper's own numbers).
fn shape(points: &[ReportedPoint], study: &str, r: &mut Record) {
    let p = num(r, "machine.nodes");
    let t = |speedup_at_16: f64| 700.0 / (1.0 + (p - 1.0) * (speedup_at_16 - 1.0) / 15.0);
    let secs = match study {
        "gauss-speedup" | "gauss-pages" => Some(
            match (
                text(r, "policy.kind").as_str(),
                text(r, "workload.variant").as_str(),
            ) {
                ("static", "numa") => t(10.6),
                ("static", _) => t(4.0),
                _ => t(13.5),
            },
        ),
        "msort-speedup" => Some(if text(r, "policy.kind") == "platinum" {
            t(8.0)
        } else {
            t(3.0)
        }),
        // Each processor adds half of what a local-only one adds.
        "backprop-speedup" => Some(if text(r, "machine.preset") == "butterfly-plus-local" {
            t(16.0)
        } else {
            t(8.5)
        }),
        "gauss-spin-lock" => {
            let lock = text(r, "workload.size_read") == "lock-page";
            let defrost = num(r, "policy.t2_ns") > 0.0;
            Some(match (lock, defrost) {
                // Frozen: no gain beyond about five processors.
                (true, false) => t(13.5).max(280.0 + p),
                (true, true) => t(13.5) + 1.5,
                _ => t(13.5),
            })
        }
        "gauss-regret" => {
            r.result["regret_at_most"] = json!(match text(r, "program").as_str() {
                "PLATINUM" => 1.01,
                "first-touch static" => 1.6,
                _ => 1.04,
            });
            Some(50.0)
        }
        _ => None,
    };
    if let Some(s) = secs {
        // The trials spread a little, as run-to-run variation makes them.
        let k = r.seed as f64 - 3.0;
        r.result["makespan_ns"] = json!(s * 1e9 * (1.0 + 1e-4 * k));
    }
    match study {
        "gauss-pages" => {
            r.result["pages_frozen_at_end"] = json!(1);
            r.result["frozen_at_end_by_data"] = json!({ "event-counts": 1 });
        }
        "backprop-speedup" => r.result["pages_frozen"] = json!(2),
        _ => {}
    }
    // Analysis studies: each run at the paper's number for its cell. (Not the timed
    // studies: a reported speedup is no makespan.)
    for pt in points.iter().filter(|_| secs.is_none()) {
        if r.matches(&pt.selector) {
            r.result[pt.metric.as_str()] = json!(pt.value);
            if pt.metric == "s_min_words" {
                r.result["s_min_low"] = json!(pt.value - 0.5);
                r.result["s_min_high"] = json!(pt.value + 0.5);
            }
        }
    }
}

/// Every run of `spec` (full mode) with its paper-shaped result, then `change`d.
fn records(points: &[ReportedPoint], spec: &Spec, change: &dyn Fn(&mut Record)) -> Vec<Record> {
    let recs = expand(spec, false)
        .into_iter()
        .map(|p| {
            let mut r = common::unrun_record(&p);
            r.result["finished"] = json!(true);
            shape(points, &spec.name, &mut r);
            change(&mut r);
            r
        })
        .collect();
    common::two_trials(recs)
}

fn judge(c: &Claim, change: &dyn Fn(&mut Record)) -> ClaimResult {
    let (paper, specs) = paper();
    let spec = specs.iter().find(|s| s.name == c.study).unwrap();
    let points = paper.reported_points(&c.study, "", &spec.output.metric, 0.99);
    let recs = records(&points, spec, change);
    match c.check {
        Check::Reported(_) => evaluate_reported(c, &points, &recs),
        _ => evaluate(c, &recs, &spec.output.metric),
    }
}

fn scale(r: &mut Record, by: f64) {
    let t = r.result["makespan_ns"].as_f64().unwrap();
    r.result["makespan_ns"] = json!(t * by);
}

/// A change to the paper-shaped results that contradicts the named claim.
fn violation(claim: &str) -> Box<dyn Fn(&mut Record)> {
    let at16 = |r: &Record| num(r, "machine.nodes") == 16.0;
    match claim {
        "gauss-platinum-above-the-uniform-system-program" => Box::new(move |r| {
            if at16(r)
                && text(r, "policy.kind") == "platinum"
                && text(r, "workload.variant") == "uma"
            {
                scale(r, 1.5)
            }
        }),
        "gauss-one-page-frozen-at-end" => Box::new(|r| r.result["pages_frozen_at_end"] = json!(3)),
        "gauss-frozen-page-is-event-counts" => {
            Box::new(|r| r.result["frozen_at_end_by_data"] = json!({ "event-counts": 0 }))
        }
        "backprop-data-pages-freeze" => Box::new(|r| r.result["pages_frozen"] = json!(3)),
        "backprop-speedup-grows" => Box::new(move |r| {
            if at16(r) && text(r, "policy.kind") == "platinum" {
                scale(r, 1.5)
            }
        }),
        "backprop-half-slope-of-local-only" => Box::new(move |r| {
            if at16(r) && text(r, "machine.preset") == "butterfly-plus" {
                scale(r, 3.0)
            }
        }),
        "msort-gains-from-migration-and-replication" => Box::new(move |r| {
            if at16(r) && text(r, "policy.kind") == "platinum" {
                scale(r, 5.0)
            }
        }),
        "spin-lock-page-slows-gauss-without-defrost" => Box::new(move |r| {
            if at16(r)
                && text(r, "workload.size_read") == "lock-page"
                && num(r, "policy.t2_ns") == 0.0
            {
                r.result["makespan_ns"] = json!(60e9)
            }
        }),
        "spin-lock-page-is-a-bottleneck-beyond-five" => Box::new(move |r| {
            if at16(r)
                && text(r, "workload.size_read") == "lock-page"
                && num(r, "policy.t2_ns") == 0.0
            {
                r.result["makespan_ns"] = json!(100e9)
            }
        }),
        "defrost-leaves-less-than-two-seconds" => Box::new(move |r| {
            if at16(r)
                && text(r, "workload.size_read") == "lock-page"
                && num(r, "policy.t2_ns") > 0.0
            {
                let t = r.result["makespan_ns"].as_f64().unwrap();
                r.result["makespan_ns"] = json!(t + 2.5e9)
            }
        }),
        "table1-within-rounding" => Box::new(|r| {
            if num(r, "analysis.rho") == 0.17 && num(r, "analysis.g") == 0.5 {
                r.result["s_min_low"] = json!(1200.0);
                r.result["s_min_high"] = json!(1300.0);
            }
        }),
        "table1-never-cells" => Box::new(|r| {
            if r.result.get("never_possible").is_some() {
                r.result["never_possible"] = json!(0)
            }
        }),
        "larowe-breakeven-counts" => Box::new(|r| {
            if let Some(v) = r
                .result
                .get("migration_breakeven_refs")
                .and_then(Value::as_f64)
            {
                r.result["migration_breakeven_refs"] = json!(v + 5.0)
            }
        }),
        "coherent-memory-nearer-the-optimum-than-first-touch" => Box::new(|r| {
            if text(r, "program") == "PLATINUM" {
                r.result["regret_at_most"] = json!(2.0)
            }
        }),
        other => panic!("claim `{other}` has no violating result in this test: add one"),
    }
}

#[test]
fn every_platinum89_claim_holds_on_results_shaped_as_the_paper_describes() {
    for c in paper().0.claims {
        let c = without_observation(&c);
        let r = judge(&c, &|_| {});
        assert_eq!(r.status, Status::Held, "{}: {}", c.name, r.detail);
    }
}

#[test]
fn every_platinum89_claim_is_not_held_on_results_that_contradict_it() {
    for c in paper().0.claims {
        let c = without_observation(&c);
        let r = judge(&c, &*violation(&c.name));
        assert_eq!(r.status, Status::NotHeld, "{}: {}", c.name, r.detail);
    }
}
