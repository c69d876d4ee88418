"""Condition types and reasons every function uses, in one place.

A reason is a CamelCase word a person can search for; the message is one line
that says what is missing and what happens next.
"""
from __future__ import annotations

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
INVALID = "Invalid"
NO_MATCH = "NoMatchingEndpoints"
NO_MATCHING_CLUSTERS = "NoMatchingClusters"
