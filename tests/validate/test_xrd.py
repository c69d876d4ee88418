"""XRD -> CRD conversion, as Crossplane's xcrd.ForCompositeResource builds it."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane.validate import xrd as convert

from .xrds import xrd


def schema_of(crd: dict) -> dict:
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


@dataclass
class ScopeCase:
    name: str
    api_version: str
    scope: str | None
    want_scope: str
    want_crossplane_block: bool
    want_ref_namespace: bool


SCOPES = [
    ScopeCase("v2 namespaced", "apiextensions.crossplane.io/v2", "Namespaced", "Namespaced", True, False),
    ScopeCase("v2 cluster", "apiextensions.crossplane.io/v2", "Cluster", "Cluster", True, True),
    ScopeCase("v2 without scope defaults Namespaced", "apiextensions.crossplane.io/v2", None, "Namespaced", True,
              False),
    ScopeCase("v1 without scope is legacy", "apiextensions.crossplane.io/v1", None, "Cluster", False, True),
    ScopeCase("v1 legacy cluster", "apiextensions.crossplane.io/v1", "LegacyCluster", "Cluster", False, True),
]


@pytest.mark.parametrize("case", SCOPES, ids=lambda c: c.name)
def test_scope_mapping(case: ScopeCase) -> None:
    crd = convert.to_crd(xrd(api_version=case.api_version, scope=case.scope))
    assert crd["spec"]["scope"] == case.want_scope
    spec = schema_of(crd)["properties"]["spec"]["properties"]
    assert ("crossplane" in spec) == case.want_crossplane_block
    machinery = spec["crossplane"]["properties"] if case.want_crossplane_block else spec
    ref = machinery["resourceRefs"]
    assert ref["x-kubernetes-list-type"] == "atomic"
    assert ("namespace" in ref["items"]["properties"]) == case.want_ref_namespace
    assert ("claimRef" in machinery) == (not case.want_crossplane_block)


def test_names_category_and_versions() -> None:
    crd = convert.to_crd(xrd())
    assert crd["metadata"]["name"] == "widgets.example.org"
    assert crd["spec"]["group"] == "example.org"
    assert crd["spec"]["names"]["categories"] == ["composite"]
    v = crd["spec"]["versions"][0]
    assert (v["name"], v["served"], v["storage"]) == ("v1", True, True)
    assert v["subresources"] == {"status": {}}
    assert [c["name"] for c in v["additionalPrinterColumns"]] == [
        "SYNCED", "READY", "COMPOSITION", "COMPOSITIONREVISION", "AGE"]


def test_scale_subresource_is_kept() -> None:
    scale = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas.scheduled",
             "labelSelectorPath": ".status.selector"}
    crd = convert.to_crd(xrd(subresources={"scale": scale}))
    assert crd["spec"]["versions"][0]["subresources"] == {"status": {}, "scale": scale}


def test_base_schema() -> None:
    s = schema_of(convert.to_crd(xrd()))
    assert s["type"] == "object" and s["required"] == ["spec"]
    assert s["properties"]["metadata"] == {"type": "object",
                                           "properties": {"name": {"type": "string", "maxLength": 63}}}


def test_shorter_name_limit_from_xrd_wins() -> None:
    root = {"properties": {"metadata": {"type": "object", "properties": {"name": {"type": "string",
                                                                                  "maxLength": 20}}},
                           "spec": {"type": "object"}}}
    s = schema_of(convert.to_crd(xrd(root=root)))
    assert s["properties"]["metadata"]["properties"]["name"]["maxLength"] == 20


def test_injected_fields_override_xrd_fields() -> None:
    spec = {"type": "object", "required": ["size"], "properties": {
        "size": {"type": "integer"},
        "crossplane": {"type": "string", "description": "an XRD author's clash"}},
        "x-kubernetes-validations": [{"rule": "self.size > 0"}]}
    status = {"type": "object", "properties": {"conditions": {"type": "string"}, "phase": {"type": "string"}}}
    s = schema_of(convert.to_crd(xrd(spec, status_schema=status)))
    sp = s["properties"]["spec"]
    assert sp["required"] == ["size"]
    assert sp["x-kubernetes-validations"] == [{"rule": "self.size > 0"}]
    assert sp["properties"]["crossplane"]["type"] == "object"
    policy = sp["properties"]["crossplane"]["properties"]["compositionUpdatePolicy"]
    assert policy == {"type": "string", "enum": ["Automatic", "Manual"], "default": "Automatic"}
    st = s["properties"]["status"]["properties"]
    assert st["phase"] == {"type": "string"}
    assert st["conditions"]["x-kubernetes-list-type"] == "map"
    assert st["conditions"]["x-kubernetes-list-map-keys"] == ["type"]
    assert st["conditions"]["items"]["required"] == ["lastTransitionTime", "reason", "status", "type"]
    assert "crossplane" not in st  # modern XRs: Crossplane injects status.conditions only


def test_root_rules_and_preserve_unknown_are_kept() -> None:
    spec = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    root = {"x-kubernetes-validations": [{"rule": "self.metadata.name == 'default'"}]}
    s = schema_of(convert.to_crd(xrd(spec, root=root)))
    assert s["x-kubernetes-validations"] == root["x-kubernetes-validations"]
    assert s["properties"]["spec"]["x-kubernetes-preserve-unknown-fields"] is True


def test_input_is_not_modified() -> None:
    doc = xrd()
    before = repr(doc)
    convert.to_crd(doc)
    assert repr(doc) == before
