"""Existing: a cluster the platform team runs; Modelplane provisions nothing.

The provider configs read the user's kubeconfig Secret; node pools already
exist (their nodes carry ``modelplane.ai/pool``), so a pool's nodes are the
declared nodeCount.
"""
from __future__ import annotations

from modelplane.platform.clouds import Source, Target


def kubeconfig(t: Target) -> dict[str, str]:
    ref = t.block["kubeconfigSecretRef"]
    return {"namespace": ref["namespace"], "name": ref["name"], "key": ref.get("key") or "kubeconfig"}


SOURCE = Source(name="Existing", block="existing", provisioning=None,
                infra=lambda t: {}, pool=None, kubeconfig=kubeconfig)
