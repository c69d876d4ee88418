"""revision: a short hash of what reaches the pods.

A change to the engines, the serving mode or the model cache is a new
revision; scale, labels, clusterSelector, tolerations, strategy and failover
are not. The hash is canonical JSON: key order never matters, and the value
for a given spec never changes between releases (a new value would roll
every replica of every deployment on upgrade).
"""
from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from modelplane.deployment.revision import LENGTH, revision, template

from tests.deployment.builders import engine, member, spec

BASE = spec()


def _first_member(s: dict) -> dict:
    return s["engines"][0]["members"][0]


def _container(s: dict) -> dict:
    return _first_member(s)["template"]["spec"]["containers"][0]


@dataclass(frozen=True)
class Change:
    name: str
    change: Callable[[dict], object]  # edits a copy of BASE in place
    rolls: bool


CHANGES = [
    # What reaches the pods: a new revision.
    Change("the image", lambda s: _container(s).update(image="vllm/vllm-openai:v0.99.0"), True),
    Change("args", lambda s: _container(s).update(args=["--max-model-len=4096"]), True),
    Change("an env var", lambda s: _container(s).update(env=[{"name": "X", "value": "1"}]), True),
    Change("a probe", lambda s: _container(s).update(readinessProbe={"httpGet": {"path": "/health", "port": 8000}}),
           True),
    Change("pod template metadata", lambda s: _first_member(s)["template"].update(metadata={"labels": {"a": "b"}}),
           True),
    Change("a device count", lambda s: _first_member(s)["nodeSelector"]["devices"][0].update(count=2), True),
    Change("a device selector", lambda s: _first_member(s)["nodeSelector"]["devices"][0].update(
        selectors=[{"cel": "true"}]), True),
    Change("a second member", lambda s: s["engines"][0]["members"].append(member(role="Worker")), True),
    Change("copies", lambda s: s["engines"][0].update(copies=2), True),
    Change("a second engine", lambda s: s["engines"].append(engine("f")), True),
    Change("the engine name", lambda s: s["engines"][0].update(name="renamed"), True),
    Change("the serving mode", lambda s: s.update(serving={"mode": "PrefillDecode"}), True),
    Change("a model cache", lambda s: s.update(modelCacheRef={"name": "c"}), True),
    # What acts on placement only: the same revision.
    Change("replicas", lambda s: s.update(replicas=9), False),
    Change("clusterSelector", lambda s: s.update(clusterSelector={"matchLabels": {"tier": "prod"}}), False),
    Change("tolerations", lambda s: s.update(tolerations=[{"key": "spot", "operator": "Exists"}]), False),
    Change("strategy", lambda s: s.update(strategy={"type": "Recreate"}), False),
    Change("failover", lambda s: s.update(failover={"after": "1m"}), False),
    Change("no serving: Unified", lambda s: s.pop("serving"), False),
    Change("serving without a mode: Unified", lambda s: s.update(serving={}), False),
    Change("a null serving: Unified", lambda s: s.update(serving=None), False),
    Change("a null modelCacheRef is no cache", lambda s: s.update(modelCacheRef=None), False),
]


@pytest.mark.parametrize("case", CHANGES, ids=lambda c: c.name)
def test_what_rolls(case: Change) -> None:
    changed = copy.deepcopy(BASE)
    case.change(changed)
    got = revision(changed) != revision(BASE)
    assert got == case.rolls, f"-want rolls={case.rolls}, +got rolls={got}"


def _reversed(value: object) -> object:
    """Every mapping, however deep, with its keys in reverse order."""
    if isinstance(value, dict):
        return {k: _reversed(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reversed(v) for v in value]
    return value


def test_key_order_does_not_matter_at_any_depth() -> None:
    shuffled = _reversed(BASE)
    assert list(shuffled) != list(BASE)  # the test shuffles something
    assert revision(shuffled) == revision(BASE)


def test_list_order_does_matter() -> None:
    two = spec(engines=[engine("e"), engine("f")])
    swapped = spec(engines=[engine("f"), engine("e")])
    assert revision(two) != revision(swapped)


def test_a_revision_is_short_lowercase_hex() -> None:
    got = revision(BASE)
    assert LENGTH == 10
    assert re.fullmatch(r"[0-9a-f]{10}", got), got


def test_a_revision_is_a_pure_function_of_its_input() -> None:
    before = copy.deepcopy(BASE)
    assert revision(BASE) == revision(copy.deepcopy(BASE))
    assert BASE == before  # nothing written into the spec (serving's default included)


def test_the_value_is_stable_across_releases() -> None:
    # Canonical JSON of {"engines": [...], "serving": {"mode": "Unified"}}: changing
    # the encoding (separators, key sort, ASCII escaping, the fields covered)
    # changes this value and would roll every replica in every fleet.
    minimal = {"engines": [{"name": "e"}]}
    assert revision(minimal) == "30fa30c43c"
    assert revision({**minimal, "modelCacheRef": {"name": "cache-é"}}) == "0cfeca33ff"


@dataclass(frozen=True)
class Template:
    name: str
    spec: dict
    want: dict


TEMPLATES = [
    Template("only the fields that reach the pods", {"replicas": 3, "engines": [], "tolerations": []},
             {"engines": [], "serving": {"mode": "Unified"}}),
    Template("the serving mode defaults to Unified", {}, {"serving": {"mode": "Unified"}}),
    Template("a given mode is kept", {"serving": {"mode": "PrefillDecode"}}, {"serving": {"mode": "PrefillDecode"}}),
    Template("other serving fields are kept", {"serving": {"x": 1}}, {"serving": {"x": 1, "mode": "Unified"}}),
    Template("null fields are left out", {"engines": None, "modelCacheRef": None}, {"serving": {"mode": "Unified"}}),
    Template("the cache reference", {"modelCacheRef": {"name": "c"}},
             {"modelCacheRef": {"name": "c"}, "serving": {"mode": "Unified"}}),
]


@pytest.mark.parametrize("case", TEMPLATES, ids=lambda c: c.name)
def test_template(case: Template) -> None:
    got = template(case.spec)
    assert got == case.want, f"-want {case.want}, +got {got}"


def test_template_does_not_write_into_the_spec() -> None:
    s = {"serving": {"x": 1}}
    template(s)
    assert s == {"serving": {"x": 1}}
