"""Loaders shared by the API tests: our YAML files and Crossplane's CRD schemas."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml
from modelplane import functions, paths

FUNCTIONS = functions.ALL


def docs(path: Path) -> list[dict[str, Any]]:
    """The non-empty YAML documents of a file."""
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def xrds() -> dict[str, dict[str, Any]]:
    """Plural -> XRD, from apis/<plural>/definition.yaml."""
    return {p.parent.name: docs(p)[0] for p in sorted(paths.APIS.glob("*/definition.yaml"))}


def compositions() -> dict[str, dict[str, Any]]:
    """Plural -> Composition, from apis/<plural>/composition.yaml."""
    return {p.parent.name: docs(p)[0] for p in sorted(paths.APIS.glob("*/composition.yaml"))}


def example_files() -> list[Path]:
    """Every YAML file under examples/."""
    return sorted(p for p in paths.EXAMPLES.rglob("*") if p.suffix in (".yaml", ".yml"))


@functools.cache
def crossplane_schema(crd_file: str, version: str) -> dict[str, Any]:
    """The openAPIV3Schema of one version of a Crossplane CRD in the shared CRD folder."""
    crd = yaml.safe_load((paths.crds_dir() / "crossplane" / crd_file).read_text())
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            return v["schema"]["openAPIV3Schema"]
    raise LookupError(f"{crd_file} has no version {version}")


def rules(schema: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every x-kubernetes-validations rule under a schema, with its schema path."""
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(schema, dict):
        for r in schema.get("x-kubernetes-validations", []):
            found.append((path or ".", r))
        for key, sub in schema.get("properties", {}).items():
            found += rules(sub, f"{path}.{key}")
        for key in ("items", "additionalProperties"):
            if isinstance(schema.get(key), dict):
                found += rules(schema[key], f"{path}[]" if key == "items" else f"{path}{{}}")
    return found


def openapi(xrd: dict[str, Any]) -> dict[str, Any]:
    """The v1alpha1 openAPIV3Schema of an XRD."""
    return next(v for v in xrd["spec"]["versions"] if v["name"] == "v1alpha1")["schema"]["openAPIV3Schema"]
