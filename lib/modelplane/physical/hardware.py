"""The hardware of one simulated workload cluster: nodes, their DRA devices, DeviceClasses.

Built with the lab's builders (``modelplane.physical.inventory``), so ``simulate`` and
``modelplane lab`` put the same Nodes (labels, taints, allocatable room) and
ResourceSlices under the same pods; here the manifests are read back into
plain values the simulated kube-scheduler works on:

- a pool has ``nodeCount`` nodes once its node pool is up (a GKE NodePool or
  EKS NodeGroup composed by the InferenceCluster reports Ready; an Existing
  cluster's pools are there from the start), none before;
- each node carries the ``claim: DRA`` devices of the pool's InferenceClass,
  as its DRA driver would publish them (``gpu-0`` .. ``gpu-7``), each readable
  by CEL (``modelplane.cel.Device``); a pool whose class does not exist (or
  does not pass ``check_class``) has nodes without devices;
- DeviceClasses select by driver, one per ``deviceClassName`` the pools'
  classes name.

Device values are shared between identical devices (a fleet of a thousand
clusters has a handful of distinct GPUs), so building stays cheap and the CEL
match memo, keyed by content, is hit across clusters.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane import cel
from modelplane.errors import InputError
from modelplane.labels import POOL
from modelplane.physical import inventory
from modelplane.platform.inference_class import check_class
from modelplane.quantity import Quantity


@dataclass(frozen=True)
class SliceDevice:
    """One device of a ResourceSlice: its name on the node and what CEL sees."""

    name: str
    driver: str
    device: cel.Device


@dataclass(frozen=True)
class Node:
    name: str
    pool: str
    labels: Mapping[str, str]
    taints: tuple[Mapping[str, str], ...]
    allocatable: Mapping[str, Quantity]       # cpu, memory, pods, ...
    devices: tuple[SliceDevice, ...] = ()


@dataclass(frozen=True)
class Hardware:
    """Everything a cluster has before any workload: nodes (pool order) and DeviceClasses."""

    nodes: tuple[Node, ...] = ()
    device_classes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # name -> CEL selectors

    def pool_devices(self) -> dict[str, int]:
        """pool -> DRA devices across its nodes."""
        out: dict[str, int] = {}
        for node in self.nodes:
            out[node.pool] = out.get(node.pool, 0) + len(node.devices)
        return out


_devices: dict[str, cel.Device] = {}


def _device(driver: str, dev: Mapping[str, Any]) -> cel.Device:
    """The CEL view of a slice device, shared by content (its name is not part of it)."""
    body = {"driver": driver, "attributes": dev.get("attributes") or {}, "capacity": dev.get("capacity") or {}}
    key = json.dumps(body, sort_keys=True)
    found = _devices.get(key)
    if found is None:
        found = _devices[key] = cel.Device.from_class_device({"name": "device", **body})
    return found


def fingerprint(cluster: Mapping[str, Any], classes: Mapping[str, Mapping[str, Any]], ready_pools: set[str] | None) -> str:
    """What the hardware depends on; equal fingerprints build equal hardware."""
    spec = cluster.get("spec") or {}
    used = sorted({p.get("class", "") for p in spec.get("nodePools") or []})
    return json.dumps([spec, {n: classes.get(n) for n in used}, sorted(ready_pools) if ready_pools is not None else None],
                      sort_keys=True)


# A pool whose class is unknown or invalid still has its nodes: they publish no DRA device.
_NO_DEVICES = {"devices": [{"name": "none", "driver": "none.modelplane.ai", "claim": "Synthetic"}]}


def build(cluster: Mapping[str, Any], classes: Mapping[str, Mapping[str, Any]],
          ready_pools: set[str] | None = None) -> Hardware:
    """The hardware of InferenceCluster ``cluster``.

    ``classes`` maps InferenceClass name -> spec; ``ready_pools`` names the
    pools whose node pool is up (None: every pool, as on an Existing cluster).
    """
    spec = cluster.get("spec") or {}
    pools = [{**p, "nodeCount": int(p.get("nodeCount", 0)) if ready_pools is None or p.get("name") in ready_pools else 0}
             for p in spec.get("nodePools") or []]
    if not pools:
        return Hardware()
    used = {p.get("class", ""): _valid(classes.get(p.get("class", ""))) for p in pools}
    docs = [{**cluster, "spec": {**spec, "nodePools": pools}}]
    docs += [{"apiVersion": inventory.API, "kind": "InferenceClass", "metadata": {"name": n}, "spec": s}
             for n, s in used.items()]
    view = inventory.read_fleet(docs)
    the = view.clusters[0]
    by_pool = {p.name: view.classes[p.class_name] for p in the.pools}
    nodes = []
    for manifest in inventory.nodes(the):
        meta = manifest["metadata"]
        pool = meta["labels"][POOL]
        devices = []
        for s in inventory.resource_slices(the, meta["name"], by_pool[pool]):
            driver = s["spec"]["driver"]
            devices += [SliceDevice(d["name"], driver, _device(driver, d)) for d in s["spec"]["devices"]]
        nodes.append(Node(
            name=meta["name"], pool=pool, labels=dict(meta["labels"]),
            taints=tuple(dict(t) for t in (manifest.get("spec") or {}).get("taints") or ()),
            allocatable={k: Quantity(v) for k, v in manifest["status"]["allocatable"].items()},
            devices=tuple(devices),
        ))
    dcs = {dc["metadata"]["name"]: tuple(s["cel"]["expression"] for s in dc["spec"]["selectors"])
           for dc in inventory.device_classes(view, the)}
    return Hardware(nodes=tuple(nodes), device_classes=dcs)


def _valid(spec: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if spec is None:
        return _NO_DEVICES
    try:
        check_class(spec)
    except InputError:
        return _NO_DEVICES  # a driver would not publish what the class cannot describe
    return spec
