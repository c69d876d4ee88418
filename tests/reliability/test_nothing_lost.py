"""Nothing is lost: a missing or empty input never drops or rewrites a composed child.

For each function we first run it against a healthy fleet (through the
requirements loop) and keep what it composed as the "observed" children.
Then, for every input it requires, that one input is either not fetched
(absent from the request) or fetched but empty, while every other input is
answered. The desired state must still hold every observed child with the
same spec, and the function must not FATAL. A missing input must be said in
a condition with reason WaitingForInputs.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import pytest
from modelplane import conditions as C
from modelplane import functions
from modelplane.pipeline.composition import without_status

from tests import support
from tests.reliability import fleet
from tests.reliability.common import require_function

# A child every function must keep even when it composes nothing itself.
STRAY = {
    "apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object",
    "metadata": {"name": "kept-child", "namespace": "modelplane-system"},
    "spec": {"forProvider": {"manifest": {"apiVersion": "v1", "kind": "ConfigMap",
                                          "metadata": {"name": "kept", "namespace": "ml-team"}}},
             "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "onprem-west"}},
}


@dataclass(frozen=True)
class Case:
    state: str        # "missing": not fetched yet; "empty": fetched, nothing matched


CASES = [Case("missing"), Case("empty")]


def healthy(function: str, xr: dict):
    """The converged response on a healthy fleet, and the children it led to.

    Two rounds: the second sees the first round's children as observed and
    Ready (a ModelReplica with its URL published), so children composed only
    from observed state (a deployment's ModelEndpoints) exist too.
    """
    rsp = fleet.converge(support.run, function, xr)
    required = fleet.answer(rsp.requirements, fleet.catalog())
    again = support.run(function, support.request(xr, observed=observed_from(rsp), required=required))
    return rsp, observed_from(again)


def observed_from(rsp) -> dict[str, dict]:
    """What the function composed, as the API server would report it back (Ready)."""
    children = {name: copy.deepcopy(obj) for name, obj in support.desired(rsp).items()}
    children.setdefault("kept-child", copy.deepcopy(STRAY))
    for obj in children.values():
        obj["status"] = {"conditions": fleet.READY}
        if obj.get("kind") == "ModelReplica":
            meta = obj["metadata"]
            obj["status"].update(ready=True, url="http://203.0.113.10",
                                 rewritePath=f"/{meta.get('namespace')}/{meta.get('name')}/")
    return children


def kept(observed: dict[str, dict], rsp) -> list[str]:
    """Problems: children missing from desired state or changed (status aside)."""
    desired = support.desired(rsp)
    problems = []
    for name, obj in sorted(observed.items()):
        if name not in desired:
            problems.append(f"{name} dropped")
            continue
        want, got = without_status(obj), without_status(desired[name])
        for key in sorted(set(want) | set(got)):
            if key != "metadata" and want.get(key) != got.get(key):
                problems.append(f"{name}.{key} changed")
        for key in ("name", "namespace"):
            if want["metadata"].get(key) != got["metadata"].get(key):
                problems.append(f"{name}.metadata.{key} changed")
    return problems


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.state)
@pytest.mark.parametrize("function", functions.ALL)
def test_missing_or_empty_input_keeps_every_observed_child(function, case):
    require_function(function)
    failures = []
    for label, xr in fleet.baselines(function).items():
        failures += check_inputs(f"{function} ({label})", function, xr, case)
    assert not failures, "\n".join(failures)


def check_inputs(what: str, function: str, xr: dict, case: Case) -> list[str]:
    first, observed = healthy(function, xr)
    assert support.fatal(first) is None, f"{what} FATAL on a healthy fleet: {support.fatal(first)}"
    full = fleet.answer(first.requirements, fleet.catalog())
    # An input-free function is still checked: children survive with no inputs at all.
    names = sorted(full) or [None]
    failures = []
    for name in names:
        required = {k: v for k, v in full.items() if k != name}
        if name is not None and case.state == "empty":
            required[name] = []
        rsp = support.run(function, support.request(xr, observed=observed, required=required))
        where = f"{what} with input {name!r} {case.state}"
        if support.fatal(rsp):
            failures.append(f"{where}: FATAL {support.fatal(rsp)}")
            continue
        failures += [f"{where}: {p}" for p in kept(observed, rsp)]
        if name is not None and case.state == "missing":
            reasons = {c.reason for c in rsp.conditions}
            if C.WAITING_FOR_INPUTS not in reasons:
                failures.append(f"{where}: no condition with reason {C.WAITING_FOR_INPUTS} (got {sorted(reasons)})")
    return failures


@pytest.mark.parametrize("function", functions.ALL)
def test_nothing_fetched_at_all_keeps_every_observed_child(function):
    require_function(function)
    for xr in fleet.baselines(function).values():
        _, observed = healthy(function, xr)
        rsp = support.run(function, support.request(xr, observed=observed))
        assert support.fatal(rsp) is None
        assert kept(observed, rsp) == []
