"""Process-wide counters of real CEL work, for benchmarks and tests.

``compiles`` counts parses (cache misses), ``evaluations`` counts engine
evaluations, ``memo_hits`` counts device matches answered from the memo.
Counters only grow until :func:`reset_stats`; they are guarded by a lock
because the function server evaluates from several threads.
"""
from __future__ import annotations

import threading

__all__ = ["record", "reset_stats", "stats"]

_NAMES = ("compiles", "evaluations", "memo_hits")
_lock = threading.Lock()
_counts = dict.fromkeys(_NAMES, 0)


def record(name: str, n: int = 1) -> None:
    """Add ``n`` to counter ``name`` (one of compiles, evaluations, memo_hits)."""
    with _lock:
        _counts[name] += n


def stats() -> dict[str, int]:
    """A snapshot of the counters."""
    with _lock:
        return dict(_counts)


def reset_stats() -> None:
    """Set every counter back to zero."""
    with _lock:
        for name in _NAMES:
            _counts[name] = 0
