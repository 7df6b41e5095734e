"""Protocol fuzz of auth's admin surface for the Colony Console (issue 38; docs/auth.md, "The console's
admin surface" and "Colony's additions"): `GET /admin/users?filter=&page=&per_page=`,
`GET|PUT|DELETE /admin/users/{id}`, `GET /admin/users/{id}/sessions`,
`POST /admin/users/{id}/logout|recover|resend|export`, `GET|DELETE /admin/users/{id}/factors[/{factor_id}]`
and `GET /admin/imports?per_page=`, with the console's credential (and a wrong console key, a
service-role key, an anon key, a user's token, garbage, none), `X-Colony-Operator` and `X-Colony-App`
absent, garbage, overlong, with CR/LF/NUL bytes, of unknown apps, named twice; ids of the app's users,
another app's, random and malformed; filters of every shape. Now and then the right values, so the
handlers' deeper paths run: a user the test creates is found by its name and address, banned, refused
a recovery mail while banned, unbanned, mailed a recovery link, exported and deleted; a fixture's factor
is deleted and enrolled again; the console reads its app's import runs.

The console calls auth on auth's own port (COLONY_SERVICE_BASE_PORT, 8081: scripts/run's first
service): the gateway clears `X-Colony-Operator`, so the console's credential opens nothing there.
Most requests go to auth's port; a sixth of those not exactly the console's go through the gateway,
where only a service-role key may open a route. Requests are written byte for byte on a socket, each
from a loopback address of its own.

One user per app is signed up at module start (Tests/Fuzz/fuzz.py's `sign_up`, as the apps do it) with
an MFA factor enrolled; the test's own users are made through the console. A case fails on a 5xx, no
answer within 10 s, a dropped connection, an error body that is not {"code","message"} (an empty 400 is
the HTTP parser's, accepted only for a request with bytes it may refuse), a 2xx without a credential
that opens the route, and whenever a user of one app is visible or touched by a request that names
another (its id, address, phone or factor in the answer, the answer's `aud`, a 2xx acting on it);
requests that are exactly the console's must find what they name in their app and get 404 for another
app's users. The fixture users are never deleted, banned or signed out (actions that would are aimed
at a user of the test's own instead); the last test checks that they are as they were.

Examples per test: COLONY_PROTOCOL_FUZZ_EXAMPLES (150); derandomized unless COLONY_FUZZ_SEED is set.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional
from urllib.parse import quote, quote_from_bytes, unquote_to_bytes

import pytest
from hypothesis import given
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "EndToEnd"))
sys.path.insert(0, str(HERE.parent))  # Tests/Fuzz: fuzz.py's console key and sign-ups
sys.path.insert(0, str(HERE))
from e2e_support import APPS, ROOT, Api, Stack, User, expect  # noqa: E402
from fuzz import console_key, sign_up  # noqa: E402
from fuzz_support import EXAMPLES, AuthGateway, RequestTally, fuzz, raw_request  # noqa: E402

TALLY = RequestTally()
# What the deeper checks saw, for the summary line.
CHECKED: Counter[str] = Counter()

OPERATOR = b"fuzz-console@colony.test"
# Addresses of the users the test makes: unique, so finding one in an answer means that user.
OURS = "console-fuzz-"
AUTH_HOST = "127.0.0.1"


def protocol_fuzz_summary() -> Optional[str]:
    if not TALLY.total:
        return None
    checked = "; ".join(f"{what}: {n}" for what, n in sorted(CHECKED.items()))
    return (f"auth console admin protocol fuzz: {EXAMPLES} examples per test, {TALLY.total} requests, "
            f"{TALLY.server_errors} 5xx{'; ' + checked if checked else ''} ({TALLY.describe()})")


# ------------------------------------------------------------------------------------------ the stack


@dataclass(eq=False)
class Account:
    """A user the module knows: a fixture (signed up, with its session and a factor) or the test's own."""
    app: str
    id: str
    email: Optional[str] = None
    phone: Optional[str] = None
    name: Optional[str] = None
    user: Optional[User] = None
    factor: Optional[str] = None
    deleted: bool = False

    @property
    def fixture(self) -> bool:
        return self.user is not None

    def markers(self) -> list[bytes]:
        """What shows this account in an answer: its id, address, phone and factor (each unique to it)."""
        found = [self.id]
        if self.email and (self.email.lower().startswith(OURS) or self.fixture):
            found.append(self.email)
        if self.phone and self.fixture:
            found.append(self.phone)
        if self.factor:
            found.append(self.factor)
        return [marker.lower().encode() for marker in found]


@dataclass(frozen=True)
class Credential:
    """The header lines a request carries besides Host and the body's; `wellformed_app` when they are
    exactly the console's (its key, the operator, one app) sent to auth's port."""
    lines: tuple[bytes, ...]
    via_gateway: bool = False
    wellformed_app: Optional[str] = None


@dataclass
class Reply:
    status: int
    data: Any
    permitted: frozenset[str]

    @property
    def code(self) -> Optional[str]:
        return self.data.get("code") if isinstance(self.data, dict) else None

    def user_ids(self) -> list[str]:
        users = self.data.get("users") if isinstance(self.data, dict) else None
        return [str(user.get("id", "")).lower() for user in users if isinstance(user, dict)] if isinstance(users, list) else []


