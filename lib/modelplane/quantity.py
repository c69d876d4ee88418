"""Kubernetes resource quantities (``resource.Quantity``) as exact values.

A quantity is a signed decimal number with an optional suffix:

- binary SI: ``Ki Mi Gi Ti Pi Ei`` (powers of 1024),
- decimal SI: ``n u m k M G T P E`` (powers of 1000; no suffix is 10^0),
- a decimal exponent: ``1e3``, ``1E-3``, ``2.5e+2``.

Numbers may be fractional (``0.5Gi``, ``.5``, ``5.``) and signed (``+1``,
``-1k``). The value is an exact ``Decimal``: the number times its suffix's
power, as ``kubernetes.utils.parse_quantity`` computes it
(``tests/vocabulary/test_quantity.py`` compares the two on generated input).
That parser is not used here: it is lenient where Kubernetes is not (it
accepts spaces, underscores, non-ASCII digits, ``NaN`` and ``1e3k``), and
importing it loads the whole Kubernetes client, 23 MiB in every function
server that reads a quantity.

Invariants:

- Values are exact: ``Quantity("1Gi") == Quantity("1024Mi")`` and both hash
  alike. Equality, ordering and hashing use the value only, never the format.
- Like Kubernetes, precision finer than nano (1e-9) is rounded up (away from
  zero) when parsing, so ``Quantity("0.1n") == Quantity("1n")``; and a
  binary-suffixed value above 2^63-1 is capped there.
- Each quantity remembers its format (binary, decimal SI, decimal exponent)
  from the input, so ``str()`` reproduces the Kubernetes canonical form:
  ``str(Quantity("1024Mi")) == "1Gi"``, ``str(Quantity("1.5")) == "1500m"``.
  ``Quantity(str(q)) == q`` always holds.
- Guards keep every value cheap: at most 64 characters of input and a decimal
  exponent of at most 1000 in magnitude.

Bad input raises :class:`QuantityError` (a ``ValueError``) naming the input
and the accepted forms.
"""
from __future__ import annotations

import decimal
import functools
import math
import re
from dataclasses import dataclass
from decimal import Decimal

__all__ = ["BINARY_SI", "DECIMAL_EXPONENT", "DECIMAL_SI", "Quantity", "QuantityError"]

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"

MAX_CHARS = 64
MAX_EXPONENT = 1000

_ACCEPTED = (
    "a number with an optional sign and fraction, then an optional suffix: "
    "Ki Mi Gi Ti Pi Ei, n u m k M G T P E, or an exponent like e3 / E-3"
)

# ASCII digits only: Python's \d and Decimal() also take other scripts' digits.
_GRAMMAR = re.compile(
    r"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<binary>[KMGTPE]i)|(?P<si>[numkMGTPE])|[eE](?P<exp>[+-]?[0-9]+))?"
)

# Wide enough that sums and differences of any two guarded values are exact.
_CONTEXT = decimal.Context(prec=4 * (MAX_CHARS + MAX_EXPONENT), rounding=decimal.ROUND_HALF_EVEN)
_NANO = Decimal("1e-9")
_MAX_BINARY = Decimal(2**63 - 1)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

