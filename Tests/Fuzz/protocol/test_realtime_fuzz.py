"""Protocol fuzz of the realtime WebSocket (issue 33.2), through the gateway, as any app's client can
reach it: serializer 1.0.0 objects and 2.0.0 arrays, 2.0.0 binary frames (pushes and user broadcast
pushes laid out as supabase-swift's RealtimeV2 writes them, with lying lengths too), joins with
arbitrary configs and postgres_changes filters, broadcast, presence, access_token refreshes,
arbitrary refs, topics, events and payloads (numbers past any integer, deep nesting, invalid UTF-8),
fragmented and oversized messages and plain garbage. Sockets open with an app's anon key; some
cases join as a signed-in member of a circle, so broadcast and presence reach other sockets.

A case fails when the upgrade answers a 5xx, when a socket the server ends gets no close frame, when
the service answers no heartbeat within 10 s afterwards (on the case's own socket when it is still
open, and always on a fresh one), or when the realtime process or the gateway died (checked after
every case; the protocol conftest checks every process after each test).

Examples per test: COLONY_PROTOCOL_FUZZ_EXAMPLES (150); derandomized unless COLONY_FUZZ_SEED is set.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Optional

import pytest
import websockets
from hypothesis import given
from hypothesis import strategies as st
from websockets.sync.client import ClientConnection, connect

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "EndToEnd"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e_support import Api, Stack, User, expect, read_anon_keys  # noqa: E402
from fuzz_support import EXAMPLES, TIMEOUT, fuzz  # noqa: E402
from stack_processes import dead, stack_pids  # noqa: E402

FRAME_LIMIT = 1 << 20
STATS = {"cases": 0, "text": 0, "binary": 0, "fragmented": 0, "server_closes": 0, "upgrades_refused": 0,
         "process deaths": 0, "5xx": 0, "timeouts": 0, "closes without a close frame": 0}


def failed(kind: str, message: str) -> "Failure":
    STATS[kind] += 1
    return Failure(message)


def protocol_fuzz_summary() -> Optional[str]:
    """The line the protocol conftest prints at the end of the session."""
    if not STATS["cases"]:
        return None
    frames = STATS["text"] + STATS["binary"]
    return (f"realtime protocol fuzz: {EXAMPLES} examples per test, {STATS['cases']} cases, {frames} frames "
            f"({STATS['text']} text, {STATS['binary']} binary, {STATS['fragmented']} fragmented messages), "
            f"{STATS['server_closes']} sockets ended by the server with a close frame, {STATS['upgrades_refused']} upgrades refused (4xx); "
            f"{STATS['process deaths']} process deaths, {STATS['5xx']} 5xx, {STATS['timeouts']} timeouts, "
            f"{STATS['closes without a close frame']} closes without a close frame")


class Failure(AssertionError):
    pass


class TextBytes(bytes):
    """Bytes sent as a text frame (invalid UTF-8 is not a str)."""


# ---------------------------------------------------------------------------------------- the stack


class Realtime:
    """The gateway's realtime socket, the anon key of MyCirclee, and a signed-in owner and member of a circle."""

    def __init__(self, stack: Stack, owner: User, member: User, circle: str) -> None:
        self.stack = stack
        self.key = stack.keys["mycirclee"]
        self.owner, self.member, self.circle = owner, member, circle
        self.pids = {name: pid for name, pid in stack_pids().items() if name in ("colony-realtime", "nginx")}

    def url(self, vsn: Optional[str]) -> str:
        return self.stack.gateway.replace("http://", "ws://") + f"/realtime/v1/websocket?apikey={self.key}" + (f"&vsn={vsn}" if vsn else "")

    def open(self, vsn: Optional[str]) -> ClientConnection:
        try:
            return connect(self.url(vsn), open_timeout=TIMEOUT, close_timeout=2, max_size=1 << 23, compression=None, proxy=None)
        except websockets.InvalidStatus as refused:
            status = refused.response.status_code
            if status >= 500:
                raise failed("5xx", f"the upgrade answered {status}: {refused.response.body[:300]!r}")
            raise
        except TimeoutError as error:
            raise failed("timeouts", f"the upgrade was not answered within {TIMEOUT:g}s") from error

    def check_alive(self, case: str) -> None:
        gone = dead(self.pids)
        if gone:
            raise failed("process deaths", f"{', '.join(gone)} died after: {case}")

    def heartbeat(self, socket: ClientConnection, vsn: Optional[str], case: str) -> None:
        """Sends a heartbeat and waits up to 10 s for its reply (frames before it are skipped)."""
        ref = f"hb-{uuid.uuid4().hex[:8]}"
        socket.send(json.dumps([None, ref, "phoenix", "heartbeat", {}]) if vsn == "2.0.0"
                    else json.dumps({"topic": "phoenix", "event": "heartbeat", "payload": {}, "ref": ref}))
        deadline = time.monotonic() + TIMEOUT
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise failed("timeouts", f"no heartbeat reply within {TIMEOUT:g}s after: {case}")
            try:
                frame = socket.recv(timeout=left)
            except TimeoutError:
                continue
            if isinstance(frame, str) and ref in frame and "phx_reply" in frame:
                return

    def fresh_heartbeat(self, case: str) -> None:
        vsn = "2.0.0"
        socket = self.open(vsn)
        try:
            self.heartbeat(socket, vsn, case)
        finally:
            socket.close()


