"""``make soak``: 10,000 hostile cases per function, on every core, in under 30 minutes on two.

    python -m tests.reliability.soak [--cases 10000] [--sample 500] [--workers N] [FUNCTION...]
    python -m tests.reliability.soak --replay FUNCTION:SEED:CASES     # one batch again, failures in full

Each function's cases are the fuzz tests' cases (``fuzzing.cases``: shaped or
hostile XRs, observed children, required inputs). Most run in-process, in
batches of ``--batch`` cases, each batch a fresh ``@given`` run with its own
seed: Hypothesis keeps every case of a run (about half a megabyte each, so a
10,000-case run grew to gigabytes), a batch keeps only its own. A failure
does not stop a batch: it is counted, and the first few are shown with the
batch's seed, which ``--replay`` runs again.

The rest, ``--sample`` cases per function, go over real gRPC to
``modelplane serve``, which then answers 5,000 calls in all: the sample,
then the sample again with a label changed on the XR and every required
item per round, so content-keyed caches miss as they would on new inputs.
The server's RSS after the 5,000th call must stay within ``RSS_MARGIN`` of
its RSS after the 500th (a server that keeps something per call grows
linearly). The same server then gets hostile request bytes
(``wirebytes``), in-process first, then over gRPC, and must still answer a
healthy request.

Batches and served runs are spread over ``--workers`` processes (default:
one per core). Hypothesis keeps no database here (a failure is replayed from
its seed), so nothing is written into the repository. Exit 1 on any failure.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import os
import random
import sys
import time
from dataclasses import dataclass, field

BATCH = 1000
RSS_EARLY, RSS_LATE = 500, 5000
# Allowed growth of the served function's RSS from call 500 to call 5,000: the larger of these.
RSS_MARGIN_MB, RSS_MARGIN_SHARE = 24.0, 0.10
WIRE_IN_PROCESS, WIRE_OVER_GRPC = 2000, 200
SHOWN = 3  # failures shown per function


@dataclass
class Result:
    """What one batch or one served run measured."""

    function: str
    kind: str                          # "batch" or "served"
    seed: int = 0
    cases: int = 0
    failures: list[str] = field(default_factory=list)
    calls_s: list[float] = field(default_factory=list)      # wall time of each call
    generate_cpu_s: float = 0.0        # CPU spent by Hypothesis drawing cases (and its engine)
    peak_rss_mb: float = 0.0           # this process's peak during the run
    wall_s: float = 0.0
    # served runs only
    server_rss_mb: tuple[float, float] = (0.0, 0.0)          # after RSS_EARLY and RSS_LATE calls
    server_peak_mb: float = 0.0
    wire_cases: int = 0
    wire_failures: list[str] = field(default_factory=list)


# ----- memory ------------------------------------------------------------------
def _status_mb(pid: int | str, key: str) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def _reset_peak() -> None:
    """Start this process's peak RSS (VmHWM) afresh: a worker runs many batches."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


