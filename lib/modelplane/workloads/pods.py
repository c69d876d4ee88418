"""The pod template of one member: what every Modelplane engine pod looks like.

From the member's curated template (one container named ``engine``) a pod
gets, and nothing more privileged:

- the engine container verbatim, plus ``MODELPLANE_LEADER_ADDRESS`` first in
  its env (so user variables can reference it with ``$(...)``);
- the ModelCache PVC read-write at ``/mnt/models``, and that path added to args
  when the member has no ``command`` and no arg already names a model (see
  ``names_model``): first (``vllm serve /mnt/models``) for a vLLM image from
  v0.14.0, ``--model=/mnt/models`` appended otherwise (``engines.with_model``
  says why); with a ``command`` nothing is injected;
- ``/dev/shm`` as a memory-backed emptyDir (``sizeLimit`` = ``shmSize``);
- DRA claims through the member's ResourceClaimTemplate;
- the pool node selector and a toleration for the GPU taint;
- the template's secret volumes, mounted where its ``volumeMounts`` say (after
  Modelplane's own two), and its ``envFrom`` Secret references (the replica
  copies every Secret they name to its cluster: ``secrets``);
- ``terminationMessagePolicy: FallbackToLogsOnError`` on the engine, so a
  failed engine's last log lines land in its container status, where the
  control plane can read them without reaching the cluster.

No securityContext, host namespaces or hostPath are ever set; a volume other
than a secret volume is never carried.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from modelplane import labels as L
from modelplane.workloads import engines

ENGINE = "engine"
MODELS_MOUNT = "/mnt/models"
DEFAULT_PORT = 8000
CLAIM_NAME = "devices"
LEADER_ENV = "MODELPLANE_LEADER_ADDRESS"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


@dataclass(frozen=True)
class PodOptions:
    """What the shape decides about a member's pods."""

    labels: Mapping[str, str]                 # reserved labels (selector + role); user labels are merged under them
    pool: str
    cache_pvc: str | None = None
    claim_template: str | None = None         # ResourceClaimTemplate name when the member claims DRA devices
    leader_address: Mapping[str, Any] = field(default_factory=dict)  # the env var body (value or valueFrom)
    extra_args: Sequence[str] = ()            # appended when the member brings no command (e.g. --port)
    init_containers: Sequence[Mapping[str, Any]] = ()  # native sidecars (restartPolicy Always)


CONTAINER_FIELDS = (
    "image", "imagePullPolicy", "command", "args", "workingDir", "env", "envFrom", "ports", "resources",
    "readinessProbe", "livenessProbe", "startupProbe",
)
MOUNT_FIELDS = ("name", "mountPath", "readOnly")
SECRET_VOLUME_FIELDS = ("secretName", "items", "defaultMode", "optional")
# The kubelet writes the tail of the log (at most 80 lines / 2048 bytes) to the
# termination message when the container wrote none and failed.
TERMINATION_MESSAGE_POLICY = "FallbackToLogsOnError"


def engine_container(template: Mapping[str, Any]) -> dict:
    """The member's engine container (admission guarantees exactly one)."""
    for c in ((template.get("spec") or {}).get("containers") or []):
        if c.get("name") == ENGINE:
            return c
    containers = (template.get("spec") or {}).get("containers") or [{}]
    return containers[0]


def engine_port(template: Mapping[str, Any]) -> int:
    """The port the engine serves on: its first declared port, else 8000."""
    ports = engine_container(template).get("ports") or []
    return int(ports[0]["containerPort"]) if ports else DEFAULT_PORT


def names_model(args: Sequence[str]) -> bool:
    """True when args already choose the model.

    ``--model X`` and ``--model=X`` name it; so does a leading positional
    argument, which is how ``vllm serve <model>`` takes it (the vLLM image's
    entrypoint is ``vllm serve``, so a first arg without a dash is the model).
    """
    if args and not str(args[0]).startswith("-"):
        return True
    return any(a == "--model" or str(a).startswith("--model=") for a in args)


