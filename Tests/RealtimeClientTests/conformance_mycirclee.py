"""MyCirclee, subscribed as its seed's app: three unfiltered channels (posts, DMs, presence; the
client filters by circle) plus the circle's own rows; every action of the seed through the
circles API, and every change checked for its type and row."""
import asyncio
import sys
import urllib.parse

from conformance import API, Listener, request_erasure, same, users


def channels():
    return {
        "posts": [("*", "posts", None), ("*", "post_reactions", None), ("*", "poll_votes", None), ("*", "event_rsvps", None)],
        "dms": [("*", "dm_messages", None), ("*", "dm_reactions", None), ("*", "dm_threads", None)],
        "presence": [("*", "presence_states", None)],
        "circles": [("*", "circles", None), ("*", "circle_members", None)],
    }


async def main() -> int:
    owner, member, leaver = users()
    a, b, c = API(owner), API(member), API(leaver)
    owner_app, member_app = Listener(owner, "owner"), Listener(member, "member")
    for app in (owner_app, member_app):
        for topic, bindings in channels().items():
            await app.subscribe(topic, bindings)
    for api in (a, b, c):
        await api.call("GET", "/profile")

    # A circle, and two members by invite code.
    circle = (await a.call("POST", "/circles", {"name": "Inner"}))["id"].lower()
    made = await owner_app.expect("circles", "INSERT", lambda r: r["id"] == circle)
    assert made["record"]["name"] == "Inner" and same(made["record"]["created_by"], owner.id)
    assert (await owner_app.expect("circle_members", "INSERT", lambda r: same(r["user_id"], owner.id)))["record"]["role"] == "owner"
    for api, user in ((b, member), (c, leaver)):
        code = (await a.call("POST", f"/circles/{circle}/invites"))["code"]
        await api.call("POST", "/invites/claim", {"code": code})
        joined = await member_app.expect("circle_members", "INSERT", lambda r, u=user: same(r["user_id"], u.id))
        assert joined["record"]["role"] == "member" and joined["record"]["circle_id"] == circle

    # Posts: INSERT, an edit as UPDATE with the previous values, DELETE with the whole row.
    note = (await a.call("POST", f"/circles/{circle}/posts", {"type": "note", "body": "Dinner?", "mood": "hungry"}))["id"].lower()
    created = await member_app.expect("posts", "INSERT", lambda r: r["id"] == note)
    assert created["record"]["body"] == "Dinner?" and created["record"]["photo_url"] is None and created["record"]["circle_id"] == circle
    await a.call("PATCH", f"/posts/{note}", {"body": "Dinner at 8?"})
    edited = await member_app.expect("posts", "UPDATE", lambda r: r["id"] == note)
    assert edited["record"]["body"] == "Dinner at 8?" and edited["old_record"]["body"] == "Dinner?" and edited["old_record"]["mood"] == "hungry"

    # Reactions: set (a retry changes nothing), unset.
    fire = f"/posts/{note}/reactions/{urllib.parse.quote('🔥')}"
    for _ in range(2):
        await b.call("PUT", fire)
    reacted = await owner_app.expect("post_reactions", "INSERT", lambda r: r["post_id"] == note)
    assert reacted["record"]["emoji"] == "🔥" and same(reacted["record"]["user_id"], member.id) and reacted["record"]["created_at"]
    for _ in range(2):
        await b.call("DELETE", fire)
    unreacted = await owner_app.expect("post_reactions", "DELETE", lambda r: r["post_id"] == note)
    assert unreacted["old_record"]["emoji"] == "🔥"

    # Poll votes: INSERT when cast, UPDATE with the previous option when moved, DELETE when withdrawn.
    poll = await a.call("POST", f"/circles/{circle}/posts", {"type": "poll", "body": "Tea or coffee?", "poll_options": ["Tea", "Coffee"]})
    tea, coffee = (option["id"].lower() for option in poll["poll_options"])
    poll_id = poll["id"].lower()
    await member_app.expect("posts", "INSERT", lambda r: r["id"] == poll_id)
    for _ in range(2):
        await b.call("PUT", f"/posts/{poll_id}/vote", {"option_id": tea})
    cast = await owner_app.expect("poll_votes", "INSERT", lambda r: r["post_id"] == poll_id)
    assert cast["record"]["option_id"] == tea and same(cast["record"]["user_id"], member.id)
    await b.call("PUT", f"/posts/{poll_id}/vote", {"option_id": coffee})
    moved = await owner_app.expect("poll_votes", "UPDATE", lambda r: r["post_id"] == poll_id)
    assert moved["record"]["option_id"] == coffee and moved["old_record"]["option_id"] == tea
    await b.call("DELETE", f"/posts/{poll_id}/vote")
    withdrawn = await owner_app.expect("poll_votes", "DELETE", lambda r: r["post_id"] == poll_id)
    assert withdrawn["old_record"]["option_id"] == coffee

    # RSVPs, the same way.
    event = (await a.call("POST", f"/circles/{circle}/posts", {"type": "event", "body": "Hike", "starts_at": "2030-06-01T09:00:00Z", "location": "Ridge"}))["id"].lower()
    await member_app.expect("posts", "INSERT", lambda r: r["id"] == event)
    for _ in range(2):
        await b.call("PUT", f"/posts/{event}/rsvp", {"status": "going"})
    going = await owner_app.expect("event_rsvps", "INSERT", lambda r: r["post_id"] == event)
    assert going["record"]["status"] == "going"
    await b.call("PUT", f"/posts/{event}/rsvp", {"status": "maybe"})
    maybe = await owner_app.expect("event_rsvps", "UPDATE", lambda r: r["post_id"] == event)
    assert maybe["record"]["status"] == "maybe" and maybe["old_record"]["status"] == "going"
    await b.call("DELETE", f"/posts/{event}/rsvp")
    assert (await owner_app.expect("event_rsvps", "DELETE", lambda r: r["post_id"] == event))["old_record"]["status"] == "maybe"

    await a.call("DELETE", f"/posts/{note}")
    gone = await member_app.expect("posts", "DELETE", lambda r: r["id"] == note)
    assert gone["old_record"]["body"] == "Dinner at 8?" and gone["old_record"]["circle_id"] == circle

    # Presence: the first status is an INSERT, a change an UPDATE with the previous one.
    await b.call("PUT", f"/circles/{circle}/presence", {"status": "free"})
    assert (await owner_app.expect("presence_states", "INSERT", lambda r: same(r["user_id"], member.id)))["record"]["status"] == "free"
    await b.call("PUT", f"/circles/{circle}/presence", {"status": "deep_work"})
    status = await owner_app.expect("presence_states", "UPDATE", lambda r: same(r["user_id"], member.id))
    assert status["record"]["status"] == "deep_work" and status["old_record"]["status"] == "free"

    # DMs: a message, its read receipt with the whole row, a reaction set and unset.
    thread = (await a.call("POST", f"/circles/{circle}/dms", {"user_id": member.id}))["id"].lower()
    message = (await a.call("POST", f"/dms/{thread}/messages", {"body": "psst"}))["id"].lower()
    sent = await member_app.expect("dm_messages", "INSERT", lambda r: r["id"] == message)
    assert sent["record"]["body"] == "psst" and sent["record"]["read_at"] is None and sent["record"]["thread_id"] == thread
    await b.call("POST", f"/dms/{thread}/read")
    read = await owner_app.expect("dm_messages", "UPDATE", lambda r: r["id"] == message)
    assert read["record"]["body"] == "psst" and read["record"]["read_at"] and same(read["record"]["sender_id"], owner.id)
    assert read["old_record"]["read_at"] is None and read["old_record"]["body"] == "psst"
    heart = f"/dms/{thread}/messages/{message}/reactions/{urllib.parse.quote('❤️')}"
    for _ in range(2):
        await b.call("PUT", heart)
    assert (await owner_app.expect("dm_reactions", "INSERT", lambda r: r["message_id"] == message))["record"]["emoji"] == "❤️"
    for _ in range(2):
        await b.call("DELETE", heart)
    assert same((await owner_app.expect("dm_reactions", "DELETE", lambda r: r["message_id"] == message))["old_record"]["user_id"], member.id)

    # Renaming the circle.
    await a.call("PATCH", f"/circles/{circle}", {"name": "Outer"})
    renamed = await member_app.expect("circles", "UPDATE", lambda r: r["id"] == circle)
    assert renamed["record"]["name"] == "Outer" and renamed["old_record"]["name"] == "Inner"

    # An erased account: its membership, its live post and its vote go, each a DELETE.
    farewell = (await c.call("POST", f"/circles/{circle}/posts", {"type": "note", "body": "bye"}))["id"].lower()
    await member_app.expect("posts", "INSERT", lambda r: r["id"] == farewell)
    await c.call("PUT", f"/posts/{poll_id}/vote", {"option_id": tea})
    await owner_app.expect("poll_votes", "INSERT", lambda r: same(r["user_id"], leaver.id))
    request_erasure(leaver)
    assert (await member_app.expect("posts", "DELETE", lambda r: r["id"] == farewell))["old_record"]["body"] == "bye"
    assert (await owner_app.expect("poll_votes", "DELETE", lambda r: same(r["user_id"], leaver.id)))["old_record"]["option_id"] == tea
    await member_app.expect("circle_members", "DELETE", lambda r: same(r["user_id"], leaver.id))

    # The owner leaves: the circle passes to the member (UPDATE of their row), the owner's row and
    # their DM thread go.
    await a.call("POST", f"/circles/{circle}/leave")
    heir = await member_app.expect("circle_members", "UPDATE", lambda r: same(r["user_id"], member.id))
    assert heir["record"]["role"] == "owner" and heir["old_record"]["role"] == "member"
    await member_app.expect("circle_members", "DELETE", lambda r: same(r["user_id"], owner.id))
    assert same((await member_app.expect("dm_threads", "DELETE", lambda r: r["id"] == thread))["old_record"]["user_a"], min(owner.id, member.id))

    # The circle is deleted: its live posts, the status, the membership and the circle itself.
    await b.call("DELETE", f"/circles/{circle}")
    for post in (poll_id, event):
        await member_app.expect("posts", "DELETE", lambda r, p=post: r["id"] == p)
    await member_app.expect("presence_states", "DELETE", lambda r: same(r["user_id"], member.id))
    await member_app.expect("circle_members", "DELETE", lambda r: same(r["user_id"], member.id))
    assert (await member_app.expect("circles", "DELETE", lambda r: r["id"] == circle))["old_record"]["name"] == "Outer"

    # The retried requests made no change: nothing else of these tables arrived.
    for table in ("post_reactions", "poll_votes", "event_rsvps", "dm_reactions"):
        assert not owner_app.unexpected(table), (table, owner_app.unexpected(table))
    for app in (owner_app, member_app):
        await app.close()
    for api in (a, b, c):
        await api.close()
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
