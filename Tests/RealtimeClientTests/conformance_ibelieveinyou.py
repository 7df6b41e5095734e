"""I Believe In You. Its seed has no realtime subscriptions ("data refreshes on pull-to-refresh,
navigation back, after mutations"), so Colony publishes none of its rows. This checks that the
app's socket still works as the Supabase client opens it, and that through every action of the
seed (builders, projects, posts, milestones, follows, likes, support messages, anonymous ones
included) nothing of it is ever sent, even to a client that asks for every table."""
import asyncio
import sys

from conformance import API, Listener, users

TABLES = ["builders", "karma", "projects", "posts", "follows", "milestones", "support_messages", "likes", "support_actions"]


async def main() -> int:
    creator, supporter = users()
    c, s = API(creator), API(supporter)
    listeners = [Listener(creator, "creator"), Listener(supporter, "supporter")]
    for app in listeners:
        await app.subscribe("ibelieveinyou", [("*", table, None) for table in TABLES])
        await app.subscribe("everything", [("*", "*", None)])

    await c.call("PATCH", "/me", {"name": "Cleo", "bio": "Makes kilns", "is_creator": True})
    await s.call("GET", "/me")
    project = (await c.call("POST", "/projects", {"title": "Solar Kiln", "tagline": "Pottery by sunlight"}))["id"]
    post = (await c.call("POST", f"/projects/{project}/posts", {"content": "First firing!"}))["id"]
    milestone = (await c.call("POST", f"/projects/{project}/milestones", {"title": "Prototype"}))["id"]
    await c.call("POST", f"/milestones/{milestone}/toggle")
    await c.call("PATCH", f"/projects/{project}", {"mood": "green"})
    await s.call("POST", f"/projects/{project}/follow")
    await s.call("POST", f"/posts/{post}/like")
    await s.call("POST", f"/projects/{project}/support-messages", {"message": "You got this", "is_anonymous": True})
    await s.call("POST", f"/projects/{project}/support-messages", {"message": "Love it", "is_anonymous": False})
    await s.call("DELETE", f"/posts/{post}/like")
    await s.call("DELETE", f"/projects/{project}/follow")
    await c.call("DELETE", f"/posts/{post}")
    await c.call("DELETE", f"/projects/{project}")

    # Nothing is published for this app, so nothing can come: a grace period for anything in flight.
    await asyncio.sleep(3)
    for app in listeners:
        assert not app.received, (app.name, [p["data"]["table"] for _, p in app.received])
        await app.close()
    for api in (c, s):
        await api.close()
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
