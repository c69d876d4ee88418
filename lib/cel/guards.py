"""Guards that bound the work one CEL expression can cause, checked before parsing.

cel-python has no cost model, so one tenant's selector could stall the
function for everyone. Before an expression reaches the engine we scan its
text once (string literals skipped) and reject it with :class:`CELRejected`
when it is:

- longer than ``MAX_BYTES`` (10 KiB, the Kubernetes selector limit),
- nested deeper than ``MAX_DEPTH`` brackets (cel-python recurses per level
  and fails with a bare RecursionError near 64),
- using more than ``MAX_COMPREHENSIONS`` macro calls (all, exists,
  exists_one, map, filter) or nesting them deeper than
  ``MAX_COMPREHENSION_DEPTH``, which keeps work polynomial and small,
- using ``reduce``, a cel-python extension that Kubernetes does not have and
  that can double a value per element.

The adapter adds the remaining bounds at run time: an evaluation step budget
and a RecursionError catch (long operator chains).
"""
from __future__ import annotations

import re

from .errors import CELRejected

__all__ = ["MAX_BYTES", "MAX_COMPREHENSIONS", "MAX_COMPREHENSION_DEPTH", "MAX_DEPTH", "check"]

MAX_BYTES = 10 * 1024
MAX_DEPTH = 32
MAX_COMPREHENSIONS = 8
MAX_COMPREHENSION_DEPTH = 2

MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
FORBIDDEN = frozenset({"reduce"})

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = frozenset(_OPEN.values())
# A member call: ".name(" with optional spaces; the name is checked against MACROS.
_MEMBER_CALL = re.compile(r"\.\s*([A-Za-z_][A-Za-z0-9_]*)\s*\($")


def check(expr: str) -> None:
    """Raise CELRejected when ``expr`` exceeds a guard; return None otherwise."""
    size = len(expr.encode("utf-8"))
    if size > MAX_BYTES:
        raise CELRejected(f"expression is {size} bytes, more than the limit of {MAX_BYTES}")
    depth = 0
    stack: list[bool] = []  # one entry per open bracket: does it open a comprehension?
    comprehensions = 0
    i, n = 0, len(expr)
    while i < n:
        ch = expr[i]
        if ch in "\"'":
            i = _skip_string(expr, i)
            continue
        if ch in _OPEN:
            is_macro = False
            if ch == "(":
                m = _MEMBER_CALL.search(expr, max(0, i - 64), i + 1)
                name = m.group(1) if m else ""
                if name in FORBIDDEN:
                    raise CELRejected(f"{name}() is not available in Kubernetes CEL")
                is_macro = name in MACROS
            if is_macro:
                comprehensions += 1
                if comprehensions > MAX_COMPREHENSIONS:
                    raise CELRejected(f"more than {MAX_COMPREHENSIONS} comprehensions (all/exists/map/filter)")
                if sum(stack) + 1 > MAX_COMPREHENSION_DEPTH:
                    raise CELRejected(f"comprehensions nested more than {MAX_COMPREHENSION_DEPTH} deep")
            stack.append(is_macro)
            depth += 1
            if depth > MAX_DEPTH:
                raise CELRejected(f"expression nests brackets more than {MAX_DEPTH} deep")
        elif ch in _CLOSE and stack:
            stack.pop()
            depth -= 1
        i += 1


def _skip_string(expr: str, start: int) -> int:
    """Index just past the string literal opening at ``start`` (or the end if unterminated)."""
    quote = expr[start]
    raw = start > 0 and expr[start - 1] in "rR"
    delim = quote * 3 if expr.startswith(quote * 3, start) else quote
    i = start + len(delim)
    while i < len(expr):
        if expr[i] == "\\" and not raw:
            i += 2
            continue
        if expr.startswith(delim, i):
            return i + len(delim)
        i += 1
    return i
