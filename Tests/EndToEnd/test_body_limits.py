"""HTTP bodies are read after authentication, through the nginx gateway: 50 unauthenticated
20 MiB bodies (to chat's voice upload route, which takes the largest bodies, and to an unknown
path) are refused without being buffered. The chat service's own process is measured: its
resident memory (and its high-water mark) before and after, and sampled during the flood."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from e2e_support import ROOT, Api, Stack

MIB = 1 << 20
BODY = bytes(20 * MIB)


def service_pid(name: str) -> int:
    path = ROOT / ".local" / "run" / f"colony-{name}.pid"
    if not path.is_file():
        pytest.skip(f"{path} is missing: this test measures a service scripts/run started")
    return int(path.read_text().strip())


def memory_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak resident set) of a process, in KiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields


def test_unauthenticated_20_mib_bodies_are_not_buffered(api: Api, stack: Stack):
    pid = service_pid("chat")
    # Warm up: the routes, the token check and the connections from the gateway.
    for _ in range(3):
        assert api.http.post(f"/chat/v1/groups/{uuid.uuid4()}/messages/voice?duration=1", content=b"x",
                             headers={"Content-Type": "audio/mp4"}).status_code == 401
    time.sleep(1)
    before = memory_kib(pid)
    peak = [before["VmRSS"]]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], memory_kib(pid)["VmRSS"])
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()

    def send(index: int) -> int:
        path = f"/chat/v1/groups/{uuid.uuid4()}/messages/voice?duration=1" if index % 5 else "/chat/v1/no-such-route"
        with httpx.Client(base_url=stack.gateway, timeout=120.0) as http:
            response = http.post(path, content=BODY, headers={"Content-Type": "audio/mp4"})
            assert response.headers.get("content-type", "").startswith("application/json"), response.text[:200]
            return response.status_code

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=5) as pool:
        statuses = list(pool.map(send, range(50)))
    elapsed = time.monotonic() - started
    time.sleep(1)
    done.set()
    sampler.join()
    after = memory_kib(pid)
    print(f"colony-chat (pid {pid}) over 50 unauthenticated 20 MiB bodies in {elapsed:.1f} s: "
          f"RSS {before['VmRSS'] // 1024} MiB before, {after['VmRSS'] // 1024} MiB after, {peak[0] // 1024} MiB at most during; "
          f"peak RSS (VmHWM) {before['VmHWM'] // 1024} -> {after['VmHWM'] // 1024} MiB")
    assert statuses.count(401) == 40 and statuses.count(404) == 10, statuses
    # Buffering even one body would show: 20 MiB, times the requests in flight.
    assert peak[0] - before["VmRSS"] < 16 * 1024, f"RSS rose by {(peak[0] - before['VmRSS']) // 1024} MiB during the flood"
    assert after["VmHWM"] - before["VmHWM"] < 16 * 1024, f"peak RSS rose by {(after['VmHWM'] - before['VmHWM']) // 1024} MiB"
    assert after["VmRSS"] - before["VmRSS"] < 16 * 1024


def test_small_default_limit_on_json_routes(api: Api):
    """JSON routes read at most 256 KiB (COLONY_MAX_BODY_BYTES), with a token; beyond it 413."""
    user = api.sign_up_confirmed("mycirclee", "body-limit")
    big = b'{"name": "' + b"x" * (300 * 1024) + b'"}'
    response = user.post("/circles/v1/circles", content=big, headers={"Content-Type": "application/json"})
    assert response.status_code == 413 and response.json()["code"] == "payload_too_large", response.text[:300]
