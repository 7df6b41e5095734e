"""One core journey per app, against the whole stack started by scripts/run, through the nginx
gateway only (HTTP and the realtime WebSocket), as the iOS apps use it. Every run makes new
users (random emails and phones), so it can run again against the same stack.

Services learn about each other through Kafka (profiles from auth's events, memberships in
realtime and notifications), so anything another service has to see is polled for
(`wait_until`), never slept for.
"""

from __future__ import annotations

import asyncio
import math
import random
import secrets
import uuid

import httpx
import pytest
from realtime import AsyncRealtimeClient, RealtimeSubscribeStates

from e2e_support import EVENTUAL_TIMEOUT, Api, Stack, User, expect, password, unique_email, wait_until


def apns_token() -> str:
    return secrets.token_hex(32)  # 64 hex digits, like a real device token


def register_device(user: User) -> str:
    token = apns_token()
    device = expect(user.post("/notifications/v1/devices", json={"token": token, "environment": "sandbox", "platform": "ios",
                                                                  "app_version": "e2e", "locale": "en-US"}), 200)
    assert device["app"] == user.app and device["kind"] == "device" and device["token"].lower() == token, device
    return token


def notification(user: User, kind: str, **data) -> dict:
    """Waits for an in-app notification of `kind` whose data has `data` (ids compared lowercased)."""

    def find():
        page = expect(user.get("/notifications/v1/notifications", params={"limit": 100}), 200)
        for item in page["notifications"]:
            if item["kind"] == kind and all(str(item["data"].get(k, "")).lower() == str(v).lower() for k, v in data.items()):
                return item, page
        return None

    item, page = wait_until(f"a {kind} notification for {user.app} user {user.id} with {data}", find)
    assert page["unread_count"] >= 1, page
    return item


# ---------------------------------------------------------------------------------- MyCirclee


async def receive_post_over_realtime(stack: Stack, member: User, author: User, circle: str) -> tuple[dict, dict]:
    """The member's app subscribes to the circle's posts (postgres_changes on `posts` with a
    `circle_id=eq.` filter, as supabase-swift does) through the gateway; then the author posts
    through the circles API. Returns (the created post, the change that arrived)."""
    client = AsyncRealtimeClient(stack.realtime_url, stack.keys["mycirclee"], auto_reconnect=False, timeout=30)
    await client.connect()
    try:
        await client.set_auth(member.access_token)  # the user's JWT goes into the join payload
        loop = asyncio.get_running_loop()
        subscribed: asyncio.Future = loop.create_future()
        changes: asyncio.Queue = asyncio.Queue()

        def on_state(state, error):
            if subscribed.done():
                return
            if state == RealtimeSubscribeStates.SUBSCRIBED:
                subscribed.set_result(True)
            else:
                subscribed.set_exception(RuntimeError(f"subscribe: {state} {error}"))

        channel = client.channel(f"posts_{circle}")
        channel.on_postgres_changes("INSERT", schema="public", table="posts", filter=f"circle_id=eq.{circle}",
                                    callback=changes.put_nowait)
        await channel.subscribe(on_state)
        try:
            await asyncio.wait_for(subscribed, 35)
        except asyncio.TimeoutError:
            pytest.fail("the realtime channel was not SUBSCRIBED within 35s (through the gateway)", pytrace=False)

        body = f"e2e post {uuid.uuid4().hex[:8]}"
        async with httpx.AsyncClient(base_url=stack.gateway, timeout=30.0) as http:
            response = await http.post(f"/circles/v1/circles/{circle}/posts", headers=author.headers(),
                                       json={"type": "note", "body": body, "mood": "happy"})
        post = expect(response, 201)
        assert post["body"] == body and post["circle_id"].lower() == circle and post["author_id"].lower() == author.id, post

        deadline = loop.time() + EVENTUAL_TIMEOUT
        while True:
            try:
                payload = await asyncio.wait_for(changes.get(), max(0.1, deadline - loop.time()))
            except asyncio.TimeoutError:
                pytest.fail(f"post {post['id']} did not arrive over realtime within {EVENTUAL_TIMEOUT:g}s", pytrace=False)
            record = payload["data"]["record"]
            if record["id"].lower() == post["id"].lower():
                return post, payload
    finally:
        await client.close()


