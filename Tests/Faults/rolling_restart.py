"""Rolling restarts under load against `scripts/run --replicas N` (scripts/rolling-restart runs this).

A steady load of the five apps' journeys goes through the gateway the whole time: sign-ins and
session reads (auth), MyCirclee posts and reads (circles), Unify group messages (chat), HabitHive
profile writes and hive reads (habits), SocialSpot location reports and nearby reads (nearby),
I Believe In You project posts and feed reads (projects), notification reads (notifications) and
the console's sign-in page (console). Realtime sockets (the Phoenix protocol over `websockets`, as
the apps' Supabase clients speak it) of the circle's members are subscribed to its posts
(postgres_changes) and reconnect as a Phoenix client does: on any close, with its backoff, joining
their channels again.

Then each replica of every service is stopped as Kubernetes stops a pod, one at a time: SIGTERM, and
the service's pre-stop pause (/ready answers 503 while it still serves; the gateway, which follows
readiness as the endpoints controller does, takes it out of rotation), then it stops accepting,
finishes what it holds and exits within the grace; scripts/run starts it again, and the next one
waits until it is back in rotation. Afterwards, the SIGKILL round: a replica killed outright under
the same load, which may fail only the writes it held (the gateway retries idempotent requests on
another replica).

Counted: requests and failures (any answer but the journey's expected one, or no answer) in each
phase; socket closes and reconnects, whether every socket ends joined to its channel; for every post
answered 201 and every socket, whether its change arrived once, twice (doubled) or not at all. A
change not received by a socket that was joined from before the post until seconds after its answer
is lost; one whose post fell into a socket's reconnect (closed, not yet joined again) is counted
apart: the Realtime protocol has no replay, and apps read again on SUBSCRIBED.

Exits 0 when the rolling restart had no failed request, no change was lost or doubled, every socket
ended joined, and the SIGKILL round failed only writes held by the killed replica.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import re
import signal
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import httpx
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "EndToEnd"))
from e2e_support import ROOT, Api, Stack, User, expect, read_anon_keys, wait_until  # noqa: E402

LOCAL = ROOT / ".local"
RUN = LOCAL / "run"
SERVICES = ["auth", "circles", "chat", "habits", "nearby", "projects", "realtime", "notifications", "console"]
BASE_PORT = int(os.environ.get("COLONY_SERVICE_BASE_PORT", "8081"))


def log(message: str) -> None:
    print(f"rolling-restart: {message}", flush=True)


def instance_name(service: str, replica: int) -> str:
    return service if replica == 0 else f"{service}-{replica}"


def instance_port(service: str, replica: int) -> int:
    return BASE_PORT + 100 * replica + SERVICES.index(service)


def pid_of(instance: str) -> Optional[int]:
    try:
        return int((RUN / f"colony-{instance}.pid").read_text().strip())
    except (OSError, ValueError):
        return None


def alive(pid: Optional[int]) -> bool:
    if not pid:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def ready_status(port: int) -> Optional[int]:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/ready", timeout=2.0).status_code
    except httpx.HTTPError:
        return None


def in_rotation() -> set[str]:
    try:
        return set((RUN / "gateway-rotation").read_text().split())
    except OSError:
        return set()


def wait_for(what: str, check: Callable[[], Any], timeout: float = 120.0, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(interval)


# ------------------------------------------------------------------------------------ the load


@dataclass
class Outcome:
    at: float
    phase: str
    journey: str
    method: str
    path: str
    status: Optional[int]
    ok: bool
    detail: str = ""
    seconds: float = 0.0  # from sending to the answer (or the error)


class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.outcomes: list[Outcome] = []
        self.phase = "warm-up"

    def record(self, outcome: Outcome) -> None:
        with self.lock:
            self.outcomes.append(outcome)

    def call(self, journey: str, user_or_api: Any, method: str, path: str, expected: tuple[int, ...], **kwargs) -> Optional[httpx.Response]:
        at = time.time()
        phase = self.phase
        template = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "{id}", path)
        started = time.monotonic()
        try:
            if isinstance(user_or_api, User):
                response = user_or_api.request(method, path, **kwargs)
            else:
                response = user_or_api.http.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            self.record(Outcome(at, phase, journey, method, template, None, False, f"{type(error).__name__}: {error}", time.monotonic() - started))
            return None
        seconds = time.monotonic() - started
        ok = response.status_code in expected
        self.record(Outcome(at, phase, journey, method, template, response.status_code, ok, "" if ok else response.text[:300], seconds))
        return response if ok else None


@dataclass
class World:
    author: User
    members: list[User]
    circle: str
    unify_a: User
    unify_b: User
    group: str
    hive_owner: User
    hive: str
    spotter: User
    creator: User
    project: str
    sign_in: tuple[str, str]          # mycirclee email, password
    posts: list[tuple[str, float, float]] = field(default_factory=list)  # (post id, sent at, answered at)
    posts_lock: threading.Lock = field(default_factory=threading.Lock)


def make_world(api: Api, sockets: int) -> World:
    author = api.sign_up_confirmed("mycirclee", "rolling-author", full_name="Rolling Author")
    members = [api.sign_up_confirmed("mycirclee", f"rolling-member{index}", full_name=f"Member {index}") for index in range(sockets)]
    circle = expect(author.post("/circles/v1/circles", json={"name": "Rolling Circle"}), 201)["id"].lower()
    for member in members:
        code = expect(author.post(f"/circles/v1/circles/{circle}/invites"), 201)["code"]  # one use each

        def claim(member: User = member, code: str = code) -> bool:
            response = member.post("/circles/v1/invites/claim", json={"code": code})
            assert response.status_code == 200, (response.status_code, response.text[:300])
            return True

        wait_until("a member to join", claim)

    unify_a = api.sign_up_with_code("unify", "rolling-a", full_name="Una A")
    unify_b = api.sign_up_with_code("unify", "rolling-b", full_name="Uno B")

    def create_group():
        response = unify_a.post("/chat/v1/groups", json={"name": "Rolling Group", "member_emails": [unify_b.email]})
        if response.status_code == 422:
            return None
        return expect(response, 201)

    group = wait_until("chat to know the member's address", create_group)["id"].lower()

    hive_owner = api.phone_otp_sign_in("habithive")
    expect(hive_owner.patch("/habits/v1/profile", json={"display_name": "Hive Roller"}), 200)
    hive = expect(hive_owner.post("/habits/v1/hives", json={"name": "Rolling Hive", "emoji": "🐝"}), 201)["hive"]["id"].lower()

    spotter = api.sign_up_confirmed("socialspot", "rolling-spot", full_name="Spot Roller")
    wait_until("nearby to know the spotter", lambda: spotter.patch("/nearby/v1/profile", json={"name": "Spot Roller", "bio": "rolling"}).status_code == 200)
    expect(spotter.patch("/nearby/v1/settings", json={"share_location": True}), 200)

    creator = api.sign_up_confirmed("ibelieveinyou", "rolling-creator", full_name="Cy Roller")
    project = wait_until("projects to know the creator", lambda: (lambda r: r.json() if r.status_code == 201 else None)(
        creator.post("/projects/v1/projects", json={"title": f"Rolling {time.time_ns()}", "tagline": "Never down", "mood": "green"})))["id"].lower()
    return World(author=author, members=members, circle=circle, unify_a=unify_a, unify_b=unify_b, group=group,
                 hive_owner=hive_owner, hive=hive, spotter=spotter, creator=creator, project=project,
                 sign_in=(author.email or "", author.extra["password"]))


def journeys(world: World, stack: Stack, recorder: Recorder) -> dict[str, Callable[[Api, int], None]]:
    """One step of each app's journey (`n` counts the worker's steps); each makes a read and a write."""

    def auth(api: Api, n: int) -> None:
        email, secret = world.sign_in
        response = recorder.call("auth", api, "POST", "/auth/v1/token", (200,), params={"grant_type": "password"},
                                 headers=api.anon("mycirclee"), json={"email": email, "password": secret})
        if response is not None:
            token = response.json()["access_token"]
            recorder.call("auth", api, "GET", "/auth/v1/user", (200,), headers={"apikey": stack.keys["mycirclee"], "Authorization": f"Bearer {token}"})

    def circles(api: Api, n: int) -> None:
        body = f"rolling {uuid.uuid4().hex[:8]}"
        sent = time.time()
        response = recorder.call("circles", world.author, "POST", f"/circles/v1/circles/{world.circle}/posts", (201,),
                                 json={"type": "note", "body": body, "mood": "happy"})
        if response is not None:
            with world.posts_lock:
                world.posts.append((response.json()["id"].lower(), sent, time.time()))
        recorder.call("circles", world.members[n % len(world.members)], "GET", f"/circles/v1/circles/{world.circle}/posts", (200,), params={"limit": 20})

    def chat(api: Api, n: int) -> None:
        recorder.call("chat", world.unify_a, "POST", f"/chat/v1/groups/{world.group}/messages", (201,), json={"content": f"rolling {n}"})
        recorder.call("chat", world.unify_b, "GET", f"/chat/v1/groups/{world.group}/messages", (200,))

    def habits(api: Api, n: int) -> None:
        recorder.call("habits", world.hive_owner, "PATCH", "/habits/v1/profile", (200,), json={"display_name": f"Hive Roller {n % 100}"})
        recorder.call("habits", world.hive_owner, "GET", f"/habits/v1/hives/{world.hive}", (200,))

    def nearby(api: Api, n: int) -> None:
        recorder.call("nearby", world.spotter, "PUT", "/nearby/v1/location", (200,),
                      json={"latitude": 40.0 + (n % 2) * 1e-5, "longitude": -100.0, "accuracy": 5})  # a metre back and forth
        recorder.call("nearby", world.spotter, "GET", "/nearby/v1/nearby", (200,))

    def projects(api: Api, n: int) -> None:
        recorder.call("projects", world.creator, "POST", f"/projects/v1/projects/{world.project}/posts", (201,), json={"content": f"Progress {n}"})
        recorder.call("projects", world.creator, "GET", "/projects/v1/feed", (200,))

    def notifications(api: Api, n: int) -> None:
        recorder.call("notifications", world.members[n % len(world.members)], "GET", "/notifications/v1/notifications", (200,))

    def console(api: Api, n: int) -> None:
        recorder.call("console", api, "GET", "/console/sign-in", (200,))

    return {"auth": auth, "circles": circles, "chat": chat, "habits": habits, "nearby": nearby,
            "projects": projects, "notifications": notifications, "console": console}


class Load:
    """A worker thread per journey, each a device of its own (Api), at `interval` seconds a step."""

    def __init__(self, stack: Stack, steps: dict[str, Callable[[Api, int], None]], interval: float) -> None:
        self.stack, self.steps, self.interval = stack, steps, interval
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self.work, args=(name, step), name=f"load-{name}", daemon=True) for name, step in steps.items()]

    def work(self, name: str, step: Callable[[Api, int], None]) -> None:
        api = Api(self.stack)
        n = 0
        try:
            while not self.stopping.is_set():
                started = time.monotonic()
                try:
                    step(api, n)
                except Exception as error:  # a step's own bug must not stop the load silently
                    log(f"{name} step raised {type(error).__name__}: {error}")
                n += 1
                self.stopping.wait(max(0.0, self.interval - (time.monotonic() - started)))
        finally:
            api.close()

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(60)


# ------------------------------------------------------------------------------------ realtime


class PhoenixSocket:
    """One app's realtime connection, as supabase-swift and realtime-js keep it: joined to one
    postgres_changes channel; on any close it reconnects with Phoenix's backoff and joins again."""

    BACKOFF = (0.01, 0.05, 0.1, 0.15, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0)

    def __init__(self, index: int, url: str, token: str, circle: str) -> None:
        self.index, self.url, self.token, self.circle = index, url, token, circle
        self.received: collections.Counter[str] = collections.Counter()
        self.joined_since: Optional[float] = None
        # (joined at, left at) per join; an open one has left at None.
        self.joined: list[list[Optional[float]]] = []
        self.closes: list[tuple[float, Optional[int], str]] = []
        self.reconnects = 0
        self.join_failures: list[str] = []
        self.stopping = False
        self.ref = 0
        self.ws: Any = None  # the open connection, for set_auth
        self.topic = f"realtime:rolling-{index}"

    def next_ref(self) -> str:
        self.ref += 1
        return str(self.ref)

    async def run(self) -> None:
        attempt = 0
        first = True
        while not self.stopping:
            if not first:
                await asyncio.sleep(self.BACKOFF[min(attempt, len(self.BACKOFF) - 1)])
                attempt += 1
                self.reconnects += 1
            first = False
            try:
                async with websockets.connect(self.url, open_timeout=10, close_timeout=5, max_size=None, ping_interval=None) as ws:
                    self.ws = ws
                    join_ref = self.next_ref()
                    await ws.send(json.dumps({"topic": self.topic, "event": "phx_join", "ref": join_ref, "join_ref": join_ref, "payload": {
                        "config": {"broadcast": {"ack": False, "self": False}, "presence": {"key": ""}, "private": False,
                                   "postgres_changes": [{"event": "INSERT", "schema": "public", "table": "posts", "filter": f"circle_id=eq.{self.circle}"}]},
                        "access_token": self.token}}))
                    heartbeat = asyncio.create_task(self.heartbeat(ws))
                    try:
                        async for raw in ws:
                            message = json.loads(raw)
                            event = message.get("event")
                            if event == "phx_reply" and message.get("ref") == join_ref:
                                if message["payload"].get("status") == "ok":
                                    self.joined.append([time.time(), None])
                                    attempt = 0
                                else:
                                    self.join_failures.append(json.dumps(message["payload"])[:300])
                                    await ws.close()
                            elif event == "postgres_changes":
                                record = message["payload"]["data"]["record"]
                                self.received[str(record["id"]).lower()] += 1
                    finally:
                        heartbeat.cancel()
                self.closed(ws.close_code, ws.close_reason or "")
            except (OSError, websockets.WebSocketException, asyncio.TimeoutError) as error:
                self.closed(getattr(error, "code", None), f"{type(error).__name__}: {error}")

    def closed(self, code: Optional[int], reason: str) -> None:
        if self.joined and self.joined[-1][1] is None:
            self.joined[-1][1] = time.time()
        if not self.stopping:
            self.closes.append((time.time(), code, reason))

    async def set_auth(self, token: str) -> None:
        """A refreshed access token, sent to the joined channel as the clients' setAuth does (and
        used for the next join)."""
        self.token = token
        if self.ws is not None and self.is_joined:
            try:
                await self.ws.send(json.dumps({"topic": self.topic, "event": "access_token", "ref": self.next_ref(), "payload": {"access_token": token}}))
            except websockets.WebSocketException:
                pass  # closed meanwhile: the rejoin sends the new token

    async def heartbeat(self, ws) -> None:
        while True:
            await asyncio.sleep(20)
            await ws.send(json.dumps({"topic": "phoenix", "event": "heartbeat", "ref": self.next_ref(), "payload": {}}))

    @property
    def is_joined(self) -> bool:
        return bool(self.joined) and self.joined[-1][1] is None

    def covered(self, start: float, end: float) -> bool:
        """Joined on one connection throughout [start, end]."""
        return any(joined <= start and (left is None or left >= end) for joined, left in self.joined)


