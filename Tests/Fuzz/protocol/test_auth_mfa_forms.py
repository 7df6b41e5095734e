"""Protocol fuzz of auth's MFA endpoints (issue 34.4), through the gateway: `POST /factors`,
`POST /factors/{id}/challenge`, `POST /factors/{id}/verify`, `DELETE /factors/{id}` and the
operators' `GET|DELETE /admin/users/{id}/factors[/{factor_id}]`, with GoTrue's fields set to values
of every wrong shape (and now and then right ones, so the deeper paths run: a real factor, its
challenge, a code of the right form), arbitrary JSON and other encodings, ids genuine, foreign,
random or garbage, and keys and tokens genuine (anon, service role, a user's aal1 and aal2 tokens),
absent or garbage.

Requests are written byte for byte on a socket, each from a loopback address of its own (auth's
per-IP limits). A case fails on a 5xx, no answer within 10 s or a dropped connection; an error from
auth must be {"code","message"}. The protocol conftest checks every service process after each test.

Examples per test: COLONY_PROTOCOL_FUZZ_EXAMPLES (150); derandomized unless COLONY_FUZZ_SEED is set.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import struct
import sys
import time
import uuid
from pathlib import Path
from typing import Optional
from urllib.parse import quote

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_support import EXAMPLES, AuthGateway, RequestTally, fuzz  # noqa: E402

TALLY = RequestTally()
APP = "mycirclee"


def totp(secret: str) -> str:
    key = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
    mac = hmac.new(key, struct.pack(">Q", int(time.time() // 30)), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    return f"{(struct.unpack('>I', mac[offset:offset + 4])[0] & 0x7FFFFFFF) % 1_000_000:06d}"


class Gateway(AuthGateway):
    """Raw requests through the gateway, and a user with a verified and an unverified factor to aim at."""

    def __init__(self) -> None:
        super().__init__(TALLY, seed=344)
        self.user_id = ""
        self.tokens: list[str] = []
        self.factors: list[str] = []
        self.secret = ""

    def prepare(self) -> None:
        """A MyCirclee user: aal1 token, a verified TOTP factor (aal2 token), an unverified one."""
        headers = {"apikey": self.anon[APP], "Authorization": f"Bearer {self.anon[APP]}"}
        with httpx.Client(base_url=self.url, timeout=30.0, transport=httpx.HTTPTransport(local_address="127.34.4.2")) as http:
            email = f"mfa-fuzz-{uuid.uuid4().hex[:10]}@example.com"
            session = http.post("/auth/v1/signup", headers=headers, json={"email": email, "password": "correct-horse-1"}).json()
            aal1 = session["access_token"]
            self.user_id = session["user"]["id"]
            auth = {**headers, "Authorization": f"Bearer {aal1}"}
            verified = http.post("/auth/v1/factors", headers=auth, json={"factor_type": "totp", "friendly_name": "fuzz"}).json()
            self.secret = verified["totp"]["secret"]
            challenge = http.post(f"/auth/v1/factors/{verified['id']}/challenge", headers=auth, json={}).json()
            aal2 = http.post(f"/auth/v1/factors/{verified['id']}/verify", headers=auth,
                             json={"challenge_id": challenge["id"], "code": totp(self.secret)}).json()["access_token"]
            pending = http.post("/auth/v1/factors", headers={**headers, "Authorization": f"Bearer {aal2}"},
                                json={"factor_type": "totp", "friendly_name": "pending"}).json()
            aal1 = http.post("/auth/v1/token", params={"grant_type": "password"}, headers=headers,
                             json={"email": email, "password": "correct-horse-1"}).json()["access_token"]
        self.tokens = [aal1, aal2]
        self.factors = [verified["id"], pending["id"]]


@pytest.fixture(scope="module")
def gateway():
    gateway = Gateway()
    gateway.prepare()
    yield gateway


def protocol_fuzz_summary() -> Optional[str]:
    if not TALLY.total:
        return None
    return (f"auth MFA forms protocol fuzz: {EXAMPLES} examples per test, {TALLY.total} requests, "
            f"{TALLY.server_errors} 5xx ({TALLY.describe()})")


# ------------------------------------------------------------------------------------------ strategies

NASTY = ("", " ", "\u0000", "a\u0000b", "null", "-1", "1e309", "NaN", "\u202e", "é" * 3, "x" * 5000, "%00", "../", "totp", "phone",
         "TOTP", "webauthn", "sms", "whatsapp", "+15551234567", "+1" + "9" * 40, "000000", "123456", "1234567", "12345", "０１２３４５",
         "aal2", "otpauth://totp/x", str(uuid.UUID(int=0)))
texts = st.one_of(st.sampled_from(NASTY), st.text(max_size=40))
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
                    st.floats(allow_nan=False, allow_infinity=False), texts)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3), max_leaves=8)
FIELDS = ("factor_type", "friendly_name", "issuer", "phone", "channel", "challenge_id", "code", "factor_id", "webauthn")


@st.composite
def body(draw, gateway: Gateway, plausible: dict) -> tuple[Optional[bytes], bytes]:
    """A JSON object over GoTrue's fields (plausible values now and then), or bytes of another shape."""
    fields = draw(st.dictionaries(st.one_of(st.sampled_from(FIELDS), texts), json_values, max_size=5))
    if draw(st.booleans()):
        for key, values in plausible.items():
            fields[key] = draw(st.sampled_from(values))
    how = draw(st.sampled_from(("json", "json", "json", "raw", "truncated", "deep", "empty", "utf8")))
    if how == "json":
        data: Optional[bytes] = json.dumps(fields).encode()
    elif how == "raw":
        data = draw(st.binary(max_size=200))
    elif how == "truncated":
        text = json.dumps(fields).encode()
        data = text[: draw(st.integers(min_value=0, max_value=max(0, len(text) - 1)))]
    elif how == "deep":
        depth = draw(st.sampled_from((64, 1000, 50_000)))
        data = b'{"code":' + b"[" * depth + b"]" * depth + b"}"
    elif how == "utf8":
        data = b'{"friendly_name": "\xff\xfe", "code": "\xc3\x28", "challenge_id": "\xed\xa0\x80"}'
    else:
        data = None if draw(st.booleans()) else b""
    content_type = draw(st.sampled_from((b"application/json", b"application/json;charset=UTF-8", b"text/plain",
                                         b"application/x-www-form-urlencoded", b"")))
    return data, content_type


