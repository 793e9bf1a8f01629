"""numaplace from Python.

A run is resolved, admitted and simulated by the same code as ``numaplace run``; its
record is the one ``numaplace run --json`` writes, and its lists (pages, series, threads,
programs) are polars frames made from Arrow arrays handed over without copying rows.

>>> import numaplace
>>> r = numaplace.run({"workload": {"kind": "jacobi"}}, **{"workload.n": 64})
>>> r.summary["makespan_ns"] > 0
True
"""

from __future__ import annotations

import dataclasses
import functools
import json as _json
import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import polars as pl

from . import _numaplace
from ._numaplace import ConfigError, LimitError, SimulationError

__all__ = [
    "ConfigError",
    "LimitError",
    "Param",
    "Result",
    "SimulationError",
    "Sweep",
    "estimate",
    "list",
    "machine",
    "run",
    "search_space",
    "sweep",
]

# What an error not about one field, or raised on this side, says of its place.
for _attr, _default in (("field", None), ("file", None), ("line", None), ("given", None)):
    setattr(ConfigError, _attr, _default)
ConfigError.reason = ""

Config = Mapping[str, Any] | str | os.PathLike[str] | None
"""A run's configuration: a mapping laid out as a configuration file is, TOML text, the
path of a TOML file, or None for the defaults of a bare ``numaplace run``."""

Progress = Callable[[int, int], object]
"""Called as ``progress(done, total)`` while a run goes: operations simulated so far and
the estimate of all of them (raised when the run outgrows it)."""

_builtin_list = list


class Result:
    """A run: its record's numbers as ``summary`` and its lists as polars frames.

    The frames are made on first use. Nested tables of a row become columns named
    ``outer_inner`` (``refs_local``, ``events_migrations``).
    """

    def __init__(self, native: _numaplace.Run) -> None:
        self._native = native

    @functools.cached_property
    def summary(self) -> dict[str, Any]:
        """The record without its lists: makespan, references, events, the resolved
        configuration (``config``) and every other top-level key."""
        summary: dict[str, Any] = _json.loads(self._native.summary())
        return summary

    @functools.cached_property
    def json(self) -> str:
        """The record as ``numaplace run --json FILE`` writes it, byte for byte."""
        return self._native.json()

    @functools.cached_property
    def pages(self) -> pl.DataFrame:
        """The per-page report (``report.per_page``): one row per page, with ``data``,
        the arrays on it."""
        return _frame(self._native.pages())

    @functools.cached_property
    def series(self) -> pl.DataFrame:
        """The series: one row per iteration end or interval."""
        return _frame(self._native.series())

    @functools.cached_property
    def threads(self) -> pl.DataFrame:
        """One row per thread."""
        return _frame(self._native.threads())

    @functools.cached_property
    def programs(self) -> pl.DataFrame:
        """One row per program."""
        return _frame(self._native.programs())

    def metric(self, name: str = "makespan") -> float:
        """The run scored as ``numaplace tune --objective NAME`` scores it, in seconds:
        ``makespan`` (the simulated completion time) or ``mean-completion`` (the mean of
        the threads' completion times). An unknown name is a ConfigError."""
        return self._native.metric(name)

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<numaplace.Result makespan_ns={s.get('makespan_ns')} "
            f"workload={_kind(s, 'workload')} policy={_kind(s, 'policy')}>"
        )


class Sweep:
    """A sweep: its records as one frame, and what this call ran."""

    def __init__(
        self,
        records: pl.DataFrame,
        path: Path,
        executed: int,
        skipped: int,
        failures: _builtin_list[tuple[str, str]],
        table: str,
    ) -> None:
        self.records = records
        """One row per run: ``id``, ``index``, ``seed``, each axis by its dotted field,
        ``error``, and each number of the run's record by its dotted path."""
        self.path = path
        """The JSON Lines store the records were appended to."""
        self.executed = executed
        """Runs this call made."""
        self.skipped = skipped
        """Runs already in the store (with ``resume=True``)."""
        self.failures = failures
        """``(id, message)`` of the runs that failed."""
        self.table = table
        """The summary table ``numaplace sweep`` prints (the spec's metric by its groups)."""

    def __repr__(self) -> str:
        return (
            f"<numaplace.Sweep {self.records.height} records in {self.path}: "
            f"{self.executed} run now, {self.skipped} stored, {len(self.failures)} failed>"
        )


