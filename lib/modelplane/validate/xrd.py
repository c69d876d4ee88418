"""XRD -> CRD: the CustomResourceDefinition Crossplane creates for an XRD.

Mirrors Crossplane's ``xcrd.ForCompositeResource`` (v2.3): same name, group and
names plus the ``composite`` category; ``Namespaced`` stays Namespaced, anything
else is Cluster scoped. Per version: ``storage = referenceable``, a status
subresource (and ``scale`` when the XRD declares it, Crossplane >= v2.3). The
schema starts from a fixed base (``type: object``, ``required: [spec]``,
``metadata.name`` at most 63 characters, since XR names become label values)
and takes the XRD's spec/status properties, required, validations,
preserve-unknown-fields and oneOf. Crossplane's own fields are injected last
and **override** same-named XRD fields: ``spec.crossplane`` (or, for legacy
v1 XRDs, the top of ``spec``) and ``status.conditions`` (plus, for legacy XRs only,
``status.connectionDetails`` and ``claimConditionTypes``).

Root-level ``x-kubernetes-validations`` are kept (Crossplane >= v2.2, crossplane#7018),
so a root rule may read ``self.metadata.name``.
"""
from __future__ import annotations

import copy
from typing import Any

XRD_GROUP = "apiextensions.crossplane.io"
XRD_KIND = "CompositeResourceDefinition"
MAX_NAME_LENGTH = 63


def is_xrd(doc: Any) -> bool:
    """True for an ``apiextensions.crossplane.io`` v1 or v2 XRD document."""
    return (isinstance(doc, dict) and doc.get("kind") == XRD_KIND
            and str(doc.get("apiVersion", "")).startswith(XRD_GROUP + "/"))


def effective_scope(xrd: dict) -> str:
    """The scope Crossplane's API server stores: v2 defaults Namespaced, v1 LegacyCluster."""
    scope = (xrd.get("spec") or {}).get("scope")
    if scope:
        return scope
    return "LegacyCluster" if xrd.get("apiVersion") == f"{XRD_GROUP}/v1" else "Namespaced"


def to_crd(xrd: dict) -> dict:
    """The CRD for the composite resource an XRD defines (a new dict)."""
    spec = xrd.get("spec") or {}
    names = copy.deepcopy(spec.get("names") or {})
    names["categories"] = list(names.get("categories") or []) + ["composite"]
    scope = effective_scope(xrd)
    crd_spec: dict[str, Any] = {
        "group": spec.get("group"),
        "names": names,
        "scope": "Namespaced" if scope == "Namespaced" else "Cluster",
        "versions": [_version(v, scope, spec.get("defaultCompositionUpdatePolicy", "Automatic"))
                     for v in spec.get("versions") or []],
    }
    if "conversion" in spec:
        crd_spec["conversion"] = copy.deepcopy(spec["conversion"])
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": (xrd.get("metadata") or {}).get("name")},
        "spec": crd_spec,
    }


def _version(version: dict, scope: str, update_policy: str) -> dict:
    source = copy.deepcopy(((version.get("schema") or {}).get("openAPIV3Schema")) or {})
    x_spec = (source.get("properties") or {}).get("spec") or {}
    x_status = (source.get("properties") or {}).get("status") or {}
    name_max = MAX_NAME_LENGTH
    declared = (((source.get("properties") or {}).get("metadata") or {}).get("properties") or {}).get("name") or {}
    if isinstance(declared.get("maxLength"), int) and declared["maxLength"] < name_max:
        name_max = declared["maxLength"]

    spec = _merge({"type": "object", "properties": {}}, x_spec, keep_required=True)
    spec["properties"].update(spec_props(scope, update_policy))
    status = _merge({"type": "object", "properties": {}}, x_status, keep_required=True)
    status["properties"].update(status_props(scope))

    schema: dict[str, Any] = {
        "type": "object",
        "required": ["spec"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": name_max}}},
            "spec": spec,
            "status": status,
        },
    }
    for key in ("description", "x-kubernetes-validations"):
        if key in source:
            schema[key] = source[key]
    subresources: dict[str, Any] = {"status": {}}
    scale = (version.get("subresources") or {}).get("scale")
    if scale is not None:
        subresources["scale"] = copy.deepcopy(scale)
    out = {
        "name": version.get("name"),
        "served": version.get("served", False),
        "storage": version.get("referenceable", False),
        "schema": {"openAPIV3Schema": schema},
        "subresources": subresources,
        "additionalPrinterColumns": copy.deepcopy(version.get("additionalPrinterColumns") or [])
        + printer_columns(scope),
    }
    for key in ("deprecated", "deprecationWarning"):
        if key in version:
            out[key] = version[key]
    return out


