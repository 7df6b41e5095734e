"""Protocol fuzz of issue 34's OAuth web flow and identity routes, through the gateway:
`GET /auth/v1/authorize` with every query parameter of a wrong shape (and now and then right ones,
so an authorization is really started with the stand-in provider), `GET|POST /auth/v1/callback`
with states, codes and errors of every shape (forms of any encoding for Apple's form_post), and
`GET /auth/v1/user/identities/authorize`, `DELETE /auth/v1/user/identities/{id}` with keys and
tokens genuine, absent or garbage.

Requests are written byte for byte on a socket, each from a loopback address of its own (auth's
per-IP limits). A case fails on a 5xx, no answer within 10 s or a dropped connection; an error from
auth must be {"code","message"}. The protocol conftest checks every service process after each test.

Examples per test: COLONY_PROTOCOL_FUZZ_EXAMPLES (150); derandomized unless COLONY_FUZZ_SEED is set.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional
from urllib.parse import quote, quote_from_bytes, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_support import EXAMPLES, AuthGateway, RequestTally, fuzz, raw_request  # noqa: E402

TALLY = RequestTally()
APPS = ("mycirclee", "unify", "habithive", "socialspot", "ibelieveinyou")
PROVIDERS = ("google", "apple", "github", "acme", "GOOGLE", "myspace", "", "google\u0000", "custom:acme", "g" * 300)
NASTY = ("", " ", "\u0000", "null", "%00", "x" * 3000, "socialspot://auth-callback", "https://evil.example/", "socialspot://auth-callback@evil.example",
         "javascript:alert(1)", "S256", "s256", "plain", "md5", "a.b.c", "eyJhbGciOiJub25lIn0.e30.", "\u202e", "é" * 5)


class Gateway(AuthGateway):
    def state(self, provider: str) -> Optional[str]:
        """A genuine state: a well-formed authorization of SocialSpot's provider, read from the redirect."""
        target = f"/auth/v1/authorize?provider={provider}&apikey={self.anon['socialspot']}".encode()
        response = raw_request(self.host, self.port, "GET", target, [], None, TALLY, "authorize (for a state)", source=self.source())
        assert response.status < 500, f"{response.status} {response.body[:300]!r}"
        location = response.headers.get("location", "")
        for part in urlsplit(location).query.split("&"):
            if part.startswith("state="):
                return part[len("state="):]
        return None


@pytest.fixture(scope="module")
def gateway():
    yield Gateway(TALLY, seed=3434)


def protocol_fuzz_summary() -> Optional[str]:
    if not TALLY.total:
        return None
    return (f"auth oauth protocol fuzz: {EXAMPLES} examples per test, {TALLY.total} requests, "
            f"{TALLY.server_errors} 5xx ({TALLY.describe()})")


texts = st.one_of(st.sampled_from(NASTY), st.text(max_size=30))
raw_values = st.one_of(texts.map(lambda value: quote(value, safe="")), st.binary(max_size=40).map(lambda b: quote_from_bytes(b, safe="")),
                       st.sampled_from(("%", "%zz", "%00", "%ff%fe", "a&b=c", "+", "=", "")))
