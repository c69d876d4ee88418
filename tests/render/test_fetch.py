"""The fetcher: classic (namespace ignored) and --strict-namespace (engine) semantics."""
from __future__ import annotations

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane.render.fetch import Fetcher


def _cm(name: str, namespace: str = "", **labels: str) -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {}), **({"labels": labels} if labels else {})}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


OBJECTS = [_cm("b", "ns1", tier="gold"), _cm("a", "ns2", tier="gold"), _cm("b", "team"),
           {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}}]


def _sel(name=None, labels=None, namespace=None) -> fnv1.ResourceSelector:
    sel = fnv1.ResourceSelector(api_version="v1", kind="ConfigMap")
    if name is not None:
        sel.match_name = name
    if labels is not None:
        sel.match_labels.SetInParent()
        sel.match_labels.labels.update(labels)
    if namespace is not None:
        sel.namespace = namespace
    return sel


@pytest.mark.parametrize(
    "reason,sel,strict,want",
    [
        ("name: first by name, any namespace", _sel(name="b", namespace="team"), False, [("b", "ns1")]),
        ("labels: subset, sorted by name", _sel(labels={"tier": "gold"}), False, [("a", "ns2"), ("b", "ns1")]),
        ("empty labels match the whole kind", _sel(labels={}), False, [("a", "ns2"), ("b", "ns1"), ("b", "team")]),
        ("no clause matches the whole kind", _sel(), False, [("a", "ns2"), ("b", "ns1"), ("b", "team")]),
        ("no match is an empty list", _sel(name="zzz"), False, []),
        ("strict: namespace honoured", _sel(name="b", namespace="team"), True, [("b", "team")]),
        ("strict: name defaults to XR namespace", _sel(name="b"), True, [("b", "team")]),
        ("strict: labels without namespace span all", _sel(labels={"tier": "gold"}), True, [("a", "ns2"), ("b", "ns1")]),
    ],
)
def test_select(reason, sel, strict, want):
    got = Fetcher(OBJECTS, strict_namespace=strict, xr_namespace="team").select(sel)
    assert [(o["metadata"]["name"], o["metadata"].get("namespace", "")) for o in got] == want, reason
