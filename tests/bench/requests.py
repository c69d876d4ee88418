"""The RunFunctionRequest Crossplane sends compose-model-deployment, as bytes, for the benchmarks.

It is the second call of a reconcile (docs/platform/fleet-scale.md): every input
the function requires (``modelplane.deployment.inputs.require``) is present:
InferenceClusters (4 pools each drawn from six classes, 2-8 nodes, 2 replicas of
other deployments allocated per cluster, gateway, conditions), the six
InferenceClasses and the namespace's ModelServices (none yet). Without them the
function only answers "please fetch".

Protobuf messages merge when their encodings are concatenated (maps by key), so
a request is built as the small part naming the deployment (the XR and its
observed children) followed by the large required part, which is encoded once
per fleet size and shared by every deployment a benchmark sends. A steady
request of a deployment the simulated fleet holds (``member_part``) brings
its own ModelServices, so the clusters and classes (``fleet_part``) and the
services (``services_part``) are encoded apart.
"""
from __future__ import annotations

import copy
import functools
import random

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane.deployment.inputs import CLASSES, CLUSTERS, SERVICES

DISTINCT = 1000  # clusters generated; larger fleets repeat them under new names (building is then cheap)


def _gpu(driver: str, arch: str, memory: str, count: int) -> dict:
    return {"name": "gpu", "driver": driver, "count": count, "claim": "DRA", "deviceClassName": driver,
            "attributes": {"architecture": {"string": arch}}, "capacity": {"memory": {"value": memory}}}


_NIC = {"name": "nic", "driver": "nic.nvidia.com", "count": 8, "claim": "Synthetic",
        "attributes": {"linkType": {"string": "infiniband"}}}
CATALOGUE = {
    "l4": [_gpu("gpu.nvidia.com", "Ada", "24Gi", 1)],
    "a100": [_gpu("gpu.nvidia.com", "Ampere", "80Gi", 8)],
    "h100": [_gpu("gpu.nvidia.com", "Hopper", "80Gi", 8), _NIC],
    "h200": [_gpu("gpu.nvidia.com", "Hopper", "141Gi", 8), _NIC],
    "mi300x": [_gpu("gpu.amd.com", "CDNA3", "192Gi", 8)],
    "l40s": [_gpu("gpu.nvidia.com", "Ada", "48Gi", 4)],
}


def classes() -> list[dict]:
    return [{"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceClass", "metadata": {"name": n},
             "spec": {"devices": d}} for n, d in CATALOGUE.items()]


