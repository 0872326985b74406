"""The README's list of invariants names twelve, in order, and every test file it cites exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_invariant_names_tests_that_exist() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### The invariants and the tests that pin them", 1)[1]
    items = re.findall(r"^(\d+)\. \*\*", section, flags=re.MULTILINE)
    assert items == [str(n) for n in range(1, 13)]
    cited = re.findall(r"`(tests/[^`]+\.py)`", section)
    assert len(cited) >= 24
    missing = [path for path in cited if not (ROOT / path).is_file()]
    assert missing == []
