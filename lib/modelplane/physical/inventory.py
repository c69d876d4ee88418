"""What a lab workload cluster holds before any workload arrives: pure builders.

From the InferenceClusters and InferenceClasses of a directory, each cluster
gets the objects a real GPU cluster would already have:

- one Node per pool node, labelled ``modelplane.ai/pool=<pool>``, carrying the
  InferenceCluster's taints (plus the ``nvidia.com/gpu`` taint GKE and EKS GPU
  pools get from the node pools Modelplane composes) and annotated for kwok,
  which plays its kubelet;
- one ResourceSlice per node and DRA driver (``resource.k8s.io/v1``), listing
  the class's ``claim: DRA`` devices with their attributes and capacities
  exactly as the class declares them: the part a DRA driver plays on a real
  node. ``Synthetic`` devices are left out: no driver publishes them (the
  class says so), and composed claims never request them;
- the DeviceClasses the classes name, each selecting the drivers that claim it;
- a StorageClass for a cache class the platform admin would have created
  (Existing and EKS clusters name one in ``cache.storageClassName``) and a few
  large static PersistentVolumes per cache class, so ModelCache PVCs bind by
  the real PV controller with no storage driver.

Everything here is plain data in, manifests out: no process, no network.
"""
from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from modelplane.errors import InputError
from modelplane.labels import POOL
from modelplane.platform import eks, gke, nebius, vultr
from modelplane.platform.common import NAMESPACE, RWX_STORAGE_CLASS
from modelplane.platform.inference_class import check_class

API = "modelplane.ai/v1alpha1"

# kwok manages the Nodes carrying this annotation (``--manage-nodes-with-annotation-selector``).
KWOK_ANNOTATION = "kwok.x-k8s.io/node"
KWOK_SELECTOR = f"{KWOK_ANNOTATION}=fake"
# Marks every object the lab created itself (as opposed to what a workload applied).
LAB_LABEL = "modelplane.ai/lab"

# A lab node's CPU, memory and pod room. The lab models devices, not CPUs: a node
# has the room of a large 8-GPU host, so GPUs (DRA) decide where pods go.
NODE_CAPACITY = {"cpu": "96", "memory": "1024Gi", "pods": "110", "ephemeral-storage": "2Ti"}
# DRA's limit on devices per ResourceSlice (resource.k8s.io/v1 ResourceSliceMaxDevices).
MAX_DEVICES_PER_SLICE = 128
# Static PersistentVolumes per cache StorageClass: each ModelCache takes one per cluster.
CACHE_VOLUMES = 4
CACHE_VOLUME_SIZE = "64Ti"
# The node taint of the GPU pools Modelplane provisions (GKE, EKS, Nebius and Vultr compose it
# on their node pools; GKE's, EKS's and Nebius's APIs spell the effect NO_SCHEDULE, a Node and
# VKE spell it NoSchedule).
_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}


def _node_taint(taint: Mapping[str, str]) -> dict[str, str]:
    return {**taint, "effect": _EFFECTS.get(taint["effect"], taint["effect"])}


POOL_TAINTS = {
    "GKE": _node_taint(gke.GPU_TAINT),
    "EKS": _node_taint(eks.GPU_TAINT),
    "Nebius": _node_taint(nebius.GPU_TAINT),
    "Vultr": _node_taint(vultr.GPU_TAINT),
}


@dataclass(frozen=True)
class PoolNodes:
    """One spec.nodePools entry: how many nodes of which class (not the scheduler's Pool of capacity)."""

    name: str
    class_name: str
    node_count: int


@dataclass(frozen=True)
class ClusterInventory:
    """One InferenceCluster as the lab plays it (any source becomes a local cluster)."""

    name: str
    source: str
    pools: tuple[PoolNodes, ...]
    taints: tuple[Mapping[str, str], ...] = ()
    cache_class: str = ""          # the StorageClass ModelCache PVCs use here ("" = none declared)
    composes_cache_class: bool = False  # Modelplane composes the StorageClass itself (GKE, AKS)
    # Where an Existing InferenceCluster's kubeconfig lives (its own ref; for other sources the
    # ref the lab cluster would have if registered as Existing): namespace, name, key.
    secret_ref: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FleetInventory:
    """Every cluster of a folder of manifests, and the classes their pools name."""

    clusters: tuple[ClusterInventory, ...]
    classes: Mapping[str, Mapping[str, Any]]   # InferenceClass name -> spec


def _named(doc: Mapping[str, Any], kind: str) -> str:
    name = (doc.get("metadata") or {}).get("name")
    if not isinstance(name, str) or not name:
        raise InputError("metadata.name", f"every {kind} needs a metadata.name")
    return name


