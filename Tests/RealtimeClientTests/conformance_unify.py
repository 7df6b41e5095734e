"""Unify, subscribed as its seed's app: `group_chat_{id}` and `unread_{id}`, each INSERT on
`message` filtered by `group_id=eq.{id}`; plus, for what the seed's app does not listen to yet
(edits, calendar, the group itself, members, erased accounts), one more channel. Every action
through the chat API; every change checked for its type and row."""
import asyncio
import sys

from conformance import API, Listener, request_erasure, same, users


async def main() -> int:
    owner, member, erased = users()
    o, m, e = API(owner), API(member), API(erased)
    for api in (o, m, e):
        await api.call("GET", "/me")
    group = (await o.call("POST", "/groups", {"name": "Crew", "member_emails": [f"{member.id}@example.com", f"{erased.id}@example.com"]}))["id"].lower()
    assert any(g["id"].lower() == group for g in await m.call("GET", "/groups"))

    app = Listener(member, "member")
    same_group = f"group_id=eq.{group}"
    await app.subscribe(f"group_chat_{group}", [("INSERT", "message", same_group)])
    await app.subscribe(f"unread_{group}", [("INSERT", "message", same_group)])
    await app.subscribe(f"group_changes_{group}", [("UPDATE", "message", same_group), ("DELETE", "message", same_group), ("*", "event", same_group),
                                                 ("*", "group", f"id=eq.{group}"), ("*", "group_members", same_group), ("DELETE", "user", None)])

    # A message reaches both of the seed's channels as an INSERT with the whole row.
    sent = (await o.call("POST", f"/groups/{group}/messages", {"content": "Hallo zusammen"}))["id"].lower()
    for topic in (f"group_chat_{group}", f"unread_{group}"):
        change = await app.expect("message", "INSERT", lambda r: r["id"] == sent, topic=topic)
        record = change["record"]
        assert record["content"] == "Hallo zusammen" and same(record["sent_by"], owner.id) and record["group_id"] == group
        assert record["message_type"] == "text" and record["is_edited"] is False and record["voice_url"] is None and record["voice_duration"] is None

    await o.call("PATCH", f"/groups/{group}/messages/{sent}", {"content": "Hallo alle"})
    edited = await app.expect("message", "UPDATE", lambda r: r["id"] == sent)
    assert edited["record"]["content"] == "Hallo alle" and edited["record"]["is_edited"] is True
    assert edited["old_record"]["content"] == "Hallo zusammen" and edited["old_record"]["is_edited"] is False
    await o.call("DELETE", f"/groups/{group}/messages/{sent}")
    assert (await app.expect("message", "DELETE", lambda r: r["id"] == sent))["old_record"]["content"] == "Hallo alle"

    # A group calendar event: INSERT, UPDATE with the previous title, DELETE.
    event = (await m.call("POST", "/events", {"title": "Probe", "starts_at": "2030-01-01T18:00:00Z", "ends_at": "2030-01-01T20:00:00Z", "group_id": group}))["id"].lower()
    assert (await app.expect("event", "INSERT", lambda r: r["id"] == event))["record"]["title"] == "Probe"
    await m.call("PATCH", f"/events/{event}", {"title": "Konzert"})
    moved = await app.expect("event", "UPDATE", lambda r: r["id"] == event)
    assert moved["record"]["title"] == "Konzert" and moved["old_record"]["title"] == "Probe"
    await o.call("DELETE", f"/events/{event}")
    await app.expect("event", "DELETE", lambda r: r["id"] == event)

    # Renaming, then handing the group over: roles and the owner change with their previous values.
    await o.call("PATCH", f"/groups/{group}", {"name": "Band"})
    renamed = await app.expect("group", "UPDATE", lambda r: r["id"] == group)
    assert renamed["record"]["name"] == "Band" and renamed["old_record"]["name"] == "Crew"
    await o.call("POST", f"/groups/{group}/transfer", {"new_owner_id": member.id})
    demoted = await app.expect("group_members", "UPDATE", lambda r: same(r["user_id"], owner.id))
    assert demoted["record"]["role"] == "admin" and demoted["old_record"]["role"] == "owner"
    promoted = await app.expect("group_members", "UPDATE", lambda r: same(r["user_id"], member.id))
    assert promoted["record"]["role"] == "owner" and promoted["old_record"]["role"] == "user"
    handed = await app.expect("group", "UPDATE", lambda r: r["id"] == group and same(r["owner_id"], member.id))
    assert same(handed["old_record"]["owner_id"], owner.id)

    # An erased account: its membership goes, and one `user` DELETE stands for everything it wrote.
    last = (await e.call("POST", f"/groups/{group}/messages", {"content": "tschüss"}))["id"].lower()
    await app.expect("message", "INSERT", lambda r: r["id"] == last, topic=f"group_chat_{group}")
    await app.expect("message", "INSERT", lambda r: r["id"] == last, topic=f"unread_{group}")
    request_erasure(erased)
    await app.expect("group_members", "DELETE", lambda r: same(r["user_id"], erased.id))
    assert (await app.expect("user", "DELETE", lambda r: same(r["id"], erased.id)))["old_record"]["display_name"]

    # The group is deleted: each member's row, then the group.
    await m.call("DELETE", f"/groups/{group}")
    for user in (owner, member):
        await app.expect("group_members", "DELETE", lambda r, u=user: same(r["user_id"], u.id))
    assert (await app.expect("group", "DELETE", lambda r: r["id"] == group))["old_record"]["name"] == "Band"

    await app.close()
    for api in (o, m, e):
        await api.close()
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
