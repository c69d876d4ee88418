"""CEL for Modelplane: device selectors (DRA) and validation rules (Kubernetes).

Public surface (the engine, cel-python, stays inside :mod:`.adapter`)::

    compile(expr, library="dra") -> Program    # cached per process
    Program.evaluate(activation) -> value      # raises CELError
    evaluate_rule(expr, self_value, old_self=None) -> (ok, error)
    Device.from_class_device(d); match(expr, device) -> MatchResult
    transient_rejections() -> int              # this thread's CPU-deadline rejections so far
    stats() / reset_stats()

Errors: CELError, and CELRejected (a CELError) for guard failures.

Modules: ``adapter`` (the one module that talks to cel-python), ``library``
(the DRA and Kubernetes function libraries, in plain Python), ``device`` (DRA
devices as CEL sees them; selector matching with a memo), ``guards`` (limits
checked before parsing), ``errors`` (the error tree), ``stats`` (counters of
real CEL work).
"""
from .adapter import Program, compile, evaluate_rule
from .device import Device, DeviceError, MatchResult, match, transient_rejections
from .errors import CELError, CELRejected
from .stats import reset_stats, stats

__all__ = [
    "CELError",
    "CELRejected",
    "Device",
    "DeviceError",
    "MatchResult",
    "Program",
    "compile",
    "evaluate_rule",
    "match",
    "reset_stats",
    "stats",
    "transient_rejections",
]