class Sockets:
    def __init__(self, url: str, members: list[User], circle: str) -> None:
        self.sockets = [PhoenixSocket(index, url, member.access_token, circle) for index, member in enumerate(members)]
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="sockets", daemon=True)
        self.tasks: list[asyncio.Future] = []

    def start(self, timeout: float = 60) -> None:
        self.thread.start()
        self.tasks = [asyncio.run_coroutine_threadsafe(socket.run(), self.loop) for socket in self.sockets]
        wait_for("every socket to join its channel", lambda: all(s.is_joined for s in self.sockets), timeout=timeout)

    def stop(self) -> None:
        for socket in self.sockets:
            socket.stopping = True
        for task in self.tasks:
            task.cancel()
        time.sleep(1)  # the cancellations reach the tasks before the loop stops
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


# ------------------------------------------------------------------------------------ restarts


@dataclass
class Restart:
    instance: str
    readiness_off_after: Optional[float] = None   # SIGTERM -> /ready 503
    out_of_rotation_after: Optional[float] = None  # SIGTERM -> the gateway stopped routing to it
    exited_after: Optional[float] = None           # SIGTERM -> the process gone
    back_after: Optional[float] = None             # SIGTERM -> ready and in rotation again


def restart(service: str, replica: int, timeout: float) -> Restart:
    """Stops one replica as Kubernetes does (SIGTERM; its pre-stop pause; the grace) and waits
    until scripts/run started it again and the gateway routes to it."""
    instance, port = instance_name(service, replica), instance_port(service, replica)
    pid = pid_of(instance)
    assert alive(pid), f"colony-{instance} is not running (pid {pid})"
    result = Restart(instance)
    start = time.monotonic()
    os.kill(pid, signal.SIGTERM)
    deadline = start + timeout
    while alive(pid) and time.monotonic() < deadline:
        now = time.monotonic() - start
        if result.readiness_off_after is None and ready_status(port) == 503:
            result.readiness_off_after = now
        if result.out_of_rotation_after is None and instance not in in_rotation():
            result.out_of_rotation_after = now
        time.sleep(0.05)
    if alive(pid):
        raise TimeoutError(f"colony-{instance} did not exit within {timeout:g}s of SIGTERM")
    result.exited_after = time.monotonic() - start
    if result.out_of_rotation_after is None and instance not in in_rotation():
        result.out_of_rotation_after = result.exited_after
    wait_for(f"colony-{instance} to be started again and back in rotation",
             lambda: pid_of(instance) not in (None, pid) and alive(pid_of(instance)) and ready_status(port) == 200 and instance in in_rotation(),
             timeout=timeout, interval=0.2)
    result.back_after = time.monotonic() - start
    return result


