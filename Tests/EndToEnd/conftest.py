"""Fixtures for the end-to-end journeys (see e2e_support.py for the configuration)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from e2e_support import ROOT, Api, Stack, read_anon_keys


@pytest.fixture(scope="session")
def stack() -> Stack:
    port = os.environ.get("COLONY_GATEWAY_PORT", "8080")
    gateway = os.environ.get("COLONY_GATEWAY_URL", f"http://127.0.0.1:{port}").rstrip("/")
    keys_file = Path(os.environ.get("COLONY_API_KEYS_FILE", ROOT / ".local" / "api-keys.txt"))
    mail_dir = Path(os.environ.get("COLONY_MAIL_DIR", ROOT / ".local" / "mail"))
    if not keys_file.is_file():
        raise pytest.UsageError(f"no API keys file at {keys_file}: start the stack with scripts/run (or use scripts/e2e)")
    try:
        health = httpx.get(f"{gateway}/health", timeout=5.0)
    except httpx.HTTPError as error:
        raise pytest.UsageError(f"the gateway at {gateway} does not answer ({error}): start the stack with scripts/run") from error
    if health.status_code != 200:
        raise pytest.UsageError(f"{gateway}/health answered {health.status_code}")
    return Stack(gateway=gateway, keys=read_anon_keys(keys_file), mail_dir=mail_dir)


@pytest.fixture
def api(stack: Stack):
    client = Api(stack)
    yield client
    client.close()


@pytest.fixture
def oauth_provider():
    """The stand-in OAuth/OIDC provider scripts/e2e starts (oauth_standin.py), its queue and log cleared."""
    from oauth_standin import OAuthProvider

    provider = OAuthProvider.from_environment()
    if provider is None:
        raise pytest.UsageError("COLONY_OAUTH_PROVIDER_URL is not set: the stand-in OAuth provider runs with scripts/e2e")
    provider.clear()
    yield provider
    provider.close()
