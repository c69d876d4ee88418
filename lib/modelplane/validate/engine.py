"""Admission of one object against one ``KindSchema``, as the API server does it.

Order: defaults (on a copy), then the OpenAPI schema walk (types, constraints,
unknown fields, ObjectMeta), then the CEL rules. Objects that carry other
objects are checked inside too: a provider-kubernetes ``Object``'s
``spec.forProvider.manifest`` is validated against its own kind's schema, with
paths under ``spec.forProvider.manifest``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import openapi, rules
from .finding import Problem, child
from .kinds import KindSchema

Lookup = Callable[[str, str], KindSchema | None]

# (apiVersion group, kind) -> where the embedded manifest lives.
EMBEDDED_MANIFESTS: dict[tuple[str, str], tuple[str, ...]] = {
    ("kubernetes.m.crossplane.io", "Object"): ("spec", "forProvider", "manifest"),
    ("kubernetes.crossplane.io", "Object"): ("spec", "forProvider", "manifest"),
}


def defaulted(obj: Any, ks: KindSchema) -> Any:
    """A deep copy of ``obj`` with the schema's defaults applied."""
    return openapi.apply_defaults(obj, ks.schema, ks.definitions)


def check(obj: dict, ks: KindSchema, lookup: Lookup | None = None, path: str = "") -> list[Problem]:
    """Every problem with ``obj`` (a whole object) under ``ks``; [] means admitted."""
    if not ks.served:
        return [Problem(child(path, "apiVersion"), f"Invalid value: {ks.api_version!r}: this version of "
                                                   f"{ks.kind} is not served; use a served version")]
    obj = defaulted(obj, ks)
    out = openapi.validate(obj, ks.schema, path, definitions=ks.definitions,
                           api_version=ks.api_version, kind=ks.kind)
    out += rules.evaluate(obj, ks.schema, path, definitions=ks.definitions,
                          compile_errors=ks.origin == "xrd")
    if lookup is not None:
        out += _embedded(obj, ks, lookup, path)
    return out


def _embedded(obj: dict, ks: KindSchema, lookup: Lookup, path: str) -> list[Problem]:
    where = EMBEDDED_MANIFESTS.get((ks.api_version.rpartition("/")[0], ks.kind))
    if where is None:
        return []
    manifest: Any = obj
    at = path
    for key in where:
        if not isinstance(manifest, dict) or key not in manifest:
            return []
        manifest, at = manifest[key], child(at, key)
    if not isinstance(manifest, dict):
        return []
    api_version, kind = manifest.get("apiVersion"), manifest.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return []  # the embedded-resource check already reports missing apiVersion/kind
    inner = lookup(api_version, kind)
    if inner is None:
        return [Problem(at, f"could not find a schema for the embedded {api_version}, Kind={kind}")]
    return check(manifest, inner, lookup, at)