challenges = st.one_of(st.text(min_size=43, max_size=43, alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_"), raw_values)


@st.composite
def query(draw, names: dict) -> str:
    """Some of `names` (name → values), in any order, maybe twice, plus a stray parameter."""
    items = []
    for name, values in names.items():
        for _ in range(draw(st.sampled_from((0, 1, 1, 1, 2)))):
            items.append(f"{name}={draw(values)}")
    if draw(st.booleans()):
        items.append(f"{draw(st.sampled_from(('state', 'redirect_uri', 'client_id', 'nonce', 'access_type', 'x' * 200)))}={draw(raw_values)}")
    draw(st.randoms()).shuffle(items)
    return "?" + "&".join(items) if items else ""


@st.composite
def key(draw, gateway: Gateway) -> str:
    app = draw(st.sampled_from(APPS))
    return draw(st.one_of(st.just(gateway.anon[app]), st.just(gateway.anon[app]), st.sampled_from(("", "null", "a.b.c", "eyJ" + "A" * 300)), raw_values))


@fuzz
@given(data=st.data())
def test_authorize(gateway, data):
    if data.draw(st.integers(min_value=0, max_value=2)) == 0:
        # Well-formed, so authorizations really start (a state row, the provider's discovery).
        provider = data.draw(st.sampled_from(("google", "apple", "github", "acme")))
        target = f"/auth/v1/authorize?provider={provider}&apikey={gateway.anon['socialspot']}"
        if data.draw(st.booleans()):
            target += "&code_challenge=" + data.draw(st.text(min_size=43, max_size=43, alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_")) + "&code_challenge_method=s256"
        target += "&redirect_to=" + data.draw(st.one_of(st.just("socialspot%3A%2F%2Fauth-callback"), raw_values))
        assert gateway.send("authorize well-formed", "GET", target.encode("latin-1", "replace"), [], None) in (302, 429)
        return
    target = "/auth/v1/authorize" + data.draw(query({
        "provider": st.sampled_from(PROVIDERS).map(lambda p: quote(p, safe="")),
        "apikey": key(gateway),
        "redirect_to": st.one_of(st.sampled_from(("socialspot%3A%2F%2Fauth-callback", "https%3A%2F%2Fevil.example%2F")), raw_values),
        "scopes": st.one_of(st.sampled_from(("openid%20email", "user%3Aemail", "repo")), raw_values),
        "code_challenge": challenges,
        "code_challenge_method": st.one_of(st.sampled_from(("s256", "S256", "plain", "md5")), raw_values),
    }))
    gateway.send("authorize", "GET", target.encode("latin-1", "replace"), [], None)


@fuzz
@given(data=st.data())
def test_callback(gateway, data):
    genuine = gateway.state(data.draw(st.sampled_from(("google", "apple", "github", "acme")))) if data.draw(st.integers(min_value=0, max_value=2)) == 0 else None
    states = st.just(genuine) if genuine else st.one_of(st.sampled_from(("eyJhbGciOiJFUzI1NiJ9.e30.AAAA", "a.b.c")), raw_values)
    names = {"state": states, "code": raw_values,
             "error": st.one_of(st.just("access_denied"), raw_values), "error_description": raw_values, "user": raw_values}
    if data.draw(st.booleans()):
        gateway.send("callback GET", "GET", ("/auth/v1/callback" + data.draw(query(names))).encode("latin-1", "replace"), [], None)
    else:
        form = data.draw(query(names)).lstrip("?").encode("latin-1", "replace")
        body = data.draw(st.one_of(st.just(form), st.binary(max_size=300), st.just(b"user=" + b"%7B" * 20_000)))
        content_type = data.draw(st.sampled_from((b"application/x-www-form-urlencoded", b"application/json", b"", b"multipart/form-data; boundary=x")))
        headers = [b"Content-Type: " + content_type] if content_type else []
        gateway.send("callback POST", "POST", b"/auth/v1/callback" + data.draw(query(names)).encode("latin-1", "replace"), headers, body)


@fuzz
@given(data=st.data())
def test_identity_routes(gateway, data):
    apikey = data.draw(key(gateway))
    headers = [b"apikey: " + apikey.encode("latin-1", "replace")] if data.draw(st.booleans()) else []
    if data.draw(st.booleans()):
        headers.append(b"Authorization: Bearer " + data.draw(st.sampled_from((apikey, "", "a.b.c", "eyJ" + "A" * 300))).encode("latin-1", "replace"))
    if data.draw(st.booleans()):
        target = "/auth/v1/user/identities/authorize" + data.draw(query({"provider": st.sampled_from(PROVIDERS).map(lambda p: quote(p, safe="")),
                                                                          "skip_http_redirect": st.sampled_from(("true", "false", "")), "apikey": key(gateway)}))
        gateway.send("link", "GET", target.encode("latin-1", "replace"), headers, None)
    else:
        identity = data.draw(st.one_of(st.uuids().map(str), raw_values))
        gateway.send("unlink", "DELETE", f"/auth/v1/user/identities/{identity}".encode("latin-1", "replace"), headers, None)
