"""Serializer 2.0.0's binary frames through the gateway, byte for byte as supabase-swift's RealtimeV2
writes and reads them (issue 33): supabase-swift cannot run on Linux (its WebSocket is
URLSession's), so this client writes the same bytes.

The layout is supabase-swift's `RealtimeSerializer` (Sources/RealtimeV2/RealtimeSerializer.swift):
`_encodeBroadcastPush(joinRef:ref:topic:event:encoding:payload:)` writes a user broadcast push
(kind 3) as `[3, len(join_ref), len(ref), len(topic), len(event), len(metadata)=0, encoding]` then
the fields and the payload (`JSONEncoder().encode(jsonPayload)` for `broadcast(event:message:)`, raw
bytes for `broadcast(event:data:)`), and `decodeBinary(_:)` reads a user broadcast (kind 4) as
`[4, len(topic), len(event), len(metadata), encoding]` then the fields and the payload. The server
side is Supabase Realtime's `RealtimeWeb.Socket.V2Serializer`; the ack is a text `phx_reply`.

Also: the heartbeat with `"ref":1e300` that once killed colony-realtime, and a message over the
1 MiB frame limit, which ends with a close frame (1009, with a reason) rather than a reset."""

from __future__ import annotations

import base64
import json
import os
import socket as tcp
import struct
import time
from urllib.parse import urlsplit
from typing import Any, Optional

import httpx
import pytest
import websockets
from websockets.sync.client import ClientConnection, connect

from e2e_support import EVENTUAL_TIMEOUT, Api, Stack, User, expect

USER_BROADCAST_PUSH = 3
USER_BROADCAST = 4
JSON_ENCODING = 1
BINARY_ENCODING = 0


def encode_broadcast_push(join_ref: Optional[str], ref: Optional[str], topic: str, event: str, payload: bytes, encoding: int) -> bytes:
    """supabase-swift's `RealtimeSerializer._encodeBroadcastPush`: nil refs are empty, no metadata."""
    fields = [(join_ref or "").encode(), (ref or "").encode(), topic.encode(), event.encode(), b""]
    assert all(len(field) <= 255 for field in fields)
    return bytes([USER_BROADCAST_PUSH, *(len(field) for field in fields), encoding]) + b"".join(fields) + payload


