"""InferenceClass checks the schema cannot express, and its one-line summary.

A class describes one node of a pool as DRA-shaped devices. The XRD already
bounds sizes and enums; here we check what needs parsing: qualified names
(``[domain/]name`` with a DNS-subdomain domain and a C-identifier name of at
most 32 characters, like DRA), quantity syntax, version syntax, exactly one
attribute type, and that a DRA-claimed device names its DeviceClass.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from modelplane.errors import InputError
from modelplane.platform import nebius
from modelplane.quantity import Quantity, QuantityError
from modelplane.semver import Version, VersionError

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
ATTRIBUTE_TYPES = ("string", "int", "bool", "version")


def check_qualified_name(name: str, field: str) -> None:
    """``name`` or ``domain/name`` as DRA attribute and capacity names are."""
    domain, _, ident = name.rpartition("/")
    if domain and (len(domain) > 63 or not _SUBDOMAIN.fullmatch(domain)):
        raise InputError(field, f"domain {domain!r} of {name!r} must be a DNS subdomain such as gpu.nvidia.com")
    if not _IDENT.fullmatch(ident):
        raise InputError(
            field,
            f"name {ident!r} must be a C identifier of at most 32 characters (letters, digits, '_'), "
            f"optionally qualified as domain/name",
        )


def check_class(spec: Mapping[str, Any]) -> None:
    """Raise InputError for the first problem in an InferenceClass spec."""
    devices = spec.get("devices") or []
    if not devices:
        raise InputError("spec.devices", "list at least one device the class's nodes carry")
    for i, dev in enumerate(devices):
        at = f"spec.devices[{i}]"
        if dev.get("claim", "DRA") == "DRA" and not dev.get("deviceClassName"):
            raise InputError(f"{at}.deviceClassName", "a DRA device needs the DeviceClass its pods claim, e.g. gpu.nvidia.com")
        for name, value in sorted((dev.get("attributes") or {}).items()):
            field = f"{at}.attributes[{name}]"
            check_qualified_name(name, field)
            present = [t for t in ATTRIBUTE_TYPES if isinstance(value, dict) and value.get(t) is not None]
            if len(present) != 1:
                raise InputError(field, "set exactly one of string, int, bool or version")
            if present[0] == "version":
                try:
                    Version.parse(str(value["version"]))
                except VersionError as err:
                    raise InputError(f"{field}.version", str(err)) from None
        for name, value in sorted((dev.get("capacity") or {}).items()):
            field = f"{at}.capacity[{name}]"
            check_qualified_name(name, field)
            try:
                Quantity((value or {}).get("value"))
            except (QuantityError, TypeError) as err:
                raise InputError(f"{field}.value", str(err)) from None
    neb = (spec.get("provisioning") or {}).get("nebius")
    if neb:
        nebius.check_preset(neb, "spec.provisioning.nebius")


def summarize(spec: Mapping[str, Any]) -> str:
    """One line for ``kubectl get``: ``8x gpu (gpu.nvidia.com, 80Gi memory) + 1x nic (Synthetic)``."""
    parts = []
    for dev in spec.get("devices") or []:
        detail = [dev.get("driver", "")]
        memory = (dev.get("capacity") or {}).get("memory")
        if memory:
            detail.append(f"{Quantity(memory.get('value'))} memory")
        if dev.get("claim", "DRA") == "Synthetic":
            detail.append("Synthetic")
        parts.append(f"{dev.get('count', 1)}x {dev.get('name')} ({', '.join(d for d in detail if d)})")
    return " + ".join(parts)
