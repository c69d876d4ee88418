"""Admission of one object against one ``KindSchema``, as the API server does it.

Order: defaults (on a copy), then the OpenAPI schema walk (types, constraints,
unknown fields, ObjectMeta), then the CEL rules. As in kube-apiserver, the rules
run only when the schema walk found no missing, unsupported, too long, too many
or wrongly typed value; otherwise one ``some validation rules were not checked``
error at the root stands for them (a rule would read a field that is not there
and fail for the wrong reason). Objects that carry other
objects are checked inside too: a provider-kubernetes ``Object``'s
``spec.forProvider.manifest`` is validated against its own kind's schema, with
paths under ``spec.forProvider.manifest``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import openapi, rules
from .finding import BLOCKING, INVALID, RULES_NOT_CHECKED, Problem, child
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


def dropped_nulls(obj: Any, ks: KindSchema) -> list[Problem]:
    """A warning for each null the API server drops that ``crossplane beta validate`` rejects.

    kube-apiserver drops a null in a field that is neither ``nullable`` nor defaulted
    before it validates (``openapi.apply_defaults``), so ``kubectl apply`` accepts it;
    beta validate only defaults and then rejects the null as a wrong type (measured
    with both, tests/upstream). Built-in kinds are not warned about: beta validate has
    no schema for them.
    """
    if ks.origin == "builtin":
        return []
    pruned: list[tuple[str, str]] = []
    openapi.apply_defaults(obj, ks.schema, ks.definitions, pruned)
    return [Problem(at, f"null: the API server drops it (not nullable, no default), but crossplane beta "
                        f"validate rejects it (must be of type {kind}): remove the field or give it a value")
            for at, kind in pruned]


def check(obj: dict, ks: KindSchema, lookup: Lookup | None = None, path: str = "") -> list[Problem]:
    """Every problem with ``obj`` (a whole object) under ``ks``; [] means admitted."""
    if not ks.served:
        return [Problem(child(path, "apiVersion"), f"Invalid value: {ks.api_version!r}: this version of "
                                                   f"{ks.kind} is not served; use a served version")]
    obj = defaulted(obj, ks)
    out = openapi.validate(obj, ks.schema, path, definitions=ks.definitions,
                           api_version=ks.api_version, kind=ks.kind)
    if not rules.has_rules(ks.schema):
        pass  # no CEL validator at all: the server adds nothing (cel.NewValidator returns nil)
    elif any(p.error_type in BLOCKING for p in out):
        # strategy.go:217-223 (k8s.io/apiextensions-apiserver@v0.35.4 pkg/registry/customresource).
        out.append(Problem(path, RULES_NOT_CHECKED, reason=INVALID))
    else:
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
