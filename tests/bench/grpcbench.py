"""Real gRPC for ``bench_grpc``: a ``modelplane serve`` subprocess, a no-op floor server, raw-bytes calls.

Calls go over ONE persistent channel per server, as Crossplane keeps one per
Function (docs/platform/fleet-scale.md); a channel per call would add about
200 ms of HTTP/2 slow start and hide the function. Requests are sent as the
bytes they are (identity serializers), so the client does no protobuf work.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import math
import os
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc

from tests.support import serve_popen

METHOD = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"
FN = "compose-model-deployment"
# Crossplane sets no send limit (gRPC's 2 GiB) and keeps the 4 MiB receive default; so does this client.
CLIENT_OPTIONS = [("grpc.max_send_message_length", -1)]

Call = Callable[[bytes], bytes]
WARMUPS = 3


class Server:
    """``modelplane serve FN --insecure`` on a free loopback port, and its memory high-water mark."""

    def __init__(self, proc: subprocess.Popen, address: str):
        self.proc, self.address = proc, address

    def cpu_seconds(self) -> float:
        """User + system CPU the server's processes have used so far (a busy machine stretches wall
        time, not this)."""
        return sum(_cpu_ticks(pid) for pid in _tree(self.proc.pid)) / os.sysconf("SC_CLK_TCK")

    def peak_rss_mib(self) -> float:
        """VmHWM summed over the server and every process under it (all a Pod's memory limit would see)."""
        return sum(_hwm_kib(pid) for pid in _tree(self.proc.pid)) / 1024


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            with contextlib.suppress(OSError):
                todo += [int(c) for c in (task / "children").read_text().split()]
    return out


def _hwm_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass  # exited meanwhile
    return 0


def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0  # exited meanwhile
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))


@contextlib.contextmanager
def serve(function: str = FN) -> Iterator[Server]:
    with serve_popen(function, "--insecure", wait=30) as (proc, address):
        yield Server(proc, address)


@contextlib.contextmanager
def noop_server() -> Iterator[str]:
    """A grpcio server answering every RunFunction with an empty response: what moving the bytes costs."""
    server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=4),
                         options=[("grpc.max_receive_message_length", 256 * 1024 * 1024)])
    handler = grpc.unary_unary_rpc_method_handler(lambda data, ctx: b"")  # identity (de)serializers: bytes in/out
    service, method = METHOD.strip("/").split("/")
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(service, {method: handler})])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(None)


@contextlib.contextmanager
def channel(address: str) -> Iterator[Call]:
    """One persistent channel; a raw-bytes RunFunction on it (no deadline, as Crossplane's calls)."""
    with grpc.insecure_channel(address, options=CLIENT_OPTIONS) as ch:
        rpc = ch.unary_unary(METHOD, request_serializer=None, response_deserializer=None)
        yield lambda data: rpc(data, wait_for_ready=True)


def timings(call: Call, data: bytes | list[bytes], runs: int, warmups: int = WARMUPS) -> list[float]:
    """Wall ms of ``runs`` calls after ``warmups`` (the first calls fill the server's caches);
    of a list of requests the warm-ups send the first, the timed calls the others in turn."""
    sent = data if isinstance(data, list) else [data, data]
    for _ in range(warmups):
        call(sent[0])
    out = []
    for i in range(runs):
        one = sent[1 + i % (len(sent) - 1)]
        start = time.perf_counter()
        call(one)
        out.append((time.perf_counter() - start) * 1000)
    return out


def pct(values: list[float], p: float) -> float:
    """The p-th percentile (nearest rank): with 20 values, p95 is the 19th."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered), math.ceil(len(ordered) * p / 100)) - 1)] if ordered else float("nan")


def median(values: list[float]) -> float:
    return statistics.median(values)


def load_average() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())