def run(
    config: Config = None,
    *,
    machine: str | None = None,
    workload: str | None = None,
    policy: str | None = None,
    seed: int | None = None,
    set: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    force: bool = False,
    max_ops: int | None = None,
    **overrides: Any,
) -> Result:
    """Runs a simulation as ``numaplace run`` does and returns its record.

    ``config`` is a mapping, TOML text or a file's path. ``machine``, ``workload``,
    ``policy`` and ``seed`` are ``--machine``, ``--workload``, ``--policy`` and
    ``--seed``. Every other keyword is a ``--set`` override: ``**{"workload.n": 200}``,
    or the same with ``__`` for the dots, ``workload__n=200``; ``set`` takes them as a
    mapping too. Values are Python values (numbers, strings, booleans, lists, dicts).

    The run is held to the host's memory and to 2e10 operations (``max_ops``) unless
    ``force``. The GIL is released while it runs; ``progress(done, total)`` is called
    about every 65536 operations, and an exception it raises (or Ctrl-C) stops the run
    and is raised here.

    Raises ConfigError (bad input, with ``field``, ``file`` and ``line``), LimitError (a
    run over a limit) or SimulationError.
    """
    kind, text = _source(config)
    native = _numaplace.run(
        kind,
        text,
        machine,
        workload,
        policy,
        seed,
        _sets(set, overrides),
        progress,
        force,
        max_ops,
    )
    return Result(native)


