"""The Secrets a replica's pods read, copied to the replica's own cluster.

An engine's pods read Secrets four ways: env ``valueFrom.secretKeyRef``,
``envFrom[].secretRef``, ``volumes[].secret`` and ``imagePullSecrets``. The ML
team creates those Secrets on the control plane, in the deployment's
namespace; a workload cluster has none, and the team cannot reach it. So each
ModelReplica copies every Secret its pod templates name to its cluster, into
the same namespace, under a name of its own (``copy_name``), and its pod
templates name the copies instead (``rewrite``). It follows that:

- a Secret reaches exactly the clusters where replicas that read it run, and
  leaves a cluster with the last of them (a replica's copies are composed
  resources of that replica: deleting it deletes them);
- two replicas never share a remote Secret: the name carries the replica and
  a digest of (replica, Secret), so neither's deletion or rollout touches the
  other's copy;
- no value is ever composed, nor kept by an Object: a shell Object creates the
  remote Secret empty, and a data Object names the control-plane Secret in
  ``references[].patchesFrom`` (fieldPath ``data``), so provider-kubernetes
  reads the whole ``data`` map and writes it to the remote Secret at each
  apply (v1.2.1: ``internal/controller/namespaced/object/object.go``
  ``resolveReferencies`` lines 688-734, ``apis/namespaced/object/v1alpha1/
  types.go`` ``ApplyFromFieldPathPatch`` lines 196-229); ``modelplane.secretcopy``
  builds both (ModelCache's token uses it too) and says why two. This module reads a fetched Secret's ``type`` (a kubelet needs
  ``kubernetes.io/dockerconfigjson`` on a pull secret) and never its ``data``;
- rotation: the data Object sets ``watch: true``, so a provider-kubernetes
  running with ``--enable-watches`` re-applies it when the control-plane Secret
  changes (``enqueueObjectsForReferences`` in ``indexes.go`` lines 119-140
  enqueues Objects whose references name it and whose ``spec.watch`` is set);
  without watches, at the provider's ``--poll`` interval (default 10m).

Everything here is pure: plain manifests in, plain manifests out.
"""
from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modelplane import conditions as C
from modelplane import secretcopy
from modelplane.naming import dns_label

# Condition type this module's caller reports, and its reasons.
SECRETS_FOUND = C.SECRETS_FOUND
FOUND = C.FOUND
NOT_FOUND = C.NOT_FOUND
WAITING = C.WAITING_FOR_INPUTS

OPAQUE = secretcopy.OPAQUE
DOCKER_CONFIG_JSON = "kubernetes.io/dockerconfigjson"

# Where a workload kind keeps its pod templates.
POD_TEMPLATE_PATHS: Mapping[str, tuple[tuple[str, ...], ...]] = {
    "Deployment": (("spec", "template"),),
    "LeaderWorkerSet": (("spec", "leaderWorkerTemplate", "leaderTemplate"),
                        ("spec", "leaderWorkerTemplate", "workerTemplate")),
}


@dataclass(frozen=True)
class Use:
    """How pods read one Secret: the keys they name, whether every reference is optional,
    and whether it pulls images (the command that creates it differs)."""

    name: str
    keys: tuple[str, ...] = ()
    optional: bool = True
    pulls_images: bool = False


def requirement(name: str) -> str:
    """The name under which the function requires the control-plane Secret ``name``."""
    return f"secret-{name}"


def copy_name(replica: str, secret: str) -> str:
    """The remote Secret (and its Object) that holds ``replica``'s copy of ``secret``.

    The digest makes the pair unambiguous: joining names with '-' alone would let
    replica ``a-0-c`` reading ``x-hf`` and replica ``a-0-c-x`` reading ``hf`` meet.
    """
    digest = hashlib.sha256(f"{replica}/{secret}".encode()).hexdigest()[:8]
    return dns_label(dns_label(replica, secret, max_length=54), digest)


