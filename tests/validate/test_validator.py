"""The public Validator: findings, missing schemas, defaults, Crossplane's injected fields."""
from __future__ import annotations

import pytest
from modelplane.validate import Finding, Validator

from .validator_cases import CASES, GADGET, SPEC, Case
from .xrds import crd, widget, xrd


@pytest.fixture(scope="module")
def validator(tmp_path_factory: pytest.TempPathFactory) -> Validator:
    import yaml

    root = tmp_path_factory.mktemp("apis")
    (root / "widgets").mkdir()
    (root / "widgets" / "definition.yaml").write_text(yaml.safe_dump(xrd(SPEC)))
    (root / "gadgets.yaml").write_text(yaml.safe_dump(crd(GADGET)))
    (root / "notes.txt").write_text("not yaml: [")
    return Validator.from_paths([root])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_validate_document(validator: Validator, case: Case) -> None:
    got = [(f.path, f.message) for f in validator.validate_document(case.doc, "in.yaml")]
    assert len(got) == len(case.want), f"-want {case.want}\n+got {got}"
    for (want_path, want_msg), (path, msg) in zip(case.want, got):
        assert path == want_path and want_msg in msg, f"-want {(want_path, want_msg)}\n+got {(path, msg)}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_warnings(validator: Validator, case: Case) -> None:
    got = validator.warnings(case.doc, "in.yaml")
    assert [w.path for w in got] == case.warn
    assert all("crossplane beta validate rejects it" in w.message for w in got)


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
