"""Colony auth service driven only through supabase_auth.SyncGoTrueClient.

Every test uses fresh emails/phones, so the suite can rerun against the same
database. Apps: mycirclee (email+password, autoconfirm, email OTP), habithive
(phone OTP), unify (email+password, sign-up needs the emailed 6-digit code),
ibelieveinyou (email+password, autoconfirm; run so that every password change
needs a reauthentication code).
"""

from __future__ import annotations

import secrets
import time
import uuid

import pytest
from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError
from supabase_auth.helpers import decode_jwt
from supabase_auth.types import AuthResponse, Session, User


def unique_email(tag: str = "user") -> str:
    return f"{tag}-{uuid.uuid4().hex[:12]}@example.com"


def unique_phone() -> str:
    # E.164 in the US 555 range: "+1555" + 7 random digits.
    return "+1555" + "".join(secrets.choice("0123456789") for _ in range(7))


def strong_password() -> str:
    return "Pw-" + secrets.token_hex(8)


def assert_session(session: Session | None, user_id: str | None = None) -> Session:
    """A usable session: bearer JWT whose `sub` is the session's user."""
    assert session is not None, "expected a session"
    assert session.token_type.lower() == "bearer"
    assert session.access_token.count(".") == 2
    assert session.refresh_token
    assert session.expires_in > 0
    assert session.expires_at is not None and session.expires_at > time.time()
    claims = decode_jwt(session.access_token)["payload"]
    assert claims["sub"] == session.user.id
    assert claims.get("role") == "authenticated"
    if user_id is not None:
        assert session.user.id == user_id
    return session


def sign_up(client: SyncGoTrueClient, email: str, password: str, **data) -> AuthResponse:
    credentials = {"email": email, "password": password}
    if data:
        credentials["options"] = {"data": data}
    return client.sign_up(credentials)


# ------------------------------------------------------------ email + password


def test_sign_up_with_metadata_returns_session(mycirclee):
    email = unique_email("signup")
    res = sign_up(mycirclee, email, strong_password(), full_name="Ada")

    session = assert_session(res.session)
    user: User = res.user
    assert user is not None and user.id == session.user.id
    uuid.UUID(user.id)
    assert user.email == email
    assert user.aud == "mycirclee"  # Colony: the audience is the app
    assert user.user_metadata["full_name"] == "Ada"
    assert user.app_metadata["provider"] == "email"
    assert user.email_confirmed_at is not None  # autoconfirm
    assert user.created_at is not None
    # The client keeps the session in memory.
    assert mycirclee.get_session().access_token == session.access_token


def test_sign_in_with_password(make_client, target):
    email, password = unique_email("signin"), strong_password()
    user_id = sign_up(make_client(target.key_mycirclee), email, password).user.id

    res = make_client(target.key_mycirclee).sign_in_with_password({"email": email, "password": password})
    assert_session(res.session, user_id)
    assert res.user.email == email
    assert res.user.last_sign_in_at is not None


def test_sign_in_wrong_password_is_invalid_credentials(mycirclee):
    email = unique_email("wrongpw")
    sign_up(mycirclee, email, strong_password())

    with pytest.raises(AuthApiError) as err:
        mycirclee.sign_in_with_password({"email": email, "password": "not-the-password"})
    assert err.value.status == 400
    assert err.value.code == "invalid_credentials"
    assert mycirclee.get_session() is None


def test_get_user_with_access_token(make_client, target):
    email = unique_email("getuser")
    session = sign_up(make_client(target.key_mycirclee), email, strong_password()).session

    res = make_client(target.key_mycirclee).get_user(jwt=session.access_token)
    assert res is not None
    assert res.user.id == session.user.id
    assert res.user.email == email


def test_refresh_session_rotates_tokens(mycirclee):
    first = sign_up(mycirclee, unique_email("refresh"), strong_password()).session
    # JWT times have 1 s resolution; wait so the new access token cannot equal the old one.
    time.sleep(1.1)

    res = mycirclee.refresh_session(first.refresh_token)
    second = assert_session(res.session, first.user.id)
    assert res.user.id == first.user.id
    assert second.access_token != first.access_token
    assert second.refresh_token != first.refresh_token
    assert mycirclee.get_user(jwt=second.access_token).user.id == first.user.id


