"""Protocol fuzz of auth's form and query inputs (issue 33.2), through the gateway.

What schemathesis does not reach: `POST /token` with every `grant_type` (and none, and repeated),
`GET /verify`'s query (`token`, `type`, `redirect_to`) as a mailed link carries it, `redirect_to` on
`/otp`, `/recover`, `/signup` and `/user`, those bodies as arbitrary JSON, form encodings, invalid
UTF-8, truncated and deeply nested documents and numbers past any integer, other endpoints' query
parameters (`scope`, `page`, `per_page`), and `apikey`, `Authorization`, `Content-Type`,
`Accept-Language` headers of every wrong shape. Requests are written byte for byte on a socket (an
HTTP library would normalise what is under test), each from a loopback address of its own
(127.x.y.z: the gateway hands auth the connection's address), so auth's per-IP limits do not turn
every case after the first thirty into the same 429.

A case fails on a 5xx, no answer within 10 s, or a dropped connection (the protocol conftest also
checks every service process after each test).

Examples per test: COLONY_PROTOCOL_FUZZ_EXAMPLES (150); derandomized unless COLONY_FUZZ_SEED is set.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional
from urllib.parse import quote, quote_from_bytes, urlencode

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_support import EXAMPLES, AuthGateway, RequestTally, fuzz  # noqa: E402

TALLY = RequestTally()


# ------------------------------------------------------------------------------------------ the gateway


@pytest.fixture(scope="module")
def gateway():
    yield AuthGateway(TALLY, seed=33)


def protocol_fuzz_summary() -> Optional[str]:
    """The session's line (the protocol conftest prints it): requests per endpoint and their statuses."""
    if not TALLY.total:
        return None
    return (f"auth forms protocol fuzz: {EXAMPLES} examples per test, {TALLY.total} requests, "
            f"{TALLY.server_errors} 5xx ({TALLY.describe()})")


# ------------------------------------------------------------------------------------------ strategies

APPS = ("mycirclee", "unify", "habithive", "socialspot", "ibelieveinyou")
FIELDS = ("email", "phone", "password", "data", "create_user", "code_challenge", "code_challenge_method", "token", "token_hash",
          "type", "refresh_token", "provider", "id_token", "nonce", "auth_code", "code_verifier", "redirect_to", "options",
          "gotrue_meta_security", "captcha_token", "channel", "user_metadata", "app_metadata", "email_confirm", "ban_duration")
NASTY_TEXT = ("", " ", "\u0000", "a\u0000b", "null", "[]", "{}", "-1", "1e309", "NaN", "\ud7ff", "\u202e", "é" * 3, "x" * 5000,
              "../../etc/passwd", "%00", "%2e%2e%2f", "javascript:alert(1)", "mycirclee://auth-callback", "https://evil.example/",
              "mycirclee://auth-callback@evil.example", "user@example.com", "USER@EXAMPLE.COM", "a@b", "@", "+15551234567",
              "+1" + "9" * 40, "s256", "plain", "S256", "signup", "recovery", "magiclink", "email_change", "sms", "invite", "email",
              "phone_change", "apple", "google", "password", "refresh_token", "pkce", "id_token", "global", "local", "others")

texts = st.one_of(st.sampled_from(NASTY_TEXT), st.text(max_size=60), st.emails().map(str))
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2 ** 80), max_value=2 ** 80),
                    st.floats(allow_nan=False, allow_infinity=False), texts)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4), max_leaves=12)
bodies = st.dictionaries(st.one_of(st.sampled_from(FIELDS), texts), json_values, max_size=6)


