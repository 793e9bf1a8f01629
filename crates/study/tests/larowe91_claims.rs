//! The claims of the built-in `larowe91` paper can fail: each holds on results shaped as
//! the paper describes them and is not held on results that contradict it in the one
//! respect the claim is about. The runs are the studies' own points (their settings and
//! configurations), with made-up times.

use std::path::PathBuf;

use numaplace_study::claims::{evaluate_reported, Check};
use numaplace_study::reproduce::{load_paper, Paper};
use numaplace_study::spec::Spec;
use numaplace_study::value::get_dotted;
use numaplace_study::{evaluate, expand, Claim, ClaimResult, Record, Status};
use serde_json::{json, Value};

mod common;

fn paper() -> (Paper, Vec<Spec>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments/larowe91");
    load_paper(&dir).expect("larowe91 loads")
}

/// Table 4: (tuned, default) means and half-widths of the 99% intervals, in s. One number
/// differs from the paper's: its gauss default mean, 248.795 s, is 6.3% above the tuned
/// one (the table's "%Improve", relative to the default, says 5.9%), which the text's
/// "within 5%" does not cover; here it is 245 s (4.6%), as the text describes.
fn table4(workload: &str) -> ((f64, f64), (f64, f64)) {
    let (t, th, d, dh) = match workload {
        "gauss" => (234.12, 14.087, 245.0, 16.06),
        "hh3d" => (787.53, 14.842, 800.81, 12.011),
        "psolu" => (569.53, 3.624, 564.86, 3.63),
        "hough" => (101.1, 0.561, 100.225, 0.2575),
        "msort" => (75.235, 2.2411, 78.515, 0.9019),
        "wave" => (276.57, 9.487, 267.75, 2.849),
        other => panic!("no Table 4 row for {other}"),
    };
    ((t, th), (d, dh))
}

const FW: [&str; 12] = [
    "0",
    "31250000",
    "62500000",
    "125000000",
    "187500000",
    "250000000",
    "312500000",
    "375000000",
    "500000000",
    "750000000",
    "1000000000",
    "inf",
];
const SD: [&str; 12] = [
    "250000000",
    "500000000",
    "1000000000",
    "2000000000",
    "4000000000",
    "8000000000",
    "10000000000",
    "12000000000",
    "16000000000",
    "24000000000",
    "32000000000",
    "inf",
];
const RM: [i64; 7] = [-1, 0, 256, 4096, 16384, 32768, 65536];

/// The position of a setting's value among the sweep's values.
fn idx(values: &[&str], v: &Value) -> f64 {
    let text = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    values
        .iter()
        .position(|x| *x == text)
        .unwrap_or_else(|| panic!("{text} is not in the sweep")) as f64
}

