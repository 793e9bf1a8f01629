//! The claim kinds for parameter sweeps (`ratio` and `difference` over an axis,
//! `intervals`, `curve`) and runs that did not finish: each holds on the records it
//! describes, is not held when one point contradicts it, and is within noise when the
//! runs' 99% intervals allow both.

use numaplace_study::claims::validate;
use numaplace_study::table::{summarize, TableOptions};
use numaplace_study::{evaluate, Claim, Record, Status};
use serde_json::{json, Map, Value};

/// A record with the given settings and result.
fn rec(i: usize, settings: &[(&str, Value)], result: Value) -> Record {
    let mut s = Map::new();
    for (k, v) in settings {
        s.insert(k.to_string(), v.clone());
    }
    Record {
        id: format!("r{i:06}"),
        index: i,
        seed: 1 + i as u64,
        settings: s,
        result,
        error: None,
        spec_config: Value::Null,
    }
}

fn claim(text: &str) -> Claim {
    toml::from_str(&format!("name = \"c\"\nstudy = \"s\"\n{text}")).unwrap()
}

fn status(c: &Claim, recs: &[Record]) -> (Status, String) {
    let r = evaluate(c, recs, "makespan_ns");
    (r.status, r.detail)
}

/// Table 4's shape: per workload, `tuned` and `default` settings, `n` trials each around
/// the given means with a spread of `sd`.
fn table4(means: &[(&str, f64, f64)], sd: f64) -> Vec<Record> {
    let mut out = Vec::new();
    for (w, tuned, default) in means {
        for (setting, m) in [("tuned", tuned), ("default", default)] {
            for k in 0..5 {
                let t = m + sd * (k as f64 - 2.0);
                let i = out.len();
                out.push(rec(
                    i,
                    &[("workload", json!(w)), ("setting", json!(setting))],
                    json!({ "makespan_ns": t }),
                ));
            }
        }
    }
    out
}

const WITHIN_5PCT: &str = r#"
kind = "ratio"
over = "workload"
left = { where = { setting = "default" } }
right = { where = { setting = "tuned" } }
at_most = 1.05
"#;

#[test]
fn a_ratio_over_an_axis_must_hold_at_every_value() {
    let c = claim(WITHIN_5PCT);
    let ok = table4(&[("a", 100.0, 104.0), ("b", 200.0, 190.0)], 0.1);
    assert_eq!(status(&c, &ok).0, Status::Held);
    let bad = table4(&[("a", 100.0, 104.0), ("b", 200.0, 220.0)], 0.1);
    let (s, detail) = status(&c, &bad);
    assert_eq!(s, Status::NotHeld);
    assert!(
        detail.contains("fails at b") && !detail.contains("fails at a"),
        "{detail}"
    );
}

#[test]
fn a_difference_over_an_axis_must_hold_at_every_value() {
    let c = claim(
        &WITHIN_5PCT
            .replace("ratio", "difference")
            .replace("1.05", "5.0"),
    );
    assert_eq!(
        status(&c, &table4(&[("a", 100.0, 104.0)], 0.1)).0,
        Status::Held
    );
    assert_eq!(
        status(&c, &table4(&[("a", 100.0, 106.0)], 0.1)).0,
        Status::NotHeld
    );
}

#[test]
fn a_ratio_whose_interval_crosses_a_bound_is_within_noise() {
    // 104 / 100 with 99% half-widths of 3.26 a side: the ratio lies in [0.98, 1.11].
    let (s, detail) = status(&claim(WITHIN_5PCT), &table4(&[("a", 100.0, 104.0)], 1.0));
    assert_eq!(s, Status::WithinNoise, "{detail}");
    assert!(detail.contains("within noise at a"), "{detail}");
}

#[test]
fn a_value_whose_interval_crosses_a_bound_is_within_noise() {
    let c = claim("kind = \"value\"\nleft = { where = { setting = \"tuned\" } }\nat_least = 99\n");
    let recs = table4(&[("a", 100.0, 100.0)], 1.0);
    assert_eq!(status(&c, &recs).0, Status::WithinNoise);
    let recs = table4(&[("a", 100.0, 100.0)], 0.1);
    assert_eq!(status(&c, &recs).0, Status::Held);
    let recs = table4(&[("a", 90.0, 100.0)], 0.1);
    assert_eq!(status(&c, &recs).0, Status::NotHeld);
}

