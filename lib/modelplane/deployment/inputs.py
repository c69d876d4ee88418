"""What compose-model-deployment reads, as the scheduler's dataclasses.

Requirements (asked on every call, so the requirements loop settles):

- ``clusters``: InferenceClusters matching ``spec.clusterSelector`` (all
  when unset); cluster-scoped,
- ``classes``: every InferenceClass,
- ``cache``: the deployment's ModelCache, by name, in the deployment's own
  namespace only (tenancy: another team's cache is never seen).

Clusters are the big input: ``modelplane.deployment.clusters`` reads them
(once per version of each). Classes and the cache are few and small and go
through plain dicts.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modelplane.cel import Device, DeviceError
from modelplane.deployment.clusters import ClusterInfo, ClusterInfos, Terminating, read_clusters
from modelplane.deployment.routed import read_routed_wire
from modelplane.pipeline.composition import Composition
from modelplane.pipeline.received import undecodable
from modelplane.scheduler import (
    DRA,
    WORKER,
    ClassDevice,
    Deployment,
    DeviceRequest,
    Engine,
    InferenceClass,
    Member,
    Toleration,
)
from modelplane.schemas.model_deployment import ModelDeployment

API = "modelplane.ai/v1alpha1"
CLUSTERS = "clusters"
CLASSES = "classes"
CACHE = "cache"
SERVICES = "services"   # every ModelService of the namespace: which backends their routes carry

__all__ = ["CACHE", "CLASSES", "CLUSTERS", "SERVICES", "CacheView", "ClusterInfo", "ClusterInfos", "Terminating",
           "deployment", "not_fetched", "read_cache", "read_classes", "read_clusters", "read_routed",
           "read_routed_items", "require"]


def require(c: Composition, md: ModelDeployment) -> None:
    """Ask for every input; call on every invocation."""
    selector = (md.spec.clusterSelector.matchLabels if md.spec.clusterSelector else None) or {}
    c.require(CLUSTERS, API, "InferenceCluster", match_labels=selector)
    c.require(CLASSES, API, "InferenceClass", match_labels={})
    if md.spec.modelCacheRef is not None:
        c.require(CACHE, API, "ModelCache", match_name=md.spec.modelCacheRef.name, namespace=c.namespace)
    c.require(SERVICES, API, "ModelService", match_labels={}, namespace=c.namespace)


def not_fetched(c: Composition, md: ModelDeployment) -> list[str]:
    """Human names of the inputs Crossplane has not fetched yet."""
    out = []
    if not c.fetched(CLUSTERS):
        out.append("InferenceClusters")
    if not c.fetched(CLASSES):
        out.append("InferenceClasses")
    if md.spec.modelCacheRef is not None and not c.fetched(CACHE):
        out.append(f"ModelCache {md.spec.modelCacheRef.name}")
    if not c.fetched(SERVICES):
        out.append("ModelServices")
    return out


def read_routed(services: Sequence[Mapping[str, Any]] | None, namespace: str) -> frozenset[str]:
    """Every backend name the namespace's ModelService routes carry, as they report them observed."""
    out: set[str] = set()
    for svc in services or []:
        if (svc.get("metadata") or {}).get("namespace", namespace) != namespace:
            continue   # tenancy: another team's routes never hold ours
        names = (svc.get("status") or {}).get("routedBackends")
        if isinstance(names, list):
            out.update(n for n in names if isinstance(n, str))
    return frozenset(out)


def read_routed_items(items: Sequence[bytes | memoryview] | None, namespace: str) -> frozenset[str]:
    """``read_routed`` of the requirement's wire items (``Composition.required_wire``), each read once
    per its bytes (``routed``)."""
    try:
        return read_routed_wire(items or [], namespace)
    except ValueError as err:
        raise undecodable(SERVICES, err) from None


# --- the deployment ----------------------------------------------------------


def deployment(md: ModelDeployment, xr: Mapping[str, Any]) -> Deployment:
    meta = xr.get("metadata") or {}
    spec = md.spec
    engines = []
    for e in spec.engines:
        members = []
        for m in e.members:
            devices = tuple(
                DeviceRequest(name=d.name, count=d.count or 1, selectors=tuple(s.cel for s in d.selectors or ()))
                for d in (m.nodeSelector.devices if m.nodeSelector else ())
            )
            pods = m.worker.nodes if m.role == WORKER and m.worker else 1
            members.append(Member(role=m.role, pods=pods, devices=devices))
        engines.append(Engine(name=e.name, copies=e.copies or 1, phase=e.phase, members=tuple(members)))
    return Deployment(
        namespace=meta.get("namespace", ""),
        name=meta.get("name", ""),
        # Absent under `crossplane render`; the admission key then starts with "".
        created=meta.get("creationTimestamp") or "",
        replicas=spec.replicas if spec.replicas is not None else 1,
        cluster_selector=dict((spec.clusterSelector.matchLabels if spec.clusterSelector else None) or {}),
        tolerations=tuple(
            Toleration(key=t.key or "", operator=t.operator or "Equal", value=t.value or "", effect=t.effect or "")
            for t in spec.tolerations or ()
        ),
        serving_mode=(spec.serving.mode if spec.serving and spec.serving.mode else "Unified"),
        cache=spec.modelCacheRef.name if spec.modelCacheRef else None,
        engines=tuple(engines),
    )


# --- classes and the cache ---------------------------------------------------


def read_classes(items: Iterable[Mapping[str, Any]]) -> tuple[dict[str, InferenceClass], list[str]]:
    """Classes by name, and a warning per class device that cannot be read
    (that class is left out: the scheduler then reports it as not found)."""
    classes: dict[str, InferenceClass] = {}
    warnings = []
    for obj in items:
        name = (obj.get("metadata") or {}).get("name", "")
        devices = []
        try:
            for d in (obj.get("spec") or {}).get("devices") or []:
                claim = d.get("claim") or DRA
                devices.append(ClassDevice(
                    name=d.get("name", ""),
                    device=Device.from_class_device(d),
                    count=int(d.get("count") or 1),
                    claim=claim,
                    device_class_name=d.get("deviceClassName") if claim == DRA else None,
                ))
        except DeviceError as err:
            warnings.append(f"InferenceClass {name} ignored: {err}")
            continue
        if name:
            classes[name] = InferenceClass(name=name, devices=tuple(devices))
    return dict(sorted(classes.items())), warnings


@dataclass(frozen=True)
class CacheView:
    """The deployment's ModelCache as placement needs it."""

    name: str
    ready: Mapping[str, bool]  # cluster -> phase Ready
    pvc: Mapping[str, str]  # cluster -> pvcName reported there
    found: bool = True


def read_cache(name: str, items: list[Mapping[str, Any]]) -> CacheView:
    if not items:
        return CacheView(name=name, ready={}, pvc={}, found=False)
    entries = (items[0].get("status") or {}).get("clusters") or []
    return CacheView(
        name=name,
        ready={e.get("name", ""): e.get("phase") == "Ready" for e in entries if e.get("name")},
        pvc={e["name"]: e["pvcName"] for e in entries if e.get("name") and e.get("pvcName")},
    )