/// A made-up time (s) for one run, shaped as the paper describes its study; `None` for a
/// run that does not finish.
fn shape(study: &str, r: &Record) -> Option<f64> {
    let field = |f: &str| r.field(f).unwrap_or(Value::Null);
    let point = field("point");
    let point = point.as_str().unwrap_or("");
    let kind = field("policy.kind");
    let is_static = kind == "static";
    let numa = field("workload.variant") == "numa";
    let trial = (r.seed - 1) as f64;
    Some(match study {
        "table4" => {
            let w = field("workload");
            let ((t, th), (d, dh)) = table4(w.as_str().unwrap());
            let (m, h) = if field("setting") == "tuned" {
                (t, th)
            } else {
                (d, dh)
            };
            // Twenty values m + k (t - 9.5) whose 99% interval has the paper's half-width.
            m + h / 3.785 * (trial - 9.5)
        }
        "robustness" => {
            // Each program's own setting best, the general-purpose one 2% behind it, the
            // other programs' settings 10%; ten runs a little apart.
            let m = match field("setting").as_str() {
                Some("tuned") => 100.0,
                Some("general-purpose") => 102.0,
                _ => 110.0,
            };
            m + 0.01 * (trial - 4.5)
        }
        _ if is_static => {
            if numa {
                match study {
                    "fig9-hough-scan-delay" => 120.0,
                    "fig8-hough-tc2000-scan-delay" => 20.0,
                    // Nearly as good as the policy at 2^16 (240 s).
                    "fig1-gauss-recent-mod" => 235.0,
                    _ => 10.0,
                }
            } else {
                2000.0
            }
        }
        "fig1-gauss-recent-mod" => {
            let rm = field("policy.recent_mod").as_i64().unwrap();
            300.0 - 10.0 * RM.iter().position(|x| *x == rm).unwrap() as f64
        }
        "fig2-msort-recent-mod" => {
            let rm = field("policy.recent_mod").as_i64().unwrap();
            75.0 + RM.iter().position(|x| *x == rm).unwrap() as f64
        }
        "fig3-hough-tc2000-recent-mod" => {
            let rm = field("policy.recent_mod").as_i64().unwrap();
            [30.0, 29.0, 28.0, 27.0, 26.0, 25.0, 27.0][RM.iter().position(|x| *x == rm).unwrap()]
        }
        "fig4-psolu-tc2000-freeze-window" => {
            if point == "0 ms" {
                return None;
            }
            100.0 + 0.1 * idx(&FW, &field("policy.freeze_window_ns"))
        }
        "fig5-wave-freeze-window" => {
            266.0 + 2.0 * (idx(&FW, &field("policy.freeze_window_ns")) - 5.0).abs()
        }
        "fig6-wave-slowed" => {
            let d = field("machine.costs.operation_delay_ns").as_f64().unwrap() / 2e6;
            let i = idx(&FW, &field("policy.freeze_window_ns"));
            let (least, slope) = (
                [5.0, 5.0, 6.0, 7.0, 8.0][d as usize],
                [3.0, 2.5, 2.0, 1.5, 1.0][d as usize],
            );
            266.0 + 40.0 * d + slope * (i - least).abs()
        }
        "fig7-hh3d-scan-delay" | "fig8-hough-tc2000-scan-delay" | "scan-delay-tc2000" => {
            100.0 - idx(&SD, &field("policy.scan_delay_ns"))
        }
        "fig9-hough-scan-delay" => 95.0 + (idx(&SD, &field("policy.scan_delay_ns")) - 7.0).abs(),
        "scan-delay-gp1000" => {
            let i = idx(&SD, &field("policy.scan_delay_ns"));
            if field("workload") == "hough" {
                95.0 + (i - 7.0).abs()
            } else {
                100.0 - i
            }
        }
        "freeze-window-gp1000" | "freeze-window-tc2000" => {
            let i = idx(&FW, &field("policy.freeze_window_ns"));
            if i == 0.0 {
                300.0
            } else {
                100.0 + 0.5 * (i % 3.0)
            }
        }
        "recent-mod-gp1000" | "recent-mod-tc2000" => {
            let rm = field("policy.recent_mod").as_i64().unwrap();
            let i = RM.iter().position(|x| *x == rm).unwrap() as f64;
            if field("workload") == "msort" {
                75.0 + i
            } else {
                300.0 - 10.0 * i
            }
        }
        "sample-passes-gp1000" | "sample-passes-tc2000" => {
            100.0 + 0.1 * field("policy.sample_passes").as_f64().unwrap()
        }
        "defrost-trigger-gp1000" | "defrost-trigger-tc2000" => {
            100.0 - 0.1 * field("policy.defrost_trigger").as_f64().unwrap()
        }
        "trigger-method-gp1000" | "trigger-method-tc2000" => {
            // Table 3's recent-mod: 0 for msort, 2^16 for the others.
            let coupled = if field("workload") == "msort" {
                0
            } else {
                65536
            };
            if field("policy.trigger_method").as_i64() == Some(coupled) {
                100.0
            } else {
                101.0
            }
        }
        other => panic!("no shape for study {other}"),
    })
}

/// The break-even counts as the machines' costs give them.
fn breakeven(r: &Record) -> Value {
    let delay = r
        .field("machine.costs.operation_delay_ns")
        .and_then(|v| v.as_f64())
        .unwrap();
    if r.field("machine.preset").unwrap() == "gp1000" {
        json!({
            "migration_breakeven_refs": (4.5e6 + delay) / 6900.0,
            "replication_breakeven_refs": (4.6e6 + delay) / 6900.0,
        })
    } else {
        json!({
            "migration_breakeven_refs": (4.8e6 + delay) / 1264.0,
            "replication_breakeven_refs": (4.6e6 + delay) / 1705.0,
        })
    }
}

