"""What compose-model-deployment reads, as the scheduler's dataclasses.

Requirements (asked on every call, so the requirements loop settles):

- ``clusters``: InferenceClusters matching ``spec.clusterSelector`` (all
  when unset); cluster-scoped,
- ``classes``: every InferenceClass,
- ``cache``: the deployment's ModelCache, by name, in the deployment's own
  namespace only (tenancy: another team's cache is never seen).

Clusters are the big input (1,000 clusters x pools x allocations), so they
are read field by field from the protobuf Structs: only the fields the
scheduler and the ModelReplica need are touched and no dict of the whole
object is ever built. Two parts are read only when used: a pool's
allocations (replayed only for pools whose class fits the deployment, and
not at all when every replica stays where it is) and what a ModelReplica
needs of its cluster (only placed clusters are asked). Classes and the
cache are few and small and go through plain dicts.

Capacity: a pool's allocations list every ModelReplica on it, ours
included. Ours that are observed children are skipped here (the scheduler
accounts for them from the observed ModelReplicas, at their own admission
keys); ours that are not (dropped on an earlier call, still terminating:
their pods hold devices until they are gone) count like anyone else's, and
their indexes are ``Terminating`` so no new replica reuses the name.
"""
from __future__ import annotations

from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import struct_pb2

from modelplane.cel import Device, DeviceError
from modelplane.function import Composition
from modelplane.scheduler import (
    DRA,
    WORKER,
    Allocation,
    ClassDevice,
    Cluster,
    Deployment,
    DeviceRequest,
    Engine,
    InferenceClass,
    Member,
    PodGroup,
    Pool,
    Taint,
    Toleration,
)
from modelplane.schemas.model_deployment import ModelDeployment

API = "modelplane.ai/v1alpha1"
CLUSTERS = "clusters"
CLASSES = "classes"
CACHE = "cache"


def require(c: Composition, md: ModelDeployment) -> None:
    """Ask for every input; call on every invocation."""
    selector = (md.spec.clusterSelector.matchLabels if md.spec.clusterSelector else None) or {}
    c.require(CLUSTERS, API, "InferenceCluster", match_labels=selector)
    c.require(CLASSES, API, "InferenceClass", match_labels={})
    if md.spec.modelCacheRef is not None:
        c.require(CACHE, API, "ModelCache", match_name=md.spec.modelCacheRef.name, namespace=c.namespace)


def not_fetched(c: Composition, md: ModelDeployment) -> list[str]:
    """Human names of the inputs Crossplane has not fetched yet."""
    out = []
    if c.required_structs(CLUSTERS) is None:
        out.append("InferenceClusters")
    if c.required_structs(CLASSES) is None:
        out.append("InferenceClasses")
    if md.spec.modelCacheRef is not None and c.required_structs(CACHE) is None:
        out.append(f"ModelCache {md.spec.modelCacheRef.name}")
    return out


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


# --- clusters, straight from Structs -----------------------------------------


@dataclass(frozen=True)
class ClusterInfo:
    """What a ModelReplica needs to know about its cluster (spec.cluster)."""

    provider_config: str
    gateway: Mapping[str, str] = field(default_factory=dict)


# Struct access: work on the ``fields`` maps and read typed members directly
# (a missing or differently typed value reads as its zero value); ``get``
# never inserts into the request, unlike indexing a protobuf map.
Fields = Mapping[str, struct_pb2.Value]
_NONE: Fields = {}


def _m(f: Fields, key: str) -> Fields:
    v = f.get(key)
    return v.struct_value.fields if v is not None else _NONE


def _l(f: Fields, key: str) -> Sequence[struct_pb2.Value]:
    v = f.get(key)
    return v.list_value.values if v is not None else ()


def _s(f: Fields, key: str) -> str:
    v = f.get(key)
    return v.string_value if v is not None else ""


def _n(f: Fields, key: str) -> int:
    v = f.get(key)
    return int(v.number_value) if v is not None else 0


def _strings(f: Fields) -> dict[str, str]:
    return {k: v.string_value for k, v in f.items()}


def _ready(status: Fields) -> tuple[bool, str]:
    for v in _l(status, "conditions"):
        cond = v.struct_value.fields
        if _s(cond, "type") == "Ready":
            if _s(cond, "status") == "True":
                return True, ""
            return False, _s(cond, "reason") or _s(cond, "message")
    return False, "no Ready condition yet"


def _pods(alloc: Fields) -> tuple[PodGroup, ...]:
    out = []
    for v in _l(alloc, "pods"):
        g = v.struct_value.fields
        gang = g.get("gang")
        out.append(PodGroup(
            count=_n(g, "count"),
            devices={k: int(d.number_value) for k, d in sorted(_m(g, "devices").items())},
            gang=gang.bool_value if gang is not None else False,
        ))
    return tuple(out)


def _allocations(pool: Fields, own: str, live: Container[str]) -> tuple[Allocation, ...]:
    out = []
    for v in _l(pool, "allocations"):
        a = v.struct_value.fields
        dep = _s(a, "deployment")
        replica = _s(a, "replica")
        if dep != own or replica not in live:
            # A terminating replica of ours is reported as another
            # deployment's: the scheduler skips its own key when replaying.
            out.append(Allocation(replica=replica, deployment=dep if dep != own else f"{dep} (terminating)",
                                  order=_s(a, "order"), pods=_pods(a)))
    return tuple(out)


