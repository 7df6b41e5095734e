"""Read-your-writes across services, through the gateway: a user who becomes a member (claims a
circle invite, is added to a chat group, joins a hive) and joins the scope's realtime channel in
the same moment the write returns is accepted, with the official Supabase Python realtime client
(which does not retry a refused channel, as the apps do not). Realtime's projection may not
have the membership yet (its event is on the way): realtime then asks the owning service.

A removed member is still refused: the removal closes their channel and a new join fails. The
internal membership routes the owning services answer realtime on are not reachable through the
gateway, and refuse users' tokens and the apps' keys even when called directly.

During a broker outage no event can arrive at all: `test_while_the_broker_is_silent` stops the
broker's process (SIGSTOP: it keeps its sockets and its data, and answers nothing, as a broker cut
off by a silent network), so the owners must be asked; the broker is resumed before the test ends.
The Swift test RealtimeReadYourWritesTests covers a broker that refuses connections."""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import signal
import time
import uuid
import warnings
from contextlib import contextmanager
from typing import Awaitable, Callable, Iterator

import httpx
import pytest
from realtime import AsyncRealtimeClient, RealtimeSubscribeStates

from e2e_support import EVENTUAL_TIMEOUT, ROOT, Api, Stack, User, expect, password, unique_email
from supabase_source import service_role_key
from test_realtime_attacks import Phoenix


async def join_right_after(stack: Stack, app: str, user: User, write: Callable[[httpx.AsyncClient], Awaitable[str]]) -> tuple[str, object, float]:
    """Opens the user's realtime client first, then performs `write` (which returns the scope's
    topic, e.g. `circle:<id>`) and subscribes to that topic as soon as it returns. Returns the
    topic, the first subscribe state, and milliseconds from the write's answer to the join."""
    client = AsyncRealtimeClient(stack.realtime_url, stack.keys[app], auto_reconnect=False, timeout=30)
    await client.connect()
    try:
        await client.set_auth(user.access_token)
        loop = asyncio.get_running_loop()
        state: asyncio.Future = loop.create_future()

        def on_state(status, error):
            if not state.done():
                state.set_result((status, error))

        async with httpx.AsyncClient(base_url=stack.gateway, timeout=30.0) as http:
            topic = await write(http)
        answered = time.monotonic()
        channel = client.channel(topic)
        await channel.subscribe(on_state)
        sent = (time.monotonic() - answered) * 1000
        try:
            status, error = await asyncio.wait_for(state, EVENTUAL_TIMEOUT + 5)
        except asyncio.TimeoutError:
            pytest.fail(f"no answer to the join of {topic} within {EVENTUAL_TIMEOUT + 5:g}s", pytrace=False)
        return topic, (status, error), sent
    finally:
        await client.close()


def realtime_lookups(scope: str) -> float:
    """Realtime's count of owners' "member" answers for `scope` (its /metrics on the service's own
    port; scripts/run puts realtime at base port + 6); -1 when it cannot be read."""
    port = int(os.environ.get("COLONY_SERVICE_BASE_PORT", "8081")) + 6
    try:
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    except httpx.HTTPError:
        return -1
    pattern = r'^colony_realtime_membership_lookups_total\{[^}]*(?=[^}]*scope="%s")(?=[^}]*answer="member")[^}]*\} ([0-9.e+]+)$' % scope
    return sum(float(value) for value in re.findall(pattern, text, re.MULTILINE))


def assert_subscribed(result, scope: str, lookups_before: float) -> None:
    topic, (status, error), sent = result
    assert status == RealtimeSubscribeStates.SUBSCRIBED, f"the join of {topic} {sent:.1f} ms after the write was refused: {status} {error}"
    assert sent < 50, f"the join went out {sent:.1f} ms after the write returned"
    # Evidence that the join met a projection still behind: the owner was asked. (Not asserted: the
    # event may, rarely, win the race; then the projection answered.)
    if lookups_before >= 0 and realtime_lookups(scope) <= lookups_before:
        warnings.warn(f"the join of {topic} was answered by the projection (its event arrived first); the owner was not asked")


