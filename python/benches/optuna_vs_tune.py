"""Optuna's TPE sampler beside `numaplace tune` at an equal budget (docs/src/tuning.md).

    python python/benches/optuna_vs_tune.py [--budget 120] [--repeats 2] [--seeds 5]
        [--holdout 10] [--machine gp1000] [--workloads msort,psolu] [--jobs 2]
        [--numaplace BIN] [--out DIR]

For each workload, the `larowe` policy's six parameters are searched by each method
`--seeds` times (method seeds 1, 2, ...), each search at `--budget` simulator runs:

- `numaplace tune` (its default method, `tpe`) with `--budget B --trials R --seed S`:
  its budget counts every run, the policy's defaults first, its random start, its model's
  proposals and local moves, and its final race;
- an Optuna study (`numaplace.optuna`, `TPESampler(seed=S)` with Optuna's defaults) of
  B / R trials, each trial R runs on the seeds the tuner's trials use, the policy's
  defaults enqueued first.

Both score a candidate by the mean makespan of its runs. Each search's winner (the
tuner's after its race; the study's best trial) then runs on `--holdout` seeds no search
used (those of `tune --holdout`), and so do the policy's defaults. The table gives, per
method, the mean over the method seeds of the winner's search score and of its held-out
mean, each with its 99% Student-t interval over the method seeds. Everything goes to
`OUT/results.json` and each tuner search's files to `OUT/WORKLOAD/tune-seedS/`.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import optuna

from numaplace import _numaplace
from numaplace.optuna import Objective, create_study

POLICY = "larowe"
LEVEL = 0.99


def binary(given: str | None) -> str:
    """The `numaplace` binary: `--numaplace`, $NUMAPLACE_BIN, the workspace's release
    build, or the one on the PATH."""
    if given:
        return given
    if os.environ.get("NUMAPLACE_BIN"):
        return os.environ["NUMAPLACE_BIN"]
    built = Path(__file__).resolve().parents[2] / "target" / "release" / "numaplace"
    if built.is_file():
        return str(built)
    found = shutil.which("numaplace")
    if found is None:
        sys.exit("no numaplace binary: build it (cargo build --release) or pass --numaplace")
    return found


def tune_search(
    bin: str, a: argparse.Namespace, workload: str, seed: int, out: Path
) -> dict[str, Any]:
    """One `numaplace tune` search and its winner's held-out runs."""
    if out.exists():
        shutil.rmtree(out)
    started = time.perf_counter()
    subprocess.run(
        [
            bin, "tune", "--workload", workload, "--machine", a.machine, "--policy", POLICY,
            "--budget", str(a.budget), "--trials", str(a.repeats), "--seed", str(seed),
            "--holdout", str(a.holdout), "--jobs", "1", "--out", str(out),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    summary = json.loads((out / "summary.json").read_text())
    best = summary["best"]
    return {
        "method": "tune",
        "workload": workload,
        "seed": seed,
        "runs": summary["runs"],
        "best": best["params"],
        "best_score": best["mean"],
        "best_trials": best["trials"],
        "holdout": best["holdout"],
        "holdout_mean": best["holdout_mean"],
        "seconds": seconds,
    }


def optuna_search(a: argparse.Namespace, workload: str, seed: int) -> dict[str, Any]:
    """One Optuna study (TPE, the defaults first) and its winner's held-out runs."""
    started = time.perf_counter()
    objective = Objective(base(a, workload), policy=POLICY, repeats=a.repeats)
    study = create_study(objective, seed=seed)
    study.optimize(objective, n_trials=a.budget // a.repeats)
    runs = objective.runs
    best = objective.best(study)
    holdout = objective.evaluate(best, objective.holdout_seeds(a.holdout))
    seconds = time.perf_counter() - started
    return {
        "method": "optuna",
        "workload": workload,
        "seed": seed,
        "runs": runs,
        "best": {k: "inf" if math.isinf(v) else v for k, v in best.items()},
        "best_score": study.best_value,
        "best_trials": a.repeats,
        "holdout": holdout,
        "holdout_mean": statistics.fmean(holdout),
        "seconds": seconds,
    }


def defaults(a: argparse.Namespace, workload: str) -> dict[str, Any]:
    """The policy's defaults on the held-out seeds."""
    objective = Objective(base(a, workload), policy=POLICY, repeats=a.repeats)
    holdout = objective.evaluate({}, objective.holdout_seeds(a.holdout))
    return {"workload": workload, "holdout": holdout, "holdout_mean": statistics.fmean(holdout)}


def base(a: argparse.Namespace, workload: str) -> dict[str, Any]:
    return {"machine": a.machine, "workload": {"kind": workload}}


def interval(xs: list[float]) -> tuple[float, float, float]:
    """Mean and 99% Student-t interval."""
    m = statistics.fmean(xs)
    h = _numaplace.ci_half_width(xs, LEVEL)
    h = 0.0 if h is None else h
    return m, m - h, m + h


def cell(xs: list[float]) -> str:
    m, lo, hi = interval(xs)
    return f"{m:.4f} [{lo:.4f}, {hi:.4f}]"


def verdict(a: list[float], b: list[float]) -> str:
    """Which method's held-out mean is lower, if the 99% intervals do not overlap."""
    (_, la, ha), (_, lb, hb) = interval(a), interval(b)
    if ha < lb:
        return "tune lower beyond the intervals"
    if hb < la:
        return "Optuna lower beyond the intervals"
    return "within noise (the intervals overlap)"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=int, default=120)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--holdout", type=int, default=10)
    p.add_argument("--machine", default="gp1000")
    p.add_argument("--workloads", default="msort,psolu")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--numaplace")
    p.add_argument("--out", type=Path, default=Path("optuna-vs-tune"))
    p.add_argument(
        "--report",
        type=Path,
        metavar="RESULTS",
        help="print the table of a results.json, run nothing",
    )
    a = p.parse_args()
    if a.report:
        report(json.loads(a.report.read_text()))
        return
    if a.budget % a.repeats:
        sys.exit("--budget must be a multiple of --repeats (a study's trials are whole)")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    bin = binary(a.numaplace)
    workloads = a.workloads.split(",")
    a.out.mkdir(parents=True, exist_ok=True)
    jobs: list[Callable[[], dict[str, Any]]] = []
    for w in workloads:
        for seed in range(1, a.seeds + 1):
            out = a.out / w / f"tune-seed{seed}"
            jobs.append(functools.partial(tune_search, bin, a, w, seed, out))
            jobs.append(functools.partial(optuna_search, a, w, seed))
    started = time.perf_counter()
    # The simulator releases the GIL: studies go on threads, tuner searches in processes
    # of one thread each.
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        searches = list(pool.map(lambda job: job(), jobs))
        base_runs = list(pool.map(lambda w: defaults(a, w), workloads))
    wall = time.perf_counter() - started
    results = {
        "machine": a.machine,
        "policy": POLICY,
        "budget": a.budget,
        "repeats": a.repeats,
        "holdout": a.holdout,
        "optuna": optuna.__version__,
        "searches": searches,
        "defaults": base_runs,
        "seconds": wall,
    }
    (a.out / "results.json").write_text(json.dumps(results, indent=2) + "\n")

    report(results)
    print(f"wall time {wall:.0f} s; results in {a.out / 'results.json'}")


def report(results: dict[str, Any]) -> None:
    """The table of `results` (as `results.json` holds them), one line per workload and
    method, each workload's verdict, and each search's held-out mean."""
    searches = results["searches"]
    seeds = sorted({s["seed"] for s in searches})
    print(
        f"{results['policy']} on {results['machine']}: {results['budget']} simulator runs a "
        f"search, {results['repeats']} a candidate; {len(seeds)} method seeds; winners and "
        f"defaults on {results['holdout']} held-out seeds; makespan in s, mean [99% "
        f"interval] over the method seeds; Optuna {results['optuna']}\n"
    )
    print(
        "| workload | method | runs a search | winner's runs | best found (search mean) "
        "| winner held out | defaults held out | wall s a search |"
    )
    print("|---|---|---|---|---|---|---|---|")
    verdicts = []
    for d in results["defaults"]:
        w = d["workload"]
        held: dict[str, list[float]] = {}
        for method in ("tune", "optuna"):
            rows = [s for s in searches if s["workload"] == w and s["method"] == method]
            rows.sort(key=lambda r: int(r["seed"]))
            runs = sorted({r["runs"] for r in rows})
            trials = sorted({r["best_trials"] for r in rows})
            held[method] = [r["holdout_mean"] for r in rows]
            print(
                f"| {w} | {'numaplace tune' if method == 'tune' else 'Optuna TPE'} "
                f"| {'/'.join(map(str, runs))} | {'/'.join(map(str, trials))} "
                f"| {cell([r['best_score'] for r in rows])} | {cell(held[method])} "
                f"| {d['holdout_mean']:.4f} "
                f"| {statistics.fmean(r['seconds'] for r in rows):.0f} |"
            )
        by_seed = "; ".join(
            f"{m} " + " / ".join(f"{x:.4f}" for x in held[m]) for m in ("tune", "optuna")
        )
        verdicts.append(
            f"{w}: {verdict(held['tune'], held['optuna'])}; held out by seed: {by_seed}"
        )
    print()
    for v in verdicts:
        print(v)


if __name__ == "__main__":
    main()
