"""The backup and restore drill against the whole stack as scripts/run starts it (scripts/backup-drill
runs this, one phase at a time, with the stack started and stopped between them).

  write            (the stack on the original database) a steady stream of writes through the gateway
                   whose events another service consumes, as in faults.py: MyCirclee posts (circles ->
                   notifications: the member's `circle_post`) and I Believe In You support messages
                   (projects -> notifications: the creator's `support_message`); meanwhile `pg_dump -Fc`
                   of every Colony schema (owners and grants kept); the writes go on after it, then
                   stop, and every accepted write's effect is checked once in the original database
  restore          (the stack stopped) a fresh database on the same server, PostGIS, `pg_restore`; what
                   the dump holds is counted (writes, outbox rows pending, events the consumers had not
                   applied yet); then the procedure's last step: every outbox row the dump kept as
                   relayed is marked unrelayed, so that events relayed before the dump but applied only
                   after it (on the old database) are sent again
  verify           (the stack on the restored database) every service ready and serving reads of data
                   written before the dump; every re-sent outbox row delivered; each post and message
                   the restored database holds has exactly one notification (re-sent events that had
                   been applied are dropped by the inbox, the others applied once), none names a post
                   or message the restored database does not hold; writes after the restore work
  drop-database    drops the fresh database (never the original)

Figures go to a table on stdout and to .local/logs/backup-drill-report.json; `verify` exits non-zero
when a criterion fails. The phases share a state file (--state).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from faults import World, Writers, make_world, ready, service_ports  # noqa: E402
from e2e_support import ROOT, Api, Stack, User, expect, read_anon_keys, wait_until  # noqa: E402

LOCAL = ROOT / ".local"
REPORT = LOCAL / "logs" / "backup-drill-report.json"


def log(message: str) -> None:
    print(f"backup-drill: {message}", flush=True)


# ------------------------------------------------------------------------------------ Postgres


def admin_environment() -> dict[str, str]:
    """The local superuser's settings (the env file scripts/infra writes)."""
    env = dict(os.environ)
    for line in (LOCAL / "env").read_text().splitlines():
        if line.startswith("export ") and "=" in line:
            key, value = line[len("export "):].split("=", 1)
            env[key] = value.strip("'\"")
    env["PGPASSWORD"] = env["COLONY_PG_ADMIN_PASSWORD"]
    return env


ADMIN = admin_environment()
ORIGINAL = ADMIN["COLONY_PG_DATABASE"]


def connection_arguments(database: str) -> list[str]:
    return ["-h", ADMIN["COLONY_PG_HOST"], "-p", ADMIN["COLONY_PG_PORT"], "-U", ADMIN["COLONY_PG_ADMIN_USER"], "-d", database]


def psql(sql: str, database: str) -> list[list[str]]:
    """Runs SQL as the local superuser in `database`; the rows, tab-separated fields."""
    result = subprocess.run(["psql", "-X", "-q", "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1", *connection_arguments(database), "-c", sql],
                            env=ADMIN, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"psql in {database} failed: {result.stderr.strip()}\n{sql}")
    return [line.split("\t") for line in result.stdout.splitlines() if line]


def colony_schemas(database: str) -> list[str]:
    """Every schema `colony-admin provision` made: owned by the role colony_<schema>."""
    return [row[0] for row in psql("SELECT n.nspname FROM pg_namespace n JOIN pg_roles r ON r.oid = n.nspowner "
                                   "WHERE r.rolname = 'colony_' || n.nspname ORDER BY 1", database)]


def id_list(ids: list[str]) -> str:
    return "ARRAY[" + ",".join(f"'{value}'" for value in ids) + "]::uuid[]" if ids else "ARRAY[]::uuid[]"


def notification_counts(database: str, kind: str, user: str, field: str) -> dict[str, int]:
    rows = psql(f"SELECT lower(data->>'{field}'), count(*) FROM notifications.notifications WHERE user_id = '{user}' AND kind = '{kind}' GROUP BY 1",
                database)
    return {key: int(count) for key, count in rows}


def posts_in(database: str, circle: str) -> set[str]:
    return {row[0] for row in psql(f"SELECT id FROM circles.posts WHERE circle_id = '{circle}'", database)}


