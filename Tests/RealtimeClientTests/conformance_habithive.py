"""HabitHive. Its seed names no subscriptions; Colony offers what its screens show live, and this
is how the app subscribes: the Hive Detail screen joins `hive_{id}` (the hive, its members, their
days, the day tallies and the feed, each filtered by the hive), and each user joins `me_{id}`
(their habit logs, their invitations, their own feed lines such as personal milestones). Every
action through the habits API; every change checked for its type and row."""
import asyncio
import datetime
import os
import sys

from conformance import API, Listener, request_erasure, same, users


def hive_channel(hive: str):
    by_hive = f"hive_id=eq.{hive}"
    return [("*", "hives", f"id=eq.{hive}"), ("*", "hive_members", by_hive), ("*", "hive_member_days", by_hive),
            ("*", "hive_days", by_hive), ("INSERT", "activity_events", by_hive)]


def me_channel(user, invitations_column: str):
    return [("*", "habit_logs", f"user_id=eq.{user.id}"), ("*", "hive_invitations", f"{invitations_column}=eq.{user.id}"),
            ("INSERT", "activity_events", f"actor_id=eq.{user.id}")]


async def main() -> int:
    owner, friend = users()
    o, f = API(owner), API(friend)
    for api in (o, f):
        await api.call("PATCH", "/profile", {"timezone": "UTC", "day_start_hour": 0})
    today = datetime.datetime.now(datetime.timezone.utc).date()

    # The owner's habit, six days logged; made into a hive; the friend is a contact match.
    owner_app, friend_app = Listener(owner, "owner"), Listener(friend, "friend")
    await owner_app.subscribe(f"me_{owner.id}", me_channel(owner, "invited_by"))
    await friend_app.subscribe(f"me_{friend.id}", me_channel(friend, "user_id"))
    habit = (await o.call("POST", "/habits", {"name": "Run", "emoji": "🏃"}))["id"].lower()
    for back in range(6, 0, -1):
        day = (today - datetime.timedelta(days=back)).isoformat()
        await o.call("POST", f"/habits/{habit}/logs", {"date": day})
        logged = await owner_app.expect("habit_logs", "INSERT", lambda r, d=day: r["habit_id"] == habit and r["log_date"] == d)
        assert logged["record"]["value"] == 1 and logged["record"]["source"] == "manual"
    hive = (await o.call("POST", f"/habits/{habit}/hive", {"backfill_days": 0}))["hive"]["id"].lower()
    await owner_app.subscribe(f"hive_{hive}", hive_channel(hive))
    matches = (await o.call("POST", "/contacts", {"contacts": [{"phone": os.environ["COLONY_FRIEND_PHONE"]}]}))["matches"]
    assert [m["user_id"].lower() for m in matches] == [friend.id], matches

    # The invitation: INSERT for both; accepting is an UPDATE with the previous status, and the
    # friend's membership and feed line arrive on the hive's channel.
    invitation = (await o.call("POST", f"/hives/{hive}/invitations", {"user_id": friend.id}))["id"].lower()
    invited = await friend_app.expect("hive_invitations", "INSERT", lambda r: r["id"] == invitation)
    assert invited["record"]["status"] == "pending" and invited["record"]["hive_id"] == hive and invited["record"]["decided_at"] is None
    await owner_app.expect("hive_invitations", "INSERT", lambda r: r["id"] == invitation)
    await friend_app.subscribe(f"hive_{hive}", hive_channel(hive))
    await f.call("POST", f"/invitations/{invitation}/accept")
    answered = await owner_app.expect("hive_invitations", "UPDATE", lambda r: r["id"] == invitation)
    assert answered["record"]["status"] == "accepted" and answered["old_record"]["status"] == "pending" and answered["record"]["decided_at"]
    for app in (owner_app, friend_app):
        joined = await app.expect("hive_members", "INSERT", lambda r: same(r["user_id"], friend.id), topic=f"hive_{hive}")
        assert joined["record"]["role"] == "member"
        await app.expect("activity_events", "INSERT", lambda r: r["type"] == "hive_joined" and same(r["actor_id"], friend.id), topic=f"hive_{hive}")

    # Logging the habit today: its log, a seventh day (a personal milestone), and, since the habit
    # is the hive's, the owner's day in the hive.
    await o.call("POST", f"/habits/{habit}/logs", {})
    await owner_app.expect("habit_logs", "INSERT", lambda r: r["log_date"] == today.isoformat())
    milestone = await owner_app.expect("activity_events", "INSERT", lambda r: r["type"] == "streak_milestone", topic=f"me_{owner.id}")
    assert milestone["record"]["data"]["length"] == 7 and milestone["record"]["hive_id"] is None and milestone["record"]["habit_id"] == habit
    owner_day = await friend_app.expect("hive_member_days", "INSERT", lambda r: same(r["user_id"], owner.id))
    assert owner_day["record"]["done"] is True and owner_day["record"]["day_date"] == today.isoformat() and owner_day["record"]["value"] == 1

    # The friend completes the day: the tally and the streak move, the feed names who completed it.
    await f.call("POST", f"/hives/{hive}/logs", {})
    await owner_app.expect("hive_member_days", "INSERT", lambda r: same(r["user_id"], friend.id))
    tally = await owner_app.expect("hive_days", "UPDATE", lambda r: r["day_date"] == today.isoformat())
    assert tally["record"]["advanced"] is True and tally["record"]["complete_count"] == 2 and tally["record"]["required_count"] == 2
    assert tally["old_record"] == {"hive_id": hive, "day_date": today.isoformat()}, tally["old_record"]
    streak = await owner_app.expect("hives", "UPDATE", lambda r: r["id"] == hive and r["current_length"] == 1)
    assert streak["record"]["last_advanced_on"] == today.isoformat() and streak["record"]["source_habit_id"] == habit
    advanced = await owner_app.expect("activity_events", "INSERT", lambda r: r["type"] == "hive_advanced", topic=f"hive_{hive}")
    assert same(advanced["record"]["actor_id"], friend.id) and same(advanced["record"]["data"]["completed_by"], friend.id)

    # The owner edits the hive: an UPDATE with the previous values.
    await o.call("PATCH", f"/hives/{hive}", {"name": "Run club", "color_hex": "#34C759"})
    edited = await friend_app.expect("hives", "UPDATE", lambda r: r["id"] == hive and r["name"] == "Run club")
    assert edited["old_record"]["name"] == "Run" and edited["record"]["color_hex"] == "#34C759"

    # The friend's account is erased: their membership goes (their days and feed with it).
    request_erasure(friend)
    await owner_app.expect("hive_members", "DELETE", lambda r: same(r["user_id"], friend.id))

    # The hive is deleted: each member's row, then the hive.
    await o.call("DELETE", f"/hives/{hive}")
    await owner_app.expect("hive_members", "DELETE", lambda r: same(r["user_id"], owner.id))
    assert (await owner_app.expect("hives", "DELETE", lambda r: r["id"] == hive))["old_record"]["name"] == "Run club"

    for app in (owner_app, friend_app):
        await app.close()
    for api in (o, f):
        await api.close()
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
