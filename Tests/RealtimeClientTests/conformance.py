"""What the per-app realtime conformance scripts share: users from the Swift harness, one
official `realtime` client per user subscribed as the app subscribes, the REST calls the app
makes, and the checks of every change the app listens to: its event type and its row in the
seed's column names, with `old_record` as Supabase sends it."""
import asyncio
import datetime
import os
import pathlib
import uuid

import httpx
from realtime import AsyncRealtimeClient, RealtimeSubscribeStates

TIMEOUT = float(os.environ.get("COLONY_CONFORMANCE_TIMEOUT", "90"))  # crossing the broker on a busy machine
# The keys a `postgres_changes` payload's data carries on the wire (Supabase's NewRecord,
# UpdatedRecord and DeletedRecord), by event type.
WIRE_KEYS = {"INSERT": {"record"}, "UPDATE": {"record", "old_record"}, "DELETE": {"old_record"}}


class User:
    def __init__(self, uid: str, token: str):
        self.id = uid
        self.token = token


def users() -> list[User]:
    """COLONY_USERS: `id:token;id:token;…`, minted by the harness for the app."""
    return [User(*item.split(":", 1)) for item in os.environ["COLONY_USERS"].split(";") if item]


class API:
    """The app's REST calls, as one user."""

    def __init__(self, user: User, base: str | None = None):
        self.user = user
        self.http = httpx.AsyncClient(base_url=base or os.environ["COLONY_API_URL"], timeout=30,
                                      headers={"Authorization": f"Bearer {user.token}"})

    async def call(self, method: str, path: str, body=None, expect=(200, 201, 204)):
        response = await self.http.request(method, path, json=body)
        assert response.status_code in expect, f"{method} {path}: {response.status_code} {response.text}"
        return response.json() if response.content else None

    async def close(self):
        await self.http.aclose()


