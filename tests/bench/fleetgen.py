"""Generated fleets for ``bench_simulate``, in two shapes a ``Shape`` describes.

Deterministic (seeded). ``OWN`` is the benchmark's own fleet: N Existing
clusters x 4 pools drawn from four classes (L4 x1, A100 x8, H100 x8, L40S x4),
2-8 nodes each, a region label, one ModelDeployment of 10 replicas per 5
clusters, all in one namespace. ``OTHER`` is a fleet the functions were not
tuned on (issue 46): mostly Existing clusters reached through kubeconfig
Secrets (a Secret each, as an administrator would apply them), the rest
provisioned by EKS, GKE, AKS and Nebius from their own classes, 4 pools each,
and the deployments spread over 8 namespaces. Every deployment asks for one
GPU with at least 40Gi through real DRA CEL, 10 replicas, and is served by its
own ModelService.
"""
from __future__ import annotations

import base64
import random
from dataclasses import dataclass
from pathlib import Path

import yaml

API = "modelplane.ai/v1alpha1"
POOLS_PER_CLUSTER = 4
REPLICAS = 10
CLUSTERS_PER_DEPLOYMENT = 5
SECRETS_NAMESPACE = "modelplane-system"


@dataclass(frozen=True)
class Shape:
    """What a generated fleet is made of, apart from its size.

    ``sources`` are (source, weight) pairs, dealt in turn by smooth weighted round robin, so every
    prefix of the fleet holds each source in about its share (a 50-cluster seed fleet has some of
    each; Existing first, so a fleet of one cluster is Existing). ``secrets`` applies each Existing
    cluster's kubeconfig Secret with the fleet."""

    name: str
    sources: tuple[tuple[str, float], ...] = (("Existing", 1.0),)
    namespaces: int = 1
    secrets: bool = False


OWN = Shape("own")
OTHER = Shape("other", sources=(("Existing", 0.86), ("EKS", 0.07), ("GKE", 0.03), ("AKS", 0.02), ("Nebius", 0.02)),
              namespaces=8, secrets=True)
SHAPES = {s.name: s for s in (OWN, OTHER)}

# class name -> (GPUs per node, memory per GPU, architecture, provisioning or None for Existing only)
_CLASSES = {
    "l4-1x": (1, "24Gi", "Ada", None),
    "a100-8x": (8, "80Gi", "Ampere", None),
    "h100-8x": (8, "80Gi", "Hopper", None),
    "l40s-4x": (4, "48Gi", "Ada", None),
}
# Each cloud provisions its pools from classes of its own (the provisioning block names its machine).
_CLOUD_CLASSES = {
    "EKS": {
        "eks-l40s-4x": (4, "48Gi", "Ada", {"eks": {"instanceType": "g6e.12xlarge", "capacityType": "ON_DEMAND"}}),
        "eks-a100-8x": (8, "80Gi", "Ampere", {"eks": {"instanceType": "p4de.24xlarge"}}),
        "eks-h100-8x": (8, "80Gi", "Hopper", {"eks": {"instanceType": "p5.48xlarge"}}),
        "eks-l4-1x": (1, "24Gi", "Ada", {"eks": {"instanceType": "g6.2xlarge"}}),
    },
    "GKE": {
        "gke-l4-1x": (1, "24Gi", "Ada", {"gke": {"machineType": "g2-standard-8",
                                                  "accelerator": {"type": "nvidia-l4", "count": 1}}}),
        "gke-a100-8x": (8, "80Gi", "Ampere", {"gke": {"machineType": "a2-ultragpu-8g",
                                                       "accelerator": {"type": "nvidia-a100-80gb", "count": 8}}}),
        "gke-h100-8x": (8, "80Gi", "Hopper", {"gke": {"machineType": "a3-highgpu-8g",
                                                       "accelerator": {"type": "nvidia-h100-80gb", "count": 8}}}),
        "gke-l40s-1x": (1, "48Gi", "Ada", {"gke": {"machineType": "g2-standard-16",
                                                    "accelerator": {"type": "nvidia-l4", "count": 1}}}),
    },
    "AKS": {
        "aks-t4-1x": (1, "16Gi", "Turing", {"aks": {"vmSize": "Standard_NC4as_T4_v3"}}),
        "aks-a100-1x": (1, "80Gi", "Ampere", {"aks": {"vmSize": "Standard_NC24ads_A100_v4"}}),
        "aks-h100-8x": (8, "80Gi", "Hopper", {"aks": {"vmSize": "Standard_ND96isr_H100_v5"}}),
        "aks-a10-1x": (1, "24Gi", "Ampere", {"aks": {"vmSize": "Standard_NV36ads_A10_v5"}}),
    },
    "Nebius": {
        "nebius-h200-8x": (8, "141Gi", "Hopper", {"nebius": {"platform": "gpu-h200-sxm",
                                                              "preset": "8gpu-128vcpu-1600gb"}}),
        "nebius-h100-8x": (8, "80Gi", "Hopper", {"nebius": {"platform": "gpu-h100-sxm",
                                                             "preset": "8gpu-128vcpu-1600gb"}}),
        "nebius-l40s-1x": (1, "48Gi", "Ada", {"nebius": {"platform": "gpu-l40s-a", "preset": "1gpu-40vcpu-160gb"}}),
        "nebius-b200-8x": (8, "180Gi", "Blackwell", {"nebius": {"platform": "gpu-b200-sxm",
                                                                 "preset": "8gpu-160vcpu-1792gb"}}),
    },
}
_REGIONS = ("us-east", "us-west", "eu-west", "ap-south")
# Where each cloud's clusters go (its own region names), and the source's block beside them.
_CLOUD_BLOCK = {
    # every other EKS cluster in subnets of its own, the rest in a VPC Modelplane composes
    "EKS": lambda i: {"region": ("us-east-1", "us-west-2", "eu-west-1")[i % 3],
                      **({"subnetIds": [f"subnet-{i:08x}a", f"subnet-{i:08x}b"]} if i % 2 else {})},
    "GKE": lambda i: {"project": "modelplane-bench", "region": ("us-central1", "europe-west4")[i % 2]},
    "AKS": lambda i: {"location": ("eastus2", "westeurope")[i % 2]},
    "Nebius": lambda i: {},
}
CEL = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'


