"""Anonymous users through the gateway: an app that lets people try it before signing up.

scripts/e2e turns anonymous sign-ins on for MyCirclee (whose services accept anonymous users, the
default access policy) and Unify (whose access policy in the apps file, COLONY_APPS_FILE, refuses them), and
leaves them off for the other apps.
"""

from __future__ import annotations

import base64
import json

from e2e_support import Api, User, expect, password, unique_email
from supabase_source import service_role_key


def claims(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def sign_in_anonymously(api: Api, app: str, **metadata) -> User:
    # What supabase-swift's signInAnonymously sends: no address, no password.
    session = expect(api.http.post("/auth/v1/signup", headers=api.anon(app), json={"data": metadata}), 200)
    assert session["user"]["is_anonymous"] is True, session
    assert claims(session["access_token"])["is_anonymous"] is True, session
    return api._user(app, session)


def test_anonymous_sign_ins_only_where_the_app_allows_them(api: Api):
    for app, allowed in (("mycirclee", True), ("unify", True), ("habithive", False), ("socialspot", False), ("ibelieveinyou", False)):
        settings = expect(api.http.get("/auth/v1/settings", headers=api.anon(app)), 200)
        assert settings["external"]["anonymous_users"] is allowed, (app, settings)
        if not allowed:
            refused = expect(api.http.post("/auth/v1/signup", headers=api.anon(app), json={"data": {}}), 422)
            assert refused["code"] == "anonymous_provider_disabled", refused


def test_anonymous_user_tries_circles_then_converts_and_keeps_their_circle(api: Api):
    guest = sign_in_anonymously(api, "mycirclee", full_name="Guest Gina")
    circle = expect(guest.post("/circles/v1/circles", json={"name": "E2E Anonymous Circle"}), 201)
    circle_id = circle["id"].lower()
    assert [c["id"].lower() for c in expect(guest.get("/circles/v1/circles"), 200)] == [circle_id]

    # The same person signs up for real: PUT /user with an email and a password (MyCirclee
    # autoconfirms, so at once); the id stays.
    email, secret = unique_email("anon-convert"), password()
    updated = expect(guest.put("/auth/v1/user", json={"email": email, "password": secret}), 200)
    assert updated["id"].lower() == guest.id and updated["is_anonymous"] is False and updated["email"] == email, updated

    member = api.sign_in(app="mycirclee", email=email, secret=secret)
    assert member.id == guest.id
    assert claims(member.access_token)["is_anonymous"] is False
    assert [c["id"].lower() for c in expect(member.get("/circles/v1/circles"), 200)] == [circle_id]
    # The operator sees a permanent account.
    key = service_role_key("mycirclee")
    admin = expect(api.http.get(f"/auth/v1/admin/users/{guest.id}", headers={"apikey": key, "Authorization": f"Bearer {key}"}), 200)
    assert admin["is_anonymous"] is False and admin["email"] == email, admin


def test_unify_refuses_anonymous_users_until_they_convert(api: Api):
    guest = sign_in_anonymously(api, "unify")
    refused = expect(guest.get("/chat/v1/groups"), 403)
    assert refused["code"] == "anonymous_not_allowed", refused

    # Unify confirms addresses: the account stays anonymous until the mailed code is entered.
    email, secret = unique_email("anon-unify"), password()
    pending = expect(guest.put("/auth/v1/user", json={"email": email, "password": secret}), 200)
    assert pending["is_anonymous"] is True and pending["new_email"] == email, pending
    mail = api.mailbox.wait_for_mail(email)
    member = api.verify("unify", {"type": "email_change", "email": email, "token": str(mail["code"])})
    assert member.id == guest.id
    assert claims(member.access_token)["is_anonymous"] is False
    expect(member.get("/chat/v1/groups"), 200)

