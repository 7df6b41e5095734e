"""Anonymous users through the official supabase_auth client: sign_in_anonymously, then
update_user to make the account permanent, its id kept.

Run by AuthAnonymousTests.supabasePythonClient with anonymous sign-ins on for mycirclee
(autoconfirm) and unify (the new address must confirm), off for the other apps.
"""

from __future__ import annotations

import secrets
import uuid

import httpx
import pytest
from supabase_auth.errors import AuthApiError
from supabase_auth.helpers import decode_jwt


def unique_email(tag: str = "anon") -> str:
    return f"{tag}-{uuid.uuid4().hex[:12]}@example.com"


def strong_password() -> str:
    return "Pw-" + secrets.token_hex(8)


def claims(session) -> dict:
    return decode_jwt(session.access_token)["payload"]


def test_settings_say_which_apps_allow_anonymous_users(target):
    # GoTrue's GET /settings (the client has no call for it; supabase-js reads it the same way).
    def external(key: str) -> dict:
        response = httpx.get(f"{target.url}/settings", headers={"apikey": key}, timeout=30.0)
        assert response.status_code == 200
        return response.json()["external"]

    assert external(target.key_mycirclee)["anonymous_users"] is True
    assert external(target.key_ibelieveinyou)["anonymous_users"] is False


def test_anonymous_sign_in_refused_when_off(ibelieveinyou):
    with pytest.raises(AuthApiError) as refused:
        ibelieveinyou.sign_in_anonymously()
    assert refused.value.code == "anonymous_provider_disabled"
    assert refused.value.status == 422


def test_anonymous_session_then_conversion_keeps_the_id(mycirclee):
    res = mycirclee.sign_in_anonymously({"options": {"data": {"full_name": "Guest"}}})
    assert res.session is not None and res.user is not None
    assert res.user.is_anonymous is True
    assert res.user.email in (None, "")
    assert res.user.user_metadata.get("full_name") == "Guest"
    assert claims(res.session)["is_anonymous"] is True
    anonymous_id = res.user.id

    me = mycirclee.get_user()
    assert me.user.id == anonymous_id and me.user.is_anonymous is True

    email, password = unique_email(), strong_password()
    updated = mycirclee.update_user({"email": email, "password": password})
    assert updated.user.id == anonymous_id
    assert updated.user.is_anonymous is False
    assert updated.user.email == email

    refreshed = mycirclee.refresh_session()
    assert refreshed.session is not None
    assert claims(refreshed.session)["is_anonymous"] is False
    assert refreshed.user.id == anonymous_id

    mycirclee.sign_out()
    again = mycirclee.sign_in_with_password({"email": email, "password": password})
    assert again.user.id == anonymous_id and again.user.is_anonymous is False


def test_password_alone_is_refused_for_an_anonymous_user(mycirclee):
    mycirclee.sign_in_anonymously()
    with pytest.raises(AuthApiError) as refused:
        mycirclee.update_user({"password": strong_password()})
    assert refused.value.code == "validation_failed"


def test_an_address_already_used_is_refused(mycirclee, make_client, target):
    email = unique_email("owner")
    owner = make_client(target.key_mycirclee)
    owner.sign_up({"email": email, "password": strong_password()})
    mycirclee.sign_in_anonymously()
    with pytest.raises(AuthApiError) as refused:
        mycirclee.update_user({"email": email, "password": strong_password()})
    assert refused.value.code == "email_exists"
    assert mycirclee.get_user().user.is_anonymous is True


def test_conversion_waits_for_the_confirmation_code(unify, mailbox):
    res = unify.sign_in_anonymously()
    anonymous_id = res.user.id
    email, password = unique_email("confirm"), strong_password()
    after = mailbox.now_ms()
    pending = unify.update_user({"email": email, "password": password})
    assert pending.user.is_anonymous is True
    assert pending.user.new_email == email

    code = mailbox.wait_for_code(email, after=after, kind="email_change", app="unify")
    done = unify.verify_otp({"email": email, "token": code, "type": "email_change"})
    assert done.session is not None
    assert done.user.id == anonymous_id
    assert done.user.is_anonymous is False
    assert claims(done.session)["is_anonymous"] is False
