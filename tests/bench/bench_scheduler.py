"""The fleet scheduler at 10, 100 and 1,000 clusters (target: <= 50 ms at 1,000).

The fleet: each cluster has 4 pools drawn from six realistic classes (L4 x1
24Gi; A100 x8 80Gi; H100 x8 80Gi with a Synthetic InfiniBand NIC; H200 x8
141Gi; MI300X x8 192Gi on gpu.amd.com; L40S x4 48Gi), 2-8 nodes each, and 2
replicas of other deployments already allocated. One deployment of 10
replicas asks for one GPU with at least 40Gi from gpu.nvidia.com, through
the real CEL matcher.

"cold" clears the CEL compile cache and match memo before each run (a fresh
function process); "warm" reuses them (every later reconcile). Times are
medians of wall and CPU time, plus the fastest warm run's CPU time (a busy
shared machine inflates wall time); "CEL evals" counts engine evaluations in one cold run; "peak RSS"
is the process high-water mark after the size's runs.
"""

from __future__ import annotations

import random
import resource
import statistics
import time

from modelplane import cel
from modelplane.cel import Device
from modelplane.scheduler import ClassDevice, Deployment, Fleet, InferenceClass, schedule

from tests.scheduler.builders import _alloc, _cluster, _engine, _fleet, _pool, _standalone

SIZES = (10, 100, 1000)
COLD_RUNS = 5
WARM_RUNS = 9


def _gpu(driver: str, arch: str, memory: str) -> dict:
    return {
        "name": "gpu",
        "driver": driver,
        "attributes": {"architecture": {"string": arch}},
        "capacity": {"memory": {"value": memory}},
    }


_NIC = {"name": "nic", "driver": "nic.nvidia.com", "attributes": {"linkType": {"string": "infiniband"}}}

# name -> (device dict, per node, claim)
_CATALOGUE = {
    "l4": [(_gpu("gpu.nvidia.com", "Ada", "24Gi"), 1, "DRA")],
    "a100": [(_gpu("gpu.nvidia.com", "Ampere", "80Gi"), 8, "DRA")],
    "h100": [(_gpu("gpu.nvidia.com", "Hopper", "80Gi"), 8, "DRA"), (_NIC, 1, "Synthetic")],
    "h200": [(_gpu("gpu.nvidia.com", "Hopper", "141Gi"), 8, "DRA")],
    "mi300x": [(_gpu("gpu.amd.com", "CDNA3", "192Gi"), 8, "DRA")],
    "l40s": [(_gpu("gpu.nvidia.com", "Ada", "48Gi"), 4, "DRA")],
}


def classes() -> dict[str, InferenceClass]:
    return {
        name: InferenceClass(
            name,
            tuple(
                ClassDevice(d["name"], Device.from_class_device(d), n, claim, d["driver"] if claim == "DRA" else None)
                for d, n, claim in devices
            ),
        )
        for name, devices in _CATALOGUE.items()
    }


def fleet(n: int, seed: int = 7) -> Fleet:
    rnd = random.Random(seed)
    klasses = classes()
    clusters = []
    for i in range(n):
        picked = rnd.sample(sorted(klasses), 4)
        pools = []
        for k, name in enumerate(picked):
            per_node = next(d.count for d in klasses[name].devices if d.claim == "DRA")
            allocs = ()
            if k < 2:  # two replicas of other deployments per cluster
                allocs = (
                    _alloc(
                        f"team-{i}/other-{k}-c{i}",
                        f"2025-0{k + 1}-01T00:00:00Z/team-{i}/other/{k:05d}",
                        f"team-{i}/other",
                        gpus=per_node,
                    ),
                )
            pools.append(_pool(f"{name}-pool", name, rnd.randint(2, 8), allocs))
        clusters.append(_cluster(f"cluster-{i:04d}", pools, labels={"region": rnd.choice(["us", "eu"]), "tier": "prod"}))
    return _fleet(*clusters, classes=klasses)


def deployment() -> Deployment:
    one_gpu = _standalone(
        1,
        'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0',
        'device.driver == "gpu.nvidia.com"',
    )
    return Deployment(
        namespace="ml-team",
        name="qwen3-8b",
        created="2026-01-01T00:00:00Z",
        replicas=10,
        cluster_selector={"tier": "prod"},
        engines=(_engine("qwen3-8b", members=[one_gpu]),),
    )


def _clear_cel() -> None:
    # A fresh function process: no compiled programs, no match memo.
    from modelplane.cel import adapter, device

    adapter._cache.clear()
    device._memo.clear()


def _time(d: Deployment, f: Fleet, runs: int, cold: bool) -> tuple[float, float, float, int, int]:
    """(median wall ms, fastest CPU ms, median CPU ms, CEL evaluations,
    compiles). CPU time is reported too because a shared machine inflates
    wall time; the median includes the odd full garbage collection."""
    times, cpu = [], []
    evals = compiles = 0
    for _ in range(runs):
        if cold:
            _clear_cel()
        cel.reset_stats()
        start, start_cpu = time.perf_counter(), time.process_time()
        got = schedule(d, f)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        assert len(got.placements) == d.replicas, got.message
        s = cel.stats()
        evals, compiles = s["evaluations"], s["compiles"]
    return statistics.median(times), min(cpu), statistics.median(cpu), evals, compiles


def run() -> list[dict]:
    rows = []
    d = deployment()
    for n in SIZES:
        f = fleet(n)
        cold, _, cold_cpu, cold_evals, compiles = _time(d, f, COLD_RUNS, cold=True)
        warm, warm_cpu, warm_cpu_median, warm_evals, _ = _time(d, f, WARM_RUNS, cold=False)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        rows.append(
            {
                "clusters": n,
                "pools": 4 * n,
                "replicas": d.replicas,
                "cold ms": cold,
                "cold cpu ms": cold_cpu,
                "warm ms": warm,
                "warm cpu ms": warm_cpu_median,
                "warm cpu ms (min)": warm_cpu,
                "warm us/cluster": warm * 1000 / n,
                "CEL compiles (cold)": compiles,
                "CEL evals (cold)": cold_evals,
                "CEL evals (warm)": warm_evals,
                "peak RSS MiB": rss,
            }
        )
    return rows
