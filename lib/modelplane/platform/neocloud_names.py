"""Names Nebius and Vultr resources carry, from Modelplane's cluster and pool names.

Nebius: every resource has a ``name``, unique per kind under its parent. A
cluster name is 1-63 letters, digits, '-' and '_' starting and ending with a
letter or digit (nebius/api mk8s/v1/cluster.proto:16-30); a node group name
the same plus '.' (node_group.proto:21-34); network and subnet names up to
1024 bytes (common/v1/metadata.proto:22-25). The cluster takes the
InferenceCluster name and each node group its pool's name (node groups are
unique per cluster), cut to 63 characters with a hash of the whole name when
longer (``naming.dns_label``), so the same names always map the same way.

Vultr: the cluster and each node pool carry a ``label``. The API states no
limit (terraform-provider-vultr vultr/vke.go validates none), but a pool's
label prefixes its nodes' names, so it is kept a DNS label of at most 63.

The system node group / default pool is named ``system``, so a Modelplane
pool of that name is refused (it would take the same name), as are two pools
whose cut names meet.
"""
from __future__ import annotations

from collections.abc import Callable

from modelplane.errors import InputError
from modelplane.naming import dns_label
from modelplane.platform.clouds import Target

NAME_MAX = 63
SYSTEM_POOL = "system"


def nebius_name(cluster: str, *parts: str) -> str:
    """The ``name`` of a Nebius resource of cluster ``cluster`` (``parts``: what it is)."""
    return dns_label(cluster, *parts, max_length=NAME_MAX)


def node_group_name(pool: str) -> str:
    """The Nebius node group ``name`` of pool ``pool`` (its parent is the cluster)."""
    return dns_label(pool, max_length=NAME_MAX)


def vultr_label(name: str) -> str:
    """The VKE ``label`` of a cluster or node pool."""
    return dns_label(name, max_length=NAME_MAX)


def _check_unique(t: Target, cloud: str, name_of: Callable[[str], str]) -> None:
    seen = {name_of(SYSTEM_POOL): f"the {cloud} system pool"}
    for i, p in enumerate(t.node_pools):
        got = name_of(p["name"])
        if got in seen:
            raise InputError(f"spec.nodePools[{i}].name",
                             f"pool {p['name']!r} and {seen[got]} both map to the {cloud} name {got!r}; rename the pool")
        seen[got] = f"pool {p['name']!r} (spec.nodePools[{i}])"


def check_nebius(t: Target) -> None:
    """Refuse pools whose node group names would meet (or meet the system node group's)."""
    _check_unique(t, "Nebius", node_group_name)


def check_vultr(t: Target) -> None:
    """Refuse pools whose VKE labels would meet (or meet the default pool's)."""
    _check_unique(t, "Vultr", vultr_label)
