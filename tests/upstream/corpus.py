"""The manifests both judges see: every example, the invalid-manifest corpora of
tests/apis and tests/validate, and what the simulated example fleet composes.

Each corpus entry is (case id, document). The synthetic Widget XRD and Gadget
CRD of tests/validate are part of the schemas (``extra_definitions``).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import yaml
from modelplane import paths
from modelplane.validate import Validator, is_xrd, to_crd
from modelplane.validate import manifests as manifest_files

from tests.apis import rule_cases
from tests.validate import upstream_cases, validator_cases
from tests.validate.xrds import crd, xrd


@dataclass(frozen=True)
class Entry:
    id: str
    doc: dict


def xrds() -> list[dict]:
    """Our XRDs (apis/*/definition.yaml)."""
    return [yaml.safe_load(p.read_text()) for p in sorted(paths.APIS.glob("*/definition.yaml"))]


def extra_definitions() -> list[dict]:
    """tests/validate's Widget XRD and Gadget CRD, as its validator fixture builds them."""
    return [xrd(validator_cases.SPEC), crd(validator_cases.GADGET)]


def crds_for(definitions: list[dict]) -> list[dict]:
    """CRDs as an API server gets them: an XRD becomes Crossplane's CRD, a CRD stays."""
    return [to_crd(d) if is_xrd(d) else copy.deepcopy(d) for d in definitions]


def upstream_crds() -> list[dict]:
    """Every vendored upstream CRD (schemas/upstream, not the Kubernetes OpenAPI)."""
    out = []
    for f in sorted(paths.crds_dir().rglob("*.yaml")):
        if "kubernetes-openapi" in f.parts:
            continue
        out += [d for d in yaml.safe_load_all(f.read_text()) if isinstance(d, dict)
                and d.get("kind") == "CustomResourceDefinition"]
    return out


def examples() -> list[Entry]:
    """Every document under examples/ (id: file#index)."""
    out = []
    for d in manifest_files.documents([paths.EXAMPLES]):
        rel = d.source.split("examples/", 1)[-1]
        out.append(Entry(f"examples/{rel}#{d.index}", d.body))
    return out


def invalid() -> list[Entry]:
    """The admission corpora: tests/apis rule cases (accepted and rejected), tests/validate cases."""
    out = [Entry(f"apis:{c.name}", c.doc) for c in rule_cases.CASES]
    out += [Entry(f"validate:{c.name}", c.doc) for c in validator_cases.CASES]
    out += [Entry(f"upstream:{c.name}", c.obj) for c in upstream_cases.BAD
            if c.name != "unknown kind"]  # a kind no server serves: nothing to compare
    for c in upstream_cases.CASES:
        out.append(Entry(f"upstream:{c.name} (valid)", c.build()))
        out.append(Entry(f"upstream:{c.name} (typo)", upstream_cases.set_at(c.build(), c.typo_at, "x")))
    return out


def composed(world) -> list[Entry]:
    """Every resource the simulated fleet composed (XR children included), with its status."""
    out = []
    for key in world.ordered():
        for name, obj in sorted(world.xrs[key].composed.items()):
            out.append(Entry(f"{key[0]}/{key[1] + '/' if key[1] else ''}{key[2]}:{name}", copy.deepcopy(obj)))
    return out


def embedded(entries: list[Entry]) -> list[Entry]:
    """The manifests provider-kubernetes Objects carry (what lands on workload clusters)."""
    out = []
    for e in entries:
        if e.doc.get("kind") == "Object" and e.doc.get("apiVersion", "").startswith("kubernetes."):
            manifest = ((e.doc.get("spec") or {}).get("forProvider") or {}).get("manifest")
            if isinstance(manifest, dict):
                out.append(Entry(f"{e.id}>manifest", copy.deepcopy(manifest)))
    return out


EMBEDDED = "an Object's manifest is checked against its own kind by modelplane validate only"


def embedded_only(findings, doc: dict) -> bool:
    """Every finding lies inside a provider-kubernetes Object's manifest: opaque to the Object
    CRD (and so to the API server and beta validate); ours checks it against the manifest's
    own kind because provider-kubernetes will apply it to a workload cluster."""
    return bool(findings) and doc.get("kind") == "Object" and all(
        f.path.startswith("spec.forProvider.manifest") for f in findings)


def validator() -> Validator:
    """modelplane validate as the upstream judges are compared with it: our XRDs, the
    vendored upstream schemas and the corpora's extra definitions."""
    v = Validator.from_paths([paths.APIS], upstream=True)
    for d in extra_definitions():
        v.add_document(d, "tests/validate")
    return v
