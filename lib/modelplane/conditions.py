"""Condition types and reasons every function uses, in one place.

A reason is a CamelCase word a person can search for; the message is one line
that says what is missing and what happens next.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Types (Ready is Crossplane's; functions drive it through composite readiness).
READY = "Ready"
SCHEDULED = "Scheduled"
SYNCED_INPUTS = "InputsResolved"
PROVISIONED = "Provisioned"
STACK_READY = "StackReady"
ROUTED = "Routed"
HYDRATED = "Hydrated"
SERVING = "Serving"
GATEWAY_READY = "GatewayReady"
PROGRESSING = "Progressing"
SECRETS_FOUND = "SecretsFound"

# Reasons.
AVAILABLE = "Available"
CREATING = "Creating"
WAITING_FOR_INPUTS = "WaitingForInputs"
INPUTS_RESOLVED = "InputsResolved"
SCHEDULED_ALL = "Scheduled"
UNSCHEDULABLE = "Unschedulable"
PARTIALLY_SCHEDULED = "PartiallyScheduled"
PROVISIONING = "Provisioning"
NOT_FOUND = "NotFound"
INVALID_INPUT = "InvalidInput"
NO_MATCH = "NoMatchingEndpoints"
NO_MATCHING_CLUSTERS = "NoMatchingClusters"
FOUND = "Found"   # SecretsFound: every Secret a replica's pods read exists
# Serving (ModelReplica): an engine cannot start without a change (lib/workloads/engine_status.py).
ENGINE_FAILING = "EngineFailing"
# Progressing (ModelDeployment rollouts, lib/deployment/rollout.py).
NEW_REVISION_AVAILABLE = "NewRevisionAvailable"
ROLLING_UPDATE = "RollingUpdate"
RECREATING = "Recreating"
REPLICAS_UPDATING = "ReplicasUpdating"
INSUFFICIENT_CAPACITY = "InsufficientCapacity"


def find(status: Mapping[str, Any] | None, typ: str) -> Mapping[str, Any] | None:
    """The condition of type ``typ`` in a status (None when absent)."""
    for cond in (status or {}).get("conditions") or []:
        if cond.get("type") == typ:
            return cond
    return None


def is_true(status: Mapping[str, Any] | None, typ: str) -> bool:
    """True when the status carries condition ``typ`` with status True."""
    cond = find(status, typ)
    return cond is not None and cond.get("status") == "True"