_BINARY_SHIFT = {"K": 10, "M": 20, "G": 30, "T": 40, "P": 50, "E": 60}
_SI_POWER = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_SI_BY_POWER = {18: "E", 15: "P", 12: "T", 9: "G", 6: "M", 3: "k", 0: "", -3: "m", -6: "u", -9: "n"}
_BINARY_SUFFIXES = [("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)]


class QuantityError(ValueError):
    """A string (or number) that is not a Kubernetes quantity."""


def _bad(raw: object, why: str) -> QuantityError:
    return QuantityError(f"invalid quantity {raw!r}: {why}; want {_ACCEPTED}")


@functools.total_ordering
@dataclass(frozen=True, eq=False, slots=True)
class Quantity:
    """An exact Kubernetes quantity; construct it from a string, int or float."""

    value: Decimal
    format: str

    def __init__(self, raw: str | float | Quantity) -> None:
        value, fmt = _parse(raw)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "format", fmt)

    @classmethod
    def _of(cls, value: Decimal, fmt: str) -> Quantity:
        q = object.__new__(cls)
        object.__setattr__(q, "value", value)
        object.__setattr__(q, "format", fmt)
        return q

    # -- comparison ------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.value == other.value

    def __lt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.value < other.value

    def __hash__(self) -> int:
        # Decimal hashes by value, so 1073741824 and 1.073741824E+9 collide as they must.
        return hash(self.value)

    def compare_to(self, other: Quantity) -> int:
        """-1, 0 or 1 as this quantity is less than, equal to or greater than ``other``."""
        return (self.value > other.value) - (self.value < other.value)

    # -- arithmetic ------------------------------------------------------
    def add(self, other: Quantity) -> Quantity:
        """The exact sum; keeps this quantity's format (as Kubernetes does)."""
        return Quantity._of(_CONTEXT.add(self.value, other.value), self.format)

    def sub(self, other: Quantity) -> Quantity:
        """The exact difference; keeps this quantity's format."""
        return Quantity._of(_CONTEXT.subtract(self.value, other.value), self.format)

    def __add__(self, other: Quantity) -> Quantity:
        return self.add(other) if isinstance(other, Quantity) else NotImplemented

    def __sub__(self, other: Quantity) -> Quantity:
        return self.sub(other) if isinstance(other, Quantity) else NotImplemented

    def sign(self) -> int:
        """-1, 0 or 1."""
        return (self.value > 0) - (self.value < 0)

    def is_integer(self) -> bool:
        """True when the value is a whole number that fits in int64 (CEL ``isInteger``)."""
        return self.value == self.value.to_integral_value() and _INT64_MIN <= self.value <= _INT64_MAX

    def as_integer(self) -> int:
        """The value as an int; raises QuantityError when fractional or outside int64."""
        if not self.is_integer():
            raise QuantityError(f"quantity {str(self)!r} is not an integer in the int64 range")
        return int(self.value)

    def as_approximate_float(self) -> float:
        """The nearest float (may lose precision, never raises)."""
        return float(self.value)

    # -- text ------------------------------------------------------------
    def __str__(self) -> str:
        return _canonical(self.value, self.format)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"


def _parse(raw: object) -> tuple[Decimal, str]:
    if isinstance(raw, Quantity):
        return raw.value, raw.format
    if isinstance(raw, bool):
        # bool is an int in Python, never a quantity in a schema.
        raise _bad(raw, "a boolean is not a number")
    if isinstance(raw, int):
        if abs(raw) >= 10 ** (MAX_CHARS):
            raise _bad(raw, f"more than {MAX_CHARS} digits")
        return Decimal(raw), DECIMAL_SI
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise _bad(raw, "not a finite number")
        # repr() is the shortest text that round-trips, so 0.1 stays 0.1, not 0.1000000000000000055...
        return _parse_text(repr(raw), raw)
    if isinstance(raw, str):
        return _parse_text(raw, raw)
    raise _bad(raw, f"a {type(raw).__name__} is not a string or number")


def _parse_text(text: str, raw: object) -> tuple[Decimal, str]:
    if len(text) > MAX_CHARS:
        raise _bad(raw if len(text) <= 80 else text[:80] + "...", f"longer than {MAX_CHARS} characters")
    m = _GRAMMAR.fullmatch(text)
    if m is None:
        raise _bad(raw, "not a quantity")
    exp = m.group("exp")
    if exp is not None:
        if abs(int(exp)) > MAX_EXPONENT:
            raise _bad(raw, f"exponent beyond +-{MAX_EXPONENT}")
        fmt = DECIMAL_EXPONENT
    elif m.group("binary"):
        fmt = BINARY_SI
    else:
        fmt = DECIMAL_SI
    with decimal.localcontext(_CONTEXT):
        value = _value(m)
        value = _round_nano(value)
        if fmt == BINARY_SI and value > _MAX_BINARY:
            value = _MAX_BINARY
        if fmt == BINARY_SI and -1 < value < 1 and value != 0:
            # Kubernetes prints sub-unit binary values in decimal SI (512m, not 0.5).
            fmt = DECIMAL_SI
    return value, fmt


def _value(m: re.Match[str]) -> Decimal:
    """The exact value of a quantity the grammar matched (in ``_CONTEXT``: wide enough for any guarded input)."""
    number = Decimal(m.group("number"))
    if m.group("binary"):
        return number * (1 << _BINARY_SHIFT[m.group("binary")[0]])
    if m.group("si"):
        return number.scaleb(_SI_POWER[m.group("si")])
    if m.group("exp") is not None:
        return number.scaleb(int(m.group("exp")))
    return number


def _round_nano(value: Decimal) -> Decimal:
    if value == value.to_integral_value():
        return value.normalize(_CONTEXT) if value != 0 else Decimal(0)
    rounded = value.quantize(_NANO, rounding=decimal.ROUND_UP, context=_CONTEXT)
    return rounded.normalize(_CONTEXT)


def _canonical(value: Decimal, fmt: str) -> str:
    if value == 0:
        return "0"
    if fmt == BINARY_SI and value == value.to_integral_value():
        n = int(value)
        for suffix, shift in _BINARY_SUFFIXES:
            if n % (1 << shift) == 0:
                return f"{n >> shift}{suffix}"
        return str(n)
    # Decimal forms: an integer mantissa times the largest power of 1000 that keeps it whole.
    # Values are multiples of 1e-9 (parsing rounds to nano), so the power is never below -9.
    exponent = value.normalize(_CONTEXT).as_tuple().exponent
    assert isinstance(exponent, int) and exponent >= -9, value
    power = (exponent // 3) * 3
    if fmt != DECIMAL_EXPONENT:
        power = min(power, 18)  # decimal SI stops at E: 1e21 prints as 1000E
    digits = str(int(_CONTEXT.scaleb(value, -power)))
    if fmt == DECIMAL_EXPONENT:
        return digits if power == 0 else f"{digits}e{power}"
    return digits + _SI_BY_POWER[power]
