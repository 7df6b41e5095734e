"""SocialSpot's realtime, as the app subscribes: the official `realtime` client opened with the app's
anon key, the user's JWT set, one channel listening to every change (`*`) of `locations` and
`profiles` in `public` (the seed: "the Swift frontend observes database changes and updates the UI
in real time"). Every action goes through the nearby service's REST API; each change the app gets is
checked for its type and row shape:

  A viewer who starts sharing gets INSERTs for who is already around; a move within range is an
  UPDATE; moving out of range is a DELETE, coming back an INSERT; a card edit is a `profiles`
  UPDATE; turning sharing off, and a location expiring, are DELETEs.

Environment: COLONY_REALTIME_URL, COLONY_API_KEY (socialspot's anon key), COLONY_NEARBY_URL,
COLONY_TOKEN_A/B/C and COLONY_USER_A/B/C (three socialspot users; A is the app under test).
"""
import asyncio
import math
import os
import sys

import httpx
from realtime import AsyncRealtimeClient, RealtimeSubscribeStates

TIMEOUT = 45  # the realtime path crosses the broker; the suite shares two busy cores
ORIGIN = (37.7749, -122.4194)
LOCATION_COLUMNS = {"user_id", "latitude", "longitude", "updated_at"}


def moved(north: float, east: float = 0.0) -> dict:
    latitude = ORIGIN[0] + north / 111_320
    longitude = ORIGIN[1] + east / (111_320 * math.cos(math.radians(ORIGIN[0])))
    return {"latitude": latitude, "longitude": longitude}


class App:
    """User A's app: its channel's changes, and waits for the one the app must see next."""

    def __init__(self) -> None:
        self.changes: asyncio.Queue = asyncio.Queue()
        self.seen: list = []

    def on_change(self, payload) -> None:
        self.changes.put_nowait(payload)

    async def expect(self, what: str, table: str, kind: str, user: str) -> dict:
        """The next change of `table` of type `kind` about `user` (others, A's own row included, pass by)."""
        deadline = asyncio.get_running_loop().time() + TIMEOUT
        while True:
            remaining = deadline - asyncio.get_running_loop().time()
            try:
                payload = await asyncio.wait_for(self.changes.get(), max(0.1, remaining))
            except asyncio.TimeoutError:
                raise AssertionError(f"{what}: no {kind} on {table} for {user} within {TIMEOUT}s; seen: {self.seen[-10:]}")
            data = payload["data"]
            kind_seen = data.get("type", data.get("eventType"))
            row = data.get("record") if kind_seen != "DELETE" else data.get("old_record")
            self.seen.append((data["table"], kind_seen, (row or {}).get("user_id")))
            assert data["schema"] == "public", payload
            if data["table"] == table and kind_seen == kind and (row or {}).get("user_id", "").lower() == user:
                return data


async def main() -> int:
    users = {name: os.environ[f"COLONY_USER_{name}"].lower() for name in "ABC"}
    tokens = {name: os.environ[f"COLONY_TOKEN_{name}"] for name in "ABC"}
    app = App()
    client = AsyncRealtimeClient(os.environ["COLONY_REALTIME_URL"], os.environ["COLONY_API_KEY"], auto_reconnect=False, timeout=30)
    await client.connect()
    await client.set_auth(tokens["A"])
    subscribed: asyncio.Future = asyncio.get_running_loop().create_future()

    def on_state(state, error):
        if subscribed.done():
            return
        if state == RealtimeSubscribeStates.SUBSCRIBED:
            subscribed.set_result(True)
        else:
            subscribed.set_exception(RuntimeError(f"subscribe: {state} {error}"))

    channel = client.channel("nearby")
    channel.on_postgres_changes("*", schema="public", table="locations", callback=app.on_change)
    channel.on_postgres_changes("*", schema="public", table="profiles", callback=app.on_change)
    await channel.subscribe(on_state)
    await asyncio.wait_for(subscribed, 35)

    async with httpx.AsyncClient(base_url=os.environ["COLONY_NEARBY_URL"], timeout=30) as http:
        async def call(user: str, method: str, path: str, body: dict) -> dict:
            response = await http.request(method, path, json=body, headers={"Authorization": f"Bearer {tokens[user]}"})
            assert response.status_code == 200, f"{user} {method} {path}: {response.status_code} {response.text}"
            return response.json()

        # B shares first; A is not sharing yet, so A's app hears nothing of B.
        await call("B", "PATCH", "/settings", {"share_location": True})
        await call("B", "PUT", "/location", moved(30))
        # A starts sharing: who is already around arrives as INSERTs.
        await call("A", "PATCH", "/settings", {"share_location": True})
        await call("A", "PUT", "/location", moved(0))

        async def keep_fresh():  # the app reports its position while it is open
            while True:
                await asyncio.sleep(3)
                await call("A", "PUT", "/location", moved(0))

        fresh = asyncio.create_task(keep_fresh())
        try:
            inserted = await app.expect("B already around when A starts sharing", "locations", "INSERT", users["B"])
            assert set(inserted["record"]) == LOCATION_COLUMNS, inserted
            # B moves within range: an UPDATE with B's new (shown) position.
            await call("B", "PUT", "/location", moved(45))
            updated = await app.expect("B moves within range", "locations", "UPDATE", users["B"])
            assert set(updated["record"]) == LOCATION_COLUMNS and updated["old_record"]["user_id"].lower() == users["B"], updated
            # B moves out of range: a DELETE; back in range: an INSERT.
            await call("B", "PUT", "/location", moved(1200))
            gone = await app.expect("B moves out of range", "locations", "DELETE", users["B"])
            assert gone["old_record"]["user_id"].lower() == users["B"] and not gone.get("record"), gone
            await call("B", "PUT", "/location", moved(40))
            await app.expect("B comes back into range", "locations", "INSERT", users["B"])
            # B edits the card: a `profiles` UPDATE with the public card (no birthday, no settings).
            await call("B", "PATCH", "/profile", {"name": "Bea", "bio": "here"})
            card = await app.expect("B edits the card", "profiles", "UPDATE", users["B"])
            assert card["record"]["name"] == "Bea" and "birthday" not in card["record"] and "share_location" not in card["record"], card
            # B stops sharing: a DELETE.
            await call("B", "PATCH", "/settings", {"share_location": False})
            await app.expect("B stops sharing", "locations", "DELETE", users["B"])
            # C shares nearby (an INSERT), then stops reporting: when C's location expires, a DELETE.
            await call("C", "PATCH", "/settings", {"share_location": True})
            await call("C", "PUT", "/location", moved(-30, 20))
            await app.expect("C starts sharing nearby", "locations", "INSERT", users["C"])
            await app.expect("C's location expires", "locations", "DELETE", users["C"])
        finally:
            fresh.cancel()
    await client.close()
    print("ok", len(app.seen), "changes")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
