"""Fuzzes every domain service's OpenAPI document through the gateway with schemathesis, as a
real user of the service's app (signed up through auth, as the journeys do), all checks on, and
prints one summary line per service. Exits non-zero on any failure or error.

Run by scripts/e2e after the journeys (a stack started by scripts/run); scripts/fuzz runs it
alone with a bigger budget. Settings (environment):
  COLONY_GATEWAY_URL, COLONY_API_KEYS_FILE, COLONY_MAIL_DIR   as for the journeys (scripts/e2e sets them)
  COLONY_FUZZ_EXAMPLES    examples per operation and phase (default 20: CI's stage, 13,403 requests for the
                          eight documents in 308 s on 2 cores; 30 sent 15,776 in 385 s, with a fresh
                          clone's CI at 51 minutes of its 45; scripts/fuzz runs 300)
  COLONY_FUZZ_SEED        the generator's seed (default 21: CI runs the same requests every time;
                          scripts/fuzz picks a new one and prints it)
  COLONY_FUZZ_SERVICES    which services (default all: circles chat habits nearby projects notifications
                          pipeline push)
  COLONY_FUZZ_REPORTS     where schemathesis' JUnit reports and logs go (default .local/logs/fuzz)
  COLONY_FUZZ_PIPELINE_URL  for `pipeline`: the service whose console routes are fuzzed, on its own port
                          (the gateway never routes /internal/; default habits as scripts/run starts it,
                          127.0.0.1 at COLONY_SERVICE_BASE_PORT + 3)
  COLONY_FUZZ_PUSH_URL    for `push`: the notifications service, on its own port (default as scripts/run
                          starts it, 127.0.0.1 at COLONY_SERVICE_BASE_PORT + 7)
  COLONY_CONSOLE_KEY      for `pipeline` and `push`: the console's credential (default: scripts/run's
                          .local/secrets/console-key)

`pipeline` is the platform's document every service serves the same
(Shared/ColonyPlatform/OpenAPI/pipeline-admin.openapi.json): run with the console's credential, without
a user (the document's X-Colony-Operator is generated like any parameter). `push` is the notifications
service's console routes (Services/Notifications/NotificationsService/push-admin.openapi.json), run the
same way (X-Colony-App too is generated like any parameter).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "EndToEnd"))

from e2e_support import ROOT, Api, Stack, User, read_anon_keys  # noqa: E402

# Service -> the app whose users it serves (notifications serves every app; a MyCirclee user here).
SERVICES = {
    "circles": "mycirclee",
    "chat": "unify",
    "habits": "habithive",
    "nearby": "socialspot",
    "projects": "ibelieveinyou",
    "notifications": "mycirclee",
}
# The console's pipeline routes, the same document on every service (ServiceHost adds them).
PIPELINE = "pipeline"
PIPELINE_DOCUMENT = ROOT / "Shared" / "ColonyPlatform" / "OpenAPI" / "pipeline-admin.openapi.json"
# Notifications' console routes (the Push page), on its own port.
PUSH = "push"
PUSH_DOCUMENT = ROOT / "Services" / "Notifications" / "NotificationsService" / "push-admin.openapi.json"
# The console's documents: fuzzed straight at a service's port with the console's credential.
CONSOLE_DOCUMENTS = {PIPELINE: PIPELINE_DOCUMENT, PUSH: PUSH_DOCUMENT}


def console_key() -> str:
    """The console's credential: COLONY_CONSOLE_KEY, else the file scripts/run made."""
    key = os.environ.get("COLONY_CONSOLE_KEY", "")
    if key:
        return key
    return (ROOT / ".local" / "secrets" / "console-key").read_text(encoding="utf-8").strip()


def sign_up(api: Api, service: str, app: str) -> User:
    """A fresh user of `app`, signed up the way the app signs people up."""
    if app == "habithive":
        return api.phone_otp_sign_in(app)
    if app == "unify":
        # Unify confirms addresses: the session of the link in the mail the SMTP catcher received.
        from e2e_support import password, unique_email

        email = unique_email(f"fuzz-{service}")
        api.sign_up(app, email, password(), full_name="Fuzz Unify")
        mail = api.mailbox.wait_for_mail(email)
        return api.follow_mailed_link(app, mail["link"])
    return api.sign_up_confirmed(app, f"fuzz-{service}", full_name=f"Fuzz {service.title()}")


def summarize(report: Path) -> tuple[int, int, int, int]:
    """(operations, examples, failures, errors) from schemathesis' JUnit report: one test case per
    operation; examples are counted from the run's ndjson events when present."""
    tree = ElementTree.parse(report)
    operations = failures = errors = 0
    for case in tree.iter("testcase"):
        operations += 1
        failures += 1 if case.find("failure") is not None else 0
        errors += 1 if case.find("error") is not None else 0
    return operations, failures, errors


