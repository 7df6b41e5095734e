"""The Colony Console in a real browser (headless Chromium through Selenium), through the gateway:

an owner (made by `colony-admin operators add`) adds a support operator in the console; the support
operator takes the invitation, enrolls TOTP, signs in, finds a user by email and bans them, and the
user's next API call through the gateway is refused; a viewer's ban is refused by the server; a dead
letter (a SocialSpot sign-up nearby could not apply) is retried from the Pipeline page and its
effect appears; support sees what a user holds in each service and their push devices, sends a test
push and finds it in the delivery log; the Imports page shows a Supabase import's run (a dry run and
the import of a small HabitHive project); the audit log lists all of it. Every page is photographed (into .local/console-screenshots, or docs/console/ when refreshing the README's).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import struct
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.expected_conditions import staleness_of
from selenium.webdriver.support.ui import Select, WebDriverWait

from e2e_support import EVENTUAL_TIMEOUT, ROOT, wait_until
from supabase_source import SourceProject, colony_admin, local_env, psql as run_psql

# Every run photographs the pages into .local; the committed pictures (docs/console/, in the README) are
# refreshed on purpose: COLONY_CONSOLE_SCREENSHOTS=docs/console COLONY_E2E_STAGES=console scripts/e2e.
SCREENSHOTS = Path(os.environ.get("COLONY_CONSOLE_SCREENSHOTS", ROOT / ".local" / "console-screenshots"))
# A dead letter needs the consumer's attempts with their backoff: a busy 2-core machine takes its time.
DEAD_LETTER_TIMEOUT = max(EVENTUAL_TIMEOUT, 180.0)


def totp(secret: str, at: float | None = None) -> str:
    """RFC 6238: six digits, 30 s steps, HMAC-SHA1 (what authenticator apps compute)."""
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    step = int((at if at is not None else time.time()) // 30)
    digest = hmac.new(key, struct.pack(">Q", step), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    value = struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF
    return f"{value % 1_000_000:06d}"




def psql(sql: str) -> str:
    return run_psql(sql).strip()


def invite_with_colony_admin(email: str, role: str) -> str:
    """`colony-admin operators add` as the first owner is made: the invitation's path."""
    done = subprocess.run([colony_admin(), "operators", "add", email, "--role", role], capture_output=True, text=True, env=local_env())
    assert done.returncode == 0, done.stderr
    link = re.search(r"(/console/welcome\?token=\S+)", done.stdout)
    assert link, done.stdout
    return link.group(1)


