"""POST /resend tells nobody who has an account (issue 34, as issue 33 for recover and OTP):
registered and unknown recipients, asked interleaved from outside through the gateway, get the
same status, body and time (medians), by mail (Unify's sign-up confirmation) and by SMS
(HabitHive's code, `message_id` either way); only the registered ones get a message. The probing
is test_account_oracle.py's (each batch from a loopback address of its own)."""

from __future__ import annotations

import time

import httpx

from e2e_support import Api, Stack, expect, unique_email, unique_phone
from test_account_oracle import SAMPLES, assert_same_time, mail_recipients, probe, registered, service_role_key, wait_for_mail_to


def registered_phone(stack: Stack, app: str) -> str:
    """An unconfirmed account with a phone number, made by the app's service role; its number."""
    phone = unique_phone()
    key = service_role_key(app)
    expect(httpx.post(f"{stack.gateway}/auth/v1/admin/users", headers={"apikey": key, "Authorization": f"Bearer {key}"},
                      json={"phone": phone}, timeout=30.0), 200)
    return phone


def test_resend_signup_answers_alike(api: Api, stack: Stack):
    known = [registered(stack, "unify", "oracle-resend", confirmed=False) for _ in range(SAMPLES)]
    unknown = [unique_email("oracle-resend-unknown") for _ in range(SAMPLES)]

    def resend(http: httpx.Client, email: str) -> httpx.Response:
        return http.post("/auth/v1/resend", headers=api.anon("unify"), json={"type": "signup", "email": email})

    known_answers, unknown_answers, known_ms, unknown_ms = probe(stack, resend, known, unknown)
    assert set(map(repr, known_answers)) == set(map(repr, unknown_answers)) == {repr((200, {}, False))}, (known_answers, unknown_answers)
    assert_same_time("POST /resend (signup)", known_ms, unknown_ms, floor_ms=5)
    for email in known:
        wait_for_mail_to(stack, email)
    time.sleep(1)
    assert not {e.lower() for e in unknown} & mail_recipients(stack)


def test_resend_sms_answers_alike(api: Api, stack: Stack):
    known = [registered_phone(stack, "habithive") for _ in range(SAMPLES)]
    unknown = [unique_phone() for _ in range(SAMPLES)]

    def resend(http: httpx.Client, phone: str) -> httpx.Response:
        return http.post("/auth/v1/resend", headers=api.anon("habithive"), json={"type": "sms", "phone": phone})

    known_answers, unknown_answers, known_ms, unknown_ms = probe(stack, resend, known, unknown)
    expected = repr((200, {"message_id": "<random>"}, False))
    assert set(map(repr, known_answers)) == set(map(repr, unknown_answers)) == {expected}, (known_answers, unknown_answers)
    assert_same_time("POST /resend (sms)", known_ms, unknown_ms, floor_ms=5)
    for phone in known:
        wait_for_mail_to(stack, phone)
    time.sleep(1)
    assert not set(unknown) & mail_recipients(stack)
