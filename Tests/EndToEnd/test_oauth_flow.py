"""The OAuth web flow end to end through the gateway, against the stand-in provider scripts/e2e
starts (never the real Google, Apple or GitHub): PKCE and implicit, Apple's form_post, GitHub's
API, a generic OIDC issuer; a foreign redirect_to and a replayed state refused; a provider email
that must not take over an existing account; Google's id_token for a native app; manual linking
off by default.

SocialSpot has google, apple, github and acme; HabitHive google with a native client id.
"""

from __future__ import annotations

import hashlib
import html
import re
import secrets
from base64 import urlsafe_b64encode
from urllib.parse import parse_qs, quote, urlparse

import pytest

from e2e_support import expect, password, unique_email

CALLBACK = "socialspot://auth-callback"


def pkce_pair() -> tuple[str, str]:
    verifier = urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    challenge = urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def authorize_url(api, app: str, provider: str, redirect_to: str | None = CALLBACK, challenge: str | None = None) -> str:
    url = f"{api.stack.gateway}/auth/v1/authorize?provider={provider}&apikey={api.stack.keys[app]}"
    if redirect_to:
        url += "&redirect_to=" + quote(redirect_to, safe="")
    if challenge:
        url += f"&code_challenge={challenge}&code_challenge_method=s256"
    return url


def browse(api, url: str) -> list[str]:
    """Follows the flow as a browser does (redirects, Apple's form_post page) until auth sends it to
    the app (a URL that is not http). Returns every stop, the app's last."""
    stops, method, data = [], "GET", None
    for _ in range(10):
        response = api.http.request(method, url, data=data)
        stops.append(url)
        method, data = "GET", None
        if response.status_code in (302, 303):
            location = response.headers["location"]
            if not location.startswith("http"):
                return stops + [location]
            url = location
            continue
        form = re.search(r'<form method="post" action="([^"]*)">', response.text)
        assert response.status_code == 200 and form, f"the flow stopped at {url}: {response.status_code} {response.text[:300]}"
        url = html.unescape(form.group(1))
        data = {html.unescape(k): html.unescape(v) for k, v in re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)"/>', response.text)}
        method = "POST"
    raise AssertionError(f"too many redirects: {stops}")


def pkce_sign_in(api, app: str, provider: str) -> dict:
    verifier, challenge = pkce_pair()
    landing = browse(api, authorize_url(api, app, provider, challenge=challenge))[-1]
    assert landing.startswith(f"{app}://auth-callback?code="), landing
    code = parse_qs(urlparse(landing).query)["code"][0]
    return expect(api.http.post("/auth/v1/token", params={"grant_type": "pkce"}, headers=api.anon(app),
                                json={"auth_code": code, "code_verifier": verifier}), 200)


@pytest.mark.parametrize("provider,flavour", [("google", "oidc"), ("apple", "apple"), ("github", "github"), ("acme", "oidc")])
def test_oauth_pkce_web_flow(api, oauth_provider, provider, flavour):
    email = unique_email(f"oauth-{provider}")
    sub = oauth_provider.next(flavour, email=email, name="Ada Lovelace")
    session = pkce_sign_in(api, "socialspot", provider)
    user = session["user"]
    assert user["email"] == email and user["aud"] == "socialspot"
    identities = [(identity["provider"], identity["id"]) for identity in user["identities"]]
    assert identities == [(provider, sub)], identities
    me = expect(api.http.get("/auth/v1/user", headers={"apikey": api.stack.keys["socialspot"], "Authorization": f"Bearer {session['access_token']}"}), 200)
    assert me["id"] == user["id"]
    settings = expect(api.http.get("/auth/v1/settings", headers=api.anon("socialspot")), 200)
    assert settings["external"][provider] is True


def test_oauth_implicit_web_flow(api, oauth_provider):
    email = unique_email("oauth-implicit")
    oauth_provider.next("oidc", email=email)
    landing = browse(api, authorize_url(api, "socialspot", "google"))[-1]
    fragment = parse_qs(urlparse(landing).fragment)
    assert landing.startswith(CALLBACK + "#") and fragment["token_type"] == ["bearer"], landing
    me = expect(api.http.get("/auth/v1/user", headers={"apikey": api.stack.keys["socialspot"], "Authorization": f"Bearer {fragment['access_token'][0]}"}), 200)
    assert me["email"] == email


