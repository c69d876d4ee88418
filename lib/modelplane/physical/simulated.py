"""A physical model of every workload cluster: what really runs where.

Each InferenceCluster is a ``WorkloadCluster``: its hardware (``hardware``), the
workloads and ResourceClaimTemplates the control plane applied to it (the
manifests of provider-kubernetes Objects naming its provider config), and
their pods, bound by ``kubesched`` and managed by ``controllers``.

``sync`` brings one cluster up to date — new hardware (a class edit, a pool
resized or not up yet), the current set of remote manifests — and settles it:
controllers and the scheduler take turns until nothing moves. Pods keep their
nodes across syncs (kube-scheduler never moves a bound pod); a pod whose node
or devices vanished is deleted, and its controller makes a new one that has to
bind again. Deleting a workload releases its devices at once.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.physical import controllers, kubelet, kubesched
from modelplane.physical.controllers import Workload
from modelplane.physical.hardware import Hardware
from modelplane.physical.interface import PendingPod, PoolUse, RemoteKey

CLAIM_TEMPLATE = "ResourceClaimTemplate"
MAX_TURNS = 64


@dataclass
class WorkloadCluster:
    """One simulated cluster: a ``physical.interface.ClusterView``."""

    # Statuses here follow from the manifests and the clock alone: the loop may reuse them.
    holds_objects = False

    name: str
    hardware: Hardware = field(default_factory=Hardware)
    hardware_key: str = ""
    workloads: dict[RemoteKey, Workload] = field(default_factory=dict)
    templates: dict[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    secrets: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)   # (ns, name) -> data keys

    def pods(self) -> list[kubesched.Pod]:
        return [p for w in self.workloads.values() for p in w.pods]

    def set_hardware(self, hardware: Hardware, key: str) -> None:
        if key == self.hardware_key:
            return
        self.hardware, self.hardware_key = hardware, key
        devices = {n.name: {d.name for d in n.devices} for n in hardware.nodes}
        for w in self.workloads.values():
            # A pod whose node is gone, or that holds a device no longer published, is lost.
            w.pods = [p for p in w.pods
                      if p.done or not p.bound or (p.node in devices and set(p.devices) <= devices[p.node])]

    def apply(self, manifests: Mapping[RemoteKey, Mapping[str, Any]], seq: controllers.Seq) -> None:
        """Make the cluster hold exactly ``manifests`` (workloads and claim templates)."""
        self.templates = {(ns, name): m for (kind, ns, name), m in manifests.items() if kind == CLAIM_TEMPLATE}
        self.secrets = kubelet.secrets_of(manifests)
        wanted = {k: m for k, m in manifests.items() if k[0] in controllers.KINDS}
        for key in [k for k in self.workloads if k not in wanted]:
            del self.workloads[key]
        for key, manifest in sorted(wanted.items(), key=lambda kv: kv[0]):
            w = self.workloads.get(key)
            if w is None:
                self.workloads[key] = Workload(key[0], key[1], key[2], dict(manifest), seq())
            else:
                w.update(dict(manifest))

    def settle(self, seq: controllers.Seq, now: str) -> None:
        for _ in range(MAX_TURNS):
            moved = False
            for w in sorted(self.workloads.values(), key=lambda w: w.seq):
                moved |= w.reconcile(seq, now)
            moved |= kubesched.schedule(self.pods(), self.hardware, self.templates)
            moved |= self._start()
            if not moved:
                return

    def _start(self) -> bool:
        """The kubelet starts each bound pod whose Secrets its cluster holds; True when one started.
        A started pod stays started (the kubelet resolved its Secrets once, at start)."""
        moved = False
        for p in self.pods():
            if p.bound and not p.started:
                p.waiting = kubelet.waiting(p.namespace, p.spec, self.secrets)
                if not p.waiting:
                    p.started = moved = True
        return moved

    def status(self, key: RemoteKey, now: str) -> dict | None:
        w = self.workloads.get(key)
        return w.status(now) if w is not None else None

    def generation(self, key: RemoteKey) -> int:
        w = self.workloads.get(key)
        return w.generation if w is not None else 1

    def observed(self, manifest: Mapping[str, Any]) -> dict | None:
        """No object is held: the loop derives what provider-kubernetes observes from ``status``."""
        return None

    def judge(self, obj: Mapping[str, Any], status: dict) -> dict:
        """Nothing refuses an apply here: the status stands."""
        return status

    def capacity(self) -> list[PoolUse]:
        """Devices used / total per pool, pools in spec order."""
        used_by_node: dict[str, int] = {}
        for p in self.pods():
            if p.bound and not p.done:
                used_by_node[p.node] = used_by_node.get(p.node, 0) + len(p.devices)  # type: ignore[index]
        out: dict[str, list[int]] = {}
        for node in self.hardware.nodes:
            row = out.setdefault(node.pool, [0, 0])
            row[0] += used_by_node.get(node.name, 0)
            row[1] += len(node.devices)
        return [PoolUse(pool, u, t) for pool, (u, t) in out.items()]

    def pending(self) -> list[PendingPod]:
        out = []
        for (kind, ns, name), w in sorted(self.workloads.items(), key=lambda kv: kv[1].seq):
            for p in sorted(w.pods, key=lambda p: p.seq):
                if not p.bound and not p.done:
                    out.append(PendingPod(f"{kind}/{ns}/{name}", p.name, p.reason or "not tried yet"))
                elif p.waiting and not p.done:
                    out.append(PendingPod(f"{kind}/{ns}/{name}", p.name, f"on {p.node}: {p.waiting}"))
        return out


@dataclass
class Physical:
    """Every workload cluster, and one creation counter across them (pods bind in creation order):
    a ``physical.interface.PhysicalFleet``."""

    clusters: dict[str, WorkloadCluster] = field(default_factory=dict)
    counter: int = 0

    def seq(self) -> int:
        self.counter += 1
        return self.counter

    def cluster(self, name: str) -> WorkloadCluster:
        if name not in self.clusters:
            self.clusters[name] = WorkloadCluster(name)
        return self.clusters[name]

    def sync(self, name: str, hardware: Hardware, hardware_key: str,
             manifests: Mapping[RemoteKey, Mapping[str, Any]], now: str) -> WorkloadCluster:
        c = self.cluster(name)
        c.set_hardware(hardware, hardware_key)
        c.apply(manifests, self.seq)
        c.settle(self.seq, now)
        return c

    def forget(self, name: str) -> None:
        """The cluster is gone (its InferenceCluster deleted): nothing runs there any more."""
        self.clusters.pop(name, None)
