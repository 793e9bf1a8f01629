"""numaplace.search_space and numaplace.optuna: Optuna studies of a policy's parameters,
held to what `numaplace tune` searches and runs."""

from __future__ import annotations

import json
import math
import statistics
import subprocess
from pathlib import Path
from typing import Any

import optuna
import pytest

import numaplace
from numaplace.optuna import Objective, create_study, suggest, trial_params

# msort on a sixteenth of its keys: a run takes milliseconds.
TINY: dict[str, Any] = {"machine": "gp1000", "workload": {"kind": "msort", "n": 16384}}

optuna.logging.set_verbosity(optuna.logging.WARNING)


@pytest.fixture(scope="module")
def tuned(cli: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory of a `numaplace tune` of larowe on TINY (4 runs, 2 trials each)."""
    out = tmp_path_factory.mktemp("tune") / "t"
    subprocess.run(
        [
            cli, "tune", "--workload", "msort", "--machine", "gp1000", "--policy", "larowe",
            "--set", "workload.n=16384", "--budget", "4", "--trials", "2", "--holdout", "0",
            "--jobs", "1", "--out", out,
        ],
        capture_output=True,
        check=True,
    )  # fmt: skip
    return out


def test_the_search_space_is_the_one_numaplace_tune_searches(tuned: Path) -> None:
    summary = json.loads((tuned / "summary.json").read_text())
    space = numaplace.search_space("larowe", TINY)
    got = [
        {
            "field": p.name,
            "lo": p.low,
            "hi": p.high,
            "integer": p.kind == "int",
            "scale": "log" if p.log else "linear",
            "specials": ["inf" if math.isinf(v) else str(v) for v in p.specials],
            "source": p.source,
        }
        for p in space
    ]
    assert got == summary["space"]


def test_the_defaults_are_the_first_candidate_of_numaplace_tune(tuned: Path) -> None:
    first = json.loads((tuned / "candidates.json").read_text())[0]
    assert first["origin"] == "default"
    objective = Objective(TINY, policy="larowe")
    defaults = objective.defaults
    assert defaults is not None
    assert {k: "inf" if math.isinf(v) else v for k, v in defaults.items()} == first["params"]


def test_a_candidate_s_runs_are_numaplace_tune_s_runs_of_it(tuned: Path) -> None:
    runs = [json.loads(line) for line in (tuned / "runs.jsonl").read_text().splitlines()]
    objective = Objective(TINY, policy="larowe")
    for r in runs:
        values = {k: math.inf if v == "inf" else v for k, v in r["params"].items()}
        assert objective.run(values, r["seed"]) == r["objective"]


def test_an_override_of_a_policy_parameter_fixes_it_and_ranges_narrow() -> None:
    space = numaplace.search_space(
        "larowe", TINY, policy__scan_delay_ns=math.inf, ranges={"freeze_window_ns": (1e7, 1e9)}
    )
    names = [p.name for p in space]
    assert "scan_delay_ns" not in names
    window = next(p for p in space if p.name == "freeze_window_ns")
    assert (window.low, window.high, window.specials) == (10_000_000, 1_000_000_000, (0, math.inf))


def test_suggest_gives_back_the_values_trial_params_are_made_of() -> None:
    objective = Objective(TINY, policy="larowe")
    values: dict[str, int | float] = {
        "freeze_window_ns": math.inf,
        "recent_mod": 300,
        "scan_delay_ns": 2_000_000_000,
        "sample_passes": 3,
        "defrost_trigger": 0,
        "trigger_method": -1,
    }
    trial = optuna.trial.FixedTrial(trial_params(objective.space, values))
    assert suggest(trial, objective.space) == values


def test_a_study_of_a_few_trials_runs_the_defaults_first_through_the_simulator() -> None:
    objective = Objective(TINY, policy="larowe", repeats=2)
    study = create_study(objective, seed=3)
    study.optimize(objective, n_trials=4)
    assert [t.state for t in study.trials] == [optuna.trial.TrialState.COMPLETE] * 4
    assert objective.runs == 8
    first = study.trials[0]
    defaults = objective.defaults
    assert defaults is not None
    assert {k: math.inf if v == "inf" else v for k, v in first.user_attrs["policy"].items()} == (
        defaults
    )
    assert all(math.isfinite(t.value or math.nan) for t in study.trials)


def test_the_best_value_is_a_direct_run_of_the_best_params() -> None:
    objective = Objective(TINY, policy="larowe", repeats=2, seed_base=5)
    study = create_study(objective, seed=1, defaults_first=False)
    study.optimize(objective, n_trials=4)
    best = objective.best(study)
    sets = {f"policy.{k}": v for k, v in best.items()}
    direct = [
        numaplace.run(TINY, policy="larowe", seed=seed, set=sets).summary["makespan_ns"] * 1e-9
        for seed in (5, 6)
    ]
    assert study.best_value == statistics.fmean(direct)


def test_a_bad_policy_name_is_a_config_error() -> None:
    with pytest.raises(numaplace.ConfigError, match=r"larowe"):
        Objective(TINY, policy="larowee")


def test_a_policy_without_a_search_space_is_a_config_error_naming_the_tunable_ones() -> None:
    with pytest.raises(numaplace.ConfigError, match=r"declares no search space; tunable: .*larowe"):
        numaplace.search_space("static")


def test_an_unknown_metric_is_a_config_error_naming_the_known_ones() -> None:
    with pytest.raises(numaplace.ConfigError, match=r"known: makespan, mean-completion"):
        Objective(TINY, policy="larowe", metric="throughput")


def test_an_unknown_parameter_is_a_config_error_naming_the_tuned_ones() -> None:
    objective = Objective(TINY, policy="larowe")
    with pytest.raises(numaplace.ConfigError, match=r"tuned: freeze_window_ns") as e:
        objective.run({"freeze_windw_ns": 1}, seed=1)
    assert e.value.field == "policy.freeze_windw_ns"


def test_a_value_the_policy_refuses_is_a_config_error_naming_the_field() -> None:
    objective = Objective(TINY, policy="larowe")
    with pytest.raises(numaplace.ConfigError) as e:
        objective.run({"sample_passes": -1}, seed=1)
    assert e.value.field == "policy.sample_passes"
