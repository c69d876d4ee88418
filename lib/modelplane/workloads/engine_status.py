"""What a replica's engines say, as the engine observer reports it, read back into the replica.

Nothing on the control plane can see a workload cluster's pods, and an ML team
cannot reach the cluster. The engine observer (``modelplane engine-observer``,
one per workload cluster, installed by compose-inference-cluster) writes one
ConfigMap per replica, in the replica's own namespace, named by ``report_name``
from labels every engine pod already carries (deployment and replica index:
no pod template changes, so no engine restarts, to adopt it). The replica
composes an Observe-only Object for that ConfigMap and reads it back here.

The ConfigMap's ``data``:

- ``engines``: JSON, one ``EngineState`` per engine pod (failing first, then by
  pod name; at most ``MAX_ENGINES``, the rest counted in ``omitted``);
- ``omitted``: how many pods were left out (absent when none);
- ``load``: reserved for engine load (queue depth, KV-cache use from each
  engine's ``/metrics``), which autoscaling will add; nothing writes it yet.

A missing ConfigMap is never a failure: the observer may be switched off or
not have written yet ("no engine report yet").
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from modelplane import conditions as C
from modelplane.naming import dns_label

KEY = "engine-report"          # composition resource name of the Observe-only Object
ENGINES_KEY = "engines"
OMITTED_KEY = "omitted"
LOAD_KEY = "load"              # reserved: engine load, for autoscaling (not written yet)
MAX_ENGINES = 16               # entries per report (a ConfigMap and an XR status stay small)
MESSAGE_TAIL = 1024            # characters of a termination message kept (the kubelet keeps 2048 bytes)
CONDITION_TAIL = 400           # characters of it in the Serving condition's message (on one line)
NO_REPORT = "no engine report yet"

# Waiting reasons that mean the engine cannot start without a change (not "still starting").
FAILING_WAITING = frozenset({
    "CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull",
    "CreateContainerConfigError", "CreateContainerError", "RunContainerError",
    "PreStartHookError", "PostStartHookError",
})


@dataclass(frozen=True)
class EngineState:
    """One engine container of one pod, as its pod status says.

    ``state`` is the container's current state (Running, Waiting, Terminated),
    or Pending when the pod has no container status yet (not scheduled, pulling);
    ``reason`` goes with it (CrashLoopBackOff, ImagePullBackOff, Unschedulable).
    ``exit_reason``/``exit_code`` (``exitReason``/``exitCode`` in JSON) are the last termination (OOMKilled, Error; 137, 1),
    current or previous; ``message`` is its tail (with ``FallbackToLogsOnError``
    the kubelet puts the log's last lines there), or the waiting message.
    """

    pod: str
    engine: str = ""
    role: str = ""
    state: str = "Pending"
    ready: bool = False
    reason: str = ""
    exit_reason: str = ""
    exit_code: int | None = None
    restarts: int = 0
    message: str = ""

    @property
    def failing(self) -> bool:
        """Cannot serve without a change: a failing waiting reason, or a terminated engine."""
        if self.state == "Waiting":
            return self.reason in FAILING_WAITING
        return self.state == "Terminated"

    def entry(self) -> dict[str, Any]:
        """The JSON form (ConfigMap and ModelReplica status, camelCase): empty fields left out."""
        return {_CAMEL.get(k, k): v for k, v in asdict(self).items()
                if v not in ("", None) and not (k == "restarts" and v == 0)}


_CAMEL = {"exit_reason": "exitReason", "exit_code": "exitCode"}
_SNAKE = {v: k for k, v in _CAMEL.items()}


@dataclass(frozen=True)
class EngineLoad:
    """The seam for autoscaling: one engine's load, as its ``/metrics`` says (nothing fills it yet).

    vLLM publishes ``vllm:num_requests_waiting``, ``vllm:num_requests_running`` and
    ``vllm:kv_cache_usage_perc``; SGLang has its own names. The observer will read them per
    engine pod and write these records under ``LOAD_KEY``; ``None`` means not measured.
    """

    pod: str
    waiting: int | None = None
    running: int | None = None
    kv_cache_usage: float | None = None   # 0..1

    def entry(self) -> dict[str, Any]:
        return {k: v for k, v in (("pod", self.pod), ("waiting", self.waiting), ("running", self.running),
                                  ("kvCacheUsage", self.kv_cache_usage)) if v is not None}


def tail(text: str, limit: int) -> str:
    """The last ``limit`` characters of ``text`` (where an engine's error is), marked when cut."""
    text = (text or "").strip()
    return text if len(text) <= limit else "…" + text[-(limit - 1):].lstrip()


def report_name(deployment: str, index: int | str) -> str:
    """The ConfigMap of one replica's engines: from the pods' own labels, so both sides agree."""
    return dns_label("modelplane-engines", deployment, index)


def ordered(states: Sequence[EngineState]) -> list[EngineState]:
    """Failing engines first, then by pod name: what is cut at ``MAX_ENGINES`` is the healthy tail."""
    return sorted(states, key=lambda s: (not s.failing, s.pod, s.engine))


# ----- the replica's side -----------------------------------------------------------
def report_manifest(deployment: str, index: int, namespace: str) -> dict:
    """The ConfigMap an Observe-only Object reads (the observer owns it; we never write it)."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": report_name(deployment, index), "namespace": namespace}}


def read(observed_object: Mapping[str, Any] | None) -> list[EngineState] | None:
    """The engines the observed ConfigMap reports; None when there is no report (yet).

    A malformed report (another writer, a newer observer) reads as no report: it is
    a diagnosis aid, never a reason to fail the replica.
    """
    manifest = (((observed_object or {}).get("status") or {}).get("atProvider") or {}).get("manifest") or {}
    raw = (manifest.get("data") or {}).get(ENGINES_KEY)
    if not raw:
        return None
    try:
        rows = json.loads(raw)
        return [_state(row) for row in rows]
    except (ValueError, TypeError, AttributeError):
        return None


def _state(row: Mapping[str, Any]) -> EngineState:
    fields = set(EngineState.__dataclass_fields__)
    known = {_SNAKE.get(k, k): v for k, v in row.items() if _SNAKE.get(k, k) in fields}
    if not isinstance(known.get("pod"), str):
        raise TypeError("an engine entry without a pod")
    return EngineState(**known)


def status_entries(states: Sequence[EngineState]) -> list[dict[str, Any]]:
    """``status.engines``: the report's entries, failing first, at most ``MAX_ENGINES``."""
    return [s.entry() for s in ordered(states)[:MAX_ENGINES]]


@dataclass(frozen=True)
class Serving:
    """The replica's Serving condition."""

    status: bool
    reason: str
    message: str


def serving(waiting: Sequence[str], states: Sequence[EngineState] | None) -> Serving:
    """Serving from the workloads' readiness, explained by the engine report.

    Ready workloads win (the report may lag them). Otherwise the first failing
    engine names the reason (EngineFailing) with its message tail; without a
    report the message says there is none yet, so nobody waits for one that
    cannot come (the observer switched off).
    """
    if not waiting:
        return Serving(True, C.AVAILABLE, "every workload reports its replicas ready")
    pending = "waiting for " + ", ".join(sorted(waiting))
    if states is None:
        return Serving(False, C.CREATING, f"{pending}; {NO_REPORT}")
    failing = [s for s in ordered(states) if s.failing]
    if not failing:
        return Serving(False, C.CREATING, pending)
    first = failing[0]
    return Serving(False, C.ENGINE_FAILING, f"{describe(first)}"
                   + (f" (and {len(failing) - 1} more failing)" if len(failing) > 1 else ""))


def describe(s: EngineState) -> str:
    """One line: which pod, what state, the last exit and the message's tail."""
    what = s.reason or s.state
    if s.restarts:
        what += f", {s.restarts} restarts"
    line = f"pod {s.pod} engine {s.engine or '?'}: {what}"
    if s.exit_reason or s.exit_code is not None:
        code = "?" if s.exit_code is None else s.exit_code
        line += f"; last exit {s.exit_reason or '?'} (code {code})"
    if s.message:
        one_line = " | ".join(part.strip() for part in s.message.splitlines() if part.strip())
        line += ": " + tail(one_line, CONDITION_TAIL)
    return line
