"""Answer a function's resource selectors from the objects given on the command line.

Classic render (``Fetcher``) looks only at apiVersion, kind and the match
clause, never at namespaces:

- candidates are the ``--extra-resources`` and ``--required-resources``
  objects, sorted by name (a stable sort, so file order breaks ties);
- ``match_name`` returns the first object with that name, in any namespace;
- ``match_labels`` returns every object carrying all the selector's labels
  (an empty selector matches all);
- a selector with no match clause returns every object of the kind.

The caller always sets the requirement's key, so "looked up, none found"
(a key with no items) differs from "not looked up" (no key).

``strict_namespace=True`` is the engine's (CLI >= v2.3) reading: a
selector's namespace must equal the object's; a namespaced XR's selectors
without a namespace look in the XR's namespace, except label selectors,
which keep meaning "every namespace", and cluster-scoped objects, which
have no namespace to default to.
"""
from __future__ import annotations

from collections.abc import Iterable

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def as_struct(obj: dict) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(obj)
    return s


class Fetcher:
    """Selects candidate objects for a ResourceSelector."""

    def __init__(self, candidates: Iterable[dict], *, strict_namespace: bool = False, xr_namespace: str = ""):
        self.candidates = sorted(candidates, key=lambda o: str(_meta(o).get("name", "")))
        self.strict_namespace = strict_namespace
        self.xr_namespace = xr_namespace

    def _namespace_ok(self, sel: fnv1.ResourceSelector, obj: dict) -> bool:
        if not self.strict_namespace:
            return True
        want = sel.namespace if sel.HasField("namespace") else None
        if want is None and not _meta(obj).get("namespace"):
            return True  # a cluster-scoped object: there is no namespace to default to
        if want is None and sel.WhichOneof("match") != "match_labels":
            want = self.xr_namespace
        return want is None or _meta(obj).get("namespace", "") == want

    def select(self, sel: fnv1.ResourceSelector) -> list[dict]:
        """The matching objects as plain data, in candidate order."""
        match = sel.WhichOneof("match")
        out = []
        for obj in self.candidates:
            if obj.get("apiVersion") != sel.api_version or obj.get("kind") != sel.kind:
                continue
            if not self._namespace_ok(sel, obj):
                continue
            if match == "match_name":
                if _meta(obj).get("name", "") == sel.match_name:
                    return [obj]
            elif match == "match_labels":
                labels = _meta(obj).get("labels") or {}
                if all(labels.get(k) == v for k, v in sel.match_labels.labels.items()):
                    out.append(obj)
            else:
                out.append(obj)
        return out

    def fetch(self, sel: fnv1.ResourceSelector) -> fnv1.Resources:
        """The matching objects as the Resources message a request carries."""
        return fnv1.Resources(items=[fnv1.Resource(resource=as_struct(o)) for o in self.select(sel)])


def selector_from_manifest(entry: dict) -> fnv1.ResourceSelector:
    """A Composition step's ``requirements.requiredResources[]`` entry as a selector."""
    sel = fnv1.ResourceSelector(api_version=entry.get("apiVersion", ""), kind=entry.get("kind", ""))
    if entry.get("name"):
        sel.match_name = entry["name"]
    elif entry.get("matchLabels") is not None:
        sel.match_labels.labels.update(entry.get("matchLabels") or {})
    if entry.get("namespace"):
        sel.namespace = entry["namespace"]
    return sel
