"""Moving each app from Supabase to Colony (`colony-admin import supabase`), end to end: a
Supabase-shaped database built from GoTrue's own migrations and the seed's own schema and trigger
(supabase_source.py), filled with sample data and its edge cases (expired posts and locations, a
deleted user's leftovers, a member of several circles, Apple identities and an Apple-only account,
argon2 and Firebase scrypt password hashes, a builder the seed's trigger named '' and one whose
name is too long, texts over Colony's limits, a milestone unticked with its completed_at left,
rows that break Colony's rules, a file that is missing), a dry run, the import into the running stack, the same import again (nothing changes), then the
app's journey through the gateway on the imported data: the imported user signs in with their old
password, sees their circles/groups/hives/projects, and a member gets a realtime change and a
notification for imported content.

Every import's summary is kept in .local/logs/import-<app>-<run>.txt. Every run, dry and failed ones
too, is recorded by auth with its summary and served to the console (`GET /auth/v1/admin/imports`
with the console's key, on auth's own port) for its app only; an app user's token gets nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import uuid
from datetime import timedelta
from typing import Any, Callable

import httpx
import pytest
from realtime import AsyncRealtimeClient, RealtimeSubscribeStates

from e2e_support import APPS, EVENTUAL_TIMEOUT, ROOT, Api, Stack, User, expect, wait_until
from supabase_source import LOG_DIR, ImportRun, SourceProject, m4a, now, png, service_role_key, sql_literal, wait_for_projections

# Rows that broke a rule on purpose make every run exit 2 (skipped or incomplete rows).
INCOMPLETE = 2


@pytest.fixture
def source_project():
    """Makes the scratch Supabase project of an app; drops it after the test."""
    made: list[SourceProject] = []

    def make(app: str) -> SourceProject:
        made.append(SourceProject(app))
        return made[-1]

    yield make
    for source in made:
        source.drop()


def import_twice(source: SourceProject) -> tuple[ImportRun, ImportRun, ImportRun]:
    """A dry run (nothing written, the counts a real run then has), the import, and the same
    import again: it writes nothing and counts everything as already there."""
    dry = source.run_import(dry_run=True, label="dry-run")
    assert dry.status == INCOMPLETE, dry.output
    first = source.run_import(label="first")
    assert first.status == INCOMPLETE, first.output
    for table in first.summary["tables"]:
        dry_table = dry.table(table["name"])
        assert (dry_table["read"], dry_table["imported"], len(dry_table["skipped"])) == (table["read"], table["imported"], len(table["skipped"])), \
            f"{table['name']}: the dry run said {dry_table}, the import did {table}"
    second = source.run_import(label="second")
    assert second.status == INCOMPLETE, second.output
    assert second.written == 0, second.output
    for table in first.summary["tables"]:
        again = second.table(table["name"])
        assert again["already"] == table["already"] + table["imported"], (table, again)
        assert again["skipped"] == table["skipped"], (table, again)
    assert second.summary["files_copied"] == 0, second.output
    check_recorded(source, [(dry, True, str(source.storage)), (first, False, str(source.storage)), (second, False, str(source.storage))])
    return dry, first, second


# ---------------------------------------------------------------------------------- the record of runs

OPERATOR = "e2e-imports@colony.test"


def auth_direct_url() -> str:
    """Auth's own port: the console's credential works there only (the gateway clears X-Colony-Operator)."""
    return os.environ.get("COLONY_AUTH_DIRECT_URL", f"http://127.0.0.1:{int(os.environ.get('COLONY_SERVICE_BASE_PORT', '8081'))}")


def console_key() -> str:
    return os.environ.get("COLONY_CONSOLE_KEY") or (ROOT / ".local" / "secrets" / "console-key").read_text().strip()


def console_headers(app: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {console_key()}", "X-Colony-Operator": OPERATOR, "X-Colony-App": app}


def recorded_runs(app: str, source: SourceProject) -> list[dict]:
    """`source`'s runs as the console reads them (`GET /auth/v1/admin/imports` in `app`), newest first."""
    response = httpx.get(f"{auth_direct_url()}/auth/v1/admin/imports", params={"per_page": 100}, headers=console_headers(app), timeout=30)
    runs = expect(response, 200)["imports"]
    assert all(run["app"] == app for run in runs), runs
    assert [run["started_at"] for run in runs] == sorted((run["started_at"] for run in runs), reverse=True), runs
    return [run for run in runs if run["source"].split("?")[0].endswith(f"/{source.database}")]


def check_recorded(source: SourceProject, runs: list[tuple[ImportRun, bool, str]]) -> None:
    """Each of `runs` (oldest first: the run, whether it was a dry run, its --storage) is recorded
    as it ended, with its summary's counts and first 100 issues, the source without its password;
    the console reads them in the app only."""
    recorded = recorded_runs(source.app, source)[::-1]
    assert len(recorded) == len(runs), f"{len(runs)} runs, {len(recorded)} recorded: {recorded}"
    user = source.env.get("COLONY_PG_ADMIN_USER", "postgres")
    expected_source = f"postgres://{user}@{source.env['COLONY_PG_HOST']}:{source.env['COLONY_PG_PORT']}/{source.database}?sslmode=disable"
    for (run, dry, storage), record in zip(runs, recorded):
        what = f"{record}\n{run.output}"
        secret = source.env["COLONY_PG_ADMIN_PASSWORD"]
        assert len(secret) < 8 or secret not in json.dumps(record), what
        assert (record["source"], record.get("storage"), record["dry_run"]) == (expected_source, storage, dry), what
        assert "@" in record["run_by"] and record["started_at"] <= record["finished_at"], what
        assert record["status"] == {0: "complete", 2: "incomplete", 1: "failed"}[run.status], what
        summary = record["summary"]
        assert summary["dry_run"] == dry and summary["files_copied"] == run.summary["files_copied"], what
        assert (summary["incomplete_rows"], summary["adjusted_rows"]) == (len(run.summary["incomplete_rows"]), len(run.summary["adjusted_rows"])), what
        assert [(t["name"], t["read"], t["imported"], t["already"], t["not_imported"], t["skipped"], t["changed"]) for t in summary["tables"]] == \
            [(t["name"], t["read"], t["imported"], t["already"], t["not_imported"], len(t["skipped"]), sum(t["adjusted"].values())) for t in run.summary["tables"]], what
        issues = [(i["table"], i["id"], i["reason"]) for t in run.summary["tables"] for i in t["skipped"]] + \
            [(i["table"], i["id"], i["reason"]) for i in run.summary["incomplete_rows"]]
        assert [(i["table"], i["id"], i["reason"]) for i in summary["issues"]] == issues[:100], what
        if run.status == 1:
            assert record["error"] and "\n" not in record["error"] and summary["complete"] is False, what
        else:
            assert "error" not in record and summary["complete"] == run.summary["complete"], what
    for other in APPS:
        if other != source.app:
            assert recorded_runs(other, source) == [], f"{source.app}'s runs listed in {other}"


def sign_in(api: Api, app: str, email: str, secret: str) -> User:
    user = api.sign_in(app, email, secret)
    user.extra["password"] = secret
    return user


def apns_token() -> str:
    return secrets.token_hex(32)


def notification(user: User, kind: str, timeout: float = 60, **data) -> dict:
    def find():
        page = expect(user.get("/notifications/v1/notifications", params={"limit": 100}), 200)
        for item in page["notifications"]:
            if item["kind"] == kind and all(str(item["data"].get(k, "")).lower() == str(v).lower() for k, v in data.items()):
                return item
        return None

    return wait_until(f"a {kind} notification for {user.app} user {user.id} with {data}", find, timeout=timeout)


