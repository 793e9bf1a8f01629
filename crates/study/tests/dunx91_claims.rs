//! The claims of the built-in `dunx91` paper can fail: each holds on a result shaped as
//! the paper describes it and is not held on a result that contradicts it in the one
//! respect the claim is about.

use std::path::PathBuf;

use numaplace_study::reproduce::load_paper;
use numaplace_study::{evaluate, Claim, Record, Status};
use serde_json::{json, Map, Value};

mod common;

const COMBOS: [&str; 4] = ["NUMA/static", "UMA/static", "UMA/dynamic", "UMA+/dynamic"];
const NODES: [u64; 6] = [2, 3, 5, 13, 17, 33];

fn claims() -> Vec<Claim> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments/dunx91");
    load_paper(&dir).expect("dunx91 loads").0.claims
}

/// A result as the paper describes it: NUMA/static fastest, UMA+ and UMA/dynamic
/// following, UMA/static about three times NUMA/static up to 5 processors and slower
/// after; Table 1's counts at 13; no migrations or coherency faults but defrosts and
/// replications in UMA/dynamic's iteration phase.
fn paper_result(combo: &str, n: u64) -> Value {
    let numa = 1000.0 / ((n - 1) as f64).powf(0.78);
    let numa5 = 1000.0 / 4f64.powf(0.78);
    let t = match combo {
        "NUMA/static" => numa,
        "UMA+/dynamic" => 1.2 * numa,
        "UMA/dynamic" => 1.4 * numa,
        _ if n <= 5 => 2.8 * numa,
        _ => 2.8 * numa5 * (1.0 + 0.01 * n as f64),
    };
    let (faults, migrations, replications) = match combo {
        "UMA+/dynamic" => (4024, 79, 757),
        "UMA/dynamic" => (3145, 69, 605),
        _ => (2255, 0, 0),
    };
    // Replications after the start of the iteration phase (series point 2 of the activity
    // study): UMA/dynamic's go on throughout it, UMA+/dynamic's nearly all come at its start.
    let later = match combo {
        "UMA+/dynamic" => 20,
        "UMA/dynamic" => 400,
        _ => 0,
    };
    let iteration_phase = if combo == "UMA/dynamic" {
        json!({"defrosts": 5, "replications": 10, "migrations": 0, "coherency_faults": 0})
    } else {
        json!({"defrosts": 0, "replications": 0, "migrations": 0, "coherency_faults": 0})
    };
    // Against the offline optimum: static placement of the UMA program leaves a lot, the
    // dynamic policy little (its regret known only as an upper bound).
    let (regret, regret_at_most) = match combo {
        "UMA/static" => (Some(2.8), 2.8),
        "NUMA/static" => (Some(1.01), 1.01),
        _ => (None, 1.15),
    };
    json!({
        "makespan_ns": t,
        "regret": regret,
        "regret_at_most": regret_at_most,
        "faults": faults,
        "migrations": migrations,
        "replications": replications,
        "series": [{"events": {}}, {"events": iteration_phase}, {"events": {"replications": later}}],
    })
}

/// Run `index` of a study, with its settings and result.
fn record(index: usize, settings: [(&str, Value); 2], result: Value) -> Record {
    Record {
        id: format!("r{index:06}"),
        index,
        seed: 1,
        settings: settings
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect::<Map<String, Value>>(),
        result,
        error: None,
        spec_config: Value::Null,
    }
}

fn records(change: impl Fn(&str, u64, &mut Value)) -> Vec<Record> {
    let mut out = Vec::new();
    for combo in COMBOS {
        for n in NODES {
            let mut result = paper_result(combo, n);
            change(combo, n, &mut result);
            out.push(record(
                out.len(),
                [("combo", json!(combo)), ("machine.nodes", json!(n))],
                result,
            ));
        }
    }
    common::two_trials(out)
}

