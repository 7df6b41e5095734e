"""Issue 34: resend and the operators' calls through the official client (supabase_auth):
`resend` for each type, `admin.invite_user_by_email` and `admin.generate_link` for each type.

Run from AuthOperatorCallsTests.supabasePythonClient, which passes, besides conftest.py's
variables, the service-role keys COLONY_SERVICE_KEY (mycirclee) and COLONY_SERVICE_KEY_UNIFY.
Apps: mycirclee (autoconfirm, secure email change), habithive (phone OTP), unify (confirms
addresses, German mails)."""

from __future__ import annotations

import os
import secrets
import time
import uuid

import pytest
from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError


def unique_email(tag: str = "user") -> str:
    return f"{tag}-{uuid.uuid4().hex[:12]}@example.com"


def unique_phone() -> str:
    return "+1555" + "".join(secrets.choice("0123456789") for _ in range(7))


def strong_password() -> str:
    return "Pw-" + secrets.token_hex(8)


@pytest.fixture
def admin(make_client) -> SyncGoTrueClient:
    key = os.environ.get("COLONY_SERVICE_KEY")
    if not key:
        pytest.fail("COLONY_SERVICE_KEY (mycirclee's service-role key) is required", pytrace=False)
    return make_client(key)


@pytest.fixture
def unify_admin(make_client) -> SyncGoTrueClient:
    key = os.environ.get("COLONY_SERVICE_KEY_UNIFY")
    if not key:
        pytest.fail("COLONY_SERVICE_KEY_UNIFY is required", pytrace=False)
    return make_client(key)


def codes(mailbox, to: str, after: int, count: int, kind: str) -> list[str]:
    """The codes of the first `count` messages of `kind` to `to` since `after` (waits for them)."""
    deadline = time.monotonic() + 10
    while True:
        found = sorted(mailbox._matches(after, to, {kind}, None), key=lambda item: item[0])
        if len(found) >= count:
            return [str(message.get("code")) for _, message in found]
        if time.monotonic() > deadline:
            pytest.fail(f"expected {count} {kind} messages to {to}, found {len(found)}", pytrace=False)
        time.sleep(0.1)


# ------------------------------------------------------------------ resend


def test_resend_signup_sends_the_same_code_and_answers_unknown_addresses_alike(unify: SyncGoTrueClient, mailbox) -> None:
    email, password = unique_email("resend"), strong_password()
    after = mailbox.now_ms()
    unify.sign_up({"email": email, "password": password})
    first = mailbox.wait_for_code(email, after=after, kind="signup")
    answer = unify.resend({"type": "signup", "email": email, "options": {"email_redirect_to": "unify://auth-callback"}})
    stranger = unify.resend({"type": "signup", "email": unique_email("nobody")})
    assert answer.model_dump() == stranger.model_dump() == {"user": None, "session": None, "message_id": None}
    assert codes(mailbox, email, after, 2, "signup") == [first, first]
    session = unify.verify_otp({"type": "signup", "email": email, "token": first}).session
    assert session is not None and session.user.email == email
    # The re-sent confirmation was the sign-up's own: its password signs in.
    assert unify.sign_in_with_password({"email": email, "password": password}).session is not None


def test_resend_sms_answers_a_message_id(habithive: SyncGoTrueClient, mailbox) -> None:
    phone = unique_phone()
    after = mailbox.now_ms()
    habithive.sign_in_with_otp({"phone": phone})
    code = mailbox.wait_for_code(phone, after=after, kind="sms")
    answer = habithive.resend({"type": "sms", "phone": phone})
    assert answer.message_id and uuid.UUID(answer.message_id)
    stranger = habithive.resend({"type": "sms", "phone": unique_phone()})
    assert stranger.message_id and stranger.message_id != answer.message_id
    assert codes(mailbox, phone, after, 2, "sms") == [code, code]
    assert habithive.verify_otp({"type": "sms", "phone": phone, "token": code}).session is not None


def test_resend_email_change_mails_both_addresses_again(mycirclee: SyncGoTrueClient, mailbox) -> None:
    current, new = unique_email("current"), unique_email("new")
    mycirclee.sign_up({"email": current, "password": strong_password()})
    after = mailbox.now_ms()
    mycirclee.update_user({"email": new})
    to_new = mailbox.wait_for_code(new, after=after, kind="email_change")
    to_current = mailbox.wait_for_code(current, after=after, kind="email_change")
    assert mycirclee.resend({"type": "email_change", "email": current}).message_id is None
    assert codes(mailbox, new, after, 2, "email_change") == [to_new, to_new]
    assert codes(mailbox, current, after, 2, "email_change") == [to_current, to_current]


def test_resend_rejects_an_unknown_type(mycirclee: SyncGoTrueClient) -> None:
    with pytest.raises(AuthApiError) as raised:
        mycirclee.resend({"type": "recovery", "email": unique_email()})  # type: ignore[typeddict-item]
    assert raised.value.status == 400 and raised.value.code == "validation_failed"


# ------------------------------------------------------------------ invitations


