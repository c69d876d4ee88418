"""Where one compose-model-deployment call spends its time, measured in-process with perf_counter.

The server's path for a call is ``decode_request`` (the request's bytes split,
the small rest decoded), ``run_compose`` (the SDK response, ``Composition``,
``keep_observed``, the function's ``compose``, ``finish``) and
``SerializeToString``. ``compose`` is one function (functions/compose-model-
deployment/fn.py), so its steps are timed by wrapping, for the duration of a
measurement, the names it calls: its module globals ``parse``, ``plan``,
``schedule``, ``children`` and ``inputs.read_clusters``, and ``Composition``'s
``keep_observed``, ``desire`` and ``finish``. Nothing in lib/ changes; the
wrappers add a few microseconds per wrapped call (about 20 calls per request).
What no wrapper covers (reading classes, services and observed children,
drain, status fields, conditions) is the "other" row.
"""
from __future__ import annotations

import contextlib
import statistics
import time
from collections import defaultdict
from collections.abc import Iterator

from modelplane import functions
from modelplane.deployment import inputs
from modelplane.pipeline.composition import Composition
from modelplane.pipeline.server import decode_request, run_compose

FN = "compose-model-deployment"
# phase -> what is timed in it, in the order of a call
PHASES = {
    "parse": "decode_request, keep_observed, parse(ModelDeployment)",
    "cluster facts": "inputs.read_clusters",
    "scheduling": "plan, schedule",
    "compose": "children (ModelReplicas, ModelEndpoints)",
    "response build": "Composition.desire, Composition.finish",
    "serialise": "RunFunctionResponse.SerializeToString",
}


@contextlib.contextmanager
def _timed(compose, spent: dict[str, float]) -> Iterator[None]:
    def wrap(phase, fn):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[phase] += time.perf_counter() - start
        return timed

    glb = compose.__globals__
    patches = [(glb, name, phase) for name, phase in
               (("parse", "parse"), ("plan", "scheduling"), ("schedule", "scheduling"), ("children", "compose"))]
    saved_globals = {name: glb[name] for _, name, _ in patches}
    saved_attrs = {(obj, name): getattr(obj, name) for obj, name in
                   ((inputs, "read_clusters"), (Composition, "keep_observed"), (Composition, "desire"),
                    (Composition, "finish"))}
    for _, name, phase in patches:
        glb[name] = wrap(phase, saved_globals[name])
    inputs.read_clusters = wrap("cluster facts", saved_attrs[(inputs, "read_clusters")])
    Composition.keep_observed = wrap("parse", saved_attrs[(Composition, "keep_observed")])
    Composition.desire = wrap("response build", saved_attrs[(Composition, "desire")])
    Composition.finish = wrap("response build", saved_attrs[(Composition, "finish")])
    try:
        yield
    finally:
        glb.update(saved_globals)
        for (obj, name), value in saved_attrs.items():
            setattr(obj, name, value)


def measure(data: bytes, runs: int = 20, warmups: int = 3) -> dict[str, float]:
    """Median ms per phase (and "total", "other") over ``runs`` in-process calls on ``data``."""
    compose = functions.load(FN)
    per_run: dict[str, list[float]] = defaultdict(list)
    for i in range(warmups + runs):
        spent: dict[str, float] = defaultdict(float)
        with _timed(compose, spent):
            start = time.perf_counter()
            t = time.perf_counter()
            req = decode_request(data)
            spent["parse"] += time.perf_counter() - t
            rsp = run_compose(FN, compose, req)
            t = time.perf_counter()
            rsp.SerializeToString()
            spent["serialise"] += time.perf_counter() - t
            total = time.perf_counter() - start
        if i < warmups:
            continue
        for phase in PHASES:
            per_run[phase].append(spent[phase] * 1000)
        per_run["other"].append((total - sum(spent[p] for p in PHASES)) * 1000)
        per_run["total"].append(total * 1000)
    return {phase: statistics.median(values) for phase, values in per_run.items()}
