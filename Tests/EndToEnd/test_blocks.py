"""Blocks in every app (issue 39.2), through the gateway: in each app a user blocks another; the
blocked user's DM, add, invitation and support message to the blocker are refused (403 `blocked`);
what the blocked user publishes is gone from the blocker's feeds and realtime channel while the
other members still see it; both stay in what they share; the block is listed, and unblocking
brings the content back. SocialSpot's blocks (both ways, its seed's meaning) have their own tests
in test_journeys.py."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from e2e_support import EVENTUAL_TIMEOUT, Api, Stack, User, expect, postgres_changes, wait_until


def block(blocker: User, service: str, blocked: User) -> None:
    listed = expect(blocker.post(f"/{service}/v1/blocks", json={"user_id": blocked.id}), 201)
    assert blocked.id in [b["user_id"].lower() for b in listed], listed
    assert blocked.id in [b["user_id"].lower() for b in expect(blocker.get(f"/{service}/v1/blocks"), 200)]


def refused(response) -> None:
    assert response.status_code == 403 and response.json()["code"] == "blocked", (response.status_code, response.text)


async def inserts_seen(stack: Stack, app: str, viewer: User, table: str, filter: str, act) -> set[str]:
    """The viewer's app listens to `table`'s INSERTs; `act` runs once subscribed, publishes rows and
    answers the id of its last one (by someone the viewer did not block); answers the ids of the
    rows that reached the viewer up to that one. Events of one circle or group stay in order, so
    what was withheld would have come before it."""
    async with postgres_changes(stack, app, viewer, "INSERT", table, filter) as changes:
        loop = asyncio.get_running_loop()
        wanted = await asyncio.to_thread(act)
        seen: set[str] = set()
        deadline = loop.time() + EVENTUAL_TIMEOUT
        while wanted not in seen:
            try:
                payload = await asyncio.wait_for(changes.get(), max(0.1, deadline - loop.time()))
            except asyncio.TimeoutError:
                pytest.fail(f"{table} row {wanted} did not arrive over realtime within {EVENTUAL_TIMEOUT:g}s (seen {seen})", pytrace=False)
            record = payload["data"].get("record") or payload["data"].get("new") or {}
            seen.add(str(record.get("id", "")).lower())
        return seen


def test_blocks_in_mycirclee(api: Api, stack: Stack) -> None:
    owner = api.sign_up_confirmed("mycirclee", "block-owner", full_name="Bo Blocker")
    pest = api.sign_up_confirmed("mycirclee", "block-pest", full_name="Pat Pest")
    friend = api.sign_up_confirmed("mycirclee", "block-friend", full_name="Fay Friend")
    circle = expect(owner.post("/circles/v1/circles", json={"name": "Shared circle"}), 201)["id"].lower()
    for user in (pest, friend):
        code = expect(owner.post(f"/circles/v1/circles/{circle}/invites"), 201)["code"]
        expect(user.post("/circles/v1/invites/claim", json={"code": code}), 200)
    before = expect(pest.post(f"/circles/v1/circles/{circle}/posts", json={"type": "note", "body": "before the block"}), 201)["id"].lower()
    assert before in [p["id"].lower() for p in expect(owner.get(f"/circles/v1/circles/{circle}/posts"), 200)["posts"]]

    block(owner, "circles", pest)
    # The pest cannot open a DM with the owner, nor ask to add the owner to a circle of theirs.
    refused(pest.post(f"/circles/v1/circles/{circle}/dms", json={"user_id": owner.id}))
    handle = f"b_{owner.id[:8]}"
    wait_until("the owner's circles profile", lambda: owner.patch("/circles/v1/profile", json={"handle": handle}).status_code == 200)
    theirs = expect(pest.post("/circles/v1/circles", json={"name": "Pest's circle"}), 201)["id"].lower()
    refused(pest.post(f"/circles/v1/circles/{theirs}/add-requests", json={"handle": handle}))
    # Both stay in the circle: a block is not a removal.
    members = {m["profile"]["user_id"].lower() for m in expect(owner.get(f"/circles/v1/circles/{circle}/members"), 200)}
    assert {owner.id, pest.id, friend.id} <= members, members

    # What the pest posts is gone from the owner's feed, post route and realtime; the friend sees it.
    published: dict[str, str] = {}

    def post_both() -> str:
        published["hidden"] = expect(pest.post(f"/circles/v1/circles/{circle}/posts", json={"type": "note", "body": "after the block"}), 201)["id"].lower()
        return expect(friend.post(f"/circles/v1/circles/{circle}/posts", json={"type": "note", "body": "from a friend"}), 201)["id"].lower()

    seen = asyncio.run(inserts_seen(stack, "mycirclee", owner, "posts", f"circle_id=eq.{circle}", post_both))
    hidden = published["hidden"]
    assert hidden not in seen, seen
    feed = [p["id"].lower() for p in expect(owner.get(f"/circles/v1/circles/{circle}/posts"), 200)["posts"]]
    assert hidden not in feed and before not in feed, feed
    assert owner.get(f"/circles/v1/posts/{hidden}").status_code == 404
    friends_feed = [p["id"].lower() for p in expect(friend.get(f"/circles/v1/circles/{circle}/posts"), 200)["posts"]]
    assert hidden in friends_feed and before in friends_feed, friends_feed

    # Unblocked: the posts are back, and the DM opens.
    expect(owner.delete(f"/circles/v1/blocks/{pest.id}"), 204)
    assert expect(owner.get("/circles/v1/blocks"), 200) == []
    feed = [p["id"].lower() for p in expect(owner.get(f"/circles/v1/circles/{circle}/posts"), 200)["posts"]]
    assert hidden in feed and before in feed, feed
    expect(pest.post(f"/circles/v1/circles/{circle}/dms", json={"user_id": owner.id}), 200, 201)


def test_blocks_in_unify(api: Api, stack: Stack) -> None:
    alice = api.sign_up_with_code("unify", "block-alice", full_name="Alice Blocker")
    bob = api.sign_up_with_code("unify", "block-bob", full_name="Bob Blocked")
    carol = api.sign_up_with_code("unify", "block-carol", full_name="Carol Friend")

    def create_group(creator: User, name: str, emails: list[str]):
        response = creator.post("/chat/v1/groups", json={"name": name, "member_emails": emails})
        if response.status_code == 422 and response.json().get("code") == "unknown_emails":
            return None
        return response

    shared = expect(wait_until("the chat service to know everyone's address", lambda: create_group(carol, "Shared group", [alice.email, bob.email])), 201)
    group = shared["id"].lower()
    block(alice, "chat", bob)
    # Bob can neither make a group with Alice nor add her to his.
    refused(create_group(bob, "With Alice", [alice.email, carol.email]))
    own = expect(create_group(bob, "Bob's group", [carol.email]), 201)["id"].lower()
    refused(bob.post(f"/chat/v1/groups/{own}/members", json={"emails": [alice.email]}))

    sent: dict[str, str] = {}

    def send_both() -> str:
        sent["hidden"] = expect(bob.post(f"/chat/v1/groups/{group}/messages", json={"content": "from Bob"}), 201)["id"].lower()
        return expect(carol.post(f"/chat/v1/groups/{group}/messages", json={"content": "from Carol"}), 201)["id"].lower()

    seen = asyncio.run(inserts_seen(stack, "unify", alice, "message", f"group_id=eq.{group}", send_both))
    hidden = sent["hidden"]
    assert hidden not in seen, seen
    history = [m["id"].lower() for m in expect(alice.get(f"/chat/v1/groups/{group}/messages"), 200)["messages"]]
    assert hidden not in history and len(history) >= 1, history
    assert hidden in [m["id"].lower() for m in expect(carol.get(f"/chat/v1/groups/{group}/messages"), 200)["messages"]]
    # Both stay members of the group Carol made.
    members = {m["user_id"].lower() for m in expect(alice.get(f"/chat/v1/groups/{group}/members"), 200)}
    assert {alice.id, bob.id, carol.id} <= members, members

    expect(alice.delete(f"/chat/v1/blocks/{bob.id}"), 204)
    assert hidden in [m["id"].lower() for m in expect(alice.get(f"/chat/v1/groups/{group}/messages"), 200)["messages"]]
    expect(bob.post(f"/chat/v1/groups/{own}/members", json={"emails": [alice.email]}), 200, 201)


def test_blocks_in_habithive(api: Api, stack: Stack) -> None:
    hana = api.phone_otp_sign_in("habithive")
    hugo = api.phone_otp_sign_in("habithive")
    hal = api.phone_otp_sign_in("habithive")
    hive = expect(hana.post("/habits/v1/hives", json={"name": "Shared hive", "emoji": "🏃"}), 201)["hive"]["id"].lower()
    code = expect(hana.post(f"/habits/v1/hives/{hive}/invites", json={"max_uses": 5}), 201)["code"]
    for user in (hugo, hal):
        expect(user.post("/habits/v1/hives/join", json={"code": code}), 200)
    block(hana, "habits", hugo)

    # Hugo cannot invite Hana to his hive, though she is among his contact matches.
    own = expect(hugo.post("/habits/v1/hives", json={"name": "Hugo's hive", "emoji": "🧘"}), 201)["hive"]["id"].lower()
    expect(hugo.post("/habits/v1/contacts", json={"contacts": [{"phone": "+" + hana.phone}]}), 200)
    wait_until("Hana among Hugo's contact matches",
               lambda: hana.id in [m["user_id"].lower() for m in expect(hugo.get("/habits/v1/contacts/matches"), 200)["matches"]], interval=1.0)
    refused(hugo.post(f"/habits/v1/hives/{own}/invitations", json={"user_id": hana.id}))

    # Hugo's check-in is gone from Hana's activity feed and realtime; Hal sees it. Both stay members,
    # and the hive's state (who is done today) is the same for Hana.
    def actors(viewer: User) -> set[str]:
        events = expect(viewer.get(f"/habits/v1/hives/{hive}/activity"), 200)["events"]
        return {str(e.get("actor_id") or "").lower() for e in events}

    def check_in_both() -> str:
        expect(hugo.post(f"/habits/v1/hives/{hive}/logs", json={}), 200)
        expect(hal.post(f"/habits/v1/hives/{hive}/logs", json={}), 200)
        return wait_until("Hal's check-in in his feed",
                          lambda: next((e["id"].lower() for e in expect(hal.get(f"/habits/v1/hives/{hive}/activity"), 200)["events"]
                                        if str(e.get("actor_id") or "").lower() == hal.id and e["type"] == "habit_completed"), None))

    seen = asyncio.run(inserts_seen(stack, "habithive", hana, "activity_events", f"hive_id=eq.{hive}", check_in_both))
    hugos = {e["id"].lower() for e in expect(hal.get(f"/habits/v1/hives/{hive}/activity"), 200)["events"] if str(e.get("actor_id") or "").lower() == hugo.id}
    assert hugos and not hugos & seen, (hugos, seen)
    assert hugo.id in actors(hal)
    assert hugo.id not in actors(hana), expect(hana.get(f"/habits/v1/hives/{hive}/activity"), 200)
    done = {m["user_id"].lower() for m in expect(hana.get(f"/habits/v1/hives/{hive}"), 200)["members"] if m["done_today"]}
    assert done == {hugo.id, hal.id}, done
    members = {m["user_id"].lower() for m in expect(hana.get(f"/habits/v1/hives/{hive}"), 200)["members"]}
    assert {hana.id, hugo.id, hal.id} <= members, members

    expect(hana.delete(f"/habits/v1/blocks/{hugo.id}"), 204)
    assert hugo.id in actors(hana)


def test_blocks_in_i_believe_in_you(api: Api) -> None:
    creator = api.sign_up_confirmed("ibelieveinyou", "block-creator", full_name="Cora Blocker")
    troll = api.sign_up_confirmed("ibelieveinyou", "block-troll", full_name="Tom Troll")
    fan = api.sign_up_confirmed("ibelieveinyou", "block-fan", full_name="Finn Fan")
    tag = uuid.uuid4().hex[:6]
    project = expect(creator.post("/projects/v1/projects", json={"title": f"Blocked {tag}", "tagline": "t", "mood": "green"}), 201)["id"].lower()
    expect(troll.post(f"/projects/v1/projects/{project}/support-messages", json={"message": "before the block"}), 201)
    block(creator, "projects", troll)

    # The troll's support messages are refused, anonymous or not; the fan's are not.
    refused(troll.post(f"/projects/v1/projects/{project}/support-messages", json={"message": "you again"}))
    refused(troll.post(f"/projects/v1/projects/{project}/support-messages", json={"message": "guess who", "is_anonymous": True}))
    expect(fan.post(f"/projects/v1/projects/{project}/support-messages", json={"message": "keep going"}), 201)
    received = [m["message"] for m in expect(creator.get(f"/projects/v1/projects/{project}/support-messages"), 200)]
    assert received == ["keep going"], received

    # The troll's project and its posts are gone from the creator's reads; the fan sees them.
    theirs = expect(troll.post("/projects/v1/projects", json={"title": f"Troll {tag}", "tagline": "t", "mood": "green"}), 201)["id"].lower()
    post = expect(troll.post(f"/projects/v1/projects/{theirs}/posts", json={"content": f"look at me {tag}"}), 201)["id"].lower()
    for viewer in (creator, fan):
        viewer.post(f"/projects/v1/projects/{theirs}/follow")
    assert creator.get(f"/projects/v1/posts/{post}").status_code == 404
    assert creator.get(f"/projects/v1/projects/{theirs}").status_code == 404
    assert post not in [p["id"].lower() for p in expect(creator.get("/projects/v1/feed"), 200)["posts"]]
    assert post in [p["id"].lower() for p in expect(fan.get("/projects/v1/feed"), 200)["posts"]]

    expect(creator.delete(f"/projects/v1/blocks/{troll.id}"), 204)
    expect(troll.post(f"/projects/v1/projects/{project}/support-messages", json={"message": "sorry"}), 201)
    assert creator.get(f"/projects/v1/posts/{post}").status_code == 200
