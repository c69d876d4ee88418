"""One engine pod's status, summarised as ``EngineState`` records (pure).

Reads only what the kubelet and scheduler publish on a pod: the ``engine``
container's current and last state, its restart count, and, before any
container status exists, the pod's ``PodScheduled`` condition. Which message
is kept: the termination message (with ``FallbackToLogsOnError`` the log's last
lines) when the engine exited or is in a crash loop, else the waiting message
(an image that cannot be pulled, a Secret that does not exist).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane import labels as L
from modelplane.workloads.engine_status import MESSAGE_TAIL, EngineState, tail
from modelplane.workloads.pods import ENGINE


def engine_states(pod: Mapping[str, Any]) -> list[EngineState]:
    """The pod's engine container as one record (a pod Modelplane composes has one)."""
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    lbls = meta.get("labels") or {}
    base = {"pod": meta.get("name", ""), "engine": lbls.get(L.ENGINE, ""), "role": lbls.get(L.ROLE, "")}
    container = next((c for c in status.get("containerStatuses") or [] if c.get("name") == ENGINE), None)
    if container is None:
        return [_pending(base, status)]
    return [_container(base, container)]


def _pending(base: Mapping[str, Any], status: Mapping[str, Any]) -> EngineState:
    """No container status yet: not scheduled (the scheduler says why) or not started."""
    scheduled = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), {})
    if scheduled.get("status") == "False":
        return EngineState(**base, state="Pending", reason=scheduled.get("reason") or "Unschedulable",
                           message=tail(scheduled.get("message") or "", MESSAGE_TAIL))
    return EngineState(**base, state="Pending", reason=status.get("reason") or "")


def _container(base: Mapping[str, Any], c: Mapping[str, Any]) -> EngineState:
    state = c.get("state") or {}
    last = (c.get("lastState") or {}).get("terminated") or {}
    restarts = int(c.get("restartCount") or 0)
    ready = bool(c.get("ready"))
    if "terminated" in state:
        t = state["terminated"] or {}
        return EngineState(**base, state="Terminated", ready=ready, reason=t.get("reason") or "",
                           exit_reason=t.get("reason") or "", exit_code=_code(t), restarts=restarts,
                           message=tail(t.get("message") or "", MESSAGE_TAIL))
    exit_fields = {"exit_reason": last.get("reason") or "", "exit_code": _code(last)} if last else {}
    if "waiting" in state:
        w = state["waiting"] or {}
        reason = w.get("reason") or ""
        # In a crash loop the waiting message only says "back-off ... restarting failed container";
        # what the engine said is in the last termination.
        message = last.get("message") if reason == "CrashLoopBackOff" and last.get("message") else w.get("message")
        return EngineState(**base, state="Waiting", ready=ready, reason=reason, restarts=restarts,
                           message=tail(message or last.get("message") or "", MESSAGE_TAIL), **exit_fields)
    # Running (or a state this code does not know: reported as running, never as failing).
    return EngineState(**base, state="Running", ready=ready, restarts=restarts,
                       message=tail(last.get("message") or "", MESSAGE_TAIL), **exit_fields)


def _code(terminated: Mapping[str, Any]) -> int | None:
    code = terminated.get("exitCode")
    return int(code) if isinstance(code, int) else None
