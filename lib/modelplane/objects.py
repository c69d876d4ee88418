"""provider-kubernetes Objects: how Modelplane reaches a workload cluster.

Every resource Modelplane puts on a remote cluster is wrapped in a
``kubernetes.m.crossplane.io/v1alpha1`` Object that names the cluster's
ClusterProviderConfig (composed by its InferenceCluster). The remote object's
own status comes back in ``status.atProvider.manifest``; ``remote_status``
reads it so functions can tell a Bound PVC or a Complete Job.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

OBJECT_API = "kubernetes.m.crossplane.io/v1alpha1"
OBJECT_KIND = "Object"

# Namespaces are shared by every Modelplane XR of one team on a cluster, so
# deleting one XR must never delete the namespace under the others.
KEEP_ON_DELETE = ("Observe", "Create", "Update", "LateInitialize")


def remote_object(
    name: str,
    manifest: Mapping[str, Any],
    provider_config: str,
    *,
    namespace: str | None = None,
    labels: Mapping[str, str] | None = None,
    readiness: str = "DeriveFromObject",
    management_policies: Sequence[str] | None = None,
    watch: bool = False,
) -> dict:
    """An Object (in ``namespace`` on the control plane) that applies ``manifest`` remotely."""
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = dict(sorted(labels.items()))
    spec: dict[str, Any] = {
        "forProvider": {"manifest": dict(manifest)},
        "providerConfigRef": {"kind": "ClusterProviderConfig", "name": provider_config},
        "readiness": {"policy": readiness},
    }
    if management_policies:
        spec["managementPolicies"] = list(management_policies)
    if watch:
        spec["watch"] = True
    return {"apiVersion": OBJECT_API, "kind": OBJECT_KIND, "metadata": meta, "spec": spec}


def remote_namespace(name: str, provider_config: str, namespace: str | None, remote: str,
                     labels: Mapping[str, str] | None = None) -> dict:
    """An Object that ensures namespace ``remote`` exists and is never deleted by us."""
    manifest = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": remote}}
    if labels:
        manifest["metadata"]["labels"] = dict(sorted(labels.items()))
    return remote_object(name, manifest, provider_config, namespace=namespace,
                         management_policies=KEEP_ON_DELETE, readiness="SuccessfulCreate")


def remote_status(observed_object: Mapping[str, Any] | None) -> dict:
    """The remote object's status as last observed (empty when unknown)."""
    if not observed_object:
        return {}
    manifest = ((observed_object.get("status") or {}).get("atProvider") or {}).get("manifest") or {}
    return manifest.get("status") or {}


def manifest_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The remote object an Object carries (``spec.forProvider.manifest``; empty when none)."""
    return ((obj.get("spec") or {}).get("forProvider") or {}).get("manifest") or {}


def manifest_key(manifest: Mapping[str, Any]) -> tuple[str, str, str]:
    """A remote object's kind, namespace and name: how a workload cluster's objects are keyed."""
    meta = manifest.get("metadata") or {}
    return (manifest.get("kind", ""), meta.get("namespace", ""), meta.get("name", ""))


def provider_config_ref(obj: Mapping[str, Any]) -> str:
    """The ClusterProviderConfig an Object targets ('' when none)."""
    return ((obj.get("spec") or {}).get("providerConfigRef") or {}).get("name", "")