#[test]
fn a_trend_with_a_step_inside_the_noise_is_within_noise() {
    let c = claim("kind = \"trend\"\nover = \"workload\"\nleft = { where = { setting = \"tuned\" } }\nexpect = \"increasing\"\n");
    // Workloads sort as a, b, c.
    let clear = table4(
        &[("a", 100.0, 0.0), ("b", 110.0, 0.0), ("c", 120.0, 0.0)],
        1.0,
    );
    assert_eq!(status(&c, &clear).0, Status::Held);
    let close = table4(
        &[("a", 100.0, 0.0), ("b", 103.0, 0.0), ("c", 120.0, 0.0)],
        1.0,
    );
    assert_eq!(status(&c, &close).0, Status::WithinNoise);
    let back = table4(
        &[("a", 100.0, 0.0), ("b", 90.0, 0.0), ("c", 120.0, 0.0)],
        1.0,
    );
    assert_eq!(status(&c, &back).0, Status::NotHeld);
}

#[test]
fn a_claim_marked_as_an_observation_keeps_its_numbers_and_has_no_verdict() {
    let c = claim(&format!(
        "observation = \"the paper gives no window\"\n{WITHIN_5PCT}"
    ));
    let r = evaluate(&c, &table4(&[("a", 100.0, 120.0)], 0.1), "makespan_ns");
    assert_eq!(r.status, Status::Observation);
    assert_eq!(r.verdict(), "observation");
    assert_eq!(r.observation.as_deref(), Some("the paper gives no window"));
    assert!(r.detail.contains("ratio 1.2"), "{}", r.detail);
}

/// A study with a `type` axis beside a size axis: per (type, size) two runs that agree.
fn by_type(rows: &[(&str, &str, f64)]) -> Vec<Record> {
    rows.iter()
        .flat_map(|row| [row, row])
        .enumerate()
        .map(|(i, (ty, size, t))| {
            rec(
                i,
                &[("type", json!(ty)), ("size", json!(size))],
                json!({ "makespan_ns": t }),
            )
        })
        .collect()
}

const LISTED_SIZES: &str = r#"
kind = "compare"
over = "size"
values = ["s", "m"]
left = { where = { type = "daemon" } }
right = { where = { type = "none" } }
expect = "greater"
"#;

#[test]
fn a_compare_over_listed_values_ignores_the_values_not_listed() {
    let c = claim(LISTED_SIZES);
    let recs = by_type(&[
        ("none", "s", 10.0),
        ("none", "m", 10.0),
        ("none", "l", 10.0),
        ("daemon", "s", 11.0),
        ("daemon", "m", 12.0),
        ("daemon", "l", 9.0),
    ]);
    assert_eq!(status(&c, &recs).0, Status::Held);
}

#[test]
fn a_compare_over_listed_values_fails_at_a_listed_value() {
    let c = claim(LISTED_SIZES);
    let recs = by_type(&[
        ("none", "s", 10.0),
        ("none", "m", 10.0),
        ("daemon", "s", 11.0),
        ("daemon", "m", 9.0),
    ]);
    let (s, detail) = status(&c, &recs);
    assert_eq!(s, Status::NotHeld);
    assert!(detail.contains("fails at m"), "{detail}");
}

const SIGNIFICANTLY_LESS: &str = r#"
kind = "compare"
over = "workload"
left = { where = { setting = "tuned" } }
right = { where = { setting = "default" } }
expect = "less"
confidence = 0.99
"#;

#[test]
fn a_compare_with_a_confidence_holds_when_the_intervals_are_apart() {
    // Means 100 and 110 with sd 1.58 over 5 runs: 99% half-widths 3.26.
    let recs = table4(&[("a", 100.0, 110.0)], 1.0);
    assert_eq!(status(&claim(SIGNIFICANTLY_LESS), &recs).0, Status::Held);
}

