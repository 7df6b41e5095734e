"""Protocol fuzz of storage (issue 33.2): object paths and signed-URL parameters, through the gateway.

Every route that serves or signs files (`/storage/v1/object/{public,sign,authenticated}/{bucket}/…`
of chat, circles, nearby and projects) gets object paths no client should send (`..`, `%2e`, NUL,
encoded slashes and backslashes, overlong segments and paths, unicode, other buckets' names) and
signed-URL query parameters (`token`, and the `expires`/`signature`/`v` of other stores) in every
wrong shape and type, and `POST …/sign/…` bodies of every type. Requests are written byte for byte
on a socket (an HTTP library would normalise the very paths under test).

A case fails on a 5xx, no answer within 10 s, or a dropped connection (a dead service shows as
one of these; the protocol conftest also checks every process after each test), and whenever a
200 serves bytes that are not the object its path names in its own bucket (known objects carry
their bucket's name inside, so a file from another bucket or outside the storage is told apart).

Examples per test: COLONY_PROTOCOL_FUZZ_EXAMPLES (150); derandomized unless COLONY_FUZZ_SEED is set.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Optional
from urllib.parse import quote, unquote, unquote_to_bytes, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "EndToEnd"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e_support import ROOT, Api, Stack, User, expect, password, read_anon_keys, unique_email  # noqa: E402
from fuzz_support import EXAMPLES, Answer, RequestTally, fuzz, raw_request  # noqa: E402

# Every bucket the gateway routes, with the service (app) that owns it and whether it is public.
BUCKETS = {
    "profile-pictures": ("unify", True), "group-pictures": ("unify", True), "voice-messages": ("unify", False),
    "post-photos": ("mycirclee", False), "profile-photos": ("socialspot", True),
    "builder-avatars": ("ibelieveinyou", True), "project-covers": ("ibelieveinyou", True), "post-images": ("ibelieveinyou", True),
}
KINDS = ("public", "sign", "authenticated")
TALLY = RequestTally()


# ------------------------------------------------------------------------------------------ raw HTTP


class Gateway:
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80

    def send(self, method: str, target: bytes, headers: Optional[dict[str, str]] = None, body: bytes = b"", counter: str = "") -> Answer:
        """One request, written as given; fails the case on a timeout or a dropped connection."""
        lines = [f"{name}: {value}".encode("utf-8", "surrogateescape") for name, value in (headers or {}).items()]
        sent_body = body if body or method in ("POST", "PUT", "PATCH") else None
        return raw_request(self.host, self.port, method, target, lines, sent_body, TALLY, counter)


# ------------------------------------------------------------------------------------------ the stack


@dataclass
class Known:
    """Objects the fixture stored (bucket -> key -> bytes), genuine tokens, and a user per app."""
    objects: dict[str, dict[str, bytes]]
    tokens: dict[tuple[str, str], str]
    users: dict[str, User]


def marked(magic: bytes, bucket: str) -> bytes:
    # The magic number the bucket checks, then the bucket's name: served bytes say where they are from.
    return magic + f"|bucket={bucket}|{uuid.uuid4().hex}|".encode() + bytes(64)


PNG_MAGIC = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
M4A_MAGIC = b"\x00\x00\x00\x20ftypM4A "


def key_of(url: str, bucket: str) -> str:
    return url.split(f"/{bucket}/", 1)[1].split("?", 1)[0]


def unify_user(api: Api) -> User:
    email, secret = unique_email("fuzz-storage"), password()
    api.sign_up("unify", email, secret, full_name="Fuzz Storage")
    mail = api.mailbox.wait_for_mail(email)
    return api.verify("unify", {"type": "signup", "email": email, "token": mail["code"]})


@pytest.fixture(scope="module")
def gateway_url() -> str:
    port = os.environ.get("COLONY_GATEWAY_PORT", "8080")
    return os.environ.get("COLONY_GATEWAY_URL", f"http://127.0.0.1:{port}").rstrip("/")


@pytest.fixture(scope="module")
def known(gateway_url: str):
    keys_file = Path(os.environ.get("COLONY_API_KEYS_FILE", ROOT / ".local" / "api-keys.txt"))
    mail_dir = Path(os.environ.get("COLONY_MAIL_DIR", ROOT / ".local" / "mail"))
    api = Api(Stack(gateway=gateway_url, keys=read_anon_keys(keys_file), mail_dir=mail_dir))
    objects: dict[str, dict[str, bytes]] = {bucket: {} for bucket in BUCKETS}
    tokens: dict[tuple[str, str], str] = {}

    def put(user: User, path: str, bucket: str, magic: bytes, content_type: str, field: str, method: str = "PUT", **params) -> str:
        data = marked(magic, bucket)
        answer = expect(user.request(method, path, content=data, headers={"Content-Type": content_type}, params=params), 200, 201)
        key = key_of(answer[field], bucket)
        objects[bucket][key] = data
        return key

    def sign(user: User, bucket: str, key: str) -> None:
        signed = expect(user.post(f"/storage/v1/object/sign/{bucket}/{key}", json={"expiresIn": 3600}), 200)
        tokens[(bucket, key)] = signed["signedURL"].split("token=", 1)[1]

    unify = unify_user(api)
    expect(unify.get("/chat/v1/me"), 200)
    key = put(unify, "/chat/v1/me/avatar", "profile-pictures", PNG_MAGIC, "image/png", "avatar_url")
    sign(unify, "profile-pictures", key)
    group = expect(unify.post("/chat/v1/groups", json={"name": "Fuzz storage", "member_emails": []}), 201)["id"].lower()
    put(unify, f"/chat/v1/groups/{group}/picture", "group-pictures", PNG_MAGIC, "image/png", "picture_url")
    key = put(unify, f"/chat/v1/groups/{group}/messages/voice", "voice-messages", M4A_MAGIC, "audio/mp4", "voice_url", method="POST", duration=1)
    sign(unify, "voice-messages", key)

    circles = api.sign_up_confirmed("mycirclee", "fuzz-storage")
    circle = expect(circles.post("/circles/v1/circles", json={"name": "Fuzz storage"}), 201)["id"].lower()
    post = expect(circles.post(f"/circles/v1/circles/{circle}/posts", json={"type": "note", "body": "fuzz"}), 201)["id"].lower()
    key = put(circles, f"/circles/v1/posts/{post}/photo", "post-photos", PNG_MAGIC, "image/png", "photo_url")
    sign(circles, "post-photos", key)

    nearby = api.sign_up_confirmed("socialspot", "fuzz-storage")
    key = put(nearby, "/nearby/v1/profile/photo", "profile-photos", PNG_MAGIC, "image/png", "photo_url")
    sign(nearby, "profile-photos", key)

    projects = api.sign_up_confirmed("ibelieveinyou", "fuzz-storage", full_name="Fuzz Storage")
    expect(projects.get("/projects/v1/me"), 200)
    key = put(projects, "/projects/v1/me/avatar", "builder-avatars", PNG_MAGIC, "image/png", "avatar_url")
    sign(projects, "builder-avatars", key)

    yield Known(objects=objects, tokens=tokens, users={"unify": unify, "mycirclee": circles, "socialspot": nearby, "ibelieveinyou": projects})
    api.close()


@pytest.fixture(scope="module")
def gateway(gateway_url: str) -> Gateway:
    return Gateway(gateway_url)


# ------------------------------------------------------------------------------------------ strategies

PIECES = [
    ".", "..", "...", "%2e", "%2E", "%2e%2e", ".%2e", "%2e.", "%252e%252e", "%c0%ae%c0%ae", "%e0%80%ae", "%2f", "%2F", "%252f",
    "%c0%af", "%5c", "%5C", "\\", "..\\", "%00", "\x00", "%0a", "%0d%0a", "\r\n", "%20", " ", "\t", "%09", "%7f", "%ff", "%fe%ff",
    "%", "%g1", "%%", "%25", "~", ";", ";x=1", "%3b", "?", "%3f", "#", "%23", "*", "&", "=", "+", "@", ":", "%3a", "é", "%c3%a9",
    "\u202e", "\ufeff", "\u0130", "\U0001F600", "%f0%9f%98%80", "%ed%a0%80", "a", "A", "0", "-", "_", "x.y", ".tmp", "etc",
    "passwd", "storage", "v1", "object", "public", "sign", "authenticated", *BUCKETS,
]
piece = st.sampled_from(PIECES)
segment = st.one_of(
    st.lists(piece, min_size=0, max_size=5).map("".join),
    st.text(min_size=0, max_size=20),
    st.integers(min_value=200, max_value=9000).map(lambda n: "a" * n),  # past the 255 and 512 limits, and the gateway's line buffer
    st.uuids().map(str),
)
random_key = st.lists(segment, min_size=0, max_size=8).map("/".join)
TRAVERSALS = ["../", "..%2f", "%2e%2e/", "%2e%2e%2f", "..%5c", "./", "/", "//", "%2f", ".%2e/", "..;/", "%c0%ae%c0%ae/", "\\..\\"]


@st.composite
def object_path(draw, known: Known):
    """(kind, bucket, raw key): random keys, and known keys bent towards another bucket or outside."""
    kind = draw(st.sampled_from(KINDS))
    bucket = draw(st.sampled_from(sorted(BUCKETS)))
    existing = [(b, k) for b, keys in known.objects.items() for k in keys]
    mode = draw(st.sampled_from(["random", "own", "known", "escape", "insert"]))
    if mode == "random" or not existing:
        return kind, bucket, draw(random_key)
    if mode == "own" and known.objects[bucket]:  # the bucket's own object: served, and only it
        return kind, bucket, draw(st.sampled_from(sorted(known.objects[bucket])))
    other_bucket, other_key = draw(st.sampled_from(existing))
    if mode == "known":  # another bucket's key under this bucket (the same when it is its own)
        return kind, bucket, other_key
    if mode == "escape":  # up and into another bucket (or the storage root)
        ups = "".join(draw(st.lists(st.sampled_from(TRAVERSALS), min_size=1, max_size=5)))
        target = draw(st.sampled_from([f"{other_bucket}/{other_key}", other_key, ".tmp", "", "../../etc/passwd"]))
        return kind, bucket, ups + target
    parts = other_key.split("/")
    index = draw(st.integers(min_value=0, max_value=len(parts)))
    parts.insert(index, draw(st.sampled_from(["..", ".", "%2e%2e", "", "%2f", other_bucket, "..%2f" + other_bucket])))
    return kind, bucket, "/".join(parts)


def encoded(text: str) -> bytes:
    """As a client would put it on the wire: UTF-8, with whatever the text says (percent signs stay).
    Space, CR and LF end the request line (HTTP/0.9 or a second request, not a path), so they go
    percent-encoded; NUL, tab and other controls go raw."""
    raw = text.encode("utf-8", "surrogatepass")
    return raw.replace(b" ", b"%20").replace(b"\r", b"%0D").replace(b"\n", b"%0A")


EXPIRIES = ["", "0", "-1", "+1", " 1", "1 ", "1e300", "1.5", "NaN", "inf", "0x10", "9" * 19, "9" * 20, str(2**63), str(2**64),
            "٣٣٣", "１２３", "99999999999", "-9223372036854775808", "00000000001"]
SIGNERS = ["", "x", str(uuid.uuid4()), str(uuid.uuid4()).upper(), "00000000-0000-0000-0000-000000000000", "{" + str(uuid.uuid4()) + "}",
           str(uuid.uuid4()).replace("-", ""), "null", "%00", "ffffffff-ffff-ffff-ffff-ffffffffffff"]


@st.composite
def token_value(draw, genuine: Optional[str]):
    """A `token` value in a wrong shape (sometimes the genuine one, or one bent from it)."""
    choice = draw(st.integers(min_value=0, max_value=9))
    if genuine and choice <= 4:
        parts = genuine.split(".")
        bend = draw(st.sampled_from(["as is", "expiry", "signer", "mac", "truncate", "append", "drop part", "swap", "upper", "dots"]))
        if bend == "as is":
            return genuine
        if bend == "expiry":
            return ".".join([draw(st.sampled_from(EXPIRIES))] + parts[1:])
        if bend == "signer":
            return ".".join([parts[0], draw(st.sampled_from(SIGNERS)), parts[-1]])
        if bend == "mac":
            mac = parts[-1]
            at = draw(st.integers(min_value=0, max_value=len(mac) - 1))
            return ".".join(parts[:-1] + [mac[:at] + draw(st.sampled_from("A_-=+/%\x00é")) + mac[at + 1:]])
        if bend == "truncate":
            return genuine[: draw(st.integers(min_value=0, max_value=len(genuine) - 1))]
        if bend == "append":
            return genuine + draw(st.sampled_from(["=", "==", ".", ".x", "%00", "A", " ", "&token=x"]))
        if bend == "drop part":
            del parts[draw(st.integers(min_value=0, max_value=len(parts) - 1))]
            return ".".join(parts)
        if bend == "swap":
            return ".".join(reversed(parts))
        if bend == "upper":
            return genuine.upper()
        return genuine.replace(".", draw(st.sampled_from(["..", "%2e", "%2E", "", "|"])))
    return draw(st.one_of(
        st.text(max_size=80),
        st.sampled_from(EXPIRIES).map(lambda e: e + "." + "A" * 43),
        st.tuples(st.sampled_from(EXPIRIES), st.sampled_from(SIGNERS), st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=", max_size=50))
        .map(".".join),
        st.integers(min_value=1000, max_value=200_000).map(lambda n: "1." + "A" * n),
        st.sampled_from(["", ".", "..", "...", "null", "true", "[]", "{}", '{"exp":1}', "eyJhbGciOiJIUzI1NiJ9.e30.x"]),
    ))


@st.composite
def query(draw, genuine: Optional[str]):
    """The query string (without '?'), or None for no query at all."""
    params: list[str] = []
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        name = draw(st.sampled_from(["token", "token", "token", "expires", "signature", "v", "download", "token[]", "Token", "t%6fken", "", "%00"]))
        value = draw(token_value(genuine)) if name.startswith("t") or name == "Token" else draw(st.one_of(st.sampled_from(EXPIRIES), st.text(max_size=30)))
        quoting = draw(st.sampled_from(["raw", "quoted", "none"]))
        if quoting == "none":
            params.append(name)
        else:
            params.append(f"{name}={value if quoting == 'raw' else quote(value, safe='')}")
    if not params:
        return None if draw(st.booleans()) else ""
    return draw(st.sampled_from(["&", "&&", ";"])).join(params)


SIGN_BODIES = st.one_of(
    st.fixed_dictionaries({}, optional={
        "expiresIn": st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=False),
                               st.text(max_size=20), st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)),
        "expires_in": st.one_of(st.integers(), st.text(max_size=5)),
        "transform": st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    }).map(lambda body: json.dumps(body).encode()),
    st.sampled_from([b"", b"{", b"null", b"[]", b'"x"', b"1e999", b'{"expiresIn": NaN}', b'{"expiresIn": 1e400}', b'{"expiresIn": -0}',
                     b'{"expiresIn": 60.0000000000000001}', b'{"expiresIn": 604800.5}', b'{"expiresIn": 1}' * 3, b"[" * 5000 + b"]" * 5000,
                     b'{"expiresIn": "\\u0000"}', b"\xff\xfe", b'{"expiresIn": 60, "expiresIn": "x"}']),
    st.binary(max_size=200),
)


# ------------------------------------------------------------------------------------------ checks


def check_served(answer: Answer, method: str, kind: str, bucket: str, raw_key: str, known: Known) -> None:
    """No 5xx; a 200 serves exactly the object its path names, in its own bucket."""
    assert answer.status < 500, f"{answer.status} for {method} {kind}/{bucket}/{raw_key[:300]!r}: {answer.body[:300]!r}"
    if answer.status == 405:  # a refused method is never one the path serves
        allowed = [m.strip() for m in answer.headers.get("allow", "").split(",")]
        assert method not in allowed and f"serves {method}" not in answer.body.decode("utf-8", "replace"), \
            f"405 naming {method} for {method} {kind}/{bucket}/{raw_key[:300]!r}: {answer.body[:300]!r}"
    if answer.status != 200 or method != "GET":
        return
    if kind == "public":
        assert BUCKETS[bucket][1], f"the private bucket {bucket} served {raw_key!r} on the public route"
    owners = [(b, k) for b, objects in known.objects.items() for k, data in objects.items() if data == answer.body]
    assert owners, f"{kind}/{bucket}/{raw_key[:300]!r} served bytes that are none of the known objects: {answer.body[:120]!r}"
    owner_bucket, owner_key = owners[0]
    assert owner_bucket == bucket, f"{kind}/{bucket}/{raw_key!r} served {owner_bucket}/{owner_key}: outside its bucket"
    named = "/".join(s for s in unquote_to_bytes(raw_key).decode("utf-8", "replace").split("/") if s)
    assert named == owner_key, f"{kind}/{bucket}/{raw_key!r} served {owner_key}, which it does not name"


def auth_headers(known: Known, bucket: str) -> dict[str, str]:
    user = known.users[BUCKETS[bucket][0]]
    return user.headers()


# ------------------------------------------------------------------------------------------ tests


def test_object_paths(gateway: Gateway, known: Known):
    """Any method, any route kind, any bucket, paths bent every way: never a 5xx, never a file outside its bucket."""

    @fuzz
    @given(data=st.data())
    def case(data):
        kind, bucket, raw_key = data.draw(object_path(known))
        method = data.draw(st.sampled_from(["GET", "GET", "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"]))
        target = f"/storage/v1/object/{kind}/{bucket}/".encode() + encoded(raw_key)
        genuine = known.tokens.get((bucket, raw_key))
        if kind == "sign" and method == "GET" and genuine and data.draw(st.booleans()):
            target += b"?token=" + genuine.encode()
        headers = auth_headers(known, bucket) if kind == "authenticated" or method == "POST" else {}
        body = b'{"expiresIn": 60}' if method in ("POST", "PUT") else b""
        if body:
            headers = {**headers, "Content-Type": "application/json"}
        check_served(gateway.send(method, target, headers, body, counter="paths"), method, kind, bucket, raw_key, known)

    case()


def test_signed_url_parameters(gateway: Gateway, known: Known):
    """GET …/sign/… with tokens and other parameters in every wrong shape: 400 or 403, never a 5xx, and a
    200 only for the genuine token of the object it names."""
    existing = sorted(known.tokens)

    @fuzz
    @given(data=st.data())
    def case(data):
        if data.draw(st.integers(min_value=0, max_value=3)) > 0:
            bucket, raw_key = data.draw(st.sampled_from(existing))
            genuine = known.tokens[(bucket, raw_key)]
        else:
            _, bucket, raw_key = data.draw(object_path(known))
            genuine = data.draw(st.sampled_from([None] + [known.tokens[k] for k in existing]))
        q = data.draw(query(genuine))
        target = f"/storage/v1/object/sign/{bucket}/".encode() + encoded(raw_key) + (b"" if q is None else b"?" + encoded(q))
        answer = gateway.send("GET", target, counter="signed_url_parameters")
        check_served(answer, "GET", "sign", bucket, raw_key, known)
        if answer.status == 200:
            assert q is not None and genuine is not None and genuine in unquote(q), f"served without the genuine token: {target[:300]!r}"

    case()


def test_sign_requests(gateway: Gateway, known: Known):
    """POST …/sign/… with bodies of every type and bent paths: never a 5xx; a URL only for a known object of
    the same bucket, whose token the GET then honours."""

    @fuzz
    @given(data=st.data())
    def case(data):
        _, bucket, raw_key = data.draw(object_path(known))
        body = data.draw(SIGN_BODIES)
        content_type = data.draw(st.sampled_from(["application/json", "application/json; charset=utf-8", "text/plain", "", "application/x-www-form-urlencoded"]))
        headers = {**auth_headers(known, bucket), **({"Content-Type": content_type} if content_type else {})}
        target = f"/storage/v1/object/sign/{bucket}/".encode() + encoded(raw_key)
        answer = gateway.send("POST", target, headers, body, counter="sign_requests")
        assert answer.status < 500, f"{answer.status} for POST {target[:300]!r} {body[:200]!r}: {answer.body[:300]!r}"
        if answer.status != 200:
            return
        signed = json.loads(answer.body)["signedURL"]
        path, token = signed.split("?token=", 1)
        assert path.startswith(f"/object/sign/{bucket}/"), signed
        key = path[len(f"/object/sign/{bucket}/"):]
        assert key in known.objects[bucket], f"signed {key!r}, which is no object of {bucket}"
        check_served(gateway.send("GET", ("/storage/v1" + signed).encode(), counter="sign_requests"), "GET", "sign", bucket, key, known)

    case()


def protocol_fuzz_summary() -> Optional[str]:
    """The session's line (the protocol conftest prints it): requests per kind and their statuses."""
    if not TALLY.total:
        return None
    return f"storage protocol fuzz: {EXAMPLES} examples per test, {TALLY.total} requests, {TALLY.server_errors} 5xx ({TALLY.describe()})"