def messages_in(database: str, project: str) -> set[str]:
    return {row[0] for row in psql(f"SELECT id FROM projects.support_messages WHERE project_id = '{project}'", database)}


# ---------------------------------------------------------------------------------- the state


def load_state(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def save_state(path: Path, state: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state, indent=2))


def stack_from_environment() -> Stack:
    port = os.environ.get("COLONY_GATEWAY_PORT", "8080")
    return Stack(gateway=os.environ.get("COLONY_GATEWAY_URL", f"http://127.0.0.1:{port}"),
                 keys=read_anon_keys(Path(os.environ.get("COLONY_API_KEYS_FILE", LOCAL / "api-keys.txt"))),
                 mail_dir=Path(os.environ.get("COLONY_MAIL_DIR", LOCAL / "mail")))


def saved_user(user: User) -> dict[str, str]:
    return {"app": user.app, "id": user.id, "access_token": user.access_token}


def world_state(world: World) -> dict[str, Any]:
    return {"author": saved_user(world.author), "member": saved_user(world.member), "circle": world.circle,
            "creator": saved_user(world.creator), "supporters": [saved_user(fan) for fan in world.supporters], "project": world.project}


def world_from_state(api: Api, saved: dict[str, Any]) -> World:
    def user(entry: dict[str, str]) -> User:
        return User(app=entry["app"], api=api, access_token=entry["access_token"], id=entry["id"])

    return World(author=user(saved["author"]), member=user(saved["member"]), circle=saved["circle"], creator=user(saved["creator"]),
                 supporters=[user(entry) for entry in saved["supporters"]], project=saved["project"])


def all_effects(database: str, world: World, posts: set[str], messages: set[str]) -> tuple[dict[str, int], dict[str, int]]:
    post_effects = notification_counts(database, "circle_post", world.member.id, "post_id")
    message_effects = notification_counts(database, "support_message", world.creator.id, "message_id")
    return ({post: post_effects.get(post, 0) for post in posts}, {message: message_effects.get(message, 0) for message in messages})


# ------------------------------------------------------------------------------ phase: write


