"""The HTTP attacks of issue 19, performed through the nginx gateway against the stack as
`scripts/run` starts it (its defaults: quotas, the nearby offset): each must be refused.

- MyCirclee: an owner accepting an add request on the invitee's behalf.
- HabitHive: a bulk upload of phone numbers over the per-user quota (and the pepper is not served).
- SocialSpot: the trilateration procedure (spoofed reports, a distance read after each) ends
  farther than 50 ft from the person, and the reports run into their rate limit.
- SocialSpot: a profile photo's old key stops working when it changes, and an id alone names none.
"""

from __future__ import annotations

import math
import random
import struct
import zlib
from urllib.parse import urlsplit

from e2e_support import Api, User, expect, unique_phone, wait_until

FEET = 0.3048
METERS_PER_DEGREE = 111_320.0


# ---------------------------------------------------------------------------------- MyCirclee


def test_owner_cannot_accept_an_add_request_on_someones_behalf(api: Api):
    owner = api.sign_up_confirmed("mycirclee", "consent-owner")
    invitee = api.sign_up_confirmed("mycirclee", "consent-invitee")
    handle = f"e2e_{invitee.id[:8]}"
    # The invitee's circles profile comes from auth's event: set a handle once it exists.
    wait_until("the invitee's circles profile", lambda: invitee.patch("/circles/v1/profile", json={"handle": handle}).status_code == 200)
    circle = expect(owner.post("/circles/v1/circles", json={"name": "Consent"}), 201)["id"].lower()

    request = expect(owner.post(f"/circles/v1/circles/{circle}/add-requests", json={"handle": handle}), 201)
    assert request["status"] == "pending" and request["owner_approved"] is False, request

    # The attack: the owner accepts the request addressed to someone else.
    on_behalf = owner.post(f"/circles/v1/add-requests/{request['id']}/accept")
    assert on_behalf.status_code == 403 and on_behalf.json()["code"] == "invitee_must_accept", on_behalf.text
    assert invitee.get(f"/circles/v1/circles/{circle}").status_code == 404, "the invitee was added without consent"

    # Approving first is the owner's part; joining stays the invitee's.
    assert expect(owner.post(f"/circles/v1/add-requests/{request['id']}/approve"), 200)["owner_approved"] is True
    assert expect(invitee.post(f"/circles/v1/add-requests/{request['id']}/accept"), 200)["status"] == "accepted"
    expect(invitee.get(f"/circles/v1/circles/{circle}"), 200)


# ---------------------------------------------------------------------------------- HabitHive


def test_bulk_contact_upload_over_quota(api: Api):
    uploader = api.phone_otp_sign_in("habithive")
    friend = api.phone_otp_sign_in("habithive")
    # The pepper that let any client hash every number is gone.
    assert uploader.get("/habits/v1/contacts/pepper").status_code == 404

    def numbers(count: int, *extra: str) -> dict:
        contacts = [{"phone": unique_phone()} for _ in range(count - len(extra))] + [{"phone": p} for p in extra]
        return {"contacts": contacts}

    friend_phone = "+" + friend.phone
    # The server hashes the numbers; the friend is matched once habits has their phone hash
    # (from auth's event; match reads are a quota too, 60 an hour, hence the slow poll).
    expect(uploader.post("/habits/v1/contacts", json=numbers(3, friend_phone)), 200)
    matches = wait_until("the friend among the uploader's matches",
                         lambda: expect(uploader.get("/habits/v1/contacts/matches"), 200)["matches"], interval=1.0)
    assert [m["user_id"].lower() for m in matches] == [friend.id], matches

    too_many = uploader.post("/habits/v1/contacts", json=numbers(2001))
    assert too_many.status_code == 422, too_many.text
    # The attack: walking the number space 2,000 at a time. 5,000 numbers a day, then 429.
    expect(uploader.post("/habits/v1/contacts", json=numbers(2000)), 200)
    expect(uploader.post("/habits/v1/contacts", json=numbers(2000)), 200)
    over = uploader.post("/habits/v1/contacts", json=numbers(2000, friend_phone))
    assert over.status_code == 429 and over.json()["code"] == "contact_quota_exceeded", over.text
    assert int(over.headers["retry-after"]) >= 1, over.headers
    # An upload replaces the set: the last accepted one (2,000 strangers) matches nobody.
    assert expect(uploader.get("/habits/v1/contacts/matches"), 200)["matches"] == []


# ---------------------------------------------------------------------------------- SocialSpot


def moved(lat: float, lon: float, north_feet: float, east_feet: float) -> tuple[float, float]:
    return (lat + north_feet * FEET / METERS_PER_DEGREE,
            lon + east_feet * FEET / (METERS_PER_DEGREE * math.cos(math.radians(lat))))


def local(point: tuple[float, float], origin: tuple[float, float]) -> tuple[float, float]:
    """Meters east and north of `origin`."""
    return ((point[1] - origin[1]) * METERS_PER_DEGREE * math.cos(math.radians(origin[0])),
            (point[0] - origin[0]) * METERS_PER_DEGREE)


