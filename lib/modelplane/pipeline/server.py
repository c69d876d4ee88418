"""The gRPC runtime every Modelplane function runs in.

``FunctionRunner`` adapts a ``compose(c: Composition)`` callable to the
FunctionRunnerService: it seeds desired state with the observed children,
turns ``InputError`` into a FATAL result naming the field, and turns any
other exception into a FATAL "internal error" plus a log line, so one bad
request never kills the server. Work runs on a small thread pool so a slow
request does not block the event loop that accepts the others.

``serve`` runs the server (mTLS from a certificate directory unless
``insecure``). SIGTERM stops accepting calls and lets the ones in flight
finish within a grace period before the process exits; a request protobuf
cannot decode gets a FATAL result instead of an opaque gRPC error.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import datetime
import os
import signal
import traceback
from collections.abc import Callable

import grpc
from crossplane.function import logging as fnlogging
from crossplane.function import response, runtime
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from crossplane.function.proto.v1beta1 import run_function_pb2 as fnv1beta1
from google.protobuf.message import DecodeError
from grpc_reflection.v1alpha import reflection

from modelplane.errors import InputError
from modelplane.pipeline import PARENT_PID_ENV, answers, arena, heap
from modelplane.pipeline.composition import Composition, one_line
from modelplane.pipeline.received import Received, receive

Compose = Callable[[Composition], None]

# gRPC's default 4 MiB receive limit is too small for large fleets; requests
# are kept small by design, but the server should not be the limit.
DEFAULT_MAX_RECV_MB = 64
DEFAULT_ADDRESS = "0.0.0.0:9443"
# Crossplane sets no deadline per call, only its reconcile's two minutes
# (docs/platform/fleet-scale.md); five seconds lets a rolling update finish
# every call already accepted, which take milliseconds.
SHUTDOWN_GRACE_SECONDS = 5.0
DRAIN_QUIET_SECONDS = 0.5
ORPHAN_CHECK_SECONDS = 1.0


def run_compose(function: str, compose: Compose, req: fnv1.RunFunctionRequest | Received,
                ttl: datetime.timedelta = response.DEFAULT_TTL) -> fnv1.RunFunctionResponse:
    """Run one composition step synchronously (also used in-process by tests); the response's
    TTL starts at ``ttl`` (the function may only shorten it: ``Composition.requeue_after``)."""
    return compose_call(function, compose, req, ttl)[0]


def compose_call(function: str, compose: Compose, req: fnv1.RunFunctionRequest | Received,
                 ttl: datetime.timedelta = response.DEFAULT_TTL) -> tuple[fnv1.RunFunctionResponse, bool]:
    """``run_compose``, and whether the function said its answer holds whatever the time
    (``Composition.cacheable``; never for an error)."""
    received = req if isinstance(req, Received) else Received(req)
    req = received.message
    rsp = response.to(req, ttl)
    c = Composition(received, rsp, function)
    try:
        c.keep_observed()
        compose(c)
        c.finish()
    except InputError as err:
        return _fatal(req, str(err)), False
    except Exception as err:  # noqa: BLE001 - a bug must not take the server down
        fnlogging.get_logger().error(
            "internal error", function=function, error=repr(err), trace=traceback.format_exc(limit=8)
        )
        return _fatal(req, f"internal error in {function}: {type(err).__name__}: {err}"), False
    return rsp, c.timeless


def _fatal(req: fnv1.RunFunctionRequest, message: str) -> fnv1.RunFunctionResponse:
    # A fresh response: Crossplane applies nothing on FATAL, and a half-built
    # desired state would only confuse someone reading it.
    rsp = response.to(req)
    response.fatal(rsp, one_line(message))
    return rsp


class Undecodable:
    """A request protobuf could not decode (e.g. nested deeper than upb allows)."""

    def __init__(self, error: str):
        self.error = error


def decode_request(data: bytes) -> Received | Undecodable:
    """Decode a request, its required resources left as wire bytes until read (``received``),
    turning a decode failure into a value we can answer.

    gRPC would otherwise answer UNKNOWN with protobuf's internal message; a
    FATAL result tells the user what to change instead. Nothing raises out of
    here: bytes the walk or protobuf cannot read are answered, whatever the
    failure (``tests/reliability/wirebytes.py`` fuzzes this in ``make soak``).
    """
    try:
        return receive(data)
    except DecodeError as err:
        return Undecodable(str(err))
    except Exception as err:  # noqa: BLE001 - never raise out of the deserializer (gRPC: UNKNOWN, a traceback)
        return Undecodable(f"{type(err).__name__}: {err}")


def undecodable_response(req: Undecodable) -> fnv1.RunFunctionResponse:
    rsp = fnv1.RunFunctionResponse()
    hint = (
        "spec: the resource nests deeper than protobuf decodes (100 levels, about 48 levels of YAML); "
        "flatten the deepest field"
        if "Depth" in req.error
        else "spec: the request could not be decoded; check the resource for invalid values"
    )
    response.fatal(rsp, f"{hint} ({one_line(req.error, 200)})")
    return rsp


class FunctionRunner(grpcv1.FunctionRunnerServiceServicer):
    """Serves one Modelplane function over gRPC."""

    def __init__(self, function: str, compose: Compose, workers: int = 4,
                 ttl: datetime.timedelta = response.DEFAULT_TTL):
        self.function = function
        self.compose = compose
        self.ttl = ttl
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix=function)
        self._heap = heap.Heap()
        self.answers = answers.Answers()
        self.in_flight = 0  # touched only on the event loop's thread

    def _run(self, req: fnv1.RunFunctionRequest | Received) -> fnv1.RunFunctionResponse | bytes:
        """The response, or its wire bytes when it is an answer kept for this very request."""
        if isinstance(req, Received):
            kept = self.answers.get(req)
            if kept is not None:
                return kept
        try:
            rsp, timeless = compose_call(self.function, self.compose, req, self.ttl)
            if not isinstance(req, Received):
                return rsp
            if timeless:
                return self.answers.keep(req, rsp)
            self.answers.forget(req)
            return rsp
        finally:
            self._heap.settle()

    async def RunFunction(
        self, req: fnv1.RunFunctionRequest | Received | Undecodable, context: grpc.aio.ServicerContext | None = None
    ) -> fnv1.RunFunctionResponse | bytes:
        if isinstance(req, Undecodable):
            return undecodable_response(req)
        self.in_flight += 1
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._pool, self._run, req)
        finally:
            self.in_flight -= 1


def _response_bytes(rsp: fnv1.RunFunctionResponse | bytes) -> bytes:
    """A response's wire bytes (a kept answer is already bytes)."""
    return rsp if isinstance(rsp, bytes) else rsp.SerializeToString()


