//! The search on synthetic objectives (no simulation): known optimum, seeded noise.

use super::*;
use numaplace_core::tune::{Dim, Scale, Space, Value};

static SPECIALS: [Value; 2] = [Value::Int(-1), Value::Inf];

/// Four parameters like a policy's: two log ranges with specials, two small integers.
fn space() -> Space {
    Space::new(&[
        Dim {
            field: "a",
            lo: 1.0,
            hi: 1e6,
            integer: true,
            scale: Scale::Log,
            specials: &SPECIALS,
            source: "test",
        },
        Dim {
            field: "b",
            lo: 1e-3,
            hi: 10.0,
            integer: false,
            scale: Scale::Log,
            specials: &[],
            source: "test",
        },
        Dim::range("c", 0.0, 10.0, true, Scale::Linear, "test"),
        Dim::range("d", 0.0, 7.0, true, Scale::Linear, "test"),
    ])
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The noise-free objective: 1 at the optimum (a = 1000, b = 0.1, c = 3, d = 5), growing
/// with the distance on each parameter's scale; the specials cost 1 more.
fn truth(v: &[Value]) -> f64 {
    let s = space();
    let mut f = 1.0;
    for (d, (&x, opt)) in s.dims.iter().zip(v.iter().zip([1000.0, 0.1, 3.0, 5.0])) {
        f += match x {
            Value::Inf | Value::Int(-1) => 1.0,
            _ => {
                let dx = d.position(x.as_f64()) - d.position(opt);
                2.0 * dx * dx
            }
        };
    }
    f
}

/// `truth` with seeded noise of standard deviation about `sd`, a function of the values
/// and the trial only.
fn noisy(sd: f64) -> impl Fn(&[Value], u32) -> Result<f64, String> + Sync {
    move |v: &[Value], t: u32| {
        let mut h = t as u64;
        for x in v {
            h = splitmix(h ^ x.as_f64().to_bits());
        }
        // The sum of four uniforms, centred: variance 4/12.
        let mut z = 0.0;
        for _ in 0..4 {
            h = splitmix(h);
            z += (h >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
        }
        Ok(truth(v) + sd * z / (4.0f64 / 12.0).sqrt())
    }
}

fn opts(method: Method, budget: u64, trials: u32, seed: u64) -> Options {
    Options {
        method,
        budget,
        trials,
        seed,
        defaults: None,
    }
}

#[test]
fn the_same_seed_gives_the_same_search_whatever_the_thread_count() {
    let s = space();
    let f = noisy(0.1);
    let go = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| tune(&s, &f, &opts(Method::Tpe, 120, 2, 7), &mut Quiet).unwrap())
    };
    let (a, b) = (go(1), go(4));
    assert_eq!(a.candidates, b.candidates);
    assert_eq!(a.evals, b.evals);
    assert_eq!(a.best, b.best);
    assert_eq!(a.runs(), 120.min(a.runs()));
    let other = tune(&s, &f, &opts(Method::Tpe, 120, 2, 8), &mut Quiet).unwrap();
    assert_ne!(
        a.candidates, other.candidates,
        "another seed, other candidates"
    );
}

#[test]
fn no_method_uses_more_runs_than_its_budget() {
    let s = space();
    let f = noisy(0.1);
    for m in [
        Method::Tpe,
        Method::Halving,
        Method::Random,
        Method::RandomRace,
    ] {
        for (budget, trials) in [(1, 1), (7, 2), (50, 3), (200, 2)] {
            let o = tune(&s, &f, &opts(m, budget, trials, 1), &mut Quiet).unwrap();
            assert!(o.runs() <= budget, "{m} {budget} {trials}: {}", o.runs());
            assert!(
                o.runs() >= budget * 2 / 3,
                "{m} {budget} {trials}: {}",
                o.runs()
            );
            assert!(o.best.is_some());
        }
    }
}