#[test]
fn a_compare_with_an_order_inside_the_noise_is_within_noise() {
    // Means 100 and 103: in order, but the 99% intervals (half-width 3.26) overlap.
    let recs = table4(&[("a", 100.0, 103.0)], 1.0);
    let (s, detail) = status(&claim(SIGNIFICANTLY_LESS), &recs);
    assert_eq!(s, Status::WithinNoise);
    assert!(detail.contains("within noise"), "{detail}");
    // The same against the order the means have.
    let greater = claim(&SIGNIFICANTLY_LESS.replace("\"less\"", "\"greater\""));
    assert_eq!(status(&greater, &recs).0, Status::WithinNoise);
}

#[test]
fn a_compare_asks_for_99_percent_intervals_unless_it_names_a_level() {
    let recs = table4(&[("a", 100.0, 103.0)], 1.0);
    let plain = claim(&SIGNIFICANTLY_LESS.replace("confidence = 0.99\n", ""));
    assert_eq!(status(&plain, &recs).0, Status::WithinNoise);
    // At 50% the half-widths are 0.52: apart.
    let half = claim(&SIGNIFICANTLY_LESS.replace("0.99", "0.5"));
    assert_eq!(status(&half, &recs).0, Status::Held);
}

#[test]
fn a_compare_of_one_run_a_side_is_an_error_naming_the_trials() {
    let one: Vec<Record> = table4(&[("a", 100.0, 110.0)], 1.0)
        .into_iter()
        .filter(|r| r.index % 5 == 0)
        .collect();
    let (s, _) = status(&claim(SIGNIFICANTLY_LESS), &one);
    assert!(
        matches!(&s, Status::Error(e) if e.contains("trials")),
        "{s:?}"
    );
}

const EVERY_TYPE_WITHIN: &str = r#"
kind = "ratio"
over = "type"
values = ["a", "b"]
left = { where = { size = "s" } }
right = { where = { type = "none", size = "s" } }
at_most = 1.2
"#;

#[test]
fn a_ratio_over_an_axis_the_right_operand_selects_keeps_the_right_operand_fixed() {
    let c = claim(EVERY_TYPE_WITHIN);
    let recs = by_type(&[
        ("none", "s", 10.0),
        ("a", "s", 11.0),
        ("b", "s", 11.9),
        ("b", "l", 30.0),
    ]);
    let (s, detail) = status(&c, &recs);
    assert_eq!(s, Status::Held, "{detail}");
    let worse = by_type(&[("none", "s", 10.0), ("a", "s", 11.0), ("b", "s", 12.5)]);
    let (s, detail) = status(&c, &worse);
    assert_eq!(s, Status::NotHeld);
    assert!(detail.contains("fails at b"), "{detail}");
}

const OVERLAP: &str = r#"
kind = "intervals"
over = "workload"
values = ["a", "b"]
left = { where = { setting = "tuned" } }
right = { where = { setting = "default" } }
expect = "overlap"
"#;

#[test]
fn intervals_overlap_or_not_at_each_listed_value() {
    let c = claim(OVERLAP);
    // `c`'s means are far apart, but it is not listed.
    let recs = table4(
        &[("a", 100.0, 101.0), ("b", 50.0, 50.5), ("c", 10.0, 90.0)],
        1.0,
    );
    assert_eq!(status(&c, &recs).0, Status::Held);
    let apart = table4(&[("a", 100.0, 101.0), ("b", 50.0, 70.0)], 1.0);
    let (s, detail) = status(&c, &apart);
    assert_eq!(s, Status::NotHeld);
    assert!(detail.contains("fails at b"), "{detail}");
    let disjoint = claim(&OVERLAP.replace("\"overlap\"", "\"disjoint\""));
    assert_eq!(status(&disjoint, &apart).0, Status::NotHeld, "a overlaps");
    let far = table4(&[("a", 100.0, 130.0), ("b", 50.0, 70.0)], 1.0);
    assert_eq!(status(&disjoint, &far).0, Status::Held);
}

#[test]
fn intervals_use_the_confidence_asked_for() {
    // Means 100 and 103 with sd 1.58 over 5 runs: the 99% intervals (half-width 3.26)
    // overlap, the 50% ones (0.52) do not.
    let recs = table4(&[("a", 100.0, 103.0), ("b", 1.0, 1.0)], 1.0);
    let c = claim(OVERLAP);
    assert_eq!(status(&c, &recs).0, Status::Held);
    let narrow = claim(&format!("{OVERLAP}confidence = 0.5\n"));
    assert_eq!(status(&narrow, &recs).0, Status::NotHeld);
}