def _cluster(i: int, rnd: random.Random) -> dict:
    name = f"cluster-{i:05d}"
    pools = []
    for k, klass in enumerate(rnd.sample(sorted(CATALOGUE), 4)):
        per_node = CATALOGUE[klass][0]["count"]
        allocs = []
        if k < 2:  # two replicas of other deployments per cluster
            allocs.append({"replica": f"team-{i}/other-{k}-{name}", "deployment": f"team-{i}/other",
                           "order": f"2025-0{k + 1}-01T00:00:00Z/team-{i}/other/{k:05d}",
                           "pods": [{"count": 1, "devices": {"gpu": per_node}, "gang": False}]})
        pools.append({"name": f"{klass}-pool", "class": klass, "nodes": rnd.randint(2, 8), "allocations": allocs})
    return {
        "apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": {"region": rnd.choice(["us", "eu"]), "tier": "prod"}},
        "spec": {"taints": []},
        "status": {"providerConfigName": name, "pools": pools, "cache": {"storageClassName": "rwx"},
                   "gateway": {"address": f"203.{i // 62500}.{i // 250 % 250}.{i % 250}", "name": "modelplane",
                               "namespace": "modelplane-system"},
                   "conditions": [{"type": "Ready", "status": "True", "reason": "Available",
                                   "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
    }


def clusters(n: int, seed: int = 7) -> list[dict]:
    """n InferenceClusters: the first DISTINCT generated, the rest copies renamed (their own name,
    provider config and gateway address) so every cluster is distinct where the function looks."""
    rnd = random.Random(seed)
    base = [_cluster(i, rnd) for i in range(min(n, DISTINCT))]
    out = list(base)
    for i in range(len(base), n):
        c = copy.deepcopy(base[i % DISTINCT])
        name = f"cluster-{i:05d}"
        c["metadata"]["name"] = name
        c["status"]["providerConfigName"] = name
        c["status"]["gateway"]["address"] = f"203.{i // 62500}.{i // 250 % 250}.{i % 250}"
        for pool in c["status"]["pools"]:
            for a in pool["allocations"]:
                a["replica"] = a["replica"].rsplit("-cluster-", 1)[0] + f"-{name}"
        out.append(c)
    return out


def deployment(name: str = "qwen3-8b", namespace: str = "ml-team") -> dict:
    return {
        "apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelDeployment",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"replicas": 10, "clusterSelector": {"matchLabels": {"tier": "prod"}}, "engines": [{
            "name": "qwen3-8b", "members": [{
                "role": "Standalone",
                "nodeSelector": {"devices": [{"name": "gpu", "count": 1, "selectors": [
                    {"cel": 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'},
                    {"cel": 'device.driver == "gpu.nvidia.com"'}]}]},
                "template": {"spec": {"containers": [{"name": "engine", "image": "vllm/vllm-openai:v0.23.0",
                                                      "args": ["--model=Qwen/Qwen3-8B"]}]}},
            }]}]},
    }


@functools.cache  # 10,000 simulated clusters take a while to build; every table of a run shares them
def fleet_part(n: int, simulated: bool = False, shape: str = "own") -> bytes:
    """The clusters and classes of a request at n clusters, encoded (the large, shared part); with
    ``simulated``, as a simulated fleet of ``shape`` publishes them (``simfleet``)."""
    if simulated:
        from tests.bench import simfleet
        found, kinds = simfleet.clusters(n, shape), simfleet.classes(shape)
    else:
        found, kinds = clusters(n), classes()
    return _required({CLUSTERS: found, CLASSES: kinds})


def services_part(services: list[dict]) -> bytes:
    """The namespace's ModelServices, encoded (present even when none: "fetched, nothing matched")."""
    return _required({SERVICES: services})


def required_part(n: int, simulated: bool = False, shape: str = "own") -> bytes:
    """Every required resource of a request at n clusters: ``fleet_part`` and no ModelServices."""
    return fleet_part(n, simulated, shape) + services_part([])


def _required(buckets: dict[str, list[dict]]) -> bytes:
    req = fnv1.RunFunctionRequest()
    for key, items in buckets.items():
        bucket = req.required_resources[key]  # present even when empty: "fetched, nothing matched"
        for item in items:
            bucket.items.add().resource.update(item)
    return req.SerializeToString()


def member_part(shape: str, call: int | None = None) -> bytes:
    """A deployment of the simulated fleet (``simfleet.member``) as its steady request brings it,
    but the clusters and classes (``fleet_part``): its XR and children as simulated, its
    namespace's ModelServices, the simulated time in the context (as the simulator sends it).
    ``call`` adds a context entry no function reads, so the request is not byte for byte one
    answered before: the server composes it (a replica that has not answered it)."""
    from modelplane.pipeline.composition import NOW_CONTEXT_KEY

    from tests.bench import simfleet
    m = simfleet.member(shape)
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.update(m.xr)
    for child, obj in m.observed.items():
        req.observed.resources[child].resource.update(obj)
    req.context.update({NOW_CONTEXT_KEY: m.now, **({} if call is None else {"bench.modelplane.ai/call": call})})
    return req.SerializeToString() + services_part(list(m.services))


def member_request(n: int, shape: str) -> bytes:
    """``member_part`` with the simulated fleet's clusters at n clusters (its own among them)."""
    return member_part(shape) + fleet_part(n, True, shape)


def deployment_part(observed: dict[str, dict] | None = None, name: str = "qwen3-8b") -> bytes:
    """The XR and its observed children, encoded (the small part, one per deployment and call)."""
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.update(deployment(name))
    for child, obj in (observed or {}).items():
        req.observed.resources[child].resource.update(obj)
    return req.SerializeToString()


def request(n: int, observed: dict[str, dict] | None = None, name: str = "qwen3-8b") -> bytes:
    return deployment_part(observed, name) + required_part(n)


def replicas(rsp: fnv1.RunFunctionResponse, want: int = 10) -> dict[str, dict]:
    """The response's desired ModelReplicas (to feed back as observed); AssertionError unless it placed
    ``want`` of them without a FATAL result, naming what it said instead."""
    from modelplane.pipeline.composition import to_dict

    fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    assert not fatal, fatal
    out = {n: to_dict(r.resource) for n, r in rsp.desired.resources.items() if n.startswith("replica-")}
    said = [c.message for c in rsp.conditions] + [r.message for r in rsp.results]
    assert len(out) == want, f"placed {len(out)} ModelReplicas, want {want}: {sorted(out)} {said}"
    return out