#[test]
fn a_budget_below_one_candidates_trials_is_refused() {
    let e = tune(
        &space(),
        &noisy(0.0),
        &opts(Method::Tpe, 2, 3, 1),
        &mut Quiet,
    )
    .unwrap_err();
    assert_eq!(
        e,
        TuneError::Budget {
            budget: 2,
            trials: 3
        }
    );
}

#[test]
fn successive_halving_keeps_the_best_candidate_under_noise() {
    // Twenty-seven candidates, one clearly best (truth 1.0) among others at 1.3 and
    // worse, under noise (sd 0.15) large enough that single trials often misorder them.
    let s = Space::new(&[Dim::range("x", 0.0, 26.0, true, Scale::Linear, "test")]);
    let f = |v: &[Value], t: u32| -> Result<f64, String> {
        let x = v[0].as_f64();
        let base = if x == 13.0 { 1.0 } else { 1.3 + 0.01 * x };
        let mut h = splitmix(t as u64 ^ (x as u64) << 32);
        let mut z = 0.0;
        for _ in 0..4 {
            h = splitmix(h);
            z += (h >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
        }
        Ok(base + 0.15 * z / (4.0f64 / 12.0).sqrt())
    };
    let mut kept = 0;
    for seed in 0..20u64 {
        let mut search = Search {
            space: &s,
            objective: &f,
            observer: &mut Quiet,
            budget: 1000,
            candidates: Vec::new(),
            evals: Vec::new(),
            trace: Vec::new(),
        };
        let ids: Vec<usize> = (0..27)
            .map(|i| {
                // Every value once, in an order that depends on the seed.
                let x = (i + seed as usize * 7) % 27;
                search.add(vec![Arm::Range((x as f64 + 0.5) / 27.0)], "random")
            })
            .collect();
        search.top_up(&ids, 1);
        search.halve(ids, 1);
        let best = incumbent(&search.candidates).unwrap();
        if search.candidates[best].values[0] == Value::Int(13) {
            kept += 1;
        }
    }
    assert!(kept >= 18, "the best kept in {kept} of 20 searches");
}

#[test]
fn tpe_finds_a_better_setting_than_random_search_at_equal_budget() {
    let s = space();
    let f = noisy(0.05);
    let (mut tpe_wins, mut tpe_total, mut random_total) = (0, 0.0, 0.0);
    let seeds = 24;
    for seed in 0..seeds {
        let best = |m| {
            let o = tune(&s, &f, &opts(m, 160, 2, seed), &mut Quiet).unwrap();
            truth(&o.candidates[o.best.unwrap()].values)
        };
        let (t, r) = (best(Method::Tpe), best(Method::Random));
        tpe_total += t;
        random_total += r;
        if t < r {
            tpe_wins += 1;
        }
    }
    eprintln!(
        "tpe better in {tpe_wins} of {seeds}: mean {} against {}",
        tpe_total / seeds as f64,
        random_total / seeds as f64
    );
    // At least 17 wins of 24: a one-sided sign test rejects "no better than random" at
    // the 5% level (P(X >= 17) = 0.032 for X ~ Bin(24, 1/2)).
    assert!(
        tpe_wins >= 17,
        "tpe better in {tpe_wins} of {seeds}: mean {} against {}",
        tpe_total / seeds as f64,
        random_total / seeds as f64
    );
    assert!(tpe_total < random_total);
}

#[test]
fn the_trace_follows_the_incumbent_and_ends_at_the_winner() {
    let s = space();
    let o = tune(
        &s,
        &noisy(0.1),
        &opts(Method::Halving, 90, 2, 3),
        &mut Quiet,
    )
    .unwrap();
    let last = o.trace.last().unwrap();
    assert_eq!(last.0, o.runs());
    assert_eq!(last.1, o.candidates[o.best.unwrap()].mean());
    assert!(o.trace.windows(2).all(|w| w[0].0 < w[1].0));
}

#[test]
fn halving_cost_counts_every_rung() {
    // 27 at 2 trials: 54; 9 to 6 trials: 36; 3 to 18: 36; then one is left.
    assert_eq!(halving_cost(27, 2), 54 + 36 + 36);
    assert_eq!(halving_cost(1, 2), 2);
    assert_eq!(halving_cost(3, 1), 3);
    assert_eq!(halving_width(126, 2), 27);
}

#[test]
fn the_tpe_method_runs_the_defaults_as_its_first_candidate() {
    let s = space();
    let defaults = vec![Value::Inf, Value::Float(0.5), Value::Int(0), Value::Int(1)];
    let o = Options {
        defaults: Some(defaults.clone()),
        ..opts(Method::Tpe, 60, 2, 1)
    };
    let out = tune(&s, &noisy(0.1), &o, &mut Quiet).unwrap();
    let first = &out.candidates[0];
    assert_eq!(first.values, defaults);
    assert_eq!(first.origin, "default");
    assert!(first.results.len() >= 2);
    assert_eq!(
        out.candidates
            .iter()
            .filter(|c| c.origin == "default")
            .count(),
        1
    );
}

#[test]
fn random_race_starts_as_tpe_does_and_proposes_only_random_candidates() {
    let s = space();
    let defaults = vec![Value::Inf, Value::Float(0.5), Value::Int(0), Value::Int(1)];
    let run = |method| {
        let o = Options {
            defaults: Some(defaults.clone()),
            ..opts(method, 120, 2, 3)
        };
        tune(&s, &noisy(0.1), &o, &mut Quiet).unwrap()
    };
    let (tpe, control) = (run(Method::Tpe), run(Method::RandomRace));
    assert_eq!(control.candidates[0].values, defaults);
    assert!(control.candidates[1..].iter().all(|c| c.origin == "random"));
    // The defaults and the random start are the same candidates in the same order.
    let start = 1 + startup(tpe.candidates.len());
    let values = |o: &Outcome| -> Vec<Vec<Value>> {
        o.candidates[..start]
            .iter()
            .map(|c| c.values.clone())
            .collect()
    };
    assert_eq!(values(&tpe), values(&control));
    assert!(tpe.candidates.iter().any(|c| c.origin == "tpe"));
}

#[test]
fn random_race_chooses_its_winner_in_a_race_as_tpe_does() {
    let s = space();
    for method in [Method::Tpe, Method::RandomRace] {
        let out = tune(&s, &noisy(0.1), &opts(method, 120, 2, 5), &mut Quiet).unwrap();
        let winner = &out.candidates[out.best.unwrap()];
        assert!(
            winner.results.len() > 2,
            "{method}: {}",
            winner.results.len()
        );
        assert!(out.runs() <= 120, "{method}: {}", out.runs());
    }
    let random = tune(
        &s,
        &noisy(0.1),
        &opts(Method::Random, 120, 2, 5),
        &mut Quiet,
    )
    .unwrap();
    assert_eq!(random.candidates[random.best.unwrap()].results.len(), 2);
}

#[test]
fn the_defaults_win_when_no_candidate_beats_them() {
    // The defaults sit at the optimum: the search must end on them.
    let s = space();
    let defaults = vec![
        Value::Int(1000),
        Value::Float(0.1),
        Value::Int(3),
        Value::Int(5),
    ];
    for seed in 0..4 {
        let o = Options {
            defaults: Some(defaults.clone()),
            ..opts(Method::Tpe, 80, 2, seed)
        };
        let out = tune(&s, &noisy(0.0), &o, &mut Quiet).unwrap();
        assert_eq!(out.candidates[out.best.unwrap()].values, defaults, "{seed}");
    }
}

#[test]
fn tpe_proposals_never_repeat_the_values_of_an_earlier_candidate() {
    // A space of 4 x 3 = 12 settings and room for 40 candidates: the model would
    // propose the best ones again.
    let s = Space::new(&[
        Dim::range("x", 0.0, 3.0, true, Scale::Linear, "test"),
        Dim::range("y", 0.0, 2.0, true, Scale::Linear, "test"),
    ]);
    let f = |v: &[Value], _: u32| Ok(v[0].as_f64() + v[1].as_f64());
    for seed in 0..4 {
        let out = tune(&s, &f, &opts(Method::Tpe, 80, 2, seed), &mut Quiet).unwrap();
        for (i, c) in out.candidates.iter().enumerate() {
            if c.origin == "tpe" {
                assert!(
                    out.candidates[..i].iter().all(|o| o.values != c.values),
                    "seed {seed}: candidate {i} repeats {:?}",
                    c.values
                );
            }
        }
    }
}

#[test]
fn ties_do_not_stop_exploration() {
    // Every setting gives the same result: the model learns nothing, and its slots in a
    // batch after one whose proposals all tied are drawn at random, beyond the share of
    // random draws every batch has.
    let s = space();
    let flat = |_: &[Value], _: u32| Ok(2.0);
    let out = tune(&s, &flat, &opts(Method::Tpe, 200, 2, 1), &mut Quiet).unwrap();
    let after: Vec<&Candidate> = out
        .candidates
        .iter()
        .skip(startup(out.candidates.len()))
        .collect();
    let random = after.iter().filter(|c| c.origin == "random").count();
    assert!(
        random as f64 >= 1.5 * EXPLORE_SHARE * after.len() as f64,
        "{random} random of {} candidates after the start",
        after.len()
    );
}

#[test]
fn a_result_that_repeats_an_earlier_one_is_told_to_the_model_as_the_worst() {
    let cand = |id: usize, results: Vec<f64>| Candidate {
        id,
        arms: Vec::new(),
        values: Vec::new(),
        origin: "tpe",
        results,
    };
    let cands = vec![
        cand(0, vec![1.0, 3.0]),
        cand(1, vec![1.0, 3.0]),
        cand(2, vec![3.0, 1.0]),
    ];
    assert_eq!(model_score(&cands, 0), 2.0);
    assert_eq!(model_score(&cands, 1), f64::INFINITY);
    // The same mean from other results is news.
    assert_eq!(model_score(&cands, 2), 2.0);
}

#[test]
fn the_race_enters_one_candidate_per_distinct_result() {
    let cand = |id: usize, results: Vec<f64>| Candidate {
        id,
        arms: Vec::new(),
        values: Vec::new(),
        origin: "random",
        results,
    };
    let cands = vec![
        cand(0, vec![1.0, 3.0]),
        cand(1, vec![1.0, 3.0]),
        cand(2, vec![3.0, 1.0]),
        cand(3, vec![2.5, 2.0]),
        cand(4, vec![1.0]),
        cand(5, vec![5.0, 5.0]),
    ];
    // 0 and 1 alike (1 left out); 2 ties 0's mean with other results (kept); 4 lacks a
    // trial.
    assert_eq!(finalists(&cands, 2, 3), vec![0, 2, 3]);
    assert_eq!(finalists(&cands, 2, 10), vec![0, 2, 3, 5]);
}

#[test]
fn a_local_move_changes_one_or_two_parameters_of_a_parent() {
    let s = space();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
    let parents: Vec<Candidate> = (0..3)
        .map(|id| {
            let arms = s.draw(&mut rng);
            Candidate {
                id,
                values: s.values(&arms),
                arms,
                origin: "random",
                results: vec![1.0],
            }
        })
        .collect();
    let mut changed = [0; 5];
    for _ in 0..200 {
        let arms = local(&s, &parents, &[0, 1, 2], &mut rng).unwrap();
        let values = s.values(&arms);
        let n = parents
            .iter()
            .map(|p| p.values.iter().zip(&values).filter(|(a, b)| a != b).count())
            .min()
            .unwrap();
        changed[n] += 1;
    }
    assert_eq!(changed[0], 0, "never a parent again");
    assert_eq!(changed[3] + changed[4], 0, "{changed:?}");
    assert!(changed[1] > 0 && changed[2] > 0, "{changed:?}");
}
