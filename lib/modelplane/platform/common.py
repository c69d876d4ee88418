"""What every platform builder shares: the namespace, labels, refs, conditions.

Cluster-scoped XRs put their namespaced children in ``modelplane-system`` on
the control plane. Condition types that only the platform functions report
live here (the shared ones are in ``modelplane.conditions``).
"""
from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from modelplane import conditions as C
from modelplane import labels
from modelplane.errors import InputError

NAMESPACE = "modelplane-system"
GATEWAY_NAME = "modelplane"
GATEWAY_CLASS = "modelplane"
RWX_STORAGE_CLASS = "modelplane-rwx"
ENVOY_CONTROLLER = "gateway.envoyproxy.io/gatewayclass-controller"

# Condition types reported by compose-inference-cluster / -gateway only.
GATEWAY_READY = C.GATEWAY_READY

# The Kubernetes minor that first serves resource.k8s.io/v1 (DRA) by default.
MIN_KUBERNETES = (1, 34)
DEFAULT_KUBERNETES = "1.34"


def cluster_labels(cluster: str, function: str) -> dict[str, str]:
    """Labels on every resource composed for one InferenceCluster."""
    return {labels.CLUSTER: cluster, labels.MANAGED_BY: function}


def meta(name: str, lbls: Mapping[str, str], namespace: str | None = NAMESPACE) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if namespace:
        out["namespace"] = namespace
    out["labels"] = dict(sorted(lbls.items()))
    return out


def cluster_provider_config(name: str) -> dict[str, str]:
    """A managed resource's ref to a cluster-scoped provider config."""
    return {"kind": "ClusterProviderConfig", "name": name}


def rwx_storage_class(provisioner: str, parameters: Mapping[str, str],
                      mount_options: tuple[str, ...] = ()) -> dict[str, Any]:
    """The ``modelplane-rwx`` StorageClass ModelCache PVCs use by default on a provisioned cluster."""
    out: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": RWX_STORAGE_CLASS},
        "provisioner": provisioner,
        "parameters": dict(parameters),
    }
    if mount_options:
        out["mountOptions"] = list(mount_options)
    out.update({"volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": True, "reclaimPolicy": "Delete"})
    return out


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any] | None) -> dict[str, Any]:
    """``over`` merged into ``base``: maps merge key by key, anything else replaces."""
    out = dict(base)
    for key, value in (over or {}).items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def condition_true(obj: Mapping[str, Any] | None, typ: str) -> bool:
    """True when ``obj`` has condition ``typ`` with status True."""
    for cond in ((obj or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == typ:
            return cond.get("status") == "True"
    return False


def network_cidr(block: Mapping[str, Any], block_field: str, default: str, prefixes: tuple[int, int],
                 why: str) -> ipaddress.IPv4Network:
    """``<block>.network.cidr`` (or ``default``) as a network whose prefix length lies in
    ``prefixes``; ``why`` tells the user where the bounds come from."""
    field = f"{block_field}.network.cidr"
    cidr = str((block.get("network") or {}).get("cidr") or default)
    try:
        net = ipaddress.IPv4Network(cidr, strict=True)
    except ValueError as err:
        raise InputError(field, f"{cidr!r} is not an IPv4 network ({err}); write one such as {default}") from None
    low, high = prefixes
    if not low <= net.prefixlen <= high:
        raise InputError(field, f"{cidr} must be a /{low} to /{high}{why}")
    return net
