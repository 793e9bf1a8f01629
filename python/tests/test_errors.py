"""Bad input raises numaplace.ConfigError, naming the field, the file and the line."""

from __future__ import annotations

from pathlib import Path

import pytest

import numaplace


def test_a_bad_field_in_a_file_names_the_field_the_file_and_the_line(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text('[workload]\nkind = "jacobi"\nn = 0\n')
    with pytest.raises(numaplace.ConfigError) as e:
        numaplace.run(cfg)
    assert e.value.field == "workload.n"
    assert e.value.file == str(cfg)
    assert e.value.line == 3
    assert e.value.given == "file"
    assert str(e.value).startswith(f"{cfg}:3: workload.n: ")


def test_a_bad_field_in_toml_text_names_its_line() -> None:
    with pytest.raises(numaplace.ConfigError) as e:
        numaplace.run('[workload]\nkind = "jacobi"\n\nn = 0\n')
    assert (e.value.field, e.value.file, e.value.line) == ("workload.n", "<string>", 4)


def test_a_bad_override_names_the_field_and_the_set_option() -> None:
    with pytest.raises(numaplace.ConfigError) as e:
        numaplace.run(workload__n=0)
    assert e.value.field == "workload.n"
    assert e.value.given == "set"
    assert e.value.line is None
    assert str(e.value).startswith("--set workload.n: ")


def test_an_unknown_field_in_a_dict_names_its_path() -> None:
    with pytest.raises(numaplace.ConfigError) as e:
        numaplace.run({"workload": {"kind": "jacobi", "size": 3}})
    assert e.value.field == "workload.size"
    assert "unknown field" in e.value.reason


def test_an_unknown_machine_is_a_config_error_listing_the_known_ones() -> None:
    with pytest.raises(numaplace.ConfigError, match=r"known machines: .*butterfly-plus"):
        numaplace.run(machine="cray-1")


def test_an_unreadable_file_is_a_config_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(numaplace.ConfigError, match=r"missing\.toml: cannot read"):
        numaplace.run(tmp_path / "missing.toml")


def test_a_string_naming_a_missing_file_is_read_as_a_path_not_as_toml(tmp_path: Path) -> None:
    with pytest.raises(numaplace.ConfigError, match=r"missing\.toml: cannot read"):
        numaplace.run(str(tmp_path / "missing.toml"))


def test_a_run_over_the_operation_limit_is_a_limit_error_naming_the_driving_field() -> None:
    with pytest.raises(numaplace.LimitError) as e:
        numaplace.run(max_ops=10)
    assert isinstance(e.value, numaplace.ConfigError)
    assert e.value.field is not None
    assert "--max-ops or --force" in str(e.value)


def test_a_value_python_cannot_pass_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        numaplace.run(workload__n=object())
