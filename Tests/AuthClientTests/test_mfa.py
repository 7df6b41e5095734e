"""MFA through the official Supabase Python client (supabase_auth): TOTP enrollment,
challenge and verify into an aal2 session, list_factors, get_authenticator_assurance_level,
unenroll, and an operator's admin.mfa.list_factors / delete_factor.

Run by AuthMFATests.supabasePythonClient, which also passes COLONY_SERVICE_ROLE_KEY (MyCirclee).
The TOTP codes are computed here (RFC 6238, SHA-1, 6 digits, 30 s) from the secret the
service hands out, as an authenticator app would.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import struct
import time
import uuid

import httpx
import pytest
from supabase_auth import SyncGoTrueAdminAPI
from supabase_auth.errors import AuthApiError

PASSWORD = "correct-horse-1"


def totp(secret: str, at: float | None = None, step_offset: int = 0) -> str:
    key = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
    counter = int((time.time() if at is None else at) // 30) + step_offset
    mac = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    value = struct.unpack(">I", mac[offset : offset + 4])[0] & 0x7FFFFFFF
    return f"{value % 1_000_000:06d}"


@pytest.fixture
def admin(target):
    key = os.environ.get("COLONY_SERVICE_ROLE_KEY")
    if not key:
        pytest.fail("COLONY_SERVICE_ROLE_KEY is required (the Swift test passes it)", pytrace=False)
    client = httpx.Client(timeout=30.0)
    yield SyncGoTrueAdminAPI(url=target.url, headers={"apikey": key, "Authorization": f"Bearer {key}"}, http_client=client)
    client.close()


def signed_up(client) -> tuple[str, str]:
    email = f"mfa-py-{uuid.uuid4().hex[:10]}@example.com"
    response = client.sign_up({"email": email, "password": PASSWORD})
    assert response.session is not None, "MyCirclee autoconfirms: sign-up signs in"
    return email, response.user.id


def test_enroll_challenge_verify_and_assurance_levels(mycirclee):
    email, user_id = signed_up(mycirclee)
    level = mycirclee.mfa.get_authenticator_assurance_level()
    assert (level.current_level, level.next_level) == ("aal1", "aal1")
    assert [entry.method for entry in level.current_authentication_methods] == ["password"]

    enrolled = mycirclee.mfa.enroll({"factor_type": "totp", "friendly_name": "Phone app", "issuer": "MyCirclee"})
    assert enrolled.type == "totp" and enrolled.friendly_name == "Phone app"
    # The client prepends the data URI prefix to GoTrue's raw SVG.
    assert enrolled.totp.qr_code.startswith("data:image/svg+xml;utf-8,<svg")
    assert enrolled.totp.uri.startswith(f"otpauth://totp/MyCirclee:{email}?")
    assert f"secret={enrolled.totp.secret}" in enrolled.totp.uri
    assert len(enrolled.totp.secret) == 32

    # Listed but unverified: not in the verified lists.
    mycirclee.get_user()
    factors = mycirclee.mfa.list_factors()
    assert [f.id for f in factors.all] == [enrolled.id] and factors.all[0].status == "unverified"
    assert factors.totp == []

    challenge = mycirclee.mfa.challenge({"factor_id": enrolled.id})
    assert challenge.factor_type == "totp" and challenge.expires_at > time.time()
    with pytest.raises(AuthApiError) as wrong:
        mycirclee.mfa.verify({"factor_id": enrolled.id, "challenge_id": challenge.id, "code": totp(enrolled.totp.secret, step_offset=5)})
    assert wrong.value.code == "mfa_verification_failed"

    verified = mycirclee.mfa.verify({"factor_id": enrolled.id, "challenge_id": challenge.id, "code": totp(enrolled.totp.secret)})
    assert verified.access_token and verified.refresh_token and verified.user.id == user_id
    level = mycirclee.mfa.get_authenticator_assurance_level()
    assert (level.current_level, level.next_level) == ("aal2", "aal2")
    assert [entry.method for entry in level.current_authentication_methods] == ["totp", "password"]
    factors = mycirclee.mfa.list_factors()
    assert [f.id for f in factors.totp] == [enrolled.id] and factors.phone == []

    # A new sign-in is aal1 with aal2 next; challenge_and_verify (a code of the next step: the
    # current one was used) brings it to aal2.
    mycirclee.sign_out()
    mycirclee.sign_in_with_password({"email": email, "password": PASSWORD})
    level = mycirclee.mfa.get_authenticator_assurance_level()
    assert (level.current_level, level.next_level) == ("aal1", "aal2")
    used = totp(enrolled.totp.secret)
    while totp(enrolled.totp.secret) == used:
        time.sleep(1)
    mycirclee.mfa.challenge_and_verify({"factor_id": enrolled.id, "code": totp(enrolled.totp.secret)})
    assert mycirclee.mfa.get_authenticator_assurance_level().current_level == "aal2"

    # The refreshed session keeps aal2.
    refreshed = mycirclee.refresh_session()
    assert refreshed.session is not None
    assert mycirclee.mfa.get_authenticator_assurance_level().current_level == "aal2"

    unenrolled = mycirclee.mfa.unenroll({"factor_id": enrolled.id})
    assert unenrolled.id == enrolled.id
    mycirclee.get_user()
    assert mycirclee.mfa.list_factors().all == []


def test_verified_factor_needs_aal2_to_unenroll(mycirclee):
    email, _ = signed_up(mycirclee)
    enrolled = mycirclee.mfa.enroll({"factor_type": "totp", "friendly_name": "first"})
    mycirclee.mfa.challenge_and_verify({"factor_id": enrolled.id, "code": totp(enrolled.totp.secret)})
    mycirclee.sign_out()
    mycirclee.sign_in_with_password({"email": email, "password": PASSWORD})
    with pytest.raises(AuthApiError) as refused:
        mycirclee.mfa.unenroll({"factor_id": enrolled.id})
    assert refused.value.code == "insufficient_aal"
    with pytest.raises(AuthApiError) as second:
        mycirclee.mfa.enroll({"factor_type": "totp", "friendly_name": "second"})
    assert second.value.code == "insufficient_aal"


def test_admin_lists_and_deletes_factors(mycirclee, admin):
    _, user_id = signed_up(mycirclee)
    enrolled = mycirclee.mfa.enroll({"factor_type": "totp", "friendly_name": "lost phone"})
    mycirclee.mfa.challenge_and_verify({"factor_id": enrolled.id, "code": totp(enrolled.totp.secret)})

    listed = admin.mfa.list_factors({"user_id": user_id})
    assert [(f.id, f.status, f.factor_type, f.friendly_name) for f in listed] == [(enrolled.id, "verified", "totp", "lost phone")]
    deleted = admin.mfa.delete_factor({"user_id": user_id, "id": enrolled.id})
    assert deleted.id == enrolled.id
    assert admin.mfa.list_factors({"user_id": user_id}) == []
    # The session that reached aal2 with it is back at aal1 from its next refresh.
    mycirclee.refresh_session()
    level = mycirclee.mfa.get_authenticator_assurance_level()
    assert (level.current_level, level.next_level) == ("aal1", "aal1")
