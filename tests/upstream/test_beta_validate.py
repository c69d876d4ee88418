"""Two offline judges, case by case: `modelplane validate` and `crossplane beta validate` (v2.2).

Over every example, the invalid-manifest corpora and everything the simulated
example fleet composes: the same verdict (accept/reject) and, for a rejection,
the same field paths. The whole table is printed at the end of the run.

Where they may differ, by design (each row names its reason):
- Kubernetes built-in kinds (Deployment, Service...) have no CRD, so beta
  validate reports a missing schema; ours checks them against the Kubernetes
  OpenAPI and the API-server suite judges them for real.
- A provider-kubernetes Object's ``spec.forProvider.manifest`` is an opaque
  object to the Object CRD (and to the API server); ours also checks the
  manifest against its own kind, because it will be applied to a workload cluster.
"""
from __future__ import annotations

import pytest
from modelplane.validate import Validator

from tests.upstream import beta, corpus
from tests.upstream.need import tool
from tests.upstream.tables import TABLES

pytestmark = pytest.mark.slow  # runs the crossplane CLI over a few hundred documents: `make e2e`

BUILTIN_GROUPS = {"", "apps", "batch", "rbac.authorization.k8s.io", "resource.k8s.io", "storage.k8s.io",
                  "policy", "networking.k8s.io", "autoscaling", "scheduling.k8s.io", "coordination.k8s.io",
                  "discovery.k8s.io"}
TABLE = TABLES.setdefault("modelplane validate vs crossplane beta validate", [])


@pytest.fixture(scope="module")
def validator() -> Validator:
    return corpus.validator()


@pytest.fixture(scope="module")
def judge(tmp_path_factory):
    binary = tool("crossplane")["crossplane"]
    definitions = corpus.upstream_crds() + corpus.xrds() + corpus.extra_definitions()
    root = tmp_path_factory.mktemp("beta")

    def run(entries):
        return beta.validate(binary, definitions, [e.doc for e in entries], root / str(len(list(root.iterdir()))))
    return run


def _group(doc: dict) -> str:
    api = doc.get("apiVersion", "")
    return api.rpartition("/")[0]


def _ours(validator, doc) -> tuple[bool, tuple[str, ...]]:
    found = validator.validate_document(doc, "corpus")
    return not found, tuple(sorted({f.path or "<no field>" for f in found}))


def compare(validator, judge, entries, section: str) -> list[str]:
    """Rows of the table; returns the disagreements nobody explained."""
    verdicts = judge(entries)
    wrong = []
    for e, theirs in zip(entries, verdicts, strict=True):
        ok, fields = _ours(validator, e.doc)
        if theirs.missing:
            agree = _group(e.doc) in BUILTIN_GROUPS
            note = "built-in kind: no CRD for beta validate" if agree else "beta validate has no schema"
        elif (ok, fields) == (theirs.accepted, theirs.fields):
            agree, note = True, ""
        elif theirs.accepted and corpus.embedded_only(validator.validate_document(e.doc), e.doc):
            agree, note = True, corpus.EMBEDDED
        else:
            agree, note = False, "DISAGREE: " + "; ".join(theirs.lines)
        TABLE.append((section, e.id, _show(ok, fields), "-" if theirs.missing else
                             _show(theirs.accepted, theirs.fields), note))
        if not agree:
            wrong.append(f"{e.id}: ours {_show(ok, fields)} | beta validate {_show(theirs.accepted, theirs.fields)}"
                         f" | {note}")
    return wrong


def _show(accepted: bool, fields: tuple[str, ...]) -> str:
    return "accept" if accepted else "reject " + ",".join(fields)


def test_examples(validator, judge):
    entries = corpus.examples()
    assert compare(validator, judge, entries, "examples") == []


def test_invalid_corpus(validator, judge):
    entries = corpus.invalid()
    assert compare(validator, judge, entries, "corpus") == []


def test_fleet_composed(validator, judge, fleet):
    entries = corpus.composed(fleet)
    entries += corpus.embedded(entries)
    assert compare(validator, judge, entries, "fleet") == []
