"""DRA devices as CEL sees them, and selector matching with a memo.

A :class:`Device` is one InferenceClass ``spec.devices[]`` entry reduced to
what a DRA selector can read: ``device.driver``, ``device.attributes`` and
``device.capacity``. Names follow DRA: an unqualified name belongs to the
driver's domain; a qualified one (``nic.nvidia.com/linkType``) is split on its
last ``/`` into domain and name. In the activation:

- ``device.attributes["<domain>"]`` for a domain the device does not publish
  is an empty map (``has()`` false, ``"<domain>" in device.attributes``
  false), not an error;
- an unknown name in a published domain is an error, so the device does not
  match and the reason is kept;
- ``version`` attributes are semver values, capacities quantity values.

:func:`match` evaluates a selector once per (expression, device content):
results are memoized in a bounded LRU keyed by the device's content (not its
name, since selectors cannot see names), so identical devices in many classes
and clusters cost one evaluation.

A selector that runs out of its evaluation budget on one device is rejected
for every device from then on (it is "poisoned"): a bomb costs one budget per
process, not one per distinct device per request. Only rejections that follow
from the expression are remembered; a CPU-deadline rejection (which a garbage
collection or a descheduled thread can cause) is reported and forgotten.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..quantity import Quantity, QuantityError
from ..semver import Version, VersionError
from .adapter import compile
from .errors import CELError, CELRejected
from .library import DomainMap
from .stats import record

__all__ = ["MEMO_SIZE", "POISON_SIZE", "AttrValue", "Device", "DeviceError", "MatchResult", "match"]

AttrValue = str | int | bool | Version
MEMO_SIZE = 8192
POISON_SIZE = 1024

_ATTRIBUTE_KINDS = ("string", "int", "bool", "version")


class DeviceError(ValueError):
    """An InferenceClass device entry that cannot be read."""


@dataclass(frozen=True, eq=False)
class Device:
    """One device kind: its driver, typed attributes and capacities (names as published)."""

    name: str
    driver: str
    attributes: Mapping[str, AttrValue] = field(default_factory=dict)
    capacity: Mapping[str, Quantity] = field(default_factory=dict)
    key: tuple = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # Freeze the maps so the content key below stays true for the device's lifetime.
        object.__setattr__(self, "attributes", MappingProxyType(dict(self.attributes)))
        object.__setattr__(self, "capacity", MappingProxyType(dict(self.capacity)))
        # Type tags keep True and 1 (equal in Python) apart.
        attrs = tuple(sorted((k, type(v).__name__, str(v)) for k, v in self.attributes.items()))
        caps = tuple(sorted((k, v.value) for k, v in self.capacity.items()))
        object.__setattr__(self, "key", (self.driver, attrs, caps))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Device):
            return NotImplemented
        return (self.name, self.key) == (other.name, other.key)

    def __hash__(self) -> int:
        return hash((self.name, self.key))

    @classmethod
    def from_class_device(cls, d: Mapping[str, Any]) -> Device:
        """Build from an InferenceClass ``spec.devices[]`` dict; raises DeviceError naming the field."""
        name = d.get("name")
        driver = d.get("driver")
        if not isinstance(name, str) or not name:
            raise DeviceError("device needs a non-empty string name")
        if not isinstance(driver, str) or not driver:
            raise DeviceError(f"device {name!r} needs a non-empty string driver")
        attributes: dict[str, AttrValue] = {}
        for attr, typed in (d.get("attributes") or {}).items():
            attributes[attr] = _attribute(name, attr, typed)
        capacity: dict[str, Quantity] = {}
        for cap, spec in (d.get("capacity") or {}).items():
            if not isinstance(spec, Mapping) or "value" not in spec:
                raise DeviceError(f"device {name!r} capacity {cap!r}: want {{value: <quantity>}}")
            try:
                capacity[cap] = Quantity(spec["value"])
            except QuantityError as err:
                raise DeviceError(f"device {name!r} capacity {cap!r}: {err}") from None
        return cls(name=name, driver=driver, attributes=attributes, capacity=capacity)

    def activation(self) -> dict[str, Any]:
        """The CEL variables for this device: ``{"device": {driver, attributes, capacity}}``."""
        return {
            "device": {
                "driver": self.driver,
                "attributes": _by_domain(self.driver, self.attributes),
                "capacity": _by_domain(self.driver, self.capacity),
            }
        }


def _attribute(device: str, attr: str, typed: Any) -> AttrValue:
    where = f"device {device!r} attribute {attr!r}"
    if not isinstance(typed, Mapping):
        raise DeviceError(f"{where}: want exactly one of {', '.join(_ATTRIBUTE_KINDS)}")
    kinds = [k for k in _ATTRIBUTE_KINDS if typed.get(k) is not None]
    if len(kinds) != 1:
        raise DeviceError(f"{where}: want exactly one of {', '.join(_ATTRIBUTE_KINDS)}, got {sorted(typed)}")
    kind = kinds[0]
    value = typed[kind]
    checks = {"string": str, "int": int, "bool": bool, "version": str}
    if not isinstance(value, checks[kind]) or (kind == "int" and isinstance(value, bool)):
        raise DeviceError(f"{where}: {kind} value {value!r} is a {type(value).__name__}")
    if kind == "version":
        try:
            return Version.parse(value)
        except VersionError as err:
            raise DeviceError(f"{where}: {err}") from None
    return value


def _by_domain(driver: str, values: Mapping[str, Any]) -> DomainMap:
    domains = DomainMap()
    for name, value in values.items():
        domain, _, short = name.rpartition("/")
        domains.setdefault(domain or driver, {})[short] = value
    return domains


@dataclass(frozen=True)
class MatchResult:
    """Whether a device matched a selector; ``error`` holds why evaluation failed."""

    matched: bool
    error: str | None = None


_lock = threading.Lock()
_memo: OrderedDict[tuple[str, tuple], MatchResult] = OrderedDict()
_poisoned: OrderedDict[str, MatchResult] = OrderedDict()


# Transient rejections (the CPU deadline: a fact about the moment, not the selector) counted per
# thread: a caller that evaluated on this thread can tell whether an answer it built depends on
# one, and must not be kept and given again (compose-model-deployment's cacheable answer).
_transient = threading.local()


def transient_rejections() -> int:
    """How many selector evaluations on this thread were rejected for the moment (CPU deadline)
    so far; compare two readings around a piece of work."""
    return getattr(_transient, "count", 0)


def match(expr: str, device: Device) -> MatchResult:
    """Evaluate the DRA selector ``expr`` against ``device`` (memoized by content).

    A runtime error, or a result that is not a bool, is no match with the reason.
    """
    key = (expr, device.key)
    with _lock:
        # Poison first: devices that matched before the selector was poisoned must not keep matching.
        hit = _poisoned.get(expr)
        if hit is None:
            hit = _memo.get(key)
            if hit is not None:
                _memo.move_to_end(key)
    if hit is not None:
        record("memo_hits")
        return hit
    result, rejected = _evaluate(expr, device)
    with _lock:
        if rejected is not None and rejected.transient:
            _transient.count = transient_rejections() + 1
            return result
        if rejected is not None:
            _remember(_poisoned, expr, result, POISON_SIZE)
        _remember(_memo, key, result, MEMO_SIZE)
    return result


def _remember(lru: OrderedDict, key: object, value: MatchResult, size: int) -> None:
    lru[key] = value
    lru.move_to_end(key)
    if len(lru) > size:
        lru.popitem(last=False)


def _evaluate(expr: str, device: Device) -> tuple[MatchResult, CELRejected | None]:
    try:
        program = compile(expr, library="dra")
    except CELError as err:
        return MatchResult(False, err.message), None  # compile() caches its own failures
    try:
        value = program.evaluate(device.activation())
    except CELRejected as err:
        return MatchResult(False, err.message), err
    except CELError as err:
        return MatchResult(False, err.message), None
    if not isinstance(value, bool):
        return MatchResult(False, f"selector returned {_cel_type(value)}, want bool"), None
    return MatchResult(value), None


def _cel_type(value: Any) -> str:
    names = {int: "int", float: "double", str: "string", list: "list", dict: "map", Quantity: "quantity",
             Version: "semver", type(None): "null"}
    return names.get(type(value), type(value).__name__)
