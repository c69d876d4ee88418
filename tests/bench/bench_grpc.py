"""compose-model-deployment over real gRPC: latency at 1,000 and 10,000 clusters, where the time goes, and load.

``python -m tests.bench grpc`` runs only this. A ``modelplane serve
compose-model-deployment --insecure`` subprocess (a fresh one per table part,
so its peak RSS is that part's) is called over ONE persistent channel with the
request's raw bytes (``grpcbench``); requests are the second call of a
reconcile, every required input present (``requests``), the clusters cloned
from a simulated fleet (``simfleet``: 2.77 MB at 1,000 clusters). The latency
rows run on two shapes of fleet (``fleetgen``): the benchmark's "own" (all
Existing, 4 classes, one namespace) and issue 46's "other" (mostly Existing,
some EKS, GKE, AKS and Nebius, 20 classes, 8 namespaces), same targets.

- latency: "placing 10 replicas" has no observed children, and each timed
  call is another ModelDeployment (the server has answered none of them, so
  each is placed); "steady" is a deployment of the simulated fleet at rest
  (``simfleet.member``: its XR, children and ModelServices as simulated, its
  replicas in the clusters' allocations), the same bytes each time (nothing
  changed: the server gives its kept answer, ``pipeline.answers``); "steady,
  composed" is that request with a context entry no function reads, new on
  each call, so each is composed (as by a replica that has not answered it);
  "steady, 1 cluster changed" has one cluster's bytes different on each call
  (every call then composes, the list read as the one before with one
  cluster anew). p50/p95 of RUNS
  calls after 3 warm-ups (so a server's per-cluster caches are warm, as for
  any server that has seen the fleet).
  "floor" is the same bytes to a no-op grpcio server: moving them costs that.
- breakdown (issue 35 item 1) at 1,000 clusters: transport is the floor;
  the rest is measured in-process (``breakdown``), as ms and % of their sum:
  what a call costs when it composes (the steady column: the same request
  composed afresh, as a replica that has not answered it would).
- load (issue 35 item 5): IN_FLIGHT threads, each reconciling its own
  ModelDeployment on the shared channel against one 1,000-cluster fleet: all
  place theirs at once (the burst: its slowest call is a column of its own),
  then each reconciles it again and again for LOAD_SECONDS, as Crossplane
  does at rest (calls/s and the percentiles are of these calls).
  Crossplane sets no per-call deadline, only its reconcile's 2 minutes
  (docs/platform/fleet-scale.md), so a call over 120 s is a failure.
- memory: a fresh server's peak RSS at 10,000 clusters with 1, 4 and 8
  placing calls sent at once (not in the quick run).

Client and server share the machine's cores: on 2 cores the client's
threads take CPU from the server, so load figures are pessimistic (the
client rebuilds a request, and reads an answer, only when the answer
changed; latency is taken when the answer arrives).
Targets are issue 35's (2 cores, quiet machine).
"""
from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import threading
import time

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from tests.bench import breakdown, grpcbench, simfleet
from tests.bench.requests import deployment_part, fleet_part, member_part, replicas, required_part

RUNS = 20
SIZES = (1000, 10000)
SHAPES = ("own", "other")
# Opt-out for a quick look: MODELPLANE_BENCH_QUICK=1 runs 1,000 clusters only, shorter load.
QUICK = os.environ.get("MODELPLANE_BENCH_QUICK") == "1"
LOAD_SECONDS = 5 if QUICK else 20
IN_FLIGHT = (10, 100)
MEMORY_IN_FLIGHT = (1, 4, 8)
CROSSPLANE_RECONCILE_SECONDS = 120
TARGETS = {
    (1000, "placing 10 replicas"): "<= 15 ms",
    (1000, "steady"): "<= 5 ms",
    (1000, "steady, composed"): "<= 5 ms",
    (1000, "steady, 1 cluster changed"): "",
    (10000, "steady, 1 cluster changed"): "",
    (10000, "placing 10 replicas"): "<= 150 ms, RSS <= 256 MiB",
    (10000, "steady"): "<= 35 ms, RSS <= 256 MiB",
    (10000, "steady, composed"): "<= 35 ms, RSS <= 256 MiB",
    10: "0 errors, p99 <= 200 ms",
    100: "0 errors, p99 <= 2 s",
}


def _placed(rsp_bytes: bytes) -> dict[str, dict]:
    return replicas(fnv1.RunFunctionResponse.FromString(rsp_bytes), 10)


