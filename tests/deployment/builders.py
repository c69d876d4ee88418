"""Builders for the unit tests of ``modelplane.deployment``: every argument has
a default, so a table row names only what it is about.

Two vocabularies meet here. The observed side is plain dicts, as Crossplane
hands them to the function (``replica_obj``, ``endpoint_obj``, ``child``,
``observed_of``, ``inference_cluster``, ``xr``); the scheduler side is its
frozen dataclasses (``placement``, ``schedule``, ``cluster``,
``sched_deployment``). One pool ``p`` of class ``k`` and one Standalone member
needing one ``gpu`` keep both sides small.
"""
from __future__ import annotations

import copy
import datetime
from collections.abc import Iterable, Mapping
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane.deployment.observed import Child, endpoint_resource, replica_resource
from modelplane.pipeline.xr import parse
from modelplane.scheduler import (
    DRA,
    NEW,
    STANDALONE,
    Cluster,
    Deployment,
    DeviceRequest,
    Engine,
    Eviction,
    Member,
    MemberPlacement,
    Placement,
    PodGroup,
    Pool,
    PoolPlacement,
    ResolvedDevice,
    Schedule,
    Unplaced,
)
from modelplane.schemas.model_deployment import ModelDeployment

NS = "ml"
NAME = "dep"
CREATED = "2026-01-01T00:00:00Z"
REV = "newrev0001"  # the deployment's current revision in every row
OLD = "oldrev0001"  # an outdated one
T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
IMAGE = "vllm/vllm-openai:v0.23.0"
SELECTOR = 'device.attributes["gpu.nvidia.com"].architecture == "Hopper"'


# --- time ----------------------------------------------------------------------


def when(minutes: float) -> datetime.datetime:
    """``minutes`` after T0."""
    return T0 + datetime.timedelta(minutes=minutes)


def at(minutes: float) -> str:
    """``when(minutes)`` in RFC 3339, as conditions carry it."""
    return when(minutes).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- the deployment, as its XR -------------------------------------------------------


def member(role: str = STANDALONE, selectors: Iterable[str] | None = (SELECTOR,), image: str = IMAGE,
           count: int = 1, **extra: Any) -> dict:
    """One engine member; ``selectors=None`` leaves out the nodeSelector."""
    out: dict[str, Any] = {"role": role, "template": {"spec": {"containers": [{"name": "engine", "image": image}]}}}
    if selectors is not None:
        out["nodeSelector"] = {"devices": [{"name": "gpu", "count": count,
                                            "selectors": [{"cel": s} for s in selectors]}]}
    out.update(extra)
    return out


def engine(name: str = "e", members: Iterable[dict] | None = None, **extra: Any) -> dict:
    return {"name": name, "copies": 1, "members": list(members) if members is not None else [member()], **extra}


def spec(**fields: Any) -> dict:
    """A ModelDeployment spec as the API server stores it (defaults applied)."""
    out: dict[str, Any] = {
        "replicas": 1,
        "serving": {"mode": "Unified"},
        "strategy": {"type": "RollingUpdate"},
        "failover": {"after": "5m"},
        "engines": [engine()],
    }
    out.update(copy.deepcopy(fields))
    return out


def xr(labels: Mapping[str, str] | None = None, **fields: Any) -> dict:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelDeployment",
            "metadata": {"name": NAME, "namespace": NS, "creationTimestamp": CREATED, "labels": dict(labels or {})},
            "spec": spec(**fields)}


def model_deployment(**fields: Any) -> ModelDeployment:
    return parse(ModelDeployment, xr(**fields))


# --- the scheduler's side ------------------------------------------------------------


def sched_deployment(replicas: int = 1, serving_mode: str = "Unified", engines: Iterable[Engine] | None = None,
                     cache: str | None = None) -> Deployment:
    if engines is None:
        engines = (Engine("e", members=(Member(devices=(DeviceRequest("gpu", 1, (SELECTOR,)),)),)),)
    return Deployment(namespace=NS, name=NAME, created=CREATED, replicas=replicas, serving_mode=serving_mode,
                      cache=cache, engines=tuple(engines))


def order(index: int) -> str:
    return f"{CREATED}/{NS}/{NAME}/{index:05d}"


def member_placement(engine_: str = "e", role: str = STANDALONE, pool: str = "p", gpus: int = 1,
                     device_class: str | None = "gpu.nvidia.com") -> MemberPlacement:
    device = ResolvedDevice(DeviceRequest("gpu", gpus, (SELECTOR,)), "gpu", gpus, DRA, device_class)
    return MemberPlacement(engine_, role, pool, (device,))


def placement(index: int = 0, cluster: str = "a", state: str = NEW,
              members: Iterable[MemberPlacement] | None = None, pool: str = "p") -> Placement:
    ms = tuple(members) if members is not None else (member_placement(pool=pool),)
    return Placement(index=index, cluster=cluster, order=order(index), members=ms,
                     pods=(PoolPlacement(pool, (PodGroup(1, {"gpu": 1}),)),), state=state)


def eviction(index: int = 0, cluster: str = "a", reason: str = "why") -> Eviction:
    return Eviction(index, cluster, reason)


def unplaced(index: int = 0, capacity: bool = False, message: str = "0/1 clusters fit: a: no room") -> Unplaced:
    return Unplaced(index, {"a": "no room"}, message, capacity)


def schedule(placements: Iterable[Placement] = (), extras: Iterable[Placement] = (),
             evicted: Iterable[Eviction] = (), removed: Iterable[Eviction] = (),
             unplaced: Iterable[Unplaced] = (), message: str = "") -> Schedule:
    return Schedule(placements=tuple(placements), unplaced=tuple(unplaced), message=message, extras=tuple(extras),
                    evicted=tuple(evicted), removed=tuple(removed))


