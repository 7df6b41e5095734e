"""The gateway's own answers (deploy/nginx/colony.conf.template, the same rules as compose.conf):
every one is JSON {"code","message"} with the right status, never nginx's HTML page.

- A method a path does not serve (TRACE, which nginx refuses itself; PROPFIND, which it forwards)
  is 405 with `Allow` from the service that owns the path, and 404 on a path no service owns.
- An unknown path under each service's prefix is that service's JSON 404; outside them, the
  gateway's. Metrics are never public.
- What nginx refuses before any service is asked: a request it cannot read (a NUL in the path),
  headers or a request line too large, a body over the limit, a transfer encoding or HTTP version
  it does not speak.
"""

from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

import httpx
import pytest

from e2e_support import Stack

# A path each prefix serves, and the methods it serves there (its `Allow`).
SERVED = {
    "auth": ("/auth/v1/user", {"GET", "PUT"}),
    "circles": ("/circles/v1/circles", {"GET", "POST"}),
    "chat": ("/chat/v1/groups", {"GET", "POST"}),
    "habits": ("/habits/v1/habits", {"GET", "POST"}),
    "nearby": ("/nearby/v1/profile", {"GET", "PATCH"}),
    "projects": ("/projects/v1/projects", {"GET", "POST"}),
    "notifications": ("/notifications/v1/preferences", {"GET", "PATCH"}),
}
PREFIXES = [*SERVED, "realtime"]
OUTSIDE = ["/nope", "/v1/circles", "/storage/v1/object/public/no-such-bucket/x.png", "/circles", "/__colony/errors/400"]


def error_body(response: httpx.Response | "RawResponse", status: int) -> dict:
    """The JSON error of a response with `status` (else the test fails with what came)."""
    assert response.status_code == status, f"{status} expected, got {response.status_code}: {response.text[:500]}"
    content_type = response.headers.get("content-type", "")
    assert content_type.startswith("application/json"), f"{status} as {content_type!r}: {response.text[:500]}"
    body = json.loads(response.text)
    assert isinstance(body, dict) and isinstance(body.get("code"), str) and isinstance(body.get("message"), str), body
    return body


def allowed(response) -> set[str]:
    return {method.strip() for method in response.headers.get("allow", "").split(",") if method.strip()}


class RawResponse:
    """An answer to bytes sent as they are (httpx would not send most of these requests)."""

    def __init__(self, data: bytes) -> None:
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        assert lines[0].startswith("HTTP/1.1 "), lines[0]
        self.status_code = int(lines[0].split(" ")[1])
        self.headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
        self.text = body.decode("utf-8", "replace")


def raw(stack: Stack, request: bytes) -> RawResponse:
    gateway = urlsplit(stack.gateway)
    with socket.create_connection((gateway.hostname, gateway.port or 80), timeout=15) as connection:
        connection.sendall(request)
        data = b""
        while True:
            try:
                chunk = connection.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            data += chunk
            head, separator, body = data.partition(b"\r\n\r\n")
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), None)
            if separator and length is not None and len(body) >= length:
                break
    assert data, f"no answer to {request[:80]!r}"
    return RawResponse(data)


@pytest.fixture
def gateway(stack: Stack):
    with httpx.Client(base_url=stack.gateway, timeout=30.0) as client:
        yield client


@pytest.mark.parametrize("method", ["TRACE", "PROPFIND", "CONNECTX", "QUERY"])
@pytest.mark.parametrize("service", list(SERVED))
def test_a_method_a_path_does_not_serve_is_405_with_allow(stack: Stack, gateway: httpx.Client, service: str, method: str):
    path, methods = SERVED[service]
    # TRACE never reaches a service through httpx's own checks either way: sent as bytes.
    response = raw(stack, f"{method} {path} HTTP/1.1\r\nHost: colony\r\nConnection: close\r\n\r\n".encode())
    body = error_body(response, 405)
    assert body["code"] == "method_not_allowed", body
    assert methods <= allowed(response), f"{method} {path}: Allow {response.headers.get('allow')!r}, expected {methods}"
    assert method not in allowed(response)


