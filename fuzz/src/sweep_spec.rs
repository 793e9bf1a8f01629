//! Arbitrary text through everything `numaplace sweep` does with an experiment spec
//! before its first run: parsing and validation, the summary options, counting the runs
//! of both modes against a run limit, generating run points from their index, and
//! planning the sweep, in which the simulator's runner resolves (but does not run) the
//! first trial of every axis combination.
//!
//! Besides "no panic, no hang, no huge allocation" (which the fuzzer checks), every
//! outcome must make sense: an error names the spec file (and a line of it, when it
//! gives one); a spec that parses expands in both modes into as many points as it
//! counts, each point carrying its index, id, trial and seed; and a plan either covers
//! exactly the counted runs or fails with the limit (for a sweep above it) or with the
//! point that failed its check. Sweeps above the fuzz limit are not planned point by
//! point; a few of their points, spread over the expansion, are resolved instead.

use numaplace_harness::{Limits, SimRunner};
use numaplace_study::reproduce::table_options;
use numaplace_study::spec::{point_count, point_id, Expansion};
use numaplace_study::sweep::{plan_sweep, Runner, SweepOptions};
use numaplace_study::{parse_spec, Spec, SpecError};

/// The file name errors must name.
const ORIGIN: &str = "fuzz-spec.toml";

/// The runner, holding every point to limits like the run-config target's (a point over
/// them is refused at planning, as `numaplace sweep` refuses it).
fn runner() -> SimRunner {
    SimRunner::with_limits(Limits {
        max_bytes: 256 << 20,
        bytes_source: "the fuzz limit".into(),
        max_ops: 200_000,
    })
}

/// Most runs a planned sweep may have here (the command's default is 100,000): every
/// axis combination of a plan is resolved, which must stay fast.
const MAX_RUNS: usize = 32;

/// Points of a sweep above the limit that are generated and resolved.
const SAMPLES: usize = 8;

/// One input.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let spec = match parse_spec(text, ORIGIN) {
        Ok(spec) => spec,
        Err(e) => return check_error(&e, text),
    };
    // What the command needs from the records (the summary's metric and fields).
    let keep = table_options(&spec).result_paths();
    assert!(!keep.is_empty(), "the summary keeps at least its metric");
    for quick in [false, true] {
        check_mode(&spec, quick, &keep);
    }
}

fn check_error(e: &SpecError, text: &str) {
    let message = e.to_string();
    assert!(
        message.starts_with(&format!("{ORIGIN}: ")),
        "error does not name the file: {message}"
    );
    if let SpecError::Parse {
        line: Some(line), ..
    } = e
    {
        let lines = text.lines().count();
        assert!(
            (1..=lines + 1).contains(line),
            "error on line {line} of a {lines}-line spec: {message}"
        );
    }
}

fn check_mode(spec: &Spec, quick: bool, keep: &[String]) {
    let count =
        point_count(spec, quick).expect("parse_spec rejects specs whose run count overflows");
    let expansion = Expansion::new(spec, quick).expect("a counted spec expands");
    assert_eq!(expansion.len(), count, "expansion length (quick: {quick})");
    assert!(expansion.point(count).is_none(), "a point past the end");
    let trials = expansion.trials();
    for index in samples(count) {
        let p = expansion
            .point(index)
            .unwrap_or_else(|| panic!("no point {index} of {count}"));
        assert_eq!(p.index, index);
        assert_eq!(p.id, point_id(index));
        assert!(p.trial < trials, "trial {} of {trials}", p.trial);
        assert_eq!(p.trial, index as u64 % trials, "trials are innermost");
        assert_eq!(
            p.seed,
            spec.seed_base + p.trial,
            "seed of trial {}",
            p.trial
        );
        assert_eq!(p.settings.len(), spec.axes.len(), "one setting per axis");
        let seed = p.config.get("seed").and_then(|s| s.as_integer());
        assert_eq!(
            seed,
            i64::try_from(p.seed).ok(),
            "seed in the configuration"
        );
        // Planned sweeps resolve their points below.
        if count > MAX_RUNS {
            if let Err(e) = runner().check(&p) {
                assert!(!format!("{e:#}").is_empty(), "an empty error");
            }
        }
    }

    let opts = SweepOptions {
        jobs: 1,
        quick,
        progress: false,
        max_runs: Some(MAX_RUNS),
        keep: Some(keep.to_vec()),
        ..SweepOptions::new(std::env::temp_dir().join("numaplace-fuzz-no-such-dir/out.jsonl"))
    };
    match plan_sweep(spec, &runner(), &opts) {
        Ok(plan) => {
            assert!(count <= MAX_RUNS, "planned {count} runs above the limit");
            assert_eq!(plan.runs(), count, "runs of the plan");
        }
        Err(e) => {
            let message = format!("{e:#}");
            assert!(
                message.starts_with(&format!("{ORIGIN}: ")),
                "plan error does not name the file: {message}"
            );
            if count > MAX_RUNS {
                assert!(
                    message.contains("more than the limit"),
                    "{count} runs: {message}"
                );
            } else {
                assert!(
                    message.contains("is invalid") && message.contains("nothing was run"),
                    "{count} runs: {message}"
                );
                assert!(!message.contains("check panicked"), "{message}");
            }
        }
    }
}

/// Up to [`SAMPLES`] indices spread over `0..count`, the first and the last included.
fn samples(count: usize) -> Vec<usize> {
    if count <= SAMPLES {
        return (0..count).collect();
    }
    let mut v: Vec<usize> = (0..SAMPLES)
        .map(|k| {
            let at = count as u128 - 1;
            (at * k as u128 / (SAMPLES as u128 - 1)) as usize
        })
        .collect();
    v.dedup();
    v
}
