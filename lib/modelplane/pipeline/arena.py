"""How a function server's C heap holds the large requests of a big fleet (glibc).

At fleet scale a request is tens of megabytes (28 MB at 10,000 clusters),
and gRPC's receive path copies it several times over, in its own threads and
in the worker that decodes it. By default glibc gives a thread that finds the
heap busy an arena of its own (up to eight per core) and keeps what is freed
in each, so several arenas end up holding a request's worth of free pages:
a grpcio server that does nothing with twenty 28 MB requests peaks at 212
MiB, 126 with one arena. One arena alone gives the freed top of the heap
back to the system after each call, and the next call faults it in again
(compose-model-deployment at 10,000 clusters, steady call: 21 -> 50 ms). So:

- one arena (``M_ARENA_MAX``): Python allocates under the GIL, so the
  server's threads seldom wait on its lock;
- keep up to 128 MiB free at the top of that heap (``M_TRIM_THRESHOLD``):
  the next request reuses the pages of the last;
- allocate blocks up to 32 MiB (glibc's largest) from the heap, not each
  from a fresh mapping (``M_MMAP_THRESHOLD``): the same reuse, from the
  first call on.

Measured at 10,000 clusters, 67 calls, two runs each (``python -m tests.bench
grpc`` rows; docs/platform/fleet-scale.md): peak RSS 305-335 -> 241 MiB, the
same latency (steady 20-23 ms, placing 65-74 ms).

The settings must be made before the threads allocate: ``serve`` calls
``tune`` before it starts gRPC. An operator who sets any of glibc's
``MALLOC_ARENA_MAX``, ``MALLOC_TRIM_THRESHOLD_`` or ``MALLOC_MMAP_THRESHOLD_``
(or ``GLIBC_TUNABLES``) decides instead; other C libraries (musl) are left
alone.
"""
from __future__ import annotations

import ctypes
import os
from collections.abc import Mapping

# glibc malloc.h: mallopt parameters
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8

SETTINGS = ((M_ARENA_MAX, 1), (M_TRIM_THRESHOLD, 128 << 20), (M_MMAP_THRESHOLD, 32 << 20))
OPERATOR_ENV = ("MALLOC_ARENA_MAX", "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES")


def tune(environ: Mapping[str, str] | None = None) -> bool:
    """Make ``SETTINGS`` unless the environment set the heap up; whether they were all made."""
    env = os.environ if environ is None else environ
    if any(name in env for name in OPERATOR_ENV):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):   # not glibc
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    made = [mallopt(param, value) for param, value in SETTINGS]   # each, even if one is refused
    return all(ok == 1 for ok in made)