def one_changed(shared: bytes, k: int) -> bytes:
    """``shared`` with cluster ``k``'s uid changed (same length): a fleet in which one cluster
    wrote its status since the last call, so the whole list is not the one the server saw."""
    uid = f"00000000-0000-4000-8000-{k:012d}".encode()
    assert shared.count(uid) == 1, "simfleet's uids"
    return shared.replace(uid, b"ffffffff" + uid[8:])


def latency(floor: dict[tuple[str, int, str], list[float]]) -> list[dict]:
    rows = []
    for shape, n in ((shape, n) for shape in SHAPES for n in (SIZES[:1] if QUICK else SIZES)):
        started = time.perf_counter()
        shared = fleet_part(n, simulated=True, shape=shape)
        placing = [deployment_part(name=f"placing-{i:02d}") + required_part(n, True, shape) for i in range(RUNS + 1)]
        steady = member_part(shape) + shared
        composed = [member_part(shape, call=i) + shared for i in range(RUNS + 1)]
        changed = [member_part(shape) + one_changed(shared, k) for k in range(RUNS + 1)]
        with grpcbench.serve() as server, grpcbench.channel(server.address) as call:
            observed = simfleet.member(shape).observed
            assert sorted(_placed(call(steady))) == sorted(n for n in observed if n.startswith("replica-")), \
                "a steady call moved replicas"
            with grpcbench.noop_server() as noop, grpcbench.channel(noop) as noop_call:
                for kind, data in (("placing 10 replicas", placing), ("steady", steady),
                                   ("steady, composed", composed), ("steady, 1 cluster changed", changed)):
                    load = os.getloadavg()[0]
                    cpu = server.cpu_seconds()
                    ms = grpcbench.timings(call, data, RUNS)
                    # CPU the server spent per timed call (warm-ups included): what a busy machine's
                    # wall time hides
                    cpu_ms = (server.cpu_seconds() - cpu) * 1000 / (RUNS + grpcbench.WARMUPS)
                    floor[(shape, n, kind)] = grpcbench.timings(noop_call, data, RUNS)
                    data = data[0] if isinstance(data, list) else data
                    rows.append({
                        "shape": shape, "clusters": n, "call": kind, "request MB": len(data) / 1e6,
                        "p50 ms": grpcbench.median(ms), "p95 ms": grpcbench.pct(ms, 95),
                        "server CPU ms/call": cpu_ms,
                        "floor p50 ms": grpcbench.median(floor[(shape, n, kind)]),
                        "server peak RSS MiB": server.peak_rss_mib(),
                        "row s": time.perf_counter() - started,
                        "load": f"{load:.1f} -> {os.getloadavg()[0]:.1f}",
                        "target": TARGETS[(n, kind)],
                    })
    return rows


def phases(floor: dict[tuple[str, int, str], list[float]]) -> list[dict]:
    shared = required_part(1000, simulated=True)
    placing = deployment_part() + shared
    measured = {"placing 10 replicas": breakdown.measure(placing, RUNS)}
    # the observed children are what the server answered, as in the latency rows
    from modelplane import functions
    from modelplane.pipeline.server import decode_request, run_compose
    rsp = run_compose(breakdown.FN, functions.load(breakdown.FN), decode_request(placing))
    measured["steady"] = breakdown.measure(deployment_part(replicas(rsp, 10)) + shared, RUNS)
    for kind, m in measured.items():
        m["transport"] = grpcbench.median(floor[("own", 1000, kind)])
    rows = []
    for phase in ("transport", *breakdown.PHASES, "other"):
        row = {"phase (1,000 clusters)": phase}
        for kind, m in measured.items():
            whole = m["total"] + m["transport"]
            row[f"{kind} ms"] = m[phase]
            row[f"{kind} %"] = 100 * m[phase] / whole
        row["what"] = ("no-op grpcio server, same bytes" if phase == "transport"
                       else breakdown.PHASES.get(phase, "compose's remaining steps: classes, services, drain, status"))
        rows.append(row)
    rows.append({"phase (1,000 clusters)": "sum", **{
        f"{kind} ms": m["total"] + m["transport"] for kind, m in measured.items()}, "what": "in-process + transport"})
    return rows


