"""How long a frame of 10^6 page rows takes to reach Python (docs/src/python.md).

    python python/benches/pages.py [REPEATS]

Runs GUPS over a 4,096,000,000-byte working set on the `tiered` machine (4 KB pages: 10^6
pages, each a row of the per-page report), then times, each the best of REPEATS (default
5): the record batch made on the Rust side and handed to pyarrow, the polars frame made
from it, and both together as `Result.pages` gives them on first use; and, for scale,
`to_pandas()` of the frame.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import polars as pl

import numaplace

CONFIG = {
    "machine": "tiered",
    "workload": {"kind": "gups", "working_set_bytes": 4_096_000_000, "updates": 100_000},
}


def best(repeats: int, f: Callable[[], object]) -> float:
    """The shortest of `repeats` timings of `f()`, in seconds."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    t = time.perf_counter()
    r = numaplace.run(CONFIG)
    print(f"run: {time.perf_counter() - t:.2f} s")
    native = r._native
    batch = native.pages()
    assert batch.num_rows == 1_000_000, batch.num_rows
    frame = pl.from_arrow(batch)
    assert isinstance(frame, pl.DataFrame)
    print(f"{frame.height} rows, {frame.width} columns, {frame.estimated_size('mb'):.0f} MB")
    made = best(repeats, native.pages)
    print(f"record batch made and handed to pyarrow: {made:.3f} s")
    framed = best(repeats, lambda: pl.from_arrow(batch))
    print(f"polars frame from it:                    {framed:.3f} s")
    both = best(repeats, lambda: pl.from_arrow(native.pages()))
    print(f"both (Result.pages on first use):        {both:.3f} s")
    pandas = best(repeats, frame.to_pandas)
    print(f"to_pandas() of the frame:                {pandas:.3f} s")


if __name__ == "__main__":
    main()
