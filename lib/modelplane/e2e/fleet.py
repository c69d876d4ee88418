"""The platform team's manifests as the lab registers them: every InferenceCluster ``Existing``.

The lab plays each InferenceCluster (GKE, EKS or Existing) as a local cluster.
Real Crossplane would try to provision a GKE or EKS cluster for the first two;
here there is no cloud, so the control plane registers every lab cluster the
way a platform team registers a cluster it already runs: ``source: Existing``
with the kubeconfig Secret the lab wrote (``existing.kubeconfigSecretRef``)
and the lab's RWX StorageClass for model caches. Pools, classes, labels and
taints stay as written, so placements mean the same thing.

``modelplane simulate --lab`` runs over the same rewritten folder, so both
sides start from identical manifests.
"""
from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

NAMESPACE = "modelplane-system"
STORAGE_CLASS = "modelplane-rwx"
POOL_FIELDS = ("name", "class", "nodeCount")


def secret_ref(name: str) -> dict[str, str]:
    return {"namespace": NAMESPACE, "name": f"{name}-kubeconfig", "key": "kubeconfig"}


def as_existing(doc: Mapping[str, Any]) -> dict[str, Any]:
    """An InferenceCluster of any source, registered as Existing (others returned unchanged)."""
    out = copy.deepcopy(dict(doc))
    if doc.get("kind") != "InferenceCluster":
        return out
    spec = out.setdefault("spec", {})
    cluster = spec.get("cluster") or {}
    existing = dict(cluster.get("existing") or {}) if cluster.get("source") == "Existing" else {}
    existing["kubeconfigSecretRef"] = existing.get("kubeconfigSecretRef") or secret_ref(out["metadata"]["name"])
    existing["cache"] = existing.get("cache") or {"storageClassName": STORAGE_CLASS}
    spec["cluster"] = {"source": "Existing", "existing": existing}
    # Cloud-only pool fields (zones, autoscaling bounds) have no meaning for a cluster we do not provision.
    spec["nodePools"] = [{k: p[k] for k in POOL_FIELDS if k in p} for p in spec.get("nodePools") or []]
    return out


def rewrite(sources: Iterable[Path], dest: Path) -> list[Path]:
    """Copy every YAML file of ``sources`` (files or folders) into ``dest``, InferenceClusters as Existing."""
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for src in sources:
        files = sorted(src.glob("*.yaml")) if src.is_dir() else [src]
        for path in files:
            docs = [as_existing(d) for d in yaml.safe_load_all(path.read_text()) if d]
            out = dest / path.name
            out.write_text(yaml.safe_dump_all(docs, sort_keys=False))
            written.append(out)
    return written