# ----- in-process batches ---------------------------------------------------------
def run_batch(function: str, seed: int, cases: int, show_all: bool = False) -> Result:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fixed_seed

    from tests import support
    from tests.reliability import fuzzing

    out = Result(function, "batch", seed=seed)
    strategy = fuzzing.cases(function)
    _reset_peak()
    started, cpu0 = time.perf_counter(), time.process_time()
    spent = [0.0]  # CPU inside the test body (building the request, calling, judging)

    @fixed_seed(seed)
    @settings(max_examples=cases, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(case=strategy)
    def one(case):
        body = time.process_time()
        out.cases += 1
        xr, observed, required = case
        try:
            req = fuzzing.request(xr, observed, required)
            start = time.perf_counter()
            rsp = support.run(function, req)
            elapsed = time.perf_counter() - start
            out.calls_s.append(elapsed)
            found = fuzzing.problem(function, rsp, elapsed)
        except Exception as err:  # noqa: BLE001 - counted and shown, never stops the batch
            found = f"{function}: {type(err).__name__}: {err}"
        if found:
            limit = None if show_all else 2000
            out.failures.append(f"{found} [seed {seed}, case {out.cases}]\n    XR: {str(xr)[:limit]}")
        spent[0] += time.process_time() - body

    one()
    out.wall_s = time.perf_counter() - started
    out.generate_cpu_s = time.process_time() - cpu0 - spent[0]
    out.peak_rss_mb = _status_mb("self", "VmHWM")
    return out


# ----- one served function: a gRPC sample, the RSS check, hostile bytes ------------------
def _round(xr: dict, required: dict, n: int) -> tuple[dict, dict]:
    """The case with label ``soak.modelplane.ai/round: n`` on the XR and on every required item."""
    def label(obj):
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
            return obj
        meta = dict(obj["metadata"])
        meta["labels"] = {**(meta.get("labels") or {}), "soak.modelplane.ai/round": str(n)}
        return {**obj, "metadata": meta}

    return label(xr), {k: None if v is None else [label(i) for i in v] for k, v in required.items()}


def run_served(function: str, seed: int, sample: int) -> Result:
    import grpc
    from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fixed_seed
    from modelplane import functions
    from modelplane.pipeline.server import Undecodable, decode_request, run_compose, undecodable_response

    from tests import support
    from tests.reliability import fleet, fuzzing
    from tests.reliability import wirebytes as W
    from tests.reliability.procs import Server

    out = Result(function, "served", seed=seed)
    _reset_peak()
    started, cpu0 = time.perf_counter(), time.process_time()
    drawn: list[tuple] = []

    @fixed_seed(seed)
    @settings(max_examples=sample, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(case=fuzzing.cases(function))
    def draw(case):
        drawn.append(case)

    draw()
    out.generate_cpu_s = time.process_time() - cpu0
    with Server(function, "--insecure") as server, grpc.insecure_channel(server.address) as channel:
        run = grpcv1.FunctionRunnerServiceStub(channel).RunFunction
        calls = 0
        for n in range(RSS_LATE // max(1, len(drawn)) + 1):
            for xr, observed, required in drawn:
                if calls == RSS_LATE:
                    break
                if n:
                    xr, required = _round(xr, required, n)
                req = fuzzing.request(xr, observed, required)
                start = time.perf_counter()
                try:
                    rsp = run(req, timeout=fuzzing.HANG_GUARD_S, wait_for_ready=True)
                    elapsed = time.perf_counter() - start
                    found = fuzzing.problem(function, rsp, elapsed)
                except grpc.RpcError as err:
                    elapsed, found = time.perf_counter() - start, f"{function}: gRPC {err.code().name}: {err.details()}"
                calls += 1
                if n == 0:
                    out.cases += 1
                    out.calls_s.append(elapsed)
                if found:
                    out.failures.append(f"{found} [served, seed {seed}, round {n}]\n    XR: {str(xr)[:2000]}")
                if calls == RSS_EARLY:
                    early = _status_mb(server.proc.pid, "VmRSS")
            if calls == RSS_LATE or not drawn:
                break
        late = _status_mb(server.proc.pid, "VmRSS")
        out.server_rss_mb = (early if calls >= RSS_EARLY else late, late)

        # Hostile bytes: in-process through the server's own decoder and runtime, then over gRPC.
        base = W.healthy(function)
        compose = functions.load(function)
        blobs: list[bytes] = []

        @fixed_seed(seed)
        @settings(max_examples=WIRE_IN_PROCESS, deadline=None, database=None, derandomize=False,
                  suppress_health_check=list(HealthCheck), phases=[Phase.generate])
        @given(data=W.requests(base))
        def wire(data):
            out.wire_cases += 1
            if len(blobs) < WIRE_OVER_GRPC:
                blobs.append(data)
            try:
                req = decode_request(data)
                rsp = undecodable_response(req) if isinstance(req, Undecodable) else run_compose(function, compose, req)
                found = W.judge(function, rsp)
            except Exception as err:  # noqa: BLE001 - a crash of the decoder is what this looks for
                found = f"{function}: {type(err).__name__} out of the decoder: {err}"
            if found:
                out.wire_failures.append(f"{found} [wire, seed {seed}] bytes: {data[:200]!r}")

        wire()
        raw = W.stub(channel)
        oversized = b"\x0a" + b"\xff" * 64 * 1024 * 1024  # over the server's 64 MiB receive limit
        for data in [*blobs, oversized]:
            out.wire_cases += 1
            try:
                found = W.judge(function, raw(data, timeout=fuzzing.HANG_GUARD_S, wait_for_ready=True))
            except grpc.RpcError as err:
                found = W.judge(function, None, err)
            if found:
                out.wire_failures.append(f"{found} [wire over gRPC, seed {seed}] bytes: {data[:200]!r}")
        rsp = run(support.request(fleet.baseline(function)), timeout=fuzzing.HANG_GUARD_S)
        if not server.alive() or (support.fatal(rsp) or "").startswith("internal error"):
            out.failures.append(f"{function}: the server did not survive: {server.logs()[-2000:]}")
        out.server_peak_mb = _status_mb(server.proc.pid, "VmHWM")
    out.wall_s = time.perf_counter() - started
    out.peak_rss_mb = _status_mb("self", "VmHWM")
    return out


# ----- the table ------------------------------------------------------------------
def _p99_ms(samples: list[float]) -> float:
    xs = sorted(samples)
    return round(xs[min(len(xs) - 1, int(0.99 * len(xs)))] * 1000, 1) if xs else 0.0


def rss_grew(early: float, late: float) -> bool:
    return late - early > max(RSS_MARGIN_MB, RSS_MARGIN_SHARE * early)


def table(results: list[Result], functions: list[str]) -> tuple[list[str], int]:
    """The per-function lines, and how many problems they show."""
    head = (f"{'function':<27} {'cases':>6} {'fail':>5} {'p99 ms':>7} {'gRPC p99':>8} {'gen ms':>6} "
            f"{'peak RSS':>8} {'served RSS @500 -> @5000':>25} {'wire':>5} {'fail':>4}")
    lines, problems = [head, "-" * len(head)], 0
    for fn in functions:
        mine = [r for r in results if r.function == fn]
        batches = [r for r in mine if r.kind == "batch"]
        served = next((r for r in mine if r.kind == "served"), None)
        cases = sum(r.cases for r in mine)
        failures = sum(len(r.failures) for r in mine)
        drawn = sum(r.cases for r in batches) + (served.cases if served else 0)
        gen_ms = 1000 * sum(r.generate_cpu_s for r in mine) / max(1, drawn)
        peak = max((r.peak_rss_mb for r in mine), default=0.0)
        early, late = served.server_rss_mb if served else (0.0, 0.0)
        grew = served is not None and rss_grew(early, late)
        wire_fail = len(served.wire_failures) if served else 0
        problems += failures + wire_fail + grew + (served is None)
        rss = f"{early:.0f} -> {late:.0f} MB{' GREW' if grew else ''}" if served else "missing"
        lines.append(f"{fn:<27} {cases:>6} {failures:>5} {_p99_ms([s for r in batches for s in r.calls_s]):>7} "
                     f"{_p99_ms(served.calls_s) if served else 0:>8} {gen_ms:>6.1f} {peak:>6.0f}MB {rss:>25} "
                     f"{served.wire_cases if served else 0:>5} {wire_fail:>4}")
    return lines, problems


def jobs(functions: list[str], cases: int, sample: int, batch: int, seed: int) -> list[tuple]:
    """Served runs first (each keeps a server busy beside its client), then the batches, round-robin."""
    rng = random.Random(seed)
    out = [("served", fn, rng.getrandbits(32), sample) for fn in functions]
    left = {fn: max(0, cases - sample) for fn in functions}
    while any(left.values()):
        for fn in functions:
            n = min(batch, left[fn])
            if n:
                out.append(("batch", fn, rng.getrandbits(32), n))
                left[fn] -= n
    return out


def _run_job(job: tuple) -> Result:
    from crossplane.function import logging as fnlogging

    # An internal error is counted and shown in the table; its log line would only bury the progress.
    fnlogging.configure(level=fnlogging.Level.DISABLED)
    kind, function, seed, n = job
    return run_served(function, seed, n) if kind == "served" else run_batch(function, seed, n)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.reliability.soak", description=__doc__.split("\n")[0])
    p.add_argument("functions", nargs="*", metavar="FUNCTION", help="default: all eight")
    p.add_argument("--cases", type=int, default=int(os.environ.get("MODELPLANE_SOAK_EXAMPLES", "10000")))
    p.add_argument("--sample", type=int, default=RSS_EARLY, help="cases per function over gRPC")
    p.add_argument("--batch", type=int, default=BATCH)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    p.add_argument("--seed", type=int, default=None, help="derives every batch's seed (default: random)")
    p.add_argument("--replay", metavar="FUNCTION:SEED:CASES", help="run one batch again, failures in full")
    args = p.parse_args(argv)

    from modelplane import functions as registry
    if args.replay:
        fn, seed, n = args.replay.split(":")
        r = run_batch(fn, int(seed), int(n), show_all=True)
        print("\n".join(r.failures) or f"{r.cases} cases, no failure")
        return 1 if r.failures else 0
    chosen = args.functions or list(registry.ALL)
    unknown = [f for f in chosen if f not in registry.available()]
    if unknown:
        print(f"soak: unknown or unbuilt functions: {unknown}", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().getrandbits(32)
    todo = jobs(chosen, args.cases, min(args.sample, args.cases), args.batch, seed)
    print(f"soak: {args.cases} cases for each of {len(chosen)} functions ({min(args.sample, args.cases)} over gRPC), "
          f"{len(todo)} jobs on {args.workers} processes, seed {seed}", flush=True)
    started = time.perf_counter()
    results: list[Result] = []
    ctx = multiprocessing.get_context("spawn")  # gRPC and forked processes do not mix
    with concurrent.futures.ProcessPoolExecutor(args.workers, mp_context=ctx) as pool:
        futures = {pool.submit(_run_job, job): job for job in todo}
        for fut in concurrent.futures.as_completed(futures):
            kind, fn, job_seed, n = futures[fut]
            try:
                r = fut.result()
            except Exception as err:  # noqa: BLE001 - a worker that died is a failure to show
                r = Result(fn, kind, seed=job_seed, failures=[f"{fn}: the {kind} job died: {err!r}"])
            results.append(r)
            print(f"  {time.perf_counter() - started:7.0f}s  {kind:<6} {fn:<27} {r.cases:>5} cases "
                  f"{len(r.failures) + len(r.wire_failures)} failures  {r.wall_s:5.0f}s", flush=True)
    lines, problems = table(results, chosen)
    print()
    print("\n".join(lines))
    print(f"\n{time.perf_counter() - started:.0f}s on {args.workers} processes; gen ms = Hypothesis CPU per case; "
          f"peak RSS = the fuzzing process (Hypothesis included); served RSS = `modelplane serve` after 500 and "
          f"5,000 calls (allowed growth: {RSS_MARGIN_MB:.0f} MB or {RSS_MARGIN_SHARE:.0%}); "
          f"wire = hostile request bytes ({WIRE_IN_PROCESS} in-process, {WIRE_OVER_GRPC + 1} over gRPC)")
    shown = [f for r in results for f in (r.failures + r.wire_failures)]
    if shown:
        print(f"\n{len(shown)} failures; the first {min(len(shown), SHOWN * len(chosen))}:")
        by_fn: dict[str, int] = {}
        for f in shown:
            fn = f.split(":")[0]
            by_fn[fn] = by_fn.get(fn, 0) + 1
            if by_fn[fn] <= SHOWN:
                print(f"  {f}")
        print("replay a batch: python -m tests.reliability.soak --replay FUNCTION:SEED:CASES")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