@pytest.mark.parametrize("method", ["GET", "POST", "TRACE", "PROPFIND", "DELETE"])
@pytest.mark.parametrize("path", OUTSIDE)
def test_paths_no_service_owns_are_404_json_for_every_method(stack: Stack, path: str, method: str):
    response = raw(stack, f"{method} {path} HTTP/1.1\r\nHost: colony\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".encode())
    assert error_body(response, 404)["code"] == "not_found"


@pytest.mark.parametrize("prefix", PREFIXES)
def test_an_unknown_path_under_each_prefix_is_the_services_json_404(gateway: httpx.Client, stack: Stack, prefix: str):
    for method in ("GET", "POST", "TRACE"):
        response = raw(stack, f"{method} /{prefix}/v1/no-such-route/at-all HTTP/1.1\r\nHost: colony\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".encode())
        error_body(response, 404)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_metrics_are_never_public(gateway: httpx.Client, stack: Stack, prefix: str):
    for method in ("GET", "TRACE"):
        response = raw(stack, f"{method} /{prefix}/v1/metrics HTTP/1.1\r\nHost: colony\r\nConnection: close\r\n\r\n".encode())
        assert error_body(response, 404)["code"] == "not_found"
    assert error_body(gateway.get("/metrics"), 404)["code"] == "not_found"


def test_health_serves_get_and_head_only(stack: Stack, gateway: httpx.Client):
    assert gateway.get("/health").status_code == 200 and gateway.head("/health").status_code == 200
    for method in ("POST", "DELETE", "TRACE", "PROPFIND"):
        response = raw(stack, f"{method} /health HTTP/1.1\r\nHost: colony\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".encode())
        assert error_body(response, 405)["code"] == "method_not_allowed"
        assert allowed(response) == {"GET", "HEAD"}, response.headers


@pytest.mark.parametrize(
    ("name", "request_bytes", "status", "code"),
    [
        ("a NUL in the path", b"GET /circles/v1/circles/%00 HTTP/1.1\r\nHost: colony\r\n\r\n", 400, "bad_request"),
        ("a NUL in a storage path", b"GET /storage/v1/object/public/profile-photos/a%00b HTTP/1.1\r\nHost: colony\r\n\r\n", 400, "bad_request"),
        ("a header line without a colon", b"GET /circles/v1/circles HTTP/1.1\r\nHost: colony\r\nBad Header\r\n\r\n", 400, "bad_request"),
        ("a request line that is not one", b"GARBAGE\r\n\r\n", 400, "bad_request"),
        ("a Content-Length that is not a number", b"POST /chat/v1/groups HTTP/1.1\r\nHost: colony\r\nContent-Length: ten\r\n\r\n", 400, "bad_request"),
        ("an oversized header", b"GET /chat/v1/groups HTTP/1.1\r\nHost: colony\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n", 431, "request_header_too_large"),
        ("an oversized cookie", b"GET /habits/v1/habits HTTP/1.1\r\nHost: colony\r\nCookie: c=" + b"b" * 70_000 + b"\r\n\r\n", 431, "request_header_too_large"),
        ("an oversized request line", b"GET /nearby/v1/" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: colony\r\n\r\n", 414, "uri_too_long"),
        ("a body over the limit", b"POST /projects/v1/projects HTTP/1.1\r\nHost: colony\r\nContent-Type: application/json\r\nContent-Length: 30000000\r\n\r\n", 413, "payload_too_large"),
        ("an unknown transfer encoding", b"POST /chat/v1/groups HTTP/1.1\r\nHost: colony\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "not_implemented"),
        ("an HTTP version nginx does not speak", b"GET /chat/v1/groups HTTP/2.7\r\nHost: colony\r\n\r\n", 505, "http_version_not_supported"),
    ],
)
def test_what_nginx_refuses_itself_is_json(stack: Stack, name: str, request_bytes: bytes, status: int, code: str):
    response = raw(stack, request_bytes)
    assert error_body(response, status)["code"] == code, name
