"""``python -m numaplace sweep SPEC --engine ray``: a sweep from the command line, as
``numaplace sweep --engine ray`` runs it (the binary hands such a sweep to this module).

Prints the summary table on standard output and what was run on standard error; exits
2 on bad input, 1 when runs failed.
"""

from __future__ import annotations

import argparse
import sys

from . import ConfigError, sweep


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m numaplace")
    commands = parser.add_subparsers(dest="command", required=True)
    s = commands.add_parser("sweep", help="run an experiment spec's sweep")
    s.add_argument("spec")
    s.add_argument("--out")
    s.add_argument("--engine", choices=["local", "ray"], default="local")
    s.add_argument("--address", help="the Ray cluster's address (default: as ray.init finds it)")
    s.add_argument("--jobs", type=int, default=0)
    s.add_argument("--resume", action="store_true")
    s.add_argument("--quick", action="store_true")
    s.add_argument("--force", action="store_true")
    a = parser.parse_args(argv)
    try:
        done = sweep(
            a.spec,
            out=a.out,
            engine=a.engine,
            quick=a.quick,
            resume=a.resume,
            jobs=a.jobs,
            force=a.force,
            address=a.address,
        )
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(done.table)
    print(
        f"{done.path}: {done.records.height} runs ({done.executed} run now, "
        f"{done.skipped} already stored, {len(done.failures)} failed)",
        file=sys.stderr,
    )
    for run_id, message in done.failures:
        print(f"  {run_id}: {message}", file=sys.stderr)
    return 1 if done.failures else 0


if __name__ == "__main__":
    sys.exit(main())
