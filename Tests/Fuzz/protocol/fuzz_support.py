"""What every protocol fuzzer (Tests/Fuzz/protocol/test_*.py) shares: the Hypothesis settings read from
the environment, and raw HTTP requests written byte for byte on a socket (an HTTP library would
normalise the very inputs under test), counted per kind with their statuses for the session's line.

Settings: COLONY_PROTOCOL_FUZZ_EXAMPLES (examples per test, 150; scripts/fuzz sets thousands) and
COLONY_FUZZ_SEED (derandomized, the same cases every run, unless it is set).
"""

from __future__ import annotations

import http.client
import os
import socket
from dataclasses import dataclass, field
from typing import Optional

import pytest
from hypothesis import HealthCheck, seed, settings

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
