"""compose-model-deployment end to end at 10, 100 and 1,000 clusters.

Targets at 1,000 clusters: the whole RunFunction <= 300 ms, request <= 4 MiB.

The request is what Crossplane would send: a 10-replica ModelDeployment plus
required InferenceClusters (4 pools each drawn from six classes, 2-8 nodes,
2 replicas of other deployments allocated per cluster, gateway, conditions)
and the six InferenceClasses, serialized. One run is ParseFromString of the
bytes plus ``run_compose`` through the real runtime, as the gRPC servicer
does. "first" has no observed children (a new deployment); "steady" feeds
the first response's 10 ModelReplicas back as observed (every later
reconcile). Times are medians with the CEL caches cleared before each run
(a fresh process) for "first"; "steady" keeps them warm. "CEL evals" counts
engine evaluations of one cold first run; peak RSS is the process
high-water mark after the size's runs.
"""
from __future__ import annotations

import random
import resource
import statistics
import time

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import cel, functions
from modelplane.pipeline.composition import to_dict
from modelplane.pipeline.server import run_compose

FN = "compose-model-deployment"
SIZES = (10, 100, 1000)
RUNS = 5


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


def clusters(n: int, seed: int = 7) -> list[dict]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        name = f"cluster-{i:04d}"
        pools = []
        for k, klass in enumerate(rnd.sample(sorted(CATALOGUE), 4)):
            per_node = CATALOGUE[klass][0]["count"]
            allocs = []
            if k < 2:  # two replicas of other deployments per cluster
                allocs.append({"replica": f"team-{i}/other-{k}-{name}", "deployment": f"team-{i}/other",
                               "order": f"2025-0{k + 1}-01T00:00:00Z/team-{i}/other/{k:05d}",
                               "pods": [{"count": 1, "devices": {"gpu": per_node}, "gang": False}]})
            pools.append({"name": f"{klass}-pool", "class": klass, "nodes": rnd.randint(2, 8), "allocations": allocs})
        out.append({
            "apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster",
            "metadata": {"name": name, "labels": {"region": rnd.choice(["us", "eu"]), "tier": "prod"}},
            "spec": {"taints": []},
            "status": {"providerConfigName": name, "pools": pools, "cache": {"storageClassName": "rwx"},
                       "gateway": {"address": f"203.0.{i // 250}.{i % 250}", "name": "modelplane",
                                   "namespace": "modelplane-system"},
                       "conditions": [{"type": "Ready", "status": "True", "reason": "Available",
                                       "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
        })
    return out


def deployment() -> dict:
    return {
        "apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelDeployment",
        "metadata": {"name": "qwen3-8b", "namespace": "ml-team", "creationTimestamp": "2026-01-01T00:00:00Z"},
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


def request(n: int, observed: dict[str, dict] | None = None) -> bytes:
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.update(deployment())
    for name, obj in (observed or {}).items():
        req.observed.resources[name].resource.update(obj)
    for key, items in (("clusters", clusters(n)), ("classes", classes())):
        bucket = req.required_resources[key]
        for item in items:
            bucket.items.add().resource.update(item)
    return req.SerializeToString()


def _clear_cel() -> None:
    from modelplane.cel import adapter, device

    adapter._cache.clear()
    device._memo.clear()


def _once(data: bytes) -> tuple[float, float, fnv1.RunFunctionResponse]:
    """(wall ms, CPU ms, response): CPU time shows the cost on a busy machine."""
    compose = functions.load(FN)
    start, cpu = time.perf_counter(), time.process_time()
    req = fnv1.RunFunctionRequest()
    req.ParseFromString(data)
    rsp = run_compose(FN, compose, req)
    return (time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000, rsp


def _check(rsp: fnv1.RunFunctionResponse) -> dict[str, dict]:
    fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    assert not fatal, fatal
    replicas = {n: to_dict(r.resource) for n, r in rsp.desired.resources.items() if n.startswith("replica-")}
    assert len(replicas) == 10, sorted(replicas)
    return replicas


def run() -> list[dict]:
    rows = []
    for n in SIZES:
        data = request(n)
        first, first_cpu, evals = [], [], 0
        for _ in range(RUNS):
            _clear_cel()
            cel.reset_stats()
            ms, cpu, rsp = _once(data)
            first.append(ms)
            first_cpu.append(cpu)
            evals = cel.stats()["evaluations"]
        observed = _check(rsp)
        steady_data = request(n, observed)
        steady, steady_cpu = [], []
        for _ in range(RUNS):
            ms, cpu, rsp = _once(steady_data)
            steady.append(ms)
            steady_cpu.append(cpu)
        assert sorted(_check(rsp)) == sorted(observed)
        rows.append({
            "clusters": n,
            "pools": 4 * n,
            "request KiB": len(data) / 1024,
            "first ms": statistics.median(first),
            "first CPU ms": statistics.median(first_cpu),
            "steady ms": statistics.median(steady),
            "steady CPU ms": statistics.median(steady_cpu),
            "CEL evals (cold)": evals,
            "peak RSS MiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        })
    return rows