# Bytes an HTTP parser may refuse in a header line (nginx and NIO answer those 400, NIO with no body).
REFUSABLE = set(range(0x00, 0x20)) - {0x09} | {0x7F} | set(range(0x80, 0x100))
TOKEN = set(b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def refusable(lines: list[bytes]) -> bool:
    """Whether a parser may refuse these header lines outright: odd bytes, a name that is no token
    (a space before the colon), a line longer than any reader takes in one piece."""
    for line in lines:
        name = line.split(b":", 1)[0]
        if any(byte in REFUSABLE for byte in line) or not name or any(byte not in TOKEN for byte in name) or len(line) > 8192:
            return True
    return False


class ConsoleAdmin:
    """Auth's port and the gateway, the keys, and the accounts the module knows."""

    def __init__(self) -> None:
        self.gateway = AuthGateway(TALLY, seed=38)
        self.auth_port = int(os.environ.get("COLONY_SERVICE_BASE_PORT", "8081"))
        self.key = console_key().encode()
        self.service = {app: key.encode() for app, key in self.gateway.service.items()}
        self.anon = {app: key.encode() for app, key in self.gateway.anon.items()}
        self.accounts: list[Account] = []
        # A user of the test's own per app, what an action aimed at a fixture in its own app acts on.
        self.spare: dict[str, Account] = {}
        mail_dir = Path(os.environ.get("COLONY_MAIL_DIR", ROOT / ".local" / "mail"))
        self.api = Api(Stack(gateway=self.gateway.url, keys=self.gateway.anon, mail_dir=mail_dir))

    def prepare(self) -> None:
        for app in APPS:
            user = sign_up(self.api, "console-admin", app)
            account = Account(app, user.id, email=user.email or None, phone=user.phone or None, user=user)
            self.enroll_factor(account)
            shown = self.exchange("setup", "GET", self.user_path(account.id), self.console(app), about=(account,))
            assert shown.status == 200 and shown.data.get("aud") == app, f"the console cannot read its own app's user: {shown}"
            metadata = shown.data.get("user_metadata") or {}
            account.name = next((metadata[key] for key in ("display_name", "full_name", "name") if isinstance(metadata.get(key), str) and metadata[key]), None)
            self.accounts.append(account)
        for app in APPS:
            self.spare[app] = self.create_user(app)

    def console(self, app: str) -> Credential:
        return Credential((b"Authorization: Bearer " + self.key, b"X-Colony-Operator: " + OPERATOR, b"X-Colony-App: " + app.encode()),
                          wellformed_app=app)

    @staticmethod
    def user_path(segment: str, suffix: str = "") -> bytes:
        return f"/auth/v1/admin/users/{segment}{suffix}".encode()

    def permitted(self, credential: Credential) -> frozenset[str]:
        """Every app the request could act in, at most: an app whose service-role key it carries, and
        on auth's port with the console's key, any app it names anywhere in its headers."""
        block = b"\n".join(credential.lines).lower()
        apps = {app for app, key in self.service.items() if key.lower() in block}
        if not credential.via_gateway and self.key.lower() in block:
            apps |= {app for app in APPS if app.encode() in block}
        return frozenset(apps)

    def redacted(self, data: bytes) -> bytes:
        return data.replace(self.key, b"<console key>")

    def exchange(self, kind: str, method: str, target: bytes, credential: Credential, body: Optional[bytes] = None,
                 content_type: Optional[bytes] = None, about: tuple[Account, ...] = ()) -> Reply:
        """One request, checked: no 5xx, errors as {"code","message"}, no 2xx without a credential
        that opens the route, no account of an app the request does not name in the answer, and no
        2xx acting on one (`about`: the accounts the request's path names)."""
        lines = list(credential.lines) + ([b"Content-Type: " + content_type] if content_type is not None else [])
        host, port = (self.gateway.host, self.gateway.port) if credential.via_gateway else (AUTH_HOST, self.auth_port)
        described = self.redacted(f"{method} {target[:300]!r} to {'the gateway' if credential.via_gateway else 'auth'} "
                                  f"headers={[line[:200] for line in lines]!r} body={(body or b'')[:300]!r}".encode()).decode()
        answer = raw_request(host, port, method, target, lines, body, TALLY, kind + (" (gateway)" if credential.via_gateway else ""),
                             source=self.gateway.source(), described=described)
        assert answer.status < 500, f"{answer.status} {answer.body[:500]!r} for {described}"
        try:
            data = json.loads(answer.body) if answer.body else None
        except ValueError:
            data = None
        if answer.status >= 400:
            if answer.body:
                assert isinstance(data, dict) and isinstance(data.get("code"), str) and isinstance(data.get("message"), str), \
                    f"error body {answer.body[:300]!r} for {described}"
            else:
                assert answer.status == 400 and refusable(lines), f"an empty {answer.status} for {described}"
        permitted = self.permitted(credential)
        if 200 <= answer.status < 300:
            assert permitted, f"{answer.status} without a credential that opens an admin route: {described}"
            for app in self.apps_in(data):
                assert app in permitted, f"an answer of {app} to a request naming {sorted(permitted)}: {answer.body[:500]!r} for {described}"
            for account in about:
                assert account.app in permitted, f"{answer.status} acting on a {account.app} user for a request naming {sorted(permitted)}: {described}"
        asked = (target + b"\n" + b"\n".join(lines) + b"\n" + (body or b"")).lower()
        asked += b"\n" + unquote_to_bytes(asked).lower()
        shown = answer.body.lower()
        # A value two apps' users may both hold (an address set by a PUT) shows neither.
        theirs = {marker for account in self.accounts if account.app in permitted for marker in account.markers()}
        for account in self.accounts:
            if account.app in permitted:
                continue
            for marker in account.markers():
                assert marker not in shown or marker in asked or marker in theirs, \
                    f"a {account.app} user ({marker!r}) in the answer to a request naming {sorted(permitted)}: {answer.body[:500]!r} for {described}"
        return Reply(answer.status, data, permitted)

    @staticmethod
    def apps_in(data: Any) -> list[str]:
        """The apps an answer speaks for: its `aud`, its users' `aud`, its import runs' `app`."""
        if not isinstance(data, dict):
            return []
        found = [data["aud"]] if isinstance(data.get("aud"), str) else []
        for key, field in (("users", "aud"), ("imports", "app")):
            items = data.get(key)
            if isinstance(items, list):
                found += [item[field] for item in items if isinstance(item, dict) and isinstance(item.get(field), str)]
        return found

    def create_user(self, app: str) -> Account:
        """A user of the test's own, made by the console: a confirmed address and a unique display name."""
        tag = uuid.uuid4().hex[:12]
        body = {"email": f"{OURS}{tag}@example.com", "email_confirm": True, "user_metadata": {"display_name": f"Console Fuzz {tag}"}}
        created = self.exchange("setup", "POST", b"/auth/v1/admin/users", self.console(app), json.dumps(body).encode(), b"application/json")
        assert created.status == 200 and created.data.get("aud") == app, f"the console could not create a {app} user: {created}"
        account = Account(app, str(created.data["id"]).lower(), email=created.data.get("email"), name=f"Console Fuzz {tag}")
        self.accounts.append(account)
        return account

    def spare_user(self, app: str) -> Account:
        if self.spare[app].deleted:
            self.spare[app] = self.create_user(app)
        return self.spare[app]

    def enroll_factor(self, account: Account) -> None:
        """An unverified TOTP factor of a fixture, enrolled with its own session through the gateway."""
        assert account.user is not None
        enrolled = expect(account.user.post("/auth/v1/factors", json={"factor_type": "totp", "friendly_name": f"console-fuzz-{uuid.uuid4().hex[:8]}"}), 200)
        account.factor = str(enrolled["id"]).lower()

    def fixture(self, app: str) -> Account:
        return next(account for account in self.accounts if account.fixture and account.app == app)


@pytest.fixture(scope="module")
def admin():
    console = ConsoleAdmin()
    try:
        console.prepare()
        yield console
    finally:
        console.api.close()


# ------------------------------------------------------------------------------------------ strategies

# Weights are spelled as repeated choices of `sampled_from` (Hypothesis's `one_of` does not weight by repetition).

def pick(draw, items: list) -> Any:
    """One of `items`, a list that changes as the test runs (accounts made, deleted, readdressed): drawn as
    an index in a fixed range, since Hypothesis refuses a choice whose range differs between cases."""
    return items[draw(st.integers(min_value=0, max_value=1023)) % len(items)]


def names(canonical: bytes) -> st.SearchStrategy[bytes]:
    """A header's name: mostly as the console writes it, sometimes in another case or spelling."""
    variants = (canonical.lower(), canonical.upper(), canonical.replace(b"-", b"_"), canonical + b" ", canonical + b"s")
    return st.sampled_from((canonical,) * 5 + variants)


@st.composite
def header(draw, name: bytes, good: st.SearchStrategy[bytes], nasty: tuple[bytes, ...]) -> bytes:
    """A header line: half the time with a right value, else a wrong one of every kind."""
    how = draw(st.sampled_from(("good",) * 5 + ("nasty",) * 3 + ("text", "bytes")))
    if how == "good":
        value = draw(good)
    elif how == "nasty":
        value = draw(st.sampled_from(nasty))
    elif how == "text":
        value = draw(st.text(max_size=30)).encode()
    else:
        value = draw(st.binary(max_size=30))
    return draw(names(name)) + b": " + value


OPERATOR_VALUES = (
    b"", b" ", b"not an address", b"ops", b"@", b"ops@", b"@colony.test", b"a@b@colony.test", b"OPS@COLONY.TEST", b"ops @colony.test",
    b"ops@colony.test,other@colony.test", b'"ops"@colony.test', b"\tops@colony.test", b"ops@colony.test\x7f",
    b"o" * 308 + b"@colony.test", b"o" * 309 + b"@colony.test", b"o" * 5000 + b"@colony.test", b"o" * 70_000,
    b"ops@colony.test\x00", b"ops\x00@colony.test", b"ops@colony.test\r\nX-Colony-App: unify", b"ops@colony.test\nX-Colony-App: habithive",
    b"ops@colony.test\r", b"ops\r\n @colony.test", b"ops@colony.test\r\n\r\n", "öps@colony.test".encode(), "ops@colony.test\u202e".encode(),
    b"\xff\xfe@colony.test",
)
APP_VALUES = (
    b"", b" ", b"nope", b"MyCirclee", b"MYCIRCLEE", b" unify", b"unify ", b"unify,mycirclee", b"unify, mycirclee", b"supabase", b"console",
    b"auth", b"null", b"*", b"%75nify", b"unify\x00", b"uni\x00fy", b"unify\r\nX-Colony-App: mycirclee", b"habithive\nX-Colony-App: socialspot",
    b"\tunify", b"unify\r\n", b"u" * 70_000, b"unify" * 1000, "ünify".encode(), b"ibelieveinyou\x7f", b"socialspot\xff",
)


def bounded(lines: list[bytes]) -> list[bytes]:
    """At most one overlong header line (the others cut to 3000 bytes): auth's HTTP parser refuses a
    head over 80 KiB by closing the connection, which the request, still being written, would meet as
    a reset rather than an answer."""
    longest = max(range(len(lines)), key=lambda index: len(lines[index]), default=-1)
    return [line if index == longest else line[:3000] for index, line in enumerate(lines)]


CREDENTIALS = ("console", "console", "console", "console", "wrong console", "service", "anon", "user", "none", "garbage",
               "console in basic", "console in apikey", "console and service")
GARBAGE = (b"", b"null", b"a.b.c", b"eyJ" + b"A" * 400, b"Bearer", b" ", b"\xff\xfe")


@st.composite
def credentials(draw, admin: ConsoleAdmin) -> Credential:
    """The console's headers exactly, else any credential with its operator and app headers in any
    shape, to auth's port or (a sixth) through the gateway. Hypothesis draws a branch with fewer
    choices after it less often than its odds say: half here comes out near a third."""
    if draw(st.booleans(), label="wellformed"):
        return admin.console(draw(st.sampled_from(APPS)))
    kind = draw(st.sampled_from(CREDENTIALS), label="credential")
    app = draw(st.sampled_from(APPS))
    lines: list[bytes] = []
    if kind == "console":
        lines.append(b"Authorization: " + draw(st.sampled_from((b"Bearer ", b"bearer ", b"BEARER  ", b"Bearer\t"))) + admin.key)
    elif kind == "wrong console":
        wrong = admin.key[:-1] + (b"0" if admin.key[-1:] != b"0" else b"1")
        lines.append(b"Authorization: Bearer " + draw(st.sampled_from((wrong, admin.key[:-1], admin.key + b"0", admin.key.upper(), b"0" * len(admin.key)))))
    elif kind == "service":
        lines.append(b"apikey: " + admin.service[app])
        if draw(st.booleans()):
            lines.append(b"Authorization: Bearer " + admin.service[app])
    elif kind == "anon":
        lines += [b"apikey: " + admin.anon[app], b"Authorization: Bearer " + admin.anon[app]]
    elif kind == "user":
        fixture = admin.fixture(app)
        assert fixture.user is not None
        lines += [b"apikey: " + admin.anon[app], b"Authorization: Bearer " + fixture.user.access_token.encode()]
    elif kind == "garbage":
        lines.append(b"Authorization: Bearer " + draw(st.sampled_from(GARBAGE)))
    elif kind == "console in basic":
        lines.append(b"Authorization: Basic " + admin.key)
    elif kind == "console in apikey":
        lines.append(b"apikey: " + admin.key)
    elif kind == "console and service":
        lines += [b"Authorization: Bearer " + admin.key, b"apikey: " + admin.service[draw(st.sampled_from(APPS))]]
    consoleish = kind.startswith("console")
    if draw(st.integers(min_value=0, max_value=9)) < (9 if consoleish else 5):
        lines.append(draw(header(b"X-Colony-Operator", st.just(OPERATOR), OPERATOR_VALUES), label="operator"))
    apps = st.sampled_from(APPS).map(str.encode)
    for _ in range(draw(st.sampled_from((1, 1, 1, 1, 0, 2)) if consoleish else st.sampled_from((0, 1)))):
        lines.append(draw(header(b"X-Colony-App", apps, APP_VALUES), label="app"))
    lines = bounded(draw(st.permutations(lines)))
    via_gateway = draw(st.sampled_from((False,) * 5 + (True,)), label="through the gateway")
    wellformed = next((name for name in APPS if sorted(lines) == sorted(admin.console(name).lines)), None)
    return Credential(tuple(lines), via_gateway=via_gateway, wellformed_app=None if via_gateway else wellformed)


# How a path writes a user's id: the console's forms first (lowercase, as auth answers ids; uppercase
# parses too), then mangled ones no account has.
FORMS: dict[str, Callable[[str], str]] = {
    "lower": lambda id: id, "upper": lambda id: id.upper(),
    "braces": lambda id: "%7B" + id + "%7D", "bare": lambda id: id.replace("-", ""), "suffix": lambda id: id + "x", "short": lambda id: id[:-1],
    "space": lambda id: "%20" + id, "nul": lambda id: id + "%00", "hyphens": lambda id: id.replace("-", "%2D"), "dotdot": lambda id: id + "%2F..",
    "slash": lambda id: id + "%2F", "unicode": lambda id: id.replace("a", "%EF%BD%81", 1),
}
PLAIN = ("lower", "upper")
MALFORMED_IDS = ("", "abc", "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff", "%00", "%2e%2e", "..", ".",
                 "%2F", "null", "-1", "1e9", "x" * 300, "%C3%BC", "%F0%9F%A7%AA", "%ff%fe", "%", "%zz", "me", "*", "%20", "users", "%0D%0A")


@dataclass(frozen=True)
class Target:
    """A path segment naming a user (or a factor), the account it was made from, and its form."""
    segment: str
    account: Optional[Account] = None
    form: str = ""

    @property
    def plain(self) -> bool:
        return self.form in PLAIN

    @property
    def shaped(self) -> bool:
        """An id as the console writes one: a known account's or a random one."""
        return self.form in PLAIN or self.form == "random"


@st.composite
def targets(draw, admin: ConsoleAdmin, factor: bool = False, prefer: Optional[str] = None) -> Target:
    """A user's id (or, with `factor`, a factor's): a known account's (the fixtures' of every app and the
    test's own; half of them of the app `prefer` names), mangled, random or malformed."""
    how = draw(st.sampled_from(("known", "known", "known", "known", "mangled", "random", "malformed")))
    if how in ("known", "mangled"):
        known = [account for account in admin.accounts if account.factor or not factor]
        preferred = [account for account in known if account.app == prefer]
        account = pick(draw, preferred if preferred and draw(st.booleans()) else known)
        form = draw(st.sampled_from(PLAIN if how == "known" else tuple(FORMS)))
        return Target(FORMS[form](account.factor if factor and account.factor else account.id), account, form)
    if how == "random":
        return Target(str(draw(st.uuids())), form="random")
    return Target(draw(st.sampled_from(MALFORMED_IDS)), form="malformed")


def retarget(target: Target, account: Account) -> Target:
    return Target(FORMS[target.form](account.id), account, target.form)


NASTY_FILTERS = (
    "%", "_", "\\", "%%", "_%", "\\%", "a%", "%@", "e2e-%", "_@example.com", "\u0000", "a\u0000b", "'", "' OR 1=1 --", '"', ";", "*", "+", "-",
    "+-", " + 1", "++1", "+1 555", "1-555", "٤٩", "١٢٣", "ǅ", "İ", "ß", "ﬀ", "🧪", "\u202e", "\ufeff", "e\u0301", "x" * 256, "x" * 257,
    "é" * 256, "x" * 5000, " " * 300, "\t\n", "(", "[", "{", "$1", "?", "#", "&", "=", "00000000-0000-0000-0000-000000000000", "@", ".",
    "example.com", "Fuzz", "fuzz console", "console fuzz", "CONSOLE", "null", "true", "[]",
)
NUMBERS = ("1", "0", "-1", "2", "3", "50", "1000", "1001", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
           "99999999999999999999999", "1.5", "1e3", "%2B1", "%201", "0x10", "abc", "", "%00", "%", "NaN", "%D9%A1")
# Page values that leave the first page (Int(page) below 1, or no integer at all).
FIRST_PAGES = (None, "1", "0", "-1", "abc", "1.5")
# Values that may leave the query unread as a whole.
UNSAFE_VALUES = ("%00", "%")
JUNK = ("apikey=x", "filter", "page", "x=%zz", "%zz=1", "&&", "=", "filter[]=a", "app=unify", "aud=habithive", "per_page=%00")


def search_forms(account: Account) -> list[tuple[str, bool]]:
    """Filters made from an account, each with whether the search must find it (what only it matches)."""
    forms = [(account.id, True), (account.id.upper(), True), (f" {account.id} ", True), (account.id[:8], False)]
    if account.email:
        forms += [(account.email, True), (account.email.upper(), True), (account.email[: len(account.email) // 2], False), (account.email[:4], False)]
    if account.phone:
        digits = account.phone.lstrip("+")
        forms += [("+" + digits, True), (digits, True), (f"+{digits[:1]} {digits[1:4]}-{digits[4:]}", True), (digits[:5], False)]
    if account.name:
        # The test's own users' names are unique; the fixtures' are shared by many.
        forms += [(account.name, not account.fixture), (account.name.lower(), not account.fixture), (account.name[:6], False)]
    return forms


@dataclass(frozen=True)
class Search:
    query: bytes
    # The account the search must find, for the console in its app.
    expected: Optional[Account] = None
    # The account a single filter was made from (of another app: it must not be found).
    named: Optional[Account] = None


@st.composite
def searches(draw, admin: ConsoleAdmin, app: Optional[str]) -> Search:
    """A query for GET /admin/users: for the console in `app`, often the right values (what only one
    of its users matches, a first page); else filters, pages and per_page of every shape."""
    if app and draw(st.booleans(), label="right values"):
        account = pick(draw, [account for account in admin.accounts if account.app == app and not account.deleted])
        text = pick(draw, [text for text, exact in search_forms(account) if exact])
        parts = [b"filter=" + quote(text, safe="").encode()]
        page = draw(st.sampled_from(FIRST_PAGES), label="page")
        per_page = draw(st.one_of(st.none(), st.sampled_from([value for value in NUMBERS if value not in UNSAFE_VALUES])), label="per_page")
        parts += [f"{name}={value}".encode() for name, value in (("page", page), ("per_page", per_page)) if value is not None]
        return Search(b"?" + b"&".join(draw(st.permutations(parts))), expected=account, named=account)
    parts: list[bytes] = []
    count = draw(st.sampled_from((1, 1, 1, 1, 0, 2)), label="filters")
    account, exact, plain = None, False, False
    for _ in range(count):
        how = draw(st.sampled_from(("account",) * 4 + ("nasty", "nasty", "text", "long", "bytes")))
        if how == "account":
            account = pick(draw, admin.accounts)
            text, exact = pick(draw, search_forms(account))
            plain = draw(st.integers(min_value=0, max_value=3)) > 0
            encoded = quote(text, safe="") if plain else draw(st.sampled_from((quote(text, safe="@+"), text.replace(" ", "+"), quote(text.upper(), safe=""))))
        elif how == "nasty":
            encoded = quote(draw(st.sampled_from(NASTY_FILTERS)), safe="")
        elif how == "text":
            encoded = quote(draw(st.text(max_size=40)), safe="")
        elif how == "long":
            encoded = quote(draw(st.text(min_size=250, max_size=300)), safe="")
        else:
            encoded = draw(st.one_of(st.binary(max_size=40).map(lambda data: quote_from_bytes(data, safe="")),
                                     st.sampled_from(("%", "%zz", "%ff%fe", "%C0%80", "%ED%A0%80", "a&b=c", "+", "=", ""))))
        parts.append(b"filter=" + encoded.encode())
    page = draw(st.sampled_from((None,) * len(NUMBERS) + NUMBERS), label="page")
    per_page = draw(st.sampled_from((None,) * len(NUMBERS) + NUMBERS), label="per_page")
    if page is not None:
        parts.append(b"page=" + page.encode())
    if per_page is not None:
        parts.append(b"per_page=" + per_page.encode())
    junk = draw(st.lists(st.sampled_from(JUNK), max_size=2) if draw(st.integers(min_value=0, max_value=5)) == 0 else st.just([]))
    parts += [item.encode() for item in junk]
    parts = draw(st.permutations(parts))
    query = b"?" + b"&".join(parts) if parts else b""
    single = count == 1 and account is not None
    must_find = (single and exact and plain and app == account.app and not account.deleted and page in FIRST_PAGES
                 and per_page not in UNSAFE_VALUES and not junk)
    return Search(query, expected=account if must_find else None, named=account if single and plain and not junk else None)


BAN_DURATIONS = ("24h", "1h", "90m", "3600s", "0.5h", "1e3s", "876000h", "2562047h")
TYPED_BANS = BAN_DURATIONS + ("none", "1e-300s", "", "0h", "-1h", "1e300h", "infh", "nanh", "NaNh", "24", "h", "24H", "24d", "1h30m",
                              " 24h", "24h ", "2562048h", "9223372037s", "+1h", "0x10h", "NONE", "１h", "\u202e24h")
NASTY_TEXT = ("", " ", "\u0000", "a\u0000b", "null", "[]", "{}", "-1", "1e309", "\u202e", "é" * 3, "x" * 5000, "%00", "a@b", "@",
              "USER@EXAMPLE.COM", "+15551234567", "+1" + "9" * 40, "15551234567", "javascript:alert(1)")


def fresh_email() -> st.SearchStrategy[str]:
    return st.uuids().map(lambda u: f"{OURS}{u.hex[:12]}@example.com")


texts = st.one_of(st.sampled_from(NASTY_TEXT), st.text(max_size=40), fresh_email())
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2 ** 70), max_value=2 ** 70), st.floats(allow_nan=False, allow_infinity=False), texts)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4), max_leaves=10)
metadata = st.one_of(st.none(), json_values, st.dictionaries(st.text(max_size=12), json_values, max_size=4), st.just({"k" * 300: "v" * 20_000}))
SAFE = "abcdefghijklmnopqrstuvwxyz0123456789 -"


