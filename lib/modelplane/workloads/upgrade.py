"""Pod-template changes a Modelplane upgrade brings to a running workload, held until needed.

A release may compose a running workload's pods differently from the release
before it while nothing in the deployment changed. Two such changes exist:
engine containers set ``terminationMessagePolicy: FallbackToLogsOnError``
(``pods``), and pods read the replica's copies of Secrets instead of the
Secrets' own names (``secrets``). Applied at once, each would restart every
running pod of every replica the moment the functions are upgraded, outside
any deployment's rollout strategy; a LeaderWorkerSet's default rolling update
tears a whole group down.

``upgrade_only`` tells such a workload: the observed manifest equals what this
release composes once those two changes are taken back out. The caller then
keeps the observed workload, unless the change is what makes it work (it reads
a Secret the control plane holds: its pods need the copy). Any other change
(a new image, args, a rollout) applies the whole template, these included.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from modelplane.workloads import pods, secrets


def legacy(manifest: Mapping[str, Any], copies: Mapping[str, str]) -> dict:
    """``manifest`` as the release before composed it: no termination message policy on the
    engine, and the Secrets' own names where ``copies`` (Secret -> copy) put the copies'."""
    back = {copy_name: secret for secret, copy_name in copies.items()}
    out = secrets.rewrite(manifest, back)
    for spec in secrets.pod_specs(out):
        for c in spec.get("containers") or []:
            if c.get("name") == pods.ENGINE and c.get("terminationMessagePolicy") == pods.TERMINATION_MESSAGE_POLICY:
                del c["terminationMessagePolicy"]
    return out


def upgrade_only(desired: Mapping[str, Any], observed: Mapping[str, Any] | None,
                 copies: Mapping[str, str]) -> bool:
    """Whether the observed workload manifest differs from ``desired`` only by the upgrade's changes."""
    if not observed or observed == desired:
        return False
    return legacy(desired, copies) == copy.deepcopy(dict(observed))
