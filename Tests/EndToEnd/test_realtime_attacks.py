"""Realtime's channel authorization and quotas, attacked through the nginx gateway with the
settings `scripts/run` starts the stack with (the defaults): a made-up apikey, a non-member on a
circle's topic (join, broadcast, presence), a removed member's channel, the 1,001st channel, an
oversized presence meta and a broadcast flood. Each is refused the way Supabase Realtime refuses
it (its reply or close), and the service stays up for everyone else.

A raw Phoenix client (serializer 1.0.0 over `websockets`) is used where the official client
would retry or hide the server's answer."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any, Callable, Optional

import pytest
import websockets
from websockets.asyncio.client import connect

from e2e_support import EVENTUAL_TIMEOUT, Api, Stack, User, expect, wait_until


class Phoenix:
    """One socket: sends Phoenix messages, keeps everything it receives."""

    def __init__(self, socket) -> None:
        self.socket = socket
        self.received: list[dict] = []
        self.refs = itertools.count(1)
        self.closed: Optional[str] = None
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, stack: Stack, apikey: str) -> "Phoenix":
        url = stack.gateway.replace("http://", "ws://") + f"/realtime/v1/websocket?apikey={apikey}&vsn=1.0.0"
        return cls(await connect(url, max_size=1 << 22, open_timeout=30))

    async def _read(self) -> None:
        try:
            async for text in self.socket:
                self.received.append(json.loads(text))
        except websockets.ConnectionClosed as closed:
            self.closed = closed.rcvd.reason if closed.rcvd else "closed"
        else:
            self.closed = self.socket.close_reason or "closed"

    async def send(self, topic: str, event: str, payload: dict, join_ref: Optional[str] = None) -> str:
        ref = str(next(self.refs))
        await self.socket.send(json.dumps({"topic": topic, "event": event, "payload": payload, "ref": ref, "join_ref": join_ref or ref}))
        return ref

    async def wait(self, what: str, predicate: Callable[[dict], bool], timeout: float = EVENTUAL_TIMEOUT) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for message in self.received:
                if predicate(message):
                    return message
            await asyncio.sleep(0.05)
        pytest.fail(f"timed out waiting for {what}; last received: {self.received[-5:]}", pytrace=False)

    async def reply(self, ref: str) -> dict:
        return (await self.wait(f"the reply to {ref}", lambda m: m["event"] == "phx_reply" and m["ref"] == ref))["payload"]

    async def join(self, topic: str, token: str, config: Optional[dict] = None) -> dict:
        ref = await self.send(topic, "phx_join", {"config": config or {}, "access_token": token})
        return await self.reply(ref)

    async def close(self) -> None:
        await self.socket.close()
        self.reader.cancel()


PRESENCE_AND_ACK = {"broadcast": {"self": False, "ack": True}, "presence": {"key": ""}}


def make_circle(owner: User, members: list[User]) -> str:
    circle = expect(owner.post("/circles/v1/circles", json={"name": "Realtime attacks"}), 201)["id"].lower()
    for member in members:
        code = expect(owner.post(f"/circles/v1/circles/{circle}/invites"), 201)["code"]
        expect(member.post("/circles/v1/invites/claim", json={"code": code}), 200)
    return circle


def circle_of_two(api: Api, tag: str) -> tuple[User, User, str]:
    """An owner and a member of a new circle, and the circle's id."""
    owner = api.sign_up_confirmed("mycirclee", f"{tag}-owner")
    member = api.sign_up_confirmed("mycirclee", f"{tag}-member")
    return owner, member, make_circle(owner, [member])


async def joined(stack: Stack, topic: str, *users: User) -> list[Phoenix]:
    """A socket for each user, joined to the circle topic (broadcast acknowledged, presence on)."""
    sockets = []
    for user in users:
        socket = await Phoenix.open(stack, stack.keys["mycirclee"])
        assert (await join_when_member(socket, topic, user, PRESENCE_AND_ACK))["status"] == "ok"
        sockets.append(socket)
    return sockets


async def join_when_member(socket: Phoenix, topic: str, user: User, config: dict) -> dict:
    """Joins once realtime's projection has the membership (it arrives through Kafka)."""
    deadline = time.monotonic() + EVENTUAL_TIMEOUT
    while True:
        reply = await socket.join(topic, user.access_token, config)
        if reply["status"] == "ok" or time.monotonic() > deadline:
            return reply
        await asyncio.sleep(0.5)