@st.composite
def put_bodies(draw) -> tuple[Optional[bytes], Optional[bytes], bool]:
    """A PUT body, its Content-Type, and whether it is typed: JSON the handler reads and judges only
    after finding the account (another app's user is then 404 whatever the values)."""
    how = draw(st.sampled_from(("typed", "typed", "typed", "fields", "fields", "raw", "truncated", "deep", "utf8", "empty", "array", "none")))
    if how == "typed":
        body: dict[str, Any] = {}
        if draw(st.integers(min_value=0, max_value=3)) > 0:
            body["ban_duration"] = draw(st.sampled_from(TYPED_BANS))
        if draw(st.booleans()):
            body["user_metadata"] = draw(st.dictionaries(st.sampled_from(("note", "plan", "locale", "theme")),
                                                         st.one_of(st.text(alphabet=SAFE, max_size=20), st.integers(-1000, 1000), st.booleans()), max_size=3))
        if draw(st.booleans()):
            body["email_confirm"] = draw(st.booleans())
        return json.dumps(body).encode(), b"application/json", True
    if how == "fields":
        fields = {
            "ban_duration": st.one_of(st.sampled_from(TYPED_BANS + ("24h\u0000",)), json_values),
            "user_metadata": metadata, "app_metadata": metadata,
            "email": st.one_of(fresh_email(), texts, json_values),
            "phone": st.one_of(texts, json_values),
            "password": st.one_of(st.sampled_from(("short", "", "p" * 100_000, "Fuzz-pass-1234")), json_values),
            "email_confirm": json_values, "phone_confirm": json_values, "role": texts, "aud": st.sampled_from(APPS), "id": st.uuids().map(str),
        }
        chosen = draw(st.lists(st.sampled_from(sorted(fields)), min_size=1, max_size=4, unique=True))
        data = json.dumps({name: draw(fields[name]) for name in chosen}).encode()
    elif how == "raw":
        data = draw(st.binary(max_size=300))
    elif how == "truncated":
        text = json.dumps({"ban_duration": "24h", "user_metadata": {"note": "x" * 20}}).encode()
        data = text[: draw(st.integers(min_value=0, max_value=len(text) - 1))]
    elif how == "deep":
        depth = draw(st.sampled_from((64, 1000, 100_000)))
        data = b'{"user_metadata":{"a":' + b"[" * depth + b"]" * depth + b"}}"
    elif how == "utf8":
        data = b'{"ban_duration": "\xff\xfe", "user_metadata": {"\xed\xa0\x80": "\xc3\x28"}}'
    elif how == "array":
        data = json.dumps(draw(st.lists(json_values, max_size=3))).encode()
    elif how == "empty":
        data = b""
    else:
        return None, None, False
    content_type = draw(st.sampled_from((b"application/json", b"application/json", b"application/json; charset=utf-8", b"text/plain",
                                         b"application/x-www-form-urlencoded", b"", b"application/" + b"j" * 3000)))
    return data, content_type, False


