"""PrefillDecode: llm-d's disaggregated shape on one cluster.

How llm-d sequences prefill then decode (facts from llm-d's router):

- every serving pod carries ``llm-d.ai/role: prefill|decode``; one
  InferencePool selects both (``llm-d.ai/inferenceServing: "true"``) and the
  endpoint picker's prefill/decode profiles filter by role;
- the EPP's ``pd-profile-handler`` picks a decode pod for the request and,
  when the ``prefix-based-pd-decider`` says prefill is worth it, a prefill pod
  too, passed on in the ``x-prefiller-host-port`` header
  (``prefill-header-handler``);
- each decode pod runs llm-d's routing sidecar on the pool's target port; it
  sends the prompt to that prefiller first, then forwards to the local engine
  on ``DECODE_ENGINE_PORT`` with the KV cache handed over through NIXL.

Each engine's copies become its workload's replicas, so copies set the P:D
ratio. The engines themselves are Deployments (Standalone) or LWS (gang),
built by ``standalone`` and ``gang``.
"""
from __future__ import annotations

ROLE_LABEL = "llm-d.ai/role"
SERVING_LABEL = "llm-d.ai/inferenceServing"
ROLES = {"Prefill": "prefill", "Decode": "decode"}

# Pinned llm-d routing sidecar release; it listens on the pool's target port
# and reaches the decode engine on DECODE_ENGINE_PORT.
SIDECAR_IMAGE = "ghcr.io/llm-d/llm-d-routing-sidecar:v0.8.0"
DECODE_ENGINE_PORT = 8200
NIXL_CONNECTOR = "nixlv2"


def routing_sidecar(port: int) -> dict:
    """The decode pod's routing proxy, a native sidecar (init container, restartPolicy Always)."""
    return {
        "name": "routing-proxy",
        "image": SIDECAR_IMAGE,
        "restartPolicy": "Always",
        "args": [
            f"--port={port}",
            f"--vllm-port={DECODE_ENGINE_PORT}",
            f"--connector={NIXL_CONNECTOR}",
            "--secure-proxy=false",
        ],
        "ports": [{"name": "proxy", "containerPort": port, "protocol": "TCP"}],
    }


def pd_epp_config() -> dict:
    """EndpointPickerConfig with llm-d's prefill and decode scheduling profiles."""
    scorers = [{"pluginRef": "queue-scorer", "weight": 1},
               {"pluginRef": "prefix-cache-scorer", "weight": 2},
               {"pluginRef": "max-score-picker"}]
    return {
        "apiVersion": "llm-d.ai/v1alpha1",
        "kind": "EndpointPickerConfig",
        "plugins": [
            {"type": "prefill-header-handler"},
            {"type": "prefill-filter"},
            {"type": "decode-filter"},
            {"type": "queue-scorer"},
            {"type": "prefix-cache-scorer"},
            {"type": "max-score-picker"},
            {"type": "prefix-based-pd-decider", "parameters": {"nonCachedTokens": 16}},
            {"type": "pd-profile-handler", "parameters": {"deciderPluginName": "prefix-based-pd-decider"}},
        ],
        "schedulingProfiles": [
            {"name": "prefill", "plugins": [{"pluginRef": "prefill-filter"}, *scorers]},
            {"name": "decode", "plugins": [{"pluginRef": "decode-filter"}, *scorers]},
        ],
    }
