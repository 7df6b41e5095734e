"""POST /resend tells nobody who has an account (issue 34, as issue 33 for recover and OTP):
registered and unknown recipients, asked interleaved from outside through the gateway, get the
same status, body and time (medians), by mail (Unify's sign-up confirmation) and by SMS
(HabitHive's code, `message_id` either way); only the registered ones get a message. The probing
is test_account_oracle.py's (each batch from a loopback address of its own)."""

from __future__ import annotations

import random
import time
from typing import Callable

import httpx

from e2e_support import Api, Stack, expect, unique_email, unique_phone
from test_account_oracle import SAMPLES, answer, assert_same_time, client_from, mail_recipients, registered, service_role_key, wait_for_mail_to


def probe(stack: Stack, ask: Callable[[httpx.Client, str], httpx.Response], known: list[str], unknown: list[str]) -> tuple[list, list, list[float], list[float]]:
    """test_account_oracle's probe, paced: after each request the dispatcher gets a moment to
    send what a registered recipient's request queued, so that work (off the request path, the
    point of the queue) does not land inside the timing of whichever request comes next."""
    order = [(True, item) for item in known] + [(False, item) for item in unknown]
    random.Random(34).shuffle(order)
    answers: dict[bool, list] = {True: [], False: []}
    times: dict[bool, list[float]] = {True: [], False: []}
    for start in range(0, len(order), 10):
        with client_from(stack) as http:
            http.get("/health")  # the connection is open before the clock starts
            for is_known, item in order[start:start + 10]:
                started = time.perf_counter()
                response = ask(http, item)
                times[is_known].append((time.perf_counter() - started) * 1000)
                answers[is_known].append(answer(response, item))
                time.sleep(0.2)
    return answers[True], answers[False], times[True], times[False]


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