#[test]
fn an_interval_of_one_run_or_a_missing_value_is_an_error() {
    let c = claim(OVERLAP);
    let one: Vec<Record> = table4(&[("a", 1.0, 1.0), ("b", 1.0, 1.0)], 1.0)
        .into_iter()
        .filter(|r| r.index % 5 == 0)
        .collect();
    assert!(matches!(status(&c, &one).0, Status::Error(e) if e.contains("two runs")));
    let no_b = table4(&[("a", 1.0, 1.0)], 1.0);
    assert!(matches!(status(&c, &no_b).0, Status::Error(e) if e.contains("workload=b")));
}

/// A sweep of `x` (with a final "inf") for each value of `g`, two runs per point that
/// agree.
fn sweep(curves: &[(Value, &[(Value, f64)])]) -> Vec<Record> {
    noisy_sweep(curves, 0.0)
}

/// As [`sweep`], the two runs of a point `y - d` and `y + d`.
fn noisy_sweep(curves: &[(Value, &[(Value, f64)])], d: f64) -> Vec<Record> {
    let mut out = Vec::new();
    for (g, points) in curves {
        for (x, y) in *points {
            for t in [y - d, y + d] {
                let i = out.len();
                out.push(rec(
                    i,
                    &[("g", g.clone()), ("x", x.clone())],
                    json!({ "makespan_ns": t }),
                ));
            }
        }
    }
    out
}

#[test]
fn an_argmin_at_a_value_holds_only_where_the_least_mean_is() {
    let c = claim("kind = \"curve\"\nover = \"x\"\nmeasure = \"argmin\"\nat = \"inf\"\n");
    let best_inf = sweep(&[(
        json!(0),
        &[(json!(1), 5.0), (json!(10), 4.0), (json!("inf"), 3.0)],
    )]);
    assert_eq!(status(&c, &best_inf).0, Status::Held);
    let best_10 = sweep(&[(
        json!(0),
        &[(json!(1), 5.0), (json!(10), 2.0), (json!("inf"), 3.0)],
    )]);
    let (s, detail) = status(&c, &best_10);
    assert_eq!(s, Status::NotHeld);
    assert!(detail.contains("at x=10"), "{detail}");
}

#[test]
fn an_argmin_within_bounds_must_be_a_number_in_them() {
    let c =
        claim("kind = \"curve\"\nover = \"x\"\nmeasure = \"argmin\"\nat_least = 5\nat_most = 20\n");
    let at_10 = sweep(&[(
        json!(0),
        &[(json!(1), 5.0), (json!(10), 2.0), (json!("inf"), 3.0)],
    )]);
    assert_eq!(status(&c, &at_10).0, Status::Held);
    let at_1 = sweep(&[(
        json!(0),
        &[(json!(1), 1.0), (json!(10), 2.0), (json!("inf"), 3.0)],
    )]);
    assert_eq!(status(&c, &at_1).0, Status::NotHeld);
    // "inf" is no number: outside any bound.
    let at_inf = sweep(&[(
        json!(0),
        &[(json!(1), 5.0), (json!(10), 4.0), (json!("inf"), 3.0)],
    )]);
    assert_eq!(status(&c, &at_inf).0, Status::NotHeld);
}

#[test]
fn worst_over_best_looks_at_the_range_and_divides_by_the_whole_curves_best() {
    let c = claim(
        "kind = \"curve\"\nover = \"x\"\nmeasure = \"worst-over-best\"\nx_from = 100\nx_to = 300\nacross = \"g\"\nat_most = 1.05\n",
    );
    let pts_a: &[(Value, f64)] = &[
        (json!(0), 500.0),
        (json!(100), 104.0),
        (json!(200), 100.0),
        (json!(300), 103.0),
        (json!(1000), 102.0),
    ];
    let pts_b: &[(Value, f64)] = &[(json!(100), 52.0), (json!(300), 51.0), (json!("inf"), 50.0)];
    let recs = sweep(&[(json!("a"), pts_a), (json!("b"), pts_b)]);
    assert_eq!(
        status(&c, &recs).0,
        Status::Held,
        "x = 0 and inf are outside"
    );
    let pts_b_bad: &[(Value, f64)] =
        &[(json!(100), 56.0), (json!(300), 51.0), (json!("inf"), 50.0)];
    let recs = sweep(&[(json!("a"), pts_a), (json!("b"), pts_b_bad)]);
    let (s, detail) = status(&c, &recs);
    assert_eq!(s, Status::NotHeld);
    assert!(detail.contains("fails at b"), "{detail}");
}

