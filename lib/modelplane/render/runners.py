"""How render reaches each function: dial it, or start it here.

A Function manifest's ``render.crossplane.io/runtime`` annotation decides:

- ``Development``: dial ``render.crossplane.io/runtime-development-target``
  (gRPC target syntax, default ``localhost:9443``); the function runs already.
- ``Docker`` or no annotation: there is no Docker engine here, so a function
  this package ships (its Function name, or the last path segment of
  ``spec.package``, names a registered Modelplane function) is started as
  ``modelplane serve NAME --insecure --address 127.0.0.1:<free port>``;
  anything else is an error that says how to use the Development runtime.
- any other value is an error.

``FunctionPool`` owns the processes, in-process servers and channels. It
starts each function once and keeps it for as many renders as the caller
runs (``modelplane simulate`` renders many XRs through the same functions);
closing it stops processes with SIGTERM. Calls use gRPC wait-for-ready under
the caller's deadline, so a target nobody serves fails at the deadline.
"""
from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from modelplane.kube.net import free_port, tcp_open
from modelplane.kube.process import ComponentError, Process
from modelplane.pipeline import PARENT_PID_ENV
from modelplane.render.errors import RenderError
from modelplane.render.wire import WireRequest

ANNOTATION_RUNTIME = "render.crossplane.io/runtime"
ANNOTATION_TARGET = "render.crossplane.io/runtime-development-target"
DEFAULT_TARGET = "localhost:9443"
_METHODS = (
    "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction",
    # Crossplane retries the identical v1beta1 service when v1 is unimplemented.
    "/apiextensions.fn.proto.v1beta1.FunctionRunnerService/RunFunction",
)
_STOP_GRACE = 5.0


def _serialize(req: fnv1.RunFunctionRequest | WireRequest) -> bytes:
    return req.SerializeToString()


@dataclass(frozen=True)
class Development:
    """Dial a function that is already running."""

    target: str


@dataclass(frozen=True)
class Local:
    """Start a Modelplane function from this package."""

    function: str


def _package_function(fn: dict) -> str | None:
    """The Modelplane function a Function manifest names, if this build has it."""
    from modelplane import functions

    names = [functions.canonical(str((fn.get("metadata") or {}).get("name", "")))]
    package = str((fn.get("spec") or {}).get("package", ""))
    if package:
        last = package.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]
        names.append(functions.canonical(last))
    have = set(functions.available())
    return next((n for n in names if n in have), None)


def runtime_for(fn: dict) -> Development | Local:
    """Decide how to reach a Function, from its annotations and package."""
    annotations = (fn.get("metadata") or {}).get("annotations") or {}
    kind = annotations.get(ANNOTATION_RUNTIME, "Docker")
    if kind == "Development":
        return Development(annotations.get(ANNOTATION_TARGET) or DEFAULT_TARGET)
    if kind != "Docker":
        raise RenderError(f'unsupported "{ANNOTATION_RUNTIME}" annotation value "{kind}" (unknown runtime)')
    local = _package_function(fn)
    if local is None:
        raise RenderError(
            f"no Docker engine here to run package \"{(fn.get('spec') or {}).get('package', '')}\"; "
            f"set the {ANNOTATION_RUNTIME}: Development annotation (and {ANNOTATION_TARGET}) "
            "to dial a running function, or name a Modelplane function"
        )
    return Local(local)


def serve_command(function: str, address: str) -> list[str]:
    """The command that serves a Modelplane function locally."""
    return [sys.executable, "-m", "modelplane.cli", "serve", function, "--insecure", "--address", address]


def _refused(target: str) -> str | None:
    """``ip:port`` as Go prints it when ``target`` (an IP literal) refuses connections, else None.

    Go's gRPC reports the last dial error when a wait-for-ready call times out;
    Python's only says the deadline passed. Asking the port once more gives
    the same words, so an unstarted function reads the same in both CLIs."""
    host, sep, port = target.rpartition(":")
    host = host.strip("[]")
    try:
        ip = ipaddress.ip_address(host)
        port_number = int(port)
    except ValueError:
        return None
    if not sep:
        return None
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    with socket.socket(family) as sock:
        sock.settimeout(0.5)
        try:
            sock.connect((host, port_number))
        except ConnectionRefusedError:
            return f"[{host}]:{port}" if ip.version == 6 else f"{host}:{port}"
        except OSError:
            return None
    return None