async def removed_member_is_refused(stack: Stack, app: str, topic: str, member: User, remove: Callable[[], None]) -> None:
    """The member's channel (joined while a member) closes when they are removed, and a new
    join is refused."""
    socket = await Phoenix.open(stack, stack.keys[app])
    try:
        full = f"realtime:{topic}"
        reply = await socket.join(full, member.access_token)
        assert reply["status"] == "ok", reply
        remove()
        await socket.wait(f"{full} closed after the removal", lambda m: m["topic"] == full and m["event"] == "phx_close")
        again = await socket.join(full, member.access_token)
        assert again["status"] == "error" and again["response"]["reason"].startswith("Unauthorized"), again
    finally:
        await socket.close()


def test_circle_invite_claim_then_join_at_once(api: Api, stack: Stack):
    owner = api.sign_up_confirmed("mycirclee", "ryw-owner")
    member = api.sign_up_confirmed("mycirclee", "ryw-member")
    for user in (owner, member):
        expect(user.get("/circles/v1/profile"), 200)
    circle = expect(owner.post("/circles/v1/circles", json={"name": "Read your writes"}), 201)["id"].lower()
    code = expect(owner.post(f"/circles/v1/circles/{circle}/invites"), 201)["code"]

    async def claim(http: httpx.AsyncClient) -> str:
        expect(await http.post("/circles/v1/invites/claim", headers=member.headers(), json={"code": code}), 200)
        return f"circle:{circle}"

    before = realtime_lookups("circle")
    assert_subscribed(asyncio.run(join_right_after(stack, "mycirclee", member, claim)), "circle", before)

    def remove() -> None:
        expect(owner.delete(f"/circles/v1/circles/{circle}/members/{member.id}"), 200, 204)

    asyncio.run(removed_member_is_refused(stack, "mycirclee", f"circle:{circle}", member, remove))


def unify_user(api: Api, tag: str) -> User:
    """Unify confirms addresses: sign up, then type the mailed 6-digit code."""
    return api.sign_up_with_code("unify", tag, full_name=tag)


def test_chat_group_add_then_join_at_once(api: Api, stack: Stack):
    owner = unify_user(api, "ryw-group-owner")
    added = unify_user(api, "ryw-group-added")
    group = expect(owner.post("/chat/v1/groups", json={"name": "Read your writes"}), 201)["id"].lower()
    # Chat learns the address from auth's event: until it has, the add answers 422 unknown_emails
    # (nothing written) and is sent again; the add that succeeds is the write the join must see.
    async def add(http: httpx.AsyncClient) -> str:
        deadline = time.monotonic() + EVENTUAL_TIMEOUT
        while True:
            response = await http.post(f"/chat/v1/groups/{group}/members", headers=owner.headers(), json={"emails": [added.email]})
            if response.status_code == 422 and response.json().get("code") == "unknown_emails" and time.monotonic() < deadline:
                await asyncio.sleep(0.25)
                continue
            expect(response, 200, 201)
            return f"group:{group}"

    before = realtime_lookups("group")
    assert_subscribed(asyncio.run(join_right_after(stack, "unify", added, add)), "group", before)

    def remove() -> None:
        expect(owner.delete(f"/chat/v1/groups/{group}/members/{added.id}"), 200, 204)

    asyncio.run(removed_member_is_refused(stack, "unify", f"group:{group}", added, remove))


def test_hive_join_then_join_at_once(api: Api, stack: Stack):
    hana = api.phone_otp_sign_in("habithive")
    hugo = api.phone_otp_sign_in("habithive")
    for user, name in ((hana, "Hana"), (hugo, "Hugo")):
        expect(user.patch("/habits/v1/profile", json={"display_name": name}), 200)
    hive = expect(hana.post("/habits/v1/hives", json={"name": "Read your writes", "emoji": "🏃"}), 201)["hive"]["id"].lower()
    code = expect(hana.post(f"/habits/v1/hives/{hive}/invites", json={"max_uses": 5}), 201)["code"]

    async def join(http: httpx.AsyncClient) -> str:
        expect(await http.post("/habits/v1/hives/join", headers=hugo.headers(), json={"code": code}), 200)
        return f"hive:{hive}"

    before = realtime_lookups("hive")
    assert_subscribed(asyncio.run(join_right_after(stack, "habithive", hugo, join)), "hive", before)

    def leave() -> None:
        expect(hugo.post(f"/habits/v1/hives/{hive}/leave"), 200, 204)

    asyncio.run(removed_member_is_refused(stack, "habithive", f"hive:{hive}", hugo, leave))


