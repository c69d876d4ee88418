"""The engine observer on a workload cluster: its account, its rights and its Deployment.

``spec.stack.engineObserver`` switches it off (``enabled: false``) or names the
image (``image``; default: the compose-model-replica package, whose runtime image
holds the ``modelplane`` command). Four remote objects, all in
``modelplane-system`` or cluster-scoped:

- a ServiceAccount;
- a ClusterRole with the least it needs: pods get/list/watch (engine pods live in
  every team's namespace) and configmaps get/create/update (its reports; no
  list, patch or delete: a report's lifetime follows its pods as owners, see
  ``observer.report``); no Secrets, no pod logs, no exec;
- its ClusterRoleBinding;
- a one-replica Deployment (Recreate: one writer at a time), non-root,
  read-only root filesystem, no privilege escalation, every capability dropped.
  It prefers nodes outside Modelplane's GPU pools (no ``modelplane.ai/pool``
  label: the system or CPU pool every cloud cluster has) and tolerates the GPU
  taint, so a cluster of GPU nodes only still runs it; it asks for no device.

Nothing here touches an engine pod: adding the observer to a running cluster
creates these objects and restarts no engine.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane import labels as L
from modelplane.objects import remote_object
from modelplane.platform.clouds import Target
from modelplane.platform.common import NAMESPACE

NAME = "modelplane-engine-observer"
DEFAULT_IMAGE = "xpkg.crossplane.io/modelplane/compose-model-replica:v0.1.0"
COMMAND = ["/venv/bin/modelplane", "engine-observer"]
INTERVAL_SECONDS = 10
SELECTOR = {"app.kubernetes.io/name": NAME}
KEYS = ("engine-observer-serviceaccount", "engine-observer-clusterrole", "engine-observer-clusterrolebinding",
        "engine-observer-deployment")

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
# Off the GPU pools when the cluster has any other node (weight 100: the strongest preference).
AWAY_FROM_GPU_POOLS = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
    "weight": 100, "preference": {"matchExpressions": [{"key": L.POOL, "operator": "DoesNotExist"}]}}]}}

RULES = [
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "create", "update"]},
]


def manifests(image: str) -> dict[str, dict[str, Any]]:
    """The observer's remote manifests by composition resource name."""
    labels = dict(SELECTOR)
    account = {"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": labels}}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": NAME, "labels": labels}, "rules": [dict(r) for r in RULES]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": NAME, "labels": labels},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAME},
               "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}]}
    container = {
        "name": "observer", "image": image, "command": list(COMMAND), "args": [f"--interval={INTERVAL_SECONDS}"],
        "resources": {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"]}},
    }
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "replicas": 1,
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": dict(SELECTOR)},
            "template": {
                "metadata": {"labels": dict(SELECTOR)},
                "spec": {"serviceAccountName": NAME,
                         "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                         "containers": [container],
                         "affinity": AWAY_FROM_GPU_POOLS,
                         "tolerations": [dict(GPU_TOLERATION)]},
            },
        },
    }
    return dict(zip(KEYS, (account, role, binding, deployment)))


def objects(target: Target, provider_config: str, settings: Mapping[str, Any] | None,
            labels: Mapping[str, str]) -> tuple[dict[str, dict], list[str]]:
    """(composition resource name -> Object, keys to drop): nothing and every key when switched off."""
    settings = settings or {}
    if settings.get("enabled", True) is False:
        return {}, list(KEYS)
    out = {}
    for key, manifest in manifests(settings.get("image") or DEFAULT_IMAGE).items():
        # Created is enough: a report that cannot come (an image not pulled yet) never holds
        # the cluster's readiness; the replicas say "no engine report yet" instead.
        out[key] = remote_object(target.key_name(key), manifest, provider_config, namespace=NAMESPACE,
                                 labels=labels, readiness="SuccessfulCreate")
    return out, []
