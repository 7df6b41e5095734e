#!/usr/bin/env python3
"""The soak (issue 37): the five apps' mixed load at a steady rate with thousands of realtime sockets
for an hour, against the stack `scripts/bench soak` starts (release build). Run by that script.

The load is the rolling-restart driver's (Tests/Faults/rolling_restart.py): a worker per journey
(sign-in and session read, MyCirclee posts and feed reads, Unify messages, HabitHive profile writes
and hive reads, SocialSpot location reports and nearby reads, project posts and feed reads,
notification reads, the console's sign-in page), each a step every `--interval` seconds. The sockets
speak the Phoenix protocol through the gateway, `--per-user` of them per circle member (the realtime
per-user cap), all joined to the circle's posts: each post reaches every socket. As apps do, every
user's session is refreshed before its access token expires, and each socket sends its new token to
its channel (`access_token`).

Sampled every `--sample` seconds: each process's resident memory, open file descriptors, threads and
CPU time (/proc; the driver's own too), and Postgres's connections per role; per minute, each route's
requests, failures and p99. Each process's share of a core in both windows is shown, not judged.
After `--warmup` minutes, the first `--window` minutes are compared with the last:
- resident memory of each service within 5 % (mean of the last window over the first);
- the services', the broker's and the gateway's file descriptors and threads, and Postgres's
  connections per role, not growing (last window's mean at most the first's + 5 % + 2); Postgres's
  memory and descriptors (caches, relation files) are shown, not judged;
- each route's p99 within 1.5× of the first window's (p99s under 10 ms count as 10 ms: scheduling
  noise on a shared machine is not growth);
- no failed request after the warm-up, no socket closed, no change lost or doubled.
Prints the table, writes the samples and verdicts (`--report`) and the curves (`--plot`, PNG).
Exits 0 when every criterion holds."""

from __future__ import annotations

import argparse
import asyncio
import collections
import importlib.util
import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "Faults"))
sys.path.insert(0, str(ROOT / "Tests" / "EndToEnd"))
import rolling_restart as load_driver  # noqa: E402
from e2e_support import Api, Stack, User, read_anon_keys  # noqa: E402

LOCAL = ROOT / ".local"


def load_module(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The stack's processes, found as `scripts/bench idle` finds them.
idle = load_module("bench_idle", ROOT / "scripts" / "bench-idle.py")


def log(message: str) -> None:
    print(f"soak: {message}", flush=True)


# ------------------------------------------------------------------------------------ sampling


def proc_figures(pids: list[int]) -> dict[str, float]:
    rss_kb = fds = threads = 0
    cpu_ticks = 0
    for pid in pids:
        try:
            # utime and stime: which process's CPU grew when latencies grew on a full machine.
            cpu_ticks += sum(int(field) for field in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[11:13])
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    rss_kb += int(line.split()[1])
                elif line.startswith("Threads:"):
                    threads += int(line.split()[1])
            fds += len(os.listdir(f"/proc/{pid}/fd"))
        except (OSError, ValueError):
            continue  # a Postgres backend that ended meanwhile
    return {"rss_mb": rss_kb / 1024, "fds": fds, "threads": threads, "cpu_seconds": cpu_ticks / idle.TICKS}


def database_connections() -> dict[str, int]:
    """Client connections per role (pg_stat_activity), as the admin."""
    env = {**os.environ, "PGPASSWORD": os.environ.get("COLONY_PG_ADMIN_PASSWORD", "")}
    command = ["psql", "-X", "-A", "-t", "-F", "\t", "-h", os.environ.get("COLONY_PG_HOST", "127.0.0.1"), "-p", os.environ.get("COLONY_PG_PORT", "5432"),
               "-U", os.environ.get("COLONY_PG_ADMIN_USER", "postgres"), "-d", os.environ.get("COLONY_PG_DATABASE", "colony"),
               "-c", "SELECT usename, count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND usename IS NOT NULL "
                     "AND pid <> pg_backend_pid() GROUP BY usename"]
    try:
        output = subprocess.run(command, env=env, capture_output=True, text=True, timeout=30, check=True).stdout
    except (subprocess.SubprocessError, OSError):
        return {}
    counts = {}
    for line in output.splitlines():
        if "\t" in line:
            role, count = line.split("\t", 1)
            counts[role] = int(count)
    return counts


class Sampler:
    def __init__(self, every: float) -> None:
        self.every = every
        self.samples: list[dict[str, Any]] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, name="sampler", daemon=True)
        self.started = time.time()

    def run(self) -> None:
        while not self.stopping.is_set():
            at = time.time()
            processes = {name: proc_figures(pids) for name, pids in idle.groups().items()}
            processes["driver (this soak)"] = proc_figures([os.getpid()])
            self.samples.append({"at": at, "processes": processes, "connections": database_connections()})
            self.stopping.wait(max(0.0, self.every - (time.time() - at)))

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(60)


