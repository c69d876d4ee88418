"""Room to recurse through the deepest document the readers accept.

The readers take documents up to ``nodes.MAX_DEPTH`` (10,000) levels deep, as
``crossplane render`` and kubectl do, and read them without recursion. What
runs next recurses once or more per level: encoding the request
(``pipeline.structwire``), ``copy.deepcopy``, the schema walk of
``validate``, writing YAML out. Python stops at 1,000 frames, and the main
thread's C stack (8 MiB) is too small to raise that much. So :func:`call` runs
a command in a worker thread with a ``STACK_BYTES`` stack and the recursion
limit at ``RECURSION_LIMIT``, and puts the limit back afterwards.

Measured on a 10,000-level document (Python 3.11): encoding it and deep-copying
it need a limit between 12,000 and 25,000, printing it as YAML between 25,000
and 40,000; the stack is reserved address space, and only what a call
touches is resident: a render that reads, encodes and sends such an XR peaks
at 61 MB, the same as one of 5,000 levels (57 MB).
"""
from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

from modelplane.render.nodes import MAX_DEPTH

__all__ = ["RECURSION_LIMIT", "STACK_BYTES", "call"]

T = TypeVar("T")

RECURSION_LIMIT = 5 * MAX_DEPTH + 1_000  # up to 5 frames per level, and the command's own
STACK_BYTES = 512 << 20

_NAME = "deep-stack"


def call(command: Callable[[], T]) -> T:
    """``command()`` in a worker thread with room for ``RECURSION_LIMIT`` frames; its result or its exception.

    Called from such a worker, it runs ``command`` there. The limit is the interpreter's, so
    commands run one at a time (the command line runs one)."""
    if threading.current_thread().name == _NAME:
        return command()
    outcome: list = []

    def work() -> None:
        try:
            outcome.append((True, command()))
        except BaseException as err:  # noqa: BLE001 - handed to the caller's thread, re-raised there
            outcome.append((False, err))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        previous = threading.stack_size(STACK_BYTES)
        try:
            # A daemon: Ctrl-C ends the main thread's wait, and the process exits without it.
            worker = threading.Thread(target=work, name=_NAME, daemon=True)
            worker.start()
        finally:
            threading.stack_size(previous)
        worker.join()
    finally:
        sys.setrecursionlimit(limit)
    ok, value = outcome[0]
    if not ok:
        raise value
    return value
