"""Tiny synthetic XRDs and CRDs for the validate tests (builders with defaults)."""
from __future__ import annotations

from typing import Any


def xrd(spec_schema: dict | None = None, *, api_version: str = "apiextensions.crossplane.io/v2",
        scope: str | None = "Namespaced", kind: str = "Widget", root: dict | None = None,
        status_schema: dict | None = None, subresources: dict | None = None) -> dict:
    """An XRD for example.org/v1 ``kind`` whose spec schema is ``spec_schema``."""
    schema: dict[str, Any] = {"type": "object", "properties": {
        "spec": spec_schema or {"type": "object", "properties": {"size": {"type": "integer"}}}}}
    if status_schema is not None:
        schema["properties"]["status"] = status_schema
    schema.update(root or {})
    version: dict[str, Any] = {"name": "v1", "served": True, "referenceable": True,
                               "schema": {"openAPIV3Schema": schema}}
    if subresources is not None:
        version["subresources"] = subresources
    plural = kind.lower() + "s"
    spec: dict[str, Any] = {"group": "example.org", "names": {"kind": kind, "plural": plural},
                            "versions": [version]}
    if scope is not None:
        spec["scope"] = scope
    return {"apiVersion": api_version, "kind": "CompositeResourceDefinition",
            "metadata": {"name": f"{plural}.example.org"}, "spec": spec}


def crd(schema: dict, *, kind: str = "Gadget", group: str = "example.org", version: str = "v1",
        scope: str = "Namespaced") -> dict:
    """A plain CRD with one served version."""
    plural = kind.lower() + "s"
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "names": {"kind": kind, "plural": plural}, "scope": scope,
                     "versions": [{"name": version, "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}}]}}


def widget(spec: dict, name: str = "w", namespace: str | None = "team", **meta: Any) -> dict:
    """An example.org/v1 Widget XR."""
    metadata: dict[str, Any] = {"name": name, **meta}
    if namespace:
        metadata["namespace"] = namespace
    return {"apiVersion": "example.org/v1", "kind": "Widget", "metadata": metadata, "spec": spec}