# ----- reading and rewriting pod templates ----------------------------------------
def pod_specs(manifest: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The pod specs of a workload manifest (none for other kinds)."""
    out = []
    for path in POD_TEMPLATE_PATHS.get(str(manifest.get("kind", "")), ()):
        node: Any = manifest
        for part in path:
            node = (node or {}).get(part)
        spec = (node or {}).get("spec")
        if spec:
            out.append(spec)
    return out


def uses(pod_spec: Mapping[str, Any]) -> dict[str, Use]:
    """Every Secret a pod spec reads, by name."""
    found: dict[str, Use] = {}

    def add(name: Any, key: str | None = None, optional: Any = False, pulls: bool = False) -> None:
        if not isinstance(name, str) or not name:
            return
        prev = found.get(name, Use(name))
        found[name] = Use(name, tuple(sorted(set(prev.keys) | ({key} if key else set()))),
                          prev.optional and bool(optional), prev.pulls_images or pulls)

    for c in _containers(pod_spec):
        for e in c.get("env") or []:
            ref = (e.get("valueFrom") or {}).get("secretKeyRef")
            if ref:
                add(ref.get("name"), ref.get("key"), ref.get("optional"))
        for e in c.get("envFrom") or []:
            ref = e.get("secretRef")
            if ref:
                add(ref.get("name"), None, ref.get("optional"))
    for v in pod_spec.get("volumes") or []:
        sec = v.get("secret")
        if sec:
            add(sec.get("secretName"), None, sec.get("optional"))
    for s in pod_spec.get("imagePullSecrets") or []:
        add(s.get("name"), None, False, pulls=True)
    return found


def uses_of(manifests: Iterable[Mapping[str, Any]]) -> dict[str, Use]:
    """Every Secret the workloads among ``manifests`` read, merged by name."""
    out: dict[str, Use] = {}
    for m in manifests:
        for spec in pod_specs(m):
            for name, use in uses(spec).items():
                prev = out.get(name)
                out[name] = use if prev is None else Use(
                    name, tuple(sorted(set(prev.keys) | set(use.keys))), prev.optional and use.optional,
                    prev.pulls_images or use.pulls_images)
    return dict(sorted(out.items()))


def rewrite(manifest: Mapping[str, Any], names: Mapping[str, str]) -> dict:
    """A copy of ``manifest`` whose pod templates read ``names[secret]`` instead of ``secret``."""
    out = copy.deepcopy(dict(manifest))
    for spec in pod_specs(out):
        _rewrite_spec(spec, names)   # the specs of ``out``: already our own copy
    return out


def _rewrite_spec(spec: Any, names: Mapping[str, str]) -> None:
    for c in _containers(spec):
        for e in c.get("env") or []:
            ref = (e.get("valueFrom") or {}).get("secretKeyRef")
            if ref and ref.get("name") in names:
                ref["name"] = names[ref["name"]]
        for e in c.get("envFrom") or []:
            ref = e.get("secretRef")
            if ref and ref.get("name") in names:
                ref["name"] = names[ref["name"]]
    for v in spec.get("volumes") or []:
        sec = v.get("secret")
        if sec and sec.get("secretName") in names:
            sec["secretName"] = names[sec["secretName"]]
    for s in spec.get("imagePullSecrets") or []:
        if s.get("name") in names:
            s["name"] = names[s["name"]]


def _containers(spec: Mapping[str, Any]) -> list[dict]:
    return list(spec.get("initContainers") or []) + list(spec.get("containers") or [])


# ----- the copies ---------------------------------------------------------------
def copy_manifest(replica: str, namespace: str, secret: str, secret_type: str,
                  labels: Mapping[str, str]) -> dict:
    """The remote Secret as the shell creates it (``secretcopy.remote_secret``): no value."""
    return secretcopy.remote_secret(copy_name(replica, secret), namespace, secret_type, labels)


def data_name(replica: str, secret: str) -> str:
    """The Object that patches the control-plane Secret's data into the copy."""
    return dns_label(copy_name(replica, secret), "data")


def copy_objects(replica: str, namespace: str, secret: str, secret_type: str, provider_config: str,
                 labels: Mapping[str, str]) -> dict[str, dict]:
    """Composition-resource-name -> Object: the shell and data Objects of one copy of the whole
    ``data`` map (``secretcopy`` says why two, and why neither holds a value)."""
    c = secretcopy.SecretCopy(shell=copy_name(replica, secret), data=data_name(replica, secret),
                              remote=copy_manifest(replica, namespace, secret, secret_type, labels),
                              source=secret, namespace=namespace, provider_config=provider_config,
                              labels=labels)
    shell, data = secretcopy.objects(c)
    return {shell["metadata"]["name"]: shell, data["metadata"]["name"]: data}


def is_copy(obj: Mapping[str, Any] | None) -> bool:
    """Whether a composed Object carries one of these copies (the replica composes no other Secret)."""
    return secretcopy.is_secret_object(obj)


# ----- what the fetched Secrets say -----------------------------------------------
@dataclass(frozen=True)
class Found:
    """The control-plane Secrets, as fetched: tri-state per name."""

    present: Mapping[str, str]       # name -> type
    missing: tuple[str, ...]         # fetched, absent
    unfetched: tuple[str, ...]       # not fetched yet


def found(wanted: Iterable[str], fetched: Mapping[str, Sequence[Mapping[str, Any]] | None]) -> Found:
    """Sort ``wanted`` names by what the requirement answered (``None`` = not fetched yet)."""
    present, missing, unfetched = {}, [], []
    for name in sorted(set(wanted)):
        items = fetched.get(name)
        if items is None:
            unfetched.append(name)
        elif items:
            present[name] = str(items[0].get("type") or OPAQUE)
        else:
            missing.append(name)
    return Found(present, tuple(missing), tuple(unfetched))


def not_copied(manifest: Mapping[str, Any], state: Found, copied: Iterable[str]) -> list[str]:
    """The Secrets ``manifest`` reads whose copies are not there yet: not fetched, or found
    but their copy's Object not Ready. A missing Secret is not waited for (nothing to copy)."""
    ready = set(copied)
    return [s for s in uses_of([manifest])
            if s in state.unfetched or (s in state.present and s not in ready)]


def unread_copies(observed: Mapping[str, Mapping[str, Any]], copies: Mapping[str, str],
                  kept: Iterable[Mapping[str, Any]]) -> list[str]:
    """Keys of observed copy Objects (shells and data) nothing reads any more: neither a Secret
    the templates name (``copies``: Secret -> copy) nor a workload kept as observed (``kept``)."""
    read = set(copies.values()) | set(uses_of(kept))
    return [key for key, obj in sorted(observed.items())
            if is_copy(obj) and (obj["spec"]["forProvider"]["manifest"].get("metadata") or {}).get("name") not in read]


def create_command(namespace: str, use: Use) -> str:
    """The command an ML team runs to create a missing Secret."""
    if use.pulls_images and not use.keys:
        return (f"kubectl -n {namespace} create secret docker-registry {use.name} "
                f"--docker-server=<registry> --docker-username=<user> --docker-password=<token>")
    literals = " ".join(f"--from-literal={k}=<value>" for k in use.keys) or "--from-literal=<key>=<value>"
    return f"kubectl -n {namespace} create secret generic {use.name} {literals}"


def condition(namespace: str, all_uses: Mapping[str, Use], state: Found) -> tuple[str, str, str]:
    """(status, reason, message) of SecretsFound. A missing Secret that every reference
    marks optional is not a failure: Kubernetes starts the pod without it."""
    needed = [n for n in state.missing if not all_uses[n].optional]
    if needed:
        fixes = "; ".join(create_command(namespace, all_uses[n]) for n in needed)
        message = (f"Secret(s) {', '.join(needed)} not found in namespace {namespace}: pods that read them "
                   f"cannot start; create them: {fixes}")
        return ("False", NOT_FOUND, message)
    if state.unfetched:
        return ("Unknown", WAITING, f"waiting for Secret(s) {', '.join(state.unfetched)} to be fetched")
    if not all_uses:
        return ("True", FOUND, "the pods read no Secrets")
    message = f"Secret(s) {', '.join(sorted(state.present)) or 'none'} found; the replica's cluster gets copies"
    if state.missing:
        message += f"; optional Secret(s) {', '.join(state.missing)} not found: pods start without them"
    return ("True", FOUND, message)
