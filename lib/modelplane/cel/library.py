"""The CEL function libraries, in plain Python (no engine types).

Two libraries, named by ``compile(..., library=...)``:

- ``"dra"``: the Kubernetes DRA device-selector surface: standard CEL plus
  ``quantity()``/``isQuantity()`` and ``semver()``/``isSemver()`` with their
  member functions. Quantities: compareTo, isGreaterThan, isLessThan,
  isInteger, asInteger, asApproximateFloat, add, sub, sign. Versions:
  compareTo, isGreaterThan, isLessThan, major, minor, patch. No string or list
  extensions (seed 001: "Kubernetes-specific CEL extension libraries ... aren't
  available").
- ``"kubernetes"``: what ``x-kubernetes-validations`` rules use: the DRA set
  plus the strings extension (charAt, indexOf, lastIndexOf, lowerAscii,
  upperAscii, replace, split, join, substring, trim) and the lists extension
  (isSorted, sum, min, max, indexOf, lastIndexOf). ``matches``, ``size``,
  ``contains``, ``startsWith``, ``endsWith``, ``has`` and the macros are
  standard CEL and present in both.

Functions receive engine values (which subclass str/int/float/list/dict) and
:class:`Quantity`/:class:`Version`, return plain Python values, and raise
:class:`LibraryError` for CEL runtime errors. The engine dispatches by name
only, so a member function shared by two types (``indexOf`` on strings and
lists, ``compareTo`` on quantities and versions) checks its receiver here.

:class:`DomainMap` marks a map whose missing keys read as an empty map (the
DRA rule for ``device.attributes["<domain>"]``).
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import Any

from ..quantity import Quantity, QuantityError
from ..semver import Version, VersionError

__all__ = ["DRA", "KUBERNETES", "LIBRARIES", "DomainMap", "LibraryError"]

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class LibraryError(Exception):
    """A CEL runtime error raised by a library function."""


class DomainMap(dict):
    """A map of domain -> map whose missing domains read as an empty map, never an error."""


def _type(v: Any) -> str:
    if isinstance(v, bool) or type(v).__name__ == "BoolType":
        return "bool"
    for py, name in ((Quantity, "quantity"), (Version, "semver"), (str, "string"), (int, "int"),
                     (float, "double"), (list, "list"), (dict, "map")):
        if isinstance(v, py):
            return name
    return type(v).__name__


def _want(fn: str, v: Any, *types: type) -> None:
    if not isinstance(v, types) or (int in types and _type(v) == "bool"):
        raise LibraryError(f"no such overload: {fn}() on {_type(v)}")


# -- quantity and semver ------------------------------------------------------
def quantity(text: Any) -> Quantity:
    _want("quantity", text, str)
    try:
        return Quantity(str(text))
    except QuantityError as err:
        raise LibraryError(str(err)) from None


def is_quantity(text: Any) -> bool:
    _want("isQuantity", text, str)
    try:
        Quantity(str(text))
    except QuantityError:
        return False
    return True


def semver(text: Any) -> Version:
    _want("semver", text, str)
    try:
        return Version.parse(str(text))
    except VersionError as err:
        raise LibraryError(str(err)) from None


def is_semver(text: Any) -> bool:
    _want("isSemver", text, str)
    try:
        Version.parse(str(text))
    except VersionError:
        return False
    return True


def _same_kind(fn: str, a: Any, b: Any) -> None:
    _want(fn, a, Quantity, Version)
    if type(a) is not type(b):
        raise LibraryError(f"no such overload: {_type(a)}.{fn}({_type(b)})")


def compare_to(a: Any, b: Any) -> int:
    _same_kind("compareTo", a, b)
    return a.compare_to(b)


def is_greater_than(a: Any, b: Any) -> bool:
    _same_kind("isGreaterThan", a, b)
    return a.compare_to(b) > 0


def is_less_than(a: Any, b: Any) -> bool:
    _same_kind("isLessThan", a, b)
    return a.compare_to(b) < 0


def _quantity_operand(fn: str, a: Any, b: Any) -> Quantity:
    _want(fn, a, Quantity)
    if isinstance(b, Quantity):
        return b
    if isinstance(b, int) and _type(b) == "int":
        return Quantity(int(b))
    raise LibraryError(f"no such overload: quantity.{fn}({_type(b)})")


def q_add(a: Any, b: Any) -> Quantity:
    return a.add(_quantity_operand("add", a, b))


def q_sub(a: Any, b: Any) -> Quantity:
    return a.sub(_quantity_operand("sub", a, b))


def q_sign(a: Any) -> int:
    _want("sign", a, Quantity)
    return a.sign()


def q_is_integer(a: Any) -> bool:
    _want("isInteger", a, Quantity)
    return a.is_integer()


def q_as_integer(a: Any) -> int:
    _want("asInteger", a, Quantity)
    try:
        return a.as_integer()
    except QuantityError as err:
        raise LibraryError(str(err)) from None


def q_as_approximate_float(a: Any) -> float:
    _want("asApproximateFloat", a, Quantity)
    return a.as_approximate_float()


def v_major(v: Any) -> int:
    _want("major", v, Version)
    return v.major


def v_minor(v: Any) -> int:
    _want("minor", v, Version)
    return v.minor


def v_patch(v: Any) -> int:
    _want("patch", v, Version)
    return v.patch


# -- strings extension ------------------------------------------------------
def _int_arg(fn: str, v: Any) -> int:
    _want(fn, v, int)
    return int(v)


def char_at(s: Any, i: Any) -> str:
    _want("charAt", s, str)
    i = _int_arg("charAt", i)
    if not 0 <= i <= len(s):
        raise LibraryError(f"charAt: index {i} out of range for a string of length {len(s)}")
    return str(s)[i : i + 1]


def index_of(target: Any, item: Any, offset: Any = None) -> int:
    if isinstance(target, list):
        if offset is not None:
            raise LibraryError("no such overload: list.indexOf() takes one argument")
        return next((i for i, x in enumerate(target) if _equal(x, item)), -1)
    _want("indexOf", target, str)
    _want("indexOf", item, str)
    start = 0 if offset is None else _int_arg("indexOf", offset)
    if not 0 <= start <= len(target):
        raise LibraryError(f"indexOf: offset {start} out of range for a string of length {len(target)}")
    return str(target).find(str(item), start)


def last_index_of(target: Any, item: Any, offset: Any = None) -> int:
    if isinstance(target, list):
        if offset is not None:
            raise LibraryError("no such overload: list.lastIndexOf() takes one argument")
        return next((i for i in range(len(target) - 1, -1, -1) if _equal(target[i], item)), -1)
    _want("lastIndexOf", target, str)
    _want("lastIndexOf", item, str)
    end = len(target) if offset is None else _int_arg("lastIndexOf", offset)
    if not 0 <= end <= len(target):
        raise LibraryError(f"lastIndexOf: offset {end} out of range for a string of length {len(target)}")
    # The match may start at `end` at most, so search the prefix that ends where such a match ends.
    return str(target).rfind(str(item), 0, end + len(item))


def _ascii_map(s: str, lo: str, hi: str, delta: int) -> str:
    return "".join(chr(ord(c) + delta) if lo <= c <= hi else c for c in s)


def lower_ascii(s: Any) -> str:
    _want("lowerAscii", s, str)
    return _ascii_map(str(s), "A", "Z", 32)


def upper_ascii(s: Any) -> str:
    _want("upperAscii", s, str)
    return _ascii_map(str(s), "a", "z", -32)


def replace(s: Any, old: Any, new: Any, n: Any = None) -> str:
    for v in (s, old, new):
        _want("replace", v, str)
    count = -1 if n is None else _int_arg("replace", n)
    return str(s).replace(str(old), str(new), count if count >= 0 else -1)


def split(s: Any, sep: Any, n: Any = None) -> list[str]:
    _want("split", s, str)
    _want("split", sep, str)
    limit = -1 if n is None else _int_arg("split", n)
    text, sep = str(s), str(sep)
    if limit == 0:
        return []
    if sep == "":
        # An empty separator splits into characters; with a limit the last part keeps the rest.
        chars = list(text)
        if 0 < limit < len(chars):
            return chars[: limit - 1] + ["".join(chars[limit - 1 :])]
        return chars
    return text.split(sep, limit - 1 if limit > 0 else -1)


def join(items: Any, sep: Any = "") -> str:
    _want("join", items, list)
    _want("join", sep, str)
    for x in items:
        if not isinstance(x, str):
            raise LibraryError(f"join: list holds a {_type(x)}, want strings")
    return str(sep).join(str(x) for x in items)


def substring(s: Any, start: Any, end: Any = None) -> str:
    _want("substring", s, str)
    a = _int_arg("substring", start)
    b = len(s) if end is None else _int_arg("substring", end)
    if not 0 <= a <= b <= len(s):
        raise LibraryError(f"substring: range [{a}, {b}) out of range for a string of length {len(s)}")
    return str(s)[a:b]


def trim(s: Any) -> str:
    _want("trim", s, str)
    return str(s).strip()


# -- lists extension -------------------------------------------------------
def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except TypeError:
        return False


def _comparable(fn: str, items: Any) -> list:
    _want(fn, items, list)
    kinds = {_type(x) for x in items}
    if len(kinds) > 1:
        raise LibraryError(f"{fn}: list mixes {', '.join(sorted(kinds))}")
    if kinds and kinds.pop() not in ("int", "double", "string", "bool", "quantity", "semver"):
        raise LibraryError(f"{fn}: list elements are not comparable")
    return list(items)


def is_sorted(items: Any) -> bool:
    xs = _comparable("isSorted", items)
    return all(not (b < a) for a, b in itertools.pairwise(xs))


def sum_(items: Any) -> Any:
    xs = _comparable("sum", items)
    if xs and _type(xs[0]) not in ("int", "double"):
        raise LibraryError(f"sum: list of {_type(xs[0])}, want int or double")
    total = sum(xs, 0)
    if isinstance(total, int) and not INT64_MIN <= total <= INT64_MAX:
        raise LibraryError("sum: int64 overflow")
    return total


def max_(items: Any) -> Any:
    xs = _comparable("max", items)
    if not xs:
        raise LibraryError("max: empty list")
    return max(xs)


def min_(items: Any) -> Any:
    xs = _comparable("min", items)
    if not xs:
        raise LibraryError("min: empty list")
    return min(xs)


Function = Callable[..., Any]

DRA: Mapping[str, Function] = {
    "quantity": quantity,
    "isQuantity": is_quantity,
    "semver": semver,
    "isSemver": is_semver,
    "compareTo": compare_to,
    "isGreaterThan": is_greater_than,
    "isLessThan": is_less_than,
    "isInteger": q_is_integer,
    "asInteger": q_as_integer,
    "asApproximateFloat": q_as_approximate_float,
    "add": q_add,
    "sub": q_sub,
    "sign": q_sign,
    "major": v_major,
    "minor": v_minor,
    "patch": v_patch,
}

KUBERNETES: Mapping[str, Function] = {
    **DRA,
    "charAt": char_at,
    "indexOf": index_of,
    "lastIndexOf": last_index_of,
    "lowerAscii": lower_ascii,
    "upperAscii": upper_ascii,
    "replace": replace,
    "split": split,
    "join": join,
    "substring": substring,
    "trim": trim,
    "isSorted": is_sorted,
    "sum": sum_,
    "max": max_,
    "min": min_,
}

LIBRARIES: Mapping[str, Mapping[str, Function]] = {"dra": DRA, "kubernetes": KUBERNETES}