def test_refresh_with_garbage_token_fails(mycirclee):
    with pytest.raises(AuthApiError) as err:
        mycirclee.refresh_session("garbage-" + secrets.token_hex(8))
    assert err.value.status == 400


def test_update_user_metadata_after_set_session(make_client, target):
    session = sign_up(make_client(target.key_mycirclee), unique_email("meta"), strong_password(), full_name="Ada").session

    client = make_client(target.key_mycirclee)
    restored = client.set_session(session.access_token, session.refresh_token)
    assert restored.session is not None and restored.user.id == session.user.id

    res = client.update_user({"data": {"bio": "hi"}})
    assert res.user.id == session.user.id
    assert res.user.user_metadata["bio"] == "hi"
    assert res.user.user_metadata["full_name"] == "Ada"  # merged, not replaced
    assert client.get_user().user.user_metadata["bio"] == "hi"


def test_update_user_password_then_sign_in(make_client, target):
    email, old_password = unique_email("pwchange"), strong_password()
    client = make_client(target.key_mycirclee)
    sign_up(client, email, old_password)
    client.sign_in_with_password({"email": email, "password": old_password})

    res = client.update_user({"password": "newpass123"})
    assert res.user.email == email

    fresh = make_client(target.key_mycirclee)
    assert_session(fresh.sign_in_with_password({"email": email, "password": "newpass123"}).session, res.user.id)
    with pytest.raises(AuthApiError) as err:
        fresh.sign_in_with_password({"email": email, "password": old_password})
    assert err.value.code == "invalid_credentials"


# ------------------------------------------------------------ secure changes


def test_secure_email_change_needs_both_addresses(mycirclee, mailbox):
    old, new = unique_email("old"), unique_email("new")
    sign_up(mycirclee, old, strong_password())
    after = mailbox.now_ms()

    res = mycirclee.update_user({"email": new})
    assert res.user.email == old
    assert res.user.new_email == new

    # One code to the new address, one to the current: both must be entered.
    code_new = mailbox.wait_for_code(new, after=after, kind="email_change", app="mycirclee")
    code_old = mailbox.wait_for_code(old, after=after, kind="email_change", app="mycirclee")
    half = mycirclee.verify_otp({"email": old, "token": code_old, "type": "email_change"})
    assert half.session is None
    assert half.user.email == old and half.user.new_email == new

    done = mycirclee.verify_otp({"email": new, "token": code_new, "type": "email_change"})
    assert_session(done.session, half.user.id)
    assert done.user.email == new
    # The old address is told.
    notice = mailbox.wait_for(old, after=after, kind="email_changed", app="mycirclee")
    assert new in notice["text"]


def test_password_change_needs_reauthentication_code(ibelieveinyou, make_client, target, mailbox):
    email = unique_email("reauth")
    sign_up(ibelieveinyou, email, strong_password())

    with pytest.raises(AuthApiError) as err:
        ibelieveinyou.update_user({"password": "newpass123"})
    assert err.value.status == 400
    assert err.value.code == "reauthentication_needed"

    after = mailbox.now_ms()
    ibelieveinyou.reauthenticate()
    nonce = mailbox.wait_for_code(email, after=after, kind="reauthentication", app="ibelieveinyou")
    wrong = f"{(int(nonce) + 1) % 1_000_000:06d}"
    with pytest.raises(AuthApiError) as err:
        ibelieveinyou.update_user({"password": "newpass123", "nonce": wrong})
    assert err.value.status == 422
    assert err.value.code == "reauthentication_not_valid"

    res = ibelieveinyou.update_user({"password": "newpass123", "nonce": nonce})
    assert res.user.email == email
    fresh = make_client(target.key_ibelieveinyou)
    assert_session(fresh.sign_in_with_password({"email": email, "password": "newpass123"}).session, res.user.id)


# ------------------------------------------------------------ OTP sign-in