def kill(service: str, replica: int, timeout: float) -> tuple[float, float]:
    """SIGKILL: (killed at, back at), wall clock."""
    instance, port = instance_name(service, replica), instance_port(service, replica)
    pid = pid_of(instance)
    assert alive(pid), f"colony-{instance} is not running"
    killed = time.time()
    os.kill(pid, signal.SIGKILL)
    wait_for(f"colony-{instance} to come back after SIGKILL",
             lambda: pid_of(instance) not in (None, pid) and ready_status(port) == 200 and instance in in_rotation(), timeout=timeout, interval=0.2)
    return killed, time.time()


# ------------------------------------------------------------------------------------ report


def summarize_requests(outcomes: list[Outcome], phase: str) -> dict[str, Any]:
    chosen = [o for o in outcomes if o.phase == phase]
    failed = [o for o in chosen if not o.ok]
    by_journey: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for o in chosen:
        by_journey[o.journey][0] += 1
        by_journey[o.journey][1] += 0 if o.ok else 1
    return {"requests": len(chosen), "failed": len(failed), "by_journey": {k: {"requests": v[0], "failed": v[1]} for k, v in sorted(by_journey.items())},
            "failures": [o.__dict__ for o in failed]}


def classify_changes(world: World, sockets: Sockets, settle: float) -> dict[str, Any]:
    received = lost = doubled = gap = 0
    lost_examples = []
    with world.posts_lock:
        posts = list(world.posts)
    for post_id, sent, answered in posts:
        for socket in sockets.sockets:
            count = socket.received.get(post_id, 0)
            if count >= 1:
                received += 1
            if count > 1:
                doubled += 1
            if count == 0:
                if socket.covered(sent, answered + settle):
                    lost += 1
                    if len(lost_examples) < 20:
                        lost_examples.append({"post": post_id, "socket": socket.index, "sent": sent, "answered": answered})
                else:
                    gap += 1
    return {"posts": len(posts), "sockets": len(sockets.sockets), "expected": len(posts) * len(sockets.sockets), "received": received,
            "lost": lost, "doubled": doubled, "missed_in_reconnect": gap, "lost_examples": lost_examples}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicas", type=int, default=int(os.environ.get("COLONY_REPLICAS", "2")))
    parser.add_argument("--services", default=",".join(SERVICES), help="the services whose replicas are restarted, in order")
    parser.add_argument("--sockets", type=int, default=8, help="realtime sockets (members of the circle)")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between a journey worker's steps")
    parser.add_argument("--kill", default="circles,realtime", help="services one replica of which is SIGKILLed after the rolling restart ('' for none)")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds after a post's answer its change must have reached a joined socket")
    parser.add_argument("--timeout", type=float, default=120.0, help="per replica: its stop, and its return")
    parser.add_argument("--report", default=str(LOCAL / "logs" / "rolling-restart-report.json"))
    args = parser.parse_args()

    gateway = os.environ.get("COLONY_GATEWAY_URL", f"http://127.0.0.1:{os.environ.get('COLONY_GATEWAY_PORT', '8080')}")
    stack = Stack(gateway=gateway, keys=read_anon_keys(Path(os.environ.get("COLONY_API_KEYS_FILE", LOCAL / "api-keys.txt"))),
                  mail_dir=Path(os.environ.get("COLONY_MAIL_DIR", LOCAL / "mail")))
    api = Api(stack)
    log("making the journeys' users, circle, group, hive, spot and project")
    world = make_world(api, args.sockets)
    recorder = Recorder()
    ws_url = gateway.replace("http://", "ws://").replace("https://", "wss://") + f"/realtime/v1/websocket?apikey={stack.keys['mycirclee']}&vsn=1.0.0"
    sockets = Sockets(ws_url, world.members, world.circle)
    log(f"{len(sockets.sockets)} realtime sockets joining the circle's posts")
    sockets.start()
    load = Load(stack, journeys(world, stack, recorder), args.interval)
    load.start()
    time.sleep(10)  # the warm-up: every journey under way
    warm = summarize_requests(recorder.outcomes, "warm-up")
    log(f"warm-up: {warm['requests']} requests, {warm['failed']} failed")

    restarts: list[Restart] = []
    recorder.phase = "rolling"
    rolling_started = time.monotonic()
    problems: list[str] = []
    try:
        for service in [s for s in args.services.split(",") if s]:
            for replica in range(args.replicas):
                result = restart(service, replica, args.timeout)
                restarts.append(result)
                log(f"colony-{result.instance}: not ready after {result.readiness_off_after or -1:.2f}s, out of rotation after "
                    f"{result.out_of_rotation_after or -1:.2f}s, exited after {result.exited_after:.2f}s, back after {result.back_after:.2f}s")
                time.sleep(2)
    except (TimeoutError, AssertionError) as error:
        problems.append(str(error))
        log(f"rolling restart stopped: {error}")
    rolling_seconds = time.monotonic() - rolling_started
    time.sleep(args.settle)

    kills = []
    recorder.phase = "sigkill"
    for service in [s for s in args.kill.split(",") if s]:
        replica = args.replicas - 1
        try:
            killed_at, back_at = kill(service, replica, args.timeout)
            kills.append({"instance": instance_name(service, replica), "killed_at": killed_at, "back_at": back_at})
            log(f"colony-{instance_name(service, replica)} SIGKILLed; back in rotation after {back_at - killed_at:.1f}s")
        except (TimeoutError, AssertionError) as error:
            problems.append(str(error))
        time.sleep(3)
    recorder.phase = "after"
    time.sleep(args.settle)
    load.stop()
    time.sleep(args.settle)  # the last posts' changes
    changes = classify_changes(world, sockets, args.settle)
    socket_figures = {
        "sockets": len(sockets.sockets),
        "closes": sum(len(s.closes) for s in sockets.sockets),
        "reconnects": sum(s.reconnects for s in sockets.sockets),
        "joined_at_end": sum(1 for s in sockets.sockets if s.is_joined),
        "join_failures": [f for s in sockets.sockets for f in s.join_failures][:10],
        "close_codes": dict(collections.Counter(str(code) for s in sockets.sockets for _, code, _ in s.closes)),
    }
    sockets.stop()

    rolling = summarize_requests(recorder.outcomes, "rolling")
    sigkill = summarize_requests(recorder.outcomes, "sigkill")
    after = summarize_requests(recorder.outcomes, "after")
    # A SIGKILL may fail the writes the replica held (POST and PATCH, which the gateway does not send
    # twice); an idempotent request failing is a fault of the gateway's retries.
    killed_failures = [f for f in sigkill["failures"] if f["method"] not in ("POST", "PATCH")]

    report = {"replicas": args.replicas, "rolling_seconds": rolling_seconds, "restarts": [r.__dict__ for r in restarts],
              "warm_up": warm, "rolling": rolling, "sigkill": {**sigkill, "kills": kills}, "after": after,
              "sockets": socket_figures, "changes": changes, "problems": problems}
    Path(args.report).parent.mkdir(parents=True, exist_ok=True)
    Path(args.report).write_text(json.dumps(report, indent=2, default=str))

    print()
    print(f"Rolling restart: {len(restarts)} replicas ({args.replicas} of each of {len({r.instance.split('-')[0] for r in restarts})} services), one at a time, in {rolling_seconds:.0f}s")
    print()
    print("| replica | /ready 503 after | out of rotation after | exited after | back after |")
    print("|---|---:|---:|---:|---:|")
    for r in restarts:
        fmt = lambda v: "—" if v is None else f"{v:.2f} s"  # noqa: E731
        print(f"| colony-{r.instance} | {fmt(r.readiness_off_after)} | {fmt(r.out_of_rotation_after)} | {fmt(r.exited_after)} | {fmt(r.back_after)} |")
    print()
    print("| phase | requests | failed |")
    print("|---|---:|---:|")
    for name, figures in (("warm-up", warm), ("rolling restart", rolling), ("SIGKILL round", sigkill), ("after", after)):
        print(f"| {name} | {figures['requests']:,} | {figures['failed']} |")
    print()
    print("| journey | requests (rolling) | failed |")
    print("|---|---:|---:|")
    for journey, figures in rolling["by_journey"].items():
        print(f"| {journey} | {figures['requests']:,} | {figures['failed']} |")
    print()
    print("| realtime | |")
    print("|---|---:|")
    print(f"| sockets | {socket_figures['sockets']} |")
    print(f"| closed by the server (codes {socket_figures['close_codes']}) | {socket_figures['closes']} |")
    print(f"| reconnects | {socket_figures['reconnects']} |")
    print(f"| joined to their channel at the end | {socket_figures['joined_at_end']} |")
    print(f"| posts answered 201 × sockets | {changes['expected']:,} |")
    print(f"| changes received | {changes['received']:,} |")
    print(f"| lost (socket joined throughout) | {changes['lost']} |")
    print(f"| doubled | {changes['doubled']} |")
    print(f"| missed during a reconnect (no replay in the protocol) | {changes['missed_in_reconnect']} |")
    print()
    for failure in (rolling["failures"] + sigkill["failures"])[:20]:
        print(f"  failed: {failure['phase']} {failure['method']} {failure['path']} -> {failure['status']} {failure['detail'][:160]}")

    verdicts = {
        "rolling restart: no failed request": rolling["failed"] == 0 and not problems,
        "no change lost": changes["lost"] == 0,
        "no change doubled": changes["doubled"] == 0,
        "every socket joined at the end": socket_figures["joined_at_end"] == socket_figures["sockets"] and not socket_figures["join_failures"],
        "SIGKILL: only held writes failed": not killed_failures,
    }
    print()
    for name, passed in verdicts.items():
        print(f"  {'ok  ' if passed else 'FAIL'} {name}")
    for problem in problems:
        print(f"  problem: {problem}")
    log(f"report: {args.report}")
    return 0 if all(verdicts.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
