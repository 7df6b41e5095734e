"""Joins a postgres_changes channel on MyCirclee's `posts` with a `circle_id=eq.<id>` filter through
the official `realtime` client, creates a post through the circles service's API and expects it back
as an INSERT."""
import asyncio
import os
import sys

import httpx
from realtime import AsyncRealtimeClient, RealtimeSubscribeStates


async def main() -> int:
    circle = os.environ["COLONY_CIRCLE_ID"]
    client = AsyncRealtimeClient(os.environ["COLONY_REALTIME_URL"], os.environ["COLONY_API_KEY"], auto_reconnect=False,
                                 timeout=30)  # the library waits 10 s for a join reply; the suite shares two busy cores
    await client.connect()
    await client.set_auth(os.environ["COLONY_MEMBER_TOKEN"])  # the app's anon key opens the socket; the user's JWT joins
    received: asyncio.Future = asyncio.get_running_loop().create_future()
    subscribed: asyncio.Future = asyncio.get_running_loop().create_future()

    def on_change(payload):
        if not received.done():
            received.set_result(payload)

    def on_state(state, error):
        if state == RealtimeSubscribeStates.SUBSCRIBED and not subscribed.done():
            subscribed.set_result(True)
        elif state != RealtimeSubscribeStates.SUBSCRIBED and not subscribed.done():
            subscribed.set_exception(RuntimeError(f"subscribe: {state} {error}"))

    channel = client.channel(f"posts_{circle}")
    channel.on_postgres_changes("INSERT", schema="public", table="posts", filter=f"circle_id=eq.{circle}", callback=on_change)
    await channel.subscribe(on_state)
    await asyncio.wait_for(subscribed, 35)

    async with httpx.AsyncClient() as http:
        response = await http.post(f"{os.environ['COLONY_CIRCLES_URL']}/circles/{circle}/posts",
                                   headers={"Authorization": f"Bearer {os.environ['COLONY_AUTHOR_TOKEN']}"},
                                   json={"type": "note", "body": "post from python"})
        assert response.status_code in (200, 201), response.text
        post_id = response.json()["id"].lower()

    payload = await asyncio.wait_for(received, 15)
    data = payload["data"]
    assert data.get("type", data.get("eventType")) == "INSERT", payload
    assert data["table"] == "posts" and data["schema"] == "public", payload
    record = data["record"]
    assert record["id"].lower() == post_id, payload
    assert record["circle_id"].lower() == circle, payload
    assert record["body"] == "post from python" and record["type"] == "note", payload
    await client.close()
    print("ok", record["id"])
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
