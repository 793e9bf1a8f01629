"""Sweeps on Ray: a local cluster of two worker nodes makes the records a local sweep
makes, streamed into the same resumable store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray
from ray.cluster_utils import Cluster

import numaplace

SPEC = """
name = "tiny-ray"
trials = 2
seed_base = 3

[base.workload]
kind = "gauss"
n = 48

[base.report]
per_page = false

[[axis]]
field = "machine.nodes"
values = [2, 8]

[[axis]]
field = "policy.kind"
values = ["static", "platinum"]

[output]
metric = "makespan_ns"
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """Two nodes of one CPU each, the driver connected to them."""
    c = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "object_store_memory": 80 * 1024 * 1024},
    )
    c.add_node(num_cpus=1, object_store_memory=80 * 1024 * 1024)
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False)
    yield c
    ray.shutdown()
    c.shutdown()  # type: ignore[no-untyped-call]


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    p = tmp_path / "tiny-ray.toml"
    p.write_text(SPEC)
    return p


def stored(path: Path) -> list[dict[str, Any]]:
    """The store's records, by id."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return sorted(records, key=lambda r: str(r["id"]))


def test_the_cluster_has_two_worker_nodes(cluster: Cluster) -> None:
    alive = [n for n in ray.nodes() if n["Alive"]]  # type: ignore[no-untyped-call]
    assert len(alive) == 2
    assert ray.cluster_resources()["CPU"] == 2  # type: ignore[no-untyped-call]


def test_a_ray_sweep_stores_the_records_of_a_local_sweep(
    cluster: Cluster, spec: Path, tmp_path: Path
) -> None:
    local, on_ray = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    numaplace.sweep(spec, out=local, jobs=1)
    s = numaplace.sweep(spec, out=on_ray, engine="ray")
    assert (s.executed, s.skipped, s.failures) == (8, 0, [])
    assert stored(on_ray) == stored(local)
    assert s.records.sort("id").equals(numaplace.sweep(spec, out=local, resume=True).records)


def test_a_ray_sweep_resumes_a_cut_store_running_only_what_it_lacks(
    cluster: Cluster, spec: Path, tmp_path: Path
) -> None:
    whole, cut = tmp_path / "whole.jsonl", tmp_path / "cut.jsonl"
    numaplace.sweep(spec, out=whole, jobs=1)
    cut.write_text("".join(whole.read_text().splitlines(keepends=True)[:3]))
    s = numaplace.sweep(spec, out=cut, engine="ray", resume=True)
    assert (s.executed, s.skipped) == (5, 3)
    assert stored(cut) == stored(whole)


def test_numaplace_sweep_engine_ray_runs_on_the_cluster(
    cluster: Cluster, spec: Path, tmp_path: Path, cli: Path
) -> None:
    local, on_ray = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    numaplace.sweep(spec, out=local, jobs=1)
    env = {**os.environ, "NUMAPLACE_PYTHON": sys.executable}
    done = subprocess.run(
        [cli, "sweep", spec, "--engine", "ray", "--address", cluster.address, "--out", on_ray],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "8 run now" in done.stderr
    assert stored(on_ray) == stored(local)
