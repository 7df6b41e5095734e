"""Helpers for the end-to-end journeys: one running Colony stack (scripts/run), reached only
through its nginx gateway, the way the five iOS apps reach it.

Configuration (scripts/e2e sets all three; the defaults fit a `scripts/run` in this checkout):
  COLONY_GATEWAY_URL     http://127.0.0.1:8080 (http://127.0.0.1:$COLONY_GATEWAY_PORT)
  COLONY_API_KEYS_FILE   .local/api-keys.txt, lines `<app> <role> <key>` written by scripts/run
  COLONY_MAIL_DIR        .local/mail, where scripts/run's mail catcher saves each mail auth sent it over
                         SMTP (.eml), and auth writes each SMS (and, with COLONY_MAIL_CATCHER=0, each
                         mail) as JSON
"""

from __future__ import annotations

import asyncio
import contextlib
import email
import email.policy
import json
import os
import random
import re
import secrets
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
APPS = ("mycirclee", "unify", "habithive", "socialspot", "ibelieveinyou")

# Everything between services goes through Kafka: profiles come from auth's events, memberships
# reach realtime and notifications a moment later. Waits poll up to this long.
EVENTUAL_TIMEOUT = float(os.environ.get("COLONY_E2E_TIMEOUT", "30"))


def unique_email(tag: str) -> str:
    return f"e2e-{tag}-{uuid.uuid4().hex[:12]}@example.com"


def unique_phone() -> str:
    # E.164 in the US 555 range, random per run.
    return "+1555" + "".join(secrets.choice("0123456789") for _ in range(7))


def password() -> str:
    return "Pw-" + secrets.token_hex(8)


def wait_until(what: str, check: Callable[[], Any], timeout: float = EVENTUAL_TIMEOUT, interval: float = 0.25) -> Any:
    """Calls `check` until it returns something truthy (returned) or `timeout` passes (test fails,
    with the last value or exception seen)."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = check()
            if last:
                return last
        except AssertionError as error:  # a check may assert; keep polling until the deadline
            last = error
        if time.monotonic() >= deadline:
            pytest.fail(f"timed out after {timeout:g}s waiting for {what}; last seen: {last!r}", pytrace=False)
        time.sleep(interval)


def expect(response: httpx.Response, *statuses: int) -> Any:
    """The JSON body of a response with one of `statuses` (else the test fails with the body)."""
    assert response.status_code in statuses, (
        f"{response.request.method} {response.request.url.path} -> {response.status_code} "
        f"(expected {statuses}): {response.text[:2000]}"
    )
    if not response.content:
        return None
    return response.json()


@dataclass(frozen=True)
class Stack:
    gateway: str
    keys: dict[str, str]  # app -> anon key
    mail_dir: Path

    @property
    def realtime_url(self) -> str:
        # The `realtime` client turns http:// into ws:// and appends /websocket.
        return f"{self.gateway}/realtime/v1"


@dataclass
class User:
    """A signed-in user of one app, calling the gateway as that app would."""

    app: str
    api: "Api"
    access_token: str
    id: str
    email: Optional[str] = None
    phone: Optional[str] = None
    refresh_token: Optional[str] = None
    extra: dict[str, Any] = field(default_factory=dict)

    def headers(self) -> dict[str, str]:
        return {"apikey": self.api.stack.keys[self.app], "Authorization": f"Bearer {self.access_token}"}

    def request(self, method: str, path: str, **kwargs) -> httpx.Response:
        headers = {**self.headers(), **kwargs.pop("headers", {})}
        return self.api.http.request(method, path, headers=headers, **kwargs)

    def get(self, path: str, **kwargs) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, json: Any = None, **kwargs) -> httpx.Response:
        return self.request("POST", path, json=json, **kwargs)

    def patch(self, path: str, json: Any = None, **kwargs) -> httpx.Response:
        return self.request("PATCH", path, json=json, **kwargs)

    def put(self, path: str, json: Any = None, **kwargs) -> httpx.Response:
        return self.request("PUT", path, json=json, **kwargs)

    def delete(self, path: str, **kwargs) -> httpx.Response:
        return self.request("DELETE", path, **kwargs)


class Mailbox:
    """Auth's development outbox: one `<unix ms>-<uuid>.json` per mail or SMS, with
    app/channel/to/kind/subject/text/code/link/sent_at."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @staticmethod
    def _norm(address: str) -> str:
        return address.strip().lower().lstrip("+")

    def wait_for(self, to: str, *, app: str, kind: str, timeout: float = EVENTUAL_TIMEOUT) -> dict:
        def newest() -> Optional[dict]:
            found: list[tuple[str, dict]] = []
            for path in self.folder.glob("*.json") if self.folder.is_dir() else []:
                try:
                    message = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue  # vanished or still being written: the next poll sees it
                if (self._norm(str(message.get("to", ""))) == self._norm(to) and message.get("app") == app
                        and message.get("kind") == kind):
                    found.append((path.name, message))
            return max(found, key=lambda item: item[0])[1] if found else None

        return wait_until(f"a {app} {kind} message to {to} in {self.folder}", newest, timeout=timeout, interval=0.1)

    def wait_for_mail(self, to: str, *, timeout: float = EVENTUAL_TIMEOUT) -> dict:
        """The newest mail the SMTP mail catcher received for `to` (an .eml file), read as a person's
        mail program would: decoded subject and parts, the verification link and the 6-digit code
        taken from its text."""
        def newest() -> Optional[dict]:
            found: list[tuple[str, Any]] = []
            for path in self.folder.glob("*.eml") if self.folder.is_dir() else []:
                try:
                    message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
                except OSError:
                    continue
                if self._norm(str(message.get("Delivered-To", ""))) == self._norm(to):
                    found.append((path.name, message))
            if not found:
                return None
            message = max(found, key=lambda item: item[0])[1]
            text = message.get_body(preferencelist=("plain",)).get_content()
            html = message.get_body(preferencelist=("html",))
            links = re.findall(r"https?://\S+/auth/v1/verify\?\S+", text)
            # The code is the one the mail names as the code: the address above it may hold six digits
            # of its own ("e2e-ryw-name-123456-…@example.com" once failed a CI run that way).
            codes = re.findall(r"(?i)\bcode\b[^\n]*?:\s*(\d{6})\b", text)
            return {"subject": str(message["Subject"]), "from": str(message["From"]), "to": str(message["To"]),
                    "message_id": message["Message-ID"], "date": message["Date"], "text": text,
                    "html": html.get_content() if html else None,
                    "link": links[0] if links else None, "code": codes[0] if codes else None}

        return wait_until(f"a mail to {to} in {self.folder}", newest, timeout=timeout, interval=0.1)


