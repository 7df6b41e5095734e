"""Fault injection against the whole stack as scripts/run starts it (scripts/faults runs this).

A steady stream of writes whose events another service consumes goes through the gateway:
MyCirclee posts (circles -> notifications: the other member's `circle_post`) and I Believe In You
support messages (projects -> notifications: the creator's `support_message`). Meanwhile one
process at a time is SIGKILLed and comes back:

  broker     the Kafka broker, started again after an outage (the local one comes back empty; the
             relays send again what it had acknowledged, from their outboxes)
  consumer   colony-notifications, which consumes both streams (scripts/run restarts it)
  producer   colony-circles, which produces one of them (scripts/run restarts it)

For every fault it measures the HTTP write success rate while the fault lasts, the readiness of
every service during it (polled every half second), and, after recovery, that every write answered
2xx has its effect exactly once (the notification row that names its post or message), and how
long the pipeline took to drain. Writes whose answer was lost (the producer died mid-request) are
counted apart: they may or may not have committed, which is why a client retries them.

  python faults.py --rounds broker,consumer,producer --writes 1500      the short run (scripts/test)
  python faults.py --rounds broker,consumer,producer --repeat 3 --writes 100000   (scripts/bench faults)

Exits 0 when every criterion holds: writes during a broker outage all succeed and every service
stays ready; after each fault, effects == 2xx writes and no duplicates. Then (--idle-restart) the
stack is left idle, the broker restarted once more, and the first events' times after it came back
are reported (idle relays and dozing consumers reconnecting).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "EndToEnd"))
from e2e_support import ROOT, Api, Stack, User, expect, read_anon_keys, wait_until  # noqa: E402

LOCAL = ROOT / ".local"
SERVICES = ["auth", "circles", "chat", "habits", "nearby", "projects", "realtime", "notifications"]


def log(message: str) -> None:
    print(f"faults: {message}", flush=True)


def service_ports() -> dict[str, int]:
    base = int(os.environ.get("COLONY_SERVICE_BASE_PORT", "8081"))
    return {name: base + index for index, name in enumerate(SERVICES)}


def pid_of(name: str) -> Optional[int]:
    path = LOCAL / "run" / f"colony-{name}.pid"
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def ready(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/ready", timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False


def psql(sql: str) -> list[list[str]]:
    """Runs SQL as the local superuser (the env file scripts/infra writes)."""
    env = dict(os.environ)
    for line in (LOCAL / "env").read_text().splitlines():
        if line.startswith("export ") and "=" in line:
            key, value = line[len("export "):].split("=", 1)
            env[key] = value.strip("'\"")
    result = subprocess.run(
        ["psql", "-X", "-q", "-At", "-F", "\t", "-h", env["COLONY_PG_HOST"], "-p", env["COLONY_PG_PORT"], "-U", env["COLONY_PG_ADMIN_USER"],
         "-d", env["COLONY_PG_DATABASE"], "-c", sql],
        env={**env, "PGPASSWORD": env["COLONY_PG_ADMIN_PASSWORD"]}, capture_output=True, text=True, check=True)
    return [line.split("\t") for line in result.stdout.splitlines() if line]


# ------------------------------------------------------------------------------------ the world


@dataclass
class World:
    author: User          # posts in the circle
    member: User          # receives circle_post
    circle: str
    creator: User         # receives support_message
    supporters: list[User]
    project: str


def make_world(api: Api, supporters: int) -> World:
    author = api.sign_up_confirmed("mycirclee", "fault-author", full_name="Ada Author")
    member = api.sign_up_confirmed("mycirclee", "fault-member", full_name="Mo Member")
    circle_id = expect(author.post("/circles/v1/circles", json={"name": "Fault Line"}), 201)["id"].lower()
    invite = expect(author.post(f"/circles/v1/circles/{circle_id}/invites"), 201)
    wait_until("the member to join", lambda: member.post("/circles/v1/invites/claim", json={"code": invite["code"]}).status_code == 200)
    creator = api.sign_up_confirmed("ibelieveinyou", "fault-creator", full_name="Cy Creator")
    project = wait_until("projects to know the creator", lambda: (lambda r: r.json() if r.status_code == 201 else None)(
        creator.post("/projects/v1/projects", json={"title": f"Fault Tolerant {time.time_ns()}", "tagline": "Survives", "mood": "green"})))
    fans = [api.sign_up_confirmed("ibelieveinyou", f"fault-fan{index}", full_name=f"Fan {index}") for index in range(supporters)]
    for fan in fans:
        wait_until("projects to know a supporter", lambda fan=fan: fan.get("/projects/v1/me/karma").status_code == 200)
    world = World(author=author, member=member, circle=circle_id, creator=creator, supporters=fans, project=project["id"].lower())
    # The notifications service learns the membership from circles' events: wait until a probe
    # post reaches the member, so the measured stream starts with everything in place.
    probe = expect(author.post(f"/circles/v1/circles/{circle_id}/posts", json={"type": "note", "body": "probe"}), 201)
    wait_until("the probe post's notification", lambda: effects_of_posts(world.member.id, {probe["id"].lower()}) == {probe["id"].lower(): 1}, timeout=120)
    return world


def effects_of_posts(member: str, post_ids: set[str]) -> dict[str, int]:
    rows = psql(f"SELECT lower(data->>'post_id'), count(*) FROM notifications.notifications WHERE user_id = '{member}' "
                f"AND kind = 'circle_post' GROUP BY 1")
    return {post: int(count) for post, count in rows if post in post_ids}


def effects_of_messages(creator: str, message_ids: set[str]) -> dict[str, int]:
    rows = psql(f"SELECT lower(data->>'message_id'), count(*) FROM notifications.notifications WHERE user_id = '{creator}' "
                f"AND kind = 'support_message' GROUP BY 1")
    return {message: int(count) for message, count in rows if message in message_ids}


# ---------------------------------------------------------------------------------- the writers


@dataclass
class Write:
    at: float
    kind: str          # post | support
    status: int        # 0: no answer (connection refused, reset, timeout)
    id: Optional[str]  # the created row's id when 2xx


@dataclass
class Writers:
    world: World
    stack: Stack
    threads: int
    writes: list[Write] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    limit: Optional[int] = None
    rate: float = 40.0           # writes per second in all, so every fault meets a steady stream
    issued: int = 0
    started: float = field(default_factory=time.monotonic)

    def count(self) -> int:
        with self.lock:
            return len(self.writes)

    def run(self, index: int) -> None:
        http = httpx.Client(base_url=self.stack.gateway, timeout=10.0)
        sequence = 0
        while not self.stop.is_set():
            with self.lock:
                if self.limit is not None and self.issued >= self.limit:
                    break
                slot = self.started + self.issued / self.rate
                self.issued += 1
            time.sleep(max(0.0, slot - time.monotonic()))
            sequence += 1
            if sequence % 2 == 0:
                user, kind = self.world.author, "post"
                path, body = f"/circles/v1/circles/{self.world.circle}/posts", {"type": "note", "body": f"fault write {index}-{sequence}"}
            else:
                user, kind = self.world.supporters[(index + sequence) % len(self.world.supporters)], "support"
                path, body = f"/projects/v1/projects/{self.world.project}/support-messages", {"message": f"hang in there {index}-{sequence}"}
            started = time.monotonic()
            try:
                response = http.post(path, headers=user.headers(), json=body)
                status, created = response.status_code, None
                if 200 <= status < 300:
                    payload = response.json()
                    created = (payload["id"] if kind == "post" else payload["message"]["id"]).lower()
            except httpx.HTTPError:
                status, created = 0, None
            with self.lock:
                self.writes.append(Write(at=started, kind=kind, status=status, id=created))
        http.close()

    def start(self) -> list[threading.Thread]:
        started = [threading.Thread(target=self.run, args=(index,), daemon=True) for index in range(self.threads)]
        for thread in started:
            thread.start()
        return started


# ----------------------------------------------------------------------------------- the faults


def scripts(*arguments: str) -> None:
    subprocess.run([str(ROOT / "scripts" / arguments[0]), *arguments[1:]], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)


def kill_broker(outage: float) -> None:
    scripts("infra", "kill-broker")
    time.sleep(outage)
    scripts("infra", "start-broker")


def kill_service(name: str, port: int) -> None:
    pid = pid_of(name)
    assert pid, f"no pid for colony-{name}"
    os.kill(pid, 9)
    # scripts/run notices the exit and starts it again; wait for the new process to be ready.
    wait_until(f"colony-{name} to come back", lambda: pid_of(name) not in (None, pid) and ready(port), timeout=180, interval=0.2)


@dataclass
class Round:
    fault: str
    started: float = 0
    recovered: float = 0
    drain_seconds: Optional[float] = None
    readiness: dict[str, list[bool]] = field(default_factory=dict)

    def poll_readiness(self, ports: dict[str, int], done: threading.Event) -> None:
        while not done.is_set():
            for name, port in ports.items():
                self.readiness.setdefault(name, []).append(ready(port))
            time.sleep(0.5)


def run_round(fault: str, ports: dict[str, int], outage: float) -> Round:
    current = Round(fault=fault)
    done = threading.Event()
    poller = threading.Thread(target=current.poll_readiness, args=(ports, done), daemon=True)
    current.started = time.monotonic()
    poller.start()
    if fault == "broker":
        kill_broker(outage)
    elif fault == "consumer":
        kill_service("notifications", ports["notifications"])
    elif fault == "producer":
        kill_service("circles", ports["circles"])
    else:
        raise ValueError(fault)
    current.recovered = time.monotonic()
    done.set()
    poller.join()
    return current


def idle_broker_restart(world: World, outage: float, idle: float, timeout: float) -> dict:
    """The stack left idle (its consumers dozing), the broker killed and started again, then one
    post and one support message written at once: how long after the broker accepted connections
    again each had its effect (an idle relay and an idle consumer each reconnect, rejoin and move
    it). A figure, not a criterion (speed targets go in benchmarks)."""
    log(f"idle restart: {idle:g}s idle, then the broker down for {outage:g}s")
    time.sleep(idle)
    scripts("infra", "kill-broker")
    time.sleep(outage)
    scripts("infra", "start-broker")  # returns once the broker answers metadata requests
    back = time.monotonic()
    post = expect(world.author.post(f"/circles/v1/circles/{world.circle}/posts", json={"type": "note", "body": "after the restart"}), 201)["id"].lower()
    support = expect(world.supporters[0].post(f"/projects/v1/projects/{world.project}/support-messages", json={"message": "after the restart"}), 201)
    message = support["message"]["id"].lower()
    seconds: dict[str, Optional[float]] = {"circles_to_notifications": None, "projects_to_notifications": None}
    deadline = back + timeout
    while time.monotonic() < deadline and None in seconds.values():
        if seconds["circles_to_notifications"] is None and effects_of_posts(world.member.id, {post}):
            seconds["circles_to_notifications"] = round(time.monotonic() - back, 2)
        if seconds["projects_to_notifications"] is None and effects_of_messages(world.creator.id, {message}):
            seconds["projects_to_notifications"] = round(time.monotonic() - back, 2)
        time.sleep(0.1)
    log(f"idle restart: first events after the broker was back: {seconds}")
    return {"idle_seconds": idle, "outage_seconds": outage, "first_event_seconds": seconds}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", default="broker,consumer,producer")
    parser.add_argument("--repeat", type=int, default=1, help="each fault this many times")
    parser.add_argument("--writes", type=int, default=1500, help="writes in all")
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--rate", type=float, default=40.0, help="writes per second in all")
    parser.add_argument("--outage", type=float, default=10.0, help="seconds the broker stays down")
    parser.add_argument("--drain-timeout", type=float, default=300.0)
    parser.add_argument("--idle-restart", type=float, default=8.0,
                        help="after the rounds: seconds left idle before one more broker restart, then the first events' times (0: skip)")
    parser.add_argument("--report", type=Path, default=LOCAL / "logs" / "faults-report.json")
    arguments = parser.parse_args()

    port = os.environ.get("COLONY_GATEWAY_PORT", "8080")
    stack = Stack(gateway=os.environ.get("COLONY_GATEWAY_URL", f"http://127.0.0.1:{port}"),
                  keys=read_anon_keys(Path(os.environ.get("COLONY_API_KEYS_FILE", LOCAL / "api-keys.txt"))),
                  mail_dir=Path(os.environ.get("COLONY_MAIL_DIR", LOCAL / "mail")))
    ports = service_ports()
    api = Api(stack)
    world = make_world(api, supporters=max(1, arguments.writes // 8000 + 1))
    log(f"world ready: circle {world.circle}, project {world.project}, {len(world.supporters)} supporters")

    faults = [fault for _ in range(arguments.repeat) for fault in arguments.rounds.split(",")]
    writers = Writers(world=world, stack=stack, threads=arguments.threads, limit=arguments.writes, rate=arguments.rate)
    threads = writers.start()
    rounds: list[Round] = []
    # Faults are spread over the run: each starts once its share of the writes went out, and the
    # writes go on during it and after it. A watcher per fault measures its drain meanwhile.
    watchers: list[threading.Thread] = []

    def watch_drain(current: Round) -> None:
        # How long after the process came back every write accepted until then had its effect.
        with writers.lock:
            accepted = [write for write in writers.writes if write.id and write.at <= current.recovered]
        posts_so_far = {write.id for write in accepted if write.kind == "post"}
        messages_so_far = {write.id for write in accepted if write.kind == "support"}
        deadline = time.monotonic() + arguments.drain_timeout
        while time.monotonic() < deadline:
            if (len(effects_of_posts(world.member.id, posts_so_far)) == len(posts_so_far)
                    and len(effects_of_messages(world.creator.id, messages_so_far)) == len(messages_so_far)):
                current.drain_seconds = round(time.monotonic() - current.recovered, 1)
                log(f"{current.fault}: the {len(accepted)} writes accepted until it was back had their effects {current.drain_seconds}s after")
                return
            time.sleep(1)

    for index, fault in enumerate(faults):
        target = arguments.writes * (index + 0.5) / len(faults)
        while writers.count() < target and any(thread.is_alive() for thread in threads):
            time.sleep(0.2)
        log(f"round {index + 1}/{len(faults)}: {fault} killed after {writers.count()} writes")
        current = run_round(fault, ports, arguments.outage)
        rounds.append(current)
        log(f"round {index + 1}: {fault} back after {current.recovered - current.started:.1f}s")
        watcher = threading.Thread(target=watch_drain, args=(current,), daemon=True)
        watcher.start()
        watchers.append(watcher)
    for thread in threads:
        thread.join()
    for watcher in watchers:
        watcher.join()
    finished = time.monotonic()
    log(f"{writers.count()} writes done; waiting for their effects")

    posts = {write.id for write in writers.writes if write.kind == "post" and write.id}
    messages = {write.id for write in writers.writes if write.kind == "support" and write.id}

    def complete() -> bool:
        return len(effects_of_posts(world.member.id, posts)) == len(posts) and len(effects_of_messages(world.creator.id, messages)) == len(messages)

    deadline = finished + arguments.drain_timeout
    while not complete() and time.monotonic() < deadline:
        time.sleep(0.5)
    drained = time.monotonic()
    post_effects = effects_of_posts(world.member.id, posts)
    message_effects = effects_of_messages(world.creator.id, messages)
    missing = (len(posts) - len(post_effects)) + (len(messages) - len(message_effects))
    duplicates = sum(count - 1 for count in [*post_effects.values(), *message_effects.values()] if count > 1)

    report = {"writes": writers.count(), "accepted": len(posts) + len(messages), "posts": len(posts), "support_messages": len(messages),
              "effects": len(post_effects) + len(message_effects), "missing": missing, "duplicates": duplicates,
              "drain_seconds": round(drained - finished, 1), "rounds": []}
    ok = missing == 0 and duplicates == 0
    for index, current in enumerate(rounds):
        during = [write for write in writers.writes if current.started <= write.at <= current.recovered]
        succeeded = [write for write in during if 200 <= write.status < 300]
        unanswered = [write for write in during if write.status == 0]
        readiness = {name: round(100 * sum(samples) / len(samples), 1) for name, samples in current.readiness.items() if samples}
        entry = {"fault": current.fault, "seconds": round(current.recovered - current.started, 1), "drain_seconds": current.drain_seconds,
                 "writes_during": len(during),
                 "write_success_percent": round(100 * len(succeeded) / len(during), 1) if during else None,
                 "unanswered_writes": len(unanswered), "ready_percent": readiness}
        report["rounds"].append(entry)
        log(f"round {index + 1} {current.fault}: {entry['seconds']}s, {len(during)} writes, {entry['write_success_percent']}% succeeded, "
            f"readiness {readiness}")
        if current.drain_seconds is None:
            ok = False
            log(f"FAIL: the writes before the {current.fault} fault's recovery did not all have their effects within {arguments.drain_timeout:g}s")
        if current.fault in ("broker", "consumer"):
            # Nothing a client writes to depends on these: every write succeeds, every service stays ready.
            if during and len(succeeded) != len(during):
                ok = False
                log(f"FAIL: writes failed during the {current.fault} fault: {[(w.kind, w.status) for w in during if w.status >= 300 or w.status == 0][:10]}")
            others = {name: value for name, value in readiness.items() if current.fault == "broker" or name != "notifications"}
            if any(value < 100 for value in others.values()):
                ok = False
                log(f"FAIL: a service was not ready during the {current.fault} fault: {others}")
    log(f"{report['accepted']} writes answered 2xx: {report['effects']} effects, {missing} missing, {duplicates} duplicates, "
        f"drained {report['drain_seconds']}s after the last write")
    if arguments.idle_restart > 0:
        report["idle_restart"] = idle_broker_restart(world, arguments.outage, arguments.idle_restart, arguments.drain_timeout)
        if None in report["idle_restart"]["first_event_seconds"].values():
            ok = False
            log(f"FAIL: an event written after the idle restart had no effect within {arguments.drain_timeout:g}s")
    arguments.report.parent.mkdir(parents=True, exist_ok=True)
    arguments.report.write_text(json.dumps(report, indent=2))
    log(f"report: {arguments.report}")
    log("PASS" if ok else "FAIL")
    api.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