def test_a_stranger_is_refused(api: Api, stack: Stack):
    owner = api.sign_up_confirmed("mycirclee", "ryw-stranger-owner")
    stranger = api.sign_up_confirmed("mycirclee", "ryw-stranger")
    circle = expect(owner.post("/circles/v1/circles", json={"name": "Not yours"}), 201)["id"].lower()

    async def nothing(http: httpx.AsyncClient) -> str:
        return f"circle:{circle}"

    topic, (status, error), _ = asyncio.run(join_right_after(stack, "mycirclee", stranger, nothing))
    assert status != RealtimeSubscribeStates.SUBSCRIBED, f"a stranger joined {topic}"


def test_internal_membership_route_is_not_for_clients(api: Api, stack: Stack):
    owner = api.sign_up_confirmed("mycirclee", "ryw-internal-owner")
    circle = expect(owner.post("/circles/v1/circles", json={"name": "Internal"}), 201)["id"].lower()
    path = f"/internal/v1/members/circle/{circle}/{owner.id}"
    # Through the gateway, there is no such route for anyone.
    for headers in ({}, owner.headers(), api.anon("mycirclee")):
        response = api.http.get(path, headers=headers)
        assert response.status_code == 404, (headers.keys(), response.status_code, response.text[:300])
        assert response.json().get("code"), response.text[:300]
    # Called on the service itself (as from inside the network), a user's token and the app's
    # anon key are refused.
    circles = os.environ.get("COLONY_CIRCLES_DIRECT_URL", f"http://127.0.0.1:{int(os.environ.get('COLONY_SERVICE_BASE_PORT', '8081')) + 1}")
    try:
        for headers in ({}, owner.headers(), api.anon("mycirclee"), {"Authorization": f"Bearer {stack.keys['mycirclee']}"}):
            response = httpx.get(circles + path, headers=headers, timeout=10)
            assert response.status_code == 401, (headers.keys(), response.status_code, response.text[:300])
            assert response.json()["code"] == "invalid_service_credential", response.text[:300]
    except httpx.ConnectError:
        pytest.skip(f"circles is not reachable directly at {circles}")


# ---------------------------------------------------------------- the same rule beyond realtime

def service_metric(offset: int, name: str, answer: str) -> float:
    """A counter with `answer="<answer>"` from a service's /metrics on its own port (scripts/run:
    auth at base port + 0, circles + 1, chat + 2, ..., notifications + 7); -1 when unreadable."""
    port = int(os.environ.get("COLONY_SERVICE_BASE_PORT", "8081")) + offset
    try:
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    except httpx.HTTPError:
        return -1
    pattern = r'^%s\{[^}]*answer="%s"[^}]*\} ([0-9.e+]+)$' % (name, answer)
    return sum(float(value) for value in re.findall(pattern, text, re.MULTILINE))


def warn_unless_asked(before: float, after: float, what: str) -> None:
    # Evidence that the answer met a projection still behind (not asserted: the event may win).
    if before >= 0 and after <= before:
        warnings.warn(f"{what} was answered by the projection (its event arrived first); the owner was not asked")


def live_activity(post: str) -> dict:
    return {"activity_id": f"ryw-{uuid.uuid4().hex[:12]}", "post_id": post, "token": secrets.token_hex(32), "environment": "sandbox"}