class Api:
    """The gateway, as the apps see it: auth at /auth/v1, every service under its own prefix."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        # Each Api is one device of its own, as each phone is: a loopback address of its own (the
        # gateway hands auth the connection's address), so auth's per-address budgets (30 sign-ups
        # in 5 minutes) count one test's sign-ups, not the whole suite's.
        source = f"127.{random.randint(1, 254)}.{random.randint(0, 255)}.{random.randint(2, 254)}"
        # 30 s: bcrypt is slow on purpose and the machine has two shared cores.
        self.http = httpx.Client(base_url=stack.gateway, timeout=30.0, follow_redirects=False,
                                 transport=httpx.HTTPTransport(local_address=source))
        self.mailbox = Mailbox(stack.mail_dir)

    def close(self) -> None:
        self.http.close()

    def anon(self, app: str) -> dict[str, str]:
        key = self.stack.keys[app]
        return {"apikey": key, "Authorization": f"Bearer {key}"}

    def _user(self, app: str, session: dict, **known) -> User:
        assert session.get("access_token") and session.get("user", {}).get("id"), session
        user = session["user"]
        assert user.get("aud") == app, user
        return User(app=app, api=self, access_token=session["access_token"], refresh_token=session.get("refresh_token"),
                    id=user["id"].lower(), email=user.get("email"), phone=user.get("phone"), **known)

    # ------------------------------------------------------------------ GoTrue's API

    def sign_up(self, app: str, email: str, secret: str, **metadata) -> dict:
        body: dict[str, Any] = {"email": email, "password": secret}
        if metadata:
            body["data"] = metadata
        return expect(self.http.post("/auth/v1/signup", headers=self.anon(app), json=body), 200)

    def sign_up_confirmed(self, app: str, tag: str, **metadata) -> User:
        """Email + password sign-up in an app that confirms automatically: the answer is a session."""
        email, secret = unique_email(tag), password()
        session = self.sign_up(app, email, secret, **metadata)
        assert session.get("access_token"), f"{app} sign-up gave no session (autoconfirm expected): {session}"
        assert session["user"].get("email_confirmed_at"), session
        return self._user(app, session, extra={"password": secret})

    def sign_up_with_code(self, app: str, tag: str, **metadata) -> User:
        """Email + password sign-up in an app that confirms addresses (Unify): the mailed 6-digit
        code, typed into /verify, answers the session."""
        email, secret = unique_email(tag), password()
        self.sign_up(app, email, secret, **metadata)
        mail = self.mailbox.wait_for_mail(email)
        assert mail["code"], mail
        user = self.verify(app, {"type": "signup", "email": email, "token": mail["code"]})
        user.extra["password"] = secret
        return user

    def sign_in(self, app: str, email: str, secret: str) -> User:
        session = expect(self.http.post("/auth/v1/token", params={"grant_type": "password"}, headers=self.anon(app),
                                        json={"email": email, "password": secret}), 200)
        return self._user(app, session)

    def verify(self, app: str, body: dict) -> User:
        return self._user(app, expect(self.http.post("/auth/v1/verify", headers=self.anon(app), json=body), 200))

    def phone_otp_sign_in(self, app: str, **metadata) -> User:
        """Phone OTP: POST /otp creates the user and texts a code (into the mail folder); POST /verify
        with it answers a session."""
        phone = unique_phone()
        body: dict[str, Any] = {"phone": phone, "create_user": True}
        if metadata:
            body["data"] = metadata
        expect(self.http.post("/auth/v1/otp", headers=self.anon(app), json=body), 200)
        sms = self.mailbox.wait_for(phone, app=app, kind="sms")
        assert sms["channel"] == "sms" and str(sms["code"]).isdigit() and len(str(sms["code"])) == 6, sms
        user = self.verify(app, {"type": "sms", "phone": phone, "token": str(sms["code"])})
        assert user.phone == phone.lstrip("+"), (user.phone, phone)
        return user

    def follow_mailed_link(self, app: str, link: str) -> User:
        """Opens a mailed verification link as the phone's browser would (through the gateway) and
        takes the session from the fragment of the app redirect it answers."""
        parts = urlsplit(link)
        gateway = urlsplit(self.stack.gateway)
        assert (parts.scheme, parts.netloc) == (gateway.scheme, gateway.netloc), f"link {link} does not point at the gateway"
        assert parts.path == "/auth/v1/verify", link
        response = self.http.get(f"{parts.path}?{parts.query}")
        assert response.status_code in (302, 303), f"GET {parts.path} -> {response.status_code}: {response.text}"
        location = response.headers["location"]
        redirect = urlsplit(location)
        fragment = {k: v[0] for k, v in parse_qs(redirect.fragment).items()}
        assert "error" not in fragment, location
        assert fragment.get("access_token") and fragment.get("refresh_token"), location
        me = expect(self.http.get("/auth/v1/user", headers={"apikey": self.stack.keys[app],
                                                            "Authorization": f"Bearer {fragment['access_token']}"}), 200)
        return self._user(app, {"access_token": fragment["access_token"], "refresh_token": fragment["refresh_token"], "user": me},
                          extra={"redirect": location})


def read_anon_keys(path: Path) -> dict[str, str]:
    keys: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "anon":
            keys[parts[0]] = parts[2]
    missing = [app for app in APPS if app not in keys]
    if missing:
        raise pytest.UsageError(f"{path} has no anon key for: {', '.join(missing)}")
    return keys


@contextlib.asynccontextmanager
async def postgres_changes(stack: "Stack", app: str, user: "User", event: str, table: str, filter: str):
    """The user's app subscribed to `table`'s `event` rows (postgres_changes, as supabase-swift does)
    over realtime through the gateway; yields the queue the payloads arrive in."""
    from realtime import AsyncRealtimeClient, RealtimeSubscribeStates

    client = AsyncRealtimeClient(stack.realtime_url, stack.keys[app], auto_reconnect=False, timeout=30)
    await client.connect()
    try:
        await client.set_auth(user.access_token)
        subscribed: asyncio.Future = asyncio.get_running_loop().create_future()
        changes: asyncio.Queue = asyncio.Queue()

        def on_state(state, error):
            if not subscribed.done():
                if state == RealtimeSubscribeStates.SUBSCRIBED:
                    subscribed.set_result(True)
                else:
                    subscribed.set_exception(RuntimeError(f"subscribe: {state} {error}"))

        channel = client.channel(f"{table}_{uuid.uuid4().hex[:8]}")
        channel.on_postgres_changes(event, schema="public", table=table, filter=filter, callback=changes.put_nowait)
        await channel.subscribe(on_state)
        await asyncio.wait_for(subscribed, 35)
        yield changes
    finally:
        await client.close()