def test_foreign_redirect_and_replayed_state_are_refused(api, oauth_provider):
    # A redirect_to the app does not allow: the code goes to the site URL, never there.
    oauth_provider.next("oidc", email=unique_email("oauth-foreign"))
    _, challenge = pkce_pair()
    stops = browse(api, authorize_url(api, "socialspot", "google", redirect_to="https://evil.example.com/steal", challenge=challenge))
    assert stops[-1].startswith(CALLBACK + "?code="), stops
    # The callback replayed: refused, with the error where the app listens.
    callback = next(stop for stop in stops if "/auth/v1/callback" in stop)
    replay = browse(api, callback)[-1]
    replayed = parse_qs(urlparse(replay).query)
    assert replayed["error_code"] == ["flow_state_already_used"] and "code" not in replayed, replay
    # The user says no at the provider.
    oauth_provider.deny("oidc")
    denied = parse_qs(urlparse(browse(api, authorize_url(api, "socialspot", "google"))[-1]).query)
    assert denied["error"] == ["access_denied"], denied


def test_provider_email_cannot_take_over_an_account(api, oauth_provider):
    owner, secret = unique_email("oauth-owner"), password()
    owner_id = api.sign_up("socialspot", owner, secret)["user"]["id"]
    # A provider that did not verify the owner's address: a new account, without that address.
    oauth_provider.next("oidc", email=owner, email_verified=False)
    other = pkce_sign_in(api, "socialspot", "acme")["user"]
    assert other["id"] != owner_id and not other.get("email"), other
    api.sign_in("socialspot", owner, secret)
    # Pre-hijack: a squatter signed up with the victim's address; Google verified it for the victim.
    victim, squatter_secret = unique_email("oauth-victim"), password()
    squatter = api.sign_up("socialspot", victim, squatter_secret)
    oauth_provider.next("oidc", email=victim, email_verified=True)
    taken_back = pkce_sign_in(api, "socialspot", "google")
    assert taken_back["user"]["id"] == squatter["user"]["id"]
    refused = api.http.post("/auth/v1/token", params={"grant_type": "password"}, headers=api.anon("socialspot"),
                            json={"email": victim, "password": squatter_secret})
    assert refused.status_code == 400 and refused.json()["code"] == "invalid_credentials", refused.text
    stale = api.http.post("/auth/v1/token", params={"grant_type": "refresh_token"}, headers=api.anon("socialspot"),
                          json={"refresh_token": squatter["refresh_token"]})
    assert stale.status_code == 400, stale.text


def test_google_id_token_for_a_native_app(api, oauth_provider):
    nonce = secrets.token_urlsafe(16)
    email = unique_email("oauth-native")
    token = oauth_provider.id_token(aud="habithive-google-ios", email=email, nonce=hashlib.sha256(nonce.encode()).hexdigest())
    session = expect(api.http.post("/auth/v1/token", params={"grant_type": "id_token"}, headers=api.anon("habithive"),
                                   json={"provider": "google", "id_token": token, "nonce": nonce}), 200)
    assert session["user"]["email"] == email and session["user"]["identities"][0]["provider"] == "google"
    wrong = api.http.post("/auth/v1/token", params={"grant_type": "id_token"}, headers=api.anon("habithive"),
                          json={"provider": "google", "id_token": oauth_provider.id_token(aud="someone-else", email=email), "nonce": nonce})
    assert wrong.status_code == 400, wrong.text


def test_manual_linking_is_off_by_default(api, oauth_provider):
    user = api.sign_up_confirmed("socialspot", "oauth-nolink")
    refused = user.get("/auth/v1/user/identities/authorize", params={"provider": "github", "skip_http_redirect": "true"})
    assert refused.status_code == 404 and refused.json()["code"] == "manual_linking_disabled", refused.text