def read_fleet(docs: Iterable[Mapping[str, Any]]) -> FleetInventory:
    """The InferenceClusters and InferenceClasses among ``docs``; other documents are ignored.

    Raises InputError naming the object and field when a pool names a class that is not
    among the documents, or a class is invalid."""
    classes: dict[str, Mapping[str, Any]] = {}
    cluster_docs: list[Mapping[str, Any]] = []
    for doc in docs:
        if not isinstance(doc, Mapping) or doc.get("apiVersion") != API:
            continue
        if doc.get("kind") == "InferenceClass":
            name = _named(doc, "InferenceClass")
            spec = doc.get("spec") or {}
            try:
                check_class(spec)
            except InputError as err:
                raise InputError(f"InferenceClass/{name}: {err.field}", err.message) from None
            classes[name] = spec
        elif doc.get("kind") == "InferenceCluster":
            cluster_docs.append(doc)
    clusters = [_cluster(doc, classes) for doc in cluster_docs]
    names = [c.name for c in clusters]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError("metadata.name", f"InferenceCluster {dupes[0]} is defined twice; give each a unique name")
    return FleetInventory(clusters=tuple(sorted(clusters, key=lambda c: c.name)), classes=classes)


def _cluster(doc: Mapping[str, Any], classes: Mapping[str, Mapping[str, Any]]) -> ClusterInventory:
    name = _named(doc, "InferenceCluster")
    spec = doc.get("spec") or {}
    source = (spec.get("cluster") or {}).get("source") or ""
    block = (spec.get("cluster") or {}).get(source.lower()) or {}
    pools = []
    for i, p in enumerate(spec.get("nodePools") or []):
        cls = p.get("class", "")
        if cls not in classes:
            raise InputError(f"InferenceCluster/{name}: spec.nodePools[{i}].class",
                             f"class {cls!r} is not defined in the lab's directory; add that InferenceClass")
        pools.append(PoolNodes(name=p["name"], class_name=cls, node_count=int(p.get("nodeCount", 0))))
    if not pools:
        raise InputError(f"InferenceCluster/{name}: spec.nodePools", "list at least one pool for the lab to build")
    cache_class = (block.get("cache") or {}).get("storageClassName") or ""
    # GKE and AKS compose the modelplane-rwx StorageClass themselves (Filestore, Azure
    # Files); the XRD defaults cache.storageClassName to that name.
    composes = source in ("GKE", "AKS") and cache_class in ("", RWX_STORAGE_CLASS)
    # Nodes carry the taints a real cluster's nodes would: the GPU taint the composed GKE/EKS
    # node pools declare. An InferenceCluster's spec.taints are the fleet scheduler's (which
    # replicas may be placed there, API.md); no composed node pool and no composed pod carries
    # them, so tainting the modelled nodes would leave tolerating replicas Pending here while
    # they run on the real cluster.
    taints = [dict(POOL_TAINTS[source])] if source in POOL_TAINTS else []
    ref = block.get("kubeconfigSecretRef") or {}
    secret_ref = {"namespace": ref.get("namespace") or NAMESPACE, "name": ref.get("name") or f"{name}-kubeconfig",
                  "key": ref.get("key") or "kubeconfig"}
    return ClusterInventory(
        name=name, source=source, pools=tuple(pools), taints=tuple(taints), secret_ref=secret_ref,
        cache_class=cache_class or (RWX_STORAGE_CLASS if composes else ""),
        composes_cache_class=composes,
    )


# --- builders ---------------------------------------------------------------


def _meta(name: str, cluster: str, **extra: Any) -> dict:
    return {"name": name, "labels": {LAB_LABEL: cluster}, **extra}


def node_name(pool: str, index: int) -> str:
    return f"{pool}-{index}"


def nodes(cluster: ClusterInventory) -> list[dict]:
    """One Node per pool node, ready for kwok to take over."""
    out = []
    for pool in cluster.pools:
        for i in range(pool.node_count):
            name = node_name(pool.name, i)
            meta = _meta(name, cluster.name, annotations={KWOK_ANNOTATION: "fake"})
            meta["labels"].update({
                POOL: pool.name,
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
            })
            spec: dict[str, Any] = {}
            if cluster.taints:
                spec["taints"] = [dict(t) for t in cluster.taints]
            out.append({
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": meta,
                "spec": spec,
                "status": {
                    "capacity": dict(NODE_CAPACITY),
                    "allocatable": dict(NODE_CAPACITY),
                    "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux", "kubeletVersion": "kwok",
                                 "containerRuntimeVersion": "kwok", "kernelVersion": "kwok",
                                 "kubeProxyVersion": "kwok", "osImage": "modelplane lab",
                                 "bootID": "", "machineID": "", "systemUUID": ""},
                },
            })
    return out


