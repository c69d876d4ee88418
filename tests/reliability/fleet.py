"""A small, healthy fleet: one valid XR per function and the inputs it may require.

``baseline(fn, namespace=...)`` is a valid XR of ``fn``'s kind (from the
examples where one exists). ``answer(requirements, ...)`` plays the API
server: for each requirement a function asked for, it returns the catalog
items that match the selector (name or labels, and namespace when given), so
tests can run a function through its requirements loop without a cluster.

Secrets in the catalog carry ``SECRET_VALUE``; the security tests assert it
never appears in any response.
"""
from __future__ import annotations

import base64
import copy
from collections.abc import Iterable
from typing import Any

import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import paths

GV = "modelplane.ai/v1alpha1"
SECRET_VALUE = "hf_s3cr3t-VALUE-never-copied-9f8e7d"
READY = [{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-01-01T00:00:00Z"}]


def _load(relative: str) -> list[dict]:
    with open(paths.EXAMPLES / relative) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def _with_namespace(obj: dict, namespace: str | None) -> dict:
    out = copy.deepcopy(obj)
    if namespace is not None and "namespace" in out.get("metadata", {}):
        out["metadata"]["namespace"] = namespace
    return out


def replica(namespace: str = "ml-team", deployment: str = "qwen3-8b", cluster: str = "onprem-west") -> dict:
    """A ModelReplica as compose-model-deployment writes it (docs/contracts.md)."""
    name = f"{deployment}-0-{cluster}"
    return {
        "apiVersion": GV, "kind": "ModelReplica",
        "metadata": {"name": name, "namespace": namespace,
                     "labels": {"modelplane.ai/deployment": deployment, "modelplane.ai/cluster": cluster,
                                "modelplane.ai/replica": "0"}},
        "spec": {
            "deployment": deployment, "index": 0, "order": f"2026-01-01T00:00:00Z/{namespace}/{deployment}/00000",
            "cluster": {"name": cluster, "providerConfigName": cluster,
                        "gateway": {"name": "modelplane", "namespace": "modelplane-system",
                                    "address": "203.0.113.10"}},
            "servingMode": "Unified",
            "engines": [{"name": deployment, "copies": 1, "members": [{
                "role": "Standalone", "nodes": 1, "pool": "h100",
                "devices": [{"name": "gpu", "count": 1, "claim": "DRA", "deviceClassName": "gpu.nvidia.com",
                             "selectors": [{"cel": 'device.driver == "gpu.nvidia.com"'}]}],
                "template": {"spec": {"containers": [{"name": "engine", "image": "vllm/vllm-openai:v0.23.0",
                                                      "args": ["--model=Qwen/Qwen3-8B"]}]}},
            }]}],
            "placement": [{"pool": "h100", "pods": [{"count": 1, "devices": {"gpu": 1}, "gang": False}]}],
        },
    }


def baseline(function: str, namespace: str = "ml-team", name: str | None = None) -> dict:
    """A valid XR for ``function`` (namespaced kinds land in ``namespace``)."""
    if function == "compose-model-replica":
        xr = replica(namespace)
    else:
        source = {
            "compose-inference-class": "platform/inference-classes.yaml",
            "compose-inference-cluster": "platform/cluster-existing.yaml",
            "compose-inference-gateway": "platform/inference-gateway.yaml",
            "compose-model-deployment": "ml-team/model-deployment.yaml",
            "compose-model-endpoint": "ml-team/external-endpoint.yaml",
            "compose-model-service": "ml-team/model-service.yaml",
            "compose-model-cache": "ml-team/model-cache.yaml",
        }[function]
        xr = _with_namespace(_load(source)[0], namespace)
    if name:
        xr["metadata"]["name"] = name
    return xr


def baselines(function: str, namespace: str = "ml-team") -> dict[str, dict]:
    """Every valid XR variant worth running ``function`` on (label -> XR)."""
    out = {"example": baseline(function, namespace)}
    if function == "compose-model-deployment":
        out["multinode-with-cache"] = _with_namespace(_load("ml-team/model-deployment-multinode.yaml")[0], namespace)
    return out


def replica_endpoint(namespace: str) -> dict:
    """An in-fleet ModelEndpoint as compose-model-deployment composes it (selected by model-service.yaml)."""
    name = "qwen-demo-0-onprem-west"
    return {"apiVersion": GV, "kind": "ModelEndpoint",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {"modelplane.ai/deployment": "qwen-demo", "modelplane.ai/cluster": "onprem-west",
                                    "modelplane.ai/replica": "0"}},
            "spec": {"url": "http://203.0.113.10", "rewritePath": f"/{namespace}/{name}/", "api": "OpenAI"},
            "status": {"routing": {"backendName": f"{name}-backend"}, "conditions": READY}}


def _cluster(doc: dict) -> dict:
    out = copy.deepcopy(doc)
    name = out["metadata"]["name"]
    out["status"] = {
        "providerConfigName": name,
        "gateway": {"address": "203.0.113.10", "name": "modelplane", "namespace": "modelplane-system"},
        "cache": {"storageClassName": "modelplane-rwx"},
        "pools": [{"name": p["name"], "class": p["class"], "nodes": p.get("nodeCount", 1), "allocations": []}
                  for p in out["spec"].get("nodePools", [])],
        "conditions": READY,
    }
    return out


def catalog(namespaces: Iterable[str] = ("ml-team",)) -> list[dict]:
    """Everything a function might require, healthy; namespaced items in each namespace."""
    items: list[dict] = []
    items += _load("platform/inference-classes.yaml")
    for f in ("platform/cluster-existing.yaml", "platform/cluster-gke.yaml", "platform/cluster-eks.yaml"):
        items += [_cluster(d) for d in _load(f)]
    gw = _load("platform/inference-gateway.yaml")[0]
    gw["status"] = {"address": "203.0.113.1", "gateway": {"name": "modelplane", "namespace": "modelplane-system"},
                    "conditions": READY}
    items.append(gw)
    for ns in namespaces:
        cache = baseline("compose-model-cache", ns)
        cache["status"] = {"readyClusters": 1, "clusters": [
            {"name": "onprem-west", "phase": "Ready", "pvcName": "modelcache-qwen3-coder",
             "storageClassName": "modelplane-rwx"}], "conditions": READY}
        rep = replica(ns)
        rep["status"] = {"ready": True, "url": "http://203.0.113.10",
                         "rewritePath": f"/{ns}/{rep['metadata']['name']}/", "conditions": READY}
        ep = baseline("compose-model-endpoint", ns)
        ep["status"] = {"routing": {"backendName": ep["metadata"]["name"]}, "conditions": READY}
        routed = replica_endpoint(ns)
        items += [cache, rep, ep, routed]
        for secret, key in (("huggingface", "token"), ("together", "apiKey")):
            items.append({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                          "metadata": {"name": secret, "namespace": ns},
                          "data": {key: base64.b64encode(SECRET_VALUE.encode()).decode()},
                          "stringData": {key: SECRET_VALUE}})
    return items


def _matches(item: dict, sel: fnv1.ResourceSelector) -> bool:
    if item.get("apiVersion") != sel.api_version or item.get("kind") != sel.kind:
        return False
    meta = item.get("metadata") or {}
    if sel.namespace and meta.get("namespace") != sel.namespace:
        return False
    if sel.HasField("match_name"):
        return meta.get("name") == sel.match_name
    labels = meta.get("labels") or {}
    return all(labels.get(k) == v for k, v in sel.match_labels.labels.items())


def answer(requirements: fnv1.Requirements, items: list[dict]) -> dict[str, list[dict]]:
    """What the API server would return for each requirement (sorted by name)."""
    out: dict[str, list[dict]] = {}
    for name, sel in sorted(requirements.resources.items()):
        found = [i for i in items if _matches(i, sel)]
        out[name] = sorted(found, key=lambda i: (i["metadata"].get("namespace", ""), i["metadata"]["name"]))
    return out


def selectors(requirements: fnv1.Requirements) -> dict[str, dict[str, Any]]:
    """Requirements as plain dicts (for assertions and messages)."""
    out = {}
    for name, sel in sorted(requirements.resources.items()):
        out[name] = {"apiVersion": sel.api_version, "kind": sel.kind, "namespace": sel.namespace,
                     "matchName": sel.match_name if sel.HasField("match_name") else None,
                     "matchLabels": dict(sel.match_labels.labels)}
    return out


def converge(run, function: str, xr: dict, observed: dict | None = None, items: list[dict] | None = None,
             rounds: int = 5):
    """Run the requirements loop like Crossplane: call, fetch what was asked, repeat until stable.

    ``run(function, request)`` is in-process or over gRPC; returns the last response.
    """
    from tests import support

    items = catalog() if items is None else items
    required: dict[str, list[dict]] | None = None
    rsp = None
    for _ in range(rounds):
        rsp = run(function, support.request(xr, observed=observed, required=required))
        nxt = answer(rsp.requirements, items)
        if required is not None and nxt == required:
            break
        required = nxt
    return rsp