class Allocations(Sequence[Allocation]):
    """A pool's allocations (all but this deployment's observed replicas),
    read from its Struct on first use. Compares equal to the same
    allocations in a tuple."""

    __slots__ = ("_items", "_live", "_own", "_pool")

    def __init__(self, pool: Fields, own: str, live: Container[str] = frozenset()) -> None:
        self._pool: Fields | None = pool
        self._own = own
        self._live = live
        self._items: tuple[Allocation, ...] = ()

    def _read(self) -> tuple[Allocation, ...]:
        if self._pool is not None:
            self._items = _allocations(self._pool, self._own, self._live)
            self._pool = None
        return self._items

    def __getitem__(self, i):  # type: ignore[override]
        return self._read()[i]

    def __len__(self) -> int:
        return len(self._read())

    def __iter__(self) -> Iterator[Allocation]:
        return iter(self._read())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Allocations):
            other = other._read()
        return self._read() == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._read())


def _info(name: str, status: Fields) -> ClusterInfo:
    return ClusterInfo(provider_config=_s(status, "providerConfigName") or name,
                       gateway=_strings(_m(status, "gateway")))


class ClusterInfos(Mapping[str, ClusterInfo]):
    """Cluster name -> ClusterInfo, each read from its Struct when asked:
    only the clusters replicas are placed on ever are."""

    def __init__(self) -> None:
        self._status: dict[str, Fields] = {}
        self._meta: dict[str, Fields] = {}
        self._read: dict[str, ClusterInfo] = {}

    def add(self, name: str, status: Fields, meta: Fields = _NONE) -> None:
        self._status[name] = status
        self._meta[name] = meta
        self._read.pop(name, None)

    def __getitem__(self, name: str) -> ClusterInfo:
        info = self._read.get(name)
        if info is None:
            info = self._read[name] = _info(name, self._status[name])
        return info

    def __len__(self) -> int:
        return len(self._status)

    def __iter__(self) -> Iterator[str]:
        return iter(self._status)

    def since(self, name: str) -> str:
        """When the cluster's Ready condition last changed (RFC 3339), or,
        without one, when the cluster was created; "" when neither is known."""
        for v in _l(self._status.get(name, _NONE), "conditions"):
            cond = v.struct_value.fields
            if _s(cond, "type") == "Ready" and _s(cond, "lastTransitionTime"):
                return _s(cond, "lastTransitionTime")
        return _s(self._meta.get(name, _NONE), "creationTimestamp")


def _cluster(f: Fields, own: str, live: Container[str] = frozenset()) -> tuple[Cluster, Fields, Fields]:
    meta, spec, status = _m(f, "metadata"), _m(f, "spec"), _m(f, "status")
    name = _s(meta, "name")
    ready, why = _ready(status)
    taints = tuple(
        Taint(key=_s(t, "key"), value=_s(t, "value"), effect=_s(t, "effect") or "NoSchedule")
        for t in (v.struct_value.fields for v in _l(spec, "taints"))
    )
    pools: tuple[Pool, ...] | None = None
    if "pools" in status:
        pools = tuple(
            Pool(name=_s(p, "name"), class_name=_s(p, "class"), nodes=_n(p, "nodes"),
                 allocations=Allocations(p, own, live))
            for p in (v.struct_value.fields for v in _l(status, "pools"))
        )
    cluster = Cluster(name=name, labels=_strings(_m(meta, "labels")), ready=ready, not_ready_reason=why,
                      taints=taints, pools=pools)
    return cluster, status, meta


def read_cluster(s: struct_pb2.Struct, own: str) -> tuple[Cluster, ClusterInfo]:
    """One InferenceCluster; ``own`` is this deployment's ``namespace/name``."""
    cluster, status, _ = _cluster(s.fields, own)
    return cluster, _info(cluster.name, status)


def read_clusters(structs: Iterable[struct_pb2.Struct], own: str,
                  live: Container[str] = frozenset()) -> tuple[tuple[Cluster, ...], ClusterInfos]:
    """The clusters, sorted by name. ``live`` holds ``namespace/name`` of
    this deployment's observed ModelReplicas."""
    clusters = []
    infos = ClusterInfos()
    for s in structs:
        cluster, status, meta = _cluster(s.fields, own, live)
        if cluster.name:
            clusters.append(cluster)
            infos.add(cluster.name, status, meta)
    return tuple(sorted(clusters, key=lambda c: c.name)), infos


class Terminating(Container[int]):
    """Indexes of this deployment's ModelReplicas that the clusters still
    list in ``status.pools`` but that are no longer observed children (being
    deleted). Read from the Structs on first use: only a call that places a
    new replica asks."""

    def __init__(self, structs: Iterable[struct_pb2.Struct], own: str, live: Container[str]) -> None:
        self._structs: Iterable[struct_pb2.Struct] | None = structs
        self._own = own
        self._live = live
        self._indexes: frozenset[int] = frozenset()

    def _read(self) -> frozenset[int]:
        if self._structs is not None:
            found = set()
            for s in self._structs:
                for p in _l(_m(s.fields, "status"), "pools"):
                    for v in _l(p.struct_value.fields, "allocations"):
                        a = v.struct_value.fields
                        if _s(a, "deployment") == self._own and _s(a, "replica") not in self._live:
                            # The admission key ends with the index: ".../{index:05d}".
                            tail = _s(a, "order").rsplit("/", 1)[-1]
                            if tail.isdigit():
                                found.add(int(tail))
            self._indexes = frozenset(found)
            self._structs = None
        return self._indexes

    def __contains__(self, index: object) -> bool:
        return index in self._read()


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