async def change_after(stack: Stack, user: User, table: str, filter: str, act: Callable[[], str], event: str = "INSERT",
                       timeout: float = 90) -> tuple[list[str], dict]:
    """`user`'s app subscribes to `table` changes (postgres_changes with `filter`, as the apps do)
    through the gateway, then `act` makes a change and returns the id the record will carry.
    Imported memberships reach realtime through Kafka a moment after the import: `act` is repeated
    every few seconds until one of its changes arrives. Returns every id made and the change."""
    client = AsyncRealtimeClient(stack.realtime_url, stack.keys[user.app], auto_reconnect=False, timeout=30)
    await client.connect()
    try:
        await client.set_auth(user.access_token)
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

        channel = client.channel(f"import_{table}_{uuid.uuid4().hex[:8]}")
        channel.on_postgres_changes(event, schema="public", table=table, filter=filter or None, callback=changes.put_nowait)
        await channel.subscribe(on_state)
        await asyncio.wait_for(subscribed, 35)
        made: list[str] = []
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            made.append((await asyncio.to_thread(act)).lower())
            round_end = min(deadline, loop.time() + 6)
            while loop.time() < round_end:
                try:
                    payload = await asyncio.wait_for(changes.get(), max(0.1, round_end - loop.time()))
                except asyncio.TimeoutError:
                    break
                record = payload["data"].get("record") or {}
                if any(str(value).lower() in made for value in record.values()):
                    return made, payload
        pytest.fail(f"no {event} of {table} ({filter}) arrived over realtime within {timeout:g}s for {made}", pytrace=False)
    finally:
        await client.close()


def fetch(api: Api, url: str, user: User | None = None) -> bytes:
    """A file URL Colony handed out, fetched through the gateway: a private bucket's stable URL
    (`/storage/v1/object/authenticated/…`) with the token of `user`, who may read it."""
    path = url.split("://", 1)[-1].split("/", 1)[1]
    response = user.get("/" + path) if user else api.http.get("/" + path)
    assert response.status_code == 200, f"GET {url} -> {response.status_code} {response.text[:300]}"
    return response.content


def log_counts(source: SourceProject, runs: dict[str, ImportRun]) -> None:
    """The per-table counts of the runs side by side, for the record."""
    lines = []
    for label, run in runs.items():
        lines.append(f"== {label} (exit {run.status})")
        lines += [f"  {t['name']}: source {t['read']}, imported {t['imported']}, already {t['already']}, "
                  f"not imported {sum(t['not_imported'].values())}, skipped {len(t['skipped'])}" for t in run.summary["tables"]]
        lines.append(f"  files copied {run.summary['files_copied']}, incomplete rows {len(run.summary['incomplete_rows'])}")
    (LOG_DIR / f"import-{source.app}-counts.txt").write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------------- MyCirclee


