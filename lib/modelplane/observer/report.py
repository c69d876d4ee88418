"""A replica's engine report as a ConfigMap in the replica's own namespace (pure).

Pods are grouped by what every Modelplane engine pod carries: namespace,
``modelplane.ai/deployment`` and ``modelplane.ai/replica``. The ConfigMap
always goes to the namespace of the pods it describes, never another, so a
team reads only its own engines.

Its lifetime follows the pods without a delete right: every pod of the replica
is an owner (no ``blockOwnerDeletion``), and the garbage collector removes the
ConfigMap once the last owner is gone (the replica left the cluster). The
observer refreshes the owners as pods come and go.

``Report.load`` is the seam for engine load (``engine_status.EngineLoad``: queue
depth, KV-cache use read from each engine's ``/metrics``): autoscaling fills it
and it is written under ``engine_status.LOAD_KEY``; None (today) writes nothing there.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from modelplane import labels as L
from modelplane.workloads.engine_status import (
    ENGINES_KEY,
    LOAD_KEY,
    MAX_ENGINES,
    OMITTED_KEY,
    EngineLoad,
    EngineState,
    ordered,
    report_name,
)

from .summary import engine_states

MANAGED_BY = "engine-observer"
# Pods Modelplane composed carry all four (lib/workloads/replica.py): a selector on their
# existence reads engine pods only (not endpoint pickers, not anyone else's pods).
POD_SELECTOR = f"{L.DEPLOYMENT},{L.REPLICA},{L.ENGINE},{L.ROLE}"


@dataclass(frozen=True)
class Owner:
    name: str
    uid: str


@dataclass(frozen=True)
class Report:
    """What the observer knows of one replica on this cluster."""

    namespace: str
    deployment: str
    replica: str
    engines: tuple[EngineState, ...]
    owners: tuple[Owner, ...]
    load: tuple[EngineLoad, ...] | None = None   # the autoscaling seam (see the module docstring)

    @property
    def name(self) -> str:
        return report_name(self.deployment, self.replica)

    def data(self) -> dict[str, str]:
        rows = ordered(self.engines)
        out = {ENGINES_KEY: json.dumps([s.entry() for s in rows[:MAX_ENGINES]], sort_keys=True,
                                       separators=(",", ":"))}
        if len(rows) > MAX_ENGINES:
            out[OMITTED_KEY] = str(len(rows) - MAX_ENGINES)
        if self.load is not None:
            out[LOAD_KEY] = json.dumps([e.entry() for e in self.load], sort_keys=True, separators=(",", ":"))
        return out

    def labels(self) -> dict[str, str]:
        return {L.MANAGED_BY: MANAGED_BY, L.DEPLOYMENT: self.deployment, L.REPLICA: self.replica}

    def owner_references(self) -> list[dict[str, Any]]:
        return [{"apiVersion": "v1", "kind": "Pod", "name": o.name, "uid": o.uid} for o in self.owners]

    def manifest(self) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": self.name, "namespace": self.namespace, "labels": self.labels(),
                             "ownerReferences": self.owner_references()},
                "data": self.data()}


def reports(pods: Iterable[Mapping[str, Any]]) -> list[Report]:
    """One report per (namespace, deployment, replica), sorted; pods without those labels are skipped."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for pod in pods:
        meta = pod.get("metadata") or {}
        lbls = meta.get("labels") or {}
        key = (meta.get("namespace") or "", lbls.get(L.DEPLOYMENT) or "", lbls.get(L.REPLICA) or "")
        if all(key) and not meta.get("deletionTimestamp"):
            groups.setdefault(key, []).append(pod)
    out = []
    for (namespace, deployment, replica), members in sorted(groups.items()):
        members = sorted(members, key=lambda p: p["metadata"].get("name", ""))
        engines = tuple(s for p in members for s in engine_states(p))
        owners = tuple(Owner(p["metadata"]["name"], p["metadata"].get("uid", "")) for p in members
                       if p["metadata"].get("uid"))
        out.append(Report(namespace, deployment, replica, engines, owners))
    return out


def differs(current: Mapping[str, Any], report: Report) -> bool:
    """True when the ConfigMap on the server says something else than ``report`` (data, owners, labels)."""
    meta = current.get("metadata") or {}
    owners = sorted((o.get("name"), o.get("uid")) for o in meta.get("ownerReferences") or []
                    if o.get("kind") == "Pod")
    return (dict(current.get("data") or {}) != report.data()
            or owners != sorted((o.name, o.uid) for o in report.owners)
            or any((meta.get("labels") or {}).get(k) != v for k, v in report.labels().items()))


def updated(current: Mapping[str, Any], report: Report) -> dict[str, Any]:
    """``current`` with the report's data, owners and labels (for a PUT: keeps resourceVersion, other labels)."""
    meta = dict(current.get("metadata") or {})
    others = [o for o in meta.get("ownerReferences") or [] if o.get("kind") != "Pod"]
    meta["ownerReferences"] = others + report.owner_references()
    meta["labels"] = {**(meta.get("labels") or {}), **report.labels()}
    return {**current, "metadata": meta, "data": report.data()}
