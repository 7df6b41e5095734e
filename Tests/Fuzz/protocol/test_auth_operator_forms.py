"""Protocol fuzz of issue 34's operator and resend calls, through the gateway: `POST /resend`,
`POST /invite` and `POST /admin/generate_link`, with GoTrue's fields set to values of every wrong
shape (and now and then right ones, so the handlers' deeper paths run: a queued resend, a created
and invited account, a generated link of each type), arbitrary JSON and other encodings,
`redirect_to` in the query, and keys genuine (anon and service role), absent or garbage.

Requests are written byte for byte on a socket, each from a loopback address of its own (auth's
per-IP limits). A case fails on a 5xx, no answer within 10 s or a dropped connection; an error from
auth must be {"code","message"}. The protocol conftest checks every service process after each test.

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


@pytest.fixture(scope="module")
def gateway():
    yield AuthGateway(TALLY, seed=34)


def protocol_fuzz_summary() -> Optional[str]:
    if not TALLY.total:
        return None
    return (f"auth operator forms protocol fuzz: {EXAMPLES} examples per test, {TALLY.total} requests, "
            f"{TALLY.server_errors} 5xx ({TALLY.describe()})")


# ------------------------------------------------------------------------------------------ strategies

APPS = ("mycirclee", "unify", "habithive", "socialspot", "ibelieveinyou")
TYPES = ("signup", "email_change", "sms", "phone_change", "invite", "magiclink", "recovery", "email_change_current",
         "email_change_new", "email", "SIGNUP", "signup\u0000", "", "reauthentication")
NASTY_TEXT = ("", " ", "\u0000", "a\u0000b", "null", "[]", "{}", "-1", "1e309", "\ud7ff", "\u202e", "é" * 3, "x" * 5000,
              "%00", "javascript:alert(1)", "mycirclee://auth-callback", "https://evil.example/", "mycirclee://auth-callback@evil.example",
              "a@b", "@", "USER@EXAMPLE.COM", "+15551234567", "+1" + "9" * 40, "15551234567", "S256", "plain", "s256")


def fresh_email() -> st.SearchStrategy[str]:
    return st.uuids().map(lambda u: f"fuzz-{u.hex[:12]}@example.com")


def fresh_phone() -> st.SearchStrategy[str]:
    return st.integers(min_value=1_000_000, max_value=9_999_999).map(lambda n: f"+1555{n}")


texts = st.one_of(st.sampled_from(NASTY_TEXT), st.text(max_size=40), st.emails().map(str), fresh_email())
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2 ** 70), max_value=2 ** 70), st.floats(allow_nan=False, allow_infinity=False), texts)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4), max_leaves=10)
metadata = st.one_of(st.none(), json_values, st.dictionaries(st.text(max_size=12), json_values, max_size=4),
                     st.just({"k" * 300: "v" * 20_000}))


def field(values: st.SearchStrategy) -> st.SearchStrategy:
    """Absent (None → left out), or a value: mostly of the right kind, sometimes of any JSON kind."""
    return st.one_of(st.none(), values, values, json_values)


@st.composite
def resend_body(draw) -> dict:
    body = {
        "type": draw(field(st.sampled_from(TYPES))),
        "email": draw(field(st.one_of(fresh_email(), texts))),
        "phone": draw(field(st.one_of(fresh_phone(), texts))),
        "code_challenge": draw(field(st.one_of(st.text(min_size=43, max_size=43, alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_"), texts))),
        "code_challenge_method": draw(field(st.sampled_from(("S256", "plain", "s256", "", "md5")))),
        "gotrue_meta_security": draw(field(st.just({"captcha_token": None}))),
    }
    return {k: v for k, v in body.items() if v is not None}


@st.composite
def invite_body(draw) -> dict:
    body = {"email": draw(field(st.one_of(fresh_email(), texts))), "data": draw(st.one_of(st.none(), metadata))}
    return {k: v for k, v in body.items() if v is not None or draw(st.booleans())}


@st.composite
def generate_link_body(draw) -> dict:
    body = {
        "type": draw(field(st.sampled_from(TYPES))),
        "email": draw(field(st.one_of(fresh_email(), texts))),
        "new_email": draw(field(st.one_of(fresh_email(), texts))),
        "password": draw(field(st.one_of(st.just("Fuzz-pass-1234"), st.just("short"), st.just("p" * 100_000), texts))),
        "data": draw(st.one_of(st.none(), metadata)),
        "redirect_to": draw(field(texts)),
    }
    return {k: v for k, v in body.items() if v is not None or draw(st.booleans())}


@st.composite
def encoded(draw, body: dict) -> tuple[bytes, bytes]:
    how = draw(st.sampled_from(("json", "json", "json", "form", "raw", "truncated", "deep", "utf8", "empty")))
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
    elif how == "utf8":
        data = b'{"email": "\xff\xfe@example.com", "type": "\xc3\x28", "data": {"\xed\xa0\x80": 1}}'
    else:
        data = b""
    content_type = draw(st.sampled_from((b"application/json", b"application/json;charset=UTF-8", b"application/x-www-form-urlencoded",
                                         b"text/plain", b"", b"application/" + b"j" * 3000)))
    return data, content_type


raw_query_values = st.one_of(texts.map(lambda value: quote(value, safe="")), st.binary(max_size=40).map(lambda b: quote_from_bytes(b, safe="")),
                             st.sampled_from(("%", "%zz", "%00", "%ff%fe", "a&b=c", "+", "=", "")))


@st.composite
def redirect_query(draw) -> str:
    return "".join(f"{'&' if i else '?'}redirect_to={draw(raw_query_values)}" for i in range(draw(st.integers(min_value=0, max_value=2))))


@st.composite
def keys(draw, gateway: AuthGateway, service_first: bool) -> list[tuple[str, bytes]]:
    """apikey and Authorization: the app's service-role key (mostly, for the admin calls), its anon
    key, nothing, or garbage."""
    app = draw(st.sampled_from(APPS))
    genuine = [gateway.service[app], gateway.anon[app]] if service_first else [gateway.anon[app], gateway.service[app]]
    key = draw(st.one_of(st.sampled_from(genuine[:1] * 4 + genuine[1:]), st.none(), st.sampled_from(("", "null", "a.b.c", "eyJ" + "A" * 400)),
                         st.binary(min_size=1, max_size=60).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b"").decode("latin-1"))))
    headers: list[tuple[str, bytes]] = []
    if key is not None:
        headers.append(("apikey", key.encode("latin-1", "replace")))
        if draw(st.booleans()):
            headers.append(("Authorization", b"Bearer " + key.encode("latin-1", "replace")))
    if draw(st.booleans()):
        headers.append(("Accept-Language", draw(st.sampled_from((b"de", b"de-AT,de;q=0.9", b"*", b"q=1e999", b"x" * 500)))))
    return headers


@st.composite
def wellformed(draw, gateway: AuthGateway, call: str) -> tuple[bytes, list[tuple[str, bytes]]]:
    """A request as a client sends it (JSON, the right key, a type the app serves, fresh recipients,
    a password that passes), so the deeper paths run too: queued resends, created and invited
    accounts, a link of each type. The fuzz is in which of them, in what order, and in `data`."""
    app = draw(st.sampled_from(APPS))
    # A small pool too: accounts one case creates (invite, signup links) are the next ones' known
    # recipients (resends that send, recovery and email-change links that find their account).
    email = draw(st.one_of(fresh_email(), st.integers(min_value=0, max_value=4).map(lambda n: f"fuzz-pool-{n}@example.com")))
    if call == "resend":
        if app == "habithive":
            body = {"type": draw(st.sampled_from(("sms", "phone_change"))), "phone": draw(fresh_phone())}
        else:
            body = {"type": draw(st.sampled_from(("signup", "email_change"))), "email": email}
        key = gateway.anon[app]
    elif call == "invite":
        body = {"email": email, "data": draw(st.one_of(st.none(), st.dictionaries(st.text(max_size=12), json_values, max_size=3)))}
        key = gateway.service[app]
    else:
        kind = draw(st.sampled_from(("signup", "invite", "magiclink", "recovery", "email_change_current", "email_change_new")))
        body = {"type": kind, "email": email, "password": "Fuzz-pass-1234", "new_email": draw(fresh_email()),
                "data": draw(st.one_of(st.none(), st.dictionaries(st.text(max_size=12), json_values, max_size=3))),
                "redirect_to": draw(st.sampled_from((f"{app}://auth-callback", "https://evil.example/", "")))}
        key = gateway.service[app]
    headers = [("apikey", key.encode()), ("Authorization", b"Bearer " + key.encode()), ("Content-Type", b"application/json")]
    return json.dumps(body).encode(), headers


# ------------------------------------------------------------------------------------------ the tests


@fuzz
@given(data=st.data())
def test_resend(gateway: AuthGateway, data):
    """POST /resend with every type and recipient shape (anon keys)."""
    if data.draw(st.integers(min_value=0, max_value=3), label="wellformed") == 0:
        body, headers = data.draw(wellformed(gateway, "resend"), label="request")
    else:
        body, content_type = data.draw(encoded(data.draw(st.one_of(resend_body(), st.dictionaries(texts, json_values, max_size=5)), label="body")), label="encoded")
        headers = data.draw(keys(gateway, service_first=False), label="keys") + [("Content-Type", content_type)]
    gateway.send("resend", "POST", f"/auth/v1/resend{data.draw(redirect_query(), label='query')}".encode(), headers, body)


@fuzz
@given(data=st.data())
def test_invite(gateway: AuthGateway, data):
    """POST /invite (service-role keys mostly; anon and garbage keys are refused)."""
    if data.draw(st.integers(min_value=0, max_value=3), label="wellformed") == 0:
        body, headers = data.draw(wellformed(gateway, "invite"), label="request")
    else:
        body, content_type = data.draw(encoded(data.draw(st.one_of(invite_body(), st.dictionaries(texts, json_values, max_size=5)), label="body")), label="encoded")
        headers = data.draw(keys(gateway, service_first=True), label="keys") + [("Content-Type", content_type)]
    gateway.send("invite", "POST", f"/auth/v1/invite{data.draw(redirect_query(), label='query')}".encode(), headers, body)


@fuzz
@given(data=st.data())
def test_generate_link(gateway: AuthGateway, data):
    """POST /admin/generate_link with every type, present or absent fields, any values."""
    if data.draw(st.integers(min_value=0, max_value=3), label="wellformed") == 0:
        body, headers = data.draw(wellformed(gateway, "generate_link"), label="request")
    else:
        body, content_type = data.draw(encoded(data.draw(st.one_of(generate_link_body(), st.dictionaries(texts, json_values, max_size=5)), label="body")), label="encoded")
        headers = data.draw(keys(gateway, service_first=True), label="keys") + [("Content-Type", content_type)]
    gateway.send("generate_link", "POST", f"/auth/v1/admin/generate_link{data.draw(redirect_query(), label='query')}".encode(), headers, body)
