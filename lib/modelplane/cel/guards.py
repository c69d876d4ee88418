"""Limits that bound the work one CEL expression can cause, checked before parsing.

cel-python has no cost model, and its lark parser alone costs 20-65 µs per
token, so one tenant's selector could stall the function for everyone. Before
an expression reaches the engine, :func:`check` tokenizes it once with a
regular expression and rejects it with :class:`CELRejected` when it is:

- longer than ``MAX_BYTES`` (10 KiB, the Kubernetes selector limit),
- more than ``Limits.tokens`` tokens (parse time is proportional to tokens),
- nested deeper than ``MAX_DEPTH`` brackets (cel-python recurses per level
  and fails with a bare RecursionError near 64),
- holding a list or map literal with more than ``Limits.literal_entries``
  entries, or a string literal longer than ``Limits.string_chars``,
- chaining more than ``Limits.chain`` operators in one operand
  (``a && b && ...``, ``!!!!x``): the tree grows one level per operator and
  the interpreter recurses through it (member selection, ``a.b``, is not
  counted: a real selector has two per clause),
- using more than ``MAX_COMPREHENSIONS`` macro calls (all, exists,
  exists_one, map, filter) or nesting them deeper than
  ``MAX_COMPREHENSION_DEPTH``, which keeps work polynomial and small,
- using ``reduce``, a cel-python extension that Kubernetes does not have and
  that can double a value per element.

The adapter enforces the rest at run time with the same :class:`Limits`: an
evaluation step budget, a CPU-time deadline and a RecursionError catch.

Two sets of limits, by library. ``"dra"`` selectors run inside functions on
every scheduling request, so a bomb must cost at most ~10 ms there. Parse
and evaluation share one budget of ``steps`` (an evaluation step, one tree
node visited, is ~10 µs; parsing a token costs about ``token_steps`` of
them), so an expression of ``n`` tokens may take ``steps - token_steps * n``
evaluation steps: the longest accepted selector still gets 500, a typical
one 800 or more. ``"kubernetes"`` rules are evaluated offline by
``modelplane validate`` and upstream CRDs carry rules of up to ~370 tokens,
so its limits are wide and its parse is not charged.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import CELRejected

__all__ = [
    "LIMITS", "MAX_BYTES", "MAX_COMPREHENSIONS", "MAX_COMPREHENSION_DEPTH", "MAX_DEPTH", "Limits", "check",
]

MAX_BYTES = 10 * 1024
MAX_DEPTH = 32
MAX_COMPREHENSIONS = 8
MAX_COMPREHENSION_DEPTH = 2

MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
FORBIDDEN = frozenset({"reduce"})


@dataclass(frozen=True)
class Limits:
    """What one expression of a library may cost; ``noun`` and ``fix`` word the rejection."""

    tokens: int
    literal_entries: int
    string_chars: int
    chain: int
    steps: int          # interpreter tree-node visits per evaluation, less token_steps per token
    token_steps: int    # what parsing one token costs, in evaluation steps
    cpu_ms: float       # CPU time of the evaluating thread per evaluation
    noun: str
    fix: str
    # Functions the library refuses. Device selectors get no regular
    # expressions: the DRA surface has none (seed 001), and Python's
    # backtracking ``re`` runs inside one step, beyond the step budget.
    forbidden: frozenset = FORBIDDEN

    def evaluation_steps(self, tokens: int) -> int:
        """The step budget of one evaluation of an expression of ``tokens`` tokens."""
        return self.steps - self.token_steps * tokens


# Calibrated on the project's reference machine (2 cores, Python 3.11, cel-python 0.5.0):
# parsing costs 22-65 µs per token (brackets and literals are the dearest), evaluating
# runs 80-240 steps per ms (comprehensions are the slowest). Real DRA selectors are
# 10-60 tokens and 100-350 steps; upstream CRD rules reach 369 tokens, 16 operators in
# a row, 5 literal entries and 114-character strings.
LIMITS = {
    "dra": Limits(tokens=100, literal_entries=32, string_chars=512, chain=32, steps=1000, token_steps=5,
                  cpu_ms=20.0, noun="selector", fix="split it into several selectors or simplify it",
                  forbidden=FORBIDDEN | {"matches"}),
    "kubernetes": Limits(tokens=2048, literal_entries=256, string_chars=MAX_BYTES, chain=128, steps=50_000,
                         token_steps=0, cpu_ms=2_000.0, noun="rule", fix="split it into several rules or simplify it"),
}

# CEL's tokens. Raw strings do not treat a backslash as an escape. Every quantifier is
# possessive and an unclosed string runs to the end of its line (or, triple-quoted, of the
# text), so no alternative ever rescans: the scan is linear for any input. "bad" takes any
# character CEL does not know (the parser reports it).
_SPACE = r"(?:\s|//[^\n]*+)++"
_PARTS = {
    "str": r"""(?:[rR][bB]?|[bB][rR])(?:\"\"\"(?:(?!\"\"\")[\s\S])*+(?:\"\"\"|\Z)|'''(?:(?!''')[\s\S])*+(?:'''|\Z)
                                   |"[^"\n]*+"?|'[^'\n]*+'?)
             | [bB]?(?:\"\"\"(?:\\[\s\S]|(?!\"\"\")[^\\])*+(?:\"\"\"|\Z)|'''(?:\\[\s\S]|(?!''')[^\\])*+(?:'''|\Z)
                      |"(?:\\.|[^\\"\n])*+"?|'(?:\\.|[^\\'\n])*+'?)""",
    "num": r"0[xX][0-9a-fA-F]++[uU]?|(?:\d++\.\d*+|\.\d++|\d++)(?:[eE][+-]?\d++)?[uU]?",
    "ident": r"[A-Za-z_][A-Za-z0-9_]*+",
    "op": r"&&|\|\||==|!=|<=|>=|[-+*/%<>!?:]",
    "dot": r"\.",
    "open": r"[(\[{]",
    "close": r"[)\]}]",
    "comma": r",",
    "bad": r".",
}
_TOKEN = re.compile(f"(?P<ws>{_SPACE})|" + "|".join(f"(?P<{k}>{v})" for k, v in _PARTS.items()), re.VERBOSE)
# The same scan without names, for counting in C (a rejection message): space matches as "".
_COUNT = re.compile(f"{_SPACE}|(" + "|".join(f"(?:{v})" for v in _PARTS.values()) + ")", re.VERBOSE)
_QUOTE = re.compile(r"[\"']")
_OPERAND_END = frozenset({"str", "num", "ident", "close"})


