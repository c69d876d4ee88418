"""Where schemas come from, per apiVersion and kind.

A ``KindSchema`` is one served version of one kind: its OpenAPI schema, scope,
and (for built-in kinds) the swagger definitions its ``$ref``s point into.

``SchemaSet`` indexes three sources, loading as little as it can:

- XRDs and CRDs given as documents (converted / taken at once);
- CRD files registered lazily: only the head of each file (up to
  ``spec.versions``) is read to learn group and kind; the full file is parsed
  on the first lookup of that kind and cached per process (the 1.3 MB LWS and
  1.4 MB EnvoyProxy CRDs are never reparsed);
- a Kubernetes swagger 2.0 file, whose definitions carry
  ``x-kubernetes-group-version-kind``; loaded on the first built-in lookup.
"""
from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import manifests, openapi, xrd


@dataclass(frozen=True)
class KindSchema:
    """The schema of one served ``apiVersion``/``kind``."""

    api_version: str
    kind: str
    scope: str  # "Namespaced" | "Cluster"
    schema: dict = field(repr=False)
    source: str = ""
    origin: str = "crd"  # "xrd" | "crd" | "builtin"
    served: bool = True
    definitions: dict | None = field(default=None, repr=False)


def _crd_kinds(crd: dict, source: str, origin: str) -> list[KindSchema]:
    spec = crd.get("spec") or {}
    group, kind = spec.get("group", ""), (spec.get("names") or {}).get("kind", "")
    out = []
    for v in spec.get("versions") or []:
        schema = ((v.get("schema") or {}).get("openAPIV3Schema")) or {}
        api_version = f"{group}/{v.get('name')}" if group else str(v.get("name"))
        out.append(KindSchema(api_version, kind, spec.get("scope", "Namespaced"), schema, source, origin,
                              bool(v.get("served", True))))
    return out


@functools.cache
def _load_crd_file(path: str, mtime: float) -> tuple[KindSchema, ...]:
    out: list[KindSchema] = []
    for doc in manifests.load_file(Path(path)):
        if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
            out += _crd_kinds(doc, path, "crd")
    return tuple(out)


def _head(path: Path) -> dict | None:
    """group/kind of a CRD file from its head, without parsing the schemas."""
    with path.open(encoding="utf-8") as f:
        text = f.read(32768)
    cut = re.search(r"^  versions:", text, re.MULTILINE)
    try:
        head = manifests.load_text(text[: cut.start()] if cut else "")
    except Exception:  # noqa: BLE001 - an odd layout falls back to a full parse
        head = []
    if len(head) == 1 and isinstance(head[0], dict) and head[0].get("kind") == "CustomResourceDefinition":
        spec = head[0].get("spec") or {}
        return {"group": spec.get("group"), "kind": (spec.get("names") or {}).get("kind")}
    return None


@functools.cache
def _load_swagger(path: str, mtime: float) -> tuple[dict, dict[tuple[str, str], str]]:
    with open(path, encoding="utf-8") as f:
        definitions = json.load(f)["definitions"]
    definitions = {name: _builtin_schema(name, d) for name, d in definitions.items()}
    index: dict[tuple[str, str], str] = {}
    for name, d in definitions.items():
        for gvk in d.get("x-kubernetes-group-version-kind") or []:
            api_version = f"{gvk['group']}/{gvk['version']}" if gvk.get("group") else gvk["version"]
            # The first definition wins: io.k8s.api.* sorts before deprecated aliases.
            index.setdefault((api_version, gvk["kind"]), name)
    return definitions, index


_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"


def _builtin_schema(name: str, d: dict) -> dict:
    """Swagger quirks made explicit: IntOrString, Quantity, free-form objects."""
    if name == _INT_OR_STRING:
        return {"x-kubernetes-int-or-string": True, "description": d.get("description", "")}
    if name == _QUANTITY:
        return {"format": openapi.QUANTITY_FORMAT, "description": d.get("description", "")}
    return _free_form(d)