/// The `psolu-setup` study's runs (UMA and UMA+ under the dynamic policy at 13 nodes, the
/// data built by the main process or in parallel), each shaped as Table 1 and the paper's
/// monitoring describe, then changed by `change` (combination, setup, result).
fn setup_records(change: impl Fn(&str, &str, &mut Value)) -> Vec<Record> {
    let mut out = Vec::new();
    for combo in ["UMA/dynamic", "UMA+/dynamic"] {
        for setup in ["main", "parallel"] {
            let mut result = paper_result(combo, 13);
            change(combo, setup, &mut result);
            out.push(record(
                out.len(),
                [("combo", json!(combo)), ("setup", json!(setup))],
                result,
            ));
        }
    }
    common::two_trials(out)
}

/// A change made to one `psolu-setup` run's result: (combination, setup, result).
type SetupChange = Box<dyn Fn(&str, &str, &mut Value)>;

/// A change to the `psolu-setup` runs that contradicts the named claim, if it is one of
/// that study's.
fn setup_violation(claim: &str) -> Option<SetupChange> {
    let at = |who: &'static str, f: fn(&mut Value)| -> Option<SetupChange> {
        Some(Box::new(move |c: &str, s: &str, v: &mut Value| {
            if c == who && s == "parallel" {
                f(v)
            }
        }))
    };
    match claim {
        "uma-plus-faster-than-uma-at-13-parallel-setup" => {
            at("UMA+/dynamic", |v| scale(v, "makespan_ns", 1.5))
        }
        "uma-plus-more-faults-at-13-parallel-setup" => {
            at("UMA+/dynamic", |v| v["faults"] = json!(3000))
        }
        "uma-plus-more-replications-at-13-parallel-setup" => {
            at("UMA+/dynamic", |v| v["replications"] = json!(600))
        }
        "uma-plus-about-the-same-migrations-at-13-parallel-setup" => {
            at("UMA+/dynamic", |v| v["migrations"] = json!(150))
        }
        "uma-dynamic-defrosts-during-iteration-parallel-setup" => {
            at("UMA/dynamic", |v| set_phase(v, "defrosts", 1))
        }
        "uma-dynamic-replicates-during-iteration-parallel-setup" => {
            at("UMA/dynamic", |v| set_phase(v, "replications", 0))
        }
        "uma-dynamic-no-migrations-during-iteration-parallel-setup" => {
            at("UMA/dynamic", |v| set_phase(v, "migrations", 3))
        }
        "uma-dynamic-no-coherency-faults-during-iteration-parallel-setup" => {
            at("UMA/dynamic", |v| set_phase(v, "coherency_faults", 2))
        }
        "uma-plus-replications-cease-sooner-than-uma-parallel-setup"
        | "uma-plus-nearly-all-activity-ceases-soon-after-parallel-setup" => {
            at("UMA+/dynamic", |v| {
                v["series"][2]["events"]["replications"] = json!(700)
            })
        }
        _ => None,
    }
}

fn scale(v: &mut Value, key: &str, by: f64) {
    let x = v[key].as_f64().unwrap();
    v[key] = json!(x * by);
}

fn set_phase(v: &mut Value, key: &str, to: u64) {
    v["series"][1]["events"][key] = json!(to);
}

/// A change made to one run's result: (combination, processors, result).
type Change = Box<dyn Fn(&str, u64, &mut Value)>;