@pytest.fixture(scope="module")
def realtime() -> Realtime:
    port = os.environ.get("COLONY_GATEWAY_PORT", "8080")
    gateway = os.environ.get("COLONY_GATEWAY_URL", f"http://127.0.0.1:{port}").rstrip("/")
    root = Path(__file__).resolve().parents[3]
    keys = read_anon_keys(Path(os.environ.get("COLONY_API_KEYS_FILE", root / ".local" / "api-keys.txt")))
    stack = Stack(gateway=gateway, keys=keys, mail_dir=Path(os.environ.get("COLONY_MAIL_DIR", root / ".local" / "mail")))
    api = Api(stack)
    owner = api.sign_up_confirmed("mycirclee", "rt-fuzz-owner")
    member = api.sign_up_confirmed("mycirclee", "rt-fuzz-member")
    circle = expect(owner.post("/circles/v1/circles", json={"name": "Realtime fuzz"}), 201)["id"].lower()
    code = expect(owner.post(f"/circles/v1/circles/{circle}/invites"), 201)["code"]
    expect(member.post("/circles/v1/invites/claim", json={"code": code}), 200)
    yield Realtime(stack, owner, member, circle)
    api.close()


# --------------------------------------------------------------------------------------- strategies

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(1 << 70), max_value=1 << 70),
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([1e300, -1e300, 1e19, -1e19, 2.0 ** 63, -(2.0 ** 63), 5e-324]),
    st.text(max_size=40),
)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=20)
refs = st.one_of(st.none(), st.text(max_size=20), st.integers(min_value=-(1 << 70), max_value=1 << 70),
                 st.sampled_from([1e300, -1e300, 1e19, 1.5, True, [], {}]))
events = st.one_of(st.sampled_from(["phx_join", "phx_leave", "heartbeat", "broadcast", "presence", "access_token", "phx_reply", "system"]),
                   st.text(max_size=30))


def topics(circle: str) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(["phoenix", "realtime:", "realtime:lobby", f"realtime:circle:{circle}", f"realtime:circle:{circle.upper()}",
                         f"realtime:circle:{circle}:typing", f"realtime:circle:{uuid.uuid4()}", "realtime:group:not-a-uuid",
                         "realtime:hive:" + "x" * 300, "realtime:" + "é" * 100]),
        st.text(max_size=40).map(lambda text: "realtime:" + text),
        json_values,
    )


