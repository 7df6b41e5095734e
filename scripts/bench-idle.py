#!/usr/bin/env python3
"""What the local stack costs when nobody uses it (issue 37's quiet idle stack: under 10 % of one core
for services, broker and Postgres together). Run by `scripts/bench idle` once `scripts/run` is ready:
waits `--settle` seconds (start-up work, first metadata and group joins), then reads every process's
CPU time from /proc twice, `--seconds` apart, and prints each one's share of one core.

The processes: each service's pid file in .local/run (colony-<service>.pid), the broker's
(.local/tansu.pid), the postmaster (its data folder's postmaster.pid) and everything under it (the
connections' backends, the background workers), and the gateway (nginx.pid with its workers)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCAL = ROOT / ".local"
TICKS = os.sysconf("SC_CLK_TCK")


def first_line(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def with_descendants(pid: int, tree: dict[int, list[int]]) -> list[int]:
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(tree.get(current, []))
    return found


def groups() -> dict[str, list[int]]:
    """Each part of the stack and its processes (a process tree for Postgres and nginx)."""
    tree = children()
    parts: dict[str, list[int]] = {}
    for pid_file in sorted((LOCAL / "run").glob("colony-*.pid")):
        if (pid := first_line(pid_file)) is not None:
            parts[pid_file.stem] = [pid]
    if (pid := first_line(LOCAL / "tansu.pid")) is not None:
        parts["broker (tansu)"] = [pid]
    if (pid := first_line(LOCAL / "pg" / "data" / "postmaster.pid")) is not None:
        parts["postgres"] = with_descendants(pid, tree)
    if (pid := first_line(LOCAL / "run" / "nginx.pid")) is not None:
        parts["gateway (nginx)"] = with_descendants(pid, tree)
    return parts


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # a backend that ended between the reads
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settle", type=float, default=30)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--target", type=float, default=10.0, help="percent of one core for the whole stack")
    arguments = parser.parse_args()

    time.sleep(arguments.settle)
    parts = groups()
    if not any(name.startswith("colony-") for name in parts):
        print("bench idle: no service is running (is scripts/run up?)", file=sys.stderr)
        return 2
    before = {name: cpu_seconds(pids) for name, pids in parts.items()}
    started = time.monotonic()
    time.sleep(arguments.seconds)
    elapsed = time.monotonic() - started
    # Postgres may have started backends meanwhile: read its tree again (an ended one is gone from
    # both reads; its time is lost, which only lowers the figure by what it spent).
    parts.update({name: pids for name, pids in groups().items() if name in ("postgres", "gateway (nginx)")})
    shares = {name: 100 * (cpu_seconds(pids) - before[name]) / elapsed for name, pids in parts.items()}

    print(f"idle stack, {elapsed:.0f} s after {arguments.settle:.0f} s to settle (percent of one core):")
    for name, share in sorted(shares.items(), key=lambda item: -item[1]):
        print(f"  {name:28} {share:5.1f} %")
    services = sum(share for name, share in shares.items() if name.startswith("colony-"))
    total = sum(shares.values())
    print(f"  {'services together':28} {services:5.1f} %")
    print(f"  {'whole stack':28} {total:5.1f} %")
    met = total < arguments.target
    print(f"target: whole stack under {arguments.target:g} % of one core: {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
