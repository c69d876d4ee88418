"""Tenancy: two namespaces with same-named XRs never see or adopt each other's things.

The fleet holds the same caches, replicas, endpoints and secrets in two
namespaces. Each namespaced function runs once per tenant; the API server
stand-in (fleet.answer) honours the namespace a requirement carries, so a
requirement without one would hand the function the other tenant's objects,
and the other tenant's name would show up in the response. Names are checked
as a property too: DNS-1123 labels of at most 63 characters that never
collide, through lib/modelplane/naming.py and through the real functions.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane import functions, naming

from tests import support
from tests.reliability import fleet
from tests.reliability import strategies as S
from tests.reliability.common import SOAK, require_function

TENANTS = ("team-a", "team-b")
NAMESPACED = [f for f in functions.ALL if S.namespaced(S.PLURALS[f])]
# Kinds that live in a namespace: ours by XRD scope, plus the core kinds functions may read.
CORE_NAMESPACED = {"Secret", "ConfigMap", "Service"}


def is_namespaced_kind(kind: str) -> bool:
    plural = S.kind_plural(kind)
    return S.namespaced(plural) if plural else kind in CORE_NAMESPACED


def run_as(function: str, namespace: str, name: str | None = None):
    items = fleet.catalog(TENANTS)
    xr = fleet.baseline(function, namespace, name=name)
    return fleet.converge(support.run, function, xr, items=items)


def remote(obj: dict) -> dict | None:
    """The manifest inside a provider-kubernetes Object (None for other kinds)."""
    if obj.get("kind") != "Object":
        return None
    return ((obj.get("spec") or {}).get("forProvider") or {}).get("manifest")


def identities(rsp) -> set[tuple]:
    """(where, kind, namespace, name) of every composed object and remote manifest."""
    out = set()
    for obj in support.desired(rsp).values():
        meta = obj.get("metadata") or {}
        out.add(("local", obj.get("kind"), meta.get("namespace", ""), meta.get("name")))
        manifest = remote(obj)
        if manifest:
            pc = ((obj.get("spec") or {}).get("providerConfigRef") or {}).get("name")
            m = manifest.get("metadata") or {}
            out.add((f"remote:{pc}", manifest.get("kind"), m.get("namespace", ""), m.get("name")))
    return out


@dataclass(frozen=True)
class Case:
    function: str


@pytest.mark.parametrize("case", [Case(f) for f in NAMESPACED], ids=lambda c: c.function)
def test_requirements_for_namespaced_inputs_carry_the_xr_namespace(case):
    require_function(case.function)
    for ns in TENANTS:
        rsp = run_as(case.function, ns)
        for name, sel in fleet.selectors(rsp.requirements).items():
            if is_namespaced_kind(sel["kind"]):
                assert sel["namespace"] == ns, f"{case.function} requirement {name} ({sel['kind']}) in {ns}: {sel}"


@pytest.mark.parametrize("case", [Case(f) for f in NAMESPACED], ids=lambda c: c.function)
def test_same_named_xrs_in_two_namespaces_never_share_or_see_anything(case):
    require_function(case.function)
    a, b = (run_as(case.function, ns) for ns in TENANTS)
    for mine, other, rsp in (("team-a", "team-b", a), ("team-b", "team-a", b)):
        assert support.fatal(rsp) is None, support.fatal(rsp)
        text = json.dumps({"desired": support.desired(rsp), "status": support.status(rsp)})
        assert other not in text, f"{case.function} in {mine} mentions {other}"
    overlap = identities(a) & identities(b)
    assert overlap == set(), f"{case.function}: both tenants compose {sorted(overlap)}"
    for rsp, ns in ((a, "team-a"), (b, "team-b")):
        for obj in support.desired(rsp).values():
            manifest = remote(obj)
            if manifest and manifest.get("kind") != "Namespace":
                assert (manifest.get("metadata") or {}).get("namespace") == ns, (case.function, manifest)


# ----- names -----------------------------------------------------------------
NAME_PART = st.one_of(S.NAMES, st.text(min_size=1, max_size=80))


@settings(settings.get_profile("reliability"), max_examples=2000 if SOAK else 300)
@given(a=st.tuples(NAME_PART, st.integers(0, 999), NAME_PART), b=st.tuples(NAME_PART, st.integers(0, 999), NAME_PART))
def test_replica_names_are_short_dns_labels_that_never_collide(a, b):
    na, nb = naming.replica_name(*a), naming.replica_name(*b)
    assert naming.is_dns_label(na) and len(na) <= 63
    if "-".join(map(str, a)) != "-".join(map(str, b)):
        assert na != nb, (a, b)


@settings(settings.get_profile("reliability"), max_examples=1000 if SOAK else 200)
@given(a=NAME_PART, b=NAME_PART)
def test_cache_pvc_names_are_short_dns_labels_that_never_collide(a, b):
    pa, pb = naming.cache_pvc_name(a), naming.cache_pvc_name(b)
    assert naming.is_dns_label(pa) and len(pa) <= 63
    assert (pa == pb) == (a == b)


def composed_names(rsp) -> list[str]:
    out = []
    for obj in support.desired(rsp).values():
        out.append((obj.get("metadata") or {}).get("name", ""))
        manifest = remote(obj)
        if manifest:
            out.append((manifest.get("metadata") or {}).get("name", ""))
    return out


@pytest.mark.parametrize("case", [Case(f) for f in NAMESPACED], ids=lambda c: c.function)
def test_composed_names_from_random_xr_names_are_short_dns_labels(case):
    require_function(case.function)

    @settings(settings.get_profile("reliability"), max_examples=300 if SOAK else 25)
    @given(namespace=S.NAMES, name=S.NAMES)
    def one(namespace, name):
        rsp = run_as(case.function, namespace, name=name)
        assert not (support.fatal(rsp) or "").startswith("internal error"), support.fatal(rsp)
        for composed in composed_names(rsp):
            assert naming.is_dns_label(composed) and len(composed) <= 63, (case.function, namespace, name, composed)

    one()