def test_live_activity_right_after_creating_the_event_or_joining(api: Api, stack: Stack):
    """Notifications vouches through circles: the event's author registers a Live Activity in the
    moment the post's creation returns, a member in the moment the claim returns."""
    owner = api.sign_up_confirmed("mycirclee", "ryw-la-owner")
    member = api.sign_up_confirmed("mycirclee", "ryw-la-member")
    stranger = api.sign_up_confirmed("mycirclee", "ryw-la-stranger")
    for user in (owner, member, stranger):
        expect(user.get("/circles/v1/profile"), 200)
    circle = expect(owner.post("/circles/v1/circles", json={"name": "Live"}), 201)["id"].lower()
    code = expect(owner.post(f"/circles/v1/circles/{circle}/invites"), 201)["code"]
    starts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 86_400))
    before = service_metric(7, "colony_notifications_event_post_lookups_total", "member")
    post = expect(owner.post(f"/circles/v1/circles/{circle}/posts", json={"type": "event", "body": "Hike", "starts_at": starts}), 201)["id"].lower()
    expect(owner.post("/notifications/v1/live-activities", json=live_activity(post)), 200)
    expect(member.post("/circles/v1/invites/claim", json={"code": code}), 200)
    expect(member.post("/notifications/v1/live-activities", json=live_activity(post)), 200)
    warn_unless_asked(before, service_metric(7, "colony_notifications_event_post_lookups_total", "member"), "a Live Activity registration")
    refused = stranger.post("/notifications/v1/live-activities", json=live_activity(post))
    assert refused.status_code == 404 and refused.json()["code"] == "event_not_found", refused.text[:300]


def test_first_answers_show_the_sign_up_name(api: Api, stack: Stack):
    """A service's first answer to a new user already shows the name they signed up with (from the
    access token), whether or not auth's user_registered has reached it."""
    name = f"Ada {uuid.uuid4().hex[:6]}"
    circler = api.sign_up_confirmed("mycirclee", "ryw-name", full_name=name)
    assert expect(circler.get("/circles/v1/profile"), 200)["display_name"] == name
    chatter_name = f"ryw-name-{uuid.uuid4().hex[:6]}"
    chatter = unify_user(api, chatter_name)
    assert expect(chatter.get("/chat/v1/me"), 200)["display_name"] == chatter_name
    bee_name = f"Bee {uuid.uuid4().hex[:6]}"
    bee = api.phone_otp_sign_in("habithive", display_name=bee_name)
    assert expect(bee.get("/habits/v1/profile"), 200)["display_name"] == bee_name


def test_chat_add_by_email_right_after_sign_up(api: Api, stack: Stack):
    """Chat asks auth about an address its projection does not know: a group made with a Unify
    address in the moment its account is committed (made with the app's service-role key, the
    `user_registered` event still on its way) has them as a member, with their sign-up name; another
    app's account is still unknown to Unify."""
    owner = unify_user(api, "ryw-add-owner")
    key = service_role_key("unify")
    email, name = unique_email("ryw-add-new"), f"Ada {uuid.uuid4().hex[:6]}"
    before = service_metric(2, "colony_chat_account_lookups_total", "found")
    created = expect(api.http.post("/auth/v1/admin/users", headers={"apikey": key, "Authorization": f"Bearer {key}"},
                                   json={"email": email, "password": password(), "email_confirm": True, "user_metadata": {"full_name": name}}), 200, 201)
    group = expect(owner.post("/chat/v1/groups", json={"name": "At once", "member_emails": [email]}), 201)["id"].lower()
    warn_unless_asked(before, service_metric(2, "colony_chat_account_lookups_total", "found"), "an add by email")
    members = expect(owner.get(f"/chat/v1/groups/{group}/members"), 200)
    assert any(m["user_id"].lower() == created["id"].lower() and m["display_name"] == name for m in members), members
    elsewhere = api.sign_up_confirmed("mycirclee", "ryw-add-elsewhere")
    refused = owner.post(f"/chat/v1/groups/{group}/members", json={"emails": [elsewhere.email]})
    assert refused.json().get("code") == "unknown_emails", refused.text[:300]


def test_internal_lookup_routes_are_not_for_clients(api: Api, stack: Stack):
    """Auth's users-by-email and circles' event-post routes: never through the gateway, and on the
    services themselves only with the service credential."""
    user = api.sign_up_confirmed("mycirclee", "ryw-internal-lookups")
    base = int(os.environ.get("COLONY_SERVICE_BASE_PORT", "8081"))
    routes = [
        (base + 0, f"/internal/v1/users/by-email?app=mycirclee&email={user.email}"),
        (base + 1, f"/internal/v1/event-posts/{uuid.uuid4()}/members/{user.id}"),
    ]
    service_key = service_role_key("mycirclee")
    credentials = [{}, user.headers(), api.anon("mycirclee"), {"apikey": service_key, "Authorization": f"Bearer {service_key}"}]
    for port, path in routes:
        for headers in credentials:
            for variant in (path, "/auth/v1/../.." + path, "/auth/v1/%2e%2e/%2e%2e" + path):
                response = api.http.get(variant, headers=headers)
                assert response.status_code in (400, 404), (variant, headers.keys(), response.status_code, response.text[:300])
        try:
            for headers in credentials:
                response = httpx.get(f"http://127.0.0.1:{port}{path}", headers=headers, timeout=10)
                assert response.status_code == 401, (path, headers.keys(), response.status_code, response.text[:300])
                assert response.json()["code"] == "invalid_service_credential", response.text[:300]
        except httpx.ConnectError:
            pytest.skip(f"port {port} is not reachable directly")


