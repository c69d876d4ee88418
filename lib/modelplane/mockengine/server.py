"""The HTTP server: one thread per connection, HTTP/1.1 keep-alive, no weights.

Routes (anything else is 404, a known path with the wrong method 405):

==========================  =========================================================
``GET /v1/models``          the served names
``POST /v1/chat/completions``  chat, whole or streamed (SSE)
``POST /v1/completions``    text completion, whole or streamed (SSE)
``GET /health``             200 when ready, 503 before ``ready_after`` or when flipped
``GET /metrics``            Prometheus text, the engine's own metric names (``metrics``)
``POST /mock/health``       mock only: ``{"ready": false}`` makes the replica unready
==========================  =========================================================

Every response, errors included, carries ``X-Modelplane-Answered-By``
(``Identity.header()``). Robustness: a body over ``max_body`` bytes is refused
from its Content-Length before it is read (413), bad JSON is 400, a client
that stops sending for ``read_timeout`` seconds gets 408 (mid-body) or a closed
connection (between requests). ``max_running`` caps concurrent requests; the
rest wait, counted as waiting. ``service_time`` is spent per request, spread
over the tokens when streaming.

Pacing for tests of what sits in front (a gateway's route timeout): ``token_delay``
seconds pass before each token, on top of ``service_time``'s share; a request may
set its own with the header ``X-Mock-Token-Delay: S`` (0 to ``MAX_TOKEN_DELAY``),
so one long stream needs no engine of its own. The mock's answer has five or six
tokens: a delay of 5 s makes a stream of about half a minute.
"""
from __future__ import annotations

import json
import socket
import socketserver
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from modelplane import clock
from modelplane.mockengine import openai
from modelplane.mockengine.config import EngineConfig, Identity
from modelplane.mockengine.metrics import Metrics

HEADER = "X-Modelplane-Answered-By"
DELAY_HEADER = "X-Mock-Token-Delay"
MAX_TOKEN_DELAY = 60.0   # seconds; a bound, so a typo cannot hold a connection for hours
MiB = 1024 * 1024
ROUTES = {
    "/v1/models": "GET",
    "/v1/chat/completions": "POST",
    "/v1/completions": "POST",
    "/health": "GET",
    "/metrics": "GET",
    "/mock/health": "POST",
}


@dataclass(frozen=True)
class Options:
    """How the mock behaves beyond what the engine's flags say."""

    service_time: float = 0.0      # seconds per request (streaming: spread over the tokens)
    token_delay: float = 0.0       # seconds before each token, on top (a request's X-Mock-Token-Delay wins)
    max_running: int = 0           # concurrent requests; 0 = no limit
    ready_after: float = 0.0       # /health is 503 for this long after start
    max_body: int = MiB            # request bodies above this are refused (413)
    read_timeout: float = 10.0     # a silent client is cut off after this long
    access_log: bool = False       # one stderr line per request


DEFAULTS = Options()
NOBODY = Identity()   # nothing known: the header is sent empty


class Engine:
    """The state one server shares between its connections: load, health, metrics."""

    def __init__(self, config: EngineConfig, identity: Identity, options: Options):
        self.config, self.identity, self.options = config, identity, options
        self.metrics = Metrics(config.engine, config.served_names[0], capacity=options.max_running or 256)
        self.header = identity.header()
        self.created = int(clock.now().timestamp())
        self._ready_at = time.monotonic() + max(0.0, options.ready_after)
        self._ready_flag = True
        self._running = 0
        self._waiting = 0
        self._load = threading.Condition()

    def who(self, path: str) -> dict:
        i = self.identity
        return {"cluster": i.cluster, "namespace": i.namespace, "pod": i.pod, "deployment": i.deployment,
                "replica": i.replica, "revision": i.revision, "engine": i.engine,
                "server": self.config.engine, "path": path}

    @property
    def ready(self) -> bool:
        return self._ready_flag and time.monotonic() >= self._ready_at

    def set_ready(self, ready: bool) -> None:
        """Flip health (``POST /mock/health``); ready also ends the ``ready_after`` wait."""
        self._ready_flag = ready
        if ready:
            self._ready_at = min(self._ready_at, time.monotonic())

    @contextmanager
    def admitted(self):
        """Hold one of ``max_running`` slots for the body of the ``with``; wait (counted) for one."""
        limit = self.options.max_running
        with self._load:
            self._waiting += 1
            self.metrics.set_load(self._running, self._waiting)
            while limit and self._running >= limit:
                self._load.wait()
            self._waiting -= 1
            self._running += 1
            self.metrics.set_load(self._running, self._waiting)
        try:
            yield
        finally:
            with self._load:
                self._running -= 1
                self.metrics.set_load(self._running, self._waiting)
                self._load.notify()


class _Closed(Exception):
    """The connection must end now (the answer, if any, is already sent)."""


