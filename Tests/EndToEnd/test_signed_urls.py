"""Signed URLs of members-only buckets follow membership (issue 33.4), through the gateway.

A member signs a week-long URL for a voice message (Unify) or a circle's post photo (MyCirclee);
the owner removes them through the API; within the documented bound (COLONY_STORAGE_SIGNER_CHECK_SECONDS,
30 s by default, never more than 60) the URL answers 403, while a current member's URL keeps working.
Tampered, expired and other objects' tokens are refused.
"""

from __future__ import annotations

import time

import httpx

from e2e_support import Api, User, expect

# The README's promise: a removed member's signed URL stops within a minute (30 s by default).
BOUND = 60.0
# How long the tests wait at most before failing (never a fixed short sleep).
DEADLINE = 90.0

M4A = b"\x00\x00\x00\x20ftypM4A " + bytes(range(200))
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64)


def unify_user(api: Api, tag: str) -> User:
    """A confirmed Unify user (Unify confirms addresses: the code comes by mail) with a chat profile."""
    user = api.sign_up_with_code("unify", f"signed-{tag}", full_name=f"Signed {tag}")
    # The chat profile is made from the token on first use, so the group can name the address at once.
    expect(user.get("/chat/v1/me"), 200)
    return user


def fetch(api: Api, url: str) -> httpx.Response:
    """A signed URL as a player fetches it: no apikey, no token."""
    return api.http.get(url)


def sign(user: User, stable_url: str, seconds: int = 604_800) -> str:
    """POST …/object/sign/… (Supabase's createSignedUrl) for the object of a stable URL: the signed path."""
    path = "/storage/v1/object/sign/" + stable_url.split("/storage/v1/object/authenticated/", 1)[1]
    answer = expect(user.post(path, json={"expiresIn": seconds}), 200)
    assert answer["signedURL"].startswith("/object/sign/") and answer["signed_url"].endswith(answer["signedURL"]), answer
    token = answer["signedURL"].split("token=", 1)[1]
    assert token.split(".")[1] == user.id, f"the token names its signer: {token}"
    return "/storage/v1" + answer["signedURL"]


def wait_until_refused(api: Api, url: str) -> tuple[httpx.Response, float]:
    """Polls the URL until it stops serving, at most DEADLINE: the refusal and how long it took."""
    started = time.monotonic()
    while True:
        response = fetch(api, url)
        elapsed = time.monotonic() - started
        if response.status_code != 200:
            return response, elapsed
        assert elapsed < DEADLINE, f"{url} still served {DEADLINE:g}s after its signer was removed"
        time.sleep(0.5)


def assert_refused_variants(api: Api, url: str, other_object_url: str) -> None:
    """A tampered signature, a changed expiry, another object's path, no signer: all refused."""
    base, token = url.split("?token=", 1)
    expiry, signer, mac = token.split(".")
    flipped = ("B" if mac[0] == "A" else "A") + mac[1:]
    other_base = other_object_url.split("?token=", 1)[0]
    cases = {
        "tampered signature": (f"{base}?token={expiry}.{signer}.{flipped}", 403),
        "changed expiry": (f"{base}?token={int(expiry) + 60}.{signer}.{mac}", 403),
        "another object's path": (f"{other_base}?token={token}", 403),
        "no signer": (f"{base}?token={expiry}.{mac}", 400),
        "no token": (base, 400),
        "garbage": (f"{base}?token=x..y", 400),
    }
    for name, (variant, status) in cases.items():
        response = fetch(api, variant)
        assert response.status_code == status, f"{name}: {variant} -> {response.status_code} {response.text[:300]}"
        assert response.json()["code"] == "invalid_signature", (name, response.text)


def wait_until_expired(api: Api, url: str) -> None:
    started = time.monotonic()
    while True:
        response = fetch(api, url)
        if response.status_code == 403:
            assert response.json() == {"code": "invalid_signature", "message": "signature expired"}, response.text
            return
        assert response.status_code == 200, response.text
        assert time.monotonic() - started < DEADLINE, "a 1-second URL still served"
        time.sleep(0.5)


