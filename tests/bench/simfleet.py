"""InferenceClusters as a simulated fleet publishes them, cloned to any size, for the gRPC benchmarks.

Issue 35 measures compose-model-deployment with clusters "whose statuses come
from a simulated fleet": every field the real function writes (the stack,
five conditions with their messages, pools, allocations, gateway, cache),
about 2.75 kB per cluster on the wire, twice what a hand-written status
holds. Simulating 1,000 or 10,000 clusters for every benchmark run would
cost minutes, so ``modelplane simulate`` runs once on a generated fleet of
``SEEDS[shape]`` (``fleetgen``: 4 pools per cluster, one 10-replica
ModelDeployment per 5 clusters, 2 replicas per cluster on average) and its
clusters are cloned: clone ``i`` is seed cluster ``i % SEEDS[shape]``
under its own name (in every field that carries it), uid and gateway
address (the first block keeps the seeds' addresses), its allocations renamed to the deployments of its block of
clones, so a fleet of n clusters carries n / 5 deployments as the
simulated one does. Every clone is labelled ``tier: prod`` (the benchmark
deployment's cluster selector).

The ``shape`` is fleetgen's: "own" simulates 25 clusters of the benchmark's
own fleet, "other" (issue 46) 50 of the other shape (mostly Existing, some
EKS, GKE, AKS and Nebius, deployments in 8 namespaces), so that every
source is among the seeds and its status is cloned.
"""
from __future__ import annotations

import functools
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.bench import fleetgen

SEEDS = {"own": 25, "other": 50}  # shape -> clusters simulated (at most 100: the names are c00000 to c00099)
_NAME = re.compile(r"\bc000(\d\d)\b")
_DEPLOYMENT = re.compile(r"\bmodel-(\d{4})\b")


MEMBER = "model-0000"  # the deployment of the seed fleet whose steady request the benchmarks send


@dataclass(frozen=True)
class Member:
    """One ModelDeployment of the simulated fleet as Crossplane would send it at rest: the XR with
    its status, its children as observed (by composition resource name), its namespace's
    ModelServices, and the simulated time."""

    xr: dict
    observed: dict[str, dict]
    services: tuple[dict, ...]
    now: str


@dataclass(frozen=True)
class Seed:
    clusters: tuple[str, ...]   # each seed cluster as JSON
    classes: tuple[dict, ...]
    member: Member


def simulated(shape: str = "own") -> tuple[tuple[str, ...], tuple[dict, ...]]:
    """(each seed cluster as JSON, the InferenceClasses) after simulating the seed fleet to its fixed point."""
    seed = _seed(shape)
    return seed.clusters, seed.classes


def member(shape: str = "own") -> Member:
    """``MEMBER`` as the simulated seed fleet left it (its replicas are in the clusters' allocations)."""
    return _seed(shape).member


def _member(world) -> Member:
    from modelplane.render.finish import ANNOTATION_RESOURCE_NAME

    (key, state), = ((k, s) for k, s in world.xrs.items() if k[0] == "ModelDeployment" and k[2] == MEMBER)
    observed = {}
    for name, obj in state.composed.items():
        live = world.xrs[(obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])].obj
        meta = live["metadata"]
        observed[name] = {**live, "metadata": {**meta, "annotations": {
            **(meta.get("annotations") or {}), ANNOTATION_RESOURCE_NAME: name}}}
    services = tuple(s.obj for k, s in sorted(world.xrs.items()) if k[0] == "ModelService" and k[1] == key[1])
    return Member(xr=state.obj, observed=observed, services=services, now=world.now())


@functools.cache
def _seed(shape: str) -> Seed:
    from modelplane.render import FunctionPool
    from modelplane.simulate.loop import simulate

    with tempfile.TemporaryDirectory() as tmp:
        directory = fleetgen.write(Path(tmp) / "fleet", SEEDS[shape], shape=fleetgen.SHAPES[shape])
        pool = FunctionPool()
        try:
            world, outcome, _ = simulate(directory, pool=pool, max_rounds=100)
        finally:
            pool.close()
    assert outcome.converged, "the seed fleet did not reach a fixed point"
    objs = [x.obj for x in world.xrs.values()]
    clusters = sorted((o for o in objs if o.get("kind") == "InferenceCluster"), key=lambda o: o["metadata"]["name"])
    classes = tuple(o for o in objs if o.get("kind") == "InferenceClass")
    assert len(clusters) == SEEDS[shape] and all(c.get("status", {}).get("pools") for c in clusters)
    return Seed(tuple(json.dumps(c) for c in clusters), classes, _member(world))


def _address(i: int) -> str:
    return f"198.{18 + i // 65536}.{i // 256 % 256}.{i % 256}"


def clone(i: int, shape: str = "own") -> dict:
    """Cluster ``i`` of a fleet cloned from the simulated seed fleet of ``shape``."""
    seeds, _ = simulated(shape)
    block, per_block = i // len(seeds), len(seeds) // fleetgen.CLUSTERS_PER_DEPLOYMENT
    text = _NAME.sub(f"c{i:05d}", seeds[i % len(seeds)])
    text = _DEPLOYMENT.sub(lambda m: f"model-{block * per_block + int(m.group(1)):04d}", text)
    obj = json.loads(text)
    obj["metadata"]["uid"] = f"00000000-0000-4000-8000-{i:012d}"
    obj["metadata"].setdefault("labels", {})["tier"] = "prod"
    if block == 0:
        return obj  # the seed cluster itself, as its deployments' children (``member``) name it
    status = obj["status"]
    old = status["gateway"]["address"]
    status["gateway"]["address"] = _address(i)
    for cond in status.get("conditions", []):
        if "message" in cond:
            cond["message"] = cond["message"].replace(old, _address(i))
    return obj


def clusters(n: int, shape: str = "own") -> list[dict]:
    return [clone(i, shape) for i in range(n)]


def classes(shape: str = "own") -> list[dict]:
    return [dict(c) for c in simulated(shape)[1]]
