"""Loopback networking for the programs Modelplane starts on this machine.

Every server a command or a test starts (function servers, etcd, API servers,
controllers, Crossplane, the registry) listens on 127.0.0.1 at a port the
kernel picked, and everything here talks to such a server:

    free_port()                             a port to start a server on
    tcp_open(port)                          does anything accept connections there?
    http_ok(url, timeout=1)                 a readiness probe: 200, or False
    read_url(url, timeout=2)                the body (raises OSError: not up, or an error status)
    open_url(url, timeout=2)                the response itself
    opener(context)                         for a client with its own TLS context (``kube.client``)

No opener here uses a proxy: an ``http_proxy``/``https_proxy`` set in the
environment (CI runners and corporate laptops have them) would send loopback
traffic to the proxy, which cannot reach this machine's 127.0.0.1.
``insecure=True`` skips certificate checks, for the self-signed serving
certificates the controllers make for themselves; it is refused for anything
but loopback.
"""
from __future__ import annotations

import functools
import socket
import ssl
import urllib.parse
import urllib.request
from http.client import HTTPResponse

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago.

    Another process may take it before ours binds it: callers that start a
    server on it retry on "address already in use" (``kube.process.start_ready``)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tcp_open(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    """Does ``host:port`` accept a TCP connection (a gRPC server listening)?"""
    with socket.socket() as s:
        s.settimeout(timeout)
        return s.connect_ex((host, port)) == 0


def opener(context: ssl.SSLContext | None = None) -> urllib.request.OpenerDirector:
    """An opener that ignores proxy settings (module doc), with ``context`` for HTTPS when given."""
    handlers: list[urllib.request.BaseHandler] = [urllib.request.ProxyHandler({})]
    if context is not None:
        handlers.append(urllib.request.HTTPSHandler(context=context))
    return urllib.request.build_opener(*handlers)


@functools.cache
def _opener(insecure: bool) -> urllib.request.OpenerDirector:
    # Built on first use: a TLS context loads the system's CA store, which `modelplane render`
    # (it imports this module for free_port) never needs.
    if not insecure:
        return opener()
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return opener(ctx)


def open_url(url: str, *, timeout: float = 2.0, insecure: bool = False) -> HTTPResponse:
    """GET ``url`` (use it in ``with``). Raises OSError when nobody answers and
    ``urllib.error.HTTPError`` (an OSError too) on an error status."""
    if insecure and urllib.parse.urlsplit(url).hostname not in LOOPBACK:
        raise ValueError(f"certificate checks are skipped on loopback only, not for {url}")
    return _opener(insecure).open(url, timeout=timeout)


def read_url(url: str, *, timeout: float = 2.0, insecure: bool = False) -> bytes:
    """The body of a GET; raises as ``open_url`` does."""
    with open_url(url, timeout=timeout, insecure=insecure) as rsp:
        return rsp.read()


def http_ok(url: str, *, timeout: float = 1.0, insecure: bool = False) -> bool:
    """A readiness probe: True when ``url`` answers 200, False when it answers anything
    else or nothing (not listening yet, refused, an error status)."""
    try:
        with open_url(url, timeout=timeout, insecure=insecure) as rsp:
            return rsp.status == 200
    except OSError:
        return False
