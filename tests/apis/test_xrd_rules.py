"""Every admission rule of our XRDs, accepted and rejected, through the offline
validator: the rows of rule_cases.py, each a manifest built from a valid base
with one change, and the finding (path and message) the change must produce,
or none."""
from __future__ import annotations

import celpy
import pytest
from modelplane import paths

from tests.apis import files
from tests.apis.rule_cases import CASES


@pytest.fixture(scope="module")
def validator():
    from modelplane.validate import Validator

    return Validator.from_paths([paths.APIS])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_rule(validator, case):
    got = [(f.path, f.message) for f in validator.validate_document(case.doc, source=case.name)]
    if case.path is None:
        assert got == [], f"want accepted, got {got}"
        return
    hits = [(p, m) for p, m in got if case.message in m]
    assert hits, f"want a finding containing {case.message!r}, got {got}"
    assert hits[0][0] == case.path, f"want path {case.path!r}, got {hits[0][0]!r}"


def all_rules() -> list[tuple[str, str, dict]]:
    return [(plural, where, r) for plural, x in files.xrds().items() for where, r in files.rules(files.openapi(x))]


@pytest.mark.parametrize("plural,where,rule", all_rules(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_rule_compiles_and_has_accepted_and_rejected_cases(plural, where, rule):
    celpy.Environment().compile(rule["rule"])
    rejected = [c for c in CASES if c.path is not None and c.message in rule["message"]]
    assert rejected, f"{plural}{where}: add a rejected case for {rule['message']!r}"
    kind = files.xrds()[plural]["spec"]["names"]["kind"]
    assert any(c.path is None and c.doc["kind"] == kind for c in CASES), f"add an accepted {kind} case"
