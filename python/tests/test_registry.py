"""list, machine and estimate: the registry and the estimate from Python."""

from __future__ import annotations

import polars as pl
import pytest

import numaplace


def test_list_has_every_family_with_the_defaults_in_it() -> None:
    listed = numaplace.list()
    assert set(listed["family"]) == {"machine", "workload", "policy", "scheduler"}
    names = set(zip(listed["family"], listed["name"], strict=True))
    for pair in [("machine", "butterfly-plus"), ("workload", "jacobi"), ("policy", "static")]:
        assert pair in names
    assert listed.filter(pl.col("description") == "").height == 0


def test_list_names_a_component_s_presets() -> None:
    listed = numaplace.list()
    larowe = listed.filter((pl.col("family") == "policy") & (pl.col("name") == "larowe"))
    assert "gauss" in larowe["presets"][0].to_list()


def test_machine_gives_the_preset_s_parameters_with_overrides() -> None:
    m = numaplace.machine("butterfly-plus")
    assert m["nodes"] > 1
    assert numaplace.machine("butterfly-plus", nodes=4)["nodes"] == 4


def test_a_bad_machine_override_is_a_config_error() -> None:
    with pytest.raises(numaplace.ConfigError, match="nodes"):
        numaplace.machine("butterfly-plus", nodes=-1)


def test_estimate_gives_pages_operations_and_bytes_without_running() -> None:
    est = numaplace.estimate({"workload": {"kind": "jacobi", "n": 64}})
    big = numaplace.estimate({"workload": {"kind": "jacobi", "n": 64}}, workload__n=256)
    assert est["pages"] > 0 and est["ops"] > 0 and est["bytes"] > 0
    assert est["fits"] is True
    assert big["ops"] > est["ops"]
    assert sum(p["bytes"] for p in est["parts"]) <= est["bytes"]