def _reconcile_concurrently(call: grpcbench.Call, shared: bytes, in_flight: int,
                            seconds: float) -> tuple[list[float], list[float], list[str], float]:
    """in_flight threads, each its own ModelDeployment: all place it at once (the burst), then each
    reconciles it again and again (steady) until ``seconds`` pass. Returns (the burst's ms, the
    steady calls' ms, errors, the steady phase's wall s)."""
    burst: list[float] = []
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    placed = threading.Barrier(in_flight + 1)
    stop = [0.0]

    def one(data: bytes, checked: bytes, into: list[float]) -> tuple[dict | None, bytes]:
        start = time.perf_counter()
        observed = error = None
        try:
            answer = call(data)
            ms = (time.perf_counter() - start) * 1000
            if answer != checked:  # the same answer as the last one found right needs no second look
                observed, checked = _placed(answer), answer
        except Exception as err:  # noqa: BLE001 - counted and reported, the run goes on
            ms = (time.perf_counter() - start) * 1000
            error = f"{type(err).__name__}: {str(err)[:200]}"
        with lock:
            into.append(ms)
            if error:
                errors.append(error)
        return observed, checked

    def reconcile(i: int) -> None:
        name = f"load-{i:03d}"
        observed, checked = one(deployment_part(name=name) + shared, b"", burst)
        placed.wait()
        data = deployment_part(observed or {}, name) + shared
        while time.monotonic() < stop[0]:
            observed, checked = one(data, checked, latencies)
            if observed is not None:
                data = deployment_part(observed, name) + shared  # what it composed changed: send that

    threads = [threading.Thread(target=reconcile, args=(i,)) for i in range(in_flight)]
    for t in threads:
        t.start()
    placed.wait()
    started = time.perf_counter()
    stop[0] = time.monotonic() + seconds
    for t in threads:
        t.join()
    return burst, latencies, errors, time.perf_counter() - started


def load() -> list[dict]:
    shared = required_part(1000, simulated=True)
    rows = []
    for in_flight in IN_FLIGHT:
        with grpcbench.serve() as server, grpcbench.channel(server.address) as call:
            call(deployment_part(name="warm-up") + shared)
            burst, latencies, errors, wall = _reconcile_concurrently(call, shared, in_flight, LOAD_SECONDS)
            rows.append({
                "in flight": in_flight, "clusters": 1000, "seconds": wall, "calls": len(latencies),
                "calls/s": len(latencies) / wall, "p50 ms": grpcbench.median(latencies),
                "p99 ms": grpcbench.pct(latencies, 99), "max ms": max(latencies),
                "placing burst max ms": max(burst),
                "server peak RSS MiB": server.peak_rss_mib(), "errors": len(errors),
                f"over {CROSSPLANE_RECONCILE_SECONDS} s": sum(ms > CROSSPLANE_RECONCILE_SECONDS * 1000
                                                              for ms in latencies + burst),
                "target": TARGETS[in_flight],
                "first error": errors[0] if errors else "",
            })
    return rows


def memory() -> list[dict]:
    """Peak RSS of a fresh server at 10,000 clusters with 1, 4 and 8 placing calls sent at once
    (after one warm-up call): what each call in flight costs (docs/platform/fleet-scale.md)."""
    shared = required_part(10000, simulated=True)
    rows = []
    for in_flight in MEMORY_IN_FLIGHT:
        with grpcbench.serve() as server, grpcbench.channel(server.address) as call:
            call(deployment_part(name="warm-up") + shared)
            idle = server.peak_rss_mib()
            with concurrent.futures.ThreadPoolExecutor(in_flight) as pool:
                placed = list(pool.map(lambda i: _placed(call(deployment_part(name=f"burst-{i}") + shared)),
                                       range(in_flight)))
            assert len(placed) == in_flight
            rows.append({"clusters": 10000, "calls in flight": in_flight, "after warm-up MiB": idle,
                         "server peak RSS MiB": server.peak_rss_mib()})
    return rows


def run() -> dict[str, list[dict]]:
    """Every table, measured in a child process: the client's requests (10,000 clusters are built as
    Python objects first) would otherwise raise the peak RSS the benchmarks after this one report."""
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_run).result()


def _run() -> dict[str, list[dict]]:
    floor: dict[tuple[str, int, str], list[float]] = {}
    started = time.perf_counter()
    out = {"latency": latency(floor), "breakdown": phases(floor), "load": load()}
    if not QUICK:
        out["memory"] = memory()
    out["run"] = [{"load average (1, 5, 15 min) at end": grpcbench.load_average(), "cores": os.cpu_count(),
                   "seconds": time.perf_counter() - started}]
    return out
