"""Report and moderate in all five apps (issue 39), through the gateway and the Colony Console in a
real browser: in each app a user reports something another user published that they can see; a
stranger who cannot see it is refused exactly as for something that does not exist; a moderator
(made by `colony-admin operators add --role moderator`) finds it in the console's moderation queue,
reviews it and removes it (MyCirclee's post also leaves the other member's realtime channel), warns
(Unify) or dismisses (the second SocialSpot report); the reporter's and other members' views change,
the reporter hears the outcome in the app, the warned user gets their warning, and the audit log
lists each decision. The moderation pages are photographed with the console's others."""

from __future__ import annotations

import asyncio
import random
import uuid

import httpx
import pytest
from selenium.webdriver.common.by import By

from e2e_support import EVENTUAL_TIMEOUT, Api, Stack, User, expect, postgres_changes, wait_until
from test_console_browser import Console, browsers, invite_with_colony_admin  # noqa: F401 (browsers: the fixture)
from test_journeys import notification, offset


def report(user: User, service: str, object_type: str, object_id: str, category: str = "harassment", words: str | None = None):
    body = {"object_type": object_type, "object_id": object_id, "category": category}
    if words:
        body["words"] = words
    return user.post(f"/{service}/v1/reports", json=body)


def reported(user: User, service: str, object_type: str, object_id: str, category: str = "harassment") -> dict:
    filed = expect(report(user, service, object_type, object_id, category, words="please look at this"), 201)
    assert filed["status"] == "open" and filed["object_id"].lower() == object_id and filed["category"] == category, filed
    again = report(user, service, object_type, object_id, category)
    assert again.status_code == 409 and again.json()["code"] == "already_reported", again.text
    return filed


def refused_like_nothing(stranger: User, service: str, object_type: str, object_id: str) -> None:
    """A stranger's report of what they cannot see is the answer for an id that names nothing."""
    hidden = report(stranger, service, object_type, object_id)
    missing = report(stranger, service, object_type, str(uuid.uuid4()))
    assert hidden.status_code == 404 and missing.status_code == 404, (hidden.text, missing.text)
    assert hidden.json()["code"] == missing.json()["code"], (hidden.text, missing.text)


def decide(moderator: Console, app: str, object_type: str, object_id: str, action: str, shots: bool = False, duration: str | None = None) -> None:
    """The moderator finds the object in the queue, opens it and decides."""
    row = f"a[href='/console/moderation/{app}/{object_type}/{object_id}']"

    def listed() -> bool:
        moderator.open("/console/moderation")
        return bool(moderator.driver.find_elements(By.CSS_SELECTOR, row))

    wait_until(f"{app}'s {object_type} in the moderation queue", listed)
    if shots:
        moderator.shot("moderation")
    moderator.click(moderator.driver.find_element(By.CSS_SELECTOR, row))
    if shots:
        moderator.shot("moderation-object")
    moderator.click(moderator.driver.find_element(By.ID, action))
    assert "/console/moderation?done=" in moderator.driver.current_url, moderator.page
    assert not moderator.driver.find_elements(By.CSS_SELECTOR, row), "decided: no longer in the queue"


async def deletion_over_realtime(stack: Stack, member: User, circle: str, post_id: str, act) -> dict:
    """The member's app listens to the circle's posts; `act` runs once subscribed; returns the
    DELETE that arrived for `post_id`."""
    async with postgres_changes(stack, "mycirclee", member, "DELETE", "posts", f"circle_id=eq.{circle}") as changes:
        loop = asyncio.get_running_loop()
        await asyncio.to_thread(act)
        deadline = loop.time() + EVENTUAL_TIMEOUT
        while True:
            try:
                payload = await asyncio.wait_for(changes.get(), max(0.1, deadline - loop.time()))
            except asyncio.TimeoutError:
                pytest.fail(f"the removal of post {post_id} did not arrive over realtime within {EVENTUAL_TIMEOUT:g}s", pytrace=False)
            old = payload["data"].get("old_record") or payload["data"].get("old") or {}
            if str(old.get("id", "")).lower() == post_id:
                return payload