/// Every run of `spec` (full mode) with its made-up result, then `change`d.
fn records(spec: &Spec, change: &dyn Fn(&str, &mut Record)) -> Vec<Record> {
    let recs = expand(spec, false)
        .into_iter()
        .map(|p| {
            let mut r = common::unrun_record(&p);
            if spec.name == "breakeven" {
                let mut result = breakeven(&r);
                result["config"] = r.result["config"].take();
                r.result = result;
            } else {
                match shape(&spec.name, &r) {
                    Some(t) => {
                        r.result["makespan_ns"] = json!(t * 1e9);
                        r.result["finished"] = json!(true);
                    }
                    None => {
                        r.result["makespan_ns"] = json!(1.1e12);
                        r.result["finished"] = json!(false);
                        r.result["partial"] = json!(true);
                    }
                }
            }
            change(&spec.name, &mut r);
            r
        })
        .collect();
    // A claim's interval needs two runs a side.
    if spec.trials < 2 {
        common::two_trials(recs)
    } else {
        recs
    }
}

fn judge(claim: &Claim, change: &dyn Fn(&str, &mut Record)) -> ClaimResult {
    let (paper, specs) = paper();
    let spec = specs.iter().find(|s| s.name == claim.study).unwrap();
    let recs = records(spec, change);
    match claim.check {
        Check::Reported(_) => evaluate_reported(
            claim,
            &paper.reported_points(&claim.study, "", &spec.output.metric, 0.99),
            &recs,
        ),
        _ => evaluate(claim, &recs, &spec.output.metric),
    }
}

fn scale(r: &mut Record, by: f64) {
    let t = r.result["makespan_ns"].as_f64().unwrap();
    r.result["makespan_ns"] = json!(t * by);
}

fn set_time(r: &mut Record, s: f64) {
    r.result["makespan_ns"] = json!(s * 1e9);
}

fn is(r: &Record, field: &str, value: &str) -> bool {
    r.field(field).is_some_and(|v| match v {
        Value::String(s) => s == value,
        other => value.parse::<f64>().ok() == other.as_f64(),
    })
}

/// A change made to the records of a study: (study, record).
type Change = Box<dyn Fn(&str, &mut Record)>;