def test_email_otp_sign_in(mycirclee, mailbox):
    email = unique_email("otp")
    after = mailbox.now_ms()
    res = mycirclee.sign_in_with_otp({"email": email, "options": {"should_create_user": True}})
    assert res.user is None and res.session is None

    # A brand-new user may get the confirmation ("signup") mail; both verify as type "email".
    code = mailbox.wait_for_code(email, after=after, kind={"magiclink", "signup"}, app="mycirclee")
    res = mycirclee.verify_otp({"email": email, "token": code, "type": "email"})
    session = assert_session(res.session)
    assert res.user.email == email
    assert res.user.email_confirmed_at is not None
    assert mycirclee.get_user(jwt=session.access_token).user.id == res.user.id


def test_phone_otp_sign_in(habithive, mailbox):
    phone = unique_phone()
    after = mailbox.now_ms()
    res = habithive.sign_in_with_otp({"phone": phone})
    assert res.user is None and res.session is None

    message = mailbox.wait_for(phone, after=after, kind="sms", app="habithive")
    assert message["channel"] == "sms"
    code = str(message["code"])
    assert code.isdigit() and len(code) == 6

    res = habithive.verify_otp({"phone": phone, "token": code, "type": "sms"})
    assert_session(res.session)
    assert res.user.phone == phone.lstrip("+")  # GoTrue stores phones without "+"
    assert res.user.phone_confirmed_at is not None
    assert res.user.app_metadata["provider"] == "phone"


# ------------------------------------------------------------ confirmation, duplicates


def test_unify_sign_up_requires_email_confirmation(unify, mailbox):
    email, password = unique_email("unify"), strong_password()
    after = mailbox.now_ms()
    res = sign_up(unify, email, password)
    assert res.session is None
    assert res.user is not None and res.user.email == email
    assert res.user.email_confirmed_at is None

    # The account is made off the request path (a sign-up answers alike whether or not the address
    # has an account): it exists once its confirmation was mailed.
    code = mailbox.wait_for_code(email, after=after, kind="signup", app="unify")
    with pytest.raises(AuthApiError) as err:
        unify.sign_in_with_password({"email": email, "password": password})
    assert err.value.status == 400
    assert err.value.code == "email_not_confirmed"

    verified = unify.verify_otp({"email": email, "token": code, "type": "signup"})
    assert_session(verified.session, res.user.id)
    assert verified.user.email_confirmed_at is not None

    assert_session(unify.sign_in_with_password({"email": email, "password": password}).session, res.user.id)


def test_duplicate_sign_up_same_app_fails_other_app_ok(mycirclee, unify):
    email = unique_email("dup")
    first = sign_up(mycirclee, email, strong_password())
    assert first.session is not None

    with pytest.raises(AuthApiError) as err:
        sign_up(mycirclee, email, strong_password())
    assert err.value.status == 422
    assert err.value.code == "user_already_exists"

    # Apps are separate user pools: the same address signs up in unify (unconfirmed there).
    other = sign_up(unify, email, strong_password())
    assert other.session is None
    assert other.user.email == email
    assert other.user.id != first.user.id


# ------------------------------------------------------------ sign-out, api key


def test_sign_out_revokes_session(make_client, target):
    client = make_client(target.key_mycirclee)
    session = sign_up(client, unique_email("signout"), strong_password()).session

    client.sign_out()  # scope "global"; the client swallows API errors here
    assert client.get_session() is None

    other = make_client(target.key_mycirclee)
    with pytest.raises(AuthApiError) as err:
        other.get_user(jwt=session.access_token)
    assert err.value.status in (401, 403)
    with pytest.raises(AuthApiError) as err:
        other.refresh_session(session.refresh_token)
    assert 400 <= err.value.status < 500


def test_wrong_apikey_is_rejected(make_client, target):
    email, password = unique_email("apikey"), strong_password()
    sign_up(make_client(target.key_mycirclee), email, password)

    with pytest.raises(AuthApiError) as err:
        make_client("nope").sign_in_with_password({"email": email, "password": password})
    assert err.value.status == 401