def test_made_up_apikey_is_refused(api: Api, stack: Stack):
    plain = api.http.get("/realtime/v1/websocket", params={"apikey": "made-up-key"})
    assert plain.status_code == 401 and plain.json()["code"] == "invalid_api_key", plain.text
    assert api.http.get("/realtime/v1/websocket").json()["code"] == "no_api_key"
    user = api.sign_up_confirmed("mycirclee", "rt-apikey")

    async def attempt() -> None:
        # A user's own access token is not one of the pool's keys either. The upgrade is refused
        # (Hummingbird answers a refused upgrade 400; the same request without the upgrade says why, 401).
        for key in ("made-up-key", user.access_token):
            with pytest.raises(websockets.InvalidStatus) as refused:
                await Phoenix.open(stack, key)
            assert refused.value.response.status_code in (400, 401)
            assert api.http.get("/realtime/v1/websocket", params={"apikey": key}).json()["code"] == "invalid_api_key"
        socket = await Phoenix.open(stack, stack.keys["mycirclee"])
        assert (await socket.join("realtime:lobby", user.access_token))["status"] == "ok"
        await socket.close()

    asyncio.run(attempt())


def test_circle_topic_is_for_members_and_a_removed_member_is_closed_out(api: Api, stack: Stack):
    owner, member, circle = circle_of_two(api, "rt")
    outsider = api.sign_up_confirmed("mycirclee", "rt-outsider")
    topic = f"realtime:circle:{circle}"

    async def scenario() -> None:
        owner_socket, member_socket = await joined(stack, topic, owner, member)
        outsider_socket = await Phoenix.open(stack, stack.keys["mycirclee"])

        # The outsider: the join is refused with Supabase's words; broadcast and presence go nowhere.
        refused = await outsider_socket.join(topic, outsider.access_token, PRESENCE_AND_ACK)
        assert refused == {"status": "error", "response": {"reason": f"Unauthorized: You do not have permissions to read from this Channel topic: circle:{circle}"}}, refused
        spy = await outsider_socket.send(topic, "broadcast", {"type": "broadcast", "event": "spy", "payload": {"x": 1}})
        assert (await outsider_socket.reply(spy))["status"] == "error"
        track = await outsider_socket.send(topic, "presence", {"type": "presence", "event": "track", "payload": {"status": "lurking"}})
        assert (await outsider_socket.reply(track))["status"] == "error"

        # Members: a broadcast and a presence reach the other member.
        wave = await member_socket.send(topic, "broadcast", {"type": "broadcast", "event": "wave", "payload": {"n": 1}})
        assert (await member_socket.reply(wave))["status"] == "ok"
        await owner_socket.wait("the member's broadcast", lambda m: m["event"] == "broadcast" and m["payload"].get("event") == "wave")
        tracked = await member_socket.send(topic, "presence", {"type": "presence", "event": "track", "payload": {"status": "free"}})
        assert (await member_socket.reply(tracked))["status"] == "ok"
        await owner_socket.wait("the member's presence", lambda m: m["event"] == "presence_diff")
        assert not [m for m in outsider_socket.received if m["event"] in ("broadcast", "presence_diff", "presence_state")], outsider_socket.received

        # The owner removes the member: the member's channel is closed with Supabase's system error.
        removed = owner.delete(f"/circles/v1/circles/{circle}/members/{member.id}")
        assert removed.status_code in (200, 204), removed.text
        system = await member_socket.wait("the removed member's system error", lambda m: m["topic"] == topic and m["event"] == "system")
        assert system["payload"] == {"extension": "system", "status": "error", "channel": f"circle:{circle}",
                                     "message": f"You no longer have permission to read from this Channel topic: circle:{circle}"}, system
        await member_socket.wait("phx_close for the removed member", lambda m: m["topic"] == topic and m["event"] == "phx_close")
        assert (await member_socket.join(topic, member.access_token))["status"] == "error"
        after = await owner_socket.send(topic, "broadcast", {"type": "broadcast", "event": "after", "payload": {}})
        await owner_socket.reply(after)
        await asyncio.sleep(1)
        assert not [m for m in member_socket.received if m["event"] == "broadcast" and m["payload"].get("event") == "after"]
        for socket in (owner_socket, member_socket, outsider_socket):
            await socket.close()

    asyncio.run(scenario())


