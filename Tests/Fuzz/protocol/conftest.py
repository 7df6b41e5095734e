"""Shared by every protocol fuzzer (Tests/Fuzz/protocol/test_*.py): after each test, every process
of the stack (the services, the gateway, the mail catcher: `.local/run/*.pid`) must still be alive;
a death fails that test, and the session's summary says how many there were."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stack_processes import dead, stack_pids  # noqa: E402

DEATHS: list[str] = []


@pytest.fixture(scope="session")
def stack_baseline() -> dict[str, int]:
    pids = stack_pids()
    if not any(name.startswith("colony-") for name in pids):
        raise pytest.UsageError("no colony-*.pid in .local/run: start the stack with scripts/run (or run scripts/e2e)")
    return pids


@pytest.fixture(autouse=True)
def stack_alive(stack_baseline: dict[str, int]):
    yield
    gone = [name for name in dead(stack_baseline) if name not in DEATHS]
    if gone:
        DEATHS.extend(gone)
        pytest.fail(f"stack processes died during this test: {', '.join(gone)}", pytrace=False)


def pytest_terminal_summary(terminalreporter) -> None:
    # A fuzzer's own line: `protocol_fuzz_summary()` of its module, when it defines one.
    for name, module in sorted(sys.modules.items()):
        summary = getattr(module, "protocol_fuzz_summary", None) if name.startswith("test_") else None
        line = summary() if callable(summary) else None
        if line:
            terminalreporter.write_line(line)
    terminalreporter.write_line(f"protocol fuzz: {len(DEATHS)} process deaths" + (f" ({', '.join(DEATHS)})" if DEATHS else ""))