def test_mycirclee_circle_post_reaches_the_other_member(api: Api, stack: Stack):
    owner = api.sign_up_confirmed("mycirclee", "circle-owner", full_name="Olive Owner")
    member = api.sign_up_confirmed("mycirclee", "circle-member", full_name="Max Member")
    device = register_device(member)

    circle = expect(owner.post("/circles/v1/circles", json={"name": "E2E Inner Circle"}), 201)
    circle_id = circle["id"].lower()
    assert circle["role"] == "owner" and circle["member_count"] == 1, circle

    invite = expect(owner.post(f"/circles/v1/circles/{circle_id}/invites"), 201)
    assert len(invite["code"]) == 10 and invite["circle_id"].lower() == circle_id, invite
    # Invite codes are typed by hand: case does not matter.
    joined = expect(member.post("/circles/v1/invites/claim", json={"code": invite["code"].lower()}), 200)
    assert joined["id"].lower() == circle_id and joined["role"] == "member" and joined["member_count"] == 2, joined
    # Single use: a second claim is refused.
    assert owner.post("/circles/v1/invites/claim", json={"code": invite["code"]}).status_code == 410

    members = expect(member.get(f"/circles/v1/circles/{circle_id}/members"), 200)
    assert [(m["profile"]["user_id"].lower(), m["role"]) for m in members] == [(owner.id, "owner"), (member.id, "member")], members
    assert not [m for m in members if "email" in m["profile"] or "phone" in m["profile"]], members  # public profiles only
    assert [c["id"].lower() for c in expect(member.get("/circles/v1/circles"), 200)] == [circle_id]

    post, change = asyncio.run(receive_post_over_realtime(stack, member, owner, circle_id))
    data = change["data"]
    assert data.get("type", data.get("eventType")) == "INSERT", change
    assert data["schema"] == "public" and data["table"] == "posts", change
    record = data["record"]
    assert record["circle_id"].lower() == circle_id and record["body"] == post["body"] and record["type"] == "note", change

    feed = expect(member.get(f"/circles/v1/circles/{circle_id}/posts"), 200)
    assert post["id"] in [p["id"] for p in feed["posts"]], feed

    # The notifications service planned a circle_post for the member (never for the author):
    # in the in-app list, and, with APNs not configured locally, a 'skipped' delivery to the device.
    item = notification(member, "circle_post", circle_id=circle_id, post_id=post["id"])
    assert item["title"] == "E2E Inner Circle" and item.get("read_at") is None, item

    def skipped_delivery():
        log = expect(member.get("/notifications/v1/deliveries"), 200)["deliveries"]
        return [d for d in log if d["kind"] == "circle_post" and d["status"] == "skipped"]

    deliveries = wait_until("a skipped circle_post delivery", skipped_delivery)
    assert deliveries[0]["token_suffix"].lower() == device[-8:] and deliveries[0]["app"] == "mycirclee", deliveries
    own = expect(owner.get("/notifications/v1/notifications"), 200)["notifications"]
    assert not [n for n in own if n["kind"] == "circle_post"], own


# ---------------------------------------------------------------------------------- Unify