def has_flag(args: Sequence[str], flag: str) -> bool:
    return any(a == flag or str(a).startswith(flag + "=") for a in args)


def pod_template(template: Mapping[str, Any], opts: PodOptions) -> dict:
    """A PodTemplateSpec for one member."""
    spec_in = template.get("spec") or {}
    meta_in = template.get("metadata") or {}
    source = engine_container(template)
    # Only the fields of the curated template are carried: a ModelReplica is
    # composed, not admitted, so nothing else (securityContext, ...) may pass.
    engine = {k: copy.deepcopy(source[k]) for k in CONTAINER_FIELDS if k in source}
    engine["name"] = ENGINE
    engine["terminationMessagePolicy"] = TERMINATION_MESSAGE_POLICY

    env = [{"name": LEADER_ENV, **dict(opts.leader_address)}] if opts.leader_address else []
    env += [e for e in engine.get("env") or [] if e.get("name") != LEADER_ENV]
    if env:
        engine["env"] = env

    if "command" not in engine:
        args = list(engine.get("args") or [])
        if opts.cache_pvc and not names_model(args):
            args = engines.with_model(args, str(engine.get("image") or ""), MODELS_MOUNT)
        for extra in opts.extra_args:
            flag = extra.split("=", 1)[0]
            if not has_flag(args, flag):
                args.append(extra)
        if args:
            engine["args"] = args

    mounts = [{"name": "dshm", "mountPath": "/dev/shm"}]
    volumes: list[dict] = [{"name": "dshm", "emptyDir": _shm(spec_in.get("shmSize"))}]
    if opts.cache_pvc:
        # Read-write, as the ModelCache contract says: engines may write
        # compiled kernels or caches next to the weights.
        mounts.append({"name": "models", "mountPath": MODELS_MOUNT})
        volumes.append({"name": "models", "persistentVolumeClaim": {"claimName": opts.cache_pvc}})
    mounts += [{k: m[k] for k in MOUNT_FIELDS if k in m} for m in source.get("volumeMounts") or []]
    volumes += secret_volumes(spec_in)
    engine["volumeMounts"] = mounts

    spec: dict[str, Any] = {}
    if opts.init_containers:
        spec["initContainers"] = [dict(c) for c in opts.init_containers]
    spec["containers"] = [engine]
    if opts.claim_template:
        resources = dict(engine.get("resources") or {})
        resources["claims"] = [{"name": CLAIM_NAME}]
        engine["resources"] = resources
        spec["resourceClaims"] = [{"name": CLAIM_NAME, "resourceClaimTemplateName": opts.claim_template}]
    if spec_in.get("imagePullSecrets"):
        spec["imagePullSecrets"] = [{"name": s["name"]} for s in spec_in["imagePullSecrets"]]
    spec["nodeSelector"] = {L.POOL: opts.pool}
    spec["tolerations"] = [dict(GPU_TOLERATION)]
    spec["volumes"] = volumes

    metadata: dict[str, Any] = {"labels": L.merged(meta_in.get("labels"), opts.labels)}
    if meta_in.get("annotations"):
        metadata["annotations"] = dict(sorted(meta_in["annotations"].items()))
    return {"metadata": metadata, "spec": spec}


def secret_volumes(spec: Mapping[str, Any]) -> list[dict]:
    """The template's secret volumes, and only those fields: any other volume source is dropped
    (admission admits none; a ModelReplica is composed, not admitted)."""
    out = []
    for v in spec.get("volumes") or []:
        secret = v.get("secret")
        if isinstance(secret, Mapping) and v.get("name"):
            out.append({"name": v["name"],
                        "secret": {k: copy.deepcopy(secret[k]) for k in SECRET_VOLUME_FIELDS if k in secret}})
    return out


def _shm(size: Any) -> dict:
    out: dict[str, Any] = {"medium": "Memory"}
    if size not in (None, ""):
        out["sizeLimit"] = str(size)
    return out