def _handlers(runner: FunctionRunner) -> list[grpc.GenericRpcHandler]:
    """v1 with the tolerant decoder; v1beta1 (which Crossplane falls back to) through the SDK's adapter."""
    v1 = grpc.method_handlers_generic_handler(
        "apiextensions.fn.proto.v1.FunctionRunnerService",
        {
            "RunFunction": grpc.unary_unary_rpc_method_handler(
                runner.RunFunction,
                request_deserializer=decode_request,
                response_serializer=_response_bytes,
            )
        },
    )
    beta = runtime.BetaFunctionRunner(wrapped=runner)
    v1beta1 = grpc.method_handlers_generic_handler(
        "apiextensions.fn.proto.v1beta1.FunctionRunnerService",
        {
            "RunFunction": grpc.unary_unary_rpc_method_handler(
                beta.RunFunction,
                request_deserializer=fnv1beta1.RunFunctionRequest.FromString,
                response_serializer=fnv1beta1.RunFunctionResponse.SerializeToString,
            )
        },
    )
    return [v1, v1beta1]


async def _stop_when_orphaned(stopping: asyncio.Event) -> None:
    """Stop once the process named by PARENT_PID_ENV is no longer our parent.

    ``modelplane render`` and ``simulate`` start their function servers with it set: a parent
    killed outright (SIGKILL, or SIGTERM before its clean-up runs) must not leave servers behind.
    A server started any other way has no such parent and runs until it is told to stop."""
    try:
        parent = int(os.environ.get(PARENT_PID_ENV, ""))
    except ValueError:
        return
    while os.getppid() == parent:
        await asyncio.sleep(ORPHAN_CHECK_SECONDS)
    stopping.set()