/// A change to the paper-shaped results that contradicts the named claim.
fn violation(claim: &str) -> Change {
    let at = |field: &'static str, value: &'static str, f: fn(&mut Record)| {
        Box::new(move |_: &str, r: &mut Record| {
            if is(r, field, value) {
                f(r)
            }
        }) as Change
    };
    let both =
        |a: (&'static str, &'static str), b: (&'static str, &'static str), f: fn(&mut Record)| {
            Box::new(move |_: &str, r: &mut Record| {
                if is(r, a.0, a.1) && is(r, b.0, b.1) {
                    f(r)
                }
            }) as Change
        };
    match claim {
        "default-within-5pct-of-tuned" => {
            both(("workload", "gauss"), ("setting", "default"), |r| {
                scale(r, 1.2)
            })
        }
        "default-within-5pct-of-tuned-tc2000" => Box::new(|_: &str, r: &mut Record| {
            if is(r, "workload", "wave")
                && is(r, "machine", "tc2000")
                && is(r, "setting", "general-purpose")
            {
                scale(r, 1.1)
            }
        }),
        "intervals-overlap-except-hough-and-msort" => {
            both(("workload", "wave"), ("setting", "default"), |r| {
                scale(r, 1.5)
            })
        }
        "intervals-disjoint-for-hough-and-msort" => {
            both(("workload", "msort"), ("setting", "default"), |r| {
                scale(r, 75.235 / 78.515)
            })
        }
        "msort-tuned-faster-than-default" => {
            both(("workload", "msort"), ("setting", "tuned"), |r| {
                scale(r, 1.2)
            })
        }
        "hough-default-faster-than-tuned" => {
            both(("workload", "hough"), ("setting", "default"), |r| {
                scale(r, 1.05)
            })
        }
        "gauss-more-replication-is-better" => at("point", "2^12", |r| set_time(r, 290.0)),
        "msort-replication-does-not-help" => at("point", "2^16", |r| set_time(r, 70.0)),
        "msort-best-without-replication" => at("point", "0", |r| set_time(r, 70.0)),
        "hough-tc2000-always-replicating-degrades" => at("point", "2^16", |r| set_time(r, 20.0)),
        "psolu-freeze-window-zero-does-not-finish" => at("point", "0 ms", |r| {
            r.result["finished"] = json!(true);
            r.result["partial"] = Value::Null;
            set_time(r, 500.0)
        }),
        "wave-best-freeze-window-near-250ms" => at("point", "1000 ms", |r| set_time(r, 200.0)),
        "figure6-minimum-shifts-right" => both(
            ("machine.costs.operation_delay_ns", "8000000"),
            ("policy.freeze_window_ns", "125000000"),
            |r| set_time(r, 100.0),
        ),
        "figure6-curves-flatten" => both(
            ("machine.costs.operation_delay_ns", "8000000"),
            ("policy.freeze_window_ns", "inf"),
            |r| set_time(r, 600.0),
        ),
        "hh3d-best-without-scanners" => at("point", "4 s", |r| set_time(r, 50.0)),
        "hough-tc2000-numa-beats-the-policy" => at("point", "NUMA/static", |r| scale(r, 10.0)),
        "hough-gp1000-scanners-help" => at("point", "inf", |r| set_time(r, 50.0)),
        "hough-gp1000-best-scan-delay-near-12s" => at("point", "1 s", |r| set_time(r, 50.0)),
        "hough-gp1000-policy-beats-numa" => at("point", "NUMA/static", |r| scale(r, 0.1)),
        "scanners-cost-more-than-they-give-gp1000" => both(
            ("workload", "gauss"),
            ("policy.scan_delay_ns", "2000000000"),
            |r| set_time(r, 10.0),
        ),
        "scanners-cost-more-than-they-give-tc2000" => both(
            ("workload", "hough"),
            ("policy.scan_delay_ns", "12000000000"),
            |r| set_time(r, 10.0),
        ),
        "freeze-window-100-to-300ms-works-well-gp1000"
        | "freeze-window-100-to-300ms-works-well-tc2000" => both(
            ("workload", "msort"),
            ("policy.freeze_window_ns", "250000000"),
            |r| scale(r, 1.1),
        ),
        "gauss-uma-nearly-as-good-as-numa" => at("point", "NUMA/static", |r| set_time(r, 100.0)),
        "recent-mod-gp1000-psolu-hough-wave-like-gauss" => {
            both(("workload", "wave"), ("point", "2^12"), |r| {
                set_time(r, 10.0)
            })
        }
        "hh3d-gp1000-replication-helps-slightly" => {
            both(("workload", "hh3d"), ("point", "2^16"), |r| {
                set_time(r, 500.0)
            })
        }
        "recent-mod-tc2000-like-gp1000" => {
            both(("workload", "gauss"), ("point", "0"), |r| set_time(r, 10.0))
        }
        "msort-tc2000-replication-does-not-help" => {
            both(("workload", "msort"), ("point", "2^16"), |r| {
                set_time(r, 10.0)
            })
        }
        "freeze-window-zero-bounces-gp1000" | "freeze-window-zero-bounces-tc2000" => both(
            ("workload", "psolu"),
            ("policy.freeze_window_ns", "0"),
            |r| set_time(r, 100.5),
        ),
        "sample-passes-minor-gp1000" | "sample-passes-minor-tc2000" => {
            both(("workload", "hough"), ("policy.sample_passes", "5"), |r| {
                scale(r, 1.2)
            })
        }
        "defrost-trigger-minor-gp1000" | "defrost-trigger-minor-tc2000" => {
            both(("workload", "wave"), ("policy.defrost_trigger", "2"), |r| {
                scale(r, 1.2)
            })
        }
        "defrost-trigger-higher-slightly-better-gp1000"
        | "defrost-trigger-higher-slightly-better-tc2000" => both(
            ("workload", "gauss"),
            ("policy.defrost_trigger", "7"),
            |r| scale(r, 1.2),
        ),
        "trigger-method-coupled-gp1000" | "trigger-method-coupled-tc2000" => both(
            ("workload", "psolu"),
            ("policy.trigger_method", "-1"),
            |r| set_time(r, 50.0),
        ),
        "trigger-method-coupled-msort-gp1000" | "trigger-method-coupled-msort-tc2000" => both(
            ("workload", "msort"),
            ("policy.trigger_method", "65536"),
            |r| set_time(r, 50.0),
        ),
        "breakeven-counts" => both(
            ("machine.preset", "tc2000"),
            ("machine.costs.operation_delay_ns", "0"),
            |r| r.result["migration_breakeven_refs"] = json!(3700.0),
        ),
        "figure6-breakeven-counts" => both(
            ("machine.preset", "gp1000"),
            ("machine.costs.operation_delay_ns", "4000000"),
            |r| r.result["replication_breakeven_refs"] = json!(1300.0),
        ),
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
fn every_larowe91_claim_holds_on_results_shaped_as_the_paper_describes() {
    let (paper, _) = paper();
    assert!(paper.claims.len() >= 20, "{} claims", paper.claims.len());
    for c in &paper.claims {
        let c = &without_observation(c);
        let r = judge(c, &|_, _| {});
        // On Table 4's own intervals the default's 5% is not clear of the noise for gauss
        // and msort (the ratio's interval crosses 1.05); see the test below.
        let want = if c.name == "default-within-5pct-of-tuned" {
            Status::WithinNoise
        } else {
            Status::Held
        };
        assert_eq!(r.status, want, "{}: {}", c.name, r.detail);
    }
}

#[test]
fn default_within_5pct_of_tuned_holds_on_table4s_means_with_a_hundredth_of_their_spread() {
    let (paper, _) = paper();
    let c = paper
        .claims
        .iter()
        .find(|c| c.name == "default-within-5pct-of-tuned")
        .unwrap();
    let narrow = |_: &str, r: &mut Record| {
        let w = r.field("workload").unwrap();
        let ((t, _), (d, _)) = table4(w.as_str().unwrap());
        let m = 1e9
            * if r.field("setting") == Some(json!("tuned")) {
                t
            } else {
                d
            };
        let x = r.result["makespan_ns"].as_f64().unwrap();
        r.result["makespan_ns"] = json!(m + (x - m) / 100.0);
    };
    let r = judge(c, &narrow);
    assert_eq!(r.status, Status::Held, "{}", r.detail);
}

#[test]
fn every_larowe91_claim_is_not_held_on_results_that_contradict_it() {
    let (paper, _) = paper();
    for c in &paper.claims {
        let c = &without_observation(c);
        let r = judge(c, &*violation(&c.name));
        assert_eq!(r.status, Status::NotHeld, "{}: {}", c.name, r.detail);
    }
}

#[test]
fn table4_reported_rows_name_runs_of_the_study_and_the_fitted_means_are_marked() {
    let (paper, specs) = paper();
    let spec = specs.iter().find(|s| s.name == "table4").unwrap();
    let recs = records(spec, &|_, _| {});
    let rows: Vec<_> = paper
        .reported
        .iter()
        .filter(|r| r.table == "Table 4")
        .collect();
    assert_eq!(
        rows.len(),
        36,
        "six programs x two settings x (low, mean, high)"
    );
    for r in &rows {
        let sel: Vec<(String, Value)> = r
            .row
            .iter()
            .map(|(k, v)| (k.clone(), numaplace_study::value::toml_to_json(v)))
            .collect();
        assert_eq!(recs.iter().filter(|x| x.matches(&sel)).count(), 20);
        // Every default-setting mean is one a size was fitted to.
        if r.row["setting"].as_str() == Some("default") {
            assert!(r.calibrated.is_some(), "{:?}", r.row);
        }
    }
    // The shaped results give back the paper's means.
    let gauss = recs
        .iter()
        .filter(|r| is(r, "workload", "gauss") && is(r, "setting", "tuned"))
        .map(|r| {
            get_dotted(&r.result, "makespan_ns")
                .unwrap()
                .as_f64()
                .unwrap()
        })
        .sum::<f64>()
        / 20.0;
    assert!((gauss / 1e9 - 234.12).abs() < 1e-6, "{gauss}");
}