REDIRECTS = ("mycirclee%3A%2F%2Fauth-callback", "https%3A%2F%2Fevil.example%2F", "", "%00", "javascript%3Aalert(1)", "x" * 3000, "%zz", "%E2%80%AE")
PER_PAGES = ("1", "50", "100", "0", "101", "-1", "1000", "abc", "", "1e2", "1.5", "9" * 30, "%00", "%", "%zz", "%EF%BC%95", "%2B5", "%205")
VALID_PER_PAGES = (None, "1", "50", "100")
# Anything but a whole number from 1 to 100 is 400 (`ImportRunPage`).
REFUSED_PER_PAGES = ("0", "101", "-1", "1000", "abc", "1e2", "1.5", "9" * 30, "%2B5", "%205", "%EF%BC%95")


# ------------------------------------------------------------------------------------------ the tests


@fuzz
@given(data=st.data())
def test_search(admin: ConsoleAdmin, data):
    """GET /admin/users with filters of every shape, pages and per_page: never another app's users;
    the console finds an account by its id, address, phone or (unique) name in its app."""
    credential = data.draw(credentials(admin), label="credential")
    search = data.draw(searches(admin, credential.wellformed_app), label="search")
    reply = admin.exchange("search", "GET", b"/auth/v1/admin/users" + search.query, credential)
    app = credential.wellformed_app
    if search.expected is not None:
        assert reply.status == 200 and search.expected.id in reply.user_ids(), \
            f"{app}'s console did not find {search.expected.id} with {search.query!r}: {reply.status} {reply.user_ids()}"
        CHECKED["searches finding their user"] += 1
    elif app and search.named is not None and search.named.app != app and reply.status == 200:
        assert search.named.id not in reply.user_ids(), f"a {search.named.app} user found by {app}'s console"
        CHECKED["searches naming another app's user: not found"] += 1