def estimate(
    config: Config = None,
    *,
    machine: str | None = None,
    workload: str | None = None,
    policy: str | None = None,
    seed: int | None = None,
    set: Mapping[str, Any] | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """What ``numaplace run --estimate`` reports, without running: ``pages``,
    ``threads``, ``ops`` (and ``ops_field``, the field that drives them), ``bytes`` and
    its ``parts``, the host's limits (``max_bytes``, ``max_ops``) and whether the run
    ``fits`` them. Arguments as :func:`run`'s."""
    kind, text = _source(config)
    est: dict[str, Any] = _json.loads(
        _numaplace.estimate(kind, text, machine, workload, policy, seed, _sets(set, overrides))
    )
    return est


def list() -> pl.DataFrame:
    """Every machine, workload, policy and scheduler (``numaplace list``): columns
    ``family`` (``machine``, ``workload``, ``policy``, ``scheduler``), ``name``,
    ``description`` and ``presets`` (a component's named settings)."""
    return _frame(_numaplace.components())


def machine(name: str, **overrides: Any) -> dict[str, Any]:
    """Every parameter of the machine preset ``name`` (``numaplace machine show``), with
    ``--set``-style overrides of its fields (``**{"costs.remote_read_ns": 2000}`` or
    ``costs__remote_read_ns=2000``), checked as a run checks them."""
    params: dict[str, Any] = _json.loads(_numaplace.machine(name, _sets(None, overrides)))
    return params


@dataclasses.dataclass(frozen=True)
class Param:
    """One parameter of a policy's search space, as ``numaplace tune`` searches it: a
    numeric range and, beside it, special values the range does not hold (an infinite
    duration, a count meaning "never")."""

    name: str
    """The policy's field (``policy.NAME`` in a configuration)."""
    kind: Literal["int", "float"]
    """Whether values are integers or reals."""
    low: int | float
    """The smallest value of the numeric range."""
    high: int | float
    """The largest value of the numeric range."""
    log: bool
    """Whether the range is searched on a logarithmic scale."""
    specials: tuple[int | float, ...]
    """Values beyond the range the parameter may take (``math.inf`` for ``inf``)."""
    default: int | float | None
    """The value the configuration gives it (the policy's defaults under its preset and
    overrides): the tuner's first candidate. None if it is not a number."""
    source: str
    """Where the range comes from."""


def search_space(
    policy: str | None = None,
    config: Config = None,
    *,
    machine: str | None = None,
    workload: str | None = None,
    ranges: Mapping[str, tuple[float, float]] | None = None,
    set: Mapping[str, Any] | None = None,
    **overrides: Any,
) -> _builtin_list[Param]:
    """The space ``numaplace tune`` searches for ``policy`` (default: the configuration's
    policy), its parameters in the tuner's order. The policy declares it; this is the
    same declaration, read through the same code.

    ``config`` and the overrides are :func:`run`'s: they give each parameter its
    ``default`` (``policy.preset``, ``policy.FIELD``). A policy parameter given as an
    override (``policy__scan_delay_ns=math.inf``) is fixed, as ``tune --set`` fixes it,
    and leaves the space; ``ranges`` narrows numeric ranges as ``tune --range`` does
    (``{"freeze_window_ns": (1e7, 1e9)}``; special values stay).

    Raises ConfigError for an unknown policy, a policy that declares no search space, a
    bad range or a bad configuration.
    """
    kind, text = _source(config)
    spans = [f"{name}={low!r}..{high!r}" for name, (low, high) in (ranges or {}).items()]
    space: dict[str, Any] = _json.loads(
        _numaplace.search_space(kind, text, machine, workload, policy, _sets(set, overrides), spans)
    )
    return [_param(p) for p in space["params"]]


def _number(v: Any) -> int | float:
    """A value of the space as the native side writes it: a number, or ``"inf"``."""
    if v == "inf":
        return math.inf
    if isinstance(v, int | float) and not isinstance(v, bool):
        return v
    raise TypeError(f"not a value of a search space: {v!r}")


def _param(p: Mapping[str, Any]) -> Param:
    integer = bool(p["integer"])
    low, high = p["lo"], p["hi"]
    return Param(
        name=p["field"],
        kind="int" if integer else "float",
        low=int(low) if integer else float(low),
        high=int(high) if integer else float(high),
        log=p["scale"] == "log",
        specials=tuple(_number(v) for v in p["specials"]),
        default=None if p["default"] is None else _number(p["default"]),
        source=p["source"],
    )


def sweep(
    spec: str | os.PathLike[str],
    *,
    out: str | os.PathLike[str] | None = None,
    engine: Literal["local", "ray"] = "local",
    quick: bool = False,
    resume: bool = False,
    jobs: int = 0,
    force: bool = False,
    address: str | None = None,
) -> Sweep:
    """Runs an experiment spec's sweep as ``numaplace sweep`` does: its records appended
    to the JSON Lines store ``out`` (default: the spec's name with ``.jsonl`` in the
    current directory) as they are made, ``resume`` running only what the store lacks,
    ``quick`` the spec's reduced settings.

    ``engine="local"`` runs the points on this host, ``jobs`` at once (0: one per core),
    with the GIL released. ``engine="ray"`` makes each point a Ray task (connecting to
    the cluster at ``address``, or as ``ray.init()`` does when Ray is not initialised
    yet: ``RAY_ADDRESS``, else a local cluster); the records are those a local sweep
    makes, streamed into the same store as the tasks finish.

    Raises ConfigError for a bad spec or a store that would be overwritten.
    """
    origin = os.fspath(spec)
    try:
        text = Path(spec).read_text()
    except OSError as e:
        raise ConfigError(f"cannot read spec {origin}: {e}") from e
    submit = None
    if engine == "ray":
        from . import _ray

        submit = _ray.submitter(text, origin, quick, force, address)
    elif engine != "local":
        raise ValueError(f"engine {engine!r}: 'local' or 'ray'")
    batch, path, executed, skipped, failures, table = _numaplace.sweep(
        text,
        origin,
        None if out is None else os.fspath(out),
        quick,
        resume,
        jobs,
        force,
        submit,
    )
    return Sweep(_frame(batch), Path(path), executed, skipped, failures, table)


def _frame(batch: Any) -> pl.DataFrame:
    frame = pl.from_arrow(batch)
    assert isinstance(frame, pl.DataFrame)
    return frame


def _kind(summary: Mapping[str, Any], key: str) -> object:
    section = summary.get("config", {}).get(key)
    return section.get("kind") if isinstance(section, Mapping) else None


def _source(config: Config) -> tuple[str, str | None]:
    """How the native side reads ``config``: its kind and its text."""
    if config is None:
        return "none", None
    if isinstance(config, Mapping):
        try:
            return "json", _json.dumps(config, allow_nan=False)
        except (TypeError, ValueError) as e:
            err = ConfigError(f"<dict>: not a configuration: {e}")
            err.reason = f"not a configuration: {e}"
            raise err from e
    if isinstance(config, os.PathLike):
        return "path", os.fspath(config)
    if isinstance(config, str):
        # TOML text sets something (`key = value`) or spans lines; anything else names a
        # file, which the native side reads (a missing one is a ConfigError naming it).
        if Path(config).is_file() or ("\n" not in config and "=" not in config):
            return "path", config
        return "toml", config
    raise TypeError(f"config must be a mapping, TOML text or a path, not {type(config).__name__}")


def _sets(set: Mapping[str, Any] | None, overrides: Mapping[str, Any]) -> _builtin_list[str]:
    """``--set PATH=VALUE`` options from keywords (``__`` for the dots) and a mapping."""
    out = []
    for mapping in (set or {}), overrides:
        for key, value in mapping.items():
            path = key.replace("__", ".")
            out.append(f"{path}={_toml(value)}")
    return out


def _toml(value: Any) -> str:
    """A Python value as the TOML value ``--set`` reads."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if math.isnan(value):
            return "nan"
        return repr(value)
    if isinstance(value, str):
        return _json.dumps(value)
    if isinstance(value, os.PathLike):
        return _json.dumps(os.fspath(value))
    if isinstance(value, Mapping):
        inner = ", ".join(f"{_json.dumps(str(k))} = {_toml(v)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"cannot pass {type(value).__name__} {value!r} as a configuration value")
