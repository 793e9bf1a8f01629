//! The claims that read a paper's conclusion through the offline optimum can fail: each
//! holds on regrets shaped as the conclusion says and is not held when they contradict it.

use std::path::PathBuf;

use numaplace_study::reproduce::load_paper;
use numaplace_study::{evaluate, Claim, Record, Status};
use serde_json::{json, Map};

mod common;

fn claim(paper: &str, name: &str) -> Claim {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments")
        .join(paper);
    load_paper(&dir)
        .expect("the paper loads")
        .0
        .claims
        .into_iter()
        .find(|c| c.name == name)
        .map(|c| without_observation(&c))
        .expect("the claim exists")
}

/// One record per (axis label, regret_at_most).
fn records(field: &str, rows: &[(&str, f64)]) -> Vec<Record> {
    let recs = rows
        .iter()
        .enumerate()
        .map(|(i, (label, regret))| {
            let mut settings = Map::new();
            settings.insert(field.into(), json!(label));
            Record {
                id: format!("r{i:06}"),
                index: i,
                seed: 1,
                settings,
                result: json!({ "makespan_ns": 1.0, "regret_at_most": regret }),
                error: None,
                spec_config: serde_json::Value::Null,
            }
        })
        .collect();
    common::two_trials(recs)
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
fn platinum_nearer_the_optimum_than_first_touch_holds_when_its_regret_is_smaller() {
    let c = claim(
        "platinum89",
        "coherent-memory-nearer-the-optimum-than-first-touch",
    );
    let recs = records(
        "program",
        &[
            ("PLATINUM", 1.02),
            ("first-touch static", 3.3),
            ("hand-placed static", 1.0),
        ],
    );
    assert_eq!(evaluate(&c, &recs, "makespan_ns").status, Status::Held);
}

#[test]
fn platinum_nearer_the_optimum_than_first_touch_fails_when_its_regret_is_larger() {
    let c = claim(
        "platinum89",
        "coherent-memory-nearer-the-optimum-than-first-touch",
    );
    let recs = records(
        "program",
        &[
            ("PLATINUM", 3.5),
            ("first-touch static", 3.3),
            ("hand-placed static", 1.0),
        ],
    );
    assert_eq!(evaluate(&c, &recs, "makespan_ns").status, Status::NotHeld);
}

/// Jacobi regret records over the two layouts: (type, size, regret), three trials each
/// spread by a few parts in a million (the claim asks for a significant order).
fn jacobi(rows: &[(&str, &str, f64)]) -> Vec<Record> {
    let mut out = Vec::new();
    for (ty, size, regret) in rows {
        for k in 0..3 {
            let mut settings = Map::new();
            settings.insert("type".into(), json!(ty));
            settings.insert("size".into(), json!(size));
            let i = out.len();
            out.push(Record {
                id: format!("r{i:06}"),
                index: i,
                seed: 1 + k,
                settings,
                result: json!({
                    "mean_completion_ns": 1.0,
                    "regret": regret * (1.0 + 1e-6 * (k as f64 - 1.0)),
                }),
                error: None,
                spec_config: serde_json::Value::Null,
            });
        }
    }
    out
}

#[test]
fn holliday_daemon_no_nearer_the_optimum_holds_when_its_regret_is_not_below_nones() {
    let c = claim("holliday89", "daemon-no-nearer-the-optimum-than-none");
    let recs = jacobi(&[
        ("None", "1K(V)", 1.01),
        ("None", "1K(H)", 2.9),
        ("1D(B0)", "1K(V)", 1.02),
        ("1D(B0)", "1K(H)", 3.2),
    ]);
    assert_eq!(
        evaluate(&c, &recs, "mean_completion_ns").status,
        Status::Held
    );
}

#[test]
fn holliday_daemon_no_nearer_the_optimum_fails_when_it_closes_the_gap_at_one_layout() {
    let c = claim("holliday89", "daemon-no-nearer-the-optimum-than-none");
    let recs = jacobi(&[
        ("None", "1K(V)", 1.01),
        ("None", "1K(H)", 2.9),
        ("1D(B0)", "1K(V)", 1.02),
        ("1D(B0)", "1K(H)", 1.5),
    ]);
    assert_eq!(
        evaluate(&c, &recs, "mean_completion_ns").status,
        Status::NotHeld
    );
}

#[test]
fn a_claim_read_through_the_offline_optimum_is_an_observation_in_every_paper() {
    for (paper, name) in [
        ("dunx91", "dynamic-placement-nearer-the-optimum-than-static"),
        (
            "platinum89",
            "coherent-memory-nearer-the-optimum-than-first-touch",
        ),
        ("holliday89", "daemon-no-nearer-the-optimum-than-none"),
    ] {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../experiments")
            .join(paper);
        let (p, _) = load_paper(&dir).expect("the paper loads");
        let c = p.claims.iter().find(|c| c.name == name).unwrap();
        assert!(
            c.observation
                .as_deref()
                .is_some_and(|o| o.contains("optimum")),
            "{paper}: {name}"
        );
    }
}
