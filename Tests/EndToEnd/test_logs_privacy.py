"""No personal data in Colony's logs (issue 40.3): the addresses, phone numbers, tokens and words of
a journey through three apps never appear in the logs of the services, the gateway, Postgres or the
broker, on the paths that tend to log them too: a refused sign-in, a sign-up with a taken address, a
recovery mail, a refresh, a forged token. Each value is unique to this run, so any hit is a leak."""

from __future__ import annotations

import base64
import json
import re
import uuid
from pathlib import Path

from e2e_support import Api, Stack, expect, password, wait_until
from supabase_source import LOG_DIR, local_env, pipeline_idle

# Logs that are not Colony's: stand-ins for third parties (the SMTP catcher is the mail provider,
# which holds the mails it was given; the OAuth provider) and the test scripts' own output.
NOT_COLONYS = {"mail-catcher.log", "oauth-provider.log", "e2e-run.log", "e2e-metrics.log", "clients-build.log", "faults-run.log", "teardown.log"}
JWT = re.compile(r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")


def names_a_person(token: str) -> bool:
    """Whether a JWT is a person's (an access token: `sub`, an address or a phone number), not an
    app's public anon key or the OAuth flow's state, which the gateway's error log may quote from a
    request line (nginx writes the query there)."""
    payload = token.split(".")[1]
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except ValueError:
        return True
    return not isinstance(claims, dict) or bool({"sub", "email", "phone"} & claims.keys())


def colonys_logs() -> list[Path]:
    return sorted(path for path in LOG_DIR.glob("*.log") if path.name not in NOT_COLONYS)


def test_no_personal_data_in_the_logs(api: Api, stack: Stack):
    words = f"private-words-{uuid.uuid4().hex[:12]}"

    # MyCirclee: an address and password, a circle and a post of one's own words.
    owner = api.sign_up_confirmed("mycirclee", "logs-owner", full_name=f"{words} name")
    expect(owner.get("/circles/v1/profile"), 200)
    circle = expect(owner.post("/circles/v1/circles", json={"name": f"{words} circle"}), 201)["id"]
    expect(owner.post(f"/circles/v1/circles/{circle}/posts", json={"type": "note", "body": f"{words} post"}), 201)
    anon = api.anon("mycirclee")
    wrong = api.http.post("/auth/v1/token", params={"grant_type": "password"}, headers=anon, json={"email": owner.email, "password": "Wrong-" + password()})
    assert wrong.status_code == 400, wrong.text[:200]
    taken = api.http.post("/auth/v1/signup", headers=anon, json={"email": owner.email, "password": password()})
    assert taken.status_code < 500, taken.text[:200]
    expect(api.http.post("/auth/v1/recover", headers=anon, json={"email": owner.email}), 200)
    refreshed = expect(api.http.post("/auth/v1/token", params={"grant_type": "refresh_token"}, headers=anon,
                                     json={"refresh_token": owner.refresh_token}), 200)
    forged = owner.access_token[:-6] + ("AAAAAA" if not owner.access_token.endswith("AAAAAA") else "BBBBBB")
    refused = api.http.get("/circles/v1/profile", headers={"apikey": stack.keys["mycirclee"], "Authorization": f"Bearer {forged}"})
    assert refused.status_code == 401, refused.text[:200]

    # Unify: an address confirmed by a mailed code, a group and a message.
    chatter = api.sign_up_with_code("unify", "logs-chatter", full_name=f"{words} chatter")
    group = expect(chatter.post("/chat/v1/groups", json={"name": f"{words} group"}), 201)["id"]
    expect(chatter.post(f"/chat/v1/groups/{group}/messages", json={"content": f"{words} message"}), 201)

    # HabitHive: a phone number and its texted code, a habit.
    bee = api.phone_otp_sign_in("habithive", display_name=f"{words} bee")
    expect(bee.post("/habits/v1/habits", json={"name": f"{words} habit", "emoji": "💧", "color_hex": "#34C8ED"}), 201)

    env = local_env()
    wait_until("every outbox sent and every consumer caught up", lambda: pipeline_idle(env), timeout=120)

    secrets = {
        "the owner's address": owner.email,
        "the chatter's address": chatter.email,
        "the owner's password": owner.extra["password"],
        "the bee's phone number": bee.phone,
        "an access token's signature": owner.access_token.rsplit(".", 1)[-1],
        "a forged token's signature": forged.rsplit(".", 1)[-1],
        "a refresh token": owner.refresh_token,
        "a refreshed access token's signature": refreshed["access_token"].rsplit(".", 1)[-1],
        "the chatter's access token's signature": chatter.access_token.rsplit(".", 1)[-1],
        "the bee's access token's signature": bee.access_token.rsplit(".", 1)[-1],
        "what they wrote": words,
    }
    assert all(secrets.values()), secrets
    logs = colonys_logs()
    assert {"auth.log", "circles.log", "chat.log", "habits.log", "nginx-access.log", "postgres.log"} <= {path.name for path in logs}, logs
    leaks = []
    for path in logs:
        text = path.read_text(errors="replace")
        for what, value in secrets.items():
            at = text.find(value)
            if at >= 0:
                line = text[text.rfind("\n", 0, at) + 1:text.find("\n", at)]
                leaks.append(f"{path.name}: {what}: {line[:300]}")
        for match in JWT.finditer(text):
            if not names_a_person(match.group(0)):
                continue
            line = text[text.rfind("\n", 0, match.start()) + 1:text.find("\n", match.start())]
            leaks.append(f"{path.name}: a person's token: {line[:300]}")
    assert not leaks, "personal data in the logs:\n" + "\n".join(leaks)
    print(f"searched {len(logs)} logs ({sum(path.stat().st_size for path in logs):,} bytes) for {len(secrets)} values and any person's token: none found")