def _free_form(node: Any) -> Any:
    # In swagger, `type: object` with no properties means "anything" (RawExtension,
    # FieldsV1, JSON); in a structural CRD schema it would mean "no fields".
    if isinstance(node, dict):
        node = {k: _free_form(v) if k in ("items", "additionalProperties") else v
                for k, v in node.items()}
        if "properties" in node:
            node["properties"] = {k: _free_form(v) for k, v in node["properties"].items()}
        if (node.get("type") == "object" and "properties" not in node and "additionalProperties" not in node
                and "$ref" not in node):
            node["x-kubernetes-preserve-unknown-fields"] = True
        return node
    return node


class SchemaSet:
    """Schemas by (apiVersion, kind); later registrations win over earlier ones."""

    def __init__(self) -> None:
        self._kinds: dict[tuple[str, str], KindSchema] = {}
        self._lazy: dict[tuple[str, str], list[str]] = {}  # (group, kind) -> CRD files
        self._swagger: list[str] = []
        self.problems: list[tuple[str, str]] = []  # (source, message) for unreadable inputs

    # -- registration

    def add_document(self, doc: dict, source: str = "") -> list[KindSchema]:
        """Register an XRD (converted to its CRD) or a CRD document."""
        if xrd.is_xrd(doc):
            kinds = _crd_kinds(xrd.to_crd(doc), source, "xrd")
        elif isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
            kinds = _crd_kinds(doc, source, "crd")
        else:
            return []
        for k in kinds:
            self._kinds[(k.api_version, k.kind)] = k
        return kinds

    def add_crd_file(self, path: Path) -> None:
        """Register a CRD file lazily (full parse on first lookup of its kind)."""
        head = _head(path)
        if head is None or not head.get("group") or not head.get("kind"):
            for k in _load_crd_file(str(path), path.stat().st_mtime):
                self._kinds[(k.api_version, k.kind)] = k
            return
        self._lazy.setdefault((head["group"], head["kind"]), []).append(str(path))

    def add_crd_dir(self, root: Path) -> None:
        """Register every CRD file under ``root`` lazily, and any swagger.json."""
        for f in manifests.yaml_files([root]):
            self.add_crd_file(f)
        for f in sorted(Path(root).rglob("swagger.json")):
            self.add_swagger(f)

    def add_swagger(self, path: Path) -> None:
        """Register a Kubernetes swagger 2.0 file for built-in kinds (newest last wins)."""
        self._swagger.append(str(path))

    # -- lookup

    def lookup(self, api_version: str, kind: str) -> KindSchema | None:
        """The schema for ``apiVersion``/``kind``, or None when none is known."""
        key = (api_version, kind)
        if key in self._kinds:
            return self._kinds[key]
        group = api_version.rpartition("/")[0]
        for path in self._lazy.pop((group, kind), []):
            for k in _load_crd_file(path, Path(path).stat().st_mtime):
                self._kinds.setdefault((k.api_version, k.kind), k)
        if key in self._kinds:
            return self._kinds[key]
        for path in reversed(self._swagger):
            definitions, idx = _load_swagger(path, Path(path).stat().st_mtime)
            if key in idx:
                schema = definitions[idx[key]]
                found = KindSchema(api_version, kind, "Namespaced", schema, path, "builtin", True, definitions)
                self._kinds[key] = found
                return found
        return None

    def xrd_kinds(self) -> list[KindSchema]:
        """Every kind registered from an XRD, sorted."""
        return sorted((k for k in self._kinds.values() if k.origin == "xrd"),
                      key=lambda k: (k.api_version, k.kind))


def from_documents(docs: Iterable[tuple[dict, str]]) -> SchemaSet:
    """A SchemaSet of the XRD/CRD documents given as (doc, source)."""
    s = SchemaSet()
    for doc, source in docs:
        s.add_document(doc, source)
    return s
