"""What every protocol fuzzer (Tests/Fuzz/protocol/test_*.py) shares: the Hypothesis settings read from
the environment, and raw HTTP requests written byte for byte on a socket (an HTTP library would
normalise the very inputs under test), counted per kind with their statuses for the session's line,
and the gateway the auth fuzzers send them through.

Settings: COLONY_PROTOCOL_FUZZ_EXAMPLES (examples per test, 150; scripts/fuzz sets thousands) and
COLONY_FUZZ_SEED (derandomized, the same cases every run, unless it is set).
"""

from __future__ import annotations

import http.client
import json
import os
import random
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, seed, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "EndToEnd"))
from e2e_support import ROOT, read_anon_keys  # noqa: E402

EXAMPLES = int(os.environ.get("COLONY_PROTOCOL_FUZZ_EXAMPLES", "150"))
SEED = os.environ.get("COLONY_FUZZ_SEED")
TIMEOUT = 10.0


def fuzz(test):
    """The shared protocol-fuzz settings: examples from the environment, no deadline, derandomized."""
    configured = settings(max_examples=EXAMPLES, deadline=None, derandomize=SEED is None, database=None,
                          suppress_health_check=list(HealthCheck))(test)
    return seed(int(SEED))(configured) if SEED is not None else configured


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass
class RequestTally:
    """Requests per kind and the statuses they got."""
    cases: dict[str, int] = field(default_factory=dict)
    statuses: dict[str, dict[int, int]] = field(default_factory=dict)

    def count(self, kind: str, status: Optional[int] = None) -> None:
        if status is None:
            self.cases[kind] = self.cases.get(kind, 0) + 1
        else:
            tally = self.statuses.setdefault(kind, {})
            tally[status] = tally.get(status, 0) + 1

    @property
    def total(self) -> int:
        return sum(self.cases.values())

    @property
    def server_errors(self) -> int:
        return sum(n for tally in self.statuses.values() for status, n in tally.items() if status >= 500)

    def describe(self) -> str:
        return "; ".join(f"{kind}: {count} (" + ", ".join(f"{status}: {n}" for status, n in sorted(self.statuses.get(kind, {}).items())) + ")"
                         for kind, count in sorted(self.cases.items()))


def raw_request(host: str, port: int, method: str, target: bytes, header_lines: list[bytes], body: Optional[bytes],
                tally: RequestTally, kind: str, source: Optional[str] = None, described: str = "") -> Answer:
    """One HTTP/1.1 request written as given (Host and Connection: close added, Content-Length when
    there is a body), optionally from a loopback address of its own; fails the case on no answer
    within TIMEOUT or a dropped connection."""
    tally.count(kind)
    lines = [method.encode() + b" " + target + b" HTTP/1.1", f"Host: {host}:{port}".encode(), b"Connection: close", *header_lines]
    if body is not None:
        lines.append(f"Content-Length: {len(body)}".encode())
    request = b"\r\n".join(lines) + b"\r\n\r\n" + (body or b"")
    described = described or f"{method} {target[:300]!r}"
    sock = socket.create_connection((host, port), timeout=TIMEOUT, source_address=(source, 0) if source else None)
    try:
        sock.sendall(request)
        response = http.client.HTTPResponse(sock, method=method)
        try:
            response.begin()
            data = response.read()
        except socket.timeout:
            pytest.fail(f"no answer within {TIMEOUT:g}s: {described}")
        except (http.client.RemoteDisconnected, ConnectionResetError, http.client.IncompleteRead) as error:
            pytest.fail(f"connection dropped ({error!r}): {described}")
        tally.count(kind, response.status)
        return Answer(response.status, {name.lower(): value for name, value in response.getheaders()}, data)
    finally:
        sock.close()


class AuthGateway:
    """Raw requests to auth through the nginx gateway (COLONY_GATEWAY_URL or COLONY_GATEWAY_PORT), each
    from a loopback address of its own so auth's per-address budgets count one case, not the run; a
    case fails on a 5xx and on an error of auth's (it says X-Supabase-Api-Version) that is not
    {"code","message"}. The apps' anon and service-role keys come from COLONY_API_KEYS_FILE."""

    def __init__(self, tally: RequestTally, seed: int) -> None:
        port = os.environ.get("COLONY_GATEWAY_PORT", "8080")
        self.url = os.environ.get("COLONY_GATEWAY_URL", f"http://127.0.0.1:{port}").rstrip("/")
        parts = urlsplit(self.url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        keys_file = Path(os.environ.get("COLONY_API_KEYS_FILE", ROOT / ".local" / "api-keys.txt"))
        self.anon = read_anon_keys(keys_file)
        self.service: dict[str, str] = {}
        for line in keys_file.read_text(encoding="utf-8").splitlines():
            fields = line.split()
            if len(fields) == 3 and fields[1] == "service_role":
                self.service[fields[0]] = fields[2]
        self.tally = tally
        self.sources = random.Random(seed)

    def source(self) -> str:
        return f"127.{self.sources.randint(1, 254)}.{self.sources.randint(0, 255)}.{self.sources.randint(2, 254)}"

    def send(self, counter: str, method: str, target: bytes, headers: list, body: Optional[bytes], source: Optional[str] = None) -> int:
        """One request written as given (headers as (name, value) pairs or whole lines); the status."""
        lines = [header if isinstance(header, bytes) else header[0].encode() + b": " + header[1] for header in headers]
        described = f"{method} {target[:300]!r} headers={headers!r} body={(body or b'')[:300]!r}"
        response = raw_request(self.host, self.port, method, target, lines, body, self.tally, counter,
                               source=source or self.source(), described=described)
        assert response.status < 500, f"{response.status} {response.body[:500]!r} for {described}"
        if response.status >= 400 and response.body and "x-supabase-api-version" in response.headers:
            try:
                error = json.loads(response.body)
            except ValueError:
                error = None
            assert isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str), \
                f"{response.body[:300]!r} for {described}"
        return response.status
