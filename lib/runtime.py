"""The gRPC runtime every Modelplane function runs in.

``FunctionRunner`` adapts a ``compose(c: Composition)`` callable to the
FunctionRunnerService: it seeds desired state with the observed children,
turns ``InputError`` into a FATAL result naming the field, and turns any
other exception into a FATAL "internal error" plus a log line, so one bad
request never kills the server. Work runs on a small thread pool so a slow
request does not block the event loop that accepts the others.

``serve`` starts the server with the SDK's runtime (mTLS from a certificate
directory unless ``insecure``; SIGTERM gives in-flight calls a grace period).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import traceback
from typing import Callable

import grpc
from crossplane.function import logging as fnlogging
from crossplane.function import response, runtime
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from modelplane.errors import InputError
from modelplane.function import Composition, one_line

Compose = Callable[[Composition], None]

# gRPC's default 4 MiB receive limit is too small for large fleets; requests
# are kept small by design, but the server should not be the limit.
DEFAULT_MAX_RECV_MB = 64
DEFAULT_ADDRESS = "0.0.0.0:9443"


def run_compose(function: str, compose: Compose, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
    """Run one composition step synchronously (also used in-process by tests)."""
    rsp = response.to(req)
    c = Composition(req, rsp, function)
    try:
        c.keep_observed()
        compose(c)
        c.finish()
    except InputError as err:
        return _fatal(req, str(err))
    except Exception as err:  # noqa: BLE001 - a bug must not take the server down
        fnlogging.get_logger().error(
            "internal error", function=function, error=repr(err), trace=traceback.format_exc(limit=8)
        )
        return _fatal(req, f"internal error in {function}: {type(err).__name__}: {err}")
    return rsp


def _fatal(req: fnv1.RunFunctionRequest, message: str) -> fnv1.RunFunctionResponse:
    # A fresh response: Crossplane applies nothing on FATAL, and a half-built
    # desired state would only confuse someone reading it.
    rsp = response.to(req)
    response.fatal(rsp, one_line(message))
    return rsp


class FunctionRunner(grpcv1.FunctionRunnerServiceServicer):
    """Serves one Modelplane function over gRPC."""

    def __init__(self, function: str, compose: Compose, workers: int = 4):
        self.function = function
        self.compose = compose
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix=function)

    async def RunFunction(  # noqa: N802 - gRPC method name
        self, req: fnv1.RunFunctionRequest, context: grpc.aio.ServicerContext | None = None
    ) -> fnv1.RunFunctionResponse:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, run_compose, self.function, self.compose, req)


def serve(
    function: str,
    *,
    address: str = DEFAULT_ADDRESS,
    tls_certs_dir: str | None = None,
    insecure: bool = False,
    debug: bool = False,
    max_recv_message_size: int = DEFAULT_MAX_RECV_MB,
    max_send_message_size: int | None = None,
) -> None:
    """Serve ``function`` until SIGTERM/SIGINT (blocking)."""
    from modelplane.functions import load

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
    ]
    creds = None if insecure else runtime.load_credentials(tls_certs_dir)
    runtime.serve(FunctionRunner(function, load(function)), address, creds=creds, insecure=insecure, options=options)