def phase_write(arguments: argparse.Namespace) -> int:
    state: dict[str, Any] = {"original_database": ORIGINAL}
    stack = stack_from_environment()
    api = Api(stack)
    world = make_world(api, supporters=2)
    log(f"world ready: circle {world.circle}, project {world.project}")
    schemas = colony_schemas(ORIGINAL)
    log(f"Colony schemas in {ORIGINAL}: {', '.join(schemas)}")

    writers = Writers(world=world, stack=stack, threads=arguments.threads, rate=arguments.rate)
    threads = writers.start()
    wait_until(f"{arguments.before} writes", lambda: writers.count() >= arguments.before, timeout=arguments.before / arguments.rate * 4 + 60)

    # The dump, while the writers go on: one transaction (a consistent snapshot of every schema),
    # owners and grants kept; the roles themselves live in the cluster, not in a database's dump.
    dump = Path(arguments.dump)
    dump.parent.mkdir(parents=True, exist_ok=True)
    dump.unlink(missing_ok=True)
    # More writes while pg_dump runs, so that its snapshot meets events still on their way to the broker.
    burst = Writers(world=world, stack=stack, threads=8, rate=arguments.burst_rate)
    burst_threads = burst.start() if arguments.burst_rate > 0 else []
    if burst_threads:
        wait_until("the burst to start", lambda: burst.count() >= arguments.burst_rate / 2, timeout=60)
    dump_started_wall, dump_started = time.time(), time.monotonic()
    command = ["pg_dump", *connection_arguments(ORIGINAL), "--format=custom", "--file", str(dump), *[f"--schema={name}" for name in schemas]]
    result = subprocess.run(command, env=ADMIN, capture_output=True, text=True)
    dump_finished = time.monotonic()
    burst.stop.set()
    for thread in burst_threads:
        thread.join()
    if result.returncode != 0:
        writers.stop.set()
        log(f"FAIL: pg_dump: {result.stderr.strip()}")
        return 1
    log(f"pg_dump of {len(schemas)} schemas took {dump_finished - dump_started:.2f}s ({dump.stat().st_size:,} bytes) after {writers.count()} writes")

    # The writes go on after the dump: the old database holds them, the dump does not.
    target = writers.count() + arguments.after
    wait_until(f"{arguments.after} writes after the dump", lambda: writers.count() >= target, timeout=arguments.after / arguments.rate * 4 + 60)
    writers.stop.set()
    for thread in threads:
        thread.join()
    writes = list(writers.writes) + list(burst.writes)
    log(f"{len(writes)} writes done ({len(burst.writes)} of them in the burst while pg_dump ran)")

    # The original database applies every accepted write once (a sanity check of the stream, and it
    # lets the consumers commit their offsets before the stack stops).
    posts = {write.id for write in writes if write.kind == "post" and write.id}
    messages = {write.id for write in writes if write.kind == "support" and write.id}
    wait_until("every accepted write's effect in the original database",
               lambda: all(count >= 1 for part in all_effects(ORIGINAL, world, posts, messages) for count in part.values()),
               timeout=arguments.drain_timeout, interval=1)
    post_effects, message_effects = all_effects(ORIGINAL, world, posts, messages)
    original_duplicates = sum(count - 1 for part in (post_effects, message_effects) for count in part.values() if count > 1)

    def phase_of(write) -> str:
        if write.at < dump_started:
            return "before"
        return "during" if write.at <= dump_finished else "after"

    state.update({
        "world": world_state(world), "schemas": schemas, "dump": str(dump), "dump_bytes": dump.stat().st_size,
        "dump_seconds": round(dump_finished - dump_started, 2), "dump_started_at": dump_started_wall,
        "writes": [{"kind": write.kind, "status": write.status, "id": write.id, "phase": phase_of(write),
                    "before_dump_seconds": round(dump_started - write.at, 3)} for write in writes],
        "original_duplicates": original_duplicates,
    })
    save_state(Path(arguments.state), state)
    counts = {name: sum(1 for write in writes if phase_of(write) == name) for name in ("before", "during", "after")}
    accepted = sum(1 for write in writes if write.id)
    log(f"writes before the dump {counts['before']}, during it {counts['during']}, after it {counts['after']}; {accepted} accepted; "
        f"in the original database every one has its effect, {original_duplicates} duplicates")
    api.close()
    if accepted != len(writes) or original_duplicates:
        log(f"FAIL: the stream on the original database: {len(writes) - accepted} writes refused, {original_duplicates} duplicates")
        return 1
    return 0


# ---------------------------------------------------------------------------- phase: restore


def drop_database(name: str) -> None:
    if name == ORIGINAL:
        raise SystemExit(f"refusing to drop {name}: it is the original database")
    psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', "postgres")


