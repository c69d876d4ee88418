"""The remote objects of one ModelCache on one cluster.

Every builder returns a provider-kubernetes Object (``lib.objects``) in the
cache's namespace on the control plane, targeting the cluster's
ClusterProviderConfig; the remote objects land in a namespace named like the
cache's own (tenancy).

The hydration Job is idempotent: it first checks a completion marker
(``/mnt/models/.modelplane-complete`` holding ``repo@revision``), so a rerun
(a recreated Job, a second cluster sharing storage) is a no-op. Jobs are
immutable, so the Job's name carries a hash of what it downloads: changing
the revision composes a new Job (delete + create) instead of an update the
API server would reject. The Job is kept after it finishes (no TTL): its
Complete condition is how we know the cache is Ready, and a TTL would make
provider-kubernetes recreate it over and over.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelplane import labels as L
from modelplane import secretcopy
from modelplane.naming import cache_pvc_name, dns_label
from modelplane.objects import manifest_of, remote_namespace, remote_object
from modelplane.workloads.pods import GPU_TOLERATION

FUNCTION = "compose-model-cache"
MOUNT = "/mnt/models"
MARKER = MOUNT + "/.modelplane-complete"
# Pinned so a cache hydrates the same way on every cluster and every rerun.
IMAGE = "python:3.11.13-slim-bookworm"
HF_HUB = "huggingface_hub==2.4.0"
TOKEN_KEY = "token"
BACKOFF_LIMIT = 6

# The Job's readiness as provider-kubernetes should judge it: Complete, not merely created.
JOB_COMPLETE = "object.status.conditions.exists(c, c.type == 'Complete' && c.status == 'True')"

_SCRIPT = """set -eu
want="$MODELPLANE_REPO@$MODELPLANE_REVISION"
if [ -f "$MODELPLANE_MARKER" ] && [ "$(cat "$MODELPLANE_MARKER")" = "$want" ]; then
  echo "already hydrated: $want"; exit 0
fi
pip install --no-cache-dir --quiet --disable-pip-version-check "$MODELPLANE_HF_HUB"
python - <<'EOF'
import os
from huggingface_hub import snapshot_download
snapshot_download(repo_id=os.environ["MODELPLANE_REPO"], revision=os.environ["MODELPLANE_REVISION"],
                  local_dir=os.environ["MODELPLANE_MOUNT"])