@st.composite
def credentials(draw, gateway: Gateway) -> list[tuple[str, bytes]]:
    """apikey and Authorization: the app's, another app's, the service role's, a user's tokens, garbage."""
    keys = sorted(gateway.anon.values()) + sorted(gateway.service.values())
    headers: list[tuple[str, bytes]] = []
    if draw(st.integers(min_value=0, max_value=3)) > 0:
        # Mostly genuine (the app's key and one of the user's tokens), so the cases reach the rules.
        return [("apikey", gateway.anon[APP].encode()), ("Authorization", b"Bearer " + draw(st.sampled_from(gateway.tokens)).encode())]
    apikey = draw(st.one_of(st.just(gateway.anon[APP]), st.sampled_from(keys), st.none(), st.sampled_from(("", "a.b.c", "eyJ" + "A" * 300))))
    if apikey is not None:
        headers.append(("apikey", apikey.encode()))
    bearer = draw(st.one_of(st.sampled_from(gateway.tokens), st.sampled_from(gateway.tokens), st.sampled_from(keys), st.none(),
                            st.sampled_from(("", "x.y.z", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "x" * 9000))))
    if bearer is not None:
        headers.append(("Authorization", b"Bearer " + bearer.encode()))
    return headers


def ids(gateway: Gateway):
    return st.one_of(st.sampled_from(gateway.factors), st.sampled_from(gateway.factors), st.uuids().map(str),
                     st.sampled_from(("x", "%00", "%2e%2e", "00000000-0000-0000-0000-00000000000g", "ZZ" * 30, str(uuid.UUID(int=0)).upper())),
                     st.text(max_size=20).map(lambda text: quote(text, safe="")).filter(bool))


