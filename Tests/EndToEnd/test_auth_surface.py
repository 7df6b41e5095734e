"""Auth's public surface, walked through the gateway (issue 34): every public route of Supabase
Auth's router (GoTrue v2.196.0, internal/api/api.go: the version Tests/EndToEnd/supabase/
gotrue-migrations/ comes from) must reach a handler. A route a client calls must never answer
404 `route_not_found` (the service's "no route for this method and path") nor the gateway's
`not_found` or a 405: any other answer, an error included (401 without a session, 404
`user_not_found` for a made-up id, 400 for an empty body), shows the route is served.

Left out: only the deprecated `/magiclink` (EXCLUDED). The features Colony does not offer (SAML,
the OAuth 2.1 server, custom providers, SCIM, passkeys) answer as GoTrue does with them off: 404
and the feature's code (DISABLED). Also: `GET /auth/v1/health` answers
GoTrue's {"version", "name", "description"} through the gateway, and it is the only one of auth's
health endpoints the gateway exposes (`/ready` and `/metrics` stay on the service's own port)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import httpx
import pytest

from e2e_support import ROOT, Api, Stack, expect

# (method, path under /auth/v1) for every route of api.go v2.196.0's router; `{id}` stands for a
# path parameter (a made-up id is sent).
GOTRUE_ROUTES: list[tuple[str, str]] = [
    ("GET", "/health"),
    ("GET", "/.well-known/jwks.json"),
    ("GET", "/.well-known/openid-configuration"),
    ("GET", "/.well-known/oauth-authorization-server"),
    ("GET", "/callback"),
    ("POST", "/callback"),
    ("GET", "/settings"),
    ("GET", "/authorize"),
    ("POST", "/invite"),
    ("POST", "/signup"),
    ("POST", "/recover"),
    ("POST", "/resend"),
    ("POST", "/magiclink"),
    ("POST", "/otp"),
    ("POST", "/token"),
    ("GET", "/verify"),
    ("POST", "/verify"),
    ("GET", "/reauthenticate"),
    ("GET", "/user"),
    ("PUT", "/user"),
    ("GET", "/user/identities/authorize"),
    ("DELETE", "/user/identities/{id}"),
    ("GET", "/user/oauth/grants"),
    ("DELETE", "/user/oauth/grants"),
    ("POST", "/factors"),
    ("POST", "/factors/{id}/verify"),
    ("POST", "/factors/{id}/challenge"),
    ("DELETE", "/factors/{id}"),
    ("POST", "/passkeys/authentication/options"),
    ("POST", "/passkeys/authentication/verify"),
    ("POST", "/passkeys/registration/options"),
    ("POST", "/passkeys/registration/verify"),
    ("GET", "/passkeys"),
    ("PATCH", "/passkeys/{id}"),
    ("DELETE", "/passkeys/{id}"),
    ("POST", "/sso"),
    ("GET", "/sso/saml/metadata"),
    ("POST", "/sso/saml/acs"),
    ("GET", "/admin/audit"),
    ("GET", "/admin/users"),
    ("POST", "/admin/users"),
    ("GET", "/admin/users/{id}/factors"),
    ("DELETE", "/admin/users/{id}/factors/{id}"),
    ("PUT", "/admin/users/{id}/factors/{id}"),
    ("GET", "/admin/users/{id}/passkeys"),
    ("DELETE", "/admin/users/{id}/passkeys/{id}"),
    ("GET", "/admin/users/{id}"),
    ("PUT", "/admin/users/{id}"),
    ("DELETE", "/admin/users/{id}"),
    ("POST", "/admin/generate_link"),
    ("GET", "/admin/sso/providers"),
    ("POST", "/admin/sso/providers"),
    ("GET", "/admin/sso/providers/{id}"),
    ("PUT", "/admin/sso/providers/{id}"),
    ("DELETE", "/admin/sso/providers/{id}"),
    ("POST", "/admin/oauth/clients"),
    ("GET", "/admin/oauth/clients"),
    ("GET", "/admin/oauth/clients/{id}"),
    ("PUT", "/admin/oauth/clients/{id}"),
    ("DELETE", "/admin/oauth/clients/{id}"),
    ("POST", "/admin/oauth/clients/{id}/regenerate_secret"),
    ("GET", "/admin/custom-providers"),
    ("POST", "/admin/custom-providers"),
    ("GET", "/admin/custom-providers/{id}"),
    ("PUT", "/admin/custom-providers/{id}"),
    ("DELETE", "/admin/custom-providers/{id}"),
    ("POST", "/oauth/clients/register"),
    ("POST", "/oauth/token"),
    ("GET", "/oauth/userinfo"),
    ("GET", "/oauth/authorize"),
    ("GET", "/oauth/authorizations/{id}"),
    ("POST", "/oauth/authorizations/{id}/consent"),
    ("GET", "/scim/v2/ServiceProviderConfig"),
    ("GET", "/scim/v2/ResourceTypes"),
    ("GET", "/scim/v2/Schemas"),
    # Last: it ends the session the walk uses.
    ("POST", "/logout"),
]

# Path prefixes left out, and why.
EXCLUDED: dict[str, str] = {
    "/magiclink": "deprecated by GoTrue (POST /otp replaces it; supabase clients no longer call it)",
}

# GoTrue features Colony does not offer, answered as GoTrue answers them switched off (its default):
# 404 with the feature's code, never route_not_found (Routes/DisabledFeatureRoutes.swift).
DISABLED: dict[str, str] = {
    "/sso": "saml_provider_disabled",  # SAML single sign-on: out of scope (issue 34)
    "/admin/sso": "saml_provider_disabled",
    "/oauth/": "feature_disabled",  # GoTrue as an OAuth 2.1 server for third-party apps
    "/admin/oauth": "feature_disabled",
    "/user/oauth/grants": "feature_disabled",
    "/.well-known/oauth-authorization-server": "feature_disabled",
    "/.well-known/openid-configuration": "feature_disabled",  # describes the OAuth 2.1 server's endpoints
    "/admin/custom-providers": "feature_disabled",  # Colony's providers are per app in the apps file
    "/scim/v2": "feature_disabled",
    "/passkeys": "passkey_disabled",
    "/admin/users/{id}/passkeys": "passkey_disabled",
}


def under(path: str, prefixes) -> str | None:
    return next((prefix for prefix in prefixes if path == prefix or path.startswith(prefix.rstrip("/") + "/")), None)


def excluded(path: str) -> str | None:
    prefix = under(path, EXCLUDED)
    return EXCLUDED[prefix] if prefix else None


SERVED = [(method, path) for method, path in GOTRUE_ROUTES if excluded(path) is None]


def service_role_key(app: str) -> str:
    keys = Path(os.environ.get("COLONY_API_KEYS_FILE", ROOT / ".local" / "api-keys.txt"))
    return next(line.split()[2] for line in keys.read_text().splitlines() if line.split()[:2] == [app, "service_role"])


@pytest.fixture(scope="module")
def walker(stack: Stack):
    """One signed-in MyCirclee user (the routes that need a session reach their handler) and the
    app's service-role key (the admin routes)."""
    api = Api(stack)
    user = api.sign_up_confirmed("mycirclee", "surface")
    yield api, user, service_role_key("mycirclee")
    api.close()