# ------------------------------------------------------------------------------------ sessions


def refresh(user: User) -> bool:
    """A refresh-token grant, as the apps' clients make before the access token expires."""
    response = user.api.http.post("/auth/v1/token", params={"grant_type": "refresh_token"},
                                  headers={"apikey": user.api.stack.keys[user.app]}, json={"refresh_token": user.refresh_token})
    if response.status_code != 200:
        return False
    session = response.json()
    user.access_token, user.refresh_token = session["access_token"], session["refresh_token"]
    return True


class Refresher:
    """Refreshes every user's session every `every` seconds, then sends each socket its user's token."""

    def __init__(self, users: list[User], sockets: load_driver.Sockets, owners: list[User], every: float) -> None:
        self.users, self.sockets, self.owners, self.every = users, sockets, owners, every
        self.failures: list[str] = []
        self.rounds = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, name="refresher", daemon=True)

    def run(self) -> None:
        while not self.stopping.wait(self.every):
            for user in self.users:
                if not refresh(user):
                    self.failures.append(f"refresh of {user.app} user {user.id} failed")
            futures = [asyncio.run_coroutine_threadsafe(socket.set_auth(owner.access_token), self.sockets.loop)
                       for socket, owner in zip(self.sockets.sockets, self.owners)]
            for future in futures:
                future.result(60)
            self.rounds += 1
            log(f"sessions refreshed (round {self.rounds}, {len(self.failures)} failures so far)")

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(120)


# ------------------------------------------------------------------------------------ verdicts


def p99(values: list[float]) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def verdicts(samples: list[dict[str, Any]], outcomes: list[load_driver.Outcome], first: tuple[float, float], last: tuple[float, float]) -> dict[str, Any]:
    def in_window(at: float, window: tuple[float, float]) -> bool:
        return window[0] <= at < window[1]

    rows: list[dict[str, Any]] = []
    names = sorted({name for sample in samples for name in sample["processes"]})
    for name in names:
        def series(key: str, window: tuple[float, float]) -> list[float]:
            return [s["processes"][name][key] for s in samples if name in s["processes"] and in_window(s["at"], window)]

        def cpu_percent(window: tuple[float, float]) -> float:
            points = [(s["at"], s["processes"][name]["cpu_seconds"]) for s in samples
                      if "cpu_seconds" in s["processes"].get(name, {}) and in_window(s["at"], window)]
            if len(points) < 2 or points[-1][0] <= points[0][0]:
                return float("nan")
            return 100 * (points[-1][1] - points[0][1]) / (points[-1][0] - points[0][0])
        # Shown, not judged: each process's share of one core over the window (Postgres: its
        # backends that lived through it).
        rows.append({"what": f"{name} cpu %", "first": cpu_percent(first), "last": cpu_percent(last), "ok": True, "judged": False})
        if name.startswith("driver"):
            continue
        for key in ("rss_mb", "fds", "threads"):
            before, after = mean(series(key, first)), mean(series(key, last))
            if name == "postgres" or (key == "rss_mb" and not name.startswith("colony-")):
                # Shown, not judged: Postgres's backends open relation files as they touch them and
                # its memory is its caches (its connections are judged below); the broker's and the
                # gateway's memory is their buffers.
                rows.append({"what": f"{name} {key}", "first": before, "last": after, "ok": True, "judged": False})
                continue
            ok = after <= before * 1.05 if key == "rss_mb" else after <= before * 1.05 + 2
            rows.append({"what": f"{name} {key}", "first": before, "last": after, "ok": ok, "judged": True})
    roles = sorted({role for sample in samples for role in sample["connections"]})
    for role in roles:
        before = mean([s["connections"].get(role, 0) for s in samples if in_window(s["at"], first)])
        after = mean([s["connections"].get(role, 0) for s in samples if in_window(s["at"], last)])
        rows.append({"what": f"db connections {role}", "first": before, "last": after, "ok": after <= before * 1.05 + 2, "judged": True})
    routes = sorted({f"{o.method} {o.path}" for o in outcomes})
    for route in routes:
        def latencies(window: tuple[float, float]) -> list[float]:
            return [o.seconds * 1000 for o in outcomes if f"{o.method} {o.path}" == route and o.ok and in_window(o.at, window)]
        before, after = latencies(first), latencies(last)
        if len(before) < 50 or len(after) < 50:
            rows.append({"what": f"p99 ms {route}", "first": p99(before), "last": p99(after), "ok": True, "judged": False})
            continue
        rows.append({"what": f"p99 ms {route}", "first": p99(before), "last": p99(after), "ok": p99(after) <= 1.5 * max(p99(before), 10.0), "judged": True})
    return {"rows": rows}


