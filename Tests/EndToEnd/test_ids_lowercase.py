"""Ids are lower-case UUIDs in everything Colony answers, as auth, realtime, Postgres and Supabase
write them: apps compare ids as strings (`builder.user_id == currentUser.id`, a realtime row matched
to one on screen). The five apps' journeys (test_journeys.py) run again here with every response
through the gateway inspected: each UUID-shaped string in a body, in `Location` or in any other
header must be lower case, and so must every realtime payload the journeys receive. Upper-case ids
sent by a client are still read (the same resource answers, in lower case).

The fuzz stage's `ids_are_lower_case` check (Tests/Fuzz/hooks.py) does the same for every response
of every documented operation.
"""

from __future__ import annotations

import re
from collections import Counter

import httpx
import pytest

import test_journeys as journeys
from e2e_support import Api, Stack, expect

UUID = re.compile(r"(?<![0-9A-Za-z])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}(?![0-9A-Za-z])")


def upper_case_ids(text: str) -> list[str]:
    return [found for found in UUID.findall(text) if found != found.lower()]


class Inspector:
    """Every response of one Api's client: which operations answered, how many ids they held, and
    any upper-case one."""

    def __init__(self) -> None:
        self.operations: Counter[str] = Counter()
        self.ids = 0
        self.problems: list[str] = []

    def __call__(self, response: httpx.Response) -> None:
        response.read()
        request = response.request
        # The path with ids replaced, so repeated calls of one operation count once.
        operation = f"{request.method} {UUID.sub('{id}', request.url.path)}"
        self.operations[operation] += 1
        sent = f"{request.url} {request.content!r}"
        places = [("body", response.text)] + [(f"header {name}", value) for name, value in response.headers.items()]
        for where, text in places:
            self.ids += len(UUID.findall(text))
            self.problems += [f"{operation} -> {response.status_code}: {found} in {where}" for found in upper_case_ids(text) if found not in sent]

    def check_payload(self, where: str, payload) -> None:
        text = repr(payload)
        self.ids += len(UUID.findall(text))
        self.problems += [f"{where}: {found}" for found in upper_case_ids(text)]


@pytest.fixture
def inspected(stack: Stack, monkeypatch: pytest.MonkeyPatch):
    inspector = Inspector()
    api = Api(stack)
    api.http.event_hooks["response"].append(inspector)
    # Realtime: the post the MyCirclee journey receives over its channel, as the app gets it.
    receive = journeys.receive_post_over_realtime

    async def receive_and_check(*args, **kwargs):
        post, payload = await receive(*args, **kwargs)
        inspector.check_payload("realtime post_created payload", payload)
        return post, payload

    monkeypatch.setattr(journeys, "receive_post_over_realtime", receive_and_check)
    yield api, inspector
    api.close()


JOURNEYS = {
    "mycirclee": journeys.test_mycirclee_circle_post_reaches_the_other_member,
    "unify": journeys.test_unify_group_message_and_unread_count,
    "habithive": journeys.test_habithive_shared_streak_advances,
    "socialspot": journeys.test_socialspot_nearby_people_appear_and_disappear,
    "ibelieveinyou": journeys.test_ibelieveinyou_support_earns_karma,
}


@pytest.mark.parametrize("app", list(JOURNEYS))
def test_every_id_of_a_journey_is_lower_case(app: str, stack: Stack, inspected):
    api, inspector = inspected
    journey = JOURNEYS[app]
    arguments = journey.__code__.co_varnames[: journey.__code__.co_argcount]
    result = journey(**{name: {"api": api, "stack": stack}[name] for name in arguments})
    if hasattr(result, "__await__"):
        import asyncio

        asyncio.run(result)
    assert inspector.operations and inspector.ids > 0, "the journey answered no ids"
    assert not inspector.problems, "\n".join(inspector.problems[:40])
    print(f"{app}: {len(inspector.operations)} operations, {sum(inspector.operations.values())} responses, {inspector.ids} ids, all lower case")


def test_upper_case_ids_are_still_read(api: Api):
    owner = api.sign_up_confirmed("mycirclee", "ids-upper")
    circle = expect(owner.post("/circles/v1/circles", json={"name": "Case"}), 201)
    assert circle["id"] == circle["id"].lower()
    again = expect(owner.get(f"/circles/v1/circles/{circle['id'].upper()}"), 200)
    assert again["id"] == circle["id"], (again["id"], circle["id"])
    assert not upper_case_ids(str(again))