def test_import_mycirclee(api: Api, stack: Stack, source_project):
    p = source_project("mycirclee")
    t = now()
    olive = p.add_user("Olive Owner", password="olive-" + secrets.token_hex(4))
    max_ = p.add_user("Max Member", password="max-" + secrets.token_hex(4))
    ana = p.add_user("Ana Apple", password="ana-" + secrets.token_hex(4), apple=True)
    dee = p.add_user("Dee Deleted", password="dee-" + secrets.token_hex(4), deleted=True)
    bad = p.add_user("Bad Handle", password="bad-" + secrets.token_hex(4))
    # Users GoTrue imported from elsewhere keep those hashes, which Colony cannot verify: they come
    # over without a password, with everything of theirs.
    arnie = p.add_user("Arnie Argon", password_hash="$argon2id$v=19$m=65536,t=3,p=4$" + secrets.token_hex(8) + "$" + secrets.token_hex(16))
    fiona = p.add_user("Fiona Firebase", password_hash="$fbscrypt$v=1,n=14,r=8,p=1,ss=Bw==,sk=" + secrets.token_hex(16) + "$" + secrets.token_hex(8) + "$" + secrets.token_hex(16))
    # GoTrue writes '' where an account has no phone in projects of some ages.
    p.sql(f"UPDATE auth.users SET phone = '' WHERE id = '{max_.id}';")
    for user, handle in ((olive, "olive"), (max_, "max.m"), (ana, "ana_apple"), (dee, "dee"), (bad, "x!"), (arnie, "arnie"), (fiona, "fiona")):
        p.insert("public.profiles", user_id=user.id, display_name=user.name, handle=f"{handle}{secrets.token_hex(3)}" if handle != "x!" else handle,
                 bio=f"bio of {user.name}", dm_privacy="anyone", is_pro=user is olive, email=user.email)

    inner, books = str(uuid.uuid4()), str(uuid.uuid4())
    p.insert("public.circles", id=inner, name="Imported Inner Circle", created_by=olive.id, created_at=t - timedelta(days=30), invite_code="OLDCODE" + secrets.token_hex(3))
    p.insert("public.circles", id=books, name="Imported Book Club", created_by=max_.id, created_at=t - timedelta(days=20))
    for circle, user, role in ((inner, olive, "owner"), (inner, max_, "member"), (inner, dee, "member"), (inner, arnie, "member"),
                               (books, max_, "owner"), (books, ana, "member"), (books, olive, "member"), (books, fiona, "member")):
        p.insert("public.circle_members", circle_id=circle, user_id=user.id, role=role, joined_at=t - timedelta(days=10))

    photo = png(1)
    note, event, poll, expired, deleted_post, no_photo, arnies = (str(uuid.uuid4()) for _ in range(7))
    long_body = "Ran the whole trail today. " * 80  # 2,160 characters, over Colony's 2,000
    p.insert("public.posts", id=arnies, circle_id=inner, author_id=arnie.id, type="note", body=long_body, created_at=t - timedelta(hours=6), expires_at=t + timedelta(hours=18))
    p.insert("public.posts", id=note, circle_id=inner, author_id=olive.id, type="note", body="Imported note with a photo", mood="happy",
             photo_url=p.add_object("post-photos", f"{inner}/{note}.png", photo, "image/png"), created_at=t - timedelta(hours=2), expires_at=t + timedelta(hours=22))
    p.insert("public.posts", id=event, circle_id=inner, author_id=olive.id, type="event", body="Picnic", location="Park",
             created_at=t - timedelta(hours=3), expires_at=t + timedelta(hours=21))
    p.insert("public.posts", id=poll, circle_id=inner, author_id=max_.id, type="poll", body="Pizza or tacos?", created_at=t - timedelta(hours=1), expires_at=t + timedelta(hours=23))
    p.insert("public.posts", id=expired, circle_id=inner, author_id=olive.id, type="poll", body="Yesterday's poll", created_at=t - timedelta(hours=30), expires_at=t - timedelta(hours=6))
    p.insert("public.posts", id=deleted_post, circle_id=inner, author_id=dee.id, type="note", body="Dee was here", created_at=t - timedelta(hours=4), expires_at=t + timedelta(hours=20))
    p.insert("public.posts", id=no_photo, circle_id=inner, author_id=max_.id, type="note", body="Its photo is gone", created_at=t - timedelta(hours=5), expires_at=t + timedelta(hours=19),
             photo_url=p.add_object("post-photos", f"{inner}/{no_photo}.png", png(2), "image/png", in_folder=False))
    pizza, tacos, old_a, old_b = (str(uuid.uuid4()) for _ in range(4))
    for option, post, label in ((pizza, poll, "Pizza"), (tacos, poll, "Tacos"), (old_a, expired, "Yes"), (old_b, expired, "No")):
        p.insert("public.poll_options", id=option, post_id=post, label=label)
    p.insert("public.poll_votes", option_id=pizza, user_id=olive.id)
    p.insert("public.poll_votes", option_id=old_a, user_id=max_.id)
    p.insert("public.post_reactions", post_id=note, user_id=max_.id, emoji="❤️")
    p.insert("public.post_reactions", post_id=expired, user_id=max_.id, emoji="👍")
    p.insert("public.post_reactions", post_id=note, user_id=dee.id, emoji="🔥")
    p.insert("public.event_rsvps", post_id=event, user_id=max_.id, status="not_going")
    p.insert("public.kept_posts", user_id=max_.id, post_id=note)
    p.insert("public.kept_posts", user_id=max_.id, post_id=expired)

    thread, dee_thread = str(uuid.uuid4()), str(uuid.uuid4())
    p.insert("public.dm_threads", id=thread, circle_id=inner, user_a=max_.id, user_b=olive.id, last_message_at=t - timedelta(minutes=30), notify_a=True, notify_b=False)
    p.insert("public.dm_threads", id=dee_thread, circle_id=inner, user_a=dee.id, user_b=olive.id, last_message_at=t - timedelta(minutes=50))
    first, reply, from_dee = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    p.insert("public.dm_messages", id=first, thread_id=thread, sender_id=olive.id, body="Coming to the picnic?", created_at=t - timedelta(minutes=40), read_at=t - timedelta(minutes=35))
    p.insert("public.dm_messages", id=reply, thread_id=thread, sender_id=max_.id, body="Sadly not", reply_to_id=first, created_at=t - timedelta(minutes=30))
    p.insert("public.dm_messages", id=from_dee, thread_id=dee_thread, sender_id=dee.id, body="hi", created_at=t - timedelta(minutes=50))
    p.insert("public.dm_reactions", message_id=reply, user_id=olive.id, emoji="😢")
    p.insert("public.presence_states", user_id=olive.id, circle_id=inner, status="free")
    p.insert("public.presence_states", user_id=max_.id, circle_id=inner, status="deep_work")
    device = apns_token()
    p.insert("public.push_tokens", user_id=max_.id, token=device, platform="ios")
    p.insert("public.add_requests", circle_id=inner, from_user_id=olive.id, to_user_id=ana.id, status="pending")

    # Nothing exists in Colony before the import.
    refused = api.http.post("/auth/v1/token", params={"grant_type": "password"}, headers=api.anon("mycirclee"),
                            json={"email": olive.email, "password": olive.password})
    assert refused.status_code == 400, refused.text

    dry, first_run, second_run = import_twice(p)
    log_counts(p, {"dry run": dry, "first run": first_run, "second run": second_run})
    # A run that fails is recorded as failed, with its error.
    missing = str(p.storage / "no-such-folder")
    failed = p.run_import(storage=missing, label="failed")
    assert failed.status == 1 and "neither a folder nor an s3:// endpoint" in failed.output, failed.output
    check_recorded(p, [(dry, True, str(p.storage)), (first_run, False, str(p.storage)), (second_run, False, str(p.storage)), (failed, False, missing)])
    assert "neither a folder nor an s3:// endpoint" in recorded_runs("mycirclee", p)[0]["error"]
    assert first_run.counts("auth.users") == (7, 6, 0, 1, 0)             # Dee was deleted in Supabase
    # Arnie's and Fiona's hashes are not bcrypt: they came over without a password, each scheme counted.
    assert first_run.table("auth.users")["adjusted"] == {
        "password hash is argon2id, not bcrypt: imported without a password (signs in by link or code, then sets one)": 1,
        "password hash is firebase-scrypt, not bcrypt: imported without a password (signs in by link or code, then sets one)": 1}, first_run.output
    assert "auth.users: 1 password hash is argon2id" in first_run.output and "auth.users: 1 password hash is firebase-scrypt" in first_run.output
    assert first_run.counts("auth.identities") == (8, 7, 0, 0, 1)        # Ana's Apple one imported; Dee's dangling
    assert first_run.counts("public.profiles") == (7, 6, 0, 0, 1)        # Dee's (dangling) skipped; the bad handle replaced
    assert first_run.skipped_ids("public.profiles") == {dee.id}
    assert first_run.table("public.profiles")["adjusted"] == {"handle not 3–30 of a–z 0–9 _ . or taken in Colony: a new one suggested": 1}
    assert first_run.counts("public.circles") == (2, 2, 0, 0, 0)
    assert first_run.counts("public.circle_members") == (8, 7, 0, 0, 1)
    assert first_run.counts("public.posts") == (7, 5, 0, 1, 1)           # one expired, Dee's skipped
    assert first_run.table("public.posts")["adjusted"] == {"body over Colony's 2000 characters: cut to 2000": 1}
    assert first_run.skipped_ids("public.posts") == {deleted_post}
    assert first_run.counts("public.poll_options") == (4, 2, 0, 2, 0)
    assert first_run.counts("public.poll_votes") == (2, 1, 0, 1, 0)
    assert first_run.counts("public.post_reactions") == (3, 1, 0, 1, 1)
    assert first_run.counts("public.kept_posts") == (2, 1, 0, 1, 0)
    assert first_run.counts("public.dm_threads") == (2, 1, 0, 0, 1)
    assert first_run.counts("public.dm_messages") == (3, 2, 0, 0, 1)
    assert first_run.counts("public.push_tokens") == (1, 1, 0, 0, 0)
    assert [issue["id"] for issue in first_run.summary["incomplete_rows"]] == [no_photo], first_run.output
    assert first_run.summary["files_copied"] == 1

    # Olive signs in with her Supabase password and finds both her circles.
    olive_user = sign_in(api, "mycirclee", olive.email, olive.password)
    assert olive_user.id == olive.id
    # The record of imports is the operators': her token reads none of it, through the gateway or
    # on auth's port with the console's headers.
    through_gateway = olive_user.get("/auth/v1/admin/imports")
    assert through_gateway.status_code == 403 and "imports" not in through_gateway.json(), through_gateway.text
    direct = httpx.get(f"{auth_direct_url()}/auth/v1/admin/imports", timeout=30,
                       headers={**console_headers("mycirclee"), "Authorization": f"Bearer {olive_user.access_token}", "apikey": stack.keys["mycirclee"]})
    assert direct.status_code == 403 and direct.json().get("code") == "not_admin", direct.text
    circles = {c["id"].lower(): c for c in expect(olive_user.get("/circles/v1/circles"), 200)}
    assert set(circles) == {inner, books}, circles
    assert (circles[inner]["role"], circles[inner]["member_count"], circles[books]["role"]) == ("owner", 3, "member"), circles
    max_user = sign_in(api, "mycirclee", max_.email, max_.password)
    assert {c["id"].lower() for c in expect(max_user.get("/circles/v1/circles"), 200)} == {inner, books}
    members = expect(max_user.get(f"/circles/v1/circles/{inner}/members"), 200)
    assert sorted((m["profile"]["user_id"].lower(), m["role"]) for m in members) == sorted([(olive.id, "owner"), (max_.id, "member"), (arnie.id, "member")]), members
    profile = expect(max_user.get("/circles/v1/profile"), 200)
    assert profile["display_name"] == "Max Member" and profile["handle"].startswith("max.m") and profile["bio"] == "bio of Max Member", profile
    # The profile with the handle Colony refuses came over with the handle a sign-up would suggest.
    bad_profile = expect(sign_in(api, "mycirclee", bad.email, bad.password).get("/circles/v1/profile"), 200)
    assert bad_profile["handle"].startswith("badhandle_") and bad_profile["display_name"] == "Bad Handle" and bad_profile["bio"] == "bio of Bad Handle", bad_profile

    # The live posts, with the photo copied into Colony's bucket; the expired and Dee's are gone.
    feed = expect(max_user.get(f"/circles/v1/circles/{inner}/posts"), 200)["posts"]
    by_id = {post["id"].lower(): post for post in feed}
    assert set(by_id) == {note, event, poll, no_photo, arnies}, by_id.keys()
    assert by_id[arnies]["body"] == long_body.strip()[:2000].strip(), len(by_id[arnies]["body"])
    assert fetch(api, by_id[note]["photo_url"], max_user) == photo
    assert by_id[no_photo].get("photo_url") is None
    assert [(o["label"]) for o in by_id[poll]["poll_options"]] == ["Pizza", "Tacos"], by_id[poll]
    assert by_id[note]["kept_by_me"] is True
    threads = expect(max_user.get("/circles/v1/dms"), 200)
    assert [(d["id"].lower(), d["last_message"]["id"].lower()) for d in threads] == [(thread, reply)], threads

    # Arnie and Fiona have no password in Colony: theirs sign nothing in. Arnie follows the magic link
    # mailed to him, Fiona types its code; each then sets a password and signs in with it.
    for user in (arnie, fiona):
        refused = api.http.post("/auth/v1/token", params={"grant_type": "password"}, headers=api.anon("mycirclee"),
                                json={"email": user.email, "password": "anything-" + secrets.token_hex(4)})
        assert refused.status_code == 400, refused.text
        expect(api.http.post("/auth/v1/otp", headers=api.anon("mycirclee"), json={"email": user.email, "create_user": False}), 200)
    arnie_user = api.follow_mailed_link("mycirclee", api.mailbox.wait_for_mail(arnie.email)["link"])
    fiona_user = api.verify("mycirclee", {"type": "email", "email": fiona.email, "token": api.mailbox.wait_for_mail(fiona.email)["code"]})
    for source_user, session, circle in ((arnie, arnie_user, inner), (fiona, fiona_user, books)):
        assert session.id == source_user.id
        chosen = "new-" + secrets.token_hex(6)
        expect(session.put("/auth/v1/user", json={"password": chosen}), 200)
        again = sign_in(api, "mycirclee", source_user.email, chosen)
        assert again.id == source_user.id
        assert circle in {c["id"].lower() for c in expect(again.get("/circles/v1/circles"), 200)}

    # Ana's Apple identity came with her account (Sign in with Apple finds it by the same sub).
    ana_user = sign_in(api, "mycirclee", ana.email, ana.password)
    me = expect(ana_user.get("/auth/v1/user"), 200)
    assert {(i["provider"], i["id"]) for i in me["identities"]} >= {("apple", ana.apple_sub), ("email", ana.id)}, me["identities"]

    # Max's imported phone gets the circle's pushes; the imported membership reaches realtime and notifications.
    wait_for_projections(p.env, "circles")
    made, change = asyncio.run(change_after(stack, max_user, "posts", f"circle_id=eq.{inner}", lambda: expect(
        olive_user.post(f"/circles/v1/circles/{inner}/posts", json={"type": "note", "body": f"after the move {uuid.uuid4().hex[:6]}"}), 201)["id"]))
    assert change["data"]["record"]["circle_id"].lower() == inner
    item = notification(max_user, "circle_post", circle_id=inner)
    assert item["title"] == "Imported Inner Circle" and item["data"]["post_id"].lower() in made, item

    def delivered():
        log = expect(max_user.get("/notifications/v1/deliveries"), 200)["deliveries"]
        return [d for d in log if d["kind"] == "circle_post" and d["token_suffix"].lower() == device[-8:]]

    assert wait_until("a circle_post delivery to Max's imported device", delivered, timeout=60)