def test_invite_then_verify_then_set_a_password(admin: SyncGoTrueClient, mycirclee: SyncGoTrueClient, mailbox) -> None:
    email, password = unique_email("invitee"), strong_password()
    after = mailbox.now_ms()
    invited = admin.admin.invite_user_by_email(email, {"data": {"team": "blue"}, "redirect_to": "mycirclee://auth-callback"})
    assert invited.user.email == email and invited.user.email_confirmed_at is None
    assert invited.user.user_metadata.get("team") == "blue"
    message = mailbox.wait_for(email, after=after, kind="invite")
    assert "type=invite" in message["link"] and message["subject"] == "You have been invited to MyCirclee"
    session = mycirclee.verify_otp({"type": "invite", "email": email, "token": message["code"]}).session
    assert session is not None and session.user.id == invited.user.id and session.user.email_confirmed_at is not None
    mycirclee.update_user({"password": password})
    assert mycirclee.sign_in_with_password({"email": email, "password": password}).user.id == invited.user.id
    with pytest.raises(AuthApiError) as raised:
        admin.admin.invite_user_by_email(email)
    assert raised.value.status == 422 and raised.value.code == "email_exists"


def test_invite_speaks_the_apps_language(unify_admin: SyncGoTrueClient, mailbox) -> None:
    email = unique_email("eingeladen")
    after = mailbox.now_ms()
    unify_admin.admin.invite_user_by_email(email)
    assert mailbox.wait_for(email, after=after, kind="invite")["subject"] == "Du wurdest zu Unify eingeladen"


def test_invite_needs_the_service_role_key(mycirclee: SyncGoTrueClient) -> None:
    with pytest.raises(AuthApiError) as raised:
        mycirclee.admin.invite_user_by_email(unique_email())
    assert raised.value.status == 403 and raised.value.code == "not_admin"


# ------------------------------------------------------------------ generate_link


def check_properties(link, *, email: str, verification_type: str, link_type: str) -> None:
    properties = link.properties
    assert link.user.email == email and link.user.id
    assert properties.verification_type == verification_type
    assert properties.email_otp.isdigit() and len(properties.email_otp) == 6
    assert properties.redirect_to == "mycirclee://auth-callback"
    assert "/verify?" in properties.action_link
    assert f"token={properties.hashed_token}" in properties.action_link
    assert f"type={link_type}" in properties.action_link


def test_generate_link_each_type(admin: SyncGoTrueClient, mycirclee: SyncGoTrueClient, mailbox) -> None:
    email, password = unique_email("linked"), strong_password()
    after = mailbox.now_ms()

    signup = admin.admin.generate_link({"type": "signup", "email": email, "password": password, "options": {"data": {"plan": "pro"}}})
    check_properties(signup, email=email, verification_type="signup", link_type="signup")
    assert signup.user.user_metadata.get("plan") == "pro" and signup.user.email_confirmed_at is None
    session = mycirclee.verify_otp({"type": "signup", "token_hash": signup.properties.hashed_token}).session
    assert session is not None and session.user.id == signup.user.id
    assert mycirclee.sign_in_with_password({"email": email, "password": password}).session is not None

    magic = admin.admin.generate_link({"type": "magiclink", "email": email, "options": {"redirect_to": "mycirclee://auth-callback"}})
    check_properties(magic, email=email, verification_type="magiclink", link_type="magiclink")
    assert mycirclee.verify_otp({"type": "magiclink", "email": email, "token": magic.properties.email_otp}).session is not None

    recovery = admin.admin.generate_link({"type": "recovery", "email": email})
    check_properties(recovery, email=email, verification_type="recovery", link_type="recovery")
    assert mycirclee.verify_otp({"type": "recovery", "token_hash": recovery.properties.hashed_token}).session is not None

    moved = unique_email("moved")
    new = admin.admin.generate_link({"type": "email_change_new", "email": email, "new_email": moved})
    check_properties(new, email=email, verification_type="email_change_new", link_type="email_change")
    assert new.user.new_email == moved
    current = admin.admin.generate_link({"type": "email_change_current", "email": email, "new_email": moved})
    check_properties(current, email=email, verification_type="email_change_current", link_type="email_change")
    mycirclee.verify_otp({"type": "email_change", "token_hash": new.properties.hashed_token})
    done = mycirclee.verify_otp({"type": "email_change", "token_hash": current.properties.hashed_token})
    assert done.session is not None and done.session.user.email == moved

    guest = unique_email("guest")
    invite = admin.admin.generate_link({"type": "invite", "email": guest})
    check_properties(invite, email=guest, verification_type="invite", link_type="invite")
    assert mycirclee.verify_otp({"type": "invite", "token_hash": invite.properties.hashed_token}).session is not None

    stranger = unique_email("stranger")
    made = admin.admin.generate_link({"type": "magiclink", "email": stranger})
    check_properties(made, email=stranger, verification_type="signup", link_type="signup")

    with pytest.raises(AuthApiError) as raised:
        admin.admin.generate_link({"type": "recovery", "email": unique_email("missing")})
    assert raised.value.status == 404 and raised.value.code == "user_not_found"

    # generate_link mails no code or link (the finished email change notifies the old address).
    time.sleep(0.5)
    for address in (email, moved, guest, stranger):
        kinds = [message["kind"] for _, message in mailbox._matches(after, address, None, None)]
        assert kinds == (["email_changed"] if address == email else []), (address, kinds)


def test_generate_link_needs_the_service_role_key(mycirclee: SyncGoTrueClient) -> None:
    with pytest.raises(AuthApiError) as raised:
        mycirclee.admin.generate_link({"type": "magiclink", "email": unique_email()})
    assert raised.value.status == 403 and raised.value.code == "not_admin"
