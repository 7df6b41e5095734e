"""The stack's processes, from the pid files `scripts/run` writes (.local/run/<name>.pid): which are
alive. A process counts as dead when its /proc entry is gone, it is a zombie, or its pid file now
names another process (scripts/run restarted it)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
RUN_DIR = ROOT / ".local" / "run"


def stack_pids() -> dict[str, int]:
    """name -> pid for every pid file of the running stack."""
    pids: dict[str, int] = {}
    for file in sorted(RUN_DIR.glob("*.pid")):
        try:
            pids[file.stem] = int(file.read_text().strip())
        except (OSError, ValueError):
            continue
    return pids


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    # The state follows the command name, which is in parentheses and may itself hold spaces.
    state = stat.rsplit(")", 1)[-1].split()[0]
    return state not in ("Z", "X")


def dead(baseline: dict[str, int]) -> list[str]:
    """The processes of `baseline` that died or were replaced since it was taken."""
    now = stack_pids()
    return [f"{name} (pid {pid})" for name, pid in baseline.items() if not alive(pid) or now.get(name, pid) != pid]