# ---------------------------------------------------------------------------------- Unify


def test_import_unify(api: Api, stack: Stack, source_project):
    p = source_project("unify")
    t = now()
    alice = p.add_user("Alice Unify", password="alice-" + secrets.token_hex(4))
    bob = p.add_user("Bob Unify", password="bob-" + secrets.token_hex(4))
    cleo = p.add_user("Cleo Apple", password="cleo-" + secrets.token_hex(4), apple=True)
    dan = p.add_user("Dan Deleted", password="dan-" + secrets.token_hex(4), deleted=True)
    avatar, bob_avatar, picture, voice = png(3), png(4), png(5), m4a(1)
    p.insert("public.user", id=alice.id, display_name="Alice U.", email=alice.email,
             avatar_url=p.add_object("profile-pictures", alice.id, avatar, "image/png") + "?t=1716400000")
    p.add_object("profile-pictures", bob.id, bob_avatar, "image/png")  # named by convention, no URL in the row
    for user in (bob, cleo, dan):
        p.insert("public.user", id=user.id, display_name=user.name, email=user.email)

    study, choir = str(uuid.uuid4()), str(uuid.uuid4())
    p.insert("public.group", id=study, name="Imported Study Group", owner_id=alice.id)
    p.insert("public.group", id=choir, name="Imported Choir", owner_id=bob.id)
    p.add_object("group-pictures", study, picture, "image/png")
    for group, user, role, read in ((study, alice, "owner", t), (study, bob, "user", t - timedelta(hours=4)), (study, cleo, "admin", None), (study, dan, "user", t),
                                    (choir, bob, "owner", t), (choir, cleo, "user", t), (choir, alice, "owner", t)):
        p.insert("public.group_members", group_id=group, user_id=user.id, role=role, joined_at=t - timedelta(days=5), last_read_at=read)
    hello, voice_message, from_dan, lost_voice = (str(uuid.uuid4()) for _ in range(4))
    p.insert("public.message", id=hello, group_id=study, content="Exam on Friday!", sent_by=alice.id, sent_at=t - timedelta(hours=3))
    p.insert("public.message", id=voice_message, group_id=study, content="", sent_by=bob.id, sent_at=t - timedelta(hours=2), message_type="voice",
             voice_duration=3.5, voice_url=p.add_object("voice-messages", f"{study}/{voice_message}.m4a", voice, "audio/mp4"))
    p.insert("public.message", id=from_dan, group_id=study, content="bye", sent_by=dan.id, sent_at=t - timedelta(hours=1))
    p.insert("public.message", id=lost_voice, group_id=study, content="", sent_by=cleo.id, sent_at=t - timedelta(minutes=50), message_type="voice",
             voice_duration=2.0, voice_url=p.add_object("voice-messages", f"{study}/{lost_voice}.m4a", m4a(2), "audio/mp4", in_folder=False))
    personal, exam, backwards = (str(uuid.uuid4()) for _ in range(3))
    p.insert("public.event", id=personal, title="Dentist", starts_at=t + timedelta(days=1), ends_at=t + timedelta(days=1, hours=1), created_by=alice.id)
    p.insert("public.event", id=exam, title="Exam", starts_at=t + timedelta(days=3), ends_at=t + timedelta(days=3, hours=2), group_id=study, created_by=cleo.id)
    p.insert("public.event", id=backwards, title="Time travel", starts_at=t + timedelta(days=2), ends_at=t + timedelta(days=1), group_id=study, created_by=alice.id)

    dry, first_run, second_run = import_twice(p)
    log_counts(p, {"dry run": dry, "first run": first_run, "second run": second_run})
    assert first_run.counts("auth.users") == (4, 3, 0, 1, 0)
    assert first_run.counts("auth.identities") == (5, 4, 0, 0, 1)
    assert first_run.counts("public.user") == (4, 3, 0, 0, 1)
    assert first_run.counts("public.group") == (2, 2, 0, 0, 0)
    assert first_run.counts("public.group_members") == (7, 6, 0, 0, 1)
    assert first_run.counts("public.message") == (4, 2, 0, 0, 2)
    assert first_run.skipped_ids("public.message") == {from_dan, lost_voice}
    assert first_run.counts("public.event") == (3, 2, 0, 0, 1)
    assert first_run.skipped_ids("public.event") == {backwards}
    assert [issue["id"] for issue in first_run.summary["incomplete_rows"]] == [lost_voice], first_run.output
    assert first_run.summary["files_copied"] == 4  # two avatars, the group picture, the voice message

    alice_user = sign_in(api, "unify", alice.email, alice.password)
    assert alice_user.id == alice.id
    groups = {g["id"].lower(): g for g in expect(alice_user.get("/chat/v1/groups"), 200)}
    assert set(groups) == {study, choir}, groups
    # One owner per group, its owner_id: Alice's "owner" row in Bob's choir became admin.
    assert (groups[study]["role"], groups[choir]["role"]) == ("owner", "admin"), groups
    assert fetch(api, groups[study]["picture_url"]) == picture
    me = expect(alice_user.get("/chat/v1/me"), 200)
    assert me["display_name"] == "Alice U." and fetch(api, me["avatar_url"]) == avatar, me

    bob_user = sign_in(api, "unify", bob.email, bob.password)
    assert fetch(api, expect(bob_user.get("/chat/v1/me"), 200)["avatar_url"]) == bob_avatar
    # Bob last read four hours ago: Alice's message is unread, his own voice message is not.
    unread = {c["group_id"].lower(): c["unread_count"] for c in expect(bob_user.get("/chat/v1/groups/unread"), 200)}
    assert unread[study] == 1, unread
    history = expect(bob_user.get(f"/chat/v1/groups/{study}/messages"), 200)["messages"]
    assert [m["id"].lower() for m in history] == [hello, voice_message], history
    assert history[1]["message_type"] == "voice" and history[1]["voice_duration"] == 3.5 and fetch(api, history[1]["voice_url"], bob_user) == voice, history[1]
    events = {e["id"].lower() for e in expect(bob_user.get("/chat/v1/events", params={"from": (t - timedelta(days=1)).isoformat(), "to": (t + timedelta(days=7)).isoformat()}), 200)}
    assert exam in events and personal not in events, events

    cleo_user = sign_in(api, "unify", cleo.email, cleo.password)
    assert ("apple", cleo.apple_sub) in {(i["provider"], i["id"]) for i in expect(cleo_user.get("/auth/v1/user"), 200)["identities"]}

    wait_for_projections(p.env, "chat")
    made, change = asyncio.run(change_after(stack, bob_user, "message", f"group_id=eq.{study}", lambda: expect(
        alice_user.post(f"/chat/v1/groups/{study}/messages", json={"content": f"moved to Colony {uuid.uuid4().hex[:6]}"}), 201)["id"]))
    assert change["data"]["record"]["group_id"].lower() == study
    item = notification(bob_user, "group_message", group_id=study)
    assert item["title"] == "Imported Study Group" and item["data"]["message_id"].lower() in made, item


