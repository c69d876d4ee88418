"""The troubleshooting page explains every condition reason the functions write, and no other.

Reasons live in lib/modelplane/conditions.py (after its "# Reasons." line); one is *written*
when code under lib/ or functions/ uses its constant. The page lists each in a table whose
first cell is the reason in backticks.
"""
from __future__ import annotations

import ast
import re

from modelplane import paths

from tests.docs import pages

CONDITIONS = paths.PACKAGE / "conditions.py"
PAGE = pages.DOCS / "ml" / "troubleshooting.md"


def reasons_defined() -> dict[str, str]:
    """Constant name -> reason, for the constants after the "# Reasons." comment."""
    source = CONDITIONS.read_text(encoding="utf-8")
    start = next(i for i, line in enumerate(source.splitlines(), 1) if line.strip() == "# Reasons.")
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and node.lineno > start and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            out[node.targets[0].id] = node.value.value
    return out


def reasons_written() -> set[str]:
    code = "\n".join(p.read_text(encoding="utf-8") for root in (paths.PACKAGE, paths.ROOT / "functions")
                     for p in root.rglob("*.py") if p != CONDITIONS)
    return {reason for name, reason in reasons_defined().items() if re.search(rf"\.{name}\b", code)}


def reasons_on_the_page() -> set[str]:
    return set(re.findall(r"^\|\s*`([A-Z][A-Za-z]+)`\s*\|", PAGE.read_text(encoding="utf-8"), re.MULTILINE))


def test_the_reasons_are_found():
    written = reasons_written()
    assert {"Unschedulable", "InsufficientCapacity", "WaitingForInputs"} <= written


def test_troubleshooting_explains_every_reason_written():
    missing = sorted(reasons_written() - reasons_on_the_page())
    assert missing == [], f"{PAGE.relative_to(pages.ROOT)} does not explain these reasons"


def test_troubleshooting_invents_no_reason():
    invented = sorted(reasons_on_the_page() - set(reasons_defined().values()))
    assert invented == [], "the page lists reasons no function writes"