def _merge(base: dict, xrd_node: dict, keep_required: bool) -> dict:
    out = dict(base)
    for key in ("description", "x-kubernetes-validations", "x-kubernetes-preserve-unknown-fields", "oneOf"):
        if key in xrd_node:
            out[key] = xrd_node[key]
    if keep_required and xrd_node.get("required"):
        out["required"] = list(xrd_node["required"])
    out["properties"] = dict(xrd_node.get("properties") or {})
    return out


def _string_map() -> dict:
    return {"type": "object", "additionalProperties": {"type": "string"}}


def _ref() -> dict:
    return {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}


def _selector() -> dict:
    return {"type": "object", "required": ["matchLabels"], "properties": {"matchLabels": _string_map()}}


def spec_props(scope: str, update_policy: str | None = "Automatic") -> dict:
    """Crossplane's injected spec properties for an XR of ``scope``."""
    ref_props = {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "name": {"type": "string"}}
    if scope != "Namespaced":
        # Only cluster-scoped XRs may reference composed resources in other namespaces.
        ref_props["namespace"] = {"type": "string"}
    policy: dict[str, Any] = {"type": "string", "enum": ["Automatic", "Manual"]}
    if update_policy:
        policy["default"] = update_policy
    props: dict[str, Any] = {
        "compositionRef": _ref(),
        "compositionSelector": _selector(),
        "compositionRevisionRef": _ref(),
        "compositionRevisionSelector": _selector(),
        "compositionUpdatePolicy": policy,
        "resourceRefs": {
            "type": "array",
            "x-kubernetes-list-type": "atomic",
            "items": {"type": "object", "required": ["apiVersion", "kind"], "properties": ref_props},
        },
    }
    if scope == "LegacyCluster":
        props["claimRef"] = {
            "type": "object",
            "required": ["apiVersion", "kind", "namespace", "name"],
            "properties": {k: {"type": "string"} for k in ("apiVersion", "kind", "namespace", "name")},
        }
        props["writeConnectionSecretToRef"] = {
            "type": "object",
            "required": ["name", "namespace"],
            "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}},
        }
        return props
    return {"crossplane": {"type": "object", "properties": props,
                           "description": "Configures how Crossplane will reconcile this composite resource"}}


def status_props(scope: str) -> dict:
    """Crossplane's injected status properties for an XR of ``scope``."""
    published = {"type": "object", "properties": {"lastPublishedTime": {"type": "string", "format": "date-time"}}}
    props: dict[str, Any] = {
        "conditions": {
            "description": "Conditions of the resource.",
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["type"],
            "items": {
                "type": "object",
                "required": ["lastTransitionTime", "reason", "status", "type"],
                "properties": {
                    "lastTransitionTime": {"type": "string", "format": "date-time"},
                    "message": {"type": "string"},
                    "reason": {"type": "string"},
                    "status": {"type": "string"},
                    "type": {"type": "string"},
                    "observedGeneration": {"type": "integer", "format": "int64"},
                },
            },
        },
    }
    # Modern (Namespaced, Cluster) XRs get conditions only: no status.crossplane (crossplane-runtime
    # v2.3 xcrd.CompositeResourceStatusProps; the e2e suite compares with the CRDs Crossplane serves).
    if scope == "LegacyCluster":
        props["connectionDetails"] = published
        props["claimConditionTypes"] = {"type": "array", "x-kubernetes-list-type": "set",
                                        "items": {"type": "string"}}
    return props


def printer_columns(scope: str) -> list[dict]:
    """Crossplane's printer columns appended after the XRD's own."""
    base = ".spec." if scope == "LegacyCluster" else ".spec.crossplane."
    return [
        {"name": "SYNCED", "type": "string", "jsonPath": ".status.conditions[?(@.type=='Synced')].status"},
        {"name": "READY", "type": "string", "jsonPath": ".status.conditions[?(@.type=='Ready')].status"},
        {"name": "COMPOSITION", "type": "string", "jsonPath": base + "compositionRef.name"},
        {"name": "COMPOSITIONREVISION", "type": "string", "jsonPath": base + "compositionRevisionRef.name",
         "priority": 1},
        {"name": "AGE", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]