# ---------------------------------------------------------------------------------- HabitHive


def test_import_habithive(api: Api, stack: Stack, source_project):
    p = source_project("habithive")
    t = now()
    today = t.date()
    hana = p.add_user("Hana", email=False, phone=True)
    hugo = p.add_user("Hugo", email=False, phone=True)
    ava = p.add_user("Ava Apple", apple=True)
    del_ = p.add_user("Del Deleted", email=False, phone=True, deleted=True)
    # The sign-up trigger made every profile; the app then set these.
    for user in (hana, hugo, ava, del_):
        p.sql(f"UPDATE public.profiles SET display_name = '{user.name}', timezone = 'UTC', day_start_hour = 0, theme = 'mint' WHERE id = '{user.id}';")
    p.sql(f"UPDATE public.profiles SET timezone = 'Mars/Olympus' WHERE id = '{ava.id}';")  # not a zone: her profile is made anew

    water, dels = str(uuid.uuid4()), str(uuid.uuid4())
    p.insert("public.habits", id=water, user_id=hana.id, name="Drink water", emoji="💧", created_at=t - timedelta(days=20))
    p.insert("public.habits", id=dels, user_id=del_.id, name="Del's habit", created_at=t - timedelta(days=20))
    for days_ago in (1, 2, 3):
        p.insert("public.habit_logs", habit_id=water, user_id=hana.id, log_date=str(today - timedelta(days=days_ago)), value=3)

    run, reading = str(uuid.uuid4()), str(uuid.uuid4())
    p.insert("public.hives", id=run, name="Imported Morning Run", owner_id=hana.id, current_length=99, last_advanced_on=str(today - timedelta(days=1)),
             created_at=t - timedelta(days=10))
    p.insert("public.hives", id=reading, name="Imported Reading", owner_id=ava.id, created_at=t - timedelta(days=8))
    for hive, user, role in ((run, hana, "owner"), (run, hugo, "member"), (run, del_, "member"), (reading, ava, "owner"), (reading, hana, "member")):
        p.insert("public.hive_members", hive_id=hive, user_id=user.id, role=role, joined_at=t - timedelta(days=9))
    for days_ago, who in ((4, (hana,)), (3, (hana, hugo)), (2, (hana, hugo)), (1, (hana, hugo))):
        day = str(today - timedelta(days=days_ago))
        for user in who:
            p.insert("public.hive_member_days", hive_id=run, user_id=user.id, day_date=day, value=1)
        if len(who) == 2:
            p.insert("public.hive_days", hive_id=run, day_date=day, complete_count=7, required_count=2, advanced=True)
    p.insert("public.hive_invites", hive_id=run, code=secrets.token_hex(6), created_by=hana.id, expires_at=t + timedelta(days=5))
    p.insert("public.hive_invites", hive_id=run, code=secrets.token_hex(6), created_by=hana.id, expires_at=t - timedelta(days=1))
    p.insert("public.activity_events", actor_id=hugo.id, hive_id=run, type="hive_joined", created_at=t - timedelta(days=9))
    p.insert("public.activity_events", actor_id=del_.id, hive_id=run, type="hive_joined", created_at=t - timedelta(days=9))
    p.insert("public.contact_hashes", user_id=hana.id, contact_hash=secrets.token_hex(32), display_name="Mom")
    device = apns_token()
    p.insert("public.device_tokens", user_id=hana.id, apns_token=device, environment="prod")

    dry, first_run, second_run = import_twice(p)
    log_counts(p, {"dry run": dry, "first run": first_run, "second run": second_run})
    assert first_run.counts("auth.users") == (4, 3, 0, 1, 0)
    assert first_run.counts("auth.identities") == (5, 4, 0, 0, 1)      # Ava's email and Apple ones, the phones; Del's dangling
    assert first_run.counts("public.profiles") == (4, 2, 0, 0, 2)      # Del's (dangling) and Ava's (not a time zone)
    assert first_run.counts("public.habits") == (2, 1, 0, 0, 1)
    assert first_run.counts("public.habit_logs") == (3, 3, 0, 0, 0)
    assert first_run.counts("public.hives") == (2, 2, 0, 0, 0)
    assert first_run.counts("public.hive_members") == (5, 4, 0, 0, 1)
    assert first_run.counts("public.hive_member_days") == (7, 7, 0, 0, 0)
    assert first_run.counts("public.hive_days") == (3, 3, 0, 0, 0)
    assert first_run.counts("public.hive_invites") == (2, 1, 0, 1, 0)
    assert first_run.counts("public.activity_events") == (2, 1, 0, 0, 1)
    assert first_run.counts("public.device_tokens") == (1, 1, 0, 0, 0)

    def otp_sign_in(phone: str) -> User:
        expect(api.http.post("/auth/v1/otp", headers=api.anon("habithive"), json={"phone": "+" + phone}), 200)
        sms = api.mailbox.wait_for(phone, app="habithive", kind="sms")
        return api.verify("habithive", {"type": "sms", "phone": "+" + phone, "token": str(sms["code"])})

    # Hana signs in with a code to her phone, as in Supabase, and is the same account.
    hana_user = otp_sign_in(hana.phone)
    assert hana_user.id == hana.id
    hives = {h["hive"]["id"].lower(): h for h in expect(hana_user.get("/habits/v1/hives"), 200)}
    assert set(hives) == {run, reading}, hives
    # The streak recomputed from the days: the last three advanced, the one before broke it (not 99).
    streak = hives[run]["hive"]
    assert (streak["current_length"], streak["last_advanced_on"], hives[run]["member_count"]) == (3, str(today - timedelta(days=1)), 2), hives[run]
    habits = expect(hana_user.get("/habits/v1/habits"), 200)
    assert [h["id"].lower() for h in habits] == [water], habits
    insights = expect(hana_user.get(f"/habits/v1/habits/{water}/insights"), 200)
    assert insights["current_streak"] == 3, insights
    days = expect(hana_user.get(f"/habits/v1/hives/{run}/days", params={"from": str(today - timedelta(days=3)), "to": str(today - timedelta(days=1))}), 200)
    assert [(d["advanced"], d["complete_count"]) for d in days["hive_days"]] == [(True, 2)] * 3, days  # recounted, not the project's 7

    # Ava's Apple identity is on her account (the app's service-role key reads it).
    service_key = service_role_key("habithive")
    ava_account = expect(api.http.get(f"/auth/v1/admin/users/{ava.id}", headers={"apikey": service_key, "Authorization": f"Bearer {service_key}"}), 200)
    assert ("apple", ava.apple_sub) in {(i["provider"], i["id"]) for i in ava_account["identities"]}, ava_account

    hugo_user = otp_sign_in(hugo.phone)
    wait_for_projections(p.env, "habits")
    _, change = asyncio.run(change_after(stack, hugo_user, "hive_member_days", f"hive_id=eq.{run}", lambda: (
        expect(hana_user.post(f"/habits/v1/hives/{run}/logs", json={}), 200), hana.id)[1]))
    assert change["data"]["record"]["user_id"].lower() == hana.id
    second = expect(hugo_user.post(f"/habits/v1/hives/{run}/logs", json={}), 200)
    if second["day"]["day_date"] != str(now().date()):
        pytest.skip("the day changed while the test ran")
    assert second["hive"]["current_length"] == 4, second
    # Hana, who was not the one completing the day, is told on her imported phone too.
    notification(hana_user, "hive_advanced", hive_id=run)

    def delivered():
        log = expect(hana_user.get("/notifications/v1/deliveries"), 200)["deliveries"]
        return [d for d in log if d["kind"] == "hive_advanced" and d["token_suffix"].lower() == device[-8:]]

    assert wait_until("a hive_advanced delivery to Hana's imported device", delivered, timeout=60)