class _Frame:
    """One open bracket: is it a literal (entries counted), a comprehension, and the running counts."""

    __slots__ = ("chain", "commas", "literal", "macro")

    def __init__(self, literal: bool, macro: bool) -> None:
        self.literal = literal
        self.macro = macro
        self.commas = 0
        self.chain = 0


def check(expr: str, limits: Limits = LIMITS["dra"]) -> int:
    """Raise CELRejected when ``expr`` exceeds a limit; otherwise return its number of tokens."""
    size = len(expr.encode("utf-8"))
    if size > MAX_BYTES:
        raise CELRejected(f"expression is {size} bytes, more than the limit of {MAX_BYTES}")
    noun, fix = limits.noun, limits.fix
    stack = [_Frame(literal=False, macro=False)]  # the bottom frame is the whole expression
    comprehensions = nested = tokens = 0
    prev = ""  # the last token's kind
    prev_text = prev2_text = ""  # the last two tokens
    for m in _TOKEN.finditer(expr):
        kind = m.lastgroup
        if kind == "ws":
            continue
        text = m.group()
        if kind == "ident" and text == "in":
            kind = "op"  # "x in [...]": a literal follows, not an index
        tokens += 1
        if tokens > limits.tokens:
            total = tokens + sum(map(bool, _COUNT.findall(expr, m.end())))
            raise CELRejected(f"{noun} too complex: {total:,} tokens > {limits.tokens:,}; {fix}")
        top = stack[-1]
        if kind == "str":
            chars = _string_chars(text)
            if chars > limits.string_chars:
                raise CELRejected(f"{noun} has a string literal of {chars:,} characters > "
                                  f"{limits.string_chars:,}; shorten it")
        elif kind == "op":
            top.chain += 1
            if top.chain > limits.chain:
                raise CELRejected(f"{noun} too complex: more than {limits.chain} operators in a row; {fix}")
        elif kind == "open":
            macro = False
            if text == "(" and prev == "ident" and prev_text in limits.forbidden:
                if prev_text in FORBIDDEN:
                    raise CELRejected(f"{prev_text}() is not available in Kubernetes CEL")
                raise CELRejected(f"{prev_text}() is not available in {noun}s; compare attributes directly")
            if text == "(" and prev == "ident" and prev2_text == ".":
                macro = prev_text in MACROS
            if macro:
                comprehensions += 1
                if comprehensions > MAX_COMPREHENSIONS:
                    raise CELRejected(f"more than {MAX_COMPREHENSIONS} comprehensions (all/exists/map/filter)")
                if nested + 1 > MAX_COMPREHENSION_DEPTH:
                    raise CELRejected(f"comprehensions nested more than {MAX_COMPREHENSION_DEPTH} deep")
                nested += 1
            # "[" after an operand indexes it; anywhere else it, like "{", starts a literal.
            literal = text == "{" or (text == "[" and prev not in _OPERAND_END)
            stack.append(_Frame(literal, macro))
            if len(stack) - 1 > MAX_DEPTH:
                raise CELRejected(f"expression nests brackets more than {MAX_DEPTH} deep")
        elif kind == "close" and len(stack) > 1:
            nested -= stack.pop().macro
        elif kind == "comma":
            top.chain = 0
            top.commas += 1
            if top.literal and top.commas + 1 > limits.literal_entries:
                raise CELRejected(f"{noun} has a literal of more than {limits.literal_entries} entries; "
                                  f"{fix}")
        prev, prev2_text, prev_text = kind, prev_text, text
    return tokens


def _string_chars(token: str) -> int:
    """Characters between the quotes of a string token (prefix and quotes excluded, escapes as written)."""
    start = _QUOTE.search(token).start()
    quotes = 3 if token.startswith(token[start] * 3, start) and len(token) - start >= 6 else 1
    closed = len(token) - start >= 2 * quotes and token.endswith(token[start] * quotes)
    return len(token) - start - quotes * (2 if closed else 1)
