"""What several tests share: the CLI binary the records are held to, and small runs."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `numaplace` binary: $NUMAPLACE_BIN, else the workspace's build of it."""
    given = os.environ.get("NUMAPLACE_BIN")
    candidates = [Path(given)] if given else []
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    candidates += [target / "debug" / "numaplace", target / "release" / "numaplace"]
    found = shutil.which("numaplace")
    if found:
        candidates.append(Path(found))
    for c in candidates:
        if c.is_file():
            return c
    pytest.fail("no numaplace binary: build it (cargo build -p numaplace) or set NUMAPLACE_BIN")


def cli_json(cli: Path, *args: str | os.PathLike[str]) -> str:
    """Standard output of `numaplace run ARGS --json -`."""
    done = subprocess.run(
        [cli, "run", *args, "--json", "-"], capture_output=True, text=True, check=True
    )
    return done.stdout