def swift_json(value: dict) -> bytes:
    """`JSONEncoder().encode` of a one-level object of strings without `/` (which it would escape)."""
    assert "/" not in json.dumps(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def decode_user_broadcast(frame: bytes) -> tuple[str, str, int, bytes]:
    """supabase-swift's `RealtimeSerializer.decodeBinary`: topic, event, encoding, payload."""
    assert frame[0] == USER_BROADCAST, frame[:8]
    topic_size, event_size, metadata_size, encoding = frame[1], frame[2], frame[3], frame[4]
    offset = 5
    topic = frame[offset:offset + topic_size].decode()
    offset += topic_size
    event = frame[offset:offset + event_size].decode()
    offset += event_size + metadata_size
    return topic, event, encoding, frame[offset:]


class Socket:
    """A raw socket at serializer `vsn`: every frame received is kept."""

    def __init__(self, stack: Stack, app: str, vsn: str = "2.0.0") -> None:
        url = stack.gateway.replace("http://", "ws://") + f"/realtime/v1/websocket?apikey={stack.keys[app]}&vsn={vsn}"
        self.vsn = vsn
        self.socket: ClientConnection = connect(url, open_timeout=30, max_size=1 << 23, compression=None, proxy=None)
        self.frames: list[Any] = []
        self.closed: Optional[websockets.ConnectionClosed] = None

    def send(self, frame: Any) -> None:
        self.socket.send(frame)

    def message(self, join_ref: Optional[str], ref: Optional[str], topic: str, event: str, payload: Any) -> None:
        if self.vsn == "2.0.0":
            self.send(json.dumps([join_ref, ref, topic, event, payload]))
        else:
            self.send(json.dumps({"join_ref": join_ref, "ref": ref, "topic": topic, "event": event, "payload": payload}))

    def wait(self, what: str, predicate, timeout: float = EVENTUAL_TIMEOUT) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            for frame in self.frames:
                if predicate(frame):
                    return frame
            left = deadline - time.monotonic()
            if left <= 0 or self.closed:
                pytest.fail(f"timed out waiting for {what}; closed: {self.closed!r}; last received: {self.frames[-5:]!r}", pytrace=False)
            try:
                self.frames.append(self.socket.recv(timeout=min(left, 0.5)))
            except TimeoutError:
                continue
            except websockets.ConnectionClosed as closed:
                self.closed = closed

    def drain(self, seconds: float) -> None:
        """Keeps what arrives for `seconds`."""
        deadline = time.monotonic() + seconds
        while not self.closed and (left := deadline - time.monotonic()) > 0:
            try:
                self.frames.append(self.socket.recv(timeout=left))
            except TimeoutError:
                return
            except websockets.ConnectionClosed as closed:
                self.closed = closed

    def reply(self, ref: str) -> Any:
        def matches(frame: Any) -> bool:
            return isinstance(frame, str) and self.decode(frame)["event"] == "phx_reply" and self.decode(frame)["ref"] == ref
        return self.decode(self.wait(f"the reply to {ref}", matches))

    def decode(self, text: str) -> dict:
        value = json.loads(text)
        if self.vsn == "2.0.0":
            return dict(zip(("join_ref", "ref", "topic", "event", "payload"), value))
        return value

    def join(self, topic: str, user: User, ref: str = "1") -> dict:
        """Joins once realtime knows the membership (it arrives through Kafka); the reply's payload."""
        config = {"broadcast": {"ack": True, "self": False}, "presence": {"key": ""}, "postgres_changes": [], "private": False}
        deadline = time.monotonic() + EVENTUAL_TIMEOUT
        attempt = 0
        while True:
            attempt += 1
            join_ref = ref if attempt == 1 else f"{ref}.{attempt}"
            self.message(join_ref, join_ref, topic, "phx_join", {"config": config, "access_token": user.access_token})
            payload = self.reply(join_ref)["payload"]
            if payload["status"] == "ok" or time.monotonic() > deadline:
                return payload
            time.sleep(0.5)

    def close(self) -> None:
        self.socket.close()


def circle_of_two(api: Api) -> tuple[User, User, str]:
    owner = api.sign_up_confirmed("mycirclee", "rt-binary-owner")
    member = api.sign_up_confirmed("mycirclee", "rt-binary-member")
    circle = expect(owner.post("/circles/v1/circles", json={"name": "Binary frames"}), 201)["id"].lower()
    code = expect(owner.post(f"/circles/v1/circles/{circle}/invites"), 201)["code"]
    expect(member.post("/circles/v1/invites/claim", json={"code": code}), 200)
    return owner, member, circle


def test_two_v2_clients_exchange_a_binary_broadcast_with_ack(api: Api, stack: Stack):
    owner, member, circle = circle_of_two(api)
    topic = f"realtime:circle:{circle}"
    sender, receiver, legacy = Socket(stack, "mycirclee"), Socket(stack, "mycirclee"), Socket(stack, "mycirclee", vsn="1.0.0")
    try:
        assert sender.join(topic, owner)["status"] == "ok"
        assert receiver.join(topic, member)["status"] == "ok"
        assert legacy.join(topic, member)["status"] == "ok"

        # supabase-swift's own test vector (RealtimeSerializerTests.encodeBroadcastPush_jsonPayload), byte
        # for byte: decoded by the server, answered "unmatched topic" since nobody joined realtime:test.
        vector = bytes([3, 1, 1, 13, 8, 0, 1]) + b"12realtime:testmy_event" + b'{"hello":"world"}'
        assert encode_broadcast_push("1", "2", "realtime:test", "my_event", swift_json({"hello": "world"}), JSON_ENCODING) == vector
        sender.send(vector)
        assert sender.reply("2")["payload"] == {"status": "error", "response": {"reason": "unmatched topic"}}

        # RealtimeChannelV2.broadcast(event:message:) at vsn 2.0.0 on the joined channel: join ref "1", the socket's next ref.
        message = {"text": "hello from swift", "emoji": "👋"}
        push = encode_broadcast_push("1", "3", topic, "wave", swift_json(message), JSON_ENCODING)
        sender.send(push)
        ack = sender.reply("3")
        assert ack == {"join_ref": "1", "ref": "3", "topic": topic, "event": "phx_reply", "payload": {"status": "ok", "response": {}}}, ack
        delivered = receiver.wait("the user broadcast", lambda frame: isinstance(frame, bytes))
        assert delivered == bytes([USER_BROADCAST, len(topic.encode()), 4, 0, JSON_ENCODING]) + topic.encode() + b"wave" + swift_json(message)
        assert decode_user_broadcast(delivered) == (topic, "wave", JSON_ENCODING, swift_json(message))
        # A 1.0.0 socket gets it as Supabase converts it: {event, payload, type}.
        converted = legacy.wait("the converted broadcast", lambda frame: isinstance(frame, str) and json.loads(frame)["event"] == "broadcast")
        assert json.loads(converted)["payload"] == {"event": "wave", "payload": message, "type": "broadcast"}
        assert not any(isinstance(frame, bytes) for frame in sender.frames), "self is off: the sender gets no copy"

        # broadcast(event:data:): a binary payload, to 2.0.0 sockets only.
        data = bytes([0, 1, 2, 0xFF, 0xFE])
        sender.send(encode_broadcast_push("1", "4", topic, "bytes", data, BINARY_ENCODING))
        assert sender.reply("4")["payload"]["status"] == "ok"
        binary = receiver.wait("the binary broadcast", lambda frame: isinstance(frame, bytes) and b"bytes" in frame)
        assert decode_user_broadcast(binary) == (topic, "bytes", BINARY_ENCODING, data)
        legacy.drain(0.5)
        assert not any(isinstance(frame, str) and "bytes" in frame for frame in legacy.frames)
    finally:
        for socket in (sender, receiver, legacy):
            socket.close()


def test_the_1e300_heartbeat_and_an_oversized_message(stack: Stack):
    socket = Socket(stack, "mycirclee", vsn="1.0.0")
    try:
        socket.send('{"topic":"phoenix","event":"heartbeat","payload":{},"ref":1e300}')
        assert socket.reply("1e+300")["payload"]["status"] == "ok"
        socket.send("[" * 100_000)
        socket.send(b"\xff\xfe")
        socket.send('{"topic":"phoenix","event":"heartbeat","payload":{},"ref":"after"}')
        assert socket.reply("after")["payload"]["status"] == "ok"
    finally:
        socket.close()
    big = Socket(stack, "mycirclee")
    big.send('[null,"big","phoenix","heartbeat",{"x":"' + "x" * (1 << 20) + '"}]')
    deadline = time.monotonic() + 30
    while big.closed is None and time.monotonic() < deadline:
        big.drain(1)
    assert big.closed is not None, "the socket stayed open"
    assert big.closed.rcvd is not None, f"no close frame: {big.closed!r}"
    assert big.closed.rcvd.code == 1009 and big.closed.rcvd.reason == "message too big: at most 1048576 bytes", big.closed.rcvd
    after = Socket(stack, "mycirclee")
    try:
        after.message(None, "alive", "phoenix", "heartbeat", {})
        assert after.reply("alive")["payload"]["status"] == "ok"
    finally:
        after.close()


def masked_text_frame(payload: bytes) -> bytes:
    """One client text frame (RFC 6455 5.2), masked, with the 64-bit length for payloads over 64 KiB."""
    mask = os.urandom(4)
    length = len(payload)
    header = bytes([0x81]) + (bytes([0x80 | length]) if length < 126 else bytes([0x80 | 126]) + struct.pack(">H", length) if length < 1 << 16
                              else bytes([0x80 | 127]) + struct.pack(">Q", length))
    key = int.from_bytes((mask * (length // 4 + 1))[:length], "big")
    return header + mask + (int.from_bytes(payload, "big") ^ key).to_bytes(length, "big")


@pytest.mark.parametrize("vsn", ["1.0.0", "2.0.0"])
def test_an_oversized_message_sent_with_the_handshake_ends_with_a_close_frame(stack: Stack, vsn: str):
    """The upgrade request and a message over the limit in one write, as a client on a fast link sends
    them: the message arrives before the socket's own handlers are in place, and both realtime and the
    gateway close while the client is still sending. Each close must linger (read the rest) so the
    client gets the close frame and a FIN, never a TCP reset, which makes it lose the close frame."""
    gateway = urlsplit(stack.gateway)
    big = masked_text_frame(b'{"topic":"phoenix","event":"heartbeat","payload":{"x":"' + b"x" * (1 << 20) + b'"},"ref":"1"}')
    outcomes: list[str] = []
    for _ in range(20):
        upgrade = (f"GET /realtime/v1/websocket?apikey={stack.keys['mycirclee']}&vsn={vsn} HTTP/1.1\r\nHost: {gateway.netloc}\r\n"
                   f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\n"
                   "Sec-WebSocket-Version: 13\r\n\r\n").encode()
        received = b""
        with tcp.create_connection((gateway.hostname, gateway.port or 80), timeout=EVENTUAL_TIMEOUT) as connection:
            try:
                connection.sendall(upgrade + big)
                while chunk := connection.recv(1 << 16):
                    received += chunk
                ending = "fin"
            except (ConnectionResetError, BrokenPipeError) as error:
                ending = type(error).__name__
        head, _, frames = received.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 101"), head[:200]
        code = struct.unpack(">H", frames[2:4])[0] if frames[:1] == b"\x88" and len(frames) >= 4 else None
        outcomes.append(f"{code} {ending}")
    assert outcomes == ["1009 fin"] * 20, outcomes


def test_an_upgrade_after_plain_requests_to_realtime(stack: Stack):
    """Plain HTTP requests to realtime (a refused apikey, an unknown path, TRACE) must not leave a
    gateway connection that a later WebSocket upgrade reuses: the server upgrades only a fresh
    connection and answers a reused one 307, which no client follows."""
    with httpx.Client(base_url=stack.gateway, timeout=30.0) as http:
        for _ in range(20):
            assert http.get("/realtime/v1/websocket", params={"apikey": "made-up"}).status_code == 401
            assert http.request("TRACE", "/realtime/v1/no-such-route").status_code in (404, 405)
    for _ in range(20):
        socket = Socket(stack, "mycirclee")
        try:
            socket.message(None, "up", "phoenix", "heartbeat", {})
            assert socket.reply("up")["payload"]["status"] == "ok"
        finally:
            socket.close()
