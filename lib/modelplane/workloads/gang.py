"""A Leader/Worker engine: LeaderWorkerSet + InferencePool + endpoint picker.

One LWS group is one copy of the engine (``size`` = 1 leader + worker nodes),
``replicas`` = copies. Traffic reaches only leaders: the InferencePool selects
pods carrying LWS's worker-index label "0", and the endpoint picker (EPP)
chooses among them. Worker pods learn the leader through
``MODELPLANE_LEADER_ADDRESS = $(LWS_LEADER_ADDRESS)``; LWS's pod webhook
prepends ``LWS_LEADER_ADDRESS`` to every container's env, so the reference
resolves.

The EPP pieces (Deployment, Service on the ext-proc gRPC port 9002,
ServiceAccount, Role/RoleBinding, ConfigMap with an EndpointPickerConfig) are
also used by ``disaggregated`` with a prefill/decode config.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from modelplane.workloads.pods import GPU_TOLERATION

LWS_API = "leaderworkerset.x-k8s.io/v1"
POOL_API = "inference.networking.k8s.io/v1"
LEADER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
LEADER_ADDRESS = {"value": "$(LWS_LEADER_ADDRESS)"}

# Pinned llm-d router endpoint picker (EPP) release.
EPP_IMAGE = "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0"
EPP_GRPC_PORT = 9002
EPP_HEALTH_PORT = 9003
EPP_METRICS_PORT = 9090
EPP_CONFIG_FILE = "epp.yaml"
EPP_CONFIG_API = "llm-d.ai/v1alpha1"

READY_CEL = ("has(object.status.readyReplicas) && "
             "object.status.readyReplicas >= object.spec.replicas")


def leader_worker_set(name: str, namespace: str, copies: int, size: int, leader: Mapping[str, Any],
                      worker: Mapping[str, Any], labels: Mapping[str, str]) -> dict:
    return {
        "apiVersion": LWS_API,
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "replicas": copies,
            "startupPolicy": "LeaderCreated",
            "leaderWorkerTemplate": {
                "size": size,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": dict(leader),
                "workerTemplate": dict(worker),
            },
        },
    }


def is_group_ready(remote_status: Mapping[str, Any], copies: int) -> bool:
    return int(remote_status.get("readyReplicas") or 0) >= copies


def inference_pool(name: str, namespace: str, selector: Mapping[str, str], port: int, epp: str,
                   labels: Mapping[str, str]) -> dict:
    return {
        "apiVersion": POOL_API,
        "kind": "InferencePool",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(sorted(selector.items()))},
            "targetPorts": [{"number": port}],
            "endpointPickerRef": {"kind": "Service", "name": epp, "port": {"number": EPP_GRPC_PORT},
                                  "failureMode": "FailClose"},
        },
    }


def default_epp_config() -> dict:
    """Queue- and KV-cache-aware picking among identical endpoints."""
    return {
        "apiVersion": EPP_CONFIG_API,
        "kind": "EndpointPickerConfig",
        "plugins": [
            {"type": "single-profile-handler"},
            {"type": "queue-scorer"},
            {"type": "kv-cache-utilization-scorer"},
            {"type": "prefix-cache-scorer"},
            {"type": "max-score-picker"},
        ],
        "schedulingProfiles": [{
            "name": "default",
            "plugins": [
                {"pluginRef": "queue-scorer", "weight": 2},
                {"pluginRef": "kv-cache-utilization-scorer", "weight": 2},
                {"pluginRef": "prefix-cache-scorer", "weight": 3},
                {"pluginRef": "max-score-picker"},
            ],
        }],
    }


def endpoint_picker(name: str, namespace: str, pool: str, config: Mapping[str, Any],
                    labels: Mapping[str, str]) -> dict[str, dict]:
    """The EPP manifests by kind-suffix: deployment, service, serviceaccount, role, rolebinding, config."""
    selector = {"app.kubernetes.io/name": "endpoint-picker", "app.kubernetes.io/instance": name}
    meta = lambda: {"name": name, "namespace": namespace, "labels": {**labels, **selector}}
    text = yaml.safe_dump(dict(config), sort_keys=False)
    container = {
        "name": "epp",
        "image": EPP_IMAGE,
        "args": [
            f"--pool-name={pool}",
            f"--pool-namespace={namespace}",
            f"--grpc-port={EPP_GRPC_PORT}",
            f"--grpc-health-port={EPP_HEALTH_PORT}",
            f"--metrics-port={EPP_METRICS_PORT}",
            f"--config-file=/config/{EPP_CONFIG_FILE}",
        ],
        "ports": [
            {"name": "grpc", "containerPort": EPP_GRPC_PORT},
            {"name": "grpc-health", "containerPort": EPP_HEALTH_PORT},
            {"name": "metrics", "containerPort": EPP_METRICS_PORT},
        ],
        "readinessProbe": {"grpc": {"port": EPP_HEALTH_PORT, "service": "inference-extension"},
                           "periodSeconds": 2},
        "livenessProbe": {"grpc": {"port": EPP_HEALTH_PORT, "service": "inference-extension"},
                          "periodSeconds": 10},
        "volumeMounts": [{"name": "config", "mountPath": "/config", "readOnly": True}],
    }
    return {
        "config": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(),
                   "data": {EPP_CONFIG_FILE: text}},
        "serviceaccount": {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta()},
        "role": {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta(),
            "rules": [
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": ["inference.networking.k8s.io"], "resources": ["inferencepools"],
                 "verbs": ["get", "list", "watch"]},
                {"apiGroups": ["llm-d.ai", "inference.networking.x-k8s.io"],
                 "resources": ["inferenceobjectives", "inferencemodelrewrites"],
                 "verbs": ["get", "list", "watch"]},
            ],
        },
        "rolebinding": {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta(),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
        },
        "deployment": {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(),
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": dict(selector)},
                "template": {
                    "metadata": {"labels": dict(selector)},
                    "spec": {
                        "serviceAccountName": name,
                        # GKE/EKS/AKS clusters have only GPU pools (every node carries the GPU
                        # taint), so the CPU-only picker must tolerate it to run anywhere.
                        "tolerations": [dict(GPU_TOLERATION)],
                        "containers": [container],
                        "volumes": [{"name": "config", "configMap": {"name": name}}],
                    },
                },
            },
        },
        "service": {
            "apiVersion": "v1", "kind": "Service", "metadata": meta(),
            "spec": {
                "selector": dict(selector),
                "ports": [{"name": "grpc-ext-proc", "port": EPP_GRPC_PORT, "targetPort": EPP_GRPC_PORT,
                           "protocol": "TCP", "appProtocol": "http2"}],
            },
        },
    }