def _write_address(path: str, address: str, port: int) -> None:
    """Write ``host:port`` (the port bound, which ``:0`` leaves to the kernel) to ``path``, whole or
    not at all: a reader waiting for the file never sees half of it."""
    host = address.rpartition(":")[0] or "127.0.0.1"
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        f.write(f"{host}:{port}\n")
    os.replace(tmp, path)


async def _serve(runner: FunctionRunner, address: str, creds, insecure: bool, options, grace: float,
                 address_file: str | None = None) -> None:
    server = grpc.aio.server(options=options)
    server.add_generic_rpc_handlers(_handlers(runner))
    reflection.enable_server_reflection(runtime.SERVICE_NAMES, server)
    try:
        port = server.add_insecure_port(address) if insecure else server.add_secure_port(address, creds)
    except RuntimeError:  # gRPC's "Failed to bind": the port is taken, or the address is not ours
        raise SystemExit(f"modelplane serve: cannot listen on {address}: another process listens there, or the "
                         "address is not one of this machine's; choose another --address (port 0 lets the kernel "
                         "choose: --address-file FILE then says which)") from None
    await server.start()
    if address_file:
        _write_address(address_file, address, port)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    watcher = asyncio.ensure_future(_stop_when_orphaned(stopping))
    await stopping.wait()
    watcher.cancel()
    # Drain before stopping: gRPC's own grace period does not wait for calls
    # that were accepted but whose handlers had not started, and cancels them.
    # A client can also hold calls back (HTTP/2 stream limits) until earlier
    # ones finish, so the server counts as drained only after a quiet spell.
    deadline = loop.time() + grace
    quiet_since = None
    while loop.time() < deadline:
        if runner.in_flight:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = loop.time()
        elif loop.time() - quiet_since >= DRAIN_QUIET_SECONDS:
            break
        await asyncio.sleep(0.02)
    await server.stop(max(0.0, deadline - loop.time()))
    runner._pool.shutdown(wait=True, cancel_futures=True)


def serve(
    function: str,
    compose: Compose,
    *,
    address: str = DEFAULT_ADDRESS,
    tls_certs_dir: str | None = None,
    insecure: bool = False,
    debug: bool = False,
    max_recv_message_size: int = DEFAULT_MAX_RECV_MB,
    max_send_message_size: int | None = None,
    grace: float = SHUTDOWN_GRACE_SECONDS,
    ttl_seconds: int = int(response.DEFAULT_TTL.total_seconds()),
    address_file: str | None = None,
) -> None:
    """Serve ``compose`` as function ``function`` until SIGTERM/SIGINT (blocking); in-flight calls
    finish first. ``address_file``, when given, receives the address once the server listens (with
    port 0 in ``address``, the one way for a caller to learn the port without a race). The caller looks the function up (``modelplane.functions.load``): this layer knows
    no function by name."""
    arena.tune()   # before gRPC's threads allocate (see arena)
    fnlogging.configure(level=fnlogging.Level.DEBUG if debug else fnlogging.Level.INFO)
    if not insecure and not tls_certs_dir:
        raise SystemExit(
            "modelplane serve: no TLS certificates: pass --tls-certs-dir (or set TLS_SERVER_CERTS_DIR), "
            "or --insecure for local development"
        )
    send = max_send_message_size or max_recv_message_size
    options = [
        ("grpc.max_receive_message_length", max_recv_message_size * 1024 * 1024),
        ("grpc.max_send_message_length", send * 1024 * 1024),
        # gRPC binds with SO_REUSEPORT by default: a second server on a port already taken would
        # share it, and the kernel would hand each connection to either, another function
        # answering. Off, the second bind fails and says so.
        ("grpc.so_reuseport", 0),
    ]
    creds = None if insecure else runtime.load_credentials(tls_certs_dir)
    runner = FunctionRunner(function, compose, ttl=datetime.timedelta(seconds=ttl_seconds))
    asyncio.run(_serve(runner, address, creds, insecure, options, grace, address_file))
