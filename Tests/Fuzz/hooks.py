"""Schemathesis hooks for the fuzz stage (loaded through SCHEMATHESIS_HOOKS=hooks).

Every request carries the app's key and a fresh access token of the fuzz user, refreshed through
auth's refresh-token grant before the one-hour token could expire (scripts/fuzz runs for longer).
"""

from __future__ import annotations

import os
import threading

import httpx
import schemathesis


@schemathesis.auth(refresh_interval=600)
class ColonyUser:
    """The fuzz user's bearer token: the sign-up's first, then one from each refresh."""

    def __init__(self) -> None:
        self.gateway = os.environ["COLONY_FUZZ_GATEWAY"]
        self.apikey = os.environ["COLONY_FUZZ_APIKEY"]
        self.access_token = os.environ["COLONY_FUZZ_ACCESS_TOKEN"]
        self.refresh_token = os.environ.get("COLONY_FUZZ_REFRESH_TOKEN", "")
        self.first = True
        self.lock = threading.Lock()

    def get(self, case, ctx):
        with self.lock:
            if self.first or not self.refresh_token:
                self.first = False
                return self.access_token
            response = httpx.post(f"{self.gateway}/auth/v1/token", params={"grant_type": "refresh_token"},
                                  headers={"apikey": self.apikey}, json={"refresh_token": self.refresh_token}, timeout=30)
            response.raise_for_status()
            session = response.json()
            self.access_token, self.refresh_token = session["access_token"], session["refresh_token"]
            return self.access_token

    def set(self, case, data, ctx):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"
        case.headers["apikey"] = self.apikey


# Ids are lower-case UUIDs everywhere (bodies, Location and every other header), as auth, realtime,
# Postgres and Supabase write them: apps compare them as strings. A check on every response of
# every documented operation, so the fuzz stage covers them all.
import re

UPPER_CASE_UUID = re.compile(r"(?<![0-9A-Za-z])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}(?![0-9A-Za-z])")


def upper_case_uuids(text: str) -> list[str]:
    return [found for found in UPPER_CASE_UUID.findall(text) if found != found.lower()]


@schemathesis.check
def ids_are_lower_case(ctx, response, case):
    """No upper-case UUID in the body or a header, unless the request itself carried that text
    (a client's own upper-case id in a message it asked to be kept, say)."""
    sent = f"{response.request.url} {response.request.body!r}"
    places = [("body", response.content.decode("utf-8", "replace"))]
    places += [(f"header {name}", value) for name, values in response.headers.items() for value in values]
    for where, text in places:
        for found in upper_case_uuids(text):
            if found not in sent:
                raise AssertionError(f"upper-case id {found} in the response's {where}: ids are lower case")


# Rules a JSON Schema cannot state (relative to today, across fields, about the caller's own
# data), which the documents state in words: generated *valid* cases are brought within them, so
# a 422 for a valid case is always a real disagreement between a document and its service.
# Invalid (negative) cases are left alone. Which rules apply depends on the service under test
# (fuzz.py sets COLONY_FUZZ_SERVICE).
import datetime
import random
import uuid

SERVICE = os.environ.get("COLONY_FUZZ_SERVICE", "")

# Uploads are raw bodies whose bytes must be a file of the declared type: the smallest such file
# per audio type (schemathesis brings its own for images).
AUDIO_SAMPLES = {
    "audio/mp4": b"\x00\x00\x00\x18ftypM4A \x00\x00\x00\x00M4A isom",
    "audio/mpeg": b"ID3\x04\x00\x00\x00\x00\x00\x00",
    "audio/aac": b"\xff\xf1\x50\x80\x01\x7f\xfc",
    "audio/wav": b"RIFF\x24\x00\x00\x00WAVEfmt ",
    "audio/ogg": b"OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00",
    "audio/webm": b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01",
}


@schemathesis.serializer(*AUDIO_SAMPLES)
def audio(ctx, value):
    return AUDIO_SAMPLES[ctx.case.media_type]
REPAIRS: list[tuple[str, str, str, object]] = []


def rule(service: str, method: str, path: str):
    """Registers a repair of valid cases of one operation (path as in the document)."""

    def register(repair):
        REPAIRS.append((service, method.upper(), path, repair))
        return repair

    return register


def valid_idempotency_key(value) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= 255 and all(" " <= c <= "~" for c in value) and value.strip(" ") == value


@schemathesis.hook
def map_case(ctx, case):
    # A valid Idempotency-Key names one request: each case gets its own, so a replayed key is
    # never a different request (that is 422 idempotency_key_reused, as documented).
    if case.headers and valid_idempotency_key(case.headers.get("Idempotency-Key")):
        case.headers["Idempotency-Key"] = str(uuid.uuid4())
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return case
    for service, method, path, repair in REPAIRS:
        if service == SERVICE and case.operation.method.upper() == method and case.operation.path == path:
            repair(case)
    return case


def today() -> datetime.date:
    return datetime.datetime.now(datetime.timezone.utc).date()


def body_field(case, name: str):
    return case.body.get(name) if isinstance(case.body, dict) else None


@rule("nearby", "PATCH", "/nearby/v1/profile")
def birthday(case):
    # `birthday`: from 1900-01-01 to 13 years before today (UTC).
    if isinstance(body_field(case, "birthday"), str):
        last = today().replace(year=today().year - 13, day=1) - datetime.timedelta(days=1)
        pick = random.Random(case.body["birthday"]).randrange((last - datetime.date(1900, 1, 1)).days)
        case.body["birthday"] = (datetime.date(1900, 1, 1) + datetime.timedelta(days=pick)).isoformat()


MYCIRCLEE_KINDS = {"circle_post", "dm", "event_rsvp", "presence", "event_activity"}