def test_unify_group_message_and_unread_count(api: Api):
    # Unify confirms addresses: sign-up answers a user without a session, and mails a link and a code.
    people = {}
    for tag, name in (("alice", "Alice Unify"), ("bob", "Bob Unify")):
        email, secret = unique_email(f"unify-{tag}"), password()
        created = api.sign_up("unify", email, secret, full_name=name)
        assert not created.get("access_token") and created.get("email") == email and not created.get("email_confirmed_at"), created
        # The account is made a moment after the answer (a sign-up answers alike whether or not the
        # address has an account): it exists once its confirmation was mailed.
        mail = api.mailbox.wait_for_mail(email)
        refused = api.http.post("/auth/v1/token", params={"grant_type": "password"}, headers=api.anon("unify"),
                                json={"email": email, "password": secret})
        assert refused.status_code == 400 and refused.json().get("code") == "email_not_confirmed", refused.text
        people[tag] = (email, secret, name, mail)

    # The confirmation went through the SMTP mail catcher: Unify's German wording, text and HTML.
    # Alice taps the link in the mail: the gateway's /auth/v1/verify redirects to the app with the session.
    email, secret, _, mail = people["alice"]
    assert mail["link"] and mail["code"], mail
    assert mail["subject"] == "Bestätige dein Unify-Konto" and mail["to"] == email and mail["message_id"] and mail["date"], mail
    assert mail["code"] in mail["text"] and "Unify" in (mail["html"] or ""), mail
    alice = api.follow_mailed_link("unify", mail["link"])
    assert alice.extra["redirect"].startswith("unify://auth-callback#"), alice.extra
    assert alice.email == email
    # Bob types the 6-digit code instead.
    email_b, secret_b, name_b, mail_b = people["bob"]
    bob = api.verify("unify", {"type": "signup", "email": email_b, "token": mail_b["code"]})
    assert bob.email == email_b
    # Both are confirmed now, and sign in with their passwords.
    assert api.sign_in("unify", email, secret).id == alice.id
    assert api.sign_in("unify", email_b, secret_b).id == bob.id

    # Bob's chat profile comes from auth's user_registered event: until it arrives his address is unknown.
    def create_group():
        response = alice.post("/chat/v1/groups", json={"name": "E2E Study Group", "member_emails": [email_b.upper()]})
        if response.status_code == 422 and response.json().get("code") == "unknown_emails":
            return None
        return expect(response, 201)

    group = wait_until("the chat service to know Bob's address", create_group)
    group_id = group["id"].lower()
    assert group["role"] == "owner" and group["owner_id"].lower() == alice.id, group

    members = {m["user_id"].lower(): m for m in expect(bob.get(f"/chat/v1/groups/{group_id}/members"), 200)}
    assert set(members) == {alice.id, bob.id}, members
    assert members[alice.id]["role"] == "owner" and members[bob.id]["role"] == "user", members
    # Bob's profile was made from his sign-up event, with the name he signed up with.
    assert members[bob.id]["display_name"] == name_b, members
    register_device(bob)

    text = f"see you at 6? {uuid.uuid4().hex[:6]}"
    message = expect(alice.post(f"/chat/v1/groups/{group_id}/messages", json={"content": text}), 201)
    assert message["content"] == text and message["sent_by"].lower() == alice.id and message["message_type"] == "text", message

    def unread(user: User) -> int:
        counts = expect(user.get("/chat/v1/groups/unread"), 200)
        return {c["group_id"].lower(): c["unread_count"] for c in counts}[group_id]

    assert unread(bob) == 1
    assert unread(alice) == 0  # her own message
    groups = expect(bob.get("/chat/v1/groups"), 200)
    listed = [g for g in groups if g["id"].lower() == group_id]
    assert listed and listed[0]["unread_count"] == 1 and listed[0]["role"] == "user", groups

    history = expect(bob.get(f"/chat/v1/groups/{group_id}/messages"), 200)
    assert [m["id"] for m in history["messages"]] == [message["id"]], history

    expect(bob.post(f"/chat/v1/groups/{group_id}/read", json={}), 200)
    assert unread(bob) == 0

    item = notification(bob, "group_message", group_id=group_id, message_id=message["id"])
    assert item["title"] == "E2E Study Group" and text in item["body"], item


# ---------------------------------------------------------------------------------- HabitHive


def test_habithive_shared_streak_advances(api: Api):
    hana = api.phone_otp_sign_in("habithive")
    hugo = api.phone_otp_sign_in("habithive")
    for user, name in ((hana, "Hana"), (hugo, "Hugo")):
        profile = expect(user.patch("/habits/v1/profile", json={"display_name": name}), 200)
        assert profile["id"].lower() == user.id and profile["display_name"] == name, profile

    # A personal habit, logged today.
    habit = expect(hana.post("/habits/v1/habits", json={"name": "Drink water", "emoji": "💧"}), 201)
    log = expect(hana.post(f"/habits/v1/habits/{habit['id']}/logs", json={}), 200)
    assert log["habit_id"] == habit["id"] and log["value"] == 1 and log["user_id"].lower() == hana.id, log
    insights = expect(hana.get(f"/habits/v1/habits/{habit['id']}/insights"), 200)
    assert insights["current_streak"] == 1 and insights["today"] == log["log_date"], insights

    # A hive, an invite, and Hugo joins with the code.
    detail = expect(hana.post("/habits/v1/hives", json={"name": "E2E Morning Run", "emoji": "🏃"}), 201)
    hive_id = detail["hive"]["id"].lower()
    assert detail["hive"]["current_length"] == 0 and len(detail["members"]) == 1, detail
    invite = expect(hana.post(f"/habits/v1/hives/{hive_id}/invites", json={"max_uses": 5}), 201)
    joined = expect(hugo.post("/habits/v1/hives/join", json={"code": f"  {invite['code'].upper()} "}), 200)
    assert joined["hive"]["id"].lower() == hive_id and {m["user_id"].lower() for m in joined["members"]} == {hana.id, hugo.id}, joined
    assert joined["today"]["required"] == 2 and joined["today"]["done"] == 0, joined
    register_device(hana)

    first = expect(hana.post(f"/habits/v1/hives/{hive_id}/logs", json={}), 200)
    assert first["day"]["done"] is True and first["hive"]["current_length"] == 0, first
    second = expect(hugo.post(f"/habits/v1/hives/{hive_id}/logs", json={}), 200)
    if second["day"]["day_date"] != first["day"]["day_date"]:
        pytest.skip("the two logs fell on two different days (run across midnight)")
    # The last member done advances the shared streak in the same request.
    assert second["hive"]["current_length"] == 1, second
    assert second["hive"]["last_advanced_on"] == second["day"]["day_date"], second

    hive = expect(hana.get(f"/habits/v1/hives/{hive_id}"), 200)
    assert hive["hive"]["current_length"] == 1 and hive["today"]["done"] == 2 and hive["today"]["required"] == 2, hive
    assert all(m["done_today"] for m in hive["members"]), hive
    day = second["day"]["day_date"]
    days = expect(hugo.get(f"/habits/v1/hives/{hive_id}/days", params={"from": day, "to": day}), 200)
    assert [(d["day_date"], d["advanced"], d["complete_count"]) for d in days["hive_days"]] == [(day, True, 2)], days

    def advanced_in_feed():
        events = expect(hana.get(f"/habits/v1/hives/{hive_id}/activity"), 200)["events"]
        return [e for e in events if e["type"] == "hive_advanced"]

    assert wait_until("hive_advanced in the hive's activity feed", advanced_in_feed)
    # Hana was not the one who completed the day: she gets the hive_advanced notification.
    item = notification(hana, "hive_advanced", hive_id=hive_id)
    assert "1 day" in item["body"], item


