"""The native part of numaplace (PyO3): see numaplace/__init__.py for the public API."""

from collections.abc import Callable, Iterable
from typing import Any

import pyarrow

class ConfigError(ValueError):
    field: str | None
    file: str | None
    line: int | None
    given: str | None
    reason: str

class LimitError(ConfigError): ...
class SimulationError(RuntimeError): ...

class Run:
    def json(self) -> str: ...
    def metric(self, name: str) -> float: ...
    def summary(self) -> str: ...
    def pages(self) -> pyarrow.RecordBatch: ...
    def series(self) -> pyarrow.RecordBatch: ...
    def threads(self) -> pyarrow.RecordBatch: ...
    def programs(self) -> pyarrow.RecordBatch: ...

def run(
    kind: str,
    text: str | None,
    machine: str | None,
    workload: str | None,
    policy: str | None,
    seed: int | None,
    sets: list[str],
    progress: Callable[[int, int], Any] | None,
    force: bool,
    max_ops: int | None,
) -> Run: ...
def estimate(
    kind: str,
    text: str | None,
    machine: str | None,
    workload: str | None,
    policy: str | None,
    seed: int | None,
    sets: list[str],
) -> str: ...
def components() -> pyarrow.RecordBatch: ...
def machine(name: str, sets: list[str]) -> str: ...
def sweep(
    text: str,
    origin: str,
    out: str | None,
    quick: bool,
    resume: bool,
    jobs: int,
    force: bool,
    submit: Callable[[list[int]], Iterable[str]] | None,
) -> tuple[pyarrow.RecordBatch, str, int, int, list[tuple[str, str]], str]: ...
def sweep_point(text: str, origin: str, quick: bool, index: int, force: bool) -> str: ...
def search_space(
    kind: str,
    text: str | None,
    machine: str | None,
    workload: str | None,
    policy: str | None,
    sets: list[str],
    ranges: list[str],
) -> str: ...
def ci_half_width(xs: list[float], level: float) -> float | None: ...

METRICS: list[str]
HOLDOUT: int
