"""status.pools: each pool's class, its usable nodes and what is placed on it.

Allocations are every ModelReplica's ``spec.placement`` entry for the pool,
from all namespaces, oldest admission first (then by replica), so the
scheduler can replay admission in the same order on every call.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

Allocations = dict[str, list[dict[str, Any]]]


def allocations(replicas: Iterable[Mapping[str, Any]]) -> Allocations:
    """pool name -> allocations, each sorted by (order, replica)."""
    out: Allocations = {}
    for r in replicas:
        md = r.get("metadata") or {}
        spec = r.get("spec") or {}
        ns = md.get("namespace", "")
        for entry in (e for e in spec.get("placement") or [] if isinstance(e, Mapping)):
            out.setdefault(entry.get("pool", ""), []).append({
                "replica": f"{ns}/{md.get('name', '')}",
                "deployment": f"{ns}/{spec.get('deployment', '')}",
                "order": str(spec.get("order", "")),
                "pods": [_pods(p) for p in entry.get("pods") or [] if isinstance(p, Mapping)],
            })
    for items in out.values():
        items.sort(key=lambda a: (a["order"], a["replica"]))
    return out


def _whole(value: Any) -> int:
    """A count as the ModelReplica schema types it; 0 for what only corrupted bytes carry."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _pods(group: Mapping[str, Any]) -> dict[str, Any]:
    devices = group.get("devices") if isinstance(group.get("devices"), Mapping) else {}
    return {"count": _whole(group.get("count", 0)),
            "devices": {str(k): _whole(v) for k, v in sorted(devices.items())},
            "gang": bool(group.get("gang", False))}


def previous_allocations(xr_status: Mapping[str, Any]) -> Allocations:
    """The allocations already published, kept while the replicas are not fetched yet."""
    return {p.get("name", ""): list(p.get("allocations") or []) for p in xr_status.get("pools") or []}


def status(pools: Iterable[tuple[str, str, int]], allocs: Allocations) -> list[dict[str, Any]]:
    """(name, class, nodes) rows in spec order -> status.pools."""
    return [{"name": name, "class": cls, "nodes": nodes, "allocations": allocs.get(name, [])}
            for name, cls, nodes in pools]