@st.composite
def encoded_body(draw, body: dict) -> tuple[bytes, str]:
    """The body in one of the encodings a client could send, with a Content-Type that may or may not say so."""
    how = draw(st.sampled_from(("json", "json", "form", "raw", "truncated", "deep", "number", "utf8", "empty")))
    if how == "json":
        data = json.dumps(body).encode()
    elif how == "form":
        data = urlencode({str(k): json.dumps(v) if isinstance(v, (dict, list)) else str(v) for k, v in body.items()}).encode()
    elif how == "raw":
        data = draw(st.binary(max_size=300))
    elif how == "truncated":
        text = json.dumps(body).encode()
        data = text[: draw(st.integers(min_value=0, max_value=max(0, len(text) - 1)))]
    elif how == "deep":
        depth = draw(st.sampled_from((64, 1000, 100_000)))
        data = b'{"data":' + b"[" * depth + b"]" * depth + b"}"
    elif how == "number":
        data = b'{"create_user": 1e999, "data": {"n": ' + draw(st.sampled_from((b"1e400", b"-0", b"123456789012345678901234567890", b"1" * 5000))) + b"}}"
    elif how == "utf8":
        data = b'{"email": "\xff\xfe@example.com", "password": "\xc3\x28", "data": {"\xed\xa0\x80": 1}}'
    else:
        data = b""
    content_type = draw(st.sampled_from((
        b"application/json", b"application/json;charset=UTF-8", b"application/x-www-form-urlencoded", b"text/plain",
        b"multipart/form-data; boundary=x", b"application/json; charset=latin-1", b"", b"\x00", b"application/" + b"j" * 3000)))
    return data, content_type.decode("latin-1")


def query_value(value: str) -> str:
    return quote(value, safe="")


raw_query_values = st.one_of(texts.map(query_value), st.binary(max_size=40).map(lambda b: quote_from_bytes(b, safe="")),
                             st.sampled_from(("%", "%zz", "%00", "%ff%fe", "a&b=c", "a%26b", "+", "%2B", "=", "")))


@st.composite
def query(draw, names: tuple[str, ...]) -> str:
    """A query string over `names` (some missing, some repeated, others added), values raw."""
    pairs = []
    for name in names:
        for _ in range(draw(st.integers(min_value=0, max_value=2))):
            pairs.append(f"{name}={draw(raw_query_values)}")
    if draw(st.booleans()):
        pairs.append(draw(st.sampled_from(("apikey", "x", "redirect_to", "grant_type", "", "=")) ) + "=" + draw(raw_query_values))
    return "&".join(pairs)