def cluster(name: str = "a", ready: bool = True, published: bool = True) -> Cluster:
    """A scheduler Cluster; ``published=False``: it has not published its pools."""
    return Cluster(name=name, ready=ready, pools=(Pool("p", "k", 1),) if published else None)


# --- observed children ---------------------------------------------------------------


def replica_obj(index: int = 0, cluster: str = "a", *, ready: bool = False, url: str = "", revision: str = "",
                draining: str = "", replaced: str = "", pools: Iterable[str] = ("p",), order_: str = "",
                placement_: list[dict] | None = None, kind: str = "ModelReplica") -> dict:
    """An observed ModelReplica as compose-model-deployment composed it."""
    name = f"{NAME}-{index}-{cluster}"
    labels = {"modelplane.ai/deployment": NAME, "modelplane.ai/cluster": cluster, "modelplane.ai/replica": str(index)}
    if revision:
        labels["modelplane.ai/revision"] = revision
    notes = {}
    if draining:
        notes["modelplane.ai/draining"] = draining
    if replaced:
        notes["modelplane.ai/replaced"] = replaced
    meta: dict[str, Any] = {"name": name, "namespace": NS, "labels": labels, "uid": "u-" + name,
                            "resourceVersion": "7"}
    if notes:
        meta["annotations"] = notes
    status: dict[str, Any] = {"ready": ready}
    if url:
        status.update(url=url, rewritePath=f"/{NS}/{name}/")
    return {
        "apiVersion": "modelplane.ai/v1alpha1", "kind": kind, "metadata": meta,
        "spec": {"deployment": NAME, "index": index, "order": order_ or order(index), "cluster": {"name": cluster},
                 "engines": [{"name": "e", "members": [{"role": STANDALONE, "pool": p}]} for p in pools],
                 "placement": placement_ if placement_ is not None else
                 [{"pool": p, "pods": [{"count": 1, "devices": {"gpu": 1}, "gang": False}]} for p in pools]},
        "status": status,
    }


def endpoint_obj(index: int = 0, cluster: str = "a", routed: bool = True) -> dict:
    """An observed ModelEndpoint; ``routed``: its Backend is published."""
    name = f"{NAME}-{index}-{cluster}"
    out: dict[str, Any] = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelEndpoint",
                           "metadata": {"name": name, "namespace": NS}, "spec": {"url": "http://x"}}
    if routed:
        out["status"] = {"routing": {"backendName": name + "-backend"}}
    return out


def child(index: int = 0, cluster: str = "a", *, ready: bool = True, endpoint: bool = True, routed: bool = True,
          revision: str = REV, draining: str = "", replaced: str = "", url: str = "http://u") -> Child:
    """One observed ModelReplica with (``endpoint``) its ModelEndpoint. By
    default: available (Ready, routed) and of the current revision."""
    obj = replica_obj(index, cluster, ready=ready, url=url, revision=revision, draining=draining, replaced=replaced)
    return Child(index=index, cluster=cluster, name=obj["metadata"]["name"], obj=obj,
                 endpoint=endpoint_obj(index, cluster, routed) if endpoint else None,
                 revision=revision, draining=draining, replaced=replaced)


def observed_of(*children: Child) -> dict[str, dict]:
    """The observed composed resources those children come from, by resource name."""
    out = {}
    for c in children:
        out[replica_resource(c.index, c.cluster)] = c.obj
        if c.endpoint is not None:
            out[endpoint_resource(c.index, c.cluster)] = c.endpoint
    return out


# --- InferenceClusters on the wire ------------------------------------------------------


def inference_cluster(name: str = "a", *, ready: bool | None = True, reason: str = "Creating",
                      since: str = "", created: str = "", labels: Mapping[str, str] | None = None,
                      taints: list[dict] | None = None, pools: list[dict] | None = None,
                      provider_config: str | None = None, gateway: Mapping[str, str] | None = None) -> dict:
    """An InferenceCluster as Crossplane returns it. ``ready=None``: no Ready
    condition; ``pools=None``: status.pools not published."""
    meta: dict[str, Any] = {"name": name, "labels": dict(labels or {})}
    if created:
        meta["creationTimestamp"] = created
    status: dict[str, Any] = {}
    if ready is not None:
        cond = {"type": "Ready", "status": "True" if ready else "False", "reason": "Available" if ready else reason}
        if since:
            cond["lastTransitionTime"] = since
        status["conditions"] = [cond]
    if pools is not None:
        status["pools"] = pools
    if provider_config is not None:
        status["providerConfigName"] = provider_config
    if gateway is not None:
        status["gateway"] = dict(gateway)
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster", "metadata": meta,
            "spec": {"taints": list(taints or [])}, "status": status}


def pool(name: str = "p", class_: str = "k", nodes: int = 1, allocations: Iterable[dict] = ()) -> dict:
    return {"name": name, "class": class_, "nodes": nodes, "allocations": list(allocations)}


def allocation(replica: str, deployment: str = f"{NS}/{NAME}", index: int = 0, gpus: int = 1) -> dict:
    """One ``status.pools[].allocations[]`` entry; ``replica`` is namespace/name."""
    return {"replica": replica, "deployment": deployment,
            "order": f"{CREATED}/{deployment}/{index:05d}",
            "pods": [{"count": 1, "devices": {"gpu": gpus}, "gang": False}]}


def wire(obj: Mapping[str, Any]) -> bytes:
    """One required resource as the wire bytes of its ``Resource`` message."""
    res = fnv1.Resource()
    res.resource.update(dict(obj))
    return res.SerializeToString()


def by_name(clusters) -> dict[str, Cluster]:
    """Clusters by name, as ``ClusterInfos.clusters`` gives them to plan and failover."""
    return {c.name: c for c in clusters}
