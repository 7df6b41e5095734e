"""The stand-in OAuth/OIDC provider of the end-to-end stack (scripts/lib/oauth-provider.py, started by
scripts/e2e, never by the production scripts/run), driven over its control endpoints.

  COLONY_OAUTH_PROVIDER_URL  its base URL (issuers <base>/oidc and <base>/apple, GitHub at <base>/github)
  COLONY_APPS_FILE           the apps file scripts/e2e wrote: each app's `oauth_providers` (client ids)

The stack's providers (fixed test clients, their one redirect URI the gateway's /auth/v1/callback):
  socialspot  google (oidc), apple (web, form_post), github, acme (generic OIDC, also the oidc flavour)
  habithive   google, with native_client_ids ["habithive-google-ios"] for grant_type=id_token
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

import httpx


class OAuthProvider:
    def __init__(self, base: str, apps_file: Optional[str]):
        self.base = base.rstrip("/")
        self.http = httpx.Client(timeout=10.0)
        self.apps = json.loads(Path(apps_file).read_text()) if apps_file else {}

    @classmethod
    def from_environment(cls) -> Optional["OAuthProvider"]:
        base = os.environ.get("COLONY_OAUTH_PROVIDER_URL")
        return cls(base, os.environ.get("COLONY_APPS_FILE")) if base else None

    def issuer(self, flavour: str) -> str:
        return f"{self.base}/{flavour}"

    def settings(self, app: str, provider: str) -> dict:
        """The provider's entry in auth's apps file (client_id, native_client_ids, issuer…)."""
        return self.apps[app]["oauth_providers"][provider]

    def _control(self, method: str, path: str, body: Optional[dict] = None, params: Optional[dict] = None) -> Any:
        response = self.http.request(method, f"{self.base}/_control{path}", json=body, params=params)
        response.raise_for_status()
        return response.json()

    def next(self, flavour: str, sub: Optional[str] = None, email: Optional[str] = None, email_verified: bool = True,
             name: Optional[str] = None, client_id: Optional[str] = None, **extra: Any) -> str:
        """Queues the identity the next authorization of `flavour` ("oidc", "apple", "github") approves
        (of `client_id` only, when given); returns its sub. `extra`: picture, is_private_email, login,
        emails=[{"email","primary","verified"}], public_email, claims={...}."""
        body = {"flavour": flavour, "email_verified": email_verified, **extra}
        for key, value in (("sub", sub), ("email", email), ("name", name), ("client_id", client_id)):
            if value is not None:
                body[key] = value
        return self._control("POST", "/next", body)["sub"]

    def deny(self, flavour: str, error: Optional[str] = None) -> None:
        """The next authorization of `flavour` is refused by the user (access_denied; Apple: user_cancelled_authorize)."""
        self._control("POST", "/next", {"flavour": flavour, "deny": True, **({"error": error} if error else {})})

    def clear(self) -> None:
        """Drops queued identities and the request log (the fixture does it before each test)."""
        self._control("DELETE", "/next")
        self._control("DELETE", "/log")

    def id_token(self, aud: str, flavour: str = "oidc", sub: Optional[str] = None, email: Optional[str] = None,
                 email_verified: bool = True, nonce: Optional[str] = None, exp_in: int = 3600, **extra: Any) -> str:
        """An id_token signed by the flavour's published key (native grant_type=id_token); `nonce` as given
        (Apple's native flow carries sha256 hex of the app's nonce). extra: claims={...}, untrusted_key=True."""
        body = {"flavour": flavour, "aud": aud, "email_verified": email_verified, "exp_in": exp_in, **extra}
        for key, value in (("sub", sub), ("email", email), ("nonce", nonce)):
            if value is not None:
                body[key] = value
        return self._control("POST", "/id_token", body)["id_token"]

    def log(self, path: str = "") -> list[dict]:
        """The requests it saw, oldest first (client_secret redacted): method, path, query, form,
        client_auth, authorization, accept, status, answer."""
        return self._control("GET", "/log", params={"path": path})["requests"]

    def close(self) -> None:
        self.http.close()