# ---------------------------------------------------------------------------------- SocialSpot


FEET = 0.3048


def offset(lat: float, lon: float, north_feet: float, east_feet: float = 0.0) -> tuple[float, float]:
    meters_per_degree_lat = 111_320.0
    return (lat + north_feet * FEET / meters_per_degree_lat,
            lon + east_feet * FEET / (meters_per_degree_lat * math.cos(math.radians(lat))))


def test_socialspot_nearby_people_appear_and_disappear(api: Api):
    sam = api.sign_up_confirmed("socialspot", "spot-sam", full_name="Sam Spot")
    sky = api.sign_up_confirmed("socialspot", "spot-sky", full_name="Sky Spot")
    for user, name in ((sam, "Sam E2E"), (sky, "Sky E2E")):
        expect(user.patch("/nearby/v1/profile", json={"name": name, "bio": "end to end"}), 200)
        settings = expect(user.patch("/nearby/v1/settings", json={"share_location": True}), 200)
        assert settings["share_location"] is True, settings

    # A random spot per run (somewhere over the continental US), the two 100 ft apart.
    lat, lon = random.uniform(30.0, 45.0), random.uniform(-120.0, -80.0)
    lat2, lon2 = offset(lat, lon, north_feet=100.0)
    report = expect(sam.put("/nearby/v1/location", json={"latitude": lat, "longitude": lon, "accuracy": 5}), 200)
    assert "position" in report and "latitude" not in report, report
    expect(sky.put("/nearby/v1/location", json={"latitude": lat2, "longitude": lon2, "accuracy": 5}), 200)

    def card(viewer: User, other: User):
        listing = expect(viewer.get("/nearby/v1/nearby"), 200)
        assert listing["sharing"] is True and listing["radius_feet"] == 500, listing
        return next((u for u in listing["users"] if u["user_id"].lower() == other.id), None)

    def feet_between(a: tuple[float, float], b: tuple[float, float]) -> float:
        north = (b[0] - a[0]) * 365_223.0  # feet per degree of latitude (111,320 m), near enough at these distances
        east = (b[1] - a[1]) * 365_223.0 * math.cos(math.radians(a[0]))
        return math.hypot(north, east)

    for viewer, other, name in ((sam, sky, "Sky E2E"), (sky, sam, "Sam E2E")):
        seen = card(viewer, other)
        assert seen is not None, f"{viewer.id} does not see {other.id}"
        assert seen["name"] == name and seen["distance_text"].endswith(" ft"), seen
        assert set(seen["position"]) >= {"latitude", "longitude"}, seen
        # Others see a shown position: the reported one moved by a secret offset (100-150 ft) and
        # snapped to 50 ft; the distance is measured to it (rounded to 10 ft).
        shown = (seen["position"]["latitude"], seen["position"]["longitude"])
        truth, mine = ((lat2, lon2), (lat, lon)) if other is sky else ((lat, lon), (lat2, lon2))
        assert 100 - 36 <= feet_between(truth, shown) <= 150 + 36, (seen, truth)
        assert abs(seen["distance_feet"] - feet_between(mine, shown)) <= 10, (seen, mine)
        assert expect(viewer.get(f"/nearby/v1/users/{other.id}"), 200)["user_id"].lower() == other.id

    # Sam stops sharing: he is gone from Sky's list at once, and sees nobody himself.
    off = expect(sam.patch("/nearby/v1/settings", json={"share_location": False}), 200)
    assert off["share_location"] is False, off
    assert card(sky, sam) is None
    mine = expect(sam.get("/nearby/v1/nearby"), 200)
    assert mine["sharing"] is False and mine["users"] == [], mine
    assert sky.get(f"/nearby/v1/users/{sam.id}").status_code == 404
    assert sam.put("/nearby/v1/location", json={"latitude": lat, "longitude": lon}).status_code == 409

    # Back on; then Sky deletes her location and is gone from Sam's list.
    expect(sam.patch("/nearby/v1/settings", json={"share_location": True}), 200)
    expect(sam.put("/nearby/v1/location", json={"latitude": lat, "longitude": lon}), 200)
    assert card(sam, sky) is not None and card(sky, sam) is not None
    assert sky.delete("/nearby/v1/location").status_code == 204
    assert card(sam, sky) is None


