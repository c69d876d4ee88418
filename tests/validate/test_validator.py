"""The public Validator: findings, missing schemas, defaults, Crossplane's injected fields."""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from modelplane.validate import Finding, Validator

from .xrds import crd, widget, xrd

SPEC = {"type": "object", "required": ["size"], "properties": {
    "size": {"type": "integer", "minimum": 1},
    "mode": {"type": "string", "enum": ["Fast", "Slow"], "default": "Fast"}}}


@pytest.fixture(scope="module")
def validator(tmp_path_factory: pytest.TempPathFactory) -> Validator:
    import yaml

    root = tmp_path_factory.mktemp("apis")
    (root / "widgets").mkdir()
    (root / "widgets" / "definition.yaml").write_text(yaml.safe_dump(xrd(SPEC)))
    (root / "gadgets.yaml").write_text(yaml.safe_dump(crd({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"on": {"type": "boolean"}}}}})))
    (root / "notes.txt").write_text("not yaml: [")
    return Validator.from_paths([root])


@dataclass
class Case:
    name: str
    doc: dict
    want: list[tuple[str, str]] = field(default_factory=list)


CASES = [
    Case("valid", widget({"size": 1})),
    Case("required", widget({}), [("spec.size", "Required value")]),
    Case("unknown field", widget({"size": 1, "colour": "red"}), [("spec.colour", 'unknown field "colour"')]),
    Case("crossplane block accepted", widget({"size": 1, "crossplane": {
        "compositionRef": {"name": "c"}, "compositionUpdatePolicy": "Manual",
        "resourceRefs": [{"apiVersion": "v1", "kind": "Service", "name": "s"}]}})),
    Case("crossplane block checked", widget({"size": 1, "crossplane": {"compositionUpdatePolicy": "Sometimes"}}),
         [("spec.crossplane.compositionUpdatePolicy", "Unsupported value")]),
    Case("namespaced XR refs carry no namespace", widget({"size": 1, "crossplane": {"resourceRefs": [
        {"apiVersion": "v1", "kind": "Service", "name": "s", "namespace": "x"}]}}),
         [("spec.crossplane.resourceRefs[0].namespace", "unknown field")]),
    Case("status conditions need their fields", {**widget({"size": 1}), "status": {"conditions": [
        {"type": "Ready", "status": "True"}]}},
         [("status.conditions[0].lastTransitionTime", "Required value"),
          ("status.conditions[0].reason", "Required value")]),
    Case("XR name at most 63", widget({"size": 1}, name="w" * 64), [("metadata.name", "Too long")]),
    Case("plain CRD", {"apiVersion": "example.org/v1", "kind": "Gadget", "metadata": {"name": "g"},
                       "spec": {"on": "yes"}}, [("spec.on", "must be of type boolean")]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_validate_document(validator: Validator, case: Case) -> None:
    got = [(f.path, f.message) for f in validator.validate_document(case.doc, "in.yaml")]
    assert len(got) == len(case.want), f"-want {case.want}\n+got {got}"
    for (want_path, want_msg), (path, msg) in zip(case.want, got):
        assert path == want_path and want_msg in msg, f"-want {(want_path, want_msg)}\n+got {(path, msg)}"


def test_missing_schema(validator: Validator) -> None:
    got = validator.validate_document({"apiVersion": "example.org/v9", "kind": "Widget",
                                       "metadata": {"name": "w"}}, "x.yaml")
    assert got == [Finding("x.yaml", "Widget/w", "", "could not find CRD/XRD for: example.org/v9, Kind=Widget",
                           missing_schema=True)]


def test_finding_reads_well(validator: Validator) -> None:
    (f,) = validator.validate_document(widget({}), "team/w.yaml")
    assert str(f) == "team/w.yaml: Widget/team/w: spec.size: Required value"


def test_apply_defaults_is_a_copy(validator: Validator) -> None:
    doc = widget({"size": 2})
    out = validator.apply_defaults(doc)
    assert out["spec"] == {"size": 2, "mode": "Fast"}
    assert "mode" not in doc["spec"]


def test_upstream_fallback() -> None:
    v = Validator.from_paths([], upstream=True)
    ok = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}
    assert v.validate_document(ok) == []
    assert [f.path for f in v.validate_document({**ok, "date": {}})] == ["date"]