# ---------------------------------------------------------------------------------- SocialSpot


def test_import_socialspot(api: Api, stack: Stack, source_project):
    p = source_project("socialspot")
    t = now()
    sam = p.add_user("Sam Spot", password="sam-" + secrets.token_hex(4))
    sky = p.add_user("Sky Spot", password="sky-" + secrets.token_hex(4))
    stale = p.add_user("Stale Spot", password="stale-" + secrets.token_hex(4))
    zed = p.add_user("Zed Apple", password="zed-" + secrets.token_hex(4), apple=True)
    # Signed up with Sign in with Apple alone: Apple's identity is her only one, her email Apple's relay.
    ally = p.add_user("Ally Apple", apple_only=True)
    dee = p.add_user("Dee Deleted", deleted=True)
    photo = png(9)
    p.insert("public.profiles", id=sam.id, name="Sam", bio="Imported", school="State U", birthday="2000-05-01", share_location=True, dark_mode=True,
             instagram="@sam_spot", twitter="samspot", tiktok="!! not a handle !!", avatar_url=p.add_object("avatars", f"{sam.id}/avatar.png", photo, "image/png"))
    for user, shares in ((sky, True), (stale, True), (zed, False), (ally, False), (dee, True)):
        p.insert("public.profiles", id=user.id, name=user.name.split()[0], share_location=shares)
    long_bio = "Coffee, climbing and campus radio. " * 10  # 350 characters, over Colony's 300
    p.sql(f"UPDATE public.profiles SET bio = {sql_literal(long_bio)} WHERE id = '{sky.id}';")
    lat, lon = 30 + secrets.randbelow(15_000) / 1000, -120 + secrets.randbelow(40_000) / 1000
    north = 100 * 0.3048 / 111_320.0
    for user, dlat, age in ((sam, 0, 60), (sky, north, 30), (stale, 2 * north, 7200), (zed, -north, 30), (dee, -2 * north, 30)):
        p.sql(f"INSERT INTO public.locations (user_id, location, accuracy, updated_at) VALUES ('{user.id}', "
              f"ST_SetSRID(ST_MakePoint({lon}, {lat + dlat}), 4326)::geography, 5, now() - interval '{age} seconds');")

    dry, first_run, second_run = import_twice(p)
    log_counts(p, {"dry run": dry, "first run": first_run, "second run": second_run})
    assert first_run.counts("auth.users") == (6, 5, 0, 1, 0)
    # Identities exactly as the source has them: Ally's Apple one and no other.
    assert first_run.counts("auth.identities") == (7, 6, 0, 0, 1)   # Sam, Sky, Stale: email; Zed: email and Apple; Ally: Apple; Dee's dangling
    assert first_run.counts("public.profiles") == (6, 5, 0, 0, 1)
    assert first_run.table("public.profiles")["adjusted"] == {"bio over Colony's 300 characters: cut to 300": 1}
    assert first_run.counts("public.locations") == (5, 2, 0, 2, 1)    # Stale's expired, Zed not sharing, Dee's dangling
    assert first_run.table("public.locations")["not_imported"] == {"expired": 1, "not sharing": 1}
    assert [issue["id"] for issue in first_run.summary["incomplete_rows"]] == [sam.id]  # the TikTok link Colony refuses

    sam_user = sign_in(api, "socialspot", sam.email, sam.password)
    me = expect(sam_user.get("/nearby/v1/profile"), 200)
    assert (me["name"], me["school"], me["share_location"], me["dark_mode"]) == ("Sam", "State U", True, True), me
    assert me["social_links"].get("instagram") == "@sam_spot" and me["social_links"].get("x") == "samspot" and not me["social_links"].get("tiktok"), me
    assert fetch(api, me["photo_url"]) == photo
    # Sky's imported location is 100 ft away: Sam sees her at once; nobody stale or hidden.
    around = expect(sam_user.get("/nearby/v1/nearby"), 200)
    seen = {u["user_id"].lower(): u for u in around["users"]}
    assert set(seen) == {sky.id}, around
    # Others see Sky's point moved 100–150 ft in a direction of its own, then snapped to a 50 ft grid
    # (up to 36 ft more): from 100 ft away that is anywhere from 0 to 286 ft. (A floor of 50 failed
    # one fresh-clone run at 30 ft.)
    assert 0 <= seen[sky.id]["distance_feet"] <= 300, seen[sky.id]

    zed_user = sign_in(api, "socialspot", zed.email, zed.password)
    assert sorted((i["provider"], i["id"]) for i in expect(zed_user.get("/auth/v1/user"), 200)["identities"]) == sorted([("apple", zed.apple_sub), ("email", zed.id)])
    # Ally's account has exactly her Apple identity (no email one made up), as in the source.
    service_key = service_role_key("socialspot")
    ally_account = expect(api.http.get(f"/auth/v1/admin/users/{ally.id}", headers={"apikey": service_key, "Authorization": f"Bearer {service_key}"}), 200)
    assert [(i["provider"], i["id"]) for i in ally_account["identities"]] == [("apple", ally.apple_sub)] == p.identities(ally.id), ally_account
    assert ally_account["email"] == ally.email and ally_account["app_metadata"]["providers"] == ["apple"], ally_account
    ally_identity = ally_account["identities"][0]
    assert ally_identity["identity_data"]["is_private_email"] is True and ally_identity["identity_data"]["custom_claims"] == {"auth_time": 1716400000}, ally_identity

    # Sky's app hears Sam move (SocialSpot has no pushes, so no notification to check).
    sky_user = sign_in(api, "socialspot", sky.email, sky.password)
    assert expect(sky_user.get("/nearby/v1/profile"), 200)["bio"] == long_bio.strip()[:300].strip()
    step = iter(range(1, 1000))

    def move() -> str:
        expect(sam_user.put("/nearby/v1/location", json={"latitude": lat + next(step) * 1e-6, "longitude": lon}), 200)
        return sam.id

    _, change = asyncio.run(change_after(stack, sky_user, "locations", "", move, event="*"))
    assert (change["data"].get("record") or {}).get("user_id", "").lower() == sam.id, change


# ---------------------------------------------------------------------------------- I Believe In You


def builder(p: SourceProject, user, **columns: Any) -> str:
    """The builder the seed's sign-up trigger made for `user`, with `columns` set as the app
    would; returns its id."""
    sets = ", ".join(f'"{name}" = {sql_literal(value)}' for name, value in columns.items()) or "name = name"
    return p.sql(f"UPDATE public.builders SET {sets} WHERE user_id = '{user.id}' RETURNING id;").split()[0]