def phase_restore(arguments: argparse.Namespace) -> int:
    state = load_state(Path(arguments.state))
    database = arguments.database
    schemas: list[str] = state["schemas"]
    started = time.monotonic()
    drop_database(database)  # a drill stopped half-way leaves its copy
    psql(f'CREATE DATABASE "{database}"', "postgres")
    # PostGIS lives in `public`, outside the dumped schemas: the superuser creates it, as scripts/infra
    # does for the original (nearby's tables use its types).
    psql("CREATE EXTENSION IF NOT EXISTS postgis", database)
    result = subprocess.run(["pg_restore", *connection_arguments(database), "--exit-on-error", "--jobs=2", state["dump"]],
                            env=ADMIN, capture_output=True, text=True)
    if result.returncode != 0:
        log(f"FAIL: pg_restore: {result.stderr.strip()}")
        return 1
    restore_seconds = round(time.monotonic() - started, 2)

    # Owners came back with the dump: each schema and every table in it belongs to its service's role.
    wrong_owners = psql("SELECT n.nspname || '.' || coalesce(c.relname, ''), r.rolname FROM pg_namespace n JOIN pg_roles r ON r.oid = n.nspowner "
                        "LEFT JOIN pg_class c ON c.relnamespace = n.oid AND c.relkind IN ('r', 'p') AND c.relowner <> n.nspowner "
                        f"WHERE n.nspname = ANY(ARRAY[{','.join(repr(name) for name in schemas)}]) AND (r.rolname <> 'colony_' || n.nspname OR c.oid IS NOT NULL)",
                        database)

    world = state["world"]
    posts = posts_in(database, world["circle"])
    messages = messages_in(database, world["project"])
    accepted_posts = {write["id"] for write in state["writes"] if write["kind"] == "post" and write["id"]}
    accepted_messages = {write["id"] for write in state["writes"] if write["kind"] == "support" and write["id"]}
    dumped = posts & accepted_posts, messages & accepted_messages
    by_phase = {name: sum(1 for write in state["writes"] if write["id"] and write["phase"] == name and write["id"] in dumped[0] | dumped[1])
                for name in ("before", "during", "after")}

    # The outboxes as the dump holds them, and what the consumer (notifications) had applied.
    outbox: dict[str, dict[str, int]] = {}
    for schema in schemas:
        pending, relayed = psql(f"SELECT count(*) FILTER (WHERE relayed_at IS NULL), count(*) FILTER (WHERE relayed_at IS NOT NULL) FROM {schema}.outbox",
                                database)[0]
        outbox[schema] = {"pending": int(pending), "relayed": int(relayed)}
    inbox = {row[0] for row in psql("SELECT event_id FROM notifications.inbox", database)}
    producer_rows = [(schema, event, relayed == "t") for schema in ("circles", "projects")
                     for event, relayed in psql(f"SELECT event_id, relayed_at IS NOT NULL FROM {schema}.outbox", database)]
    # Relayed before the dump and not yet applied by notifications then: on the old database it
    # applied them after the dump and committed its offsets past them, so only a resend brings them.
    in_flight = sum(1 for _, event, relayed in producer_rows if relayed and event not in inbox)
    post_effects = notification_counts(database, "circle_post", world["member"]["id"], "post_id")
    message_effects = notification_counts(database, "support_message", world["creator"]["id"], "message_id")
    applied_at_dump = sum(1 for post in posts if post in post_effects) + sum(1 for message in messages if message in message_effects)

    # The procedure's last step: send again everything the outboxes kept as relayed (inboxes drop
    # what they had applied), so nothing relayed before the dump and applied after it is lost.
    marked = 0
    for schema in schemas if not arguments.keep_relayed else []:
        rows = psql(f"WITH marked AS (UPDATE {schema}.outbox SET relayed_at = NULL, relayed_partition = NULL, relayed_offset = NULL "
                    f"WHERE relayed_at IS NOT NULL RETURNING 1) SELECT count(*) FROM marked", database)
        marked += int(rows[0][0])
    resend = {schema: [row[0] for row in psql(f"SELECT event_id FROM {schema}.outbox WHERE relayed_at IS NULL", database)] for schema in schemas}
    # Of what goes out again on notifications' topics: what it had applied (its inbox drops them) and not.
    resent = {event for schema in ("circles", "projects") for event in resend[schema]}
    applied_and_resent = sorted(event for event in resent if event in inbox)
    not_applied_and_resent = sorted(event for event in resent if event not in inbox)

    state["restore"] = {
        "database": database, "seconds": restore_seconds, "wrong_owners": wrong_owners,
        "posts": sorted(posts), "messages": sorted(messages), "writes_in_dump": by_phase,
        "outbox": outbox, "pending_in_dump": sum(entry["pending"] for entry in outbox.values()),
        "relayed_marked_for_resend": marked, "resend": resend, "kept_relayed": arguments.keep_relayed,
        "consumer_in_flight_at_dump": in_flight, "applied_and_resent": applied_and_resent, "not_applied_and_resent": not_applied_and_resent,
        "effects_at_dump": applied_at_dump, "restored_at": time.time(),
    }
    save_state(Path(arguments.state), state)
    pending_by_schema = ", ".join(f"{schema} {entry['pending']}" for schema, entry in outbox.items() if entry["pending"])
    log(f"restored {len(schemas)} schemas into {database} in {restore_seconds}s: {len(posts)} posts, {len(messages)} support messages "
        f"(writes before the dump {by_phase['before']}, during it {by_phase['during']}, after it {by_phase['after']}); "
        f"outbox rows pending {state['restore']['pending_in_dump']} ({pending_by_schema}), "
        f"relayed {marked} (marked to be sent again); relayed but not yet applied by notifications {in_flight}")
    if wrong_owners:
        log(f"FAIL: objects not owned by their service's role after the restore: {wrong_owners[:10]}")
        return 1
    return 0


# ----------------------------------------------------------------------------- phase: verify