def test_report_and_moderate_in_every_app(api: Api, stack: Stack, browsers) -> None:
    tag = uuid.uuid4().hex[:8]
    moderator = browsers("moderator")
    moderator.take_invitation(invite_with_colony_admin(f"moderator-{tag}@example.com", "moderator"))

    # MyCirclee: a member reports the owner's post; a stranger outside the circle cannot. Removed:
    # gone from the member's feed, and the member's realtime channel hears the DELETE.
    owner = api.sign_up_confirmed("mycirclee", "mod-owner", full_name="Owen Owner")
    member = api.sign_up_confirmed("mycirclee", "mod-member", full_name="Mia Member")
    outsider = api.sign_up_confirmed("mycirclee", "mod-outsider", full_name="Oscar Outside")
    circle = expect(owner.post("/circles/v1/circles", json={"name": "Moderated circle"}), 201)["id"].lower()
    invite = expect(owner.post(f"/circles/v1/circles/{circle}/invites"), 201)
    expect(member.post("/circles/v1/invites/claim", json={"code": invite["code"]}), 200)
    post = expect(owner.post(f"/circles/v1/circles/{circle}/posts", json={"type": "note", "body": f"something nasty {tag}"}), 201)
    post_id = post["id"].lower()
    reported(member, "circles", "post", post_id)
    refused_like_nothing(outsider, "circles", "post", post_id)
    mine = owner.post("/circles/v1/reports", json={"object_type": "post", "object_id": post_id, "category": "spam"})
    assert mine.status_code == 403 and mine.json()["code"] == "own_content", mine.text
    change = asyncio.run(deletion_over_realtime(stack, member, circle, post_id,
                                                lambda: decide(moderator, "mycirclee", "post", post_id, "remove", shots=True)))
    assert change["data"].get("type", change["data"].get("eventType")) == "DELETE", change
    assert member.get(f"/circles/v1/posts/{post_id}").status_code == 404
    assert post_id not in [p["id"].lower() for p in expect(member.get(f"/circles/v1/circles/{circle}/posts"), 200)["posts"]]
    outcome = notification(member, "report_outcome", object_id=post_id)
    assert "Owen" not in outcome["title"] + outcome["body"], outcome

    # Unify: a member reports a message; someone outside the group cannot. Warned: the message
    # stays, its sender is warned in the app, the reporter hears that action was taken.
    alice = api.sign_up_with_code("unify", "mod-alice", full_name="Alice Unify")
    bob = api.sign_up_with_code("unify", "mod-bob", full_name="Bob Unify")
    carol = api.sign_up_with_code("unify", "mod-carol", full_name="Carol Unify")

    def create_group():
        response = alice.post("/chat/v1/groups", json={"name": "Moderated group", "member_emails": [bob.email]})
        if response.status_code == 422 and response.json().get("code") == "unknown_emails":
            return None
        return expect(response, 201)

    group = wait_until("the chat service to know Bob's address", create_group)["id"].lower()
    message = expect(alice.post(f"/chat/v1/groups/{group}/messages", json={"content": f"rude words {tag}"}), 201)["id"].lower()
    spam = expect(alice.post(f"/chat/v1/groups/{group}/messages", json={"content": f"buy now {tag}"}), 201)["id"].lower()
    reported(bob, "chat", "message", message)
    reported(bob, "chat", "message", spam, "spam")
    refused_like_nothing(carol, "chat", "message", message)
    decide(moderator, "unify", "message", message, "warn")
    notification(alice, "moderation_warning", object_id=message)
    notification(bob, "report_outcome", object_id=message, outcome="warned")
    assert message in [m["id"].lower() for m in expect(bob.get(f"/chat/v1/groups/{group}/messages"), 200)["messages"]], "a warning leaves the message"
    decide(moderator, "unify", "message", spam, "remove")
    listed = [m["id"].lower() for m in expect(bob.get(f"/chat/v1/groups/{group}/messages"), 200)["messages"]]
    assert spam not in listed and message in listed, listed

    # HabitHive: a member reports the hive (its name); someone outside it cannot. Removed: the hive
    # is deleted as its owner would delete it, gone from the member's hives.
    hana = api.phone_otp_sign_in("habithive")
    hugo = api.phone_otp_sign_in("habithive")
    hal = api.phone_otp_sign_in("habithive")
    hive = expect(hana.post("/habits/v1/hives", json={"name": f"Offensive name {tag}", "emoji": "🏃"}), 201)["hive"]["id"].lower()
    code = expect(hana.post(f"/habits/v1/hives/{hive}/invites", json={"max_uses": 5}), 201)["code"]
    expect(hugo.post("/habits/v1/hives/join", json={"code": code}), 200)
    reported(hugo, "habits", "hive", hive, "hate")
    refused_like_nothing(hal, "habits", "hive", hive)
    decide(moderator, "habithive", "hive", hive, "remove")
    assert hugo.get(f"/habits/v1/hives/{hive}").status_code == 404
    assert hive not in [h["hive"]["id"].lower() for h in expect(hugo.get("/habits/v1/hives"), 200)]
    notification(hugo, "report_outcome", object_id=hive, outcome="removed")

    # SocialSpot: someone nearby reports a profile; someone far away cannot see it, so cannot report
    # it. Removed: the bio is gone from the card the reporter sees.
    sam = api.sign_up_confirmed("socialspot", "mod-sam", full_name="Sam Spot")
    sky = api.sign_up_confirmed("socialspot", "mod-sky", full_name="Sky Spot")
    far = api.sign_up_confirmed("socialspot", "mod-far", full_name="Far Away")
    lat, lon = random.uniform(30.0, 45.0), random.uniform(-120.0, -80.0)
    for user, (ulat, ulon), bio in ((sam, (lat, lon), f"offensive bio {tag}"), (sky, offset(lat, lon, 100.0), "hi"), (far, offset(lat, lon, 50_000.0), "far")):
        expect(user.patch("/nearby/v1/profile", json={"name": user.extra.get("full_name", "Spot"), "bio": bio}), 200)
        expect(user.patch("/nearby/v1/settings", json={"share_location": True}), 200)
        expect(user.put("/nearby/v1/location", json={"latitude": ulat, "longitude": ulon, "accuracy": 5}), 200)
    reported(sky, "nearby", "profile", sam.id)
    refused_like_nothing(far, "nearby", "profile", sam.id)
    decide(moderator, "socialspot", "profile", sam.id, "remove")
    card = expect(sky.get(f"/nearby/v1/users/{sam.id}"), 200)
    assert f"offensive bio {tag}" not in str(card), card
    notification(sky, "report_outcome", object_id=sam.id, outcome="removed")
    # A second report of the same profile, dismissed: the reporter is told it was within the rules.
    reported(sky, "nearby", "profile", sam.id, "other")
    decide(moderator, "socialspot", "profile", sam.id, "dismiss")
    notification(sky, "report_outcome", object_id=sam.id, outcome="dismissed")

    # I Believe In You: a supporter reports a project post. Removed: gone from the post route and
    # from the project's posts.
    creator = api.sign_up_confirmed("ibelieveinyou", "mod-creator", full_name="Cora Creator")
    fan = api.sign_up_confirmed("ibelieveinyou", "mod-fan", full_name="Finn Fan")
    project = expect(creator.post("/projects/v1/projects", json={"title": f"Moderated {tag}", "tagline": "t", "mood": "green"}), 201)["id"].lower()
    project_post = expect(creator.post(f"/projects/v1/projects/{project}/posts", json={"content": f"scam link {tag}"}), 201)["id"].lower()
    reported(fan, "projects", "post", project_post, "spam")
    refused_like_nothing(fan, "projects", "post", str(uuid.uuid4()))
    decide(moderator, "ibelieveinyou", "post", project_post, "remove")
    assert fan.get(f"/projects/v1/posts/{project_post}").status_code == 404
    assert project_post not in [p["id"].lower() for p in expect(fan.get(f"/projects/v1/projects/{project}/posts"), 200)["posts"]]
    notification(fan, "report_outcome", object_id=project_post, outcome="removed")

    # The audit log lists each decision.
    moderator.open("/console/audit?action=moderate_remove")
    audit = moderator.driver.find_element(By.ID, "audit").text
    for target in (f"post:{post_id}", f"message:{spam}", f"hive:{hive}", f"profile:{sam.id}", f"post:{project_post}"):
        assert target in audit, (target, audit)
    moderator.open("/console/audit?action=moderate_warn")
    assert f"message:{message}" in moderator.driver.find_element(By.ID, "audit").text