def _class(name: str, count: int, memory: str, arch: str, provisioning: dict | None) -> dict:
    spec: dict = {"devices": [{"name": "gpu", "driver": "gpu.nvidia.com", "count": count,
                               "deviceClassName": "gpu.nvidia.com",
                               "attributes": {"architecture": {"string": arch}},
                               "capacity": {"memory": {"value": memory}}}]}
    if provisioning:
        spec["provisioning"] = provisioning
    return {"apiVersion": API, "kind": "InferenceClass", "metadata": {"name": name}, "spec": spec}


def classes(shape: Shape = OWN) -> list[dict]:
    """The InferenceClasses the shape's clusters name: the Existing ones, and each cloud's it draws."""
    table = dict(_CLASSES)
    for source, _ in shape.sources:
        table.update(_CLOUD_CLASSES.get(source, {}))
    return [_class(name, *row) for name, row in table.items()]


def sources(shape: Shape, n: int) -> list[str]:
    """The source of each of n clusters: each turn every source earns its weight and the richest
    is dealt and pays the total (ties to the first listed)."""
    credit = dict.fromkeys((s for s, _ in shape.sources), 0.0)
    total = sum(w for _, w in shape.sources)
    out = []
    for _ in range(n):
        for source, weight in shape.sources:
            credit[source] += weight
        pick = max(credit, key=lambda s: credit[s])
        credit[pick] -= total
        out.append(pick)
    return out


def cluster(i: int, rng: random.Random, shape: Shape = OWN, source: str = "Existing") -> dict:
    catalogue = _CLOUD_CLASSES.get(source, _CLASSES)
    names = rng.sample(sorted(catalogue), POOLS_PER_CLUSTER)
    name = f"c{i:05d}"
    if source == "Existing":
        block = {"kubeconfigSecretRef": {"namespace": SECRETS_NAMESPACE, "name": f"{name}-kubeconfig",
                                         "key": "kubeconfig"}}
    else:
        block = _CLOUD_BLOCK[source](i)
    return {"apiVersion": API, "kind": "InferenceCluster",
            "metadata": {"name": name, "labels": {"region": _REGIONS[i % len(_REGIONS)]}},
            "spec": {"cluster": {"source": source, source.lower(): block},
                     "nodePools": [{"name": cls.split("-")[-2] if source != "Existing" else cls.split("-")[0],
                                    "class": cls, "nodeCount": rng.randint(2, 8)}
                                   for cls in names]}}


def kubeconfig_secret(obj: dict) -> dict:
    """The Secret an Existing cluster's kubeconfigSecretRef names (a kubeconfig pointing nowhere)."""
    ref = obj["spec"]["cluster"]["existing"]["kubeconfigSecretRef"]
    name = obj["metadata"]["name"]
    kubeconfig = (f"apiVersion: v1\nkind: Config\nclusters:\n- name: {name}\n  cluster: {{server: "
                  f"'https://{name}.clusters.example:6443'}}\ncontexts:\n- name: {name}\n  context: "
                  f"{{cluster: {name}, user: {name}}}\ncurrent-context: {name}\nusers:\n- name: {name}\n  user: "
                  f"{{token: bench}}\n")
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"namespace": ref["namespace"], "name": ref["name"]},
            "type": "Opaque", "data": {ref["key"]: base64.b64encode(kubeconfig.encode()).decode()}}


def deployment(i: int, shape: Shape = OWN) -> list[dict]:
    name = f"model-{i:04d}"
    namespace = "ml-team" if shape.namespaces == 1 else f"ml-team-{i % shape.namespaces}"
    md = {"apiVersion": API, "kind": "ModelDeployment", "metadata": {"name": name, "namespace": namespace},
          "spec": {"replicas": REPLICAS, "engines": [{"name": "engine", "members": [{
              "role": "Standalone",
              "nodeSelector": {"devices": [{"name": "gpu", "count": 1, "selectors": [{"cel": CEL}]}]},
              "template": {"spec": {"containers": [{"name": "engine", "image": "vllm/vllm-openai:v0.23.0",
                                                    "args": [f"--model=org/{name}"]}]}}}]}]}}
    ms = {"apiVersion": API, "kind": "ModelService", "metadata": {"name": name, "namespace": namespace},
          "spec": {"endpoints": [{"selector": {"matchLabels": {"modelplane.ai/deployment": name}}}]}}
    return [md, ms]


def fleet(clusters: int, seed: int = 7, shape: Shape = OWN) -> list[dict]:
    rng = random.Random(seed)
    docs = classes(shape) + [{"apiVersion": API, "kind": "InferenceGateway", "metadata": {"name": "default"},
                              "spec": {}}]
    made = [cluster(i, rng, shape, source) for i, source in enumerate(sources(shape, clusters))]
    docs += made
    if shape.secrets:
        docs += [kubeconfig_secret(c) for c in made if c["spec"]["cluster"]["source"] == "Existing"]
    for i in range(max(1, clusters // CLUSTERS_PER_DEPLOYMENT)):
        docs += deployment(i, shape)
    return docs


def write(directory: Path, clusters: int, seed: int = 7, shape: Shape = OWN) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "fleet.yaml").write_text(yaml.safe_dump_all(fleet(clusters, seed, shape), sort_keys=False))
    return directory
