"""Byte-exact YAML, as classic `crossplane render` prints it.

Go turns each object into JSON and then into YAML with go-yaml v2, so the
output follows go-yaml's rules rather than PyYAML's defaults:

- keys sorted at every level, in go-yaml's order (digit runs compare as
  numbers, non-letters before letters: ``a9`` < ``a10``, ``_x`` < ``Zx``);
- 2-space indent, list items not indented under their key, ``{}``/``[]`` empty;
- strings that YAML 1.1 would read as another type (``"True"``, ``"0"``,
  ``""``, ``"null"``, ``"y"``, timestamps, ``"1e3"``) are double-quoted; strings
  that cannot be plain are single-quoted; multi-line strings use ``|``/``|-``;
  long scalars fold at 80 columns;
- numbers are JSON doubles: integral ones print as integers while Go can hold
  them as int64/uint64, others in Go's shortest ``%g`` form (``1e+21``).

Documents are each preceded by a ``---`` line, as render prints them.
"""
from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable
from decimal import Decimal
from functools import cmp_to_key
from typing import Any

import yaml
from yaml.emitter import Emitter
from yaml.representer import SafeRepresenter
from yaml.resolver import BaseResolver
from yaml.serializer import Serializer

from modelplane.render import yaml11


def go_float(f: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64): shortest digits, exponent from 1e6 or below 1e-4."""
    if math.isnan(f):
        return ".nan"
    if math.isinf(f):
        return ".inf" if f > 0 else "-.inf"
    sign, digits, exp = Decimal(repr(f)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    exp += len(digits) - len(text)
    point = len(text) + exp  # value = 0.<text> * 10**point
    x = point - 1
    prefix = "-" if sign else ""
    if x < -4 or x >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if x < 0 else '+'}{abs(x):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{text}"
    if point >= len(text):
        return prefix + text + "0" * (point - len(text))
    return f"{prefix}{text[:point]}.{text[point:]}"


def _is_digit(c: str) -> bool:
    return unicodedata.category(c) == "Nd"


def _key_less(a: str, b: str) -> bool:
    """go-yaml v2's keyList.Less for two string keys."""
    for i in range(min(len(a), len(b))):
        if a[i] == b[i]:
            continue
        al, bl = a[i].isalpha(), b[i].isalpha()
        if al and bl:
            return a[i] < b[i]
        if al or bl:
            return bl
        an = bn = 0
        if a[i] == "0" or b[i] == "0":
            j = i - 1
            while j >= 0 and _is_digit(a[j]):
                if a[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(a) and _is_digit(a[ai]):
            an = an * 10 + (ord(a[ai]) - 48)
            ai += 1
        bi = i
        while bi < len(b) and _is_digit(b[bi]):
            bn = bn * 10 + (ord(b[bi]) - 48)
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return a[i] < b[i]
    return len(a) < len(b)


def _key_cmp(a: tuple[Any, Any], b: tuple[Any, Any]) -> int:
    ka, kb = str(a[0]), str(b[0])
    if _key_less(ka, kb):
        return -1
    return 1 if _key_less(kb, ka) else 0


def sorted_items(mapping: dict) -> list[tuple[Any, Any]]:
    """Mapping items in go-yaml v2 key order."""
    return sorted(mapping.items(), key=cmp_to_key(_key_cmp))


class _Resolver(BaseResolver):
    """Plain scalars resolve as go-yaml v2 would read them back."""

    def resolve(self, kind, value, implicit):
        if kind is yaml.ScalarNode and implicit[0]:
            return yaml11.resolve(value)
        return super().resolve(kind, value, implicit)


class _Representer(SafeRepresenter):
    def ignore_aliases(self, data):
        # Go never emits anchors; equal Python objects must print twice.
        return True

    def represent_str(self, data):
        if yaml11.needs_quotes(data):
            style = '"'
        elif "\n" in data:
            style = "|"
        else:
            style = None
        return self.represent_scalar(yaml11.STR, data, style=style)

    def represent_int(self, data):
        if yaml11.INT64_MIN <= data <= yaml11.INT64_MAX:
            return self.represent_scalar(yaml11.INT, str(data))
        # Beyond int64 Go's JSON decoding keeps the number as a double.
        return self.represent_float(float(data))

    def represent_float(self, data):
        if data.is_integer() and yaml11.INT64_MIN <= data <= yaml11.UINT64_MAX:
            return self.represent_scalar(yaml11.INT, str(int(data)))
        return self.represent_scalar(yaml11.FLOAT, go_float(data))

    def represent_dict(self, data):
        return self.represent_mapping("tag:yaml.org,2002:map", sorted_items(data))


_Representer.add_representer(str, _Representer.represent_str)
_Representer.add_representer(int, _Representer.represent_int)
_Representer.add_representer(float, _Representer.represent_float)
_Representer.add_representer(dict, _Representer.represent_dict)


class _Dumper(Emitter, Serializer, _Representer, _Resolver):
    def __init__(self, stream, **_ignored):
        Emitter.__init__(self, stream, allow_unicode=True, width=80, indent=2)
        Serializer.__init__(self)
        _Representer.__init__(self, default_style=None, default_flow_style=False, sort_keys=False)
        _Resolver.__init__(self)


def dump(obj: Any) -> str:
    """One object as go-yaml v2 prints it (no document marker)."""
    return yaml.dump(obj, Dumper=_Dumper)


def dump_documents(docs: Iterable[Any]) -> str:
    """A YAML stream as render prints it: each document after a ``---`` line."""
    return "".join("---\n" + dump(doc) for doc in docs)