/// Figure 6's shape: one curve per cost level whose minimum moves right and whose depth
/// shrinks as the level rises.
fn figure6(levels: &[(i64, [f64; 4])]) -> Vec<Record> {
    let xs = [json!(0), json!(100), json!(200), json!(300)];
    let owned: Vec<(Value, Vec<(Value, f64)>)> = levels
        .iter()
        .map(|(g, ys)| {
            (
                json!(g),
                xs.iter().cloned().zip(ys.iter().copied()).collect(),
            )
        })
        .collect();
    let borrowed: Vec<(Value, &[(Value, f64)])> = owned
        .iter()
        .map(|(g, p)| (g.clone(), p.as_slice()))
        .collect();
    sweep(&borrowed)
}

#[test]
fn a_curves_argmin_moving_right_across_levels_is_increasing_even_with_a_step_in_place() {
    let c = claim(
        "kind = \"curve\"\nover = \"x\"\nmeasure = \"argmin\"\nacross = \"g\"\nexpect = \"increasing\"\n",
    );
    let right = figure6(&[
        (0, [9.0, 5.0, 6.0, 7.0]),
        (2, [9.0, 5.0, 6.0, 7.0]),
        (4, [9.0, 7.0, 5.0, 6.0]),
    ]);
    assert_eq!(status(&c, &right).0, Status::Held);
    let back = figure6(&[
        (0, [9.0, 5.0, 6.0, 7.0]),
        (2, [9.0, 7.0, 5.0, 6.0]),
        (4, [9.0, 5.0, 6.0, 7.0]),
    ]);
    assert_eq!(status(&c, &back).0, Status::NotHeld, "it moves back");
    let still = figure6(&[(0, [9.0, 5.0, 6.0, 7.0]), (2, [9.0, 5.0, 6.0, 7.0])]);
    assert_eq!(status(&c, &still).0, Status::NotHeld, "it never moves");
}

#[test]
fn a_curves_depth_shrinking_across_levels_is_decreasing() {
    let c = claim(
        "kind = \"curve\"\nover = \"x\"\nmeasure = \"worst-over-best\"\nx_from = 100\nacross = \"g\"\nexpect = \"decreasing\"\n",
    );
    let flatter = figure6(&[(0, [9.0, 5.0, 6.0, 8.0]), (2, [9.0, 6.0, 6.5, 7.0])]);
    assert_eq!(status(&c, &flatter).0, Status::Held);
    let deeper = figure6(&[(0, [9.0, 6.0, 6.5, 7.0]), (2, [9.0, 5.0, 6.0, 8.0])]);
    assert_eq!(status(&c, &deeper).0, Status::NotHeld);
}

#[test]
fn a_claim_that_asks_nothing_or_lists_values_without_an_axis_is_refused() {
    for (text, what) in [
        (
            "kind = \"curve\"\nover = \"x\"\nmeasure = \"argmin\"\n",
            "needs `at`",
        ),
        (
            "kind = \"curve\"\nover = \"x\"\nmeasure = \"worst-over-best\"\nat = 3\n",
            "only the `argmin`",
        ),
        (
            "kind = \"curve\"\nover = \"x\"\nmeasure = \"argmin\"\nexpect = \"increasing\"\n",
            "need `across`",
        ),
        (
            "kind = \"intervals\"\nright = {}\nexpect = \"overlap\"\nvalues = [1]\n",
            "needs `over`",
        ),
        (
            "kind = \"compare\"\nright = {}\nexpect = \"less\"\nvalues = [1]\n",
            "needs `over`",
        ),
        (
            "kind = \"ratio\"\nright = {}\nat_most = 1.0\nvalues = [1]\n",
            "needs `over`",
        ),
        (
            "kind = \"compare\"\nright = {}\nexpect = \"less\"\nconfidence = 1.0\n",
            "strictly between 0 and 1",
        ),
        (
            "kind = \"intervals\"\nright = {}\nexpect = \"overlap\"\nconfidence = 1.5\n",
            "strictly between 0 and 1",
        ),
    ] {
        let e = validate(&claim(text)).unwrap_err().to_string();
        assert!(e.contains(what), "{text}: {e}");
    }
}