def phase_verify(arguments: argparse.Namespace) -> int:
    state = load_state(Path(arguments.state))
    restore = state["restore"]
    database = restore["database"]
    failures: list[str] = []

    def check(condition: bool, failure: str) -> None:
        if not condition:
            failures.append(failure)
            log(f"FAIL: {failure}")

    # The stack must be on the restored copy (scripts/run hands a caller's COLONY_PG_DATABASE to the
    # services): the services' roles have sessions there.
    roles = ",".join(f"'colony_{schema}'" for schema in state["schemas"])
    on_restored = sorted({row[0] for row in psql(f"SELECT DISTINCT usename FROM pg_stat_activity WHERE datname = '{database}' AND usename IN ({roles})", "postgres")})
    check(bool(on_restored), f"no service is connected to {database}: does scripts/run keep a caller's COLONY_PG_DATABASE?")
    if failures:
        return finish(state, failures, {})
    log(f"services connected to {database}: {', '.join(on_restored)}")

    ports = service_ports()
    ports["console"] = max(ports.values()) + 1  # scripts/run's order: the console after notifications
    not_ready = [name for name, port in ports.items() if not ready(port)]
    check(not not_ready, f"services not ready on the restored database: {not_ready}")

    stack = stack_from_environment()
    api = Api(stack)
    world = world_from_state(api, state["world"])
    posts, messages = set(restore["posts"]), set(restore["messages"])

    # Reads of what was written before the dump, through the gateway, with the sessions made then.
    reads = 0
    me = expect(world.author.get("/auth/v1/user"), 200)
    check(me["id"].lower() == world.author.id, f"auth answered another user: {me['id']}")
    reads += 1
    for post in sorted(posts)[:5]:
        body = expect(world.member.get(f"/circles/v1/posts/{post}"), 200)
        check(body["id"].lower() == post, f"post {post} read back as {body.get('id')}")
        reads += 1
    listed = expect(world.creator.get(f"/projects/v1/projects/{world.project}/support-messages", params={"limit": 50}), 200)
    items = listed
    check(bool(items) and all(str(item["id"]).lower() in messages for item in items),
          "the creator's support messages are not those the restored database holds")
    reads += 1
    expect(world.member.get("/notifications/v1/notifications"), 200)
    reads += 1
    # A post the old database took after the dump is not served: the stack reads the copy.
    later = next((write["id"] for write in state["writes"] if write["kind"] == "post" and write["id"] and write["id"] not in posts), None)
    if later:
        answer = world.member.get(f"/circles/v1/posts/{later}")
        check(answer.status_code == 404, f"post {later}, written after the dump, answered {answer.status_code} (not the restored copy?)")
        reads += 1
    log(f"{reads} reads answered as the restored database holds them")

    # The outboxes send what they held: every row pending at the restore goes out.
    resend = {schema: set(events) for schema, events in restore["resend"].items()}
    resend_total = sum(len(events) for events in resend.values())

    def unsent() -> int:
        left = 0
        for schema, events in resend.items():
            if events:
                left += int(psql(f"SELECT count(*) FROM {schema}.outbox WHERE relayed_at IS NULL AND event_id = ANY({id_list(sorted(events))})", database)[0][0])
        return left

    resend_started = time.monotonic()
    deadline = resend_started + arguments.drain_timeout
    while unsent() and time.monotonic() < deadline:
        time.sleep(0.5)
    left = unsent()
    resend_seconds = round(time.monotonic() - resend_started, 1)
    check(left == 0, f"{left} of {resend_total} outbox rows held at the restore were not sent within {arguments.drain_timeout:g}s")
    log(f"{resend_total - left} of {resend_total} outbox rows re-sent ({restore['pending_in_dump']} pending in the dump, "
        f"{restore['relayed_marked_for_resend']} relayed before it)")

    # Notifications reads them: the ones it had not applied are applied, the others dropped.
    not_applied = restore["not_applied_and_resent"]

    def consumed() -> bool:
        return int(psql(f"SELECT count(*) FROM notifications.inbox WHERE event_id = ANY({id_list(not_applied)})", database)[0][0]) == len(not_applied)

    deadline = time.monotonic() + arguments.drain_timeout
    while not consumed() and time.monotonic() < deadline:
        time.sleep(0.5)
    check(consumed(), "notifications did not apply every re-sent event it had not applied before the dump")
    applied_and_resent = restore["applied_and_resent"]
    reapplied = int(psql(f"SELECT count(*) FROM notifications.inbox WHERE event_id = ANY({id_list(applied_and_resent)}) "
                         f"AND handled_at > to_timestamp({restore['restored_at']})", database)[0][0]) if applied_and_resent else 0
    check(reapplied == 0, f"{reapplied} re-sent events notifications had applied before the dump were handled again")

    # Effects exactly once for every post and message the restored database holds; none for the rest.
    post_effects, message_effects = all_effects(database, world, posts, messages)
    missing = sum(1 for part in (post_effects, message_effects) for count in part.values() if count == 0)
    duplicates = sum(count - 1 for part in (post_effects, message_effects) for count in part.values() if count > 1)
    phantom_posts = set(notification_counts(database, "circle_post", world.member.id, "post_id")) - posts
    phantom_messages = set(notification_counts(database, "support_message", world.creator.id, "message_id")) - messages
    phantoms = len(phantom_posts) + len(phantom_messages)
    check(missing == 0, f"{missing} posts or messages in the restored database have no notification")
    check(duplicates == 0, f"{duplicates} duplicate notifications in the restored database")
    check(phantoms == 0, f"{phantoms} notifications name a post or message the restored database does not hold "
                         f"(events of the old database after the dump, consumed again): {sorted(phantom_posts | phantom_messages)[:5]}")
    lost = [write["id"] for write in state["writes"] if write["id"] and write["id"] not in posts | messages]
    # A write sent longer before the dump than the writers' request timeout (10 s) was answered before it.
    check(all(write["before_dump_seconds"] <= 10 for write in state["writes"] if write["id"] in lost),
          "a write answered before the dump started is not in the restored database")

    # Writes after the restore: accepted, and their effects once.
    writers = Writers(world=world, stack=stack, threads=2, limit=arguments.after_restore, rate=arguments.rate)
    for thread in writers.start():
        thread.join()
    new_posts = {write.id for write in writers.writes if write.kind == "post" and write.id}
    new_messages = {write.id for write in writers.writes if write.kind == "support" and write.id}
    refused = [write.status for write in writers.writes if not write.id]
    check(not refused, f"writes after the restore refused: {refused[:10]}")
    deadline = time.monotonic() + arguments.drain_timeout
    while time.monotonic() < deadline:
        after_posts, after_messages = all_effects(database, world, new_posts, new_messages)
        if all(count >= 1 for part in (after_posts, after_messages) for count in part.values()):
            break
        time.sleep(0.5)
    after_posts, after_messages = all_effects(database, world, new_posts, new_messages)
    after_missing = sum(1 for part in (after_posts, after_messages) for count in part.values() if count == 0)
    after_duplicates = sum(count - 1 for part in (after_posts, after_messages) for count in part.values() if count > 1)
    check(after_missing == 0 and after_duplicates == 0,
          f"writes after the restore: {after_missing} effects missing, {after_duplicates} duplicates")
    api.close()

    figures = {
        "writes_before_dump": sum(1 for write in state["writes"] if write["phase"] == "before"),
        "writes_during_dump": sum(1 for write in state["writes"] if write["phase"] == "during"),
        "writes_after_dump": sum(1 for write in state["writes"] if write["phase"] == "after"),
        "writes_in_dump": restore["writes_in_dump"],
        "writes_not_in_dump": len(lost),
        "dump_seconds": state["dump_seconds"], "dump_bytes": state["dump_bytes"], "restore_seconds": restore["seconds"],
        "schemas": state["schemas"],
        "outbox_rows_in_dump": {schema: entry["pending"] + entry["relayed"] for schema, entry in restore["outbox"].items()},
        "outbox_pending_in_dump": restore["pending_in_dump"],
        "outbox_relayed_marked_for_resend": restore["relayed_marked_for_resend"],
        "outbox_rows_resent": resend_total - left, "resend_seconds": resend_seconds,
        "consumer_in_flight_at_dump": restore["consumer_in_flight_at_dump"],
        "resent_already_applied_dropped": len(applied_and_resent) - reapplied,
        "resent_applied_after_restore": len(not_applied),
        "effects_at_dump": restore["effects_at_dump"],
        "posts_and_messages_restored": len(posts) + len(messages),
        "effects_missing": missing, "duplicates": duplicates, "phantom_effects": phantoms,
        "ready_seconds": arguments.ready_seconds,
        "writes_after_restore": len(writers.writes), "writes_after_restore_accepted": len(new_posts) + len(new_messages),
        "writes_after_restore_duplicates": after_duplicates,
    }
    return finish(state, failures, figures)


