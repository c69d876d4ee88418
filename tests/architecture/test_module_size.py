"""No module over 500 lines, unless its docstring argues why it is one idea."""
from __future__ import annotations

import ast

from modelplane import paths

LIMIT = 500
# A longer module says so in its docstring: "One idea: <why splitting it would scatter one thing>".
ARGUMENT = "One idea:"


def _too_long() -> list[str]:
    out = []
    for root in (paths.PACKAGE, paths.ROOT / "functions"):
        for f in sorted(root.rglob("*.py")):
            text = f.read_text(encoding="utf-8")
            lines = text.count("\n")
            if lines > LIMIT and ARGUMENT not in (ast.get_docstring(ast.parse(text)) or ""):
                out.append(f"{f.relative_to(paths.ROOT)}: {lines} lines")
    return out


def test_no_module_is_over_the_limit_without_an_argument():
    assert _too_long() == []