#[test]
fn a_run_that_did_not_finish_has_no_numbers_but_whether_it_finished() {
    let done = rec(
        0,
        &[("x", json!(0))],
        json!({"makespan_ns": 10.0, "finished": true}),
    );
    let out = rec(
        1,
        &[("x", json!(0))],
        json!({"makespan_ns": 99.0, "finished": false, "partial": true}),
    );
    let stopped = rec(
        2,
        &[("x", json!(0))],
        json!({"makespan_ns": 98.0, "partial": true}),
    );
    assert!(done.finished() && !out.finished() && !stopped.finished());
    assert_eq!(out.metric("makespan_ns"), None);
    assert_eq!(out.metric("finished"), Some(0.0));
    assert_eq!(stopped.metric("partial"), Some(1.0));
    assert_eq!(done.metric("makespan_ns"), Some(10.0));

    // A claim that it did not finish, and the summary table's count.
    let never = claim("kind = \"value\"\nleft = { metric = \"finished\" }\nat_most = 0\n");
    let twice = |r: &Record| vec![r.clone(), r.clone()];
    assert_eq!(status(&never, &twice(&out)).0, Status::Held);
    assert_eq!(status(&never, &twice(&done)).0, Status::NotHeld);
    let opts = TableOptions {
        metric: "makespan_ns".into(),
        group_by: vec!["x".into()],
        baseline: Vec::new(),
        confidence: 0.99,
    };
    let table = summarize(&[done, out, stopped], &opts);
    let row = &table.rows[0];
    assert_eq!(
        (row.summary.unwrap().n, row.unfinished, row.missing),
        (1, 2, 0)
    );
    assert!(table.headers().contains(&"did not finish".to_string()));
    assert!(table.render_text().contains("did not finish"));
}

#[test]
fn a_tie_at_the_least_mean_is_within_noise_for_at_and_for_bounds_alike() {
    // The scanners never run in a short run: every finite scan-delay ties with inf.
    let tied = sweep(&[(
        json!(0),
        &[(json!(1), 3.0), (json!(10), 3.0), (json!("inf"), 3.0)],
    )]);
    let at_inf = claim("kind = \"curve\"\nover = \"x\"\nmeasure = \"argmin\"\nat = \"inf\"\n");
    assert_eq!(status(&at_inf, &tied).0, Status::WithinNoise);
    let finite = claim("kind = \"curve\"\nover = \"x\"\nmeasure = \"argmin\"\nat_least = 0\n");
    assert_eq!(status(&finite, &tied).0, Status::WithinNoise);
}

#[test]
fn an_argmin_candidate_is_every_value_whose_interval_meets_the_least_means() {
    let at_10 = claim("kind = \"curve\"\nover = \"x\"\nmeasure = \"argmin\"\nat = 10\n");
    let pts: &[(Value, f64)] = &[(json!(1), 5.0), (json!(10), 2.0), (json!("inf"), 2.2)];
    // Runs 0.01 either side: 99% half-widths 0.64; 10 and inf overlap, 1 does not.
    let close = noisy_sweep(&[(json!(0), pts)], 0.01);
    let (s, detail) = status(&at_10, &close);
    assert_eq!(s, Status::WithinNoise, "{detail}");
    assert!(detail.contains("within noise of it: inf"), "{detail}");
    let exact = noisy_sweep(&[(json!(0), pts)], 0.0);
    assert_eq!(status(&at_10, &exact).0, Status::Held);
    let at_1 = claim("kind = \"curve\"\nover = \"x\"\nmeasure = \"argmin\"\nat = 1\n");
    assert_eq!(status(&at_1, &close).0, Status::NotHeld);
}