def test_unify_voice_message_url_stops_when_the_signer_is_removed(api: Api):
    owner, member, stayer = (unify_user(api, tag) for tag in ("owner", "member", "stayer"))
    group = expect(owner.post("/chat/v1/groups", json={"name": "Signed URLs", "member_emails": [member.email, stayer.email]}), 201)
    group_id = group["id"].lower()

    sent = expect(owner.post(f"/chat/v1/groups/{group_id}/messages/voice", params={"duration": 2},
                             content=M4A, headers={"Content-Type": "audio/mp4"}), 201)
    second = expect(owner.post(f"/chat/v1/groups/{group_id}/messages/voice", params={"duration": 1},
                               content=M4A[:100], headers={"Content-Type": "audio/mp4"}), 201)
    member_url, stayer_url = sign(member, sent["voice_url"]), sign(stayer, sent["voice_url"])
    other_url = sign(member, second["voice_url"])
    for url in (member_url, stayer_url):
        served = fetch(api, url)
        assert served.status_code == 200 and served.content == M4A, (served.status_code, served.text[:200])
        assert served.headers["cache-control"].startswith("private, max-age="), served.headers
    assert_refused_variants(api, member_url, other_url)
    wait_until_expired(api, sign(member, sent["voice_url"], seconds=1))

    expect(owner.delete(f"/chat/v1/groups/{group_id}/members/{member.id}"), 204)
    refused, after = wait_until_refused(api, member_url)
    assert refused.status_code == 403 and refused.json()["code"] == "invalid_signature", refused.text
    assert after <= BOUND, f"refused only after {after:.1f}s"
    print(f"voice message: the removed member's URL refused after {after:.1f}s")
    assert fetch(api, other_url).status_code == 403, "every URL the removed member signed stops"
    kept = fetch(api, stayer_url)
    assert kept.status_code == 200 and kept.content == M4A, "a current member's URL keeps working"
    # The removed member can neither sign again nor use the stable URL.
    stable_path = "/storage/v1" + sent["voice_url"].split("/storage/v1", 1)[1]
    assert member.post(stable_path.replace("/object/authenticated/", "/object/sign/"), json={}).status_code == 404
    assert member.get(stable_path).status_code == 404


def test_circle_post_photo_url_stops_when_the_signer_is_removed(api: Api):
    owner, member, stayer = (api.sign_up_confirmed("mycirclee", f"signed-{tag}") for tag in ("owner", "member", "stayer"))
    circle = expect(owner.post("/circles/v1/circles", json={"name": "Signed URLs"}), 201)["id"].lower()
    for user in (member, stayer):
        code = expect(owner.post(f"/circles/v1/circles/{circle}/invites"), 201)["code"]
        expect(user.post("/circles/v1/invites/claim", json={"code": code}), 200)
    posts = []
    for body in ("with a photo", "another photo"):
        post = expect(owner.post(f"/circles/v1/circles/{circle}/posts", json={"type": "note", "body": body}), 201)
        posts.append(expect(owner.put(f"/circles/v1/posts/{post['id']}/photo", content=PNG, headers={"Content-Type": "image/png"}), 200))
    member_url, stayer_url = sign(member, posts[0]["photo_url"]), sign(stayer, posts[0]["photo_url"])
    other_url = sign(member, posts[1]["photo_url"])
    for url in (member_url, stayer_url):
        served = fetch(api, url)
        assert served.status_code == 200 and served.content == PNG, (served.status_code, served.text[:200])
    assert_refused_variants(api, member_url, other_url)

    expect(owner.delete(f"/circles/v1/circles/{circle}/members/{member.id}"), 204)
    refused, after = wait_until_refused(api, member_url)
    assert refused.status_code == 403 and refused.json()["code"] == "invalid_signature", refused.text
    assert after <= BOUND, f"refused only after {after:.1f}s"
    print(f"post photo: the removed member's URL refused after {after:.1f}s")
    kept = fetch(api, stayer_url)
    assert kept.status_code == 200 and kept.content == PNG, "a current member's URL keeps working"


def test_public_bucket_signed_urls_are_unchanged(api: Api):
    """A public picture's signed URL names nobody and serves whoever holds it."""
    user = api.sign_up_confirmed("socialspot", "signed-public")
    profile = expect(user.put("/nearby/v1/profile/photo", content=PNG, headers={"Content-Type": "image/png"}), 200)
    photo = profile.get("photo_url") or ""
    assert "/storage/v1/object/public/profile-photos/" in photo, profile
    key = photo.split("/storage/v1/object/public/profile-photos/", 1)[1].split("?", 1)[0]
    answer = expect(user.post(f"/storage/v1/object/sign/profile-photos/{key}", json={"expiresIn": 60}), 200)
    token = answer["signedURL"].split("token=", 1)[1]
    assert len(token.split(".")) == 2, token
    served = fetch(api, "/storage/v1" + answer["signedURL"])
    assert served.status_code == 200 and served.content == PNG, served.text[:200]