def test_import_ibelieveinyou(api: Api, stack: Stack, source_project, tmp_path):
    p = source_project("ibelieveinyou")
    t = now()
    # The app signs up with `name` in the metadata, which its trigger copies into the builder.
    cora = p.add_user("Cora Creator", password="cora-" + secrets.token_hex(4), name_key="name")
    finn = p.add_user("Finn Fan", password="finn-" + secrets.token_hex(4), name_key="name")
    gus = p.add_user("Gus Apple", password="gus-" + secrets.token_hex(4), apple=True, name_key="name")
    dex = p.add_user("Dex Deleted", password="dex-" + secrets.token_hex(4), deleted=True, name_key="name")
    # Made without a name (the dashboard, an invite): the trigger gave her builder ''.
    nora = p.add_user("", password="nora-" + secrets.token_hex(4), name_key=None)
    # A name over Colony's 60 characters.
    long_name = "Lorenzo " + "de' Medici the Magnificent, Lord of Florence and Patron " + "of Everything Built"
    lorenzo = p.add_user(long_name, password="lorenzo-" + secrets.token_hex(4), name_key="name")
    assert p.sql(f"SELECT count(*) FROM public.builders WHERE name = '' AND user_id = '{nora.id}';").strip() == "1"
    avatar, cover, image = png(11), png(12), png(13)
    b_cora = builder(p, cora, name="Cora", bio="I build robots", is_creator=True, website_url="cora.example.com",
                     avatar_url=p.add_object("avatars", f"{cora.id}.png", avatar, "image/png"), created_at=t - timedelta(days=30))
    long_bio = "I cheer for builders. " * 30  # 660 characters, over Colony's 500
    b_finn = builder(p, finn, bio=long_bio, created_at=t - timedelta(days=29))
    b_gus = builder(p, gus, name="Gus", twitter_handle="not a handle!!", created_at=t - timedelta(days=28))
    b_dex = builder(p, dex, created_at=t - timedelta(days=27))
    b_nora = builder(p, nora, created_at=t - timedelta(days=26))
    b_lorenzo = builder(p, lorenzo, created_at=t - timedelta(days=25))
    for user, points in ((cora, 3), (finn, 999), (gus, 0), (dex, 50)):
        p.sql(f"UPDATE public.karma SET total_points = {points}, level = {5 if points > 900 else 1} WHERE user_id = '{user.id}';")

    robot, draft, dexs, workshop = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    title = f"Imported Garden Robot {uuid.uuid4().hex[:6]}"
    slug = f"garden-robot-{uuid.uuid4().hex[:8]}"
    p.insert("public.projects", id=robot, builder_id=b_cora, title=title, tagline="Waters plants", public_slug=slug, mood="green", follower_count=42,
             cover_image_url=p.add_object("project-images", f"covers/{robot}.png", cover, "image/png"), created_at=t - timedelta(days=20))
    p.insert("public.projects", id=draft, builder_id=b_cora, title="Secret draft", public_slug="Not A Slug!", is_published=False, created_at=t - timedelta(days=10))
    p.insert("public.projects", id=dexs, builder_id=b_dex, title="Dex's thing", public_slug=f"dex-{uuid.uuid4().hex[:8]}", created_at=t - timedelta(days=9))
    # Nora's project: a title over 100 and a description over 10,000 characters.
    long_title = f"Nora's Workshop {uuid.uuid4().hex[:6]} " + "with a very long title " * 6
    long_description = "Every day a new tool. " * 460
    p.insert("public.projects", id=workshop, builder_id=b_nora, title=long_title, description=long_description, public_slug=f"workshop-{uuid.uuid4().hex[:8]}",
             created_at=t - timedelta(days=8))
    first_post, second_post, nora_post = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    p.insert("public.posts", id=first_post, project_id=robot, content="First prototype works!", like_count=99, created_at=t - timedelta(days=5),
             images=[p.add_object("project-images", f"posts/{first_post}/1.png", image, "image/png"),
                     p.add_object("project-images", f"posts/{first_post}/2.png", png(14), "image/png", in_folder=False)])
    p.insert("public.posts", id=second_post, project_id=robot, content="Now with sensors", created_at=t - timedelta(days=2))
    long_content = "Sawdust everywhere. " * 260  # 5,200 characters, over Colony's 5,000
    p.insert("public.posts", id=nora_post, project_id=workshop, content=long_content, created_at=t - timedelta(days=1))
    prototype, ship, leftover = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    p.insert("public.milestones", id=prototype, project_id=robot, title="Prototype", is_completed=True, completed_at=t - timedelta(days=6),
             target_date=str((t - timedelta(days=6)).date()))
    p.insert("public.milestones", id=ship, project_id=robot, title="Ship it", target_date=str((t + timedelta(days=30)).date()))
    # Ticked, then unticked: the app cleared is_completed and left completed_at.
    p.insert("public.milestones", id=leftover, project_id=robot, title="Weatherproofing", is_completed=False, completed_at=t - timedelta(days=3))
    for user, when in ((finn, 15), (gus, 14), (dex, 13), (nora, 12), (lorenzo, 11)):
        p.insert("public.follows", user_id=user.id, project_id=robot, created_at=t - timedelta(days=when))
    for user in (finn, cora, dex):
        p.insert("public.likes", user_id=user.id, post_id=first_post, created_at=t - timedelta(days=4))
    actions = [(finn, "follow", 5, None, 15), (finn, "follow", 5, None, 12), (finn, "like", 1, {"post_id": first_post}, 4), (finn, "message", 10, None, 3),
               (cora, "like", 1, {"post_id": first_post}, 4), (gus, "follow", 5, None, 14), (dex, "follow", 5, None, 13)]
    for user, kind, points, metadata, days_ago in actions:
        p.insert("public.support_actions", user_id=user.id, project_id=robot, action_type=kind, points_earned=points, metadata=metadata,
                 created_at=t - timedelta(days=days_ago))
    p.insert("public.support_messages", project_id=robot, sender_id=b_finn, message="You've got this!", created_at=t - timedelta(days=3))
    p.insert("public.support_messages", project_id=robot, sender_id=b_dex, message="Go go go", created_at=t - timedelta(days=2))
    p.insert("public.support_messages", project_id=robot, sender_id=b_lorenzo, message="Magnificent work", created_at=t - timedelta(days=1))

    # Storage through S3, as Supabase's S3 endpoint serves it: a moto server holding the folder's objects.
    with MotoS3(tmp_path) as s3:
        s3.upload(p.storage)
        storage = s3.storage_argument
        dry = p.run_import(dry_run=True, storage=storage, extra_env=s3.credentials, label="dry-run")
        first_run = p.run_import(storage=storage, extra_env=s3.credentials, label="first")
        second_run = p.run_import(storage=storage, extra_env=s3.credentials, label="second")
    log_counts(p, {"dry run": dry, "first run": first_run, "second run": second_run})
    for run in (dry, first_run, second_run):
        assert run.status == INCOMPLETE, run.output
    check_recorded(p, [(dry, True, storage), (first_run, False, storage), (second_run, False, storage)])
    assert second_run.written == 0 and second_run.summary["files_copied"] == 0, second_run.output
    assert first_run.counts("auth.users") == (6, 5, 0, 1, 0)
    # Every builder but the deleted user's comes over: Nora's '' and Lorenzo's long name fitted, Finn's bio cut.
    assert first_run.counts("public.builders") == (6, 5, 0, 0, 1)
    assert first_run.skipped_ids("public.builders") == {b_dex}
    assert first_run.table("public.builders")["adjusted"] == {
        "name blank: given a default": 1, "name over Colony's 60 characters: cut to 60": 1, "bio over Colony's 500 characters: cut to 500": 1}, first_run.output
    assert first_run.counts("public.karma") == (6, 0, 0, 6, 0)
    assert first_run.counts("public.projects") == (4, 3, 0, 0, 1)
    assert first_run.table("public.projects")["adjusted"] == {
        "title over Colony's 100 characters: cut to 100": 1, "description over Colony's 10000 characters: cut to 10000": 1}, first_run.output
    assert first_run.counts("public.posts") == (3, 3, 0, 0, 0)
    assert first_run.table("public.posts")["adjusted"] == {"content over Colony's 5000 characters: cut to 5000": 1}
    assert first_run.counts("public.milestones") == (3, 3, 0, 0, 0)
    assert first_run.table("public.milestones")["adjusted"] == {"completed_at on a milestone that is not completed: left out": 1}
    assert first_run.counts("public.support_actions") == (7, 6, 0, 0, 1)
    assert first_run.counts("public.follows") == (5, 4, 0, 0, 1)   # Dex's alone: Nora's and Lorenzo's come with them
    assert first_run.counts("public.likes") == (3, 2, 0, 0, 1)
    assert first_run.counts("public.support_messages") == (3, 3, 0, 0, 0)  # Dex's stays, anonymous
    assert sorted(issue["id"] for issue in first_run.summary["incomplete_rows"]) == sorted([b_gus, draft, first_post]), first_run.output
    assert sorted((issue["table"], issue["id"]) for issue in first_run.summary["adjusted_rows"]) == sorted([
        ("public.builders", b_finn), ("public.builders", b_nora), ("public.builders", b_lorenzo), ("public.projects", workshop),
        ("public.projects", workshop), ("public.posts", nora_post), ("public.milestones", leftover)]), first_run.output
    assert "rows that came over changed to fit Colony's rules (7)" in first_run.output, first_run.output
    assert first_run.summary["files_copied"] == 3  # avatar, cover, one post image (the other is missing)
    for table in first_run.summary["tables"]:
        assert second_run.table(table["name"])["already"] == table["already"] + table["imported"], table

    cora_user = sign_in(api, "ibelieveinyou", cora.email, cora.password)
    mine = {project["id"].lower(): project for project in expect(cora_user.get("/projects/v1/me/projects"), 200)}
    assert set(mine) == {robot, draft}, mine
    assert mine[robot]["follower_count"] == 4 and mine[robot]["public_slug"] == slug, mine[robot]   # counted, not the project's 42
    assert mine[draft]["public_slug"].startswith("secret-draft-") and mine[draft]["is_published"] is False, mine[draft]
    assert fetch(api, mine[robot]["cover_image_url"]) == cover
    me = expect(cora_user.get("/projects/v1/me"), 200)
    assert me["id"].lower() == b_cora and fetch(api, me["avatar_url"]) == avatar and me["website_url"] == "https://cora.example.com", me
    assert expect(cora_user.get("/projects/v1/me/karma"), 200)["total_points"] == 0  # her like of her own post earns nothing
    # Completed exactly when is_completed: the unticked milestone's left-over completed_at is gone.
    milestones = {m["id"].lower(): m for m in expect(cora_user.get(f"/projects/v1/projects/{robot}/milestones"), 200)}
    assert (milestones[leftover]["is_completed"], milestones[leftover].get("completed_at")) == (False, None), milestones[leftover]
    assert milestones[prototype]["is_completed"] is True and milestones[prototype]["completed_at"], milestones[prototype]
    assert milestones[ship]["is_completed"] is False, milestones[ship]

    finn_user = sign_in(api, "ibelieveinyou", finn.email, finn.password)
    karma = expect(finn_user.get("/projects/v1/me/karma"), 200)
    # Recomputed: one follow (5; the repeated follow earns nothing), one like (1), one message (10); not 999.
    assert (karma["total_points"], karma["level"], karma["label"]) == (16, 1, "New Supporter"), karma
    assert expect(finn_user.get("/projects/v1/me"), 200)["bio"] == long_bio.strip()[:500].strip()
    feed = expect(finn_user.get("/projects/v1/feed"), 200)["posts"]
    posts = {post["id"].lower(): post for post in feed}
    assert set(posts) == {first_post, second_post}, feed
    assert (posts[first_post]["like_count"], posts[first_post]["liked_by_me"], len(posts[first_post]["images"])) == (2, True, 1), posts[first_post]
    assert fetch(api, posts[first_post]["images"][0]) == image
    # A follow again earns nothing: the imported follow was his first.
    assert expect(finn_user.post(f"/projects/v1/projects/{robot}/follow"), 200)["karma_earned"] == 0
    messages = expect(cora_user.get(f"/projects/v1/projects/{robot}/support-messages"), 200)
    # Lorenzo's builder came over (his name cut), so his message keeps its sender.
    assert sorted((m["message"], m["is_anonymous"]) for m in messages) == [("Go go go", True), ("Magnificent work", False), ("You've got this!", False)], messages

    # Nora, whose builder the trigger named '', is there with the name a sign-up without one gets, her project, post and follow.
    nora_user = sign_in(api, "ibelieveinyou", nora.email, nora.password)
    nora_me = expect(nora_user.get("/projects/v1/me"), 200)
    assert (nora_me["id"].lower(), nora_me["name"]) == (b_nora, nora.email.split("@")[0]), nora_me
    nora_projects = {project["id"].lower(): project for project in expect(nora_user.get("/projects/v1/me/projects"), 200)}
    assert set(nora_projects) == {workshop}, nora_projects
    assert nora_projects[workshop]["title"] == long_title.strip()[:100].strip(), nora_projects[workshop]
    workshop_detail = expect(nora_user.get(f"/projects/v1/projects/{workshop}"), 200)
    assert workshop_detail["description"] == long_description.strip()[:10_000].strip(), len(workshop_detail.get("description") or "")
    nora_posts = expect(nora_user.get(f"/projects/v1/projects/{workshop}/posts"), 200)["posts"]
    assert [(post["id"].lower(), post["content"]) for post in nora_posts] == [(nora_post, long_content[:5000].strip())], nora_posts
    assert robot in {f["id"].lower() for f in expect(nora_user.get("/projects/v1/me/following"), 200)["projects"]}
    # Lorenzo's name is cut to 60 characters; his follow is his.
    lorenzo_user = sign_in(api, "ibelieveinyou", lorenzo.email, lorenzo.password)
    assert expect(lorenzo_user.get("/projects/v1/me"), 200)["name"] == long_name[:60].strip()
    assert robot in {f["id"].lower() for f in expect(lorenzo_user.get("/projects/v1/me/following"), 200)["projects"]}

    gus_user = sign_in(api, "ibelieveinyou", gus.email, gus.password)
    assert ("apple", gus.apple_sub) in {(i["provider"], i["id"]) for i in expect(gus_user.get("/auth/v1/user"), 200)["identities"]}
    assert expect(gus_user.get("/projects/v1/me/karma"), 200)["total_points"] == 5

    # The imported project's name reaches the creator's notification (I Believe In You subscribes to no realtime changes).
    wait_for_projections(p.env, "projects")
    sent = expect(gus_user.post(f"/projects/v1/projects/{robot}/support-messages", json={"message": "Love the sensors"}), 201)
    item = notification(cora_user, "support_message", project_id=robot, message_id=sent["message"]["id"])
    assert title in item["title"] and "Love the sensors" in item["body"], item