READS = {"user": "", "sessions": "/sessions", "factors": "/factors", "factor": "/factors/{factor}"}


@fuzz
@given(data=st.data())
def test_user_reads(admin: ConsoleAdmin, data):
    """GET /admin/users/{id}, its sessions, its factors (and GET of one factor, a method it does not
    serve): the console reads its app's users, and another app's are 404."""
    credential = data.draw(credentials(admin), label="credential")
    read = data.draw(st.sampled_from(sorted(READS)), label="read")
    target = data.draw(targets(admin, prefer=credential.wellformed_app), label="user")
    suffix = READS[read]
    factor: Optional[Target] = None
    if read == "factor":
        factor = data.draw(targets(admin, factor=True), label="factor")
        suffix = suffix.format(factor=factor.segment)
    about = tuple(account for account in (target.account, factor.account if factor else None) if account)
    reply = admin.exchange(read, "GET", admin.user_path(target.segment, suffix), credential, about=about)
    account, app = target.account, credential.wellformed_app
    if not (app and account and target.plain) or read == "factor":
        return
    if account.app != app or account.deleted:
        assert reply.status == 404, f"{app}'s console reading a {account.app} user{' (deleted)' if account.deleted else ''}: {reply.status} {reply.data}"
        if account.app != app:
            CHECKED["reads of another app's user: 404"] += 1
        return
    assert reply.status == 200, f"{app}'s console reading its own user ({read}): {reply.status} {reply.data}"
    if read == "user":
        assert str(reply.data.get("id", "")).lower() == account.id and reply.data.get("aud") == app, reply.data
    elif read == "sessions":
        sessions = reply.data.get("sessions")
        assert isinstance(sessions, list) and all(str(session.get("user_id", "")).lower() == account.id for session in sessions), reply.data
        assert "token" not in json.dumps(sessions), f"a session list holding a token: {reply.data}"
    elif account.factor:
        assert account.factor in [str(item.get("id", "")).lower() for item in reply.data], f"{account.factor} missing from {reply.data}"


