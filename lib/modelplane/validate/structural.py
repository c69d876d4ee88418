"""Is a schema *structural*, as Kubernetes requires of every CRD schema?

Checked (each failure is a Problem at the schema path, e.g.
``spec.properties.engines.items``):

- every node states a ``type``, unless it is ``x-kubernetes-int-or-string`` or
  ``x-kubernetes-preserve-unknown-fields`` (the root may not omit it);
- ``type: object`` has ``properties``, ``additionalProperties`` or
  ``x-kubernetes-preserve-unknown-fields`` (otherwise it can hold nothing);
  ``type: array`` has ``items``;
- ``properties`` and ``additionalProperties`` are not both set, and
  ``additionalProperties: false`` is not used;
- inside ``allOf``/``anyOf``/``oneOf``/``not`` no ``type``, ``default``,
  ``nullable`` or ``additionalProperties`` (int-or-string's anyOf of integer
  and string excepted), and ``properties`` there name only fields the node
  declares;
- ``x-kubernetes-list-type: map`` has ``x-kubernetes-list-map-keys`` naming
  required-or-defaulted scalar properties of the items.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .finding import Problem

_TYPES = {"object", "array", "string", "integer", "number", "boolean"}
_JUNCTORS = ("allOf", "anyOf", "oneOf")


def check(schema: Mapping[str, Any], path: str = "") -> list[Problem]:
    """Every structural problem of ``schema`` (an openAPIV3Schema)."""
    return list(_node(schema, path, root=True))


def _at(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _node(s: Mapping[str, Any], path: str, root: bool = False) -> Iterator[Problem]:
    if not isinstance(s, Mapping):
        yield Problem(path, "schema must be an object")
        return
    typ = s.get("type")
    here = path or "<root>"
    if typ is None:
        if root or not (s.get("x-kubernetes-int-or-string") or s.get("x-kubernetes-preserve-unknown-fields")):
            yield Problem(here, "type: Required value: must not be empty for specified object fields")
    elif typ not in _TYPES:
        yield Problem(here, f"type: Unsupported value: {typ!r}: supported values: {', '.join(sorted(_TYPES))}")
    props, extra = s.get("properties"), s.get("additionalProperties")
    if typ == "object" and props is None and extra is None and not s.get("x-kubernetes-preserve-unknown-fields"):
        yield Problem(here, "type: object without properties, additionalProperties or "
                            "x-kubernetes-preserve-unknown-fields can hold no fields; declare its fields")
    if props is not None and extra not in (None,):
        yield Problem(here, "additionalProperties and properties are mutually exclusive")
    if extra is False:
        yield Problem(here, "additionalProperties: false is not allowed; unknown fields are already rejected")
    if typ == "array" and not isinstance(s.get("items"), Mapping):
        yield Problem(here, "items: Required value: an array must declare the schema of its items")
    if s.get("x-kubernetes-int-or-string") and typ is not None:
        yield Problem(here, "type must be empty when x-kubernetes-int-or-string is true")
    yield from _list_map(s, here)
    for key, sub in (props or {}).items():
        yield from _node(sub, _at(path, f"properties.{key}"))
    if isinstance(extra, Mapping):
        yield from _node(extra, _at(path, "additionalProperties"))
    if isinstance(s.get("items"), Mapping):
        yield from _node(s["items"], _at(path, "items"))
    for j in _JUNCTORS:
        for i, sub in enumerate(s.get(j) or []):
            yield from _junctor(sub, f"{_at(path, j)}[{i}]", s, j)
    if isinstance(s.get("not"), Mapping):
        yield from _junctor(s["not"], _at(path, "not"), s, "not")


def _junctor(sub: Mapping[str, Any], path: str, parent: Mapping[str, Any], junctor: str) -> Iterator[Problem]:
    if not isinstance(sub, Mapping):
        yield Problem(path, "schema must be an object")
        return
    int_or_string = parent.get("x-kubernetes-int-or-string") and junctor in ("anyOf", "allOf")
    for key in ("type", "default", "nullable", "additionalProperties", "x-kubernetes-preserve-unknown-fields"):
        if key in sub and not (key == "type" and int_or_string and sub["type"] in ("integer", "string")):
            yield Problem(path, f"{key}: Forbidden: must not be used inside {junctor}")
    declared = parent.get("properties") or {}
    for key, inner in (sub.get("properties") or {}).items():
        if key not in declared:
            yield Problem(_at(path, f"properties.{key}"),
                          f"Forbidden: {junctor} may only constrain fields the schema declares")
        else:
            yield from _junctor(inner, _at(path, f"properties.{key}"), declared[key], junctor)


def _list_map(s: Mapping[str, Any], here: str) -> Iterator[Problem]:
    kind = s.get("x-kubernetes-list-type")
    keys = s.get("x-kubernetes-list-map-keys")
    if kind is None and keys is None:
        return
    if kind not in (None, "atomic", "set", "map"):
        yield Problem(here, f"x-kubernetes-list-type: Unsupported value: {kind!r}: supported values: "
                            "atomic, map, set")
    if keys and kind != "map":
        yield Problem(here, "x-kubernetes-list-map-keys requires x-kubernetes-list-type: map")
    if kind != "map":
        return
    if not keys:
        yield Problem(here, "x-kubernetes-list-type: map requires x-kubernetes-list-map-keys")
        return
    items = s.get("items") or {}
    props, required = items.get("properties") or {}, set(items.get("required") or [])
    for k in keys:
        p = props.get(k)
        if p is None:
            yield Problem(here, f"x-kubernetes-list-map-keys: {k!r} is not a property of the items")
        elif p.get("type") not in ("string", "integer", "number", "boolean"):
            yield Problem(here, f"x-kubernetes-list-map-keys: {k!r} must be a scalar")
        elif k not in required and "default" not in p:
            yield Problem(here, f"x-kubernetes-list-map-keys: {k!r} must be required or have a default")
