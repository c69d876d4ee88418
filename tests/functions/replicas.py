"""Builders for compose-model-replica: ModelReplicas shaped as compose-model-deployment
writes them (docs/contracts.md)."""
from __future__ import annotations

from typing import Any

FN = "compose-model-replica"
NAME, NS = "qwen3-8b-0-prod-a", "ml-team"


def container(**over: Any) -> dict:
    return {"name": "engine", "image": "vllm/vllm-openai:v0.23.0", **over}


def member(role: str = "Standalone", nodes: int = 1, pool: str = "l4", claim: str = "DRA",
           shm: str | None = None, pod: dict | None = None, **engine: Any) -> dict:
    """``pod``: more pod spec fields (volumes, imagePullSecrets); ``engine``: container fields."""
    spec: dict[str, Any] = {"containers": [container(**engine)], **(pod or {})}
    if shm:
        spec["shmSize"] = shm
    device = {"name": "gpu", "count": 8 if role != "Standalone" else 1, "claim": claim,
              "selectors": [{"cel": 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("20Gi")) >= 0'}]}
    if claim == "DRA":
        device["deviceClassName"] = "gpu.nvidia.com"
    return {"role": role, "nodes": nodes, "pool": pool, "devices": [device], "template": {"spec": spec}}


def engine(name: str = "qwen3-8b", members: list | None = None, copies: int = 1, phase: str | None = None) -> dict:
    out = {"name": name, "copies": copies, "members": members or [member(args=["--model=Qwen/Qwen3-8B"])]}
    if phase:
        out["phase"] = phase
    return out


def gang(command: bool = True, nodes: int = 1) -> dict:
    extra = {"command": ["/bin/sh", "-c", "exec vllm serve /mnt/models --master-addr=$(MODELPLANE_LEADER_ADDRESS)"]} \
        if command else {"args": ["--served-model-name=qwen3-coder"]}
    return engine("qwen3-coder", [member("Leader", pool="h200", **extra),
                                  member("Worker", nodes=nodes, pool="h200", **extra)])


def replica(engines: list | None = None, mode: str = "Unified", cache: bool = False,
            gateway: dict | None = None) -> dict:
    spec: dict[str, Any] = {
        "deployment": "qwen3-8b", "index": 0, "order": "2026-01-01T00:00:00Z/ml-team/qwen3-8b/00000",
        "cluster": {"name": "prod-a", "providerConfigName": "prod-a",
                    "gateway": gateway if gateway is not None else
                    {"name": "modelplane", "namespace": "modelplane-system", "address": "203.0.113.10"}},
        "servingMode": mode, "engines": engines or [engine()],
    }
    if cache:
        spec["modelCache"] = {"name": "qwen3-coder", "pvcName": "modelcache-qwen3-coder"}
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelReplica",
            "metadata": {"name": NAME, "namespace": NS,
                         "labels": {"modelplane.ai/deployment": "qwen3-8b", "modelplane.ai/cluster": "prod-a",
                                    "modelplane.ai/replica": "0"}},
            "spec": spec}


def pd() -> dict:
    kv = '--kv-transfer-config={"kv_connector":"NixlConnector","kv_role":"kv_both"}'
    return replica([engine("prefill", [member(args=["--model=Qwen/Qwen3-32B", kv], shm="16Gi")], phase="Prefill"),
                    engine("decode", [member(args=["--model=Qwen/Qwen3-32B", kv], shm="16Gi")], copies=2,
                           phase="Decode")], mode="PrefillDecode")
