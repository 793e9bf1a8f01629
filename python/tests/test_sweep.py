"""numaplace.sweep: an experiment spec's sweep into the JSON Lines store, as a frame."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import numaplace

SPEC = """
name = "tiny"
trials = 1
seed_base = 1

[base.workload]
kind = "jacobi"
n = 64
iterations = 2

[base.report]
per_page = false

[[axis]]
field = "machine.nodes"
values = [1, 4]

[[axis]]
field = "policy.kind"
values = ["static", "platinum"]

[output]
metric = "makespan_ns"
"""


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    p = tmp_path / "tiny.toml"
    p.write_text(SPEC)
    return p


def test_a_sweep_writes_its_store_and_returns_a_row_per_run(spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "tiny.jsonl"
    s = numaplace.sweep(spec, out=out, jobs=1)
    assert (s.executed, s.skipped, s.failures) == (4, 0, [])
    assert s.records.height == 4
    stored = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["id"] for r in stored) == sorted(s.records["id"].to_list())
    by_id = {r["id"]: r["result"]["makespan_ns"] for r in stored}
    assert dict(zip(s.records["id"], s.records["makespan_ns"], strict=True)) == by_id
    assert set(s.records["machine.nodes"]) == {1, 4}


def test_a_resumed_sweep_runs_nothing_stored(spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "tiny.jsonl"
    first = numaplace.sweep(spec, out=out, jobs=1)
    again = numaplace.sweep(spec, out=out, jobs=1, resume=True)
    assert (again.executed, again.skipped) == (0, 4)
    assert again.records.sort("id").equals(first.records.sort("id"))


def test_a_sweep_over_an_existing_store_without_resume_is_refused(
    spec: Path, tmp_path: Path
) -> None:
    out = tmp_path / "tiny.jsonl"
    numaplace.sweep(spec, out=out, jobs=1)
    with pytest.raises(numaplace.ConfigError, match="resume"):
        numaplace.sweep(spec, out=out, jobs=1)


def test_the_records_are_those_of_numaplace_sweep(spec: Path, tmp_path: Path, cli: Path) -> None:
    import subprocess

    py_out, cli_out = tmp_path / "py.jsonl", tmp_path / "cli.jsonl"
    numaplace.sweep(spec, out=py_out, jobs=2)
    subprocess.run(
        [cli, "sweep", spec, "--out", cli_out, "--jobs", "2"], check=True, capture_output=True
    )

    def records(p: Path) -> list[dict[str, object]]:
        return sorted((json.loads(x) for x in p.read_text().splitlines()), key=lambda r: r["id"])

    assert records(py_out) == records(cli_out)


SLOW = """
name = "slow"
trials = 8
seed_base = 1

[base.workload]
kind = "gups"
updates = 5_000_000
working_set_bytes = 16_000_000

[base.report]
per_page = false

[output]
metric = "makespan_ns"
"""


def test_ctrl_c_stops_a_sweep_keeping_what_finished_for_resume(tmp_path: Path) -> None:
    import _thread
    import threading

    spec, out = tmp_path / "slow.toml", tmp_path / "slow.jsonl"
    spec.write_text(SLOW)
    threading.Timer(0.3, _thread.interrupt_main).start()
    with pytest.raises(KeyboardInterrupt):
        numaplace.sweep(spec, out=out, jobs=1)
    kept = len(out.read_text().splitlines())
    assert 0 < kept < 8
    rest = numaplace.sweep(spec, out=out, jobs=1, resume=True)
    assert (rest.executed, rest.skipped) == (8 - kept, kept)