def _dra_devices(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [d for d in spec.get("devices") or [] if d.get("claim", "DRA") == "DRA"]


def _slice_device(dev: Mapping[str, Any], index: int) -> dict:
    out: dict[str, Any] = {"name": f"{dev['name']}-{index}"}
    attrs = {k: dict(v) for k, v in sorted((dev.get("attributes") or {}).items())}
    caps = {k: {"value": str(v["value"])} for k, v in sorted((dev.get("capacity") or {}).items())}
    if attrs:
        out["attributes"] = attrs
    if caps:
        out["capacity"] = caps
    return out


def resource_slices(cluster: ClusterInventory, node: str, class_spec: Mapping[str, Any]) -> list[dict]:
    """The ResourceSlices a DRA driver publishes for ``node``: one per driver (more past 128 devices).

    Device names are ``<class device name>-<i>``; the pool is the node, as node-local drivers do."""
    by_driver: dict[str, list[dict]] = {}
    for dev in _dra_devices(class_spec):
        devices = by_driver.setdefault(dev["driver"], [])
        devices.extend(_slice_device(dev, i) for i in range(int(dev.get("count", 1))))
    out = []
    for driver, devices in sorted(by_driver.items()):
        chunks = [devices[i:i + MAX_DEVICES_PER_SLICE] for i in range(0, len(devices), MAX_DEVICES_PER_SLICE)]
        for n, chunk in enumerate(chunks):
            suffix = f"-{n}" if len(chunks) > 1 else ""
            out.append({
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": _meta(f"{node}-{driver}{suffix}", cluster.name),
                "spec": {
                    "driver": driver,
                    "nodeName": node,
                    "pool": {"name": node, "generation": 1, "resourceSliceCount": len(chunks)},
                    "devices": chunk,
                },
            })
    return out


def device_classes(fleet: FleetInventory, cluster: ClusterInventory | None = None) -> list[dict]:
    """The DeviceClasses the classes name (those of ``cluster``'s pools, or every class).

    Each selects by driver: a class's claim may land on any device of the drivers that
    declare that DeviceClass, and on nothing else."""
    names = {p.class_name for p in cluster.pools} if cluster else set(fleet.classes)
    drivers: dict[str, set[str]] = {}
    for cls in sorted(names):
        for dev in _dra_devices(fleet.classes[cls]):
            drivers.setdefault(dev["deviceClassName"], set()).add(dev["driver"])
    out = []
    for name, ds in sorted(drivers.items()):
        expr = " || ".join(f'device.driver == "{d}"' for d in sorted(ds))
        out.append({
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": _meta(name, cluster.name if cluster else ""),
            "spec": {"selectors": [{"cel": {"expression": expr}}]},
        })
    return out


def storage(cluster: ClusterInventory) -> list[dict]:
    """The cache StorageClass the admin would have created, and static volumes for its PVCs."""
    if not cluster.cache_class:
        return []
    out = []
    if not cluster.composes_cache_class:
        out.append({
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": _meta(cluster.cache_class, cluster.name),
            # No driver provisions in the lab: PVCs bind to the static volumes below.
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "Immediate",
            "reclaimPolicy": "Retain",
        })
    for i in range(CACHE_VOLUMES):
        name = f"lab-{cluster.cache_class}-{i}"
        out.append({
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": _meta(name, cluster.name),
            "spec": {
                "storageClassName": cluster.cache_class,
                "capacity": {"storage": CACHE_VOLUME_SIZE},
                "accessModes": ["ReadWriteMany", "ReadWriteOnce", "ReadOnlyMany"],
                "persistentVolumeReclaimPolicy": "Retain",
                # Never mounted (kwok runs no containers); 192.0.2.0/24 is a documentation range.
                "nfs": {"server": "192.0.2.1", "path": f"/{name}"},
            },
        })
    return out


def kubeconfig_secret(cluster: ClusterInventory, kubeconfig: str) -> dict:
    """The Secret an Existing InferenceCluster's ``kubeconfigSecretRef`` names, holding ``kubeconfig``."""
    ref = cluster.secret_ref
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": ref["name"], "namespace": ref["namespace"], "labels": {LAB_LABEL: cluster.name}},
        "type": "Opaque",
        "data": {ref["key"]: base64.b64encode(kubeconfig.encode()).decode()},
    }


def cluster_objects(fleet: FleetInventory, cluster: ClusterInventory) -> list[dict]:
    """Everything the lab creates in ``cluster``, in creation order."""
    out = device_classes(fleet, cluster) + storage(cluster)
    node_list = nodes(cluster)
    out += node_list
    pool_class = {p.name: fleet.classes[p.class_name] for p in cluster.pools}
    for node in node_list:
        meta = node["metadata"]
        out += resource_slices(cluster, meta["name"], pool_class[meta["labels"][POOL]])
    return out


def devices_total(fleet: FleetInventory, cluster: ClusterInventory) -> dict[str, int]:
    """pool -> DRA devices across its nodes (what ``lab status`` and tests compare against)."""
    return {p.name: p.node_count * sum(int(d.get("count", 1)) for d in _dra_devices(fleet.classes[p.class_name]))
            for p in cluster.pools}


def by_kind(objects: Sequence[Mapping[str, Any]], kind: str) -> list[Mapping[str, Any]]:
    return [o for o in objects if o.get("kind") == kind]
