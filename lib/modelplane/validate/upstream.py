"""Composed resources against upstream schemas: what every function's tests use.

    from modelplane.validate.upstream import UpstreamSchemas, assert_valid
    s = UpstreamSchemas.load()      # CRDs under crds_dir() (lazily per kind) + Kubernetes swagger
    s.validate(obj) -> list[str]    # "spec.template.spec.containers[0].imagePullPolicy: ..."; [] is valid
    assert_valid(obj)               # AssertionError listing every error

Built-in kinds (v1 Service, apps/v1 Deployment, rbac, resource.k8s.io/v1, ...)
come from the Kubernetes release-1.36 swagger; everything else from the CRDs.
A provider-kubernetes ``Object`` is checked against its CRD and its
``spec.forProvider.manifest`` against the manifest's own kind.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from .. import paths
from . import engine
from .kinds import KindSchema, SchemaSet

SWAGGER_RELEASE = "release-1.36"


class UpstreamSchemas:
    """Schemas of every upstream kind under one CRD folder."""

    def __init__(self, schemas: SchemaSet, root: Path | str = "") -> None:
        self.schemas = schemas
        self.root = str(root)

    @classmethod
    def load(cls, crds: Path | str | None = None) -> UpstreamSchemas:
        """The (process-cached) schemas under ``crds`` (default ``modelplane.paths.crds_dir()``)."""
        return _load(str(Path(crds) if crds else paths.crds_dir()))

    def lookup(self, api_version: str, kind: str) -> KindSchema | None:
        """The schema for ``apiVersion``/``kind``, or None."""
        return self.schemas.lookup(api_version, kind)

    def validate(self, obj: Any) -> list[str]:
        """Every error in ``obj`` as ``path: message``; [] means valid."""
        if not isinstance(obj, dict):
            return [f"expected an object (a mapping), got {type(obj).__name__}"]
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
            return ["apiVersion and kind are required strings"]
        ks = self.lookup(api_version, kind)
        if ks is None:
            return [(f"could not find CRD/XRD for: {api_version}, Kind={kind} "
                     f"(no upstream schema under {self.root}; check apiVersion and kind)")]
        return [str(p) for p in engine.check(obj, ks, self.lookup)]


@functools.lru_cache(maxsize=8)
def _load(crds: str) -> UpstreamSchemas:
    s = SchemaSet()
    root = Path(crds)
    if not root.is_dir():
        raise FileNotFoundError(f"upstream CRD folder {root} does not exist; set $MODELPLANE_CRDS")
    for f in paths.yaml_files(root):
        if "kubernetes-openapi" not in f.parts:
            s.add_crd_file(f)
    swagger = root / "kubernetes-openapi" / SWAGGER_RELEASE / "swagger.json"
    if swagger.is_file():
        s.add_swagger(swagger)
    return UpstreamSchemas(s, root)


def assert_valid(obj: Any, schemas: UpstreamSchemas | None = None) -> None:
    """Raise AssertionError listing every schema error of ``obj`` (pytest-friendly)."""
    errors = (schemas or UpstreamSchemas.load()).validate(obj)
    if errors:
        name = (obj.get("metadata") or {}).get("name", "?") if isinstance(obj, dict) else "?"
        kind = obj.get("kind", "?") if isinstance(obj, dict) else "?"
        raise AssertionError(f"{kind}/{name} is not valid:\n  " + "\n  ".join(errors))
