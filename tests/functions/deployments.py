"""Builders for compose-model-deployment: fleets from tiny builders (``cluster``,
``alloc``), the platform example classes (L4 24Gi, A100 80Gi, H100 80Gi + IB
NIC, H200 141Gi), the ml-team seed deployments, and observed children made by
feeding the function's output back as Crossplane would."""
from __future__ import annotations

import copy
from typing import Any

import yaml
from modelplane import paths
from modelplane.platform import pools as platform_pools

from tests.support import desired, request, run

FN = "compose-model-deployment"
NS = "ml-team"
CLASSES = list(yaml.safe_load_all((paths.EXAMPLES / "platform" / "inference-classes.yaml").read_text()))
L4, A100, H100, H200 = "gke-l4-1x-g2", "gke-a100-80gb-8x", "h100-8x-ib", "h200-8x-ib"


def seed(name: str) -> dict:
    return yaml.safe_load((paths.EXAMPLES / "ml-team" / name).read_text())


QWEN_DEMO = seed("qwen-demo.yaml")
QWEN3_8B = seed("model-deployment.yaml")
CODER = seed("model-deployment-multinode.yaml")
PD = seed("prefill-decode.yaml")


def deployment(base: dict = QWEN_DEMO, **spec: Any) -> dict:
    """A ModelDeployment; its drain period is 0 unless ``drain`` says otherwise, so a replica leaving
    goes in two calls (out of routing, then deleted once the routes are clear)."""
    out = copy.deepcopy(base)
    out["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    out["spec"].setdefault("drain", {"period": "0"})
    out["spec"].update(spec)
    return out


def alloc(deployment: str, replica: str, gpus: int = 1, count: int = 1, order: str = "2025-01-01T00:00:00Z",
          gang: bool = False) -> dict:
    return {"replica": replica, "deployment": deployment, "order": f"{order}/{replica}",
            "pods": [{"count": count, "devices": {"gpu": gpus}, "gang": gang}]}


def cluster(name: str, *pools: tuple, labels: dict | None = None, ready: bool = True,
            allocations: dict[str, list[dict]] | None = None, taints: list[dict] | None = None) -> dict:
    """pools: (pool name, class, nodes)."""
    status_ = {
        "providerConfigName": name,
        "gateway": {"address": "203.0.113.10", "name": "modelplane", "namespace": "modelplane-system"},
        "cache": {"storageClassName": "modelplane-rwx"},
        "pools": [{"name": p, "class": k, "nodes": n, "allocations": (allocations or {}).get(p, [])}
                  for p, k, n in pools],
        "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                        "reason": "Available" if ready else "Creating"}],
    }
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": {"taints": taints or []}, "status": status_}


def model_cache(name: str = "qwen3-coder", namespace: str = NS, **phases: str) -> dict:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelCache",
            "metadata": {"name": name, "namespace": namespace},
            "status": {"clusters": [{"name": c, "phase": p, "pvcName": f"modelcache-{name}"}
                                    for c, p in sorted(phases.items())]}}


def inputs(*clusters: dict, cache: dict | None = None, services: list[dict] | None = None) -> dict:
    out = {"clusters": list(clusters), "classes": CLASSES, "services": list(services or [])}
    if cache is not None:
        out["cache"] = [cache]
    return out


def call(xr: dict, required: dict | None, observed: dict | None = None):
    return run(FN, request(xr, observed=observed, required=required))


def observe(rsp, url: bool = False, ready: bool = False, only: str = "") -> dict:
    """The response's children as Crossplane would observe them next time
    (endpoints with their Backend published, so they are routable)."""
    out = {}
    for name, obj in desired(rsp).items():
        if only and not name.startswith(only):
            continue
        obj = copy.deepcopy(obj)
        if obj["kind"] == "ModelEndpoint":
            obj["status"] = {"routing": {"backendName": f"{obj['metadata']['name']}-backend"}}
        if obj["kind"] == "ModelReplica":
            st: dict = {"ready": ready}
            if url:
                rname = obj["metadata"]["name"]
                st.update(url="http://203.0.113.10", rewritePath=f"/{NS}/{rname}/",
                          backendRefs=[{"group": "", "kind": "Service", "name": f"{rname}-engine", "port": 8000}])
            if ready:
                st["conditions"] = [{"type": "Ready", "status": "True", "reason": "Available"}]
            obj["status"] = st
        out[name] = obj
    return out


def replicas(rsp) -> dict[str, dict]:
    return {n: o for n, o in desired(rsp).items() if o["kind"] == "ModelReplica"}


def pools_of(replica: dict) -> dict[str, str]:
    return {f"{e['name']}/{m['role']}": m["pool"] for e in replica["spec"]["engines"] for m in e["members"]}


def pool_status(base: dict, replicas: list[dict]) -> dict:
    """``base`` with the allocations compose-inference-cluster would publish:
    the ModelReplicas labelled with its name."""
    out = copy.deepcopy(base)
    name = base["metadata"]["name"]
    allocs = platform_pools.allocations(
        r for r in replicas if r["metadata"]["labels"].get("modelplane.ai/cluster") == name)
    for p in out["status"]["pools"]:
        p["allocations"] = allocs.get(p["name"], [])
    return out
