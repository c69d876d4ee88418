"""``--xrd``: apply an XRD's schema defaults to an XR, as render does.

Render derives the XR's CRD from the XRD and runs Kubernetes structural
defaulting for the XR's version only; it does not validate. Defaulting
fills a missing (or null, non-nullable) property from its ``default`` and
then descends into every present value, so defaults nested in a default
apply too. The CRD also carries the fields Crossplane injects, of which only
``compositionUpdatePolicy`` has a default (under ``spec.crossplane`` for v2
XRDs, at the top of ``spec`` for legacy ones).
"""
from __future__ import annotations

import copy
from typing import Any

from modelplane.render.errors import RenderError


def _injected(xrd: dict) -> dict:
    """The part of the derived CRD schema that Crossplane adds, with its default."""
    spec = xrd.get("spec") or {}
    policy = {"type": "string", "default": spec.get("defaultCompositionUpdatePolicy") or "Automatic"}
    legacy = xrd.get("apiVersion") == "apiextensions.crossplane.io/v1" or spec.get("scope") == "LegacyCluster"
    if legacy:
        return {"compositionUpdatePolicy": policy}
    return {"crossplane": {"type": "object", "properties": {"compositionUpdatePolicy": policy}}}


def schema_for(xrd: dict, api_version: str) -> dict:
    """The openAPIV3Schema of the XRD version the XR uses, with injected fields."""
    spec = xrd.get("spec") or {}
    group = spec.get("group", "")
    for version in spec.get("versions") or []:
        if f"{group}/{version.get('name')}" != api_version:
            continue
        schema = copy.deepcopy(((version.get("schema") or {}).get("openAPIV3Schema")) or {})
        spec_schema = schema.setdefault("properties", {}).setdefault("spec", {"type": "object"})
        spec_schema.setdefault("properties", {}).update(_injected(xrd))
        return schema
    raise RenderError(
        f"cannot default values for XR: XRD {(xrd.get('metadata') or {}).get('name', '')!r} "
        f"has no version for apiVersion {api_version!r}"
    )


def apply(value: Any, schema: dict) -> None:
    """Fill defaults into ``value`` in place (structural defaulting)."""
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key, prop in props.items():
            if "default" in prop and (key not in value or (value[key] is None and not prop.get("nullable"))):
                value[key] = copy.deepcopy(prop["default"])
        extra = schema.get("additionalProperties")
        for key, child in value.items():
            if key in props:
                apply(child, props[key])
            elif isinstance(extra, dict):
                apply(child, extra)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            apply(item, schema["items"])


def default_xr(xr: dict, xrd: dict) -> None:
    """Apply ``xrd``'s defaults for the XR's version to ``xr`` in place."""
    apply(xr, schema_for(xrd, xr.get("apiVersion", "")))
