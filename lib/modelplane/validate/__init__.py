"""Offline admission: our XRDs and upstream CRDs, validated like the API server would.

    from modelplane.validate import Validator, Finding
    v = Validator.from_paths([modelplane.paths.APIS])   # XRDs (definition.yaml) and CRDs
    v.validate_document(doc, source="file.yaml") -> list[Finding]   # [] means valid
                                        # (admitted, and no composition function refuses it)
    v.warnings(doc, source="file.yaml") -> list[Finding]   # accepted, but beta validate rejects
    v.apply_defaults(doc) -> dict                        # a defaulted deep copy

A document whose apiVersion/kind has no schema gets one Finding with
``missing_schema=True`` ("could not find CRD/XRD for: ..."), as
``crossplane beta validate`` prints ``[!]``.

Modules: ``xrd`` (XRD -> CRD), ``openapi`` (schema walk, defaults),
``rules`` (CEL rules, ``check_xrd``), ``structural``, ``objectmeta``,
``kinds`` (schema sources), ``engine`` (one object, one schema),
``upstream`` (composed resources), ``refusals`` (what a composition
function refuses that admission lets through, by the function's own
check), ``manifests`` (multi-document YAML from
files and folders), ``finding`` (what is reported), ``admission`` (which
manifests are Modelplane XRs, and the XRD defaults the API server applies:
``simulate`` and ``lab`` load folders through it). The command line is
``modelplane.cli.validate``.
"""
from __future__ import annotations

import copy
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import engine, manifests, refusals
from .finding import Finding, Problem
from .kinds import KindSchema, SchemaSet
from .rules import check_xrd
from .upstream import UpstreamSchemas, assert_valid
from .xrd import is_xrd, to_crd

__all__ = ["Finding", "Problem", "UpstreamSchemas", "Validator", "assert_valid", "check_xrd", "is_xrd",
           "resource_name", "to_crd"]


def resource_name(doc: Any) -> str:
    """``Kind/name`` or ``Kind/namespace/name`` for messages."""
    if not isinstance(doc, dict):
        return "<not an object>"
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    name = meta.get("name") or (f"{meta['generateName']}*" if meta.get("generateName") else "<unnamed>")
    kind = doc.get("kind") or "<no kind>"
    return f"{kind}/{meta['namespace']}/{name}" if meta.get("namespace") else f"{kind}/{name}"


class Validator:
    """Validates documents against the XRDs/CRDs it was built from (and, optionally, upstream)."""

    def __init__(self, schemas: SchemaSet, upstream: UpstreamSchemas | None = None) -> None:
        self.schemas = schemas
        self.upstream = upstream
        self.xrds: list[tuple[str, dict]] = []  # (source, XRD document) as loaded

    @classmethod
    def from_paths(cls, paths: Iterable[Path | str], *, upstream: bool | UpstreamSchemas = False) -> Validator:
        """Load XRDs and CRDs from files and directories (recursively; other documents are ignored).

        ``upstream=True`` adds every upstream CRD and built-in kind as a fallback.
        """
        up = UpstreamSchemas.load() if upstream is True else (upstream or None)
        v = cls(SchemaSet(), up)
        for doc in manifests.documents(paths):
            v.add_document(doc.body, doc.source)
        return v

    def add_document(self, doc: Any, source: str = "") -> bool:
        """Register an XRD or CRD document; False for anything else."""
        if not isinstance(doc, dict):
            return False
        if is_xrd(doc):
            self.xrds.append((source, doc))
        return bool(self.schemas.add_document(doc, source))

    def lookup(self, api_version: str, kind: str) -> KindSchema | None:
        """Our own schema first, then upstream."""
        found = self.schemas.lookup(api_version, kind)
        if found is None and self.upstream is not None:
            found = self.upstream.lookup(api_version, kind)
        return found

    def validate_document(self, doc: Any, source: str = "") -> list[Finding]:
        """Every finding for ``doc``; [] means valid. Defaults are applied internally."""
        name = resource_name(doc)
        if not isinstance(doc, dict):
            return [Finding(source, name, "", "a manifest must be a YAML mapping")]
        api_version, kind = doc.get("apiVersion"), doc.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
            return [Finding(source, name, "", "apiVersion and kind are required strings")]
        ks = self.lookup(api_version, kind)
        if ks is None:
            return [Finding(source, name, "", f"could not find CRD/XRD for: {api_version}, Kind={kind}",
                            missing_schema=True)]
        findings = [Finding(source, name, p.path, p.message, reason=p.reason)
                    for p in engine.check(doc, ks, self.lookup)]
        if findings:
            return findings  # the function only ever sees an admitted object
        refusal = refusals.refused(engine.defaulted(doc, ks))
        if refusal is None:
            return []
        p = refusal.problem
        return [Finding(source, name, p.path, p.message, reason=p.reason, refused_by=refusal.function)]

    def warnings(self, doc: Any, source: str = "") -> list[Finding]:
        """What the API server accepts but ``crossplane beta validate`` rejects: nulls the
        server drops (``engine.dropped_nulls``). Warnings never fail a document."""
        if not isinstance(doc, dict) or not isinstance(doc.get("apiVersion"), str) \
                or not isinstance(doc.get("kind"), str):
            return []
        ks = self.lookup(doc["apiVersion"], doc["kind"])
        if ks is None:
            return []
        name = resource_name(doc)
        return [Finding(source, name, p.path, p.message) for p in engine.dropped_nulls(doc, ks)]

    def apply_defaults(self, doc: dict) -> dict:
        """A defaulted deep copy of ``doc`` (unchanged copy when its kind is unknown)."""
        ks = self.lookup(doc.get("apiVersion", ""), doc.get("kind", "")) if isinstance(doc, dict) else None
        return engine.defaulted(doc, ks) if ks else copy.deepcopy(doc)

    def check_xrds(self) -> list[Finding]:
        """Problems with the loaded XRDs themselves (scope, structure, rules that compile)."""
        out = []
        for source, doc in self.xrds:
            name = f"CompositeResourceDefinition/{(doc.get('metadata') or {}).get('name', '<unnamed>')}"
            out += [Finding(source, name, p.path, p.message) for p in check_xrd(doc)]
        return out