def fake_jwt(claims: dict) -> str:
    def part(value: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")
    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJl"


def tokens(rt: Realtime) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from([rt.key, rt.owner.access_token, rt.member.access_token, "", "garbage", "sb_publishable_x",
                         fake_jwt({"exp": -1e300, "sub": str(uuid.uuid4())}), fake_jwt({"exp": 1e300}), fake_jwt({"exp": "soon"}),
                         rt.owner.access_token[:-4] + "AAAA"]),
        json_values,
    )


filters = st.one_of(
    st.sampled_from(["id=eq.1", "circle_id=eq.{c}", "x=in.(a,b,\"c d\")", "n=gte.nan", "n=lt.1e400", "=eq.", "id=eq", "in.()",
                     "a=in.(" + ",".join(["1"] * 150) + ")", "id=neq." + "9" * 400]),
    st.text(max_size=60),
)


def configs(rt: Realtime) -> st.SearchStrategy[Any]:
    binding = st.fixed_dictionaries({}, optional={
        "event": st.one_of(st.sampled_from(["*", "INSERT", "update", "DELETE", "TRUNCATE"]), json_values),
        "schema": st.one_of(st.sampled_from(["public", "*", "auth"]), json_values),
        "table": st.one_of(st.sampled_from(["posts", "*", "circle_members", ""]), json_values),
        "filter": st.one_of(filters.map(lambda text: text.replace("{c}", rt.circle)), json_values),
    })
    return st.one_of(
        st.fixed_dictionaries({}, optional={
            "broadcast": st.one_of(st.fixed_dictionaries({}, optional={"ack": st.one_of(st.booleans(), json_values),
                                                                        "self": st.one_of(st.booleans(), json_values)}), json_values),
            "presence": st.one_of(st.fixed_dictionaries({}, optional={"key": st.one_of(st.text(max_size=20), json_values),
                                                                       "enabled": st.one_of(st.booleans(), json_values)}), json_values),
            "postgres_changes": st.one_of(st.lists(binding, max_size=25), json_values),
            "private": st.one_of(st.booleans(), json_values),
        }),
        json_values,
    )


def payloads(rt: Realtime, event: str) -> st.SearchStrategy[Any]:
    """A payload shaped for the event most of the time, anything otherwise."""
    shaped = {
        "phx_join": st.fixed_dictionaries({}, optional={"config": configs(rt), "access_token": tokens(rt)}),
        "broadcast": st.fixed_dictionaries({}, optional={"type": st.sampled_from(["broadcast", "x"]), "event": st.text(max_size=20),
                                                        "payload": json_values}),
        "presence": st.fixed_dictionaries({}, optional={"type": st.just("presence"), "event": st.sampled_from(["track", "untrack", "sync", ""]),
                                                       "payload": json_values}),
        "access_token": st.fixed_dictionaries({}, optional={"access_token": tokens(rt)}),
    }.get(event)
    return st.one_of(shaped, json_values) if shaped is not None else json_values


@st.composite
def phoenix_messages(draw, rt: Realtime) -> dict:
    event = draw(events)
    return {"join_ref": draw(refs), "ref": draw(refs), "topic": draw(topics(rt.circle)), "event": event, "payload": draw(payloads(rt, event))}


def encode_text(message: dict, shape: str, draw) -> str:
    if shape == "v1":
        body: Any = {key: message[key] for key in ("topic", "event", "payload", "ref", "join_ref")}
        for key in draw(st.lists(st.sampled_from(list(body)), max_size=2)):
            body.pop(key, None)  # a field missing
    else:
        body = [message["join_ref"], message["ref"], message["topic"], message["event"], message["payload"]]
        body = body[:draw(st.integers(min_value=3, max_value=5))] + draw(st.lists(json_values, max_size=2))
    return json.dumps(body, allow_nan=True)


