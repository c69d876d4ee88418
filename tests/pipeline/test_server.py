"""The runtime's promises, in-process: seed desired from observed, FATAL on bad input, never crash."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane.errors import InputError
from modelplane.pipeline.composition import Composition, is_ready, without_status
from modelplane.pipeline.server import run_compose

from tests import support

XR = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelService", "metadata": {"name": "s", "namespace": "ns"}}
CHILD = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "c", "namespace": "ns", "uid": "123", "resourceVersion": "9", "labels": {"a": "b"}},
    "data": {"k": "v"},
    "status": {"conditions": [{"type": "Ready", "status": "True"}]},
}


def _noop(c: Composition) -> None:
    pass


def _bad_input(c: Composition) -> None:
    raise InputError("spec.endpoints[0].selector", "select at least one label")


def _bug(c: Composition) -> None:
    raise ZeroDivisionError("division by zero")


def _drops(c: Composition) -> None:
    c.drop("child")


@dataclass
class Case:
    name: str
    compose: Callable[[Composition], None]
    want_fatal: str | None = None
    want_children: list[str] = field(default_factory=list)


CASES = [
    Case("a function that returns early keeps every observed child", _noop, want_children=["child"]),
    Case("dropping is explicit", _drops, want_children=[]),
    Case("bad input is FATAL naming the field", _bad_input,
         want_fatal="spec.endpoints[0].selector: select at least one label"),
    Case("a bug is FATAL, not a crash", _bug,
         want_fatal="internal error in test-fn: ZeroDivisionError: division by zero"),
]


def test_runner_cases():
    for case in CASES:
        rsp = run_compose("test-fn", case.compose, support.request(XR, observed={"child": CHILD}))
        assert support.fatal(rsp) == case.want_fatal, case.name
        if case.want_fatal is None:
            assert sorted(support.desired(rsp)) == case.want_children, case.name


def test_seeded_child_is_intent_without_status_or_server_metadata():
    rsp = run_compose("test-fn", _noop, support.request(XR, observed={"child": CHILD}))
    child = support.desired(rsp)["child"]
    assert "status" not in child
    assert child["metadata"] == {"name": "c", "namespace": "ns", "labels": {"a": "b"}}
    assert child["data"] == {"k": "v"}
    assert rsp.desired.resources["child"].ready == fnv1.READY_TRUE  # observed Ready=True carries over


@pytest.mark.parametrize("child", [
    {"apiVersion": "v1", "kind": "ConfigMap", "data": {"n": 3}},                       # no metadata at all
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": "odd", "data": {}},          # metadata not an object
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "u", "resourceVersion": "9",
                                                     "generateName": "p-", "annotations": {"x": "y"}},
     "spec": {"a": [1, 2.5, {"b": None}]},
     "status": {"conditions": [{"type": "Synced", "status": "True"}, {"type": "Ready", "status": "False"}]}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
     "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Ready", "status": "False"}]}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "status": "not an object"},
])
def test_seeding_equals_without_status_of_the_observed_child(child):
    """keep_observed works on the protobuf Struct in place; it must give what the dict form defines."""
    rsp = run_compose("test-fn", _noop, support.request(XR, observed={"child": child}))
    observed = {k: v for k, v in child.items()}
    if not isinstance(observed.get("metadata"), dict):
        observed["metadata"] = {}
    assert support.desired(rsp)["child"] == without_status(observed)
    want_ready = fnv1.READY_TRUE if is_ready(child if isinstance(child.get("status"), dict) else {}) else fnv1.READY_FALSE
    assert rsp.desired.resources["child"].ready == want_ready


def test_desired_from_an_earlier_step_is_not_overwritten_by_the_seed():
    earlier = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "new"}}
    rsp = run_compose("test-fn", _noop, support.request(XR, observed={"child": CHILD}, desired={"child": earlier}))
    assert support.desired(rsp)["child"]["data"] == {"k": "new"}


def test_required_is_tri_state():
    seen = {}

    def compose(c: Composition) -> None:
        seen["missing"] = c.required("clusters")
        seen["empty"] = c.required("caches")
        seen["items"] = c.required("classes")

    req = support.request(XR, required={"classes": [{"kind": "InferenceClass", "spec": {"n": 2}}]})
    req.required_resources["caches"].SetInParent()
    run_compose("test-fn", compose, req)
    assert seen == {"missing": None, "empty": [], "items": [{"kind": "InferenceClass", "spec": {"n": 2}}]}


def test_a_longer_response_ttl_is_still_shortened_by_a_time_based_decision():
    import datetime

    five_minutes = datetime.timedelta(minutes=5)
    assert run_compose("t", _noop, support.request({"kind": "X"}), five_minutes).meta.ttl.seconds == 300
    rsp = run_compose("t", lambda c: c.requeue_after(10), support.request({"kind": "X"}), five_minutes)
    assert rsp.meta.ttl.seconds == 10
