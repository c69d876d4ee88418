"""The one-line diagnoses: a replica nothing could take, one kept on a mismatch.

Like the Kubernetes scheduler's FitError, but per cluster, since a fleet is
tens to thousands of clusters and a person fixes one cluster at a time:

    0/3 clusters fit: prod-a: no pool has a device matching request "gpu"
    (l4: device gpu: selector 1 false); prod-b: NoSchedule taint
    maintenance=true; prod-c: pool h100 has room for 0 of 1 pods (8 gpu each)

Clusters are sorted by name; after ``limit`` of them the rest are counted
by the filter that rejected them ("and 990 more: 600 Capacity, 390
DeviceMatch"), most frequent first, so the line stays bounded.

A replica kept although its pool's class no longer satisfies a selector
(``keep.py``) is reported with everything needed to fix it, inside the
``Scheduled`` message's "replica 0 held on east (...)":

    pool h100 of class h100-80gb no longer matches request "gpu" (device
    gpu: selector 1 false: device.capacity[...].memory >= 80Gi); it keeps
    running on the devices it holds, new replicas are not placed there:
    update the selector or the class
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

LIMIT = 10


def fit_error(rejected: Mapping[str, tuple[str, str]], total: int, limit: int = LIMIT) -> str:
    """``rejected`` maps a cluster to (filter NAME, reason)."""
    if total == 0:
        return "0/0 clusters fit: no InferenceClusters"
    names = sorted(rejected)
    shown = "; ".join(f"{n}: {rejected[n][1]}" for n in names[:limit])
    line = f"0/{total} clusters fit: {shown}"
    rest = names[limit:]
    if rest:
        counts = Counter(rejected[n][0] for n in rest)
        classes = ", ".join(f"{k} {f}" for f, k in sorted(counts.items(), key=lambda fk: (-fk[1], fk[0])))
        line += f"; and {len(rest)} more: {classes}"
    return line


def indexes(items: list[int]) -> str:
    """"replica 2" or "replicas 1, 3"."""
    return f"replica {items[0]}" if len(items) == 1 else "replicas " + ", ".join(map(str, items))


def mismatch(pool: str, class_name: str, request: str, selector: str, detail: str) -> str:
    """Why a running replica is held on a pool whose class no longer satisfies
    ``selector`` (``detail`` as ``Misfit`` spells it), and the fix."""
    expr = " ".join(selector.split())
    return (f'pool {pool} of class {class_name} no longer matches request "{request}" ({detail}: {expr}); '
            "it keeps running on the devices it holds, new replicas are not placed there: "
            "update the selector or the class")
