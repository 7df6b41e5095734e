"""The console's browser suite runs against the whole stack (scripts/e2e's `console` stage), with the
journeys' fixtures and helpers (Tests/EndToEnd), loaded under a name of their own (both files are
`conftest`)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

END_TO_END = Path(__file__).resolve().parents[1] / "EndToEnd"
sys.path.insert(0, str(END_TO_END))

_spec = importlib.util.spec_from_file_location("end_to_end_conftest", END_TO_END / "conftest.py")
assert _spec and _spec.loader
_journeys = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_journeys)

stack = _journeys.stack
api = _journeys.api
