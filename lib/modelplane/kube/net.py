"""Loopback networking for the programs Modelplane starts on this machine.

Every server a command or a test starts (function servers, etcd, API servers,
Crossplane, the registry) listens on 127.0.0.1 at a port the kernel picked.
"""
from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago.

    Another process may take it before ours binds it: callers that start a
    server on it retry on "address already in use" (``kube.process``)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