def test_the_walk_covers_the_router() -> None:
    # Every exclusion names a route that exists, and no route is listed twice.
    assert len(set(GOTRUE_ROUTES)) == len(GOTRUE_ROUTES)
    for prefix in [*EXCLUDED, *DISABLED]:
        assert any(path.startswith(prefix) for _, path in GOTRUE_ROUTES), prefix
    assert len(SERVED) >= 30


@pytest.mark.parametrize(("method", "path"), SERVED, ids=[f"{method} {path}" for method, path in SERVED])
def test_route_is_served(walker, method: str, path: str) -> None:
    api, user, service_key = walker
    concrete = path.replace("{id}", str(uuid.uuid4()))
    if path.startswith("/admin/") or path == "/invite":
        headers = {"apikey": service_key, "Authorization": f"Bearer {service_key}"}
    else:
        headers = user.headers()
    body = {} if method in ("POST", "PUT", "PATCH") else None
    response = api.http.request(method, f"/auth/v1{concrete}", headers=headers, json=body)
    assert response.status_code < 500, f"{method} {concrete} -> {response.status_code}: {response.text[:300]}"
    payload = response.json() if response.headers.get("content-type", "").startswith("application/json") and response.content else None
    code = payload.get("code") if isinstance(payload, dict) else None  # a list is an answer too (GET /admin/audit)
    unrouted = response.status_code == 405 or (response.status_code == 404 and code in ("route_not_found", "not_found"))
    assert not unrouted, f"{method} {path} is not routed: {response.status_code} {response.text[:300]}"
    disabled = under(path, DISABLED)
    if disabled:
        assert response.status_code == 404 and code == DISABLED[disabled], f"{method} {path}: {response.status_code} {response.text[:300]}"


def test_health_through_the_gateway_is_gotrues(stack: Stack) -> None:
    response = httpx.get(f"{stack.gateway}/auth/v1/health", timeout=10.0)
    body = expect(response, 200)
    assert set(body) == {"version", "name", "description"}, body
    assert all(isinstance(value, str) and value for value in body.values()), body
    # The other health endpoints of auth stay on its own port.
    for hidden in ("/auth/v1/ready", "/auth/v1/metrics"):
        assert httpx.get(f"{stack.gateway}{hidden}", timeout=10.0).status_code == 404, hidden