/// A change to the paper's result that contradicts the named claim.
fn violation(claim: &str) -> Change {
    let at = |who: &'static str, nodes: &'static [u64], f: fn(&mut Value)| -> Change {
        Box::new(move |c: &str, n: u64, v: &mut Value| {
            if c == who && nodes.contains(&n) {
                f(v)
            }
        })
    };
    match claim {
        "uma-static-nearly-three-times-numa-at-2" => {
            at("UMA/static", &[2], |v| scale(v, "makespan_ns", 4.0 / 2.8))
        }
        "uma-static-gap-about-the-same-at-5" => {
            at("UMA/static", &[5], |v| scale(v, "makespan_ns", 1.5 / 2.8))
        }
        "uma-static-no-faster-after-5" => at("UMA/static", &[33], |v| scale(v, "makespan_ns", 0.5)),
        "uma-static-speedup-nearly-three-at-5" => {
            at("UMA/static", &[5], |v| scale(v, "makespan_ns", 0.7))
        }
        "numa-static-fastest-at-every-size" => {
            at("NUMA/static", &[13], |v| scale(v, "makespan_ns", 1.5))
        }
        "uma-plus-faster-than-uma-at-every-size" => {
            at("UMA+/dynamic", &[17], |v| scale(v, "makespan_ns", 1.3))
        }
        "uma-dynamic-faster-than-uma-static-at-every-size" => {
            at("UMA/dynamic", &[3], |v| scale(v, "makespan_ns", 3.0))
        }
        "numa-static-still-gains-at-33" => {
            at("NUMA/static", &[33], |v| scale(v, "makespan_ns", 2.0))
        }
        "uma-plus-dynamic-still-gains-at-33" => {
            at("UMA+/dynamic", &[33], |v| scale(v, "makespan_ns", 2.0))
        }
        "uma-dynamic-still-gains-at-33" => {
            at("UMA/dynamic", &[33], |v| scale(v, "makespan_ns", 2.0))
        }
        "uma-plus-more-faults-at-13" => at("UMA+/dynamic", &[13], |v| v["faults"] = json!(3000)),
        "uma-plus-more-replications-at-13" => {
            at("UMA+/dynamic", &[13], |v| v["replications"] = json!(600))
        }
        "uma-plus-about-the-same-migrations-at-13" => {
            at("UMA+/dynamic", &[13], |v| v["migrations"] = json!(150))
        }
        "uma-dynamic-defrosts-during-iteration" => {
            at("UMA/dynamic", &[13], |v| set_phase(v, "defrosts", 1))
        }
        "uma-dynamic-replicates-during-iteration" => {
            at("UMA/dynamic", &[13], |v| set_phase(v, "replications", 0))
        }
        "uma-dynamic-no-migrations-during-iteration" => {
            at("UMA/dynamic", &[13], |v| set_phase(v, "migrations", 3))
        }
        "uma-dynamic-no-coherency-faults-during-iteration" => at("UMA/dynamic", &[13], |v| {
            set_phase(v, "coherency_faults", 2)
        }),
        "dynamic-placement-nearer-the-optimum-than-static" => {
            at("UMA/dynamic", &[2, 3, 5, 13, 17, 33], |v| {
                v["regret_at_most"] = json!(3.0)
            })
        }
        other => panic!("claim `{other}` has no violating result in this test: add one"),
    }
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
fn every_dunx91_claim_holds_on_a_result_shaped_as_the_paper_describes() {
    for c in claims() {
        let c = without_observation(&c);
        let recs = if c.study == "psolu-setup" || c.study == "psolu-activity" {
            setup_records(|_, _, _| {})
        } else {
            records(|_, _, _| {})
        };
        let r = evaluate(&c, &recs, "makespan_ns");
        assert_eq!(r.status, Status::Held, "{}: {}", c.name, r.detail);
    }
}

#[test]
fn every_dunx91_claim_is_not_held_on_a_result_that_contradicts_it() {
    for c in claims() {
        let c = without_observation(&c);
        let recs = if c.study == "psolu-setup" || c.study == "psolu-activity" {
            let change = setup_violation(&c.name)
                .unwrap_or_else(|| panic!("claim `{}` has no violating result: add one", c.name));
            setup_records(change)
        } else {
            records(violation(&c.name))
        };
        let r = evaluate(&c, &recs, "makespan_ns");
        assert_eq!(r.status, Status::NotHeld, "{}: {}", c.name, r.detail);
    }
}

#[test]
fn a_compare_over_an_axis_holds_only_if_it_holds_at_every_value_from_the_first_checked() {
    let c = claims()
        .into_iter()
        .find(|c| c.name == "uma-plus-faster-than-uma-at-every-size")
        .unwrap();
    // At 2 processors (below `from`) the order may go either way.
    let recs = records(|combo, n, v| {
        if combo == "UMA+/dynamic" && n == 2 {
            scale(v, "makespan_ns", 2.0)
        }
    });
    assert_eq!(evaluate(&c, &recs, "makespan_ns").status, Status::Held);
}
