"""One control-plane Secret copied to a workload cluster, with no Object ever holding its value.

Both copies Modelplane makes (a ModelReplica's Secrets, ``workloads.secrets``; a ModelCache's
Hugging Face token, ``modelcache.hydrate``) are built here, as two provider-kubernetes Objects:

- the *shell* (``Observe``, ``Create``, ``Delete``; no reference) creates the remote Secret with
  its type and the keys the type requires, holding no value, and deletes it when dropped;
- the *data* Object (``Observe``, ``Update``: it never creates nor deletes) names the
  control-plane Secret in ``references[].patchesFrom``, so the provider reads it and writes it to
  the remote Secret at each apply; ``watch`` re-applies it when that Secret changes (under the
  provider's ``--enable-watches``; otherwise at its ``--poll`` interval).

Why two: provider-kubernetes v1.2.1 patches a reference's value into the Object itself and
writes the Object back whole when it adds its finalizer (``object.go:814-826``, called after
Observe: crossplane-runtime v2.0.0-rc.1 ``reconciler.go:1272``) and before creating
(``:1287-1297``), so one Object that both creates and copies keeps the value in its
``spec.forProvider.manifest``; ``--sanitize-secrets`` cleans only status. The data Object is
composed with the provider's finalizer already on it and may not create, so the provider never
writes it back. Each Object applies under a field manager of its own name (``ssaFieldOwner``),
so the shell never takes the data back.

An Object that once did both (``release``) is made observe-only before it is dropped: a managed
resource whose policies lack ``Delete`` is deleted without touching its remote object
(crossplane-runtime ``policies.go`` ``ShouldDelete`` lines 228-234, ``reconciler.go:972``), so
the remote Secret, and every pod reading it, never sees a gap while the two Objects take over.

Pure: plain data in, plain manifests out; no value is ever read or composed here.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.objects import manifest_of, remote_object

OPAQUE = "Opaque"
# Keys a Secret of each type must hold when it is created (kube-apiserver's ValidateSecret); the
# shell gets them with values that are no secret, and the data Object overwrites them.
REQUIRED_KEYS: Mapping[str, Mapping[str, str]] = {
    "kubernetes.io/dockerconfigjson": {".dockerconfigjson": "e30="},   # "{}": it must parse as JSON
    "kubernetes.io/dockercfg": {".dockercfg": "e30="},
    "kubernetes.io/tls": {"tls.crt": "", "tls.key": ""},
    "kubernetes.io/ssh-auth": {"ssh-privatekey": ""},
    "kubernetes.io/basic-auth": {"username": ""},
}
# provider-kubernetes' own finalizer (v1.2.1 objFinalizerName): composed already on the data
# Object, so the provider never writes that Object back to add it, with the patched data inside.
OBJECT_FINALIZER = "finalizer.managedresource.crossplane.io"
SHELL_POLICIES = ("Observe", "Create", "Delete")   # create once, never update: it holds no data to fight over
DATA_POLICIES = ("Observe", "Update")              # never create or delete: it only patches the data in
RELEASED_POLICIES = ("Observe",)                   # an old single-Object copy on its way out


@dataclass(frozen=True)
class SecretCopy:
    """One copy: the remote Secret, where its value comes from, and its two Objects' names.

    ``source`` is a Secret in ``namespace`` on the control plane (the Objects live there too);
    ``field_path`` is what of it is copied, to ``to_field_path`` of the remote Secret: the whole
    ``data`` map, or one key (``data.token`` from ``data[hf-token]``).
    """

    shell: str
    data: str
    remote: Mapping[str, Any]
    source: str
    namespace: str
    provider_config: str
    labels: Mapping[str, str] = field(default_factory=dict)
    field_path: str = "data"
    to_field_path: str = "data"


def remote_secret(name: str, namespace: str, secret_type: str, labels: Mapping[str, str]) -> dict:
    """The remote Secret as the shell creates it: metadata, type and the keys the type requires,
    with no value."""
    out: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(sorted(labels.items()))},
        "type": secret_type or OPAQUE,
    }
    if secret_type in REQUIRED_KEYS:
        out["data"] = dict(REQUIRED_KEYS[secret_type])
    return out


def references(c: SecretCopy) -> list[dict]:
    """The data Object's references: ``field_path`` of the control-plane Secret."""
    return [{"patchesFrom": {"apiVersion": "v1", "kind": "Secret", "name": c.source, "namespace": c.namespace,
                             "fieldPath": c.field_path},
             "toFieldPath": c.to_field_path}]


def objects(c: SecretCopy) -> tuple[dict, dict]:
    """(shell, data): the two Objects of one copy, neither holding a value."""
    shell = remote_object(c.shell, c.remote, c.provider_config, namespace=c.namespace, labels=c.labels,
                          readiness="SuccessfulCreate", management_policies=SHELL_POLICIES)
    data = remote_object(c.data, {k: v for k, v in c.remote.items() if k != "data"}, c.provider_config,
                         namespace=c.namespace, labels=c.labels, readiness="SuccessfulCreate",
                         management_policies=DATA_POLICIES, watch=True)
    data["metadata"]["finalizers"] = [OBJECT_FINALIZER]
    data["spec"]["references"] = references(c)
    return shell, data


def release(name: str, c: SecretCopy) -> dict:
    """The old single Object ``name`` that created and filled ``c.remote`` itself, made
    observe-only and without its reference: dropped once observed so, it leaves the remote
    Secret in place for the shell and the data Object (which already observe it)."""
    return remote_object(name, {k: v for k, v in c.remote.items() if k != "data"}, c.provider_config,
                         namespace=c.namespace, labels=c.labels, readiness="SuccessfulCreate",
                         management_policies=RELEASED_POLICIES)


def is_released(obj: Mapping[str, Any] | None) -> bool:
    """Whether an observed Object is observe-only, so deleting it deletes nothing remote."""
    return tuple((obj or {}).get("spec", {}).get("managementPolicies") or ("*",)) == RELEASED_POLICIES


def is_secret_object(obj: Mapping[str, Any] | None) -> bool:
    """Whether an Object carries a remote Secret."""
    manifest = manifest_of(obj or {})
    return manifest.get("kind") == "Secret" and manifest.get("apiVersion") == "v1"
