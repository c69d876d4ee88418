"""inputs: what compose-model-deployment asks for, and the deployment, its
classes and its cache as the scheduler's dataclasses.

Clusters, classes and (only with a modelCacheRef) the cache are required on
every call; the cache in the deployment's own namespace only. A class with
a device that cannot be read is left out with a warning.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane.deployment import inputs
from modelplane.pipeline.composition import Composition
from modelplane.scheduler import (
    DRA,
    LEADER,
    SYNTHETIC,
    WORKER,
    Deployment,
    DeviceRequest,
    Engine,
    Member,
    Toleration,
)

from tests.deployment.builders import CREATED, NAME, NS, SELECTOR, engine, member, model_deployment, xr
from tests.support import request

# --- the deployment -------------------------------------------------------------


@dataclass(frozen=True)
class Dep:
    name: str
    spec: dict[str, Any]
    want: dict[str, Any]  # Deployment fields that differ from BASE


BASE = Deployment(namespace=NS, name=NAME, created=CREATED, replicas=1, cluster_selector={}, tolerations=(),
                  serving_mode="Unified", cache=None,
                  engines=(Engine("e", 1, None, (Member("Standalone", 1, (DeviceRequest("gpu", 1, (SELECTOR,)),)),)),))

DEPS = [
    Dep("the defaults", {}, {}),
    Dep("replicas", {"replicas": 4}, {"replicas": 4}),
    Dep("clusterSelector", {"clusterSelector": {"matchLabels": {"tier": "prod"}}}, {"cluster_selector": {"tier": "prod"}}),
    Dep("a clusterSelector without labels", {"clusterSelector": {}}, {}),
    Dep("a cache", {"modelCacheRef": {"name": "qwen"}}, {"cache": "qwen"}),
    Dep("PrefillDecode", {"serving": {"mode": "PrefillDecode"}}, {"serving_mode": "PrefillDecode"}),
    Dep("no serving: Unified", {"serving": None}, {}),
    Dep("tolerations, defaults filled", {"tolerations": [{"key": "spot"}, {"operator": "Exists", "effect": "NoExecute"}]},
        {"tolerations": (Toleration("spot", "Equal", "", ""), Toleration("", "Exists", "", "NoExecute"))}),
    Dep("engines: copies, phase, device counts, several selectors",
        {"engines": [engine("p", [member(selectors=[SELECTOR, "true"], count=2)], copies=3, phase="Prefill")]},
        {"engines": (Engine("p", 3, "Prefill", (Member("Standalone", 1, (DeviceRequest("gpu", 2, (SELECTOR, "true")),)),)),)}),
    Dep("a member without a nodeSelector requests no devices", {"engines": [engine(members=[member(selectors=None)])]},
        {"engines": (Engine("e", 1, None, (Member("Standalone", 1, ()),)),)}),
    Dep("a Worker runs worker.nodes pods; a Leader one",
        {"engines": [engine(members=[member(LEADER, selectors=None),
                                     member(WORKER, selectors=None, worker={"nodes": 3})])]},
        {"engines": (Engine("e", 1, None, (Member(LEADER, 1, ()), Member(WORKER, 3, ()))),)}),
]


@pytest.mark.parametrize("case", DEPS, ids=lambda c: c.name)
def test_deployment(case: Dep) -> None:
    md = model_deployment(**case.spec)
    got = inputs.deployment(md, xr(**case.spec))
    want = dataclasses.replace(BASE, **case.want)
    assert got == want, f"-want {want}, +got {got}"


def test_deployment_without_a_creation_time() -> None:
    obj = xr()
    del obj["metadata"]["creationTimestamp"]  # as under `crossplane render`
    got = inputs.deployment(model_deployment(), obj)
    assert got.created == "" and got.order(1) == f"/{NS}/{NAME}/00001"


# --- classes -----------------------------------------------------------------------


def _class(name: str, *devices: dict) -> dict:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceClass", "metadata": {"name": name},
            "spec": {"devices": list(devices)}}


def _device(name: str = "gpu", **kw: Any) -> dict:
    return {"name": name, "driver": "gpu.nvidia.com", "attributes": {"architecture": {"string": "Hopper"}},
            "capacity": {"memory": {"value": "80Gi"}}, **kw}


@dataclass(frozen=True)
class Classes:
    name: str
    items: list[dict]
    want: dict[str, list[tuple[str, int, str, str | None]]]  # class -> (device, count, claim, deviceClassName)
    warnings: list[str] = field(default_factory=list)


CLASSES = [
    Classes("none", [], {}),
    Classes("defaults: one DRA device", [_class("k", _device())], {"k": [("gpu", 1, DRA, None)]}),
    Classes("count and device class", [_class("k", _device(count=8, deviceClassName="gpu.nvidia.com"))],
            {"k": [("gpu", 8, DRA, "gpu.nvidia.com")]}),
    Classes("a Synthetic device has no device class", [_class("k", _device("nic", claim=SYNTHETIC,
                                                                             deviceClassName="x"))],
            {"k": [("nic", 1, SYNTHETIC, None)]}),
    Classes("a class without devices", [_class("k")], {"k": []}),
    Classes("sorted by name", [_class("z"), _class("a")], {"a": [], "z": []}),
    Classes("a class without a name is left out", [_class("")], {}),
    Classes("a device that cannot be read: the class is left out, with a warning",
            [_class("bad", _device(), {"name": "nic"}), _class("good", _device())], {"good": [("gpu", 1, DRA, None)]},
            warnings=["InferenceClass bad ignored: device 'nic' needs a non-empty string driver"]),
]


@pytest.mark.parametrize("case", CLASSES, ids=lambda c: c.name)
def test_read_classes(case: Classes) -> None:
    classes, warnings = inputs.read_classes(case.items)
    got = {n: [(d.name, d.count, d.claim, d.device_class_name) for d in c.devices] for n, c in classes.items()}
    assert got == case.want, f"-want {case.want}, +got {got}"
    assert list(classes) == list(case.want)
    assert warnings == case.warnings
    for name, c in classes.items():
        assert c.name == name
        assert all(d.device.driver == "gpu.nvidia.com" for d in c.devices)  # read for the matcher


# --- the cache ------------------------------------------------------------------------


def _cache(*entries: dict) -> dict:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelCache", "metadata": {"name": "qwen", "namespace": NS},
            "status": {"clusters": list(entries)}}


@dataclass(frozen=True)
class Cache:
    name: str
    items: list[dict]
    want: inputs.CacheView


CACHES = [
    Cache("not found", [], inputs.CacheView("qwen", {}, {}, found=False)),
    Cache("found, no status yet", [{"metadata": {"name": "qwen"}}], inputs.CacheView("qwen", {}, {})),
    Cache("Ready where its phase is Ready",
          [_cache({"name": "a", "phase": "Ready", "pvcName": "pa"}, {"name": "b", "phase": "Hydrating"})],
          inputs.CacheView("qwen", {"a": True, "b": False}, {"a": "pa"})),
    Cache("entries without a cluster name are skipped", [_cache({"phase": "Ready", "pvcName": "x"})],
          inputs.CacheView("qwen", {}, {})),
]


@pytest.mark.parametrize("case", CACHES, ids=lambda c: c.name)
def test_read_cache(case: Cache) -> None:
    got = inputs.read_cache("qwen", case.items)
    assert got == case.want, f"-want {case.want}, +got {got}"


# --- what is required ----------------------------------------------------------------


def _composition(required: dict[str, list[dict]] | None = None, **spec: Any) -> Composition:
    return Composition(request(xr(**spec), required=required), fnv1.RunFunctionResponse(), "test")


def _requirements(c: Composition) -> dict[str, tuple[str, str, str, dict[str, str], str]]:
    return {name: (s.api_version, s.kind, s.match_name, dict(s.match_labels.labels), s.namespace)
            for name, s in c.rsp.requirements.resources.items()}


@dataclass(frozen=True)
class Require:
    name: str
    spec: dict[str, Any]
    want: dict[str, tuple[str, str, str, dict[str, str], str]]


API = "modelplane.ai/v1alpha1"
CLUSTERS_ALL = (API, "InferenceCluster", "", {}, "")
CLASSES_ALL = (API, "InferenceClass", "", {}, "")
SERVICES = (API, "ModelService", "", {}, NS)   # every ModelService of the namespace: what routes carry

REQUIRES = [
    Require("every cluster and every class", {},
            {"clusters": CLUSTERS_ALL, "classes": CLASSES_ALL, "services": SERVICES}),
    Require("the clusters the selector matches", {"clusterSelector": {"matchLabels": {"tier": "prod"}}},
            {"clusters": (API, "InferenceCluster", "", {"tier": "prod"}, ""), "classes": CLASSES_ALL,
             "services": SERVICES}),
    Require("the cache, by name, in the deployment's namespace", {"modelCacheRef": {"name": "qwen"}},
            {"clusters": CLUSTERS_ALL, "classes": CLASSES_ALL, "cache": (API, "ModelCache", "qwen", {}, NS),
             "services": SERVICES}),
]


@pytest.mark.parametrize("case", REQUIRES, ids=lambda c: c.name)
def test_require(case: Require) -> None:
    c = _composition(**case.spec)
    inputs.require(c, model_deployment(**case.spec))
    got = _requirements(c)
    assert got == case.want, f"-want {case.want}, +got {got}"


@dataclass(frozen=True)
class Fetched:
    name: str
    required: dict[str, list[dict]]
    want: list[str]
    spec: dict[str, Any] = field(default_factory=dict)


QWEN = {"modelCacheRef": {"name": "qwen"}}

FETCHED = [
    Fetched("nothing fetched yet", {}, ["InferenceClusters", "InferenceClasses", "ModelServices"]),
    Fetched("fetched, even empty, counts", {"clusters": [], "classes": [], "services": []}, []),
    Fetched("the classes still missing", {"clusters": [], "services": []}, ["InferenceClasses"]),
    Fetched("the cache still missing", {"clusters": [], "classes": [], "services": []}, ["ModelCache qwen"],
            spec=QWEN),
    Fetched("the cache fetched, though not found", {"clusters": [], "classes": [], "cache": [], "services": []}, [],
            spec=QWEN),
    Fetched("the services still missing", {"clusters": [], "classes": []}, ["ModelServices"]),
]


@pytest.mark.parametrize("case", FETCHED, ids=lambda c: c.name)
def test_not_fetched(case: Fetched) -> None:
    got = inputs.not_fetched(_composition(case.required, **case.spec), model_deployment(**case.spec))
    assert got == case.want, f"-want {case.want}, +got {got}"