def finish(state: dict[str, Any], failures: list[str], figures: dict[str, Any]) -> int:
    report = {"database": state.get("restore", {}).get("database"), "original_database": state.get("original_database"),
              "ok": not failures, "failures": failures, **figures}
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps(report, indent=2))
    if figures:
        rows = [
            ("writes before / during / after the dump", f"{figures['writes_before_dump']} / {figures['writes_during_dump']} / {figures['writes_after_dump']}"),
            ("  of them in the dump", " / ".join(str(figures["writes_in_dump"][name]) for name in ("before", "during", "after"))),
            ("pg_dump (custom format), pg_restore", f"{figures['dump_seconds']} s ({figures['dump_bytes']:,} bytes), {figures['restore_seconds']} s"),
            ("outbox rows in the dump (all schemas)", str(sum(figures["outbox_rows_in_dump"].values()))),
            ("  pending at the dump, re-sent", str(figures["outbox_pending_in_dump"])),
            ("  relayed before it, re-sent (procedure)", str(figures["outbox_relayed_marked_for_resend"])),
            ("  delivered after the restore", f"{figures['outbox_rows_resent']} in {figures['resend_seconds']} s"),
            ("events relayed, not applied at the dump", str(figures["consumer_in_flight_at_dump"])),
            ("re-sent, applied before: dropped (inbox)", str(figures["resent_already_applied_dropped"])),
            ("re-sent, not applied before: applied", str(figures["resent_applied_after_restore"])),
            ("posts + messages restored / with effects", f"{figures['posts_and_messages_restored']} / {figures['posts_and_messages_restored'] - figures['effects_missing']}"),
            ("duplicates / phantom effects", f"{figures['duplicates']} / {figures['phantom_effects']}"),
            ("time to ready (provision to run: ready)", f"{figures['ready_seconds']} s"),
            ("writes after the restore: accepted, dups", f"{figures['writes_after_restore_accepted']} of {figures['writes_after_restore']}, {figures['writes_after_restore_duplicates']}"),
        ]
        width = max(len(label) for label, _ in rows)
        print()
        for label, value in rows:
            print(f"  {label.ljust(width)}  {value}")
        print(flush=True)
    log(f"report: {REPORT}")
    log("PASS" if not failures else f"FAIL ({len(failures)} criteria)")
    return 0 if not failures else 1


