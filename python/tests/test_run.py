"""numaplace.run: the CLI's configuration, run and record, from Python."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
from conftest import cli_json

import numaplace

SMALL = {"workload": {"kind": "gauss", "n": 48}, "policy": {"kind": "platinum"}}


def test_the_done_when_line_prints_the_makespan_of_run_json(cli: Path) -> None:
    line = (
        "import numaplace; print(numaplace.run({'workload': {'kind': 'jacobi'}})"
        ".summary['makespan_ns'])"
    )
    printed = subprocess.run(
        [sys.executable, "-c", line], capture_output=True, text=True, check=True
    ).stdout
    record = json.loads(cli_json(cli, "--workload", "jacobi"))
    assert printed.strip() == str(record["makespan_ns"])


def test_json_is_byte_identical_to_run_json_for_a_file_with_sets_and_seed(
    cli: Path, tmp_path: Path
) -> None:
    cfg = tmp_path / "run.toml"
    cfg.write_text('[workload]\nkind = "gauss"\nn = 48\n\n[policy]\nkind = "platinum"\n')
    expected = cli_json(cli, "--config", cfg, "--set", "workload.n=40", "--seed", "7")
    sets: dict[str, Any] = {"workload.n": 40}
    got = numaplace.run(cfg, seed=7, **sets).json
    assert got == expected


def test_a_dict_toml_text_and_a_path_give_the_same_record(tmp_path: Path) -> None:
    text = '[workload]\nkind = "gauss"\nn = 48\n\n[policy]\nkind = "platinum"\n'
    path = tmp_path / "run.toml"
    path.write_text(text)
    records = {
        numaplace.run(SMALL).json,
        numaplace.run(text).json,
        numaplace.run(path).json,
        numaplace.run(str(path)).json,
    }
    assert len(records) == 1


def test_dotted_and_double_underscore_overrides_are_the_same_set() -> None:
    dotted: dict[str, Any] = {"workload.n": 40, "machine.nodes": 8}
    a = numaplace.run(SMALL, **dotted).json
    b = numaplace.run(SMALL, workload__n=40, machine__nodes=8).json
    c = numaplace.run(SMALL, set={"workload.n": 40, "machine.nodes": 8}).json
    assert a == b == c
    assert json.loads(a)["config"]["workload"]["n"] == 40


def test_a_string_override_is_passed_as_a_toml_string() -> None:
    placement: dict[str, Any] = {"policy.placement": "round-robin"}
    r = numaplace.run({"workload": {"kind": "jacobi", "n": 64}}, policy="static", **placement)
    assert r.summary["config"]["policy"]["placement"] == "round-robin"


def test_summary_is_the_record_without_its_lists() -> None:
    r = numaplace.run(SMALL)
    record = json.loads(r.json)
    for key in ("pages", "series", "threads", "programs"):
        assert key not in r.summary
        del record[key]
    assert r.summary == record


def test_pages_has_a_row_per_page_with_the_record_s_fields() -> None:
    r = numaplace.run(SMALL)
    record = json.loads(r.json)
    pages = r.pages
    assert pages.height == len(record["pages"])
    first = record["pages"][0]
    row = pages.row(0, named=True)
    assert row["vpn"] == first["vpn"]
    assert row["refs_remote"] == first["refs"]["remote"]
    assert row["migrations"] == first["migrations"]
    assert row["frozen_at_end"] == first["frozen_at_end"]
    assert row["data"] == first["data"]
    assert r.pages["data"].cast(pl.String).to_list() == [p["data"] for p in record["pages"]]
    assert pages["refs_total"].sum() == record["refs"]["total"]


def flat_keys(entry: dict[str, Any], prefix: str = "") -> list[str]:
    """An entry's keys, nested tables flattened with `_`, as the frames name columns."""
    keys = []
    for k, v in entry.items():
        if isinstance(v, dict):
            keys += flat_keys(v, f"{prefix}{k}_")
        else:
            keys.append(f"{prefix}{k}")
    return keys


def test_every_frame_has_a_column_per_field_of_the_record_s_entries() -> None:
    r = numaplace.run({**SMALL, "report": {"series_by_array": True}})
    record = json.loads(r.json)
    for name, frame in [
        ("pages", r.pages),
        ("series", r.series),
        ("threads", r.threads),
        ("programs", r.programs),
    ]:
        assert sorted(frame.columns) == sorted(flat_keys(record[name][0])), name


def test_series_threads_and_programs_match_the_record() -> None:
    r = numaplace.run(SMALL)
    record = json.loads(r.json)
    assert r.series.height == len(record["series"])
    assert r.series["events_migrations"].to_list() == [
        p["events"]["migrations"] for p in record["series"]
    ]
    assert r.threads["completion_ns"].to_list() == [t["completion_ns"] for t in record["threads"]]
    assert r.programs["name"].to_list() == [p["name"] for p in record["programs"]]


def test_frames_are_polars_and_convert_to_pandas() -> None:
    r = numaplace.run(SMALL)
    assert isinstance(r.pages, pl.DataFrame)
    pages = r.pages.to_pandas()
    assert isinstance(pages, pd.DataFrame)
    assert len(pages) == r.pages.height
    assert list(pages.columns) == r.pages.columns


def test_a_run_without_the_per_page_report_has_no_page_rows() -> None:
    r = numaplace.run(SMALL, report__per_page=False)
    assert r.pages.height == 0
    assert "vpn" in r.pages.columns
