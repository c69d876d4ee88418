"""``modelplane simulate`` on generated fleets of 25, 50, 100, 1,000 and 5,000 clusters, and 1,000 of
another shape (targets, on 2 cores: 1,000 clusters <= 60 s whatever the shape; 5,000 clusters <= 300 s
and <= 2 GiB: issues 35 and 46).

The fleet (``fleetgen``): N clusters x 4 pools, one ModelDeployment of 10
replicas (and its ModelService) per 5 clusters. The "own" shape is all
Existing, one namespace; the "other" shape (issue 46) mostly Existing with
their kubeconfig Secrets, the rest EKS, GKE, AKS and Nebius from classes of
their own, 8 namespaces. Each run is in its own process, so "peak RSS" is that size's high-water mark; "seconds" is wall time
from loading the directory to the fixed point, function start-up included.
"main CPU" and "functions CPU" split the work between the simulator and the
function servers: on a busy shared machine wall time grows, CPU time does not.

``MODELPLANE_BENCH_SIMULATE_SIZES=25,other:1000`` picks other runs (a size of the own shape, or
shape:size). 5,000 clusters is the long one: every deployment reads the whole fleet (a 14 MB request), so it costs about 4 to 5 minutes on a
quiet 2-core machine (measured: 252 s, 65,318 renders in 26 rounds, main CPU 181 s, functions
CPU 209 s; peak RSS 1,975 MiB; it was 378 s and 1,988 MiB, 640 s and 2.4 GiB, and before that
1,297 s and 3 GiB).
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = (("own", 25), ("own", 50), ("own", 100), ("own", 1000), ("own", 5000), ("other", 1000))
TARGETS = {1000: "<= 60 s", 5000: "<= 300 s, <= 2 GiB"}


def one(clusters: int, shape: str = "own") -> dict:
    """Simulate one generated fleet in this process; the row of the table."""
    from modelplane.render import FunctionPool
    from modelplane.simulate.loop import simulate

    from tests.bench import fleetgen

    with tempfile.TemporaryDirectory() as tmp:
        directory = fleetgen.write(Path(tmp) / "fleet", clusters, shape=fleetgen.SHAPES[shape])
        pool = FunctionPool()
        load = os.getloadavg()[0]
        start, cpu = time.monotonic(), time.process_time()
        try:
            world, outcome, _ = simulate(directory, pool=pool, max_rounds=100)
            seconds, main_cpu = time.monotonic() - start, time.process_time() - cpu
        finally:
            pool.close()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "shape": shape,
        "clusters": clusters,
        "XRs": len(world.xrs),
        "renders": outcome.renders,
        "rounds": outcome.rounds if outcome.converged else f"{outcome.rounds} (no fixed point)",
        "seconds": round(seconds, 1),
        "main CPU s": round(main_cpu, 1),
        "functions CPU s": round(children.ru_utime + children.ru_stime, 1),
        "peak RSS MiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        # a shared machine's wall time depends on the others: its 1-minute load at start and end
        "load": f"{load:.1f} -> {os.getloadavg()[0]:.1f}",
        "target": TARGETS.get(clusters, ""),
    }


def runs() -> tuple[tuple[str, int], ...]:
    """(shape, clusters) of each run: ``RUNS``, or those ``MODELPLANE_BENCH_SIMULATE_SIZES`` names."""
    from tests.bench.fleetgen import SHAPES

    out = []
    for item in (s.strip() for s in os.environ.get("MODELPLANE_BENCH_SIMULATE_SIZES", "").split(",")):
        if not item:
            continue
        shape, _, size = item.rpartition(":")
        if (shape or "own") not in SHAPES or not size.isdigit():
            raise SystemExit(f"MODELPLANE_BENCH_SIMULATE_SIZES: {item!r} is not a size or shape:size "
                             f"(shapes: {', '.join(SHAPES)}), e.g. 25,other:1000")
        out.append((shape or "own", int(size)))
    return tuple(out) or RUNS


def run() -> list[dict]:
    rows = []
    for shape, n in runs():
        out = subprocess.run([sys.executable, "-m", "tests.bench.bench_simulate", str(n), shape],
                             capture_output=True, text=True, check=False)
        if out.returncode != 0:
            rows.append({"shape": shape, "clusters": n, "XRs": "failed",
                         "renders": out.stderr.strip().splitlines()[-1:], "target": TARGETS.get(n, "")})
            continue
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return rows


if __name__ == "__main__":
    print(json.dumps(one(int(sys.argv[1]), *sys.argv[2:3])))
