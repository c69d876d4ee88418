"""InferenceClusters as a simulated fleet publishes them, cloned to any size, for the gRPC benchmarks.

Issue 35 measures compose-model-deployment with clusters "whose statuses come
from a simulated fleet": every field the real function writes (the stack,
five conditions with their messages, pools, allocations, gateway, cache),
about 2.75 kB per cluster on the wire, twice what a hand-written status
holds. Simulating 1,000 or 10,000 clusters for every benchmark run would
cost minutes, so ``modelplane simulate`` runs once on a generated fleet of
``SEED_CLUSTERS`` (``fleetgen``: 4 pools per cluster, one 10-replica
ModelDeployment per 5 clusters, 2 replicas per cluster on average) and its
clusters are cloned: clone ``i`` is seed cluster ``i % SEED_CLUSTERS``
under its own name (in every field that carries it), uid and gateway
address, its allocations renamed to the deployments of its block of
clones, so a fleet of n clusters carries n / 5 deployments as the
simulated one does. Every clone is labelled ``tier: prod`` (the benchmark
deployment's cluster selector).
"""
from __future__ import annotations

import functools
import json
import re
import tempfile
from pathlib import Path

from tests.bench import fleetgen

SEED_CLUSTERS = 25
_SEED_DEPLOYMENTS = SEED_CLUSTERS // fleetgen.CLUSTERS_PER_DEPLOYMENT
_NAME = re.compile(r"\bc000(\d\d)\b")
_DEPLOYMENT = re.compile(r"\bmodel-(\d{4})\b")


@functools.cache
def simulated() -> tuple[tuple[str, ...], tuple[dict, ...]]:
    """(each seed cluster as JSON, the InferenceClasses) after simulating the seed fleet to its fixed point."""
    from modelplane.render import FunctionPool
    from modelplane.simulate.loop import simulate

    with tempfile.TemporaryDirectory() as tmp:
        directory = fleetgen.write(Path(tmp) / "fleet", SEED_CLUSTERS)
        pool = FunctionPool()
        try:
            world, outcome, _ = simulate(directory, pool=pool, max_rounds=100)
        finally:
            pool.close()
    assert outcome.converged, "the seed fleet did not reach a fixed point"
    objs = [x.obj for x in world.xrs.values()]
    clusters = sorted((o for o in objs if o.get("kind") == "InferenceCluster"), key=lambda o: o["metadata"]["name"])
    classes = tuple(o for o in objs if o.get("kind") == "InferenceClass")
    assert len(clusters) == SEED_CLUSTERS and all(c.get("status", {}).get("pools") for c in clusters)
    return tuple(json.dumps(c) for c in clusters), classes


def _address(i: int) -> str:
    return f"198.{18 + i // 65536}.{i // 256 % 256}.{i % 256}"


def clone(i: int) -> dict:
    """Cluster ``i`` of a fleet cloned from the simulated seed fleet."""
    seeds, _ = simulated()
    block = i // SEED_CLUSTERS
    text = _NAME.sub(f"c{i:05d}", seeds[i % SEED_CLUSTERS])
    text = _DEPLOYMENT.sub(lambda m: f"model-{block * _SEED_DEPLOYMENTS + int(m.group(1)):04d}", text)
    obj = json.loads(text)
    obj["metadata"]["uid"] = f"00000000-0000-4000-8000-{i:012d}"
    obj["metadata"].setdefault("labels", {})["tier"] = "prod"
    status = obj["status"]
    old = status["gateway"]["address"]
    status["gateway"]["address"] = _address(i)
    for cond in status.get("conditions", []):
        if "message" in cond:
            cond["message"] = cond["message"].replace(old, _address(i))
    return obj


def clusters(n: int) -> list[dict]:
    return [clone(i) for i in range(n)]


def classes() -> list[dict]:
    return [dict(c) for c in simulated()[1]]