def main() -> int:
    port = os.environ.get("COLONY_GATEWAY_PORT", "8080")
    gateway = os.environ.get("COLONY_GATEWAY_URL", f"http://127.0.0.1:{port}").rstrip("/")
    keys_file = Path(os.environ.get("COLONY_API_KEYS_FILE", ROOT / ".local" / "api-keys.txt"))
    mail_dir = Path(os.environ.get("COLONY_MAIL_DIR", ROOT / ".local" / "mail"))
    examples = int(os.environ.get("COLONY_FUZZ_EXAMPLES", "20"))
    seed = int(os.environ.get("COLONY_FUZZ_SEED", "21"))
    services = os.environ.get("COLONY_FUZZ_SERVICES", " ".join([*SERVICES, *CONSOLE_DOCUMENTS])).split()
    base_port = int(os.environ.get("COLONY_SERVICE_BASE_PORT", "8081"))
    pipeline_url = os.environ.get("COLONY_FUZZ_PIPELINE_URL", f"http://127.0.0.1:{base_port + 3}").rstrip("/")
    push_url = os.environ.get("COLONY_FUZZ_PUSH_URL", f"http://127.0.0.1:{base_port + 7}").rstrip("/")
    console_urls = {PIPELINE: pipeline_url, PUSH: push_url}
    reports = Path(os.environ.get("COLONY_FUZZ_REPORTS", ROOT / ".local" / "logs" / "fuzz"))
    reports.mkdir(parents=True, exist_ok=True)

    stack = Stack(gateway=gateway, keys=read_anon_keys(keys_file), mail_dir=mail_dir)
    api = Api(stack)
    schemathesis = Path(sys.executable).parent / "schemathesis"
    direct = "".join(f" ({name}: {url} directly)" for name, url in console_urls.items() if name in services)
    print(f"fuzz: schemathesis against {', '.join(services)} through {gateway}{direct}: {examples} examples per operation, seed {seed}", flush=True)

    results: list[tuple[str, int, int, int, int, float]] = []
    status = 0
    for service in services:
        junit = reports / f"{service}.xml"
        ndjson = reports / f"{service}.ndjson"
        log = reports / f"{service}.log"
        for stale in (junit, ndjson):
            stale.unlink(missing_ok=True)
        report = [
            "--max-examples", str(examples), "--seed", str(seed),
            "--report", "junit,ndjson", "--report-junit-path", str(junit), "--report-ndjson-path", str(ndjson),
        ]
        if service in CONSOLE_DOCUMENTS:
            # Straight to the service with the console's credential; no user, so no token hooks
            # (they would put a user's token in its place).
            env = {key: value for key, value in os.environ.items() if key != "SCHEMATHESIS_HOOKS"}
            command = [
                str(schemathesis), "--config-file", str(HERE / "schemathesis.toml"), "run",
                str(CONSOLE_DOCUMENTS[service]), "--url", console_urls[service], "-H", f"Authorization: Bearer {console_key()}", *report,
            ]
        else:
            app = SERVICES[service]
            user = sign_up(api, service, app)
            env = {
                **os.environ,
                "SCHEMATHESIS_HOOKS": "hooks",
                "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])),
                # The hooks' token refresher: the user's session and the app's key.
                "COLONY_FUZZ_GATEWAY": gateway,
                "COLONY_FUZZ_APIKEY": stack.keys[app],
                "COLONY_FUZZ_ACCESS_TOKEN": user.access_token,
                "COLONY_FUZZ_REFRESH_TOKEN": user.refresh_token or "",
                "COLONY_FUZZ_USER_ID": user.id,
                "COLONY_FUZZ_SERVICE": service,
            }
            command = [
                str(schemathesis), "--config-file", str(HERE / "schemathesis.toml"), "run",
                f"{gateway}/{service}/v1/openapi.json", "--url", gateway, *report,
            ]
        started = time.monotonic()
        with log.open("w", encoding="utf-8") as output:
            # In the reports folder: schemathesis keeps its cache (crash replays) where it runs.
            code = subprocess.run(command, env=env, stdout=output, stderr=subprocess.STDOUT, cwd=reports).returncode
        elapsed = time.monotonic() - started
        if not junit.is_file():
            print(f"fuzz: {service}: schemathesis wrote no report (exit {code}); its output:", flush=True)
            print(log.read_text(encoding="utf-8")[-6000:], flush=True)
            status = 1
            continue
        operations, failures, errors = summarize(junit)
        requests = count_requests(ndjson)
        results.append((service, operations, requests, failures, errors, elapsed))
        if code != 0 or failures or errors:
            status = 1
            print(f"fuzz: {service}: schemathesis exit {code}; the end of its output ({log}):", flush=True)
            print(tail_failures(log.read_text(encoding="utf-8")), flush=True)
    api.close()

    print("fuzz: service        operations  requests  failures  errors  seconds")
    for service, operations, requests, failures, errors, elapsed in results:
        print(f"fuzz: {service:<14} {operations:>10} {requests:>9} {failures:>9} {errors:>7} {elapsed:>8.0f}")
    total = [sum(r[i] for r in results) for i in (1, 2, 3, 4)]
    print(f"fuzz: {'all':<14} {total[0]:>10} {total[1]:>9} {total[2]:>9} {total[3]:>7}")
    # The plain closing line CI reads: one "test" per service.
    passed = sum(1 for r in results if r[3] == 0 and r[4] == 0)
    print(f"fuzz: {passed} passed, {len(services) - passed} failed")
    return status


def count_requests(ndjson: Path) -> int:
    """How many requests schemathesis sent, from its ndjson event stream (0 when absent)."""
    import json

    if not ndjson.is_file():
        return 0
    total = 0
    for line in ndjson.read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        finished = event.get("ScenarioFinished") or {}
        recorder = finished.get("recorder") or {}
        for interaction in (recorder.get("interactions") or {}).values():
            total += 1 if interaction else 0
    return total


def tail_failures(text: str) -> str:
    """The failures section of schemathesis' output (or its end)."""
    marker = text.find("FAILURES")
    return text[marker:][-20000:] if marker >= 0 else text[-8000:]


if __name__ == "__main__":
    sys.exit(main())
