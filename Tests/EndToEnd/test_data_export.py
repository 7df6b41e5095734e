"""A person's copy of their data (issue 40): in each app, a user fills every service through the
apps' APIs beside another user they share a circle, group, hive, spot or project with; asks for
their data (POST /auth/v1/user/export); gets the signed link by mail (or by SMS, for HabitHive's
phone accounts); downloads the archive through the gateway. The archive is then held against what
each service's schema holds: every row that names the user by id is in their service's part
(unless the part says why not), their uploads are there, and nothing of the other user is, beyond
their messages in the user's own conversations (a DM thread, a support message to their project)
and the notifications the user was sent, as they were shown.
"""

from __future__ import annotations

import io
import json
import re
import uuid
import zipfile

import pytest

from e2e_support import EVENTUAL_TIMEOUT, Api, User, expect, wait_until
from supabase_source import local_env, m4a, pipeline_idle, png, psql

EXPORT_LINK = re.compile(r"https?://\S+/storage/v1/object/sign/exports/\S+")
# Assembling waits for every service's part; on a busy two-core machine the relay, three consumers
# and the assembly job (every 5 s) take a while.
EXPORT_TIMEOUT = max(EVENTUAL_TIMEOUT, 90.0)


def marker(tag: str) -> str:
    return f"{tag}-{uuid.uuid4().hex[:10]}"




# Columns that name the user in somebody else's row: a notification the user's action caused is the
# recipient's (in the recipient's export), not the user's.
OTHERS_ROWS = {"notifications": {"actor_id"}}


def rows_naming(schema: str, user_id: str) -> dict[str, list[dict]]:
    """Every row of the schema with the user's id in one of its uuid columns (but those of
    OTHERS_ROWS), per table."""
    skipped = "', '".join(OTHERS_ROWS.get(schema, set()) or {""})
    columns = psql(f"""SELECT table_name, string_agg(column_name, ',') FROM information_schema.columns
                       WHERE table_schema = '{schema}' AND udt_name = 'uuid' AND column_name NOT IN ('{skipped}')
                       GROUP BY table_name""")
    found: dict[str, list[dict]] = {}
    for line in columns.splitlines():
        table, names = line.split("|", 1)
        condition = " OR ".join(f"t.{name} = '{user_id}'::uuid" for name in names.split(","))
        rows = psql(f"SELECT row_to_json(t) FROM {schema}.{table} t WHERE {condition}")
        found[table] = [json.loads(row) for row in rows.splitlines() if row.strip()]
    return found


