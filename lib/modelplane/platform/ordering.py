"""Deletion order of composed cloud resources, as Crossplane Usages.

Crossplane deletes every composed resource at once; clouds refuse some of
those deletions while something still sits on the resource (a VPC with
subnets, a subnet with a NAT gateway or nodes, a resource group with a
virtual network). A Usage ``of`` X ``by`` Y holds X's deletion until Y is
gone, and ``replayDeletion`` re-issues it then, so the tree comes down in
dependency order with no retries against the cloud's API.

The order is read off the resources themselves: whoever names a guarded
resource through a ``...Ref``/``...Refs`` field (a subnet's ``vpcIdRef``, a
node group's ``subnetIdRefs``) is deleted first. A cloud adds the few
orders no reference shows (``Source.deletion_order``). Usages only point
from users to what they use, so they form no cycle and nothing is left
holding the last resource (the VPC, the network, the resource group).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from modelplane.naming import dns_label
from modelplane.platform.common import NAMESPACE

USAGE_API = "protection.crossplane.io/v1beta1"
USAGE_PREFIX = "usage-"   # composition-resource-names of Usages


def usage(of: Mapping[str, Any], by: Mapping[str, Any], lbls: Mapping[str, str], name: str = "") -> dict[str, Any]:
    """A Usage that keeps ``of`` until ``by`` is deleted (both in the XR's namespace)."""
    def ref(o: Mapping[str, Any]) -> dict[str, Any]:
        return {"apiVersion": o["apiVersion"], "kind": o["kind"], "resourceRef": {"name": o["metadata"]["name"]}}

    return {
        "apiVersion": USAGE_API, "kind": "Usage",
        "metadata": {"name": name or dns_label(by["metadata"]["name"], "uses", of["metadata"]["name"]),
                     "namespace": NAMESPACE, "labels": dict(sorted(lbls.items()))},
        "spec": {"of": ref(of), "by": ref(by), "replayDeletion": True},
    }


def referenced_names(value: Any, key: str = "") -> set[str]:
    """metadata.names a manifest refers to through ``*Ref`` / ``*Refs`` fields, at any depth."""
    out: set[str] = set()
    if isinstance(value, Mapping):
        if key.endswith("Ref") and isinstance(value.get("name"), str):
            out.add(value["name"])
        for k, v in value.items():
            out |= referenced_names(v, str(k))
    elif isinstance(value, list):
        for item in value:
            # A ``*Refs`` list holds refs; pass its key on so each item counts as a ref.
            out |= referenced_names(item, key[:-1] if key.endswith("Refs") else "")
    return out


def edges(resources: Mapping[str, Mapping[str, Any]], guarded: Iterable[str],
          extra: Iterable[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """(user key, used key) pairs: every resource that refers to a guarded one, plus ``extra``.

    ``resources`` maps composition-resource-name -> manifest; ``guarded`` are
    the keys whose deletion must wait. Pairs naming a key that is not in
    ``resources`` are left out (a pool not composed yet uses nothing).
    """
    by_name: dict[str, str] = {}
    for k in sorted(guarded):
        if k in resources:
            name = resources[k]["metadata"]["name"]
            if name in by_name:  # a builder bug: refs could not tell the two apart
                raise ValueError(f"guarded resources {by_name[name]} and {k} share the name {name!r}")
            by_name[name] = k
    out = set()
    for user_key, obj in resources.items():
        for name in referenced_names((obj.get("spec") or {}).get("forProvider") or {}):
            used = by_name.get(name)
            if used is not None and used != user_key:
                out.add((user_key, used))
    out |= {(u, g) for u, g in extra if u in resources and g in resources}
    return sorted(out)


def usage_key(user_key: str, used_key: str) -> str:
    """composition-resource-name of the Usage that orders ``user_key`` before ``used_key``."""
    return f"{USAGE_PREFIX}{used_key}-by-{user_key}"
