"""Fixtures for driving the Colony auth service through the official Supabase
Python auth client (supabase_auth.SyncGoTrueClient) -- no Colony-specific HTTP.

Target configuration comes from the environment (all required):
  COLONY_AUTH_URL             e.g. http://127.0.0.1:PORT/auth/v1
  COLONY_ANON_KEY             anon key of app "mycirclee" (autoconfirm on, email OTP)
  COLONY_ANON_KEY_HABITHIVE   anon key of app "habithive" (phone OTP)
  COLONY_ANON_KEY_UNIFY       anon key of app "unify" (email confirmation required)
  COLONY_ANON_KEY_IBELIEVEINYOU  anon key of app "ibelieveinyou" (autoconfirm), run with its
                              reauthentication window at 0: every password change needs a
                              code from GET /reauthenticate (the Swift test configures it so)
  COLONY_DEV_MAIL_DIR         folder where the dev sender writes <unix_ms>-<uuid>.json
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional

import pytest
import httpx
from supabase_auth import SyncGoTrueClient

REQUIRED_ENV = (
    "COLONY_AUTH_URL",
    "COLONY_ANON_KEY",
    "COLONY_ANON_KEY_HABITHIVE",
    "COLONY_ANON_KEY_UNIFY",
    "COLONY_ANON_KEY_IBELIEVEINYOU",
    "COLONY_DEV_MAIL_DIR",
)


def pytest_sessionstart(session: pytest.Session) -> None:
    # Fail the whole run up front (not per test) when the target is not configured.
    # --collect-only needs no server, so it is allowed without the variables.
    if session.config.option.collectonly:
        return
    missing = [name for name in REQUIRED_ENV if not os.environ.get(name)]
    if missing:
        raise pytest.UsageError(
            "Colony auth client tests need these environment variables: "
            + ", ".join(missing)
            + " (see Tests/AuthClientTests/conftest.py)"
        )


@dataclass(frozen=True)
class Target:
    url: str
    key_mycirclee: str
    key_habithive: str
    key_unify: str
    key_ibelieveinyou: str
    mail_dir: Path


@pytest.fixture(scope="session")
def target() -> Target:
    env = {name: os.environ.get(name, "") for name in REQUIRED_ENV}
    missing = [name for name, value in env.items() if not value]
    if missing:  # only reachable when sessionstart was bypassed
        pytest.fail("missing environment variables: " + ", ".join(missing), pytrace=False)
    return Target(
        url=env["COLONY_AUTH_URL"].rstrip("/"),
        key_mycirclee=env["COLONY_ANON_KEY"],
        key_habithive=env["COLONY_ANON_KEY_HABITHIVE"],
        key_unify=env["COLONY_ANON_KEY_UNIFY"],
        key_ibelieveinyou=env["COLONY_ANON_KEY_IBELIEVEINYOU"],
        mail_dir=Path(env["COLONY_DEV_MAIL_DIR"]),
    )


@pytest.fixture
def make_client(target: Target) -> Iterator[Callable[[str], SyncGoTrueClient]]:
    """Factory: make_client(apikey) -> a fresh SyncGoTrueClient, closed at teardown."""
    clients: list[SyncGoTrueClient] = []

    def make(key: str) -> SyncGoTrueClient:
        client = SyncGoTrueClient(
            url=target.url,
            headers={"apikey": key, "Authorization": f"Bearer {key}"},
            auto_refresh_token=False,
            persist_session=False,
            # The library's client as it makes it, but with 30 s instead of httpx's 5 s: the
            # whole suite shares two cores and bcrypt is slow on purpose.
            http_client=httpx.Client(follow_redirects=True, http2=True, timeout=30.0),
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def mycirclee(make_client, target: Target) -> SyncGoTrueClient:
    return make_client(target.key_mycirclee)


@pytest.fixture
def habithive(make_client, target: Target) -> SyncGoTrueClient:
    return make_client(target.key_habithive)


@pytest.fixture
def unify(make_client, target: Target) -> SyncGoTrueClient:
    return make_client(target.key_unify)


@pytest.fixture
def ibelieveinyou(make_client, target: Target) -> SyncGoTrueClient:
    return make_client(target.key_ibelieveinyou)


# ---------------------------------------------------------------- dev mailbox


class Mailbox:
    """Reads the dev sender's outbox: one JSON file per message, named
    <unix_ms>-<uuid>.json, with app/channel/to/kind/subject/text/code/link/sent_at."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @staticmethod
    def _norm(address: str) -> str:
        # Emails compare case-insensitively; phones with or without the leading "+".
        return address.strip().lower().lstrip("+")

    @staticmethod
    def _created_ms(path: Path) -> int:
        prefix = path.name.split("-", 1)[0]
        return int(prefix) if prefix.isdigit() else int(path.stat().st_mtime * 1000)

    def _matches(self, after: int, to: str, kinds: Optional[set[str]], app: Optional[str]) -> list[tuple[int, dict]]:
        found = []
        try:
            paths = list(self.folder.glob("*.json"))
        except OSError:
            return found  # folder not created yet
        for path in paths:
            try:
                created = self._created_ms(path)
                if created < after:
                    continue
                message = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # vanished or still being written; retried on the next poll
            if self._norm(str(message.get("to", ""))) != self._norm(to):
                continue
            if kinds is not None and message.get("kind") not in kinds:
                continue
            if app is not None and message.get("app") != app:
                continue
            found.append((created, message))
        return found

    @staticmethod
    def now_ms() -> int:
        """A moment to pass as `after`; take it just before the request that sends."""
        return int(time.time() * 1000)

    def wait_for(
        self,
        to: str,
        *,
        after: int,
        kind: str | Iterable[str] | None = None,
        app: Optional[str] = None,
        timeout: float = 30.0,
    ) -> dict:
        """Newest message to `to` (optionally of `kind`/`app`) created at or after
        `after` (unix ms); polls up to `timeout` seconds, then fails the test. 30 s: a busy
        2-core machine took more than 5 s to deliver a sign-up's mail in a CI run."""
        kinds = None if kind is None else ({kind} if isinstance(kind, str) else set(kind))
        deadline = time.monotonic() + timeout
        while True:
            found = self._matches(after, to, kinds, app)
            if found:
                return max(found, key=lambda item: item[0])[1]
            if time.monotonic() >= deadline:
                pytest.fail(
                    f"no message to {to!r} (kind={sorted(kinds) if kinds else 'any'}, app={app or 'any'}) "
                    f"in {self.folder} within {timeout:g}s",
                    pytrace=False,
                )
            time.sleep(0.1)

    def wait_for_code(self, to: str, **kwargs) -> str:
        """The 6-digit OTP code of the newest matching message."""
        message = self.wait_for(to, **kwargs)
        code = str(message.get("code") or "")
        assert code.isdigit() and len(code) == 6, f"expected a 6-digit code, got {message!r}"
        return code


@pytest.fixture
def mailbox(target: Target) -> Mailbox:
    return Mailbox(target.mail_dir)