ACTIONS = {"put": "PUT", "delete": "DELETE", "logout": "POST", "recover": "POST", "resend": "POST", "export": "POST", "delete_factor": "DELETE"}
# What a fixture must not undergo: aimed at a user of the test's own when the request may act in its app.
PROTECTED = {"put", "delete", "logout", "export", "delete_factor"}


@fuzz
@given(data=st.data())
def test_user_actions(admin: ConsoleAdmin, data):
    """PUT (bans of every shape, metadata, wrong JSON), DELETE, logout, recover, resend, export and a
    factor's DELETE: never on another app's user (404 for the console); now and then the whole life
    of a user the test makes, or of a fixture's factor."""
    credential = data.draw(credentials(admin), label="credential")
    app = credential.wellformed_app
    if app and data.draw(st.integers(min_value=0, max_value=4), label="lifecycle") == 0:
        lifecycle(admin, data, app)
        return
    action = data.draw(st.sampled_from(sorted(ACTIONS)), label="action")
    target = data.draw(targets(admin, prefer=app), label="user")
    if action in PROTECTED and target.account and target.account.fixture and target.account.app in admin.permitted(credential):
        target = retarget(target, admin.spare_user(target.account.app))
    method, suffix = ACTIONS[action], ""
    body: Optional[bytes] = None
    content_type: Optional[bytes] = None
    typed, clean = True, True
    factor: Optional[Target] = None
    if action == "put":
        body, content_type, typed = data.draw(put_bodies(), label="body")
    elif action == "delete_factor":
        factor = data.draw(targets(admin, factor=True), label="factor")
        suffix, clean = f"/factors/{factor.segment}", factor.shaped
    elif action != "delete":
        suffix = f"/{action}"
        if action in ("recover", "resend") and data.draw(st.booleans()):
            suffix += "?redirect_to=" + data.draw(st.sampled_from(REDIRECTS), label="redirect_to")
            clean = False
        if data.draw(st.integers(min_value=0, max_value=4)) == 0:
            body = data.draw(st.sampled_from((b"{}", b"null", b"[", b'{"redirect_to": "https://evil.example/"}', b"\xff")), label="ignored body")
            content_type = b"application/json"
    about = tuple(account for account in (target.account, factor.account if factor else None) if account)
    reply = admin.exchange(action, method, admin.user_path(target.segment, suffix), credential, body, content_type, about=about)
    account = target.account
    if 200 <= reply.status < 300 and account:
        if action == "delete":
            account.deleted = True
        elif action == "put" and isinstance(reply.data, dict):
            account.email = reply.data.get("email") or None
        # Only the fixtures have factors, and this test aims at a fixture only for a request that does
        # not name its app: no factor deletion of its may succeed (the lifecycle deletes one on purpose).
        assert action != "delete_factor", f"{reply.status} deleting factor {factor} through the path of {target}"
    if app and account and target.plain and clean and account.app != app:
        if typed:
            assert reply.status == 404, f"{app}'s console {action} on a {account.app} user: {reply.status} {reply.data}"
        else:
            assert 400 <= reply.status < 500, f"{app}'s console {action} on a {account.app} user: {reply.status} {reply.data}"
        CHECKED["actions on another app's user: refused"] += 1