def test_quotas_channels_presence_meta_and_a_broadcast_flood(api: Api, stack: Stack):
    owner, member, circle = circle_of_two(api, "rt-quota")
    topic = f"realtime:circle:{circle}"

    async def scenario() -> None:
        key = stack.keys["mycirclee"]
        socket = await Phoenix.open(stack, key)
        # 1,001 joins, paced under the message rate (100 a second): the first 100 are channels,
        # the rest (the 1,001st among them) get Supabase's "too many channels".
        refs = []
        for index in range(1001):
            refs.append(await socket.send(f"realtime:room-{index}", "phx_join", {"config": {}, "access_token": owner.access_token}))
            if index % 40 == 39:
                await asyncio.sleep(0.5)
        last = await socket.reply(refs[-1])
        assert last == {"status": "error", "response": {"reason": "ChannelRateLimitReached: Too many channels"}}, last
        replies = [await socket.reply(ref) for ref in refs]
        assert sum(reply["status"] == "ok" for reply in replies) == 100, [r for r in replies if r["status"] != "ok"][:3]
        assert socket.closed is None, "the socket stays open; only the extra joins are refused"
        await socket.close()

        # An oversized presence meta (over 2 KiB) ends the channel before anything is stored.
        owner_socket, member_socket = await joined(stack, topic, owner, member)
        await member_socket.send(topic, "presence", {"type": "presence", "event": "track", "payload": {"bio": "x" * 4000}})
        closed = await member_socket.wait("the oversized meta's system error", lambda m: m["topic"] == topic and m["event"] == "system")
        assert closed["payload"]["status"] == "error" and closed["payload"]["message"] == "Track message size exceeded", closed
        await member_socket.wait("phx_close", lambda m: m["topic"] == topic and m["event"] == "phx_close")
        await asyncio.sleep(1)
        assert not [m for m in owner_socket.received if m["event"] == "presence_diff"], "nothing was tracked"

        # A broadcast flood: far more frames a second than the quota; the channel gets Supabase's
        # message and the socket is closed with it as the reason. The owner stays connected.
        assert (await member_socket.join(topic, member.access_token, PRESENCE_AND_ACK))["status"] == "ok"
        frames = [json.dumps({"topic": topic, "event": "broadcast", "ref": str(1000 + n), "join_ref": "f",
                              "payload": {"type": "broadcast", "event": "flood", "payload": {"n": n}}}) for n in range(2000)]
        started, seen_before = time.monotonic(), len(member_socket.received)
        try:
            for frame in frames:
                await member_socket.socket.send(frame)
        except websockets.ConnectionClosed:
            pass  # the server closed it mid-flood
        deadline = time.monotonic() + EVENTUAL_TIMEOUT
        while member_socket.closed is None and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        flood_seconds = time.monotonic() - started
        # The server ends the flooding socket: each channel's system error, then the close frame
        # with the reason (RealtimeAuthorizationTests reads both straight from the service). Through
        # the gateway they can be lost: the proxy still holds flood frames the client sent when the
        # server closes, and the reset that follows discards what the client had not read yet. So
        # here: the socket is closed, and whatever did arrive names the flood.
        assert member_socket.closed is not None, f"the flooding socket is still open: {member_socket.received[-5:]}"
        errors = [m for m in member_socket.received[seen_before:] if m["event"] == "system" and m["payload"].get("status") == "error"]
        assert all(m["payload"]["message"] == "Too many messages per second" for m in errors), errors
        assert member_socket.closed in ("Too many messages per second", "closed"), member_socket.closed
        await asyncio.sleep(0.5)
        received = [m for m in owner_socket.received if m["event"] == "broadcast" and m["payload"].get("event") == "flood"]
        # The quota is a token bucket (100 a second, bursts of 200): at most the burst plus what
        # refilled while the flood lasted gets through. The flood's length is measured, not assumed
        # (a busy machine stretches it), and the client's view of it is longer than the server's.
        allowed = 200 + 100 * flood_seconds
        assert len(received) <= allowed, f"{len(received)} flood broadcasts reached the owner in {flood_seconds:.2f} s (at most {allowed:.0f})"
        assert len(received) < len(frames) / 2, f"{len(received)} of {len(frames)} flood broadcasts reached the owner"
        ping = await owner_socket.send("phoenix", "heartbeat", {})
        assert (await owner_socket.reply(ping))["status"] == "ok" and owner_socket.closed is None
        await owner_socket.close()

    asyncio.run(scenario())