class Handler(BaseHTTPRequestHandler):
    """One connection. ``engine`` is set on a subclass per server."""

    engine: Engine
    _responded = False
    _chunked = True
    protocol_version = "HTTP/1.1"
    server_version = "modelplane-mock-engine"
    disable_nagle_algorithm = True   # SSE chunks leave at once

    # --- plumbing --------------------------------------------------------------------------

    def send_response(self, code: int, message: str | None = None) -> None:
        self._responded = True
        super().send_response(code, message)
        self.send_header(HEADER, self.engine.header)   # even empty: every answer says who it is

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:
        if self.engine.options.access_log:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj: Any, extra: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json", extra)

    def _error(self, err: openai.RequestError) -> None:
        self._json(err.status, openai.error_body(err.status, err.err_type, err.message, err.param))

    def _read_body(self) -> bytes:
        limit = self.engine.options.max_body
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self._read_chunked(limit)
        raw = self.headers.get("Content-Length")
        if raw is None:
            return b""
        try:
            length = int(raw)
            if length < 0:
                raise ValueError(raw)
        except ValueError:
            self.close_connection = True
            raise openai.bad_request(f"invalid Content-Length {raw!r}") from None
        if length > limit:
            self.close_connection = True   # the body stays unread
            raise openai.RequestError(413, "RequestEntityTooLarge",
                                      f"request body of {length} bytes is over the limit of {limit}")
        return self._read_exactly(length)

    def _read_exactly(self, n: int) -> bytes:
        data = self.rfile.read(n)
        if len(data) < n:
            self.close_connection = True
            raise _Closed()
        return data

    def _read_chunked(self, limit: int) -> bytes:
        parts, total = [], 0
        while True:
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b";", 1)[0].strip() or b"x", 16)
            except ValueError:
                self.close_connection = True
                raise openai.bad_request("malformed chunked body") from None
            if size == 0:
                while self.rfile.readline(1024).strip():
                    pass   # trailers
                return b"".join(parts)
            total += size
            if total > limit:
                self.close_connection = True
                raise openai.RequestError(413, "RequestEntityTooLarge",
                                          f"request body is over the limit of {limit} bytes")
            parts.append(self._read_exactly(size))
            self._read_exactly(2)   # CRLF

    def _drain(self) -> None:
        try:
            self._read_body()
        except openai.RequestError:
            self.close_connection = True   # too big or malformed: answer, then hang up

    def _read_json(self) -> Any:
        body = self._read_body()
        try:
            return json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
            raise openai.bad_request(f"the body is not valid JSON: {err}") from None

    # --- dispatch --------------------------------------------------------------------------

    def _dispatch(self) -> None:
        self._responded = False
        path = self.path.split("?", 1)[0]
        try:
            allowed = ROUTES.get(path)
            if allowed is None or self.command != allowed or path in ("/v1/models", "/health", "/metrics"):
                self._drain()   # a body nobody reads would be taken for the next request
            if allowed is None:
                self._json(404, {"detail": "Not Found"})
            elif self.command != allowed and not (self.command == "HEAD" and allowed == "GET"):
                self._json(405, {"detail": "Method Not Allowed"}, {"Allow": allowed})
            elif path in ("/v1/chat/completions", "/v1/completions"):
                self._complete("chat" if path.endswith("chat/completions") else "completion", path)
            elif path == "/v1/models":
                c = self.engine.config
                self._json(200, openai.model_list(c.served_names, c.model, c.engine, self.engine.who(path),
                                                  self.engine.created))
            elif path == "/health":
                self._send(200 if self.engine.ready else 503, b"", "application/json")
            elif path == "/metrics":
                self._send(200, self.engine.metrics.render().encode(), "text/plain; version=0.0.4; charset=utf-8")
            else:
                self._mock_health()
        except openai.RequestError as err:
            self._error(err)
        except _Closed:
            self.close_connection = True
        except TimeoutError:
            self.close_connection = True
            if not self._responded:   # a body that stopped arriving; mid-answer, just hang up
                try:
                    self._json(408, openai.error_body(408, "RequestTimeout", "the request body did not arrive in time"))
                except OSError:
                    pass
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as err:  # noqa: BLE001 - our bug: answer 500 and hang up, never leave a client waiting
            self.close_connection = True
            sys.stderr.write(f"mock-engine: {self.command} {self.path}: {err!r}\n")
            if not self._responded:
                try:
                    self._json(500, openai.error_body(500, "InternalServerError", f"mock engine bug: {err!r}"))
                except OSError:
                    pass

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _dispatch

    def _mock_health(self) -> None:
        body = self._read_json()
        if not isinstance(body, dict) or not isinstance(body.get("ready"), bool):
            raise openai.bad_request('send {"ready": true} or {"ready": false}', "ready")
        self.engine.set_ready(body["ready"])
        self._json(200, {"ready": self.engine.ready})

    # --- completions -----------------------------------------------------------------------

    def _complete(self, kind: str, path: str) -> None:
        arrival = time.monotonic()
        engine = self.engine
        request = openai.parse(kind, self._read_json(), engine.config.served_names)
        delay = self._token_delay()
        tokens, reason = openai.answer_tokens(engine.identity.pod, request.model, request.max_tokens)
        response = openai.Response(request, engine.who(path), tokens, reason)
        pause = engine.options.service_time / max(1, len(tokens)) + delay
        sent, finished = 0, False
        try:
            with engine.admitted():
                if request.stream:
                    self._start_stream()
                    first = response.opening()
                    if first:
                        self._event(first)
                last = arrival
                for i in range(len(tokens)):
                    if pause:
                        time.sleep(pause)
                    now = time.monotonic()
                    (engine.metrics.observe_ttft if i == 0 else engine.metrics.observe_itl)(now - last)
                    last = now
                    if request.stream:
                        self._event(response.token(i))
                    sent = i + 1
                # The engine is done before the last bytes leave, as a real one is: a client that reads
                # /metrics right after its answer sees it counted and no longer running.
                engine.metrics.finish(reason, request.prompt_tokens, len(tokens))
                finished = True
            if request.stream:
                for chunk in response.closing():
                    self._event(chunk)
                self._write_chunk(b"data: [DONE]\n\n")
                self._write_chunk(b"")
            else:
                self._json(200, response.whole())
        except (OSError, TimeoutError):
            if not finished:
                engine.metrics.finish("abort", request.prompt_tokens, sent)
            raise

    def _token_delay(self) -> float:
        """This request's pause before each token: its ``X-Mock-Token-Delay``, else the engine's."""
        raw = self.headers.get(DELAY_HEADER)
        if raw is None:
            return self.engine.options.token_delay
        try:
            delay = float(raw)
        except ValueError:
            delay = -1.0
        if not 0.0 <= delay <= MAX_TOKEN_DELAY:   # also NaN
            raise openai.bad_request(f"header {DELAY_HEADER}: {raw!r} is not a number of seconds from 0 to "
                                     f"{MAX_TOKEN_DELAY:g}; send e.g. {DELAY_HEADER}: 5", DELAY_HEADER)
        return delay

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self._chunked = self.request_version != "HTTP/1.0"
        if self._chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:   # an HTTP/1.0 client reads until the connection closes
            self.close_connection = True
            self.send_header("Connection", "close")
        self.end_headers()

    def _event(self, obj: dict) -> None:
        self._write_chunk(b"data: " + json.dumps(obj).encode() + b"\n\n")

    def _write_chunk(self, data: bytes) -> None:
        if self._chunked:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        elif data:
            self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def server_bind(self) -> None:
        # HTTPServer.server_bind asks DNS for the host's FQDN; a lab network namespace may have none.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), int(self.server_address[1])

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A connection that broke is the client's business; never a traceback on stderr for it.
        pass