# ------------------------------------------------------------------------------------------ the tests


@fuzz
@given(data=st.data())
def test_enroll(gateway: Gateway, data):
    """POST /factors: factor_type, friendly_name, issuer, phone of every shape."""
    encoded, content_type = data.draw(body(gateway, {"factor_type": ["totp", "phone"], "friendly_name": ["", "mine", "fuzz", "x" * 300],
                                                     "issuer": ["MyCirclee", "", "a:b", "x" * 300]}), label="body")
    headers = data.draw(credentials(gateway), label="credentials") + [("Content-Type", content_type)]
    gateway.send("enroll", "POST", b"/auth/v1/factors", headers, encoded)


@fuzz
@given(data=st.data())
def test_challenge_and_verify(gateway: Gateway, data):
    """POST /factors/{id}/challenge and /verify: ids, channels, challenge ids and codes of every shape."""
    factor = data.draw(ids(gateway), label="factor")
    if data.draw(st.booleans(), label="challenge"):
        encoded, content_type = data.draw(body(gateway, {"channel": ["sms", "whatsapp", None, ""]}), label="body")
        headers = data.draw(credentials(gateway), label="credentials") + [("Content-Type", content_type)]
        gateway.send("challenge", "POST", f"/auth/v1/factors/{factor}/challenge".encode(), headers, encoded)
        return
    challenge_ids = [str(uuid.uuid4()), "not-a-uuid", ""]
    source = gateway.source()
    if data.draw(st.booleans(), label="real challenge"):
        # A genuine challenge of the verified factor, from this case's address, so the code checks run.
        with httpx.Client(base_url=gateway.url, timeout=30.0, transport=httpx.HTTPTransport(local_address=source)) as http:
            response = http.post(f"/auth/v1/factors/{gateway.factors[0]}/challenge", json={},
                                 headers={"apikey": gateway.anon[APP], "Authorization": f"Bearer {gateway.tokens[1]}"})
            if response.status_code == 200:
                challenge_ids.append(response.json()["id"])
    encoded, content_type = data.draw(body(gateway, {"challenge_id": challenge_ids, "code": ["000000", totp(gateway.secret), "12345", "", 123456]}),
                                      label="body")
    headers = data.draw(credentials(gateway), label="credentials") + [("Content-Type", content_type)]
    gateway.send("verify", "POST", f"/auth/v1/factors/{factor}/verify".encode(), headers, encoded, source=source)


@fuzz
@given(data=st.data())
def test_unenroll_and_admin(gateway: Gateway, data):
    """DELETE /factors/{id}; GET /admin/users/{id}/factors; DELETE /admin/users/{id}/factors/{factor_id}."""
    route = data.draw(st.sampled_from(("unenroll", "admin-list", "admin-delete")), label="route")
    # Never the prepared factors themselves: the other tests aim at them (a random or garbage id instead).
    factor = data.draw(st.one_of(st.uuids().map(str), st.sampled_from(("x", "%00", "..", str(uuid.UUID(int=0))))), label="factor")
    user = data.draw(st.one_of(st.just(gateway.user_id), st.uuids().map(str), st.sampled_from(("x", "%2e%2e", ""))), label="user")
    headers = data.draw(credentials(gateway), label="credentials")
    encoded: Optional[bytes] = None
    if data.draw(st.booleans(), label="with body"):
        encoded, content_type = data.draw(body(gateway, {}), label="body")
        headers.append(("Content-Type", content_type))
    if route == "unenroll":
        gateway.send(route, "DELETE", f"/auth/v1/factors/{factor}".encode(), headers, encoded)
    elif route == "admin-list":
        gateway.send(route, "GET", f"/auth/v1/admin/users/{user}/factors".encode(), headers, None)
    else:
        gateway.send(route, "DELETE", f"/auth/v1/admin/users/{user}/factors/{factor}".encode(), headers, encoded)