class Listener:
    """One user's socket with the channels their app joins; every change it receives."""

    def __init__(self, user: User, name: str):
        self.user = user
        self.name = name
        # The socket opens with the app's anon key; the user's token authorizes the channels.
        self.client = AsyncRealtimeClient(os.environ["COLONY_REALTIME_URL"], os.environ["COLONY_API_KEY"], auto_reconnect=False, timeout=30)
        self.received: list[tuple[str, dict]] = []
        self.used: set[int] = set()
        self.arrived = asyncio.Event()
        self.connected = False

    async def subscribe(self, topic: str, bindings: list[tuple[str, str, str | None]]):
        """Joins `topic` with one postgres_changes binding per (event, table, filter)."""
        if not self.connected:
            await self.client.connect()
            await self.client.set_auth(self.user.token)
            self.connected = True
        channel = self.client.channel(topic)
        for event, table, row_filter in bindings:
            channel.on_postgres_changes(event, schema="public", table=table, filter=row_filter, callback=self._receiver(topic))
        joined: asyncio.Future = asyncio.get_running_loop().create_future()

        def on_state(state, error):
            if joined.done():
                return
            if state == RealtimeSubscribeStates.SUBSCRIBED:
                joined.set_result(True)
            else:
                joined.set_exception(RuntimeError(f"{self.name} {topic}: {state} {error}"))

        await channel.subscribe(on_state)
        await asyncio.wait_for(joined, TIMEOUT)

    def _receiver(self, topic: str):
        def receive(payload):
            self.received.append((topic, payload))
            self.arrived.set()
        return receive

    async def expect(self, table: str, kind: str, where=lambda row: True, topic: str | None = None) -> dict:
        """The next change of `table` of type `kind` whose row (the new one, or for a DELETE the
        old one) satisfies `where`; its shape is checked against the seed's columns."""
        deadline = asyncio.get_running_loop().time() + TIMEOUT
        while True:
            for index, (got_topic, payload) in enumerate(self.received):
                data = payload["data"]
                if index in self.used or data["table"] != table or data["type"] != kind or (topic and got_topic != topic):
                    continue
                row = data.get("old_record") if kind == "DELETE" else data.get("record")
                if where(row or {}):
                    self.used.add(index)
                    check_shape(data)
                    return data
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                seen = [(t, p["data"]["table"], p["data"]["type"]) for i, (t, p) in enumerate(self.received) if i not in self.used]
                raise AssertionError(f"{self.name}: no {kind} of {table} arrived; unconsumed: {seen}")
            self.arrived.clear()
            try:
                await asyncio.wait_for(self.arrived.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    def unexpected(self, table: str) -> list[dict]:
        """Changes of `table` received and not consumed by an `expect`."""
        return [p["data"] for i, (_, p) in enumerate(self.received) if i not in self.used and p["data"]["table"] == table]

    async def close(self):
        await self.client.close()


# Every table an app subscribes to, with its columns as the seeds name them (Colony's additions
# marked in the README): the row of every change must carry exactly these.
SEED_COLUMNS = {
    # Unify
    "message": {"id", "group_id", "content", "sent_by", "sent_at", "is_edited", "message_type", "voice_duration", "voice_url"},
    "group": {"id", "name", "owner_id", "picture_url", "created_at", "updated_at"},
    "group_members": {"user_id", "group_id", "role", "joined_at", "last_read_at"},
    "event": {"id", "title", "details", "starts_at", "ends_at", "group_id", "created_by", "created_at", "updated_at"},
    "user": {"id", "display_name"},
    # MyCirclee
    "circles": {"id", "name", "created_by", "created_at"},
    "circle_members": {"circle_id", "user_id", "role", "joined_at"},
    "posts": {"id", "circle_id", "author_id", "type", "body", "mood", "category", "urgency", "location", "latitude", "longitude",
              "starts_at", "photo_url", "expires_at", "created_at", "updated_at"},
    "post_reactions": {"post_id", "user_id", "emoji", "created_at"},
    "poll_votes": {"option_id", "user_id", "post_id", "created_at"},
    "event_rsvps": {"post_id", "user_id", "status", "created_at"},
    "dm_threads": {"id", "circle_id", "user_a", "user_b", "last_message_at", "notify_a", "notify_b"},
    "dm_messages": {"id", "thread_id", "sender_id", "body", "reply_to_id", "created_at", "read_at"},
    "dm_reactions": {"message_id", "user_id", "emoji", "created_at"},
    "presence_states": {"user_id", "circle_id", "status", "updated_at"},
    # HabitHive
    "habit_logs": {"id", "habit_id", "user_id", "log_date", "value", "source", "created_at"},
    "hives": {"id", "name", "owner_id", "color_hex", "type", "target_per_day", "rule", "threshold", "schedule_daily", "schedule_weekmask",
              "current_length", "last_advanced_on", "source_habit_id", "created_at"},
    "hive_members": {"hive_id", "user_id", "role", "joined_at"},
    "hive_member_days": {"hive_id", "user_id", "day_date", "value", "done"},
    "hive_days": {"hive_id", "day_date", "complete_count", "required_count", "advanced"},
    "activity_events": {"id", "actor_id", "hive_id", "habit_id", "type", "data", "created_at"},
    "hive_invitations": {"id", "hive_id", "user_id", "invited_by", "status", "created_at", "decided_at"},
}


def check_shape(data: dict):
    """A change as Supabase Realtime sends it: schema, table, type, commit_timestamp, errors,
    columns (name and type of every column); `record` for INSERT and UPDATE, `old_record` for
    UPDATE (the previous row, or at least its key) and DELETE (the removed row); every row in the
    seed's column names, lower-case UUIDs."""
    table, kind = data["table"], data["type"]
    columns = SEED_COLUMNS[table]
    assert data["schema"] == "public", data
    assert kind in WIRE_KEYS, data
    assert data.get("errors") is None, data
    stamp = datetime.datetime.fromisoformat(data["commit_timestamp"].replace("Z", "+00:00"))
    assert abs((datetime.datetime.now(datetime.timezone.utc) - stamp).total_seconds()) < 600, data["commit_timestamp"]
    assert {c["name"] for c in data["columns"]} == columns, (table, sorted(c["name"] for c in data["columns"]))
    assert all(c["type"] for c in data["columns"]), data["columns"]
    for key in ("record", "old_record"):
        assert (key in data) == (key in WIRE_KEYS[kind]), f"{kind} of {table}: {key} present: {key in data}"
    if kind in ("INSERT", "UPDATE"):
        assert set(data["record"]) == columns, (table, sorted(data["record"]))
    if kind == "UPDATE":
        assert data["old_record"] and set(data["old_record"]) <= columns, (table, data["old_record"])
    if kind == "DELETE":
        assert set(data["old_record"]) == columns, (table, sorted(data["old_record"]))
    for row in (data.get("record") or {}, data.get("old_record") or {}):
        for name, value in row.items():
            if isinstance(value, str) and len(value) == 36:
                try:
                    uuid.UUID(value)
                    assert value == value.lower(), (table, name, value)
                except ValueError:
                    pass


def same(a, b) -> bool:
    """Ids compared as UUIDs."""
    return a is not None and b is not None and str(a).lower() == str(b).lower()


def request_erasure(user: User):
    """Asks the harness to publish auth's `user_deleted` for `user` (as deleting the account
    through auth would) and returns at once; the harness removes the file once published."""
    folder = pathlib.Path(os.environ["COLONY_SIGNAL_DIR"])
    (folder / f"erase-{user.id}").write_text("")