class MockEngine:
    """A bound server; ``serve_forever`` in the caller's thread, or ``start()`` in a new one."""

    def __init__(self, config: EngineConfig, identity: Identity, host: str | None = None,
                 port: int | None = None, options: Options = DEFAULTS):
        self.engine = Engine(config, identity, options)
        handler = type("BoundHandler", (Handler,), {"engine": self.engine, "timeout": options.read_timeout})
        address = (config.host if host is None else host, config.port if port is None else port)
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        server_class = type("BoundServer", (_Server,), {"address_family": family})
        self.server = server_class(address, handler)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        host = str(self.server.server_address[0]) or "127.0.0.1"
        return f"http://{'127.0.0.1' if host in ('', '0.0.0.0') else host}:{self.port}"

    @property
    def metrics(self) -> Metrics:
        return self.engine.metrics

    def set_ready(self, ready: bool) -> None:
        self.engine.set_ready(ready)

    def serve_forever(self) -> None:
        self.server.serve_forever(poll_interval=0.2)

    def start(self) -> MockEngine:
        self._thread = threading.Thread(target=self.serve_forever, name="mock-engine", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop accepting, close the socket; connections in flight end with the process."""
        if self._thread is not None:
            self.server.shutdown()
            self._thread.join(timeout=5)
        self.server.server_close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start(config: EngineConfig, identity: Identity = NOBODY, host: str | None = None,
          port: int | None = None, options: Options = DEFAULTS) -> MockEngine:
    """A mock engine serving in a background thread (for in-process tests: ``port=0``)."""
    return MockEngine(config, identity, host, port, options).start()


def serve(config: EngineConfig, identity: Identity = NOBODY, host: str | None = None,
          port: int | None = None, options: Options = DEFAULTS, ready_event: threading.Event | None = None,
          stop_event: threading.Event | None = None) -> None:
    """Serve until ``stop_event`` is set (blocking); ``ready_event`` is set once the port is bound."""
    engine = start(config, identity, host, port, options)
    try:
        if ready_event is not None:
            ready_event.set()
        (stop_event or threading.Event()).wait()
    finally:
        engine.close()