def _go_code(code: grpc.StatusCode) -> str:
    return "".join(part.capitalize() for part in code.name.split("_"))


class InProcessServer:
    """A grpc.aio server on 127.0.0.1:0 in a background thread (for tests and simulate)."""

    def __init__(self, servicer: grpcv1.FunctionRunnerServiceServicer):
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="render-inprocess", daemon=True)
        self._thread.start()
        self.port = asyncio.run_coroutine_threadsafe(self._start(servicer), self._loop).result(30)
        self.target = f"127.0.0.1:{self.port}"

    async def _start(self, servicer) -> int:
        self._server = grpc.aio.server()
        grpcv1.add_FunctionRunnerServiceServicer_to_server(servicer, self._server)
        port = self._server.add_insecure_port("127.0.0.1:0")
        await self._server.start()
        return port

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._server.stop(None), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._loop.close()


class FunctionPool:
    """Function name -> a live gRPC endpoint, kept across renders.

    ``command(function, address)`` builds the argv that serves a Modelplane
    function (tests substitute their own).
    """

    def __init__(self, command: Callable[[str, str], list[str]] | None = None):
        # Our own servers bind port 0 and write the port they got to a file (serve --address-file):
        # a port picked beforehand could be taken by another server first, and then that server
        # would be dialled. A substituted command gets a free port and is probed on it.
        self._command = command
        self._files = tempfile.TemporaryDirectory(prefix="modelplane-fns-") if command is None else None
        self._targets: dict[str, str] = {}  # Function name -> target
        self._pinned: dict[str, str] = {}  # names served in process, never re-resolved
        self._processes: dict[str, tuple[Process, str]] = {}  # Modelplane function -> (process, target)
        self._listening: set[Process] = set()  # seen listening: not dialled again on every render
        self._servers: list[InProcessServer] = []
        self._channels: dict[str, grpc.Channel] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> FunctionPool:  # noqa: PYI034
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----- endpoints ---------------------------------------------------------
    def serve_in_process(self, name: str, servicer: grpcv1.FunctionRunnerServiceServicer) -> str:
        """Serve Function ``name`` from ``servicer`` in this process; returns its target."""
        server = InProcessServer(servicer)
        self._servers.append(server)
        self._targets[name] = self._pinned[name] = server.target
        return server.target

    def start(self, functions: list[dict], deadline: float) -> None:
        """Make every Function reachable, starting local processes once.

        Local processes are all spawned first and awaited afterwards, so
        their start-up times overlap instead of adding up.
        """
        local: list[tuple[str, str]] = []
        for fn in functions:
            name = str((fn.get("metadata") or {}).get("name", ""))
            if name in self._pinned:
                continue
            try:
                rt = runtime_for(fn)
                if isinstance(rt, Development):
                    self._targets[name] = rt.target
                else:
                    self._spawn(rt.function)
                    local.append((name, rt.function))
            except RenderError as err:
                raise err.wrap(f'cannot start Function "{name}"').wrap("cannot start function runtimes") from None
        for name, function in local:
            try:
                self._targets[name] = self._local(function, deadline)
            except RenderError as err:
                raise err.wrap(f'cannot start Function "{name}"').wrap("cannot start function runtimes") from None

    def _spawn(self, function: str) -> None:
        with self._lock:
            if function in self._processes and self._processes[function][0].alive():
                return
            if self._command is None:
                target = str(Path(self._files.name) / function)  # the address file, until it is read
                Path(target).unlink(missing_ok=True)
                argv = [*serve_command(function, "127.0.0.1:0"), "--address-file", target]
            else:
                target = f"127.0.0.1:{free_port()}"
                argv = self._command(function, target)
            # No log file and the terminal's process group: a function server is part of this
            # command, leaves nothing behind and gets the terminal's Ctrl-C with it.
            process = Process(function, argv, env={PARENT_PID_ENV: str(os.getpid())}, own_session=False,
                              grace=_STOP_GRACE)
            self._processes[function] = (process, target)

    def _local(self, function: str, deadline: float) -> str:
        self._spawn(function)
        process, target = self._processes[function]
        if process in self._listening and process.alive():
            return target  # seen listening, still running: no need to dial again on every render
        # Poll the address file, or the port, rather than a gRPC connectivity future: those leave
        # a polling thread behind that fails loudly once the channel closes.
        if self._command is None:
            probe = Path(target).exists
        else:
            port = int(target.rpartition(":")[2])
            probe = lambda: tcp_open(port, timeout=0.1)
        try:
            process.wait_ready(probe, deadline - time.monotonic(), interval=0.02)
        except ComponentError:
            if not process.alive():
                raise RenderError(f"function {function!r} exited with code {process.proc.returncode}: "
                                  f"{process.output().strip()[-2000:]}") from None
            where = "" if self._command is None else f" on {target}"
            raise RenderError(f"function {function!r} did not start listening{where} before the deadline") from None
        if self._command is None:
            target = Path(target).read_text().strip()
            self._processes[function] = (process, target)
        self._listening.add(process)
        return target

    def _channel(self, target: str) -> grpc.Channel:
        with self._lock:
            if target not in self._channels:
                mb = 64 * 1024 * 1024
                # A local function is dialled while it is still starting: keep
                # gRPC's reconnect backoff short (its default grows to ~20 s).
                options = [
                    ("grpc.max_receive_message_length", mb),
                    ("grpc.max_send_message_length", mb),
                    ("grpc.initial_reconnect_backoff_ms", 50),
                    ("grpc.min_reconnect_backoff_ms", 50),
                    ("grpc.max_reconnect_backoff_ms", 250),
                ]
                self._channels[target] = grpc.insecure_channel(target, options=options)
            return self._channels[target]

    # ----- calls ---------------------------------------------------------------
    def run(self, name: str, req: fnv1.RunFunctionRequest | WireRequest, deadline: float) -> fnv1.RunFunctionResponse:
        """One RunFunction call to Function ``name`` under ``deadline`` (time.monotonic())."""
        target = self._targets.get(name)
        if target is None:
            raise RenderError(f'unknown Function "{name}" - does it exist in your Functions file?')
        channel = self._channel(target)
        for method in _METHODS:
            call = channel.unary_unary(
                method,
                # A message, or a render.wire.WireRequest: both serialise themselves.
                request_serializer=_serialize,
                response_deserializer=fnv1.RunFunctionResponse.FromString,
            )
            try:
                return call(req, timeout=max(0.0, deadline - time.monotonic()), wait_for_ready=True)
            except grpc.RpcError as err:
                code = err.code()
                if code == grpc.StatusCode.UNIMPLEMENTED and method == _METHODS[0]:
                    continue
                if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                    refused = _refused(target)
                    raise RenderError(
                        "rpc error: code = DeadlineExceeded desc = "
                        + (f'latest balancer error: connection error: desc = "transport: Error while dialing: '
                           f'dial tcp {refused}: connect: connection refused"' if refused else
                           "context deadline exceeded")
                    ) from None
                raise RenderError(f"rpc error: code = {_go_code(code)} desc = {err.details()}") from None
        raise AssertionError("unreachable: the v1beta1 attempt returns or raises")

    def close(self) -> None:
        """Close channels, stop processes (SIGTERM) and in-process servers."""
        for channel in self._channels.values():
            channel.close()
        self._channels.clear()
        for process, _ in self._processes.values():
            process.terminate()  # every SIGTERM first: the shutdowns overlap
        for process, _ in self._processes.values():
            process.stop()
        self._processes.clear()
        self._listening.clear()
        for server in self._servers:
            server.stop()
        self._servers.clear()
        self._targets.clear()
        self._pinned.clear()
        if self._files is not None:
            self._files.cleanup()
            self._files = tempfile.TemporaryDirectory(prefix="modelplane-fns-")


def pid_of(pool: FunctionPool, function: str) -> int | None:
    """The process id serving a local Modelplane function (for tests and diagnostics)."""
    entry = pool._processes.get(function)
    return entry[0].pid if entry else None


__all__ = ["Development", "FunctionPool", "InProcessServer", "Local", "pid_of", "runtime_for", "serve_command"]