# ---------------------------------------------------------------------------------- I Believe In You


def test_ibelieveinyou_support_earns_karma(api: Api):
    creator = api.sign_up_confirmed("ibelieveinyou", "creator", full_name="Cora Creator")
    fan = api.sign_up_confirmed("ibelieveinyou", "fan", full_name="Finn Fan")
    register_device(creator)

    title = f"E2E Garden Robot {uuid.uuid4().hex[:6]}"
    project = expect(creator.post("/projects/v1/projects", json={"title": title, "tagline": "Waters plants", "mood": "green"}), 201)
    project_id = project["id"].lower()
    assert project["is_published"] is True and project["is_owner"] is True and project["follower_count"] == 0, project
    post = expect(creator.post(f"/projects/v1/projects/{project_id}/posts", json={"content": "First prototype works!"}), 201)

    seen = expect(fan.get(f"/projects/v1/projects/by-slug/{project['public_slug']}"), 200)
    assert seen["id"].lower() == project_id and seen["is_owner"] is False and seen["is_following"] is False, seen

    follow = expect(fan.post(f"/projects/v1/projects/{project_id}/follow"), 200)
    assert follow["following"] is True and follow["follower_count"] == 1 and follow["karma_earned"] == 5, follow
    like = expect(fan.post(f"/projects/v1/posts/{post['id']}/like"), 200)
    assert like["liked"] is True and like["like_count"] == 1 and like["karma_earned"] == 1, like
    sent = expect(fan.post(f"/projects/v1/projects/{project_id}/support-messages", json={"message": "You've got this!"}), 201)
    assert sent["karma_earned"] == 10 and sent["karma"]["total_points"] == 16, sent
    assert sent["message"]["is_anonymous"] is False, sent
    # A second follow of the same project earns nothing more.
    assert expect(fan.post(f"/projects/v1/projects/{project_id}/follow"), 200)["karma_earned"] == 0

    karma = expect(fan.get("/projects/v1/me/karma"), 200)
    assert karma["user_id"].lower() == fan.id, karma
    assert (karma["total_points"], karma["level"], karma["label"], karma["emoji"]) == (16, 1, "New Supporter", "🌱"), karma
    assert karma["next_level_at"] == 51 and karma["points_to_next_level"] == 35, karma
    assert 0 < karma["progress"] < 1, karma
    stats = expect(fan.get("/projects/v1/me/stats"), 200)
    assert stats == {"projects_supported": 1, "messages_sent": 1, "posts_liked": 1}, stats
    actions = expect(fan.get("/projects/v1/me/support-actions"), 200)
    assert sorted((a["action_type"], a["points_earned"]) for a in actions) == [("follow", 5), ("like", 1), ("message", 10)], actions
    # The creator earns nothing from their own project.
    assert expect(creator.get("/projects/v1/me/karma"), 200)["total_points"] == 0

    feed = expect(fan.get("/projects/v1/feed"), 200)
    assert [(p["id"], p["liked_by_me"], p["like_count"]) for p in feed["posts"]] == [(post["id"], True, 1)], feed
    messages = expect(creator.get(f"/projects/v1/projects/{project_id}/support-messages"), 200)
    assert [m["message"] for m in messages] == ["You've got this!"] and messages[0]["sender_id"], messages

    # The creator hears about both: a new follower and the support message.
    notification(creator, "new_follower", project_id=project_id)
    item = notification(creator, "support_message", project_id=project_id, message_id=sent["message"]["id"])
    assert title in item["title"] and "You've got this!" in item["body"], item
