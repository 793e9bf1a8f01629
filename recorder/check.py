#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Validate a numaplace raw event stream (recorder/RAW.md) and print totals.

Usage: check.py [--json] FILE   (FILE - reads standard input)

Checks: the header; every record's kind, flags and zero field; END is the
last record and counts the records before it; every thread except 0 starts
with START, every thread ends with EXIT and writes nothing after it;
ACQUIRE numbers per key are 0, 1, 2... in stream order, RELEASE numbers
1, 2, 3..., a key is released by the thread that acquired it before it is
acquired again; regions are numbered 0, 1, 2... by FORK, each is entered
and left by as many threads as its FORK's team size, with distinct team
indices; BARRIER arrival numbers per key 0, 1, 2...; RUN counts are
at least 1 and spans at most the page size.  Exit status 0 when valid,
1 when not (the problems are printed), 2 on usage errors.
"""

from __future__ import annotations

import json
import struct
import sys
from dataclasses import dataclass, field
from typing import BinaryIO, Iterator

HEADER = struct.Struct("<8sQQQ")
RECORD = struct.Struct("<BBHIQQQ")

KINDS = {
    0: "END",
    1: "RUN",
    2: "CREATE",
    3: "START",
    4: "EXIT",
    5: "JOIN",
    6: "ACQUIRE",
    7: "RELEASE",
    8: "BARRIER",
    9: "FORK",
    10: "ENTER",
    11: "LEAVE",
    12: "NOTE",
}


@dataclass
class Thread:
    records: int = 0
    runs: int = 0
    reads: int = 0
    writes: int = 0
    instructions: int = 0
    markers: dict[str, int] = field(default_factory=dict)
    started: bool = False
    exited: bool = False


@dataclass
class Stream:
    page_size: int = 0
    records: int = 0
    threads: dict[int, Thread] = field(default_factory=dict)
    notes: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def error(self, msg: str) -> None:
        if len(self.errors) < 50:
            self.errors.append(msg)


def records(f: BinaryIO, s: Stream) -> Iterator[tuple[int, ...]]:
    """The records after the header, read in chunks of whole records."""
    chunk = RECORD.size * 65536
    rest = b""
    while True:
        data = f.read(chunk)
        if not data:
            break
        data = rest + data
        whole = len(data) - len(data) % RECORD.size
        yield from RECORD.iter_unpack(data[:whole])
        rest = data[whole:]
    if rest:
        s.error(f"{len(rest)} bytes after the last whole record")


def check(f: BinaryIO) -> Stream:
    s = Stream()
    head = f.read(HEADER.size)
    if len(head) < HEADER.size:
        s.error("shorter than the header")
        return s
    magic, page, r1, r2 = HEADER.unpack(head)
    if magic != b"NPRAW001":
        s.error(f"bad magic {magic!r}")
    if page < 64 or page > 1 << 30 or page & (page - 1):
        s.error(f"bad page size {page}")
    if r1 or r2:
        s.error("reserved header fields are not zero")
    s.page_size = page
    acq: dict[int, int] = {}
    rel: dict[int, int] = {}
    arr: dict[int, int] = {}
    holder: dict[int, int] = {}
    forks: dict[int, int] = {}  # region -> team size
    entered: dict[int, set[int]] = {}  # region -> team indices
    left: dict[int, int] = {}
    inside: dict[int, int] = {}  # thread -> region
    ended = False
    for idx, rec in enumerate(records(f, s)):
        kind, flags, zero, tnum, a, b, instr = rec
        where = f"record {idx}"
        if ended:
            s.error(f"{where}: after END")
            break
        if kind not in KINDS:
            s.error(f"{where}: unknown kind {kind}")
            continue
        if zero:
            s.error(f"{where}: zero field is {zero}")
        if kind == 0:
            ended = True
            if a != idx:
                s.error(f"END says {a} records, counted {idx}")
            s.records = idx
            continue
        name = KINDS[kind]
        if flags and kind != 1 or flags & ~1:
            s.error(f"{where}: flags {flags:#x} on {name}")
        t = s.threads.get(tnum)
        if t is None:
            t = s.threads[tnum] = Thread()
            if tnum != 0 and kind != 3:
                s.error(f"{where}: thread {tnum} starts with {name}, not START")
        if t.exited:
            s.error(f"{where}: thread {tnum} writes {name} after EXIT")
        t.records += 1
        t.instructions += instr
        if kind == 1:
            count = b & 0xFFFFFFFF
            span = b >> 32
            t.runs += 1
            if flags & 1:
                t.writes += count
            else:
                t.reads += count
            if count == 0:
                s.error(f"{where}: RUN with count 0")
            if span == 0 or span > page:
                s.error(f"{where}: RUN span {span} (page {page})")
            elif a // page != (a + span - 1) // page:
                s.error(f"{where}: RUN crosses its page")
            continue
        t.markers[name] = t.markers.get(name, 0) + 1
        if kind == 3:
            if t.started or t.records != 1:
                s.error(f"{where}: START of thread {tnum} is not its first record")
            t.started = True
        elif kind == 4:
            t.exited = True
        elif kind == 6:
            n = acq.get(a, 0)
            if b != n:
                s.error(f"{where}: ACQUIRE of {a:#x} numbered {b}, expected {n}")
            acq[a] = n + 1
            if a in holder:
                s.error(f"{where}: thread {tnum} acquires {a:#x} held by thread {holder[a]}")
            holder[a] = tnum
        elif kind == 7:
            n = rel.get(a, 0) + 1
            if b != n:
                s.error(f"{where}: RELEASE of {a:#x} numbered {b}, expected {n}")
            rel[a] = n
            if holder.get(a) != tnum:
                s.error(f"{where}: thread {tnum} releases {a:#x} held by {holder.get(a)}")
            holder.pop(a, None)
        elif kind == 8:
            n = arr.get(a, 0)
            if b & 0xFFFFFFFF != n & 0xFFFFFFFF:
                s.error(f"{where}: BARRIER of {a:#x} numbered {b & 0xFFFFFFFF}, expected {n}")
            arr[a] = n + 1
        elif kind == 9:
            if a != len(forks):
                s.error(f"{where}: FORK of region {a}, expected {len(forks)}")
            forks[a] = b
        elif kind == 10:
            team, index = b & 0xFFFFFFFF, b >> 32
            if a not in forks:
                s.error(f"{where}: ENTER of region {a} before its FORK")
            elif team != forks[a]:
                s.error(f"{where}: ENTER team size {team}, FORK said {forks[a]}")
            seen = entered.setdefault(a, set())
            if index >= team or index in seen:
                s.error(f"{where}: ENTER with team index {index} of {team}")
            seen.add(index)
            if tnum in inside:
                s.error(f"{where}: thread {tnum} enters region {a} inside {inside[tnum]}")
            inside[tnum] = a
        elif kind == 11:
            if inside.pop(tnum, None) != a:
                s.error(f"{where}: LEAVE of region {a} not entered")
            left[a] = left.get(a, 0) + 1
        elif kind == 12:
            s.notes.append(a)
    if not ended:
        s.error("no END record")
    for region, team in forks.items():
        if len(entered.get(region, ())) != team or left.get(region, 0) != team:
            s.error(f"region {region}: team of {team}, {len(entered.get(region, ()))} "
                    f"entered, {left.get(region, 0)} left")
    for tnum, t in sorted(s.threads.items()):
        if not t.exited:
            s.error(f"thread {tnum} has no EXIT")
    return s


def main(argv: list[str]) -> int:
    args = [a for a in argv[1:] if a != "--json"]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    if args[0] == "-":
        s = check(sys.stdin.buffer)
    else:
        with open(args[0], "rb") as f:
            s = check(f)
    if "--json" in argv:
        out = {
            "valid": not s.errors,
            "errors": s.errors,
            "page_size": s.page_size,
            "records": s.records,
            "notes": s.notes,
            "threads": {
                str(k): {
                    "runs": t.runs,
                    "reads": t.reads,
                    "writes": t.writes,
                    "instructions": t.instructions,
                    "markers": t.markers,
                }
                for k, t in sorted(s.threads.items())
            },
        }
        print(json.dumps(out, indent=1))
    else:
        print(f"{args[0]}: page size {s.page_size}, {s.records} records, "
              f"{len(s.threads)} threads, notes {s.notes}")
        tr = tw = ti = 0
        for tnum, t in sorted(s.threads.items()):
            marks = " ".join(f"{k}={v}" for k, v in sorted(t.markers.items()))
            print(f"  thread {tnum}: runs={t.runs} reads={t.reads} "
                  f"writes={t.writes} instr={t.instructions} {marks}")
            tr += t.reads
            tw += t.writes
            ti += t.instructions
        print(f"  total: reads={tr} writes={tw} references={tr + tw} instr={ti}")
        for e in s.errors:
            print(f"  ERROR: {e}")
        print("  valid" if not s.errors else "  INVALID")
    return 0 if not s.errors else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
