"""compose-model-deployment end to end at 10, 100 and 1,000 clusters.

Targets at 1,000 clusters: the whole RunFunction <= 300 ms, request <= 4 MiB.

The request is what Crossplane sends on the second call of a reconcile
(``tests/bench/requests.py``): a 10-replica ModelDeployment plus every input
it requires (InferenceClusters, InferenceClasses, ModelServices), serialized.
One run is the server's request decoder (``decode_request``) on the bytes plus
``run_compose`` through the real runtime, as the gRPC servicer does (no
transport: ``bench_grpc`` measures it). "first" has no observed children (a new deployment); "steady" feeds
the first response's 10 ModelReplicas back as observed (every later
reconcile). Times are medians; before each "first" run every cache is
cleared (CEL, clusters read, requests seen: a fresh process); "steady"
keeps them warm. "CEL evals" counts
engine evaluations of one cold first run; peak RSS is the process
high-water mark after the size's runs.
"""
from __future__ import annotations

import resource
import statistics
import time

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import cel, functions
from modelplane.pipeline.server import decode_request, run_compose

from tests.bench.requests import replicas, request

FN = "compose-model-deployment"
SIZES = (10, 100, 1000)
RUNS = 5


def _cold() -> None:
    """What a fresh process has: no compiled CEL, no cluster read before, no request seen before."""
    from modelplane.cel import adapter, device
    from modelplane.deployment import clusters
    from modelplane.pipeline import memo, received

    adapter._cache.clear()
    device._memo.clear()
    clusters._CACHE = memo.DigestMemo(clusters.CACHED_VERSIONS)
    clusters._FLEETS = clusters._Fleets(received.KEPT_ENTRIES)
    received.RECENT = received._Recent()


def _once(data: bytes) -> tuple[float, float, fnv1.RunFunctionResponse]:
    """(wall ms, CPU ms, response): CPU time shows the cost on a busy machine."""
    compose = functions.load(FN)
    start, cpu = time.perf_counter(), time.process_time()
    rsp = run_compose(FN, compose, decode_request(data))
    return (time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000, rsp


def _check(rsp: fnv1.RunFunctionResponse) -> dict[str, dict]:
    """The 10 ModelReplicas placed (AssertionError naming what the function said otherwise)."""
    return replicas(rsp, 10)


def run() -> list[dict]:
    rows = []
    for n in SIZES:
        data = request(n)
        first, first_cpu, evals = [], [], 0
        for _ in range(RUNS):
            _cold()
            cel.reset_stats()
            ms, cpu, rsp = _once(data)
            first.append(ms)
            first_cpu.append(cpu)
            evals = cel.stats()["evaluations"]
        observed = _check(rsp)
        steady_data = request(n, observed)
        steady, steady_cpu = [], []
        for _ in range(RUNS):
            ms, cpu, rsp = _once(steady_data)
            steady.append(ms)
            steady_cpu.append(cpu)
        assert sorted(_check(rsp)) == sorted(observed)
        rows.append({
            "clusters": n,
            "pools": 4 * n,
            "request KiB": len(data) / 1024,
            "first ms": statistics.median(first),
            "first CPU ms": statistics.median(first_cpu),
            "steady ms": statistics.median(steady),
            "steady CPU ms": statistics.median(steady_cpu),
            "CEL evals (cold)": evals,
            "peak RSS MiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        })
    return rows