def uuids(value) -> set[str]:
    if isinstance(value, dict):
        return set().union(*(uuids(item) for item in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(uuids(item) for item in value)) if value else set()
    if isinstance(value, str) and re.fullmatch(r"[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}", value):
        return {value.lower()}
    return set()


def request_export(user: User) -> dict:
    started = expect(user.post("/auth/v1/user/export"), 202)
    assert started["status"] == "running" and started["id"], started
    # One at a time.
    second = user.post("/auth/v1/user/export")
    assert second.status_code == 409 and second.json()["code"] == "export_in_progress", second.text
    return started


def export_link(api: Api, user: User) -> str:
    if user.email:
        def mailed():
            mail = api.mailbox.wait_for_mail(user.email, timeout=EXPORT_TIMEOUT)
            links = EXPORT_LINK.findall(mail["text"])
            return links[0] if links else None
        return wait_until(f"the export mail to {user.email}", mailed, timeout=EXPORT_TIMEOUT, interval=1.0)
    text = api.mailbox.wait_for(user.phone, app=user.app, kind="export_ready", timeout=EXPORT_TIMEOUT)
    assert text["channel"] == "sms" and text["link"] in text["text"], text
    return text["link"]


def download(api: Api, link: str) -> dict[str, bytes]:
    response = api.http.get(link)
    assert response.status_code == 200 and response.headers["content-type"] == "application/zip", (response.status_code, response.text[:300])
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        assert archive.testzip() is None
        return {name: archive.read(name) for name in archive.namelist()}


def check_archive(api: Api, user: User, other: User, services: list[str], *, allowed_from_other: list[str], absent: list[str],
                  uploads: int) -> dict[str, bytes]:
    """Exports the user's data and holds the archive against the schemas (see the module's text)."""
    # What the user's and the other's actions set off (a notification of the other's message)
    # has landed: the copy is then of everything the schemas hold.
    env = local_env()
    wait_until("every outbox sent and every consumer caught up", lambda: pipeline_idle(env), timeout=EXPORT_TIMEOUT, interval=1.0)
    request_export(user)
    entries = download(api, export_link(api, user))
    assert "README.md" in entries, sorted(entries)
    whole = b"\n".join(entries.values()).decode("utf-8", "replace")
    # What the user was sent (notifications' history) is theirs as it was shown to them, which may
    # name the other person ("Bea posted …"); everything else must not.
    theirs_only = b"\n".join(body for name, body in entries.items() if not name.startswith("notifications/")).decode("utf-8", "replace")
    for service in ["auth", *services]:
        assert f"{service}/data.json" in entries and f"{service}/README.md" in entries, (service, sorted(entries))
        data = json.loads(entries[f"{service}/data.json"])
        assert data["user_id"].lower() == user.id and data["service"] == service, data
        text = entries[f"{service}/data.json"].decode()
        exported_ids = uuids(data["tables"]) | {user.id}
        # Nothing missing: each row naming the user is in the part, with every id it holds, unless
        # the part says why its table is left out.
        for table, rows in rows_naming(service, user.id).items():
            if table in data["not_exported"]:
                continue
            for row in rows:
                missing = uuids(row) - exported_ids
                assert not missing, f"{service}.{table} row {row} is not in the export (ids {missing} missing)"
        # Each field of each table is explained in the part's README.
        readme = entries[f"{service}/README.md"].decode()
        for table, rows in data["tables"].items():
            assert f"## {table}" in readme, (service, table)
            for row in rows[:1]:
                for field in row:
                    assert f"`{field}`" in readme, f"{service}.{table}.{field} is not explained in its README"
        assert user.id in text
    files = [name for name in entries if "/files/" in name]
    assert len(files) >= uploads, f"uploads missing: {files}"
    # Nothing of the other user beyond their messages in the user's conversations.
    for value in absent:
        assert value not in theirs_only, f"{value!r} (the other user's) is in {user.app}'s export"
    for value in allowed_from_other:
        assert value in whole, f"{value!r} (the other side of the user's conversation) is missing"
    listed = expect(user.get("/auth/v1/user/export"), 200)["exports"]
    assert listed[0]["status"] == "ready" and listed[0]["expires_at"], listed
    return entries


def other_user_values(other: User, name: str) -> list[str]:
    return [value for value in (other.email, other.phone, name) if value]


# ---------------------------------------------------------------------------------- the apps


def test_mycirclee_export(api: Api):
    ada = api.sign_up_confirmed("mycirclee", "export-ada", full_name="Ada Export")
    bea_name = marker("Bea")
    bea = api.sign_up_confirmed("mycirclee", "export-bea", full_name=bea_name)
    expect(ada.post("/notifications/v1/devices", json={"token": uuid.uuid4().hex * 2, "environment": "sandbox", "platform": "ios"}), 200)
    circle = expect(ada.post("/circles/v1/circles", json={"name": "Export circle"}), 201)["id"].lower()
    code = expect(ada.post(f"/circles/v1/circles/{circle}/invites"), 201)["code"]
    expect(bea.post("/circles/v1/invites/claim", json={"code": code}), 200)
    mine = expect(ada.post(f"/circles/v1/circles/{circle}/posts", json={"type": "note", "body": marker("ada-post")}), 201)
    expect(ada.put(f"/circles/v1/posts/{mine['id']}/photo", content=png(1), headers={"Content-Type": "image/png"}), 200)
    bea_post = marker("bea-post")
    theirs = expect(bea.post(f"/circles/v1/circles/{circle}/posts", json={"type": "note", "body": bea_post}), 201)
    expect(ada.put(f"/circles/v1/posts/{theirs['id']}/reactions/🔥"), 200)
    expect(ada.put(f"/circles/v1/circles/{circle}/presence", json={"status": "deep_work"}), 200)
    thread = expect(ada.post(f"/circles/v1/circles/{circle}/dms", json={"user_id": bea.id}), 200, 201)["id"]
    expect(ada.post(f"/circles/v1/dms/{thread}/messages", json={"body": marker("ada-dm")}), 201)
    bea_reply = marker("bea-dm")
    expect(bea.post(f"/circles/v1/dms/{thread}/messages", json={"body": bea_reply}), 201)
    check_archive(api, ada, bea, ["circles", "notifications"], allowed_from_other=[bea_reply],
                  absent=[*other_user_values(bea, bea_name), bea_post], uploads=1)


def test_unify_export(api: Api):
    ann = api.sign_up_with_code("unify", "export-ann", full_name="Ann Export")
    ben_name = marker("Ben")
    ben = api.sign_up_with_code("unify", "export-ben", full_name=ben_name)
    expect(ann.get("/chat/v1/me"), 200)
    expect(ben.get("/chat/v1/me"), 200)
    expect(ann.put("/chat/v1/me/avatar", content=png(2), headers={"Content-Type": "image/png"}), 200)

    def create_group():
        response = ann.post("/chat/v1/groups", json={"name": "Export group", "member_emails": [ben.email]})
        if response.status_code == 422 and response.json().get("code") == "unknown_emails":
            return None
        return expect(response, 201)

    group = wait_until("chat to know Ben's address", create_group)["id"].lower()
    expect(ann.post(f"/chat/v1/groups/{group}/messages", json={"content": marker("ann-message")}), 201)
    expect(ann.post(f"/chat/v1/groups/{group}/messages/voice", params={"duration": 3}, content=m4a(1), headers={"Content-Type": "audio/mp4"}), 201)
    ben_message = marker("ben-message")
    expect(ben.post(f"/chat/v1/groups/{group}/messages", json={"content": ben_message}), 201)
    check_archive(api, ann, ben, ["chat", "notifications"], allowed_from_other=[],
                  absent=[*other_user_values(ben, ben_name), ben_message], uploads=2)


def test_habithive_export_by_sms(api: Api):
    hal = api.phone_otp_sign_in("habithive")
    hop = api.phone_otp_sign_in("habithive")
    hop_name = marker("Hop")
    expect(hal.patch("/habits/v1/profile", json={"display_name": "Hal Export"}), 200)
    expect(hop.patch("/habits/v1/profile", json={"display_name": hop_name}), 200)
    habit = expect(hal.post("/habits/v1/habits", json={"name": marker("hal-habit"), "emoji": "💧"}), 201)
    expect(hal.post(f"/habits/v1/habits/{habit['id']}/logs", json={}), 200)
    hive = expect(hal.post("/habits/v1/hives", json={"name": "Export hive", "emoji": "🏃"}), 201)["hive"]["id"].lower()
    invite = expect(hal.post(f"/habits/v1/hives/{hive}/invites", json={"max_uses": 5}), 201)
    expect(hop.post("/habits/v1/hives/join", json={"code": invite["code"]}), 200)
    expect(hal.post(f"/habits/v1/hives/{hive}/logs", json={}), 200)
    hop_habit = marker("hop-habit")
    expect(hop.post("/habits/v1/habits", json={"name": hop_habit, "emoji": "📚"}), 201)
    check_archive(api, hal, hop, ["habits", "notifications"], allowed_from_other=[],
                  absent=[*other_user_values(hop, hop_name), hop_habit], uploads=0)


def test_socialspot_export(api: Api):
    sol = api.sign_up_confirmed("socialspot", "export-sol", full_name="Sol Export")
    sid_name = marker("Sid")
    sid = api.sign_up_confirmed("socialspot", "export-sid", full_name=sid_name)
    expect(sol.patch("/nearby/v1/profile", json={"name": "Sol Export", "bio": marker("sol-bio")}), 200)
    sid_bio = marker("sid-bio")
    expect(sid.patch("/nearby/v1/profile", json={"name": sid_name, "bio": sid_bio}), 200)
    expect(sol.put("/nearby/v1/profile/photo", content=png(3), headers={"Content-Type": "image/png"}), 200)
    for user in (sol, sid):
        expect(user.patch("/nearby/v1/settings", json={"share_location": True}), 200)
    expect(sol.put("/nearby/v1/location", json={"latitude": 40.0, "longitude": -100.0, "accuracy": 5}), 200)
    expect(sid.put("/nearby/v1/location", json={"latitude": 40.0001, "longitude": -100.0, "accuracy": 5}), 200)
    expect(sol.post("/nearby/v1/blocks", json={"user_id": sid.id}), 201)
    check_archive(api, sol, sid, ["nearby", "notifications"], allowed_from_other=[],
                  absent=[*other_user_values(sid, sid_name), sid_bio, "40.0001"], uploads=1)


def test_ibelieveinyou_export(api: Api):
    cora = api.sign_up_confirmed("ibelieveinyou", "export-cora", full_name="Cora Export")
    finn_name = marker("Finn")
    finn = api.sign_up_confirmed("ibelieveinyou", "export-finn", full_name=finn_name)
    project = expect(cora.post("/projects/v1/projects", json={"title": marker("Cora project"), "tagline": "Exported"}), 201)["id"].lower()
    expect(cora.put(f"/projects/v1/projects/{project}/cover", content=png(4), headers={"Content-Type": "image/png"}), 200)
    post = expect(cora.post(f"/projects/v1/projects/{project}/posts", json={"content": marker("cora-post")}), 201)
    finn_project = expect(finn.post("/projects/v1/projects", json={"title": marker("Finn project"), "tagline": "Not Cora's"}), 201)["id"].lower()
    expect(cora.post(f"/projects/v1/projects/{finn_project}/follow"), 200)
    expect(finn.post(f"/projects/v1/projects/{project}/follow"), 200)
    expect(finn.post(f"/projects/v1/posts/{post['id']}/like"), 200)
    finn_words = marker("finn-support")
    expect(finn.post(f"/projects/v1/projects/{project}/support-messages", json={"message": finn_words}), 201)
    anonymous = marker("anonymous-support")
    expect(finn.post(f"/projects/v1/projects/{project}/support-messages", json={"message": anonymous, "is_anonymous": True}), 201)
    entries = check_archive(api, cora, finn, ["projects", "notifications"], allowed_from_other=[finn_words, anonymous],
                            absent=[*other_user_values(finn, finn_name)], uploads=1)
    # An anonymous message stays anonymous in the copy: no sender on it.
    received = [row for rows in json.loads(entries["projects/data.json"])["tables"].values() for row in rows
                if isinstance(row, dict) and anonymous in json.dumps(row)]
    assert received and all(finn.id not in json.dumps(row) for row in received), received
