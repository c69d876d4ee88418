"""Placements as the dicts the ModelReplica spec carries (docs/contracts.md).

``placement_dicts`` is ``spec.placement`` (read back by
compose-inference-cluster into ``status.pools[].allocations[].pods``);
``device_dicts`` is a member's resolved ``devices``. Keys are sorted and
values plain, so the output is byte-for-byte stable.
"""

from __future__ import annotations

from .types import DRA, MemberPlacement, Placement, PodGroup


def pod_group_dict(group: PodGroup) -> dict:
    return {"count": group.count, "devices": dict(sorted(group.devices.items())), "gang": group.gang}


def placement_dicts(placement: Placement) -> list[dict]:
    """``spec.placement``: [{pool, pods: [{count, devices, gang}]}], by pool."""
    return [{"pool": p.pool, "pods": [pod_group_dict(g) for g in p.pods]} for p in placement.pods]


def device_dicts(member: MemberPlacement) -> list[dict]:
    """A member's resolved device requests, as ``spec.engines[].members[].devices``."""
    out = []
    for d in member.devices:
        item: dict = {"name": d.request.name, "count": d.count, "claim": d.claim}
        if d.claim == DRA and d.device_class_name:
            item["deviceClassName"] = d.device_class_name
        item["selectors"] = [{"cel": s} for s in d.request.selectors]
        out.append(item)
    return out


def member_dicts(placement: Placement) -> list[dict]:
    """``status.placements[].members``: [{engine, role, pool}]."""
    return [{"engine": m.engine, "role": m.role, "pool": m.pool} for m in placement.members]
