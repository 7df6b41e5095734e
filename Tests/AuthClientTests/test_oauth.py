"""The OAuth web flow and identities through the official client (supabase_auth), against the
stand-in provider (COLONY_OAUTH_PROVIDER_URL). Run by AuthOAuthTests.supabasePythonClient, which
configures SocialSpot with the providers google, acme (generic OIDC), apple and github on the
stand-in, and manual linking on.

Browsers send no headers, so the app is named by `apikey` in /authorize's query: the client
passes it through `options.query_params`.
"""

from __future__ import annotations

import html
import os
import re
import uuid
from typing import Iterator
from urllib.parse import parse_qs, urlparse

import httpx
import pytest
from supabase_auth import SyncGoTrueClient

CALLBACK = "socialspot://auth-callback"


@pytest.fixture
def provider() -> Iterator[httpx.Client]:
    url = os.environ.get("COLONY_OAUTH_PROVIDER_URL")
    if not url:
        pytest.fail("COLONY_OAUTH_PROVIDER_URL is not set (the stand-in provider's base URL)", pytrace=False)
    with httpx.Client(base_url=url, timeout=15.0) as client:
        client.delete("/_control/next").raise_for_status()  # nothing queued by an earlier test
        yield client


@pytest.fixture
def socialspot_key() -> str:
    return os.environ["COLONY_ANON_KEY_SOCIALSPOT"]


@pytest.fixture
def client_factory(target, socialspot_key):
    made: list[SyncGoTrueClient] = []

    def make(flow_type: str) -> SyncGoTrueClient:
        client = SyncGoTrueClient(
            url=target.url,
            headers={"apikey": socialspot_key, "Authorization": f"Bearer {socialspot_key}"},
            auto_refresh_token=False,
            persist_session=False,
            flow_type=flow_type,
            http_client=httpx.Client(follow_redirects=True, timeout=30.0),
        )
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


def queue_identity(provider: httpx.Client, flavour: str, **fields) -> str:
    answer = provider.post("/_control/next", json={"flavour": flavour, **fields})
    answer.raise_for_status()
    return answer.json()["sub"]


def browse(url: str) -> str:
    """Follows the flow like a browser (redirects, Apple's form_post page) until auth sends it to the app."""
    with httpx.Client(follow_redirects=False, timeout=30.0) as browser:
        method, data = "GET", None
        for _ in range(10):
            response = browser.request(method, url, data=data)
            method, data = "GET", None
            if response.status_code in (302, 303):
                location = response.headers["location"]
                if not location.startswith("http"):
                    return location
                url = location
                continue
            form = re.search(r'<form method="post" action="([^"]*)">', response.text)
            assert response.status_code == 200 and form, f"the flow stopped at {url}: {response.status_code} {response.text[:300]}"
            url = html.unescape(form.group(1))
            data = {html.unescape(k): html.unescape(v) for k, v in re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)"/>', response.text)}
            method = "POST"
        raise AssertionError("too many redirects")


def unique_email(tag: str) -> str:
    return f"{tag}-{uuid.uuid4().hex[:10]}@example.com"


# The client's `Provider` type lists GoTrue's built-in providers only, so an operator's own OIDC
# issuer ("acme") is not callable through sign_in_with_oauth (AuthOAuthTests drives it over HTTP).
@pytest.mark.parametrize("provider_name,flavour", [("google", "oidc"), ("apple", "apple"), ("github", "github")])
def test_sign_in_with_oauth_pkce(client_factory, provider, socialspot_key, provider_name, flavour):
    client = client_factory("pkce")
    email = unique_email(provider_name)
    sub = queue_identity(provider, flavour, email=email, email_verified=True, name="Ada Lovelace")
    started = client.sign_in_with_oauth({"provider": provider_name, "options": {"redirect_to": CALLBACK, "query_params": {"apikey": socialspot_key}}})
    assert "code_challenge=" in started.url and "provider=" + provider_name in started.url
    landing = browse(started.url)
    assert landing.startswith(CALLBACK + "?code="), landing
    code = parse_qs(urlparse(landing).query)["code"][0]
    session = client.exchange_code_for_session({"auth_code": code}).session
    assert session is not None and session.user.email == email
    identities = client.get_user_identities().identities
    assert [(identity.provider, identity.id) for identity in identities] == [(provider_name, sub)]
    assert identities[0].identity_data["email"] == email


def test_sign_in_with_oauth_implicit(client_factory, provider, socialspot_key):
    client = client_factory("implicit")
    email = unique_email("implicit")
    queue_identity(provider, "oidc", email=email, email_verified=True)
    started = client.sign_in_with_oauth({"provider": "google", "options": {"redirect_to": CALLBACK, "query_params": {"apikey": socialspot_key}}})
    assert "code_challenge" not in started.url
    landing = browse(started.url)
    fragment = urlparse(landing).fragment
    assert "access_token=" in fragment and "token_type=bearer" in fragment, landing
    # The client reads the session from the redirect's parameters.
    client.initialize_from_url(CALLBACK + "?" + fragment)
    session = client.get_session()
    assert session is not None and session.user.email == email


def test_foreign_redirect_goes_to_the_site_url(client_factory, provider, socialspot_key):
    client = client_factory("pkce")
    queue_identity(provider, "oidc", email=unique_email("foreign"), email_verified=True)
    started = client.sign_in_with_oauth({"provider": "google", "options": {"redirect_to": "https://evil.example.com/cb", "query_params": {"apikey": socialspot_key}}})
    landing = browse(started.url)
    assert landing.startswith(CALLBACK + "?code="), landing


def test_link_get_and_unlink_identities(client_factory, provider, socialspot_key):
    client = client_factory("pkce")
    email = unique_email("linker")
    signed_up = client.sign_up({"email": email, "password": "linker-pass-1"})
    assert signed_up.session is not None
    user_id = signed_up.user.id
    github_email = unique_email("gh")
    sub = queue_identity(provider, "github", email=github_email, email_verified=True)
    linked = client.link_identity({"provider": "github", "options": {"redirect_to": CALLBACK}})
    landing = browse(linked.url)
    code = parse_qs(urlparse(landing).query)["code"][0]
    session = client.exchange_code_for_session({"auth_code": code}).session
    assert session is not None and session.user.id == user_id
    identities = client.get_user_identities().identities
    assert sorted(identity.provider for identity in identities) == ["email", "github"]
    github = next(identity for identity in identities if identity.provider == "github")
    assert github.id == sub and github.user_id == user_id
    client.unlink_identity(github)
    assert [identity.provider for identity in client.get_user_identities().identities] == ["email"]
    # Never the last one.
    with pytest.raises(Exception) as refused:
        client.unlink_identity(client.get_user_identities().identities[0])
    assert "single_identity_not_deletable" in repr(refused.value) or "at least 1 identity" in str(refused.value)