def utf8(text: Any) -> bytes:
    return text.encode("utf-8", "surrogatepass") if isinstance(text, str) else json.dumps(text).encode()


@st.composite
def binary_frames(draw, rt: Realtime) -> bytes:
    """Kinds 0 and 3 as supabase-swift's `RealtimeSerializer` lays them out (kind, one length byte per
    field, the fields, the payload), with lengths that may lie, other kinds, and garbage."""
    def field(strategy) -> bytes:
        return utf8(draw(strategy))[:255]
    kind = draw(st.one_of(st.sampled_from([0, 3, 3, 3]), st.integers(min_value=0, max_value=255)))
    join_ref, ref = field(st.text(max_size=8)), field(st.text(max_size=8))
    topic, event = field(topics(rt.circle)), field(events)
    if draw(st.booleans()):
        topic = f"realtime:circle:{rt.circle}".encode()
    payload = draw(st.one_of(json_values.map(lambda value: json.dumps(value).encode()), st.binary(max_size=200)))
    if kind == 3:
        metadata = draw(st.one_of(st.just(b""), json_values.map(lambda value: json.dumps(value).encode()[:255]), st.binary(max_size=20)))
        encoding = draw(st.one_of(st.sampled_from([0, 1]), st.integers(min_value=0, max_value=255)))
        fields = [join_ref, ref, topic, event, metadata]
        header = [3] + [len(value) for value in fields] + [encoding]
    else:
        fields = [join_ref, ref, topic, event]
        header = [kind] + [len(value) for value in fields]
    if draw(st.integers(min_value=0, max_value=4)) == 0:  # a length that lies
        index = draw(st.integers(min_value=1, max_value=len(header) - 1))
        header[index] = draw(st.integers(min_value=0, max_value=255))
    frame = bytes(header) + b"".join(fields) + payload
    if draw(st.integers(min_value=0, max_value=5)) == 0:
        frame = frame[:draw(st.integers(min_value=0, max_value=len(frame)))]
    return frame


GARBAGE_TEXT = [
    "", "null", "[]", "{}", "NaN", "Infinity", "1e999", "[" * 100_000, "{\"a\":" * 50_000,
    '{"topic":"phoenix","event":"heartbeat","payload":{},"ref":1e300}', '[null,1e300,"phoenix","heartbeat",{}]',
    '{"topic":"phoenix","event":"heartbeat","payload":{},"ref":-1e300}', '{"topic":"phoenix","event":"heartbeat","ref":1e19}',
    '{"topic":"realtime:x","event":"phx_join","payload":{"config":{"postgres_changes":' + "[" * 70 + "]" * 70 + "}}}",
]


# --------------------------------------------------------------------------------------------- a case


def run_case(rt: Realtime, vsn: Optional[str], frames: list[Any], member: Optional[str]) -> None:
    """Opens a socket (optionally with a member joined on the circle first), sends the frames, reads
    what comes, then checks the service: heartbeats answered, close frames where the server ended
    the socket, processes alive."""
    STATS["cases"] += 1
    case = f"vsn={vsn} member={member} frames={[frame[:200] if isinstance(frame, (str, bytes)) else frame for frame in frames]!r}"[:3000]
    try:
        socket = rt.open(vsn)
    except websockets.InvalidStatus:
        STATS["upgrades_refused"] += 1
        rt.fresh_heartbeat(case)
        return
    closed = False
    try:
        if member is not None:
            token = rt.owner.access_token if member == "owner" else rt.member.access_token
            join = {"config": {"broadcast": {"ack": True, "self": True}, "presence": {"key": member}}, "access_token": token}
            topic = f"realtime:circle:{rt.circle}"
            socket.send(json.dumps(["1", "1", topic, "phx_join", join]) if vsn == "2.0.0"
                        else json.dumps({"topic": topic, "event": "phx_join", "payload": join, "ref": "1", "join_ref": "1"}))
        for frame in frames:
            if isinstance(frame, list):  # a fragmented message
                STATS["fragmented"] += 1
                STATS["binary" if isinstance(frame[0], bytes) else "text"] += 1
                socket.send(frame)
            elif isinstance(frame, TextBytes):
                STATS["text"] += 1
                socket.send(bytes(frame), text=True)
            else:
                STATS["binary" if isinstance(frame, bytes) else "text"] += 1
                socket.send(frame)
        # What the server answers (replies, broadcasts, a close) within a moment.
        deadline = time.monotonic() + 0.05
        while time.monotonic() < deadline:
            try:
                socket.recv(timeout=max(0.01, deadline - time.monotonic()))
            except TimeoutError:
                break
        rt.heartbeat(socket, vsn, case)
    except websockets.ConnectionClosed as ended:
        closed = True
        STATS["server_closes"] += 1
        if ended.rcvd is None:
            rt.check_alive(case)
            raise failed("closes without a close frame", f"the server ended the socket without a close frame after: {case}") from ended
    finally:
        if not closed:
            socket.close()
    rt.check_alive(case)
    rt.fresh_heartbeat(case)
    rt.check_alive(case)