def lifecycle(admin: ConsoleAdmin, data, app: str) -> None:
    """A user the console makes in `app`: found by name and address there and nowhere else, banned
    (another app's console cannot lift it; its recovery mail is refused), unbanned, sometimes mailed a
    recovery link and exported, maybe deleted; and now and then the app's fixture's factor deleted
    (never by another app) and enrolled again."""
    console = admin.console(app)
    other = admin.console(data.draw(st.sampled_from([name for name in APPS if name != app]), label="other app"))
    user = admin.create_user(app)
    assert user.name and user.email
    for text in (user.name.lower(), user.email.upper()):
        query = b"/auth/v1/admin/users?filter=" + quote(text, safe="").encode()
        found = admin.exchange("search", "GET", query, console)
        assert found.status == 200 and user.id in found.user_ids(), f"{app}'s console did not find {text!r}: {found.status} {found.data}"
        elsewhere = admin.exchange("search", "GET", query, other)
        assert elsewhere.status == 200 and user.id not in elsewhere.user_ids(), f"another app's console found {text!r}: {elsewhere.data}"
        CHECKED["searches finding their user"] += 1
    path = admin.user_path(user.id)

    def put(credential: Credential, duration: str) -> Reply:
        return admin.exchange("put", "PUT", path, credential, json.dumps({"ban_duration": duration}).encode(), b"application/json", about=(user,))

    duration = data.draw(st.sampled_from(BAN_DURATIONS), label="ban")
    assert put(other, duration).status == 404
    banned = put(console, duration)
    assert banned.status == 200 and isinstance(banned.data.get("banned_until"), str), f"a ban of {duration}: {banned.status} {banned.data}"
    refused = admin.exchange("recover", "POST", admin.user_path(user.id, "/recover"), console, about=(user,))
    assert refused.status == 400 and refused.code == "user_banned", f"recovery of a banned user: {refused.status} {refused.data}"
    assert put(other, "none").status == 404
    shown = admin.exchange("user", "GET", path, console, about=(user,))
    assert shown.status == 200 and isinstance(shown.data.get("banned_until"), str), f"another app's console lifted a ban: {shown.data}"
    lifted = put(console, "none")
    assert lifted.status == 200 and not lifted.data.get("banned_until"), f"unban: {lifted.status} {lifted.data}"
    CHECKED["bans and unbans of the test's users"] += 1
    if data.draw(st.integers(min_value=0, max_value=3), label="mail and export") == 0:
        # Unbanned, with a confirmed address nobody has mailed yet: the recovery mail goes out, there is
        # no confirmation to send again, and a subject access request starts (another app's console: 404).
        for action, status in (("recover", 204), ("resend", 422), ("export", 202)):
            action_path = admin.user_path(user.id, f"/{action}")
            assert admin.exchange(action, "POST", action_path, other, about=(user,)).status == 404
            sent = admin.exchange(action, "POST", action_path, console, about=(user,))
            assert sent.status == status, f"{action} for an unbanned user: {sent.status} {sent.data}"
        CHECKED["recoveries, resends and exports of the test's users"] += 1
    fixture = admin.fixture(app)
    if fixture.factor and data.draw(st.integers(min_value=0, max_value=3), label="factor") == 0:
        factor_path = admin.user_path(fixture.id, f"/factors/{fixture.factor}")
        assert admin.exchange("delete_factor", "DELETE", factor_path, other, about=(fixture,)).status == 404
        deleted = admin.exchange("delete_factor", "DELETE", factor_path, console, about=(fixture,))
        assert deleted.status == 200 and str(deleted.data.get("id", "")).lower() == fixture.factor, f"a factor's deletion: {deleted.status} {deleted.data}"
        fixture.factor = None
        admin.enroll_factor(fixture)
        CHECKED["factors deleted and enrolled again"] += 1
    if data.draw(st.booleans(), label="delete"):
        assert admin.exchange("delete", "DELETE", path, other, about=(user,)).status == 404
        assert admin.exchange("delete", "DELETE", path, console, about=(user,)).status == 200
        user.deleted = True
        assert admin.exchange("user", "GET", path, console, about=(user,)).status == 404
        CHECKED["deletions of the test's users"] += 1