# ---------------------------------------------------------------- while the broker is silent

@contextmanager
def broker_silent() -> Iterator[None]:
    """The local broker (scripts/infra's Tansu) stopped in place: connections stay open, nothing is
    answered, nothing is lost; resumed on the way out, whatever happened."""
    pid_file = ROOT / ".local" / "tansu.pid"
    if not pid_file.exists():
        pytest.skip("no .local/tansu.pid: the broker was not started by scripts/infra")
    pid = int(pid_file.read_text().strip())
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def test_while_the_broker_is_silent(api: Api, stack: Stack):
    """With no event able to reach anyone, a circle member who claimed an invite joins its channel
    at once (realtime asks circles), registers a Live Activity for its event (notifications asks
    circles), and a Unify account made in that moment is found by chat's add-by-email (chat asks
    auth). Each owner's answer is counted, so the test shows it was asked."""
    owner = api.sign_up_confirmed("mycirclee", "ryw-silent-owner")
    member = api.sign_up_confirmed("mycirclee", "ryw-silent-member")
    for user in (owner, member):
        expect(user.get("/circles/v1/profile"), 200)
    circle = expect(owner.post("/circles/v1/circles", json={"name": "Silent broker"}), 201)["id"].lower()
    code = expect(owner.post(f"/circles/v1/circles/{circle}/invites"), 201)["code"]
    starts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 86_400))
    post = expect(owner.post(f"/circles/v1/circles/{circle}/posts", json={"type": "event", "body": "Hike", "starts_at": starts}), 201)["id"].lower()
    group_owner = unify_user(api, "ryw-silent-group-owner")
    key = service_role_key("unify")

    realtime_before = realtime_lookups("circle")
    activities_before = service_metric(7, "colony_notifications_event_post_lookups_total", "member")
    accounts_before = service_metric(2, "colony_chat_account_lookups_total", "found")
    with broker_silent():
        async def claim(http: httpx.AsyncClient) -> str:
            expect(await http.post("/circles/v1/invites/claim", headers=member.headers(), json={"code": code}), 200)
            return f"circle:{circle}"

        topic, (status, error), _ = asyncio.run(join_right_after(stack, "mycirclee", member, claim))
        assert status == RealtimeSubscribeStates.SUBSCRIBED, f"the join of {topic} during the outage was refused: {status} {error}"
        expect(member.post("/notifications/v1/live-activities", json=live_activity(post)), 200)

        email, name = unique_email("ryw-silent-new"), f"Ada {uuid.uuid4().hex[:6]}"
        created = expect(api.http.post("/auth/v1/admin/users", headers={"apikey": key, "Authorization": f"Bearer {key}"},
                                       json={"email": email, "password": password(), "email_confirm": True, "user_metadata": {"full_name": name}}), 200, 201)
        group = expect(group_owner.post("/chat/v1/groups", json={"name": "Silent", "member_emails": [email]}), 201)["id"].lower()
        members = expect(group_owner.get(f"/chat/v1/groups/{group}/members"), 200)
        assert any(m["user_id"].lower() == created["id"].lower() and m["display_name"] == name for m in members), members
    assert realtime_lookups("circle") > realtime_before >= 0, "realtime did not ask circles"
    assert service_metric(7, "colony_notifications_event_post_lookups_total", "member") > activities_before >= 0, "notifications did not ask circles"
    assert service_metric(2, "colony_chat_account_lookups_total", "found") > accounts_before >= 0, "chat did not ask auth"
