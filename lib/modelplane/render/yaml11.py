"""How go-yaml v2 reads a plain scalar: the YAML 1.1 rules `crossplane render` lives by.

Classic render prints with sigs.k8s.io/yaml (go-yaml v2) and reads its inputs
with the same library, so both directions must agree with it rather than with
PyYAML's resolver, which differs in small ways: go-yaml treats ``y``/``n`` as
booleans and ``1e3``/``09`` as floats, does not treat ``1:20`` as an int, and
keeps timestamps as strings when decoding into untyped data.

``resolve(text)`` returns the tag a plain scalar resolves to; ``value(text)``
returns the Python value go-yaml (then JSON) would make of it.
"""
from __future__ import annotations

import calendar
import math
import re

STR = "tag:yaml.org,2002:str"
BOOL = "tag:yaml.org,2002:bool"
NULL = "tag:yaml.org,2002:null"
INT = "tag:yaml.org,2002:int"
FLOAT = "tag:yaml.org,2002:float"
TIMESTAMP = "tag:yaml.org,2002:timestamp"

_WORDS: dict[str, tuple[str, object]] = {}
for _words, _tag, _value in (
    ("y Y yes Yes YES true True TRUE on On ON", BOOL, True),
    ("n N no No NO false False FALSE off Off OFF", BOOL, False),
    ("~ null Null NULL", NULL, None),
    (".nan .NaN .NAN", FLOAT, math.nan),
    (".inf .Inf .INF +.inf +.Inf +.INF", FLOAT, math.inf),
    ("-.inf -.Inf -.INF", FLOAT, -math.inf),
):
    for _w in _words.split():
        _WORDS[_w] = (_tag, _value)
_WORDS[""] = (NULL, None)

_INT = re.compile(r"^([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$")
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
# Go's ParseFloat on text starting with a dot (no underscores allowed there).
_DOT_FLOAT = re.compile(r"^\.[0-9]+([eE][-+]?[0-9]+)?$")
_BASE60 = re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$")
_DATE = r"(\d{4})-(\d{1,2})-(\d{1,2})"
_CLOCK = r"(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d+)?"
_TIMESTAMPS = (
    re.compile(rf"^{_DATE}[Tt]{_CLOCK}(?:Z|[+-]\d{{2}}:\d{{2}})$"),
    re.compile(rf"^{_DATE} {_CLOCK}$"),
    re.compile(rf"^{_DATE}$"),
)

INT64_MIN, INT64_MAX, UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1


def _timestamp(text: str) -> bool:
    for pattern in _TIMESTAMPS:
        m = pattern.match(text)
        if not m:
            continue
        parts = [int(g) for g in m.groups() if g is not None]
        year, month, day = parts[:3]
        if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year, month)[1]:
            return False
        if len(parts) > 3:
            hour, minute, second = parts[3:6]
            if hour > 23 or minute > 59 or second > 59:
                return False
        return True
    return False


def _int(plain: str) -> int | None:
    """Go's ParseInt(s, 0, 64), then ParseUint(s, 0, 64)."""
    m = _INT.match(plain)
    if not m:
        return None
    sign, digits = m.groups()
    prefix = digits[:2].lower()
    if prefix in ("0x", "0o", "0b"):
        n = int(digits[2:], {"0x": 16, "0o": 8, "0b": 2}[prefix])
    elif len(digits) > 1 and digits[0] == "0":
        n = int(digits, 8)
    else:
        n = int(digits)
    if sign == "-":
        n = -n
    if INT64_MIN <= n <= INT64_MAX or (not sign and n <= UINT64_MAX):
        return n
    return None


def value(text: str) -> tuple[str, object]:
    """The (tag, value) go-yaml v2 gives a plain scalar; timestamps stay strings."""
    if text in _WORDS:
        return _WORDS[text]
    first = text[0]
    if first == ".":
        if _DOT_FLOAT.match(text):
            return FLOAT, float(text)
    elif first in "+-0123456789":
        if first.isdigit() and _timestamp(text):
            return TIMESTAMP, text
        plain = text.replace("_", "")
        n = _int(plain)
        if n is not None:
            return INT, n
        if _FLOAT.match(plain):
            return FLOAT, float(plain)
    return STR, text


def resolve(text: str) -> str:
    """The tag of a plain scalar, as go-yaml's encoder decides whether to quote."""
    return value(text)[0]


def needs_quotes(text: str) -> bool:
    """True when go-yaml v2 double-quotes this string (it would read as another type)."""
    return resolve(text) != STR or bool(_BASE60.match(text))
