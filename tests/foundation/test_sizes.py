"""Byte sizes are formatted in frogdesk/sizes.py only: one set of units on every screen."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import frogdesk
from frogdesk.sizes import gib, human_bytes, memory_size

ROOT = Path(frogdesk.__file__).parent
UNIT = re.compile(r"^\s?(?:B|kB|KB|KiB|MB|MiB|GB|GiB|TB|TiB)\b")
POWERS = {2**10, 2**20, 2**30, 2**40, 10**6, 10**9, 10**12}
"""Divisors that turn bytes into a unit (1000 is left out: it scales seconds and tokens too)."""


def _constant(node: ast.expr) -> float | None:
    """The number a literal such as 1024, 1e9 or 2**30 stands for; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow | ast.Mult):
        left, right = _constant(node.left), _constant(node.right)
        if left is not None and right is not None:
            return float(left**right if isinstance(node.op, ast.Pow) else left * right)
    return None


def _scaled(node: ast.expr) -> bool:
    """An expression that divides or shifts by a power of 1000 or 1024 (a unit conversion)."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Div | ast.RShift):
            value = _constant(inner.right)
            if value is not None and (
                value in POWERS or (isinstance(inner.op, ast.RShift) and value in (10, 20, 30))
            ):
                return True
    return False


def ad_hoc_sizes(source: str) -> list[int]:
    """Lines of f-strings that put a unit after a number, or scale a number to a unit."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.JoinedStr):
            continue
        parts = node.values
        for index, part in enumerate(parts):
            if not isinstance(part, ast.FormattedValue):
                continue
            after = parts[index + 1] if index + 1 < len(parts) else None
            unit_follows = (
                isinstance(after, ast.Constant)
                and isinstance(after.value, str)
                and UNIT.match(after.value) is not None
            )
            if unit_follows or _scaled(part.value):
                lines.append(node.lineno)
                break
    return lines


def test_no_size_is_formatted_outside_sizes() -> None:
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        if path == ROOT / "sizes.py":
            continue
        lines = ad_hoc_sizes(path.read_text(encoding="utf-8"))
        if lines:
            found[str(path.relative_to(ROOT.parent))] = lines
    assert found == {}


def test_the_check_sees_sizes_formatted_by_hand() -> None:
    sample = (
        'a = f"{n / 2**30:.2f} GiB"\n'
        'b = f"needs {n} MiB more"\n'
        'c = f"{n >> 20} left"\n'
        'd = f"{n / 1e9:.1f}"\n'
        'e = f"{human_bytes(n)} free"\n'
        'f = f"{tokens / 1000:.1f}k tokens, step {i} Bash"\n'
    )
    assert ad_hoc_sizes(sample) == [1, 2, 3, 4]


def test_units() -> None:
    assert human_bytes(7) == "7 B"
    assert human_bytes(512_000) == "512.00 kB"
    assert human_bytes(2_800_000_000) == "2.80 GB"
    assert gib(3.5 * 2**30) == "3.50 GiB"
    assert memory_size(96 * 2**20) == "96 MiB"
    assert memory_size(3 * 2**30) == "3.00 GiB"
    assert memory_size(192 * 2**10) == "192 KiB"
