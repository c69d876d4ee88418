"""The platform team's manifests as the lab registers them: every InferenceCluster ``Existing``.

The lab plays each InferenceCluster (GKE, EKS or Existing) as a local cluster.
Real Crossplane would try to provision a GKE or EKS cluster for the first two;
here there is no cloud, so the control plane registers every lab cluster the
way a platform team registers a cluster it already runs: ``source: Existing``
with the kubeconfig Secret the lab wrote (``existing.kubeconfigSecretRef``)
and the lab's RWX StorageClass for model caches. Pools, classes, labels and
taints stay as written, so placements mean the same thing.

With the lab's data plane, every InferenceCluster's ``spec.gateway.className`` and the
InferenceGateway's ``spec.gatewayClassName`` name the lab's GatewayClass (``modelplane-lab``,
served by Traefik) when they name none: bring your own gateway, as a team running Traefik would.
Real Crossplane then composes routes the lab's data plane serves, and ``simulate --lab`` (which
would pick that class on its own, ``lab.backend.LabPhysical.adopt``) composes the same.

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
LAB_GATEWAY_CLASS = "modelplane-lab"   # lab.dataplane.GATEWAY_CLASS (kept import-free: a pure module)


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


def with_gateway_class(doc: Mapping[str, Any], class_name: str) -> dict[str, Any]:
    """An InferenceCluster or InferenceGateway that names no GatewayClass, naming ``class_name``
    (one that names its own keeps it; other kinds are returned unchanged)."""
    out = copy.deepcopy(dict(doc))
    spec = out.get("spec") or {}
    if out.get("kind") == "InferenceCluster" and not (spec.get("gateway") or {}).get("className"):
        out["spec"] = {**spec, "gateway": {**(spec.get("gateway") or {}), "className": class_name}}
    elif out.get("kind") == "InferenceGateway" and not spec.get("gatewayClassName"):
        out["spec"] = {**spec, "gatewayClassName": class_name}
    return out


def rewrite(sources: Iterable[Path], dest: Path, *, gateway_class: str | None = None) -> list[Path]:
    """Copy every YAML file of ``sources`` (files or folders) into ``dest``, InferenceClusters as Existing;
    with ``gateway_class``, every gateway naming none names it (``with_gateway_class``)."""
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for src in sources:
        files = sorted(src.glob("*.yaml")) if src.is_dir() else [src]
        for path in files:
            docs = [as_existing(d) for d in yaml.safe_load_all(path.read_text()) if d]
            if gateway_class:
                docs = [with_gateway_class(d, gateway_class) for d in docs]
            out = dest / path.name
            out.write_text(yaml.safe_dump_all(docs, sort_keys=False))
            written.append(out)
    return written
