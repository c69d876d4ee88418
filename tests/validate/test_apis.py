"""Smoke: every XRD under apis/ converts and passes check_xrd; every example validates."""
from __future__ import annotations

import pytest
from modelplane import paths
from modelplane.validate import Validator, check_xrd, manifests, to_crd

DEFINITIONS = sorted(paths.APIS.glob("*/definition.yaml"))


def test_there_are_definitions() -> None:
    assert len(DEFINITIONS) >= 8


@pytest.mark.parametrize("path", DEFINITIONS, ids=lambda p: p.parent.name)
def test_definition_converts_and_checks(path) -> None:
    (doc,) = manifests.load_file(path)
    crd = to_crd(doc)
    assert crd["spec"]["names"]["kind"] == doc["spec"]["names"]["kind"]
    assert [str(p) for p in check_xrd(doc)] == []


def test_examples_validate() -> None:
    v = Validator.from_paths([paths.APIS], upstream=True)
    findings = [str(f) for d in manifests.documents([paths.EXAMPLES]) for f in v.validate_document(d.body, d.source)]
    assert findings == []