class MotoS3:
    """A moto S3 server of the test's own (PyPI moto[server], installed by scripts/setup)."""

    def __init__(self, folder) -> None:
        import socket
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.log = open(folder / "moto.log", "w")

    def __enter__(self) -> "MotoS3":
        import subprocess
        import time
        self.process = subprocess.Popen(["python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)], stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{self.port}/", timeout=1)
                return self
            except httpx.HTTPError:
                time.sleep(0.2)
        self.__exit__()
        raise AssertionError("moto did not start")

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()

    def upload(self, folder) -> None:
        """Every file of a Storage folder, each bucket an S3 bucket."""
        for bucket in (path for path in folder.iterdir() if path.is_dir()):
            assert httpx.put(f"http://127.0.0.1:{self.port}/{bucket.name}").status_code == 200
            for file in (path for path in bucket.rglob("*") if path.is_file()):
                name = file.relative_to(bucket).as_posix()
                assert httpx.put(f"http://127.0.0.1:{self.port}/{bucket.name}/{name}", content=file.read_bytes()).status_code == 200

    @property
    def storage_argument(self) -> str:
        return f"s3+http://127.0.0.1:{self.port}"

    @property
    def credentials(self) -> dict[str, str]:
        return {"COLONY_IMPORT_S3_ACCESS_KEY_ID": "testing", "COLONY_IMPORT_S3_SECRET_ACCESS_KEY": "testing"}
