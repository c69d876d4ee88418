"""Small fleets for simulate tests, written as manifests into a directory."""
from __future__ import annotations

from pathlib import Path

import yaml

API = "modelplane.ai/v1alpha1"
BIG_GPU = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'


def gpu_class(name: str, count: int = 8, memory: str = "80Gi") -> dict:
    return {"apiVersion": API, "kind": "InferenceClass", "metadata": {"name": name},
            "spec": {"devices": [{"name": "gpu", "driver": "gpu.nvidia.com", "count": count,
                                  "deviceClassName": "gpu.nvidia.com",
                                  "attributes": {"architecture": {"string": "Hopper"}},
                                  "capacity": {"memory": {"value": memory}}}]}}


def existing_cluster(name: str, pools: list[tuple[str, str, int]], taints: list[dict] | None = None,
                     labels: dict | None = None) -> dict:
    spec = {"cluster": {"source": "Existing", "existing": {
                "kubeconfigSecretRef": {"namespace": "modelplane-system", "name": f"{name}-kubeconfig",
                                        "key": "kubeconfig"}}},
            "nodePools": [{"name": p, "class": c, "nodeCount": n} for p, c, n in pools]}
    if taints:
        spec["taints"] = taints
    return {"apiVersion": API, "kind": "InferenceCluster", "metadata": {"name": name, "labels": labels or {}},
            "spec": spec}


def gateway() -> dict:
    return {"apiVersion": API, "kind": "InferenceGateway", "metadata": {"name": "default"}, "spec": {}}


def deployment(name: str, *, replicas: int = 1, copies: int = 1, gpus: int = 1, cel: str = BIG_GPU,
               namespace: str = "ml-team", image: str = "vllm/vllm-openai:v0.23.0") -> dict:
    return {"apiVersion": API, "kind": "ModelDeployment", "metadata": {"name": name, "namespace": namespace},
            # Drain period 0: a replica that leaves goes once the routes are clear, without waiting
            # for a clock these capacity checks never advance.
            "spec": {"replicas": replicas, "drain": {"period": "0"}, "engines": [{
                "name": "engine", "copies": copies,
                "members": [{"role": "Standalone",
                             "nodeSelector": {"devices": [{"name": "gpu", "count": gpus, "selectors": [{"cel": cel}]}]},
                             "template": {"spec": {"containers": [{"name": "engine", "image": image,
                                                                   "args": [f"--model=org/{name}"]}]}}}]}]}}


def service(name: str, deployment_name: str, namespace: str = "ml-team") -> dict:
    return {"apiVersion": API, "kind": "ModelService", "metadata": {"name": name, "namespace": namespace},
            "spec": {"endpoints": [{"selector": {"matchLabels": {"modelplane.ai/deployment": deployment_name}}}]}}


def write(directory: Path, *docs: dict, name: str = "fleet.yaml") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return directory


def secret_reader(name: str, replicas: int) -> dict:
    """A deployment whose engine reads HF_TOKEN from the Secret ``huggingface`` (ml-team)."""
    md = deployment(name, replicas=replicas)
    md["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "huggingface", "key": "token"}}}]
    return md