@fuzz
@given(data=st.data())
def test_imports(admin: ConsoleAdmin, data):
    """GET /admin/imports?per_page=: the import runs of the app the request names, none of another's."""
    credential = data.draw(credentials(admin), label="credential")
    per_page = data.draw(st.one_of(st.none(), st.sampled_from(PER_PAGES), st.integers(min_value=-(10 ** 20), max_value=10 ** 20).map(str),
                                   st.binary(max_size=12).map(lambda raw: quote_from_bytes(raw, safe=""))), label="per_page")
    parts = [b"per_page=" + per_page.encode()] if per_page is not None else []
    junk = data.draw(st.lists(st.sampled_from(JUNK), max_size=2) if data.draw(st.integers(min_value=0, max_value=4)) == 0 else st.just([]), label="junk")
    parts = data.draw(st.permutations(parts + [item.encode() for item in junk]))
    reply = admin.exchange("imports", "GET", b"/auth/v1/admin/imports" + (b"?" + b"&".join(parts) if parts else b""), credential)
    app = credential.wellformed_app
    if app and per_page in VALID_PER_PAGES and not junk:
        runs = reply.data.get("imports") if reply.status == 200 and isinstance(reply.data, dict) else None
        assert isinstance(runs, list) and len(runs) <= int(per_page or 50), f"{app}'s import runs, per_page={per_page}: {reply.status} {reply.data}"
        CHECKED["import lists read"] += 1
    elif app and per_page in REFUSED_PER_PAGES and not junk:
        assert reply.status == 400, f"per_page={per_page}: {reply.status} {reply.data}"


def test_fixtures_untouched(admin: ConsoleAdmin):
    """After the fuzz (it runs last): each fixture is as it was — there, not banned, its factor
    enrolled, its session alive (nobody signed it out)."""
    for fixture in [account for account in admin.accounts if account.fixture]:
        console = admin.console(fixture.app)
        shown = admin.exchange("user", "GET", admin.user_path(fixture.id), console, about=(fixture,))
        assert shown.status == 200 and not shown.data.get("banned_until"), f"the {fixture.app} fixture: {shown.status} {shown.data}"
        factors = admin.exchange("factors", "GET", admin.user_path(fixture.id, "/factors"), console, about=(fixture,))
        assert factors.status == 200 and fixture.factor in [str(item.get("id", "")).lower() for item in factors.data], \
            f"the {fixture.app} fixture's factor {fixture.factor}: {factors.data}"
        assert fixture.user is not None
        expect(fixture.user.get("/auth/v1/user"), 200)