# ------------------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("phase", choices=["write", "restore", "verify", "drop-database"])
    parser.add_argument("--state", default=str(LOCAL / "backup-drill" / "state.json"))
    parser.add_argument("--dump", default=str(LOCAL / "backup-drill" / "colony.dump"))
    parser.add_argument("--database", default="colony_backup_drill", help="the fresh database the dump is restored into")
    parser.add_argument("--before", type=int, default=400, help="writes before the dump starts")
    parser.add_argument("--after", type=int, default=200, help="writes after the dump ends (the old database only)")
    parser.add_argument("--after-restore", type=int, default=100, help="writes on the restored database")
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--rate", type=float, default=40.0, help="writes per second in all")
    parser.add_argument("--drain-timeout", type=float, default=180.0)
    parser.add_argument("--keep-relayed", action="store_true",
                        help="restore: skip marking the relayed outbox rows to be sent again (shows what that step saves; verify then fails)")
    parser.add_argument("--burst-rate", type=float, default=100.0, help="extra writes per second while pg_dump runs (0: none)")
    parser.add_argument("--ready-seconds", type=float, default=None, help="on the copy: seconds from scripts/run's provisioning to its run: ready")
    arguments = parser.parse_args()
    if arguments.phase == "drop-database":
        drop_database(arguments.database)
        log(f"dropped {arguments.database}")
        return 0
    return {"write": phase_write, "restore": phase_restore, "verify": phase_verify}[arguments.phase](arguments)


if __name__ == "__main__":
    sys.exit(main())