def trilaterate(samples: list[tuple[float, float, float]], start: tuple[float, float]) -> tuple[float, float]:
    """The point whose distances to the anchors best fit the measured ones (Gauss-Newton)."""
    x, y = start
    for _ in range(100):
        a11 = a12 = a22 = b1 = b2 = 0.0
        for sx, sy, distance in samples:
            dx, dy = x - sx, y - sy
            reach = max(math.hypot(dx, dy), 0.01)
            jx, jy = dx / reach, dy / reach
            residual = reach - distance
            a11 += jx * jx; a12 += jx * jy; a22 += jy * jy
            b1 += jx * residual; b2 += jy * residual
        determinant = a11 * a22 - a12 * a12
        if abs(determinant) < 1e-9:
            break
        x -= (a22 * b1 - a12 * b2) / determinant
        y -= (a11 * b2 - a12 * b1) / determinant
    return x, y


def sharing(api: Api, tag: str) -> User:
    user = api.sign_up_confirmed("socialspot", tag)
    expect(user.patch("/nearby/v1/profile", json={"name": tag}), 200)
    expect(user.patch("/nearby/v1/settings", json={"share_location": True}), 200)
    return user


def test_trilateration_ends_farther_than_50_feet(api: Api):
    target, attacker = sharing(api, "spot-target"), sharing(api, "spot-attacker")
    truth = (random.uniform(30.0, 45.0), random.uniform(-120.0, -80.0))
    expect(target.put("/nearby/v1/location", json={"latitude": truth[0], "longitude": truth[1], "accuracy": 5}), 200)
    start = moved(*truth, north_feet=-280, east_feet=-100)
    expect(attacker.put("/nearby/v1/location", json={"latitude": start[0], "longitude": start[1]}), 200)

    def card() -> dict | None:
        response = attacker.get("/nearby/v1/nearby")
        if response.status_code == 429:  # queries are capped too (60 a minute)
            return None
        listing = expect(response, 200)
        return next((u for u in listing["users"] if u["user_id"].lower() == target.id), None)

    seen = card()
    assert seen is not None, "the attacker sees the target"
    shown = (seen["position"]["latitude"], seen["position"]["longitude"])

    # The procedure: report a spoofed position around where the target appears, read the
    # target's distance, again and again, as long as the service lets the reports through.
    samples: list[tuple[float, float, float]] = []
    refused = None
    for _ in range(200):
        spoofed = moved(*shown, north_feet=random.uniform(-120, 120), east_feet=random.uniform(-120, 120))
        report = attacker.put("/nearby/v1/location", json={"latitude": spoofed[0], "longitude": spoofed[1]})
        if report.status_code == 429:
            refused = report
            break
        expect(report, 200)
        seen = card()
        if seen is not None:
            x, y = local(spoofed, truth)
            samples.append((x, y, seen["distance_feet"] * FEET))
    assert refused is not None and refused.json()["code"] == "rate_limited", "location reports are rate-limited"
    assert int(refused.headers["retry-after"]) >= 1, refused.headers
    assert len(samples) >= 20, f"only {len(samples)} samples before the limit"

    estimate = trilaterate(samples, local(shown, truth))
    error_feet = math.hypot(*estimate) / FEET
    print(f"trilateration through the gateway: {len(samples)} samples before the rate limit, estimate {error_feet:.0f} ft from the person")
    assert error_feet > 50, f"the estimate ends {error_feet:.0f} ft from the person"


def png(seed: int) -> bytes:
    """A 1x1 PNG whose pixel depends on `seed`."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    pixel = bytes([0, seed % 256, (seed >> 8) % 256, 7])
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(pixel)) + chunk(b"IEND", b""))


def test_old_picture_key_stops_working_after_a_change(api: Api):
    owner, watcher = sharing(api, "spot-photo"), sharing(api, "spot-watcher")

    def upload(seed: int) -> str:
        profile = expect(owner.put("/nearby/v1/profile/photo", content=png(seed), headers={"Content-Type": "image/png"}), 200)
        parts = urlsplit(profile["photo_url"])
        return f"{parts.path}?{parts.query}" if parts.query else parts.path

    first = upload(1)
    assert owner.id not in first.rsplit("/", 1)[-1], f"the key is more than the user id: {first}"
    assert api.http.get(first).content == png(1), "the watcher (before being blocked) fetches the photo"
    # An id alone names no picture (the old scheme: profile-photos/{user_id}).
    assert api.http.get(f"/storage/v1/object/public/profile-photos/{owner.id}").status_code == 404

    # The owner blocks the watcher and changes the photo: the URL the watcher kept stops working.
    expect(owner.post("/nearby/v1/blocks", json={"user_id": watcher.id}), 201)
    second = upload(2)
    assert second != first
    assert api.http.get(first).status_code == 404, "the old key still serves a picture"
    assert api.http.get(first.split("?")[0]).status_code == 404
    assert api.http.get(f"/storage/v1/object/public/profile-photos/{owner.id}").status_code == 404
    assert api.http.get(second).content == png(2)
