//! The claims of the built-in `holliday89` paper can fail: each holds on results shaped as
//! the paper describes them (its own numbers where its text has them: Tables 1, 4 and 5)
//! and is not held on results that contradict it in the one respect the claim is about.

use std::path::PathBuf;

use numaplace_study::reproduce::load_paper;
use numaplace_study::{evaluate, Claim, Record, Status};
use serde_json::{json, Map, Value};

fn claims() -> Vec<Claim> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments/holliday89");
    load_paper(&dir).expect("holliday89 loads").0.claims
}

/// A run: its settings and its result.
type Row = (Vec<(&'static str, Value)>, Value);

fn t(secs: f64) -> Value {
    json!({ "mean_completion_ns": secs * 1e9 })
}

const DAEMONS6: [&str; 6] = [
    "1D(B0)",
    "1D(B50)",
    "1D(B10000)",
    "2D(B0)",
    "2D(B50)",
    "2D(B10000)",
];

/// Table 1 as the paper describes it: its None row, and the other rows relative to None
/// as its text says (daemons slower than None but with 2 KB pages; contention dominating
/// with one and ten references and 512 B pages, responsiveness with twenty references and
/// 2 KB pages; Foresight better than None but with 512 B pages).
fn matvec_synthetic() -> Vec<Row> {
    let sizes: [(&str, u64, u64, f64); 5] = [
        ("1K(1)", 1024, 1, 6.2),
        ("1K(10)", 1024, 10, 12.6),
        ("1K(20)", 1024, 20, 22.2),
        ("512(10)", 512, 10, 14.4),
        ("2K(10)", 2048, 10, 14.4),
    ];
    // Per size: Foresight, then the six daemon rows, relative to None.
    let factors: [[f64; 7]; 5] = [
        [0.98, 1.06, 1.05, 1.02, 1.10, 1.08, 1.04],
        [0.90, 1.05, 1.06, 1.08, 1.07, 1.07, 1.09],
        [0.80, 1.04, 1.05, 1.07, 1.02, 1.03, 1.06],
        [1.05, 1.10, 1.09, 1.06, 1.15, 1.13, 1.08],
        [0.85, 0.95, 0.96, 0.98, 0.93, 0.94, 0.97],
    ];
    let mut rows = Vec::new();
    for ((size, ps, refs, none), f) in sizes.iter().zip(factors) {
        let types = std::iter::once("None")
            .chain(std::iter::once("Foresight"))
            .chain(DAEMONS6);
        let fs = std::iter::once(1.0).chain(f);
        for (ty, x) in types.zip(fs) {
            rows.push((
                vec![
                    ("type", json!(ty)),
                    ("size", json!(size)),
                    ("machine.page_size_bytes", json!(ps)),
                    ("workload.refs_per_nonzero", json!(refs)),
                ],
                t(none * x),
            ));
        }
    }
    rows
}

/// Table 2: the aging and Referenced-bit rows about 7% above the Usage field.
fn matvec_history() -> Vec<Row> {
    [
        ("usage", 13.2),
        ("refbit", 14.2),
        ("aging:2", 14.0),
        ("aging:3", 14.1),
    ]
    .into_iter()
    .map(|(h, s)| (vec![("policy.history", json!(h))], t(s)))
    .collect()
}

/// Tables 1 and 3: the daemon more successful on 4 processors than on 16.
fn matvec_procs() -> Vec<Row> {
    let mut rows = Vec::new();
    for (threads, daemon) in [(4, 0.9), (16, 1.05)] {
        for (ty, x) in [("None", 1.0), ("1D(B0)", daemon)] {
            rows.push((
                vec![
                    ("type", json!(ty)),
                    ("workload.threads", json!(threads)),
                    ("workload.refs_per_nonzero", json!(10)),
                ],
                t(50.0 * x),
            ));
        }
    }
    rows
}

/// Table 4 as printed.
fn matvec_sparse() -> Vec<Row> {
    let table = [
        ("M003", 1.09, 1.39),
        ("M009", 2.19, 2.18),
        ("M014", 2.74, 2.70),
        ("M021", 11.41, 13.72),
        ("M021(256)", 11.41, 14.63),
    ];
    let mut rows = Vec::new();
    for (m, none, daemon) in table {
        rows.push((vec![("type", json!("None")), ("matrix", json!(m))], t(none)));
        rows.push((
            vec![("type", json!("Daemon")), ("matrix", json!(m))],
            t(daemon),
        ));
    }
    rows
}

/// Table 5 as printed, with a few migrations per page under the daemons.
fn jacobi() -> Vec<Row> {
    let sizes = ["512", "1K(V)", "1K(H)", "2K(V)", "2K(H)"];
    let table = [
        ("None", [129.7, 144.6, 346.2, 146.4, 345.2]),
        ("1D(B0)", [134.9, 148.8, 329.9, 179.8, 347.7]),
        ("1D(B50)", [136.3, 151.6, 320.6, 162.7, 350.3]),
        ("1D(B10000)", [132.8, 147.1, 317.2, 147.1, 347.5]),
        ("2D(B0)", [147.8, 155.3, 328.0, 178.0, 349.5]),
    ];
    let mut rows = Vec::new();
    for (ty, secs) in table {
        for (size, s) in sizes.iter().zip(secs) {
            let migrations = if ty == "None" { 0.0 } else { 2.0 };
            rows.push((
                vec![("type", json!(ty)), ("size", json!(size))],
                json!({ "mean_completion_ns": s * 1e9, "migrations_per_page": migrations }),
            ));
        }
    }
    rows
}

/// A history study: per (history, page size) a time, the Usage field's 100 scaled.
fn history(rows: &[(&str, f64)]) -> Vec<Row> {
    let mut out = Vec::new();
    for ps in [512, 1024, 2048] {
        for (h, x) in rows {
            out.push((
                vec![
                    ("policy.history", json!(h)),
                    ("machine.page_size_bytes", json!(ps)),
                ],
                t(100.0 * x),
            ));
        }
    }
    out
}

/// Table 6: one Referenced bit much worse than the Usage field, more aging bits better.
fn jacobi_history() -> Vec<Row> {
    history(&[
        ("usage", 1.0),
        ("refbit", 1.12),
        ("aging:2", 1.08),
        ("aging:3", 1.02),
    ])
}

/// Table 8: aging insensitive to the bits, about 10% worse than the Usage field.
fn surface_history() -> Vec<Row> {
    history(&[
        ("usage", 1.0),
        ("refbit", 1.10),
        ("aging:2", 1.11),
        ("aging:3", 1.105),
    ])
}

/// Table 7 as the text describes it: every daemon slower than None, longer times with
/// smaller pages, shorter blocking and more daemons (but for two daemons at 2 KB, the
/// paper's anomaly), few migrations.
fn surface_wave() -> Vec<Row> {
    let table = [
        ("None", [100.0, 100.0, 100.0]),
        ("1D(B0)", [120.0, 115.0, 110.0]),
        ("1D(B50)", [118.0, 113.0, 108.0]),
        ("1D(B10000)", [110.0, 108.0, 105.0]),
        ("2D(B0)", [122.0, 118.0, 125.0]),
    ];
    let mut rows = Vec::new();
    for (ty, secs) in table {
        for (ps, s) in [512, 1024, 2048].iter().zip(secs) {
            let migrations = if ty == "None" { 0.0 } else { 0.1 };
            rows.push((
                vec![("type", json!(ty)), ("machine.page_size_bytes", json!(ps))],
                json!({ "mean_completion_ns": s * 1e9, "migrations_per_page": migrations }),
            ));
        }
    }
    rows
}

/// The Jacobi runs against the offline optimum: the daemon no nearer it than None.
fn jacobi_regret() -> Vec<Row> {
    [
        ("None", "1K(V)", 1.01),
        ("None", "1K(H)", 2.9),
        ("1D(B0)", "1K(V)", 1.02),
        ("1D(B0)", "1K(H)", 3.2),
    ]
    .into_iter()
    .map(|(ty, size, regret)| {
        (
            vec![("type", json!(ty)), ("size", json!(size))],
            json!({ "mean_completion_ns": 1.0, "regret": regret }),
        )
    })
    .collect()
}

fn rows_of(study: &str) -> Vec<Row> {
    match study {
        "matvec-synthetic" => matvec_synthetic(),
        "matvec-history" => matvec_history(),
        "matvec-procs" => matvec_procs(),
        "matvec-sparse" => matvec_sparse(),
        "jacobi" => jacobi(),
        "jacobi-history" => jacobi_history(),
        "surface-wave" => surface_wave(),
        "surface-history" => surface_history(),
        "jacobi-regret" => jacobi_regret(),
        other => panic!("study `{other}` has no paper-shaped results in this test: add them"),
    }
}

/// A change made to one run: its settings, its result.
type Change = Box<dyn Fn(&Map<String, Value>, &mut Value)>;

/// Five trials of every run of `study`, `change`d, their numbers spread by a few parts
/// in a million (the compare claims ask for significance: two runs or more a side).
fn records(study: &str, change: &Change) -> Vec<Record> {
    let mut out = Vec::new();
    for (settings, result) in rows_of(study) {
        let settings: Map<String, Value> = settings
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let mut result = result;
        change(&settings, &mut result);
        for k in 0..5 {
            let mut r = result.clone();
            if let Some(m) = r.as_object_mut() {
                for v in m.values_mut() {
                    if let Some(x) = v.as_f64() {
                        *v = json!(x * (1.0 + 1e-6 * (k as f64 - 2.0)));
                    }
                }
            }
            let i = out.len();
            out.push(Record {
                id: format!("r{i:06}"),
                index: i,
                seed: 1 + k,
                settings: settings.clone(),
                result: r,
                error: None,
                spec_config: Value::Null,
            });
        }
    }
    out
}

/// Sets `key` of the run whose settings include every `(field, value)` of `at` to `to`.
fn set(at: &[(&'static str, Value)], key: &'static str, to: f64) -> Change {
    let at: Vec<(&'static str, Value)> = at.to_vec();
    Box::new(move |s: &Map<String, Value>, r: &mut Value| {
        if at.iter().all(|(k, v)| s.get(*k) == Some(v)) {
            r[key] = json!(to);
        }
    })
}

/// Sets the time of the run at `at` to `secs`.
fn time(at: &[(&'static str, Value)], secs: f64) -> Change {
    set(at, "mean_completion_ns", secs * 1e9)
}

fn ty(x: &str) -> (&'static str, Value) {
    ("type", json!(x))
}

fn size(x: &str) -> (&'static str, Value) {
    ("size", json!(x))
}

fn page(x: u64) -> (&'static str, Value) {
    ("machine.page_size_bytes", json!(x))
}

fn hist(x: &str) -> (&'static str, Value) {
    ("policy.history", json!(x))
}

/// A change to the paper-shaped results that contradicts the named claim.
fn violation(claim: &str) -> Change {
    match claim {
        "refbit-near-usage-on-matvec" => time(&[hist("refbit")], 15.0),
        "aging-near-usage-on-matvec" => time(&[hist("aging:3")], 11.5),
        "refbit-clearly-worse-on-jacobi" => time(&[hist("refbit"), page(1024)], 102.0),
        "more-aging-bits-close-the-gap-on-jacobi" => time(&[hist("aging:3"), page(1024)], 115.0),
        "larger-pages-make-the-daemon-more-effective" => {
            time(&[ty("1D(B0)"), size("1K(10)")], 12.6 * 1.2)
        }
        "daemon-beats-none-with-2k-pages" => time(&[ty("1D(B0)"), size("2K(10)")], 14.5),
        "foresight-beats-none-with-repeats" => time(&[ty("Foresight"), size("1K(20)")], 22.5),
        "horizontal-pages-hurt-jacobi" => time(&[ty("None"), size("2K(H)")], 150.0),
        "daemon-does-not-thrash-horizontal-jacobi" => {
            set(&[ty("1D(B0)"), size("2K(H)")], "migrations_per_page", 21.0)
        }
        "fewer-processors-make-migration-more-successful" => {
            time(&[ty("1D(B0)"), ("workload.threads", json!(4))], 50.0 * 1.1)
        }
        "two-daemons-help-when-pass-time-dominates" => {
            time(&[ty("2D(B0)"), size("2K(10)")], 14.4 * 0.96)
        }
        "two-daemons-hurt-when-lock-contention-dominates" => {
            time(&[ty("2D(B0)"), size("1K(10)")], 12.6 * 1.04)
        }
        "longer-blocking-helps-when-lock-contention-dominates" => {
            time(&[ty("1D(B10000)"), size("512(10)")], 14.4 * 1.11)
        }
        "shorter-blocking-helps-when-responsiveness-dominates" => {
            time(&[ty("1D(B10000)"), size("1K(20)")], 22.2 * 1.03)
        }
        "foresight-worse-than-none-with-512-byte-pages" => {
            time(&[ty("Foresight"), size("512(10)")], 14.0)
        }
        "daemon-no-faster-than-none-1k-1" => time(&[ty("2D(B10000)"), size("1K(1)")], 6.1),
        "daemon-no-faster-than-none-1k-10" => time(&[ty("1D(B0)"), size("1K(10)")], 12.4),
        "daemon-no-faster-than-none-1k-20" => time(&[ty("2D(B0)"), size("1K(20)")], 20.0),
        "daemon-no-faster-than-none-512" => time(&[ty("1D(B50)"), size("512(10)")], 14.3),
        "no-large-degradation-matvec" => time(&[ty("2D(B50)"), size("512(10)")], 14.4 * 1.25),
        "no-large-degradation-jacobi" => time(&[ty("1D(B50)"), size("2K(V)")], 146.4 * 1.25),
        "two-daemons-degrade-jacobi-further" => time(&[ty("2D(B0)"), size("1K(V)")], 148.0),
        "daemon-degrades-sparse-significantly" => {
            time(&[ty("Daemon"), ("matrix", json!("M021"))], 12.5)
        }
        "surface-wave-always-degraded-512" => time(&[ty("1D(B50)"), page(512)], 99.0),
        "surface-wave-always-degraded-1024" => time(&[ty("1D(B10000)"), page(1024)], 98.0),
        "surface-wave-always-degraded-2048" => time(&[ty("2D(B0)"), page(2048)], 99.0),
        "no-large-degradation-surface-wave" => time(&[ty("1D(B10000)"), page(512)], 125.0),
        "surface-wave-slower-with-smaller-pages" => time(&[ty("1D(B0)"), page(1024)], 121.0),
        "surface-wave-slower-with-shorter-blocking" => time(&[ty("1D(B10000)"), page(2048)], 111.0),
        "two-daemons-worse-on-surface-wave" => time(&[ty("2D(B0)"), page(1024)], 114.0),
        "surface-wave-few-migrations" => {
            set(&[ty("1D(B0)"), page(1024)], "migrations_per_page", 50.0)
        }
        "aging-insensitive-on-surface-wave" => time(&[hist("refbit"), page(1024)], 120.0),
        "daemon-no-nearer-the-optimum-than-none" => {
            set(&[ty("1D(B0)"), size("1K(H)")], "regret", 1.5)
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
fn every_holliday89_claim_holds_on_results_shaped_as_the_paper_describes() {
    let unchanged: Change = Box::new(|_, _| {});
    for c in claims() {
        let c = without_observation(&c);
        let r = evaluate(&c, &records(&c.study, &unchanged), "mean_completion_ns");
        assert_eq!(r.status, Status::Held, "{}: {}", c.name, r.detail);
    }
}

#[test]
fn every_holliday89_claim_is_not_held_on_results_that_contradict_it() {
    for c in claims() {
        let c = without_observation(&c);
        let recs = records(&c.study, &violation(&c.name));
        let r = evaluate(&c, &recs, "mean_completion_ns");
        assert_eq!(r.status, Status::NotHeld, "{}: {}", c.name, r.detail);
    }
}

#[test]
fn an_order_within_run_to_run_noise_makes_a_compare_claim_within_noise() {
    // Two daemons 0.01% faster than one at 2 KB: in order, but within the trials' spread.
    let c = claims()
        .into_iter()
        .find(|c| c.name == "two-daemons-help-when-pass-time-dominates")
        .unwrap();
    let noisy: Change = Box::new(|s: &Map<String, Value>, r: &mut Value| {
        let at_2k = s.get("size") == Some(&json!("2K(10)"));
        match s.get("type").and_then(Value::as_str) {
            Some("2D(B0)") if at_2k => r["mean_completion_ns"] = json!(14.4 * 0.95 * 0.9999e9),
            Some("1D(B0)") if at_2k => r["mean_completion_ns"] = json!(14.4 * 0.95e9),
            _ => {}
        }
    });
    let mut recs = records("matvec-synthetic", &noisy);
    // Spread the 2 KB daemons' trials by 0.1%.
    for r in recs
        .iter_mut()
        .filter(|r| r.settings["size"] == json!("2K(10)"))
    {
        let k = r.seed as f64 - 3.0;
        let x = r.result["mean_completion_ns"].as_f64().unwrap();
        r.result["mean_completion_ns"] = json!(x * (1.0 + 1e-3 * k));
    }
    let v = evaluate(&c, &recs, "mean_completion_ns");
    assert_eq!(v.status, Status::WithinNoise, "{}", v.detail);
    assert!(v.detail.contains("within noise at 2K(10)"), "{}", v.detail);
}

#[test]
fn the_no_large_degradation_windows_hold_the_papers_own_jacobi_worst_case() {
    // Table 5's 179.8 and 178.0 s against 146.4 s (+22.8%, +21.6%) are what the paper
    // calls minor; 25% is beyond the window.
    let c = claims()
        .into_iter()
        .find(|c| c.name == "no-large-degradation-jacobi")
        .unwrap();
    let unchanged: Change = Box::new(|_, _| {});
    let ok = evaluate(&c, &records("jacobi", &unchanged), "mean_completion_ns");
    assert_eq!(ok.status, Status::Held, "{}", ok.detail);
    let worse = time(&[ty("2D(B0)"), size("2K(V)")], 146.4 * 1.25);
    let bad = evaluate(&c, &records("jacobi", &worse), "mean_completion_ns");
    assert_eq!(bad.status, Status::NotHeld, "{}", bad.detail);
}