vsns = st.sampled_from(["1.0.0", "2.0.0", "2.0.0", None])
members = st.sampled_from([None, None, "owner", "member"])


@fuzz
@given(data=st.data())
def test_phoenix_messages(realtime: Realtime, data):
    """1.0.0 objects and 2.0.0 arrays: joins with arbitrary configs and filters, broadcast, presence,
    access_token refreshes, leaves, heartbeats, with arbitrary refs, topics, events and payloads."""
    vsn = data.draw(vsns)
    messages = data.draw(st.lists(phoenix_messages(realtime), min_size=1, max_size=6))
    frames = [encode_text(message, data.draw(st.sampled_from(["v1", "v2"])), data.draw) for message in messages]
    run_case(realtime, vsn, frames, data.draw(members))


@fuzz
@given(data=st.data())
def test_binary_frames(realtime: Realtime, data):
    """2.0.0 binary frames (and binary frames on 1.0.0 sockets, read there as JSON), some fragmented."""
    vsn = data.draw(st.sampled_from(["2.0.0", "2.0.0", "2.0.0", "1.0.0"]))
    frames: list[Any] = data.draw(st.lists(binary_frames(realtime), min_size=1, max_size=6))
    if data.draw(st.integers(min_value=0, max_value=5)) == 0:
        whole = frames.pop()
        cut = data.draw(st.integers(min_value=0, max_value=len(whole)))
        frames.append([whole[:cut], whole[cut:]])
    run_case(realtime, vsn, frames, data.draw(members))


@fuzz
@given(data=st.data())
def test_garbage(realtime: Realtime, data):
    """Text that is not a message, invalid UTF-8, huge numbers, deep nesting, and messages over the
    1 MiB limit as one frame or as continuations (the server ends those with 1009 and a reason)."""
    vsn = data.draw(vsns)
    frame = data.draw(st.one_of(
        st.sampled_from(GARBAGE_TEXT),
        st.text(max_size=200),
        st.binary(max_size=300),
        st.sampled_from(["oversized", "oversized-fragments", "invalid-utf8"]),
    ))
    frames: list[Any]
    if frame == "oversized":
        frames = ['{"topic":"phoenix","event":"heartbeat","payload":{"x":"' + "x" * FRAME_LIMIT + '"},"ref":"1"}']
    elif frame == "oversized-fragments":
        frames = [[b"[" + b" " * (FRAME_LIMIT // 4)] * 5]
    elif frame == "invalid-utf8":
        frames = [TextBytes(b'{"topic":"phoenix","event":"\xff\xfe","payload":{},"ref":"1"}'), b'{"topic":"phoenix","event":"heartbeat","ref":"\xc0"}']
    else:
        frames = [frame]
    run_case(realtime, vsn, frames, data.draw(members))
