"""Sweeps on Ray: each point of a sweep a Ray task, its record sent back as it is made.

The task calls the same native code a local sweep's threads run (``sweep_point``), so
a record made on any node is the one a local sweep makes; the driver stores each in the
JSON Lines store as it arrives (``numaplace.sweep(spec, engine="ray")``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from . import _numaplace


def point(text: str, origin: str, quick: bool, index: int, force: bool) -> str:
    """The record of the point ``index`` of the spec, as JSON text (a Ray task's body)."""
    return _numaplace.sweep_point(text, origin, quick, index, force)


def submitter(
    text: str, origin: str, quick: bool, force: bool, address: str | None
) -> Callable[[list[int]], Iterator[str]]:
    """What the native sweep hands its points to: a function that makes each index a
    Ray task and yields the records as the tasks finish, with at most twice the
    cluster's CPUs in flight."""
    try:
        import ray
    except ImportError as e:
        raise ImportError(
            "engine='ray' needs Ray: pip install 'ray[default]' (or numaplace[ray])"
        ) from e
    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False)
    task: Any = ray.remote(num_cpus=1, max_retries=2)(point)

    def submit(indices: list[int]) -> Iterator[str]:
        spec = ray.put(text)
        window = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))  # type: ignore[no-untyped-call]
        todo = iter(indices)
        pending: list[Any] = []
        while True:
            for index in todo:
                pending.append(task.remote(spec, origin, quick, index, force))
                if len(pending) >= window:
                    break
            if not pending:
                return
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                record: str = ray.get(ref)
                yield record

    return submit
