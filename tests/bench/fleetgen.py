"""Generated fleets for ``bench_simulate``: N Existing clusters x 4 pools, one deployment of 10 replicas per 5 clusters.

Deterministic (seeded): each cluster gets 4 pools drawn from a catalogue of
realistic classes (L4 x1, A100 x8, H100 x8, L40S x4), 2-8 nodes each, and a
region label; each deployment asks for one GPU with at least 40Gi through
real DRA CEL, 10 replicas, and is served by its own ModelService.
"""
from __future__ import annotations

import random
from pathlib import Path

import yaml

API = "modelplane.ai/v1alpha1"
POOLS_PER_CLUSTER = 4
REPLICAS = 10
CLUSTERS_PER_DEPLOYMENT = 5

_CLASSES = {
    "l4-1x": (1, "24Gi", "Ada"),
    "a100-8x": (8, "80Gi", "Ampere"),
    "h100-8x": (8, "80Gi", "Hopper"),
    "l40s-4x": (4, "48Gi", "Ada"),
}
_REGIONS = ("us-east", "us-west", "eu-west", "ap-south")
CEL = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'


def classes() -> list[dict]:
    return [{"apiVersion": API, "kind": "InferenceClass", "metadata": {"name": name},
             "spec": {"devices": [{"name": "gpu", "driver": "gpu.nvidia.com", "count": count,
                                   "deviceClassName": "gpu.nvidia.com",
                                   "attributes": {"architecture": {"string": arch}},
                                   "capacity": {"memory": {"value": memory}}}]}}
            for name, (count, memory, arch) in _CLASSES.items()]


def cluster(i: int, rng: random.Random) -> dict:
    names = rng.sample(sorted(_CLASSES), POOLS_PER_CLUSTER)
    name = f"c{i:05d}"
    return {"apiVersion": API, "kind": "InferenceCluster",
            "metadata": {"name": name, "labels": {"region": _REGIONS[i % len(_REGIONS)]}},
            "spec": {"cluster": {"source": "Existing", "existing": {
                         "kubeconfigSecretRef": {"namespace": "modelplane-system", "name": f"{name}-kubeconfig",
                                                 "key": "kubeconfig"}}},
                     "nodePools": [{"name": cls.split("-")[0], "class": cls, "nodeCount": rng.randint(2, 8)}
                                   for cls in names]}}


def deployment(i: int) -> list[dict]:
    name = f"model-{i:04d}"
    md = {"apiVersion": API, "kind": "ModelDeployment", "metadata": {"name": name, "namespace": "ml-team"},
          "spec": {"replicas": REPLICAS, "engines": [{"name": "engine", "members": [{
              "role": "Standalone",
              "nodeSelector": {"devices": [{"name": "gpu", "count": 1, "selectors": [{"cel": CEL}]}]},
              "template": {"spec": {"containers": [{"name": "engine", "image": "vllm/vllm-openai:v0.23.0",
                                                    "args": [f"--model=org/{name}"]}]}}}]}]}}
    ms = {"apiVersion": API, "kind": "ModelService", "metadata": {"name": name, "namespace": "ml-team"},
          "spec": {"endpoints": [{"selector": {"matchLabels": {"modelplane.ai/deployment": name}}}]}}
    return [md, ms]


def fleet(clusters: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    docs = classes() + [{"apiVersion": API, "kind": "InferenceGateway", "metadata": {"name": "default"}, "spec": {}}]
    docs += [cluster(i, rng) for i in range(clusters)]
    for i in range(max(1, clusters // CLUSTERS_PER_DEPLOYMENT)):
        docs += deployment(i)
    return docs


def write(directory: Path, clusters: int, seed: int = 7) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "fleet.yaml").write_text(yaml.safe_dump_all(fleet(clusters, seed), sort_keys=False))
    return directory