class Console:
    """One browser (its own cookies) on the console, as one operator."""

    def __init__(self, gateway: str, name: str) -> None:
        options = Options()
        options.binary_location = os.environ.get("COLONY_CHROMIUM", "/usr/bin/chromium")
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900", "--disable-gpu"):
            options.add_argument(argument)
        self.driver = webdriver.Chrome(service=Service(os.environ.get("COLONY_CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
        self.driver.set_page_load_timeout(60)
        # localhost: a secure context, so the console's Secure cookie is kept over plain HTTP here.
        self.base = gateway.replace("127.0.0.1", "localhost")
        self.name = name
        self.secret = ""
        self.password = f"Pw-{uuid.uuid4().hex[:12]}-console"

    def close(self) -> None:
        self.driver.quit()

    def open(self, path: str) -> None:
        self.driver.get(self.base + path)

    def field(self, name: str):
        return self.driver.find_element(By.NAME, name)

    def submit(self, form_selector: str = "main form") -> None:
        self.click(self.driver.find_element(By.CSS_SELECTOR, f"{form_selector} button[type=submit]"))

    def click(self, element) -> None:
        """Clicks and waits for the next page (every action of the console is a form: a new page)."""
        before = self.driver.find_element(By.TAG_NAME, "html")
        element.click()

        def left(_driver) -> bool:
            # The old page's element is stale once the next page is in. Chromium may instead answer
            # "Node with given id does not belong to the document" while it swaps the documents (a
            # CI run failed so): that too says the old page is gone.
            try:
                return staleness_of(before)(_driver)
            except WebDriverException as error:
                if "does not belong to the document" in str(error):
                    return True
                raise

        WebDriverWait(self.driver, 60).until(left)

    @property
    def page(self) -> str:
        return self.driver.page_source

    def shot(self, name: str) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))

    def take_invitation(self, link: str, shots: bool = False) -> None:
        self.open(link)
        if shots:
            self.shot("welcome")
        self.field("password").send_keys(self.password)
        self.field("repeat").send_keys(self.password)
        self.submit()
        assert "/console/enroll" in self.driver.current_url, self.page
        self.secret = self.driver.find_element(By.ID, "totp-secret").text.strip()
        if shots:
            self.shot("enroll")
        self.field("code").send_keys(totp(self.secret))
        self.submit()
        # The console opens on the Overview (`/console/` leads there).
        assert self.driver.current_url.rstrip("/").endswith(("/console/overview", "/console/users")), self.page

    def sign_out(self) -> None:
        self.click(self.driver.find_element(By.CSS_SELECTOR, "header form.who button"))
        assert "/console/sign-in" in self.driver.current_url, self.driver.current_url

    def sign_in(self, email: str, shots: bool = False) -> None:
        self.open("/console/sign-in")
        if shots:
            self.shot("sign-in")
        self.field("email").send_keys(email)
        self.field("password").send_keys(self.password)
        self.submit()
        assert "/console/sign-in/code" in self.driver.current_url, self.page
        if shots:
            self.shot("code")
        # The next step's code: the enrolment's was used, and a code is good once.
        self.field("code").send_keys(totp(self.secret, time.time() + 30))
        self.submit()
        # The console opens on the Overview (`/console/` leads there).
        assert self.driver.current_url.rstrip("/").endswith(("/console/overview", "/console/users")), self.page


@pytest.fixture
def browsers(stack):
    opened: list[Console] = []

    def make(name: str) -> Console:
        console = Console(stack.gateway, name)
        opened.append(console)
        return console

    yield make
    for console in opened:
        console.close()


def test_console_in_a_browser(api, stack, browsers):
    tag = uuid.uuid4().hex[:8]
    owner_email, support_email, viewer_email = f"owner-{tag}@example.com", f"support-{tag}@example.com", f"viewer-{tag}@example.com"

    # The first owner, from the command line; the rest from the console.
    owner = browsers("owner")
    owner.take_invitation(invite_with_colony_admin(owner_email, "owner"), shots=True)
    owner.open("/console/operators")
    owner.field("email").send_keys(support_email)
    Select(owner.field("role")).select_by_value("support")
    owner.submit("#add-operator")
    support_link = owner.driver.find_element(By.ID, "invitation-link").text.strip()
    owner.shot("operators")
    owner.open("/console/operators")
    owner.field("email").send_keys(viewer_email)
    Select(owner.field("role")).select_by_value("viewer")
    owner.submit("#add-operator")
    viewer_link = owner.driver.find_element(By.ID, "invitation-link").text.strip()

    # Support: the invitation, TOTP, then a real sign-in (password and a fresh code).
    support = browsers("support")
    support.take_invitation(support_link)
    support.sign_out()
    support.sign_in(support_email, shots=True)

    # A MyCirclee user, signed in on their phone.
    user = api.sign_up_confirmed("mycirclee", f"console-ban-{tag}", display_name=f"Ban Candidate {tag}")
    assert user.get("/auth/v1/user").status_code == 200
    support.open("/console/users")
    support.field("q").send_keys(user.email)
    support.submit("form.search")
    assert user.id in support.page, support.page
    support.shot("users")
    support.click(support.driver.find_element(By.CSS_SELECTOR, f"a[href='/console/users/mycirclee/{user.id}']"))
    assert user.email in support.page
    support.shot("user")
    Select(support.field("duration")).select_by_value("24h")
    support.submit("#ban-form")
    assert "Banned." in support.page and "banned until" in support.driver.find_element(By.ID, "ban-state").text, support.page
    support.shot("user-banned")

    # The user's next call through the gateway is refused, and so is signing in again.
    refused = user.get("/auth/v1/user")
    assert refused.status_code in (401, 403), refused.text
    again = api.http.post("/auth/v1/token", params={"grant_type": "password"}, headers=api.anon("mycirclee"),
                          json={"email": user.email, "password": user.extra.get("password", "")})
    assert again.status_code == 400 and "user_banned" in again.text, again.text

    # A user with the app on a phone: support sees what they hold and their device, sends a test push,
    # and finds it in the delivery log (the stack has no APNs: it is logged as skipped).
    pushy = api.sign_up_confirmed("mycirclee", f"console-push-{tag}", display_name=f"Push Tester {tag}")
    token = uuid.uuid4().hex + uuid.uuid4().hex
    registered = pushy.post("/notifications/v1/devices", json={"token": token, "environment": "production", "app_version": "3.2", "locale": "en-GB"})
    assert registered.status_code == 200, registered.text
    support.open(f"/console/users/mycirclee/{pushy.id}")
    holdings = support.driver.find_element(By.ID, "holdings").text
    assert "circles" in holdings and "notifications" in holdings and "devices: 1" in holdings, holdings
    assert token[-8:] in support.driver.find_element(By.ID, "push").text, support.page
    support.shot("user")
    support.click(support.driver.find_element(By.CSS_SELECTOR, "#push-devices form[action$='/test'] button"))
    assert "A test push is queued" in support.page, support.page

    def logged_test_push() -> bool:
        support.open(f"/console/push?app=mycirclee&user={pushy.id}")
        return "test_push" in support.page and "skipped" in support.page

    wait_until("the test push in the delivery log", logged_test_push, timeout=EVENTUAL_TIMEOUT)
    support.shot("push")

    # A viewer sees the user, has no ban form, and the server refuses the ban sent anyway.
    viewer = browsers("viewer")
    viewer.take_invitation(viewer_link)
    other = api.sign_up_confirmed("mycirclee", f"console-viewer-{tag}")
    viewer.open(f"/console/users/mycirclee/{other.id}")
    assert not viewer.driver.find_elements(By.ID, "ban-form")
    csrf = viewer.driver.find_element(By.CSS_SELECTOR, "header form.who input[name=csrf]").get_attribute("value")
    # The form a crafted page (or a tampered one) would send: the viewer's own session and token.
    viewer.driver.execute_cdp_cmd("Runtime.evaluate", {"expression": f"""
        const form = document.createElement('form'); form.method = 'post'; form.action = '/console/users/mycirclee/{other.id}/ban';
        for (const [name, value] of [['csrf', '{csrf}'], ['duration', '24h']]) {{
            const input = document.createElement('input'); input.type = 'hidden'; input.name = name; input.value = value; form.appendChild(input); }}
        document.body.appendChild(form); form.submit();"""})
    wait_until("the refusal page", lambda: "may not do this" in viewer.page, timeout=30)
    viewer.shot("refused")
    assert other.get("/auth/v1/user").status_code == 200, "the viewer's ban did nothing"

    # A dead letter: nearby cannot write profiles, so a SocialSpot sign-up is set aside after its
    # attempts; with the right back, the owner retries it from the Pipeline page and the profile appears.
    psql("REVOKE INSERT, UPDATE ON nearby.profiles FROM colony_nearby")
    try:
        spotter = api.sign_up_confirmed("socialspot", f"console-dead-{tag}", name=f"Dead Letter {tag}")
        letter = wait_until("nearby's dead letter", lambda: psql(
            f"SELECT id FROM nearby.dead_letters WHERE stage = 'consume' AND event_key = '{spotter.id}'"), timeout=DEAD_LETTER_TIMEOUT)
    finally:
        psql("GRANT INSERT, UPDATE ON nearby.profiles TO colony_nearby")
    assert psql(f"SELECT count(*) FROM nearby.profiles WHERE id = '{spotter.id}'") == "0"
    owner.open("/console/pipeline")
    assert "user_registered" in owner.page, owner.page
    owner.shot("pipeline")
    row = owner.driver.find_element(By.XPATH, f"//table[contains(@class,'dead-letters')]//tr[td[1][normalize-space()='{letter}']]")
    owner.click(row.find_element(By.XPATH, ".//form[contains(@action,'/retry')]//button"))
    assert "Retry requested." in owner.page, owner.page
    wait_until("the retried sign-up's profile", lambda: psql(f"SELECT count(*) FROM nearby.profiles WHERE id = '{spotter.id}'") == "1",
               timeout=DEAD_LETTER_TIMEOUT)

    # The overview: sign-ups and activity per app, the platform's state.
    owner.open("/console/overview")
    assert "mycirclee" in owner.page.lower(), owner.page
    owner.shot("overview")

    # Imports: a small HabitHive project brought over from Supabase (a dry run, then the import),
    # each run with its summary.
    source = SourceProject("habithive")
    try:
        source.add_user(f"imported-{tag}")
        assert source.run_import(dry_run=True, label="console").status == 0
        assert source.run_import(label="console").status == 0
    finally:
        source.drop()
    owner.open("/console/imports")
    imports = owner.page
    assert "habithive" in imports and "dry run" in imports and "complete" in imports and source.database in imports, imports
    owner.shot("imports")

    # The audit log lists every step.
    owner.open("/console/audit")
    owner.shot("audit")
    log = owner.page
    for action, who in [("add_operator", owner_email), ("accept_invitation", support_email), ("enroll_totp", support_email),
                        ("sign_in", support_email), ("ban_user", support_email), ("send_test_push", support_email), ("ban_user", viewer_email),
                        ("retry_dead_letter", owner_email)]:
        assert re.search(rf"<td>{re.escape(who)}</td>.*?<td>{action}</td>", log, re.S), f"{action} by {who} is not in the audit log"
    assert user.id in log


def test_console_credential_opens_nothing_through_the_gateway(stack):
    """The console's credential works on the services' own ports only: through the gateway (which
    clears X-Colony-Operator) auth's admin routes refuse it, and /internal/ is not routed at all."""
    import httpx

    key = (ROOT / ".local" / "secrets" / "console-key").read_text().strip()
    headers = {"Authorization": f"Bearer {key}", "X-Colony-Operator": "intruder@example.com", "X-Colony-App": "mycirclee",
               "apikey": stack.keys["mycirclee"]}
    with httpx.Client(base_url=stack.gateway, timeout=30.0) as http:
        users = http.get("/auth/v1/admin/users", headers=headers)
        assert users.status_code in (400, 401, 403) and "users" not in users.json(), users.text
        pipeline = http.get("/internal/v1/console/pipeline", headers=headers)
        assert pipeline.status_code == 404, pipeline.text
