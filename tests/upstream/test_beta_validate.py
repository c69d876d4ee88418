"""Two offline judges, case by case: `modelplane validate` and `crossplane beta validate` (v2.2).

Over every example, the invalid-manifest corpora and everything the simulated
example fleet composes: the same verdict (accept/reject) and, for a rejection,
the same field paths. The whole table is printed at the end of the run.

Where they may differ (each row names its reason):
- The cases differences.BETA_VALIDATE lists, where beta validate departs from the API
  server (nulls the server drops; CEL rules it skips after a blocking error). Each
  must still differ; a listed case that agrees fails, so the list stays true. Where
  beta validate rejects a null the server accepts, `modelplane validate` must print a
  warning, and nowhere else.
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

from tests.upstream import beta, corpus, differences
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
        elif e.id in differences.BETA_VALIDATE:
            # Listed: must differ, as measured. A listed case that agrees is a stale entry.
            differ = (ok, fields) != (theirs.accepted, theirs.fields)
            agree = differ
            note = f"known difference: {differences.BETA_VALIDATE[e.id]}" if differ else \
                "DISAGREE: listed in differences.BETA_VALIDATE but the two agree: remove the entry"
        elif (ok, fields) == (theirs.accepted, theirs.fields):
            agree, note = True, ""
        elif theirs.accepted and corpus.embedded_only(validator.validate_document(e.doc), e.doc):
            agree, note = True, corpus.EMBEDDED
        else:
            agree, note = False, "DISAGREE: " + "; ".join(theirs.lines)
        # `validate` warns exactly where beta validate rejects a null the API server accepts.
        warned = bool(validator.warnings(e.doc))
        if warned != (e.id in differences.WARNED and ok and not theirs.accepted):
            agree, note = False, f"DISAGREE: modelplane validate {'warns' if warned else 'does not warn'}"
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


def test_listed_differences_are_corpus_cases():
    ids = {e.id for e in corpus.invalid()}
    assert sorted(set(differences.BETA_VALIDATE) - ids) == []