@rule("notifications", "PATCH", "/notifications/v1/preferences")
def preferences(case):
    # Only the caller's app's kinds (the fuzz user is a MyCirclee user); quiet hours in a real
    # time zone, with start and end apart.
    kinds = body_field(case, "kinds")
    if isinstance(kinds, dict):
        case.body["kinds"] = {kind: on for kind, on in kinds.items() if kind in MYCIRCLEE_KINDS}
    quiet = body_field(case, "quiet_hours")
    if isinstance(quiet, dict):
        quiet["timezone"] = random.Random(str(quiet.get("timezone"))).choice(["UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo"])
        if quiet.get("start") == quiet.get("end") and isinstance(quiet.get("start"), str):
            quiet["end"] = "00:00" if quiet["start"] != "00:00" else "23:59"


@rule("notifications", "POST", "/notifications/v1/devices")
def device_token(case):
    # `token` and `apns_token` (the seeds' name) are one token: when both are strings, the same.
    token = body_field(case, "token")
    if isinstance(token, str) and isinstance(body_field(case, "apns_token"), str):
        case.body["apns_token"] = token


@rule("circles", "PATCH", "/circles/v1/profile")
def circles_birthday(case):
    # `birthday`: from 1900-01-01 to today (UTC).
    if isinstance(body_field(case, "birthday"), str):
        pick = random.Random(case.body["birthday"]).randrange((today() - datetime.date(1900, 1, 1)).days)
        case.body["birthday"] = (datetime.date(1900, 1, 1) + datetime.timedelta(days=pick)).isoformat()


@rule("circles", "POST", "/circles/v1/circles/{circle_id}/posts")
def poll_options(case):
    # Poll options differ once trimmed and compared case-insensitively.
    options = body_field(case, "poll_options")
    # A distinct prefix per option keeps them apart under any trimming and case mapping.
    if isinstance(options, list) and all(isinstance(option, str) for option in options):
        case.body["poll_options"] = [f"{index}|{option}"[:100] for index, option in enumerate(options)]


def instant(text):
    """An RFC 3339 date-time as an aware datetime (None when it is not one Python reads)."""
    if not isinstance(text, str):
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return None


def rfc3339(moment: datetime.datetime) -> str:
    moment = moment.astimezone(datetime.timezone.utc)
    return f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}Z"


def times_in_order(case, start: str, end: str):
    """When both are sent, `end` is not before `start` (times Python cannot read, such as year 0,
    are replaced by ones it can)."""
    first, last = body_field(case, start), body_field(case, end)
    if isinstance(first, str) and isinstance(last, str):
        if not instant(first) or not instant(last):
            case.body[start], case.body[end] = "2030-01-01T10:00:00Z", "2030-01-01T11:00:00Z"
        elif instant(last) < instant(first):
            case.body[start], case.body[end] = last, first


@rule("chat", "POST", "/chat/v1/events")
def event_times(case):
    times_in_order(case, "starts_at", "ends_at")


@rule("chat", "PATCH", "/chat/v1/events/{event_id}")
def event_patch_times(case):
    times_in_order(case, "starts_at", "ends_at")


@rule("chat", "GET", "/chat/v1/events")
def event_range(case):
    # `to` after `from`, at most 400 days later.
    query = case.query or {}
    if "from" not in query or "to" not in query:
        return
    first, last = instant(query.get("from")), instant(query.get("to"))
    if not first or not last or first.year >= 9999:
        query["from"], query["to"] = "2030-01-01T00:00:00Z", "2030-02-01T00:00:00Z"
    elif not (first < last <= first + datetime.timedelta(days=400)):
        query["to"] = rfc3339(first + datetime.timedelta(days=1))


@rule("chat", "GET", "/chat/v1/groups/{group_id}/messages")
def one_direction(case):
    # `before` or `after`, not both.
    if case.query and "before" in case.query and "after" in case.query:
        del case.query["after"]


TIME_ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney", "Pacific/Honolulu"]


@rule("habits", "PATCH", "/habits/v1/profile")
def habits_profile(case):
    # A time zone the server knows.
    if isinstance(body_field(case, "timezone"), str):
        case.body["timezone"] = random.Random(case.body["timezone"]).choice(TIME_ZONES)


def recent_day(seed) -> str:
    """A day well inside every user's last 365 days, whatever their time zone."""
    return (today() - datetime.timedelta(days=2 + random.Random(str(seed)).randrange(300))).isoformat()


def past_instant(seed) -> str:
    return rfc3339(datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=2 + random.Random(str(seed)).randrange(300)))


@rule("habits", "POST", "/habits/v1/habits/{habit_id}/logs")
def habit_log(case):
    # `date` today or up to 365 days back, `at` no later than now (and its day as recent).
    if isinstance(body_field(case, "date"), str):
        case.body["date"] = recent_day(case.body["date"])
    if isinstance(body_field(case, "at"), str):
        case.body["at"] = past_instant(case.body["at"])


@rule("habits", "POST", "/habits/v1/hives/{hive_id}/logs")
def hive_log(case):
    if isinstance(body_field(case, "at"), str):
        case.body["at"] = past_instant(case.body["at"])


@rule("habits", "GET", "/habits/v1/hives/{hive_id}/days")
def hive_days(case):
    # `from` not after `to`, at most 366 days apart.
    query = case.query or {}
    try:
        first, last = datetime.date.fromisoformat(query["from"]), datetime.date.fromisoformat(query["to"])
    except (KeyError, TypeError, ValueError):
        return
    if not (first <= last <= first + datetime.timedelta(days=366)):
        query["to"] = (first + datetime.timedelta(days=7)).isoformat() if first.year < 9999 else first.isoformat()