@st.composite
def auth_headers(draw, gateway_keys: tuple[str, ...]) -> list[tuple[str, bytes]]:
    """apikey, Authorization, Accept-Language: genuine, absent or garbage."""
    headers: list[tuple[str, bytes]] = []
    key = draw(st.one_of(st.sampled_from(gateway_keys), st.none(), st.sampled_from(("", "null", "Bearer", "a.b.c", "eyJ" + "A" * 500)),
                         st.binary(min_size=1, max_size=80).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b"").decode("latin-1"))))
    if key is not None:
        headers.append(("apikey", key.encode("latin-1", "replace")))
    authorization = draw(st.one_of(st.none(), st.sampled_from(("Bearer", "Bearer ", "Basic Zm9vOmJhcg==", "bearer x.y.z", "Bearer a.b",
                                                               "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "Bearer " + "x" * 9000)),
                                   st.sampled_from(gateway_keys).map(lambda k: "Bearer " + k)))
    if authorization is not None:
        headers.append(("Authorization", authorization.encode()))
    language = draw(st.one_of(st.none(), st.sampled_from(("de", "de-AT,de;q=0.9", "*", ";q=", "q=1e999", "x" * 500, "en;q=abc,,,"))))
    if language is not None:
        headers.append(("Accept-Language", language.encode()))
    return headers


def keys_of(gateway: AuthGateway) -> tuple[str, ...]:
    return tuple(sorted([*gateway.anon.values(), *gateway.service.values()]))


# ------------------------------------------------------------------------------------------ the tests


@fuzz
@given(data=st.data())
def test_token_grants(gateway: AuthGateway, data):
    """POST /token?grant_type=…: every grant and none, with any body in any encoding."""
    grant = data.draw(st.one_of(st.sampled_from(("password", "refresh_token", "id_token", "pkce", "", "PASSWORD", "password%00",
                                                  "client_credentials", "authorization_code")), raw_query_values), label="grant")
    extra = data.draw(query(("redirect_to",)), label="query")
    target = f"/auth/v1/token?grant_type={grant}" + (f"&{extra}" if extra else "")
    body, content_type = data.draw(encoded_body(data.draw(bodies, label="body")), label="encoded")
    headers = data.draw(auth_headers(keys_of(gateway)), label="headers") + [("Content-Type", content_type.encode("latin-1"))]
    gateway.send("token", "POST", target.encode(), headers, body)


@fuzz
@given(data=st.data())
def test_verify_link_query(gateway: AuthGateway, data):
    """GET /verify?token=&type=&redirect_to=: a mailed link, tampered with (no API key needed)."""
    target = "/auth/v1/verify?" + data.draw(query(("token", "type", "redirect_to")), label="query")
    headers = data.draw(auth_headers(keys_of(gateway)), label="headers")
    gateway.send("verify-link", "GET", target.encode(), headers, None)


@fuzz
@given(data=st.data())
def test_address_forms(gateway: AuthGateway, data):
    """POST /otp, /recover, /signup, /verify (and a /magiclink Colony does not have) with any body and redirect_to."""
    path = data.draw(st.sampled_from(("otp", "recover", "signup", "verify", "magiclink", "resend", "factors", "authorize")), label="path")
    extra = data.draw(query(("redirect_to",)), label="query")
    body = data.draw(bodies, label="body")
    if data.draw(st.booleans(), label="plausible"):
        # Close to what a client sends, so the cases get past decoding into the rules.
        body.setdefault("email", data.draw(st.one_of(st.emails().map(str), st.sampled_from(NASTY_TEXT)), label="email"))
        body.setdefault("password", data.draw(st.sampled_from(("correct-horse-1", "", "x" * 100, "é" * 80)), label="password"))
    encoded, content_type = data.draw(encoded_body(body), label="encoded")
    headers = data.draw(auth_headers(keys_of(gateway)), label="headers") + [("Content-Type", content_type.encode("latin-1"))]
    gateway.send(path, "POST", f"/auth/v1/{path}".encode() + (b"?" + extra.encode() if extra else b""), headers, encoded)


@fuzz
@given(data=st.data())
def test_session_and_admin_queries(gateway: AuthGateway, data):
    """/user, /logout?scope=, /reauthenticate, /settings, /admin/users?page=&per_page=, /admin/users/{id}: garbage credentials, queries and bodies."""
    method, path, names = data.draw(st.sampled_from((
        ("GET", "user", ()), ("PUT", "user", ("redirect_to",)), ("DELETE", "user", ()), ("POST", "logout", ("scope",)),
        ("GET", "reauthenticate", ()), ("GET", "settings", ()), ("GET", ".well-known/jwks.json", ()),
        ("GET", "admin/users", ("page", "per_page")), ("POST", "admin/users", ()),
        ("GET", "admin/users/{id}", ()), ("PUT", "admin/users/{id}", ()), ("DELETE", "admin/users/{id}", ()),
    )), label="route")
    if "{id}" in path:
        path = path.replace("{id}", data.draw(st.one_of(st.uuids().map(str), raw_query_values), label="id") or "x")
    extra = data.draw(query(names), label="query")
    body: Optional[bytes] = None
    headers = data.draw(auth_headers(keys_of(gateway)), label="headers")
    if method in ("PUT", "POST", "DELETE") and data.draw(st.booleans(), label="with body"):
        body, content_type = data.draw(encoded_body(data.draw(bodies, label="body")), label="encoded")
        headers.append(("Content-Type", content_type.encode("latin-1")))
    gateway.send(path.split("/")[0], method, f"/auth/v1/{path}".encode() + (b"?" + extra.encode() if extra else b""), headers, body)
