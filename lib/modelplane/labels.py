"""Labels Modelplane sets: reserved keys always win over user values.

Keys under ``modelplane.ai/`` are Modelplane's. A ModelDeployment's own labels
propagate to its ModelReplicas and ModelEndpoints (so a ModelService can pick
subsets), but a user can never override a reserved key.
"""
from __future__ import annotations

from collections.abc import Mapping

PREFIX = "modelplane.ai/"
DEPLOYMENT = PREFIX + "deployment"
CLUSTER = PREFIX + "cluster"
REPLICA = PREFIX + "replica"
POOL = PREFIX + "pool"
CACHE = PREFIX + "cache"
MANAGED_BY = PREFIX + "managed-by"
ENGINE = PREFIX + "engine"
ROLE = PREFIX + "role"
# On a ModelEndpoint Modelplane keeps but routes no more (draining replica, cluster not Ready):
# ModelServices leave it out (compose-model-deployment writes it, compose-model-service reads it).
OUT_OF_ROUTING = PREFIX + "out-of-routing"
REVISION = PREFIX + "revision"  # a ModelReplica's template revision (compose-model-deployment)


def is_reserved(key: str) -> bool:
    return key.startswith(PREFIX)


def merged(user: Mapping[str, str] | None, reserved: Mapping[str, str]) -> dict[str, str]:
    """User labels without reserved keys, then the reserved ones; sorted."""
    out = {k: v for k, v in (user or {}).items() if not is_reserved(k)}
    out.update(reserved)
    return dict(sorted(out.items()))
