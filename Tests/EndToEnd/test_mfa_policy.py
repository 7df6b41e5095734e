"""MFA and an app's access policy, end to end through the gateway.

scripts/e2e starts the stack with the apps file (COLONY_APPS_FILE) requiring aal2 of MyCirclee
(`{"mycirclee": {"require_aal2": true}}`): a user who has a verified factor must present the
token of a session that passed it. Circles (the app's domain service) and realtime refuse
that user's aal1 token with 403 insufficient_aal (realtime: the join's error reply) and accept
the aal2 one; a user without a factor is not affected."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import struct
import time

import pytest
from websockets.asyncio.client import connect

from e2e_support import Api, Stack, User, expect

APP = "mycirclee"


def totp(secret: str) -> str:
    key = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
    mac = hmac.new(key, struct.pack(">Q", int(time.time() // 30)), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    return f"{(struct.unpack('>I', mac[offset:offset + 4])[0] & 0x7FFFFFFF) % 1_000_000:06d}"


def claims(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def with_verified_factor(api: Api) -> tuple[User, str, str]:
    """A MyCirclee user with a verified TOTP factor: their aal2 token, and an aal1 token of a later sign-in."""
    user = api.sign_up_confirmed(APP, "mfa")
    enrolled = expect(user.post("/auth/v1/factors", json={"factor_type": "totp", "friendly_name": "e2e", "issuer": "MyCirclee"}), 200)
    assert enrolled["totp"]["qr_code"].startswith("<svg") and enrolled["totp"]["uri"].startswith("otpauth://totp/"), enrolled
    challenge = expect(user.post(f"/auth/v1/factors/{enrolled['id']}/challenge", json={}), 200)
    session = expect(user.post(f"/auth/v1/factors/{enrolled['id']}/verify",
                               json={"challenge_id": challenge["id"], "code": totp(enrolled["totp"]["secret"])}), 200)
    aal2 = session["access_token"]
    assert claims(aal2)["aal"] == "aal2" and [entry["method"] for entry in claims(aal2)["amr"]] == ["totp", "password"]
    assert claims(aal2)["colony_mfa_enrolled"] is True
    later = expect(api.http.post("/auth/v1/token", params={"grant_type": "password"}, headers=api.anon(APP),
                                 json={"email": user.email, "password": user.extra["password"]}), 200)
    aal1 = later["access_token"]
    assert claims(aal1)["aal"] == "aal1" and claims(aal1)["colony_mfa_enrolled"] is True
    return user, aal1, aal2


def as_token(api: Api, token: str) -> dict[str, str]:
    return {"apikey": api.stack.keys[APP], "Authorization": f"Bearer {token}"}


def test_domain_service_requires_aal2_of_users_with_a_verified_factor(api: Api):
    _, aal1, aal2 = with_verified_factor(api)
    refused = api.http.post("/circles/v1/circles", headers=as_token(api, aal1), json={"name": "MFA refused"})
    assert refused.status_code == 403 and refused.json()["code"] == "insufficient_aal", refused.text
    expect(api.http.post("/circles/v1/circles", headers=as_token(api, aal2), json={"name": "MFA accepted"}), 201)
    # Auth's own endpoints still take the aal1 token: it is how the user reaches aal2.
    expect(api.http.get("/auth/v1/user", headers=as_token(api, aal1)), 200)

    # A user without a factor is not affected by the policy.
    plain = api.sign_up_confirmed(APP, "no-mfa")
    assert claims(plain.access_token)["aal"] == "aal1" and claims(plain.access_token)["colony_mfa_enrolled"] is False
    expect(plain.post("/circles/v1/circles", json={"name": "No factor"}), 201)


def test_realtime_refuses_the_aal1_token_of_a_user_with_a_verified_factor(api: Api, stack: Stack):
    _, aal1, aal2 = with_verified_factor(api)
    url = stack.gateway.replace("http://", "ws://") + f"/realtime/v1/websocket?apikey={stack.keys[APP]}&vsn=1.0.0"

    async def join(token: str) -> dict:
        async with connect(url, open_timeout=30) as socket:
            await socket.send(json.dumps({"topic": "realtime:lobby", "event": "phx_join", "ref": "1", "join_ref": "1",
                                          "payload": {"config": {}, "access_token": token}}))
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                message = json.loads(await asyncio.wait_for(socket.recv(), timeout=20))
                if message["event"] == "phx_reply" and message["ref"] == "1":
                    return message["payload"]
            pytest.fail("no reply to the join")

    refused = asyncio.run(join(aal1))
    assert refused["status"] == "error" and "second factor" in json.dumps(refused["response"]), refused
    assert asyncio.run(join(aal2))["status"] == "ok"
