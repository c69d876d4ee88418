"""The template revision: a short hash of everything that reaches the pods.

Like a Deployment's ``pod-template-hash``: a change to the engines (images,
args, env, probes, members, device requests and their selectors, copies),
the serving mode or the model cache gives a new revision, and replicas of
the old one are rolled (``rollout.py``). Scale (``replicas``), labels,
``clusterSelector``, ``tolerations``, ``strategy`` and ``failover`` do not
reach the pods and never roll: they act on placement, in place.

The hash is over the spec as the API server stored it (defaults applied),
in canonical JSON, so it does not depend on key order.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

# The spec fields that reach the serving pods.
TEMPLATE_FIELDS = ("engines", "serving", "modelCacheRef")
LENGTH = 10


def template(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The part of ``spec`` a revision covers; an absent serving mode is Unified."""
    out = {k: spec[k] for k in TEMPLATE_FIELDS if spec.get(k) is not None}
    serving = dict(out.get("serving") or {})
    serving.setdefault("mode", "Unified")
    out["serving"] = serving
    return out


def revision(spec: Mapping[str, Any]) -> str:
    """``LENGTH`` hex characters of sha256 over the canonical template."""
    text = json.dumps(template(spec), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:LENGTH]
