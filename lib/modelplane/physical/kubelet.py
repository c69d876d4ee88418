"""Why a bound pod's containers do not start: the Secrets it reads that its cluster lacks.

A pod the scheduler bound is not running yet: the kubelet first resolves what
its containers read. A Secret it cannot find keeps the pod from ever being
Ready, and the model must say so, or a replica whose Secret was never created
would simulate as serving:

- env ``valueFrom.secretKeyRef`` and ``envFrom[].secretRef``: the container
  waits in ``CreateContainerConfigError`` (``secret "x" not found``, or
  ``couldn't find key K in Secret ns/x``) unless the reference is
  ``optional: true`` (kubelet ``makeEnvironmentVariables``);
- a ``secret`` volume: the mount fails (``FailedMount``) and the pod stays
  ContainerCreating, unless ``optional: true``; an ``items`` key the Secret
  lacks fails the same way;
- ``imagePullSecrets``: not checked. A kubelet that cannot find a pull Secret
  pulls without it (a warning event), and a public image starts; whether the
  image needs credentials is not knowable here.

The kubelet resolves these when it starts a container, so only a pod that has
not started yet is held: a running pod keeps running when its Secret goes
(``WorkloadCluster.settle`` remembers which started).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Secrets = Mapping[tuple[str, str], frozenset[str]]   # (namespace, name) -> the keys its data holds


def _containers(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(spec.get("initContainers") or []) + list(spec.get("containers") or [])


def waiting(namespace: str, spec: Mapping[str, Any], secrets: Secrets) -> str:
    """Why the kubelet cannot start a pod of ``spec`` in ``namespace`` ('' when it can)."""
    for volume in spec.get("volumes") or []:
        src = volume.get("secret")
        if not src or src.get("optional"):
            continue
        name = src.get("secretName", "")
        keys = secrets.get((namespace, name))
        if keys is None:
            return f'FailedMount: MountVolume.SetUp failed for volume "{volume.get("name", "")}" : ' \
                   f'secret "{name}" not found'
        for item in src.get("items") or []:
            if item.get("key") not in keys:
                return f'FailedMount: MountVolume.SetUp failed for volume "{volume.get("name", "")}" : ' \
                       f'references non-existent secret key: {item.get("key")}'
    for container in _containers(spec):
        for source in container.get("envFrom") or []:
            ref = source.get("secretRef")
            if ref and not ref.get("optional") and (namespace, ref.get("name", "")) not in secrets:
                return f'CreateContainerConfigError: secret "{ref.get("name", "")}" not found'
        for env in container.get("env") or []:
            ref = (env.get("valueFrom") or {}).get("secretKeyRef")
            if not ref or ref.get("optional"):
                continue
            name, key = ref.get("name", ""), ref.get("key", "")
            keys = secrets.get((namespace, name))
            if keys is None:
                return f'CreateContainerConfigError: secret "{name}" not found'
            if key not in keys:
                return f"CreateContainerConfigError: couldn't find key {key} in Secret {namespace}/{name}"
    return ""


def secrets_of(manifests: Mapping[tuple[str, str, str], Mapping[str, Any]]) -> dict[tuple[str, str], frozenset[str]]:
    """The Secrets a cluster holds, by namespace and name, with the keys of their data."""
    return {(ns, name): frozenset((m.get("data") or {}) | (m.get("stringData") or {}))
            for (kind, ns, name), m in manifests.items() if kind == "Secret"}
