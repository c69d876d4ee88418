"""A mock inference engine: an OpenAI-compatible server with no weights, for the lab.

The lab starts one per Running model-server pod, on the pod's address, so
requests really cross the gateway to something that answers like the engine
the pod runs: the served model names, the engine's port, its metric names, its
error shapes. It says who answered on every response, so routing tests can see
which pod, replica and revision served them and what path arrived.

- ``config``: which engine a container runs and what it serves, read from its
  command, args, env and image as a pod would run them; who the pod is.
- ``openai``: request checks and response bodies (whole and SSE), vLLM's shapes.
- ``metrics``: the engine's Prometheus metrics (``vllm:*`` or ``sglang:*``).
- ``server``: the threaded HTTP/1.1 server, load and health.

``modelplane mock-engine`` (``modelplane.cli.mock_engine``) runs it.
"""
from __future__ import annotations

from modelplane.mockengine.config import (
    ConfigError,
    EngineConfig,
    Identity,
    from_argv,
    from_pod,
    identity_from_pod,
)
from modelplane.mockengine.server import MockEngine, Options, serve, start

__all__ = ["ConfigError", "EngineConfig", "Identity", "MockEngine", "Options", "from_argv", "from_pod",
           "identity_from_pod", "serve", "start"]
