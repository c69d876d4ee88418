"""Input checks and reading rules, with the real CLI's messages."""
from __future__ import annotations

import pytest
from modelplane.render.errors import RenderError
from modelplane.render.loader import check_composition
from modelplane.render.reader import load_all

XR = {"apiVersion": "example.org/v1", "kind": "XNet", "metadata": {"name": "net"}, "spec": {}}


def _comp(api="example.org/v1", kind="XNet", mode="Pipeline", labels=None) -> dict:
    return {
        "metadata": {"name": "c", "labels": labels or {}},
        "spec": {"compositeTypeRef": {"apiVersion": api, "kind": kind}, "mode": mode},
    }


@pytest.mark.parametrize(
    "reason,xr,comp,want",
    [
        ("kind differs", XR, _comp(kind="XOther"),
         "composition's compositeTypeRef.kind (XOther) does not match XR's kind (XNet)"),
        ("apiVersion differs", XR, _comp(api="example.org/v2"),
         "composition's compositeTypeRef.apiVersion (example.org/v2) does not match XR's apiVersion (example.org/v1)"),
        ("legacy selector label has another value",
         {**XR, "spec": {"compositionSelector": {"matchLabels": {"tier": "gold"}}}}, _comp(labels={"tier": "silver"}),
         'composition "c" has incorrect value for label "tier": want "gold", got "silver"'),
        ("mode must be explicit", XR, _comp(mode=None),
         'render only supports Composition Function pipelines: Composition "c" must use spec.mode: Pipeline'),
    ],
)
def test_check_composition_errors(reason, xr, comp, want):
    with pytest.raises(RenderError) as err:
        check_composition(xr, comp)
    assert str(err.value) == want, reason


def test_check_composition_accepts_matching_selector():
    xr = {**XR, "spec": {"crossplane": {"compositionSelector": {"matchLabels": {"tier": "gold"}}}}}
    check_composition(xr, _comp(labels={"tier": "gold"}))


@pytest.mark.parametrize(
    "text,want",
    [
        ("a: y", {"a": True}),
        ("a: 2024-01-01", {"a": "2024-01-01"}),
        ("a: 1:20", {"a": "1:20"}),
        ("a: 1e3", {"a": 1000}),
        ("a: 0x10", {"a": 16}),
        ("1: one", {"1": "one"}),
    ],
)
def test_reader_resolves_like_go_yaml(text, want):
    assert load_all(text) == [want]