EOF
printf '%s' "$want" > "$MODELPLANE_MARKER.tmp"
mv "$MODELPLANE_MARKER.tmp" "$MODELPLANE_MARKER"
echo "hydrated: $want"
"""


def resource_names(cluster: str, repo: str, revision: str) -> dict[str, str]:
    """Composition-resource-names of one cluster's objects (the Job's carries its content hash)."""
    return {
        "namespace": f"namespace-{cluster}",
        "pvc": f"pvc-{cluster}",
        "token": f"token-{cluster}",            # earlier releases' single Object: released, then dropped
        "token_copy": f"tokencopy-{cluster}",   # the shell; no prefix is another's plus '-' and a cluster
        "token_data": f"tokendata-{cluster}",
        "job": f"job-{cluster}-{content_hash(repo, revision)}",
    }


def content_hash(repo: str, revision: str) -> str:
    return hashlib.sha256(f"{repo}@{revision}".encode()).hexdigest()[:8]


def _labels(cache: str, cluster: str) -> dict[str, str]:
    return {L.CACHE: cache, L.CLUSTER: cluster, L.MANAGED_BY: FUNCTION}


def namespace_object(cache: str, namespace: str, cluster: str, provider_config: str) -> dict:
    obj = remote_namespace(dns_label("modelcache", cache, cluster, "ns"), provider_config, namespace, namespace)
    obj["metadata"]["labels"] = _labels(cache, cluster)
    return obj


def pvc_object(cache: str, namespace: str, cluster: str, provider_config: str,
               storage_class: str, size_gib: int) -> dict:
    manifest = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": cache_pvc_name(cache), "namespace": namespace, "labels": _labels(cache, cluster)},
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": f"{size_gib}Gi"}},
        },
    }
    # SuccessfulCreate: a WaitForFirstConsumer class binds only when the Job's pod arrives.
    return remote_object(dns_label("modelcache", cache, cluster, "pvc"), manifest, provider_config,
                         namespace=namespace, labels=_labels(cache, cluster), readiness="SuccessfulCreate")


def token_secret_name(cache: str) -> str:
    return dns_label("modelcache", cache, "hf-token")


def field_path(key: str) -> str:
    """A fieldpath to ``data.<key>``; keys with dots or dashes need brackets."""
    return f"data.{key}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else f"data[{key}]"


def token_copy(cache: str, namespace: str, cluster: str, provider_config: str,
               secret: str, key: str) -> secretcopy.SecretCopy:
    """The remote token Secret, filled from ``data.<key>`` of ``secret`` (same namespace as the
    cache) into its ``data.token`` by provider-kubernetes; the value never appears here, nor, once
    the provider has run, in any Object (``secretcopy``)."""
    remote = secretcopy.remote_secret(token_secret_name(cache), namespace, secretcopy.OPAQUE,
                                      _labels(cache, cluster))
    return secretcopy.SecretCopy(
        shell=dns_label("modelcache", cache, cluster, "token-copy"),
        data=dns_label("modelcache", cache, cluster, "token-data"),
        remote=remote, source=secret, namespace=namespace, provider_config=provider_config,
        labels=_labels(cache, cluster), field_path=field_path(key), to_field_path=f"data.{TOKEN_KEY}")


def job_object(cache: str, namespace: str, cluster: str, provider_config: str,
               repo: str, revision: str, token: bool) -> dict:
    digest = content_hash(repo, revision)
    env = [
        {"name": "MODELPLANE_REPO", "value": repo},
        {"name": "MODELPLANE_REVISION", "value": revision},
        {"name": "MODELPLANE_MOUNT", "value": MOUNT},
        {"name": "MODELPLANE_MARKER", "value": MARKER},
        {"name": "MODELPLANE_HF_HUB", "value": HF_HUB},
        # Keep the hub's own cache off the shared volume.
        {"name": "HF_HOME", "value": "/tmp/hf-home"},
    ]
    if token:
        env.append({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": token_secret_name(cache),
                                                                        "key": TOKEN_KEY}}})
    labels = _labels(cache, cluster)
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": dns_label("modelcache", cache, "hydrate", digest), "namespace": namespace,
                     "labels": labels},
        "spec": {
            "backoffLimit": BACKOFF_LIMIT,
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    # Cloud clusters have only GPU pools (every node carries the GPU taint).
                    "tolerations": [dict(GPU_TOLERATION)],
                    "containers": [{
                        "name": "hydrate",
                        "image": IMAGE,
                        "command": ["/bin/sh", "-c", _SCRIPT],
                        "env": env,
                        "resources": {"requests": {"cpu": "1", "memory": "2Gi"}},
                        "volumeMounts": [{"name": "models", "mountPath": MOUNT}],
                    }],
                    "volumes": [{"name": "models", "persistentVolumeClaim": {"claimName": cache_pvc_name(cache)}}],
                },
            },
        },
    }
    obj = remote_object(dns_label("modelcache", cache, cluster, "job", digest), manifest, provider_config,
                        namespace=namespace, labels=labels, readiness="DeriveFromCelQuery")
    obj["spec"]["readiness"]["celQuery"] = JOB_COMPLETE
    return obj


@dataclass(frozen=True)
class Hydration:
    """A composed hydration Job as its Object describes it: which Job, downloading what."""

    job: str      # namespace/name on the workload cluster
    source: str   # repo@revision
    token: bool   # whether it reads the token Secret


def hydration(obj: Mapping[str, Any] | None) -> Hydration | None:
    """What an observed Job Object runs (None when there is none).

    Read from the Object, not the current spec: a failure is reported for
    the Job that ran, which names only repo@revision (its hash is in the
    name) and whether a token was mounted.
    """
    manifest = manifest_of(obj or {})
    if not manifest:
        return None
    meta = manifest.get("metadata") or {}
    pod = ((manifest.get("spec") or {}).get("template") or {}).get("spec") or {}
    env = {e.get("name"): e.get("value") for c in pod.get("containers") or [] for e in c.get("env") or []}
    return Hydration(job=f"{meta.get('namespace', '')}/{meta.get('name', '')}",
                     source=f"{env.get('MODELPLANE_REPO', '')}@{env.get('MODELPLANE_REVISION', '')}",
                     token="HF_TOKEN" in env)