def per_minute(outcomes: list[load_driver.Outcome], start: float) -> dict[str, list[dict[str, Any]]]:
    buckets: dict[str, dict[int, list[load_driver.Outcome]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for o in outcomes:
        buckets[o.journey][int((o.at - start) // 60)].append(o)
    return {journey: [{"minute": minute, "requests": len(items), "failed": sum(not o.ok for o in items),
                       "p99_ms": p99([o.seconds * 1000 for o in items if o.ok])} for minute, items in sorted(by.items())]
            for journey, by in sorted(buckets.items())}


def plot(path: Path, samples: list[dict[str, Any]], minutes: dict[str, list[dict[str, Any]]], start: float, windows: tuple[tuple[float, float], tuple[float, float]]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(4, 1, figsize=(11, 15), sharex=True)
    minute = [(s["at"] - start) / 60 for s in samples]
    services = sorted({name for s in samples for name in s["processes"] if name.startswith("colony-")})
    for name in services:
        axes[0].plot(minute, [s["processes"].get(name, {}).get("rss_mb", float("nan")) for s in samples], label=name.removeprefix("colony-"))
        axes[1].plot(minute, [s["processes"].get(name, {}).get("fds", float("nan")) for s in samples], label=name.removeprefix("colony-"))
    axes[0].set_ylabel("resident memory (MB)")
    axes[1].set_ylabel("open file descriptors")
    roles = sorted({role for s in samples for role in s["connections"]})
    for role in roles:
        axes[2].plot(minute, [s["connections"].get(role, 0) for s in samples], label=role)
    axes[2].set_ylabel("Postgres connections")
    for journey, rows in minutes.items():
        axes[3].plot([r["minute"] + 0.5 for r in rows], [r["p99_ms"] for r in rows], label=journey, marker=".")
    axes[3].set_ylabel("p99 per minute (ms)")
    axes[3].set_yscale("log")
    axes[3].set_xlabel("minutes since the load started")
    for axis in axes:
        for window in windows:
            axis.axvspan((window[0] - start) / 60, (window[1] - start) / 60, color="grey", alpha=0.12)
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=7, ncol=5, loc="upper left")
    figure.suptitle("Colony soak: the compared windows are shaded")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=90)


# ------------------------------------------------------------------------------------ main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=60, help="the measured run after the warm-up")
    parser.add_argument("--warmup", type=float, default=5, help="minutes of load before the first window")
    parser.add_argument("--window", type=float, default=10, help="minutes compared at the start and the end")
    parser.add_argument("--sockets", type=int, default=2000)
    parser.add_argument("--per-user", type=int, default=10, help="sockets per circle member (the realtime per-user cap)")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between a journey worker's steps")
    parser.add_argument("--sample", type=float, default=15, help="seconds between samples")
    parser.add_argument("--refresh", type=float, default=1200, help="seconds between session refreshes")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds after a post's answer its change must have reached a joined socket")
    parser.add_argument("--report", default=str(LOCAL / "logs" / "soak-report.json"))
    parser.add_argument("--plot", default=str(ROOT / "docs" / "soak.png"))
    args = parser.parse_args()
    if args.window * 2 > args.minutes:
        parser.error("--minutes must hold two --window")

    gateway = os.environ.get("COLONY_GATEWAY_URL", f"http://127.0.0.1:{os.environ.get('COLONY_GATEWAY_PORT', '8080')}")
    stack = Stack(gateway=gateway, keys=read_anon_keys(Path(os.environ.get("COLONY_API_KEYS_FILE", LOCAL / "api-keys.txt"))),
                  mail_dir=Path(os.environ.get("COLONY_MAIL_DIR", LOCAL / "mail")))
    api = Api(stack)
    members = max(1, math.ceil(args.sockets / args.per_user))
    log(f"making the journeys' users, a circle of {members} members, group, hive, spot and project")
    world = load_driver.make_world(api, members)
    owners = [world.members[index % members] for index in range(args.sockets)]
    ws_url = gateway.replace("http://", "ws://").replace("https://", "wss://") + f"/realtime/v1/websocket?apikey={stack.keys['mycirclee']}&vsn=1.0.0"
    sockets = load_driver.Sockets(ws_url, owners, world.circle)
    log(f"{len(sockets.sockets)} realtime sockets joining the circle's posts")
    sockets.start(timeout=600)

    recorder = load_driver.Recorder()
    sampler = Sampler(args.sample)
    users = [world.author, *world.members, world.unify_a, world.unify_b, world.hive_owner, world.spotter, world.creator]
    refresher = Refresher(users, sockets, owners, args.refresh)
    load = load_driver.Load(stack, load_driver.journeys(world, stack, recorder), args.interval)
    start = time.time()
    sampler.start()
    load.start()
    refresher.start()
    measured_from = start + args.warmup * 60
    end = measured_from + args.minutes * 60
    first = (measured_from, measured_from + args.window * 60)
    last = (end - args.window * 60, end)
    log(f"load and sampling under way: warm-up {args.warmup:g} min, then {args.minutes:g} min")
    while time.time() < end:
        time.sleep(min(60, max(0.0, end - time.time())))
        elapsed = (time.time() - start) / 60
        failed = sum(not o.ok for o in recorder.outcomes if o.at >= measured_from)
        closes = sum(len(s.closes) for s in sockets.sockets)
        log(f"{elapsed:.0f} min: {len(recorder.outcomes)} requests ({failed} failed after the warm-up), {closes} socket closes")
        if closes:
            # Why, as they happen: an interrupted run writes no report.
            reasons = collections.Counter(f"{code} {reason[:80]}" for s in sockets.sockets for _, code, reason in s.closes)
            refusals = collections.Counter(failure[:120] for s in sockets.sockets for failure in s.join_failures)
            log(f"  closes by code and reason: {dict(reasons.most_common(3))}; joins refused: {dict(refusals.most_common(3))}")
    load.stop()
    time.sleep(args.settle)
    refresher.stop()
    sampler.stop()

    changes = load_driver.classify_changes(world, sockets, args.settle)
    closes = [{"socket": s.index, "at": at - start, "code": code, "reason": reason} for s in sockets.sockets for at, code, reason in s.closes]
    sockets.stop()
    outcomes = list(recorder.outcomes)
    after_warmup = [o for o in outcomes if o.at >= measured_from]
    failed = [o.__dict__ for o in after_warmup if not o.ok]
    result = verdicts(sampler.samples, outcomes, first, last)
    minutes = per_minute(outcomes, start)
    problems = [f"{row['what']}: {row['first']:.1f} -> {row['last']:.1f}" for row in result["rows"] if row["judged"] and not row["ok"]]
    if failed:
        problems.append(f"{len(failed)} requests failed after the warm-up")
    if closes:
        problems.append(f"{len(closes)} socket closes")
    if changes["lost"] or changes["doubled"]:
        problems.append(f"changes lost {changes['lost']}, doubled {changes['doubled']}")
    if refresher.failures:
        problems.append(f"{len(refresher.failures)} session refreshes failed")

    print(f"\nsoak: {args.minutes:g} min after {args.warmup:g} min of warm-up; {len(sockets.sockets)} sockets; "
          f"{len(outcomes)} requests ({len(outcomes) / max(1.0, end - start):.1f}/s), {len(failed)} failed after the warm-up")
    print(f"realtime: {changes['posts']} posts x {changes['sockets']} sockets: {changes['received']} of {changes['expected']} received, "
          f"lost {changes['lost']}, doubled {changes['doubled']}, missed in a reconnect {changes['missed_in_reconnect']}; {len(closes)} socket closes")
    print(f"\n{'first ' + format(args.window, 'g') + ' min vs last':>62} {'first':>10} {'last':>10}  verdict")
    for row in result["rows"]:
        verdict = ("ok" if row["ok"] else "GREW") if row["judged"] else "-"
        print(f"{row['what']:>62} {row['first']:10.1f} {row['last']:10.1f}  {verdict}")
    report = {"arguments": vars(args), "start": start, "windows": {"first": first, "last": last}, "samples": sampler.samples,
              "per_minute": minutes, "verdicts": result["rows"], "changes": changes, "closes": closes[:200], "failed": failed[:200],
              "refresh_rounds": refresher.rounds, "refresh_failures": refresher.failures[:50], "problems": problems}
    Path(args.report).parent.mkdir(parents=True, exist_ok=True)
    Path(args.report).write_text(json.dumps(report, indent=1, default=str))
    plot(Path(args.plot), sampler.samples, minutes, start, (first, last))
    print(f"\nreport: {args.report}; plot: {args.plot}")
    if problems:
        print("soak: FAILED:\n  " + "\n  ".join(problems))
        return 1
    print("soak: every criterion held")
    return 0


if __name__ == "__main__":
    sys.exit(main())
