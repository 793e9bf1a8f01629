//! Claims of the built-in `platinum89` paper can fail: each holds on a result shaped as the
//! paper describes it and is not held on one that contradicts it.

use std::path::PathBuf;

use numaplace_study::reproduce::load_paper;
use numaplace_study::{evaluate, Claim, Record, Status};
use serde_json::{json, Map};

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
    out
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
    rows.iter()
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
        .collect()
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
    vec![Record {
        id: "r000000".into(),
        index: 0,
        seed: 1,
        settings,
        result: json!({ "makespan_ns": 1.0, "pages_frozen": frozen }),
        error: None,
        spec_config: serde_json::Value::Null,
    }]
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
