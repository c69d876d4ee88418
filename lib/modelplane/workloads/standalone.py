"""A Standalone engine: a Deployment of ``copies`` pods behind a Service.

The replica's HTTPRoute (``replica.route``) sends traffic to the Service. The
Service port is the engine's port, so the route needs no port mapping.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def deployment(name: str, namespace: str, replicas: int, selector: Mapping[str, str],
               pod: Mapping[str, Any], labels: Mapping[str, str]) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(selector)},
            "template": dict(pod),
        },
    }


def service(name: str, namespace: str, selector: Mapping[str, str], port: int,
            labels: Mapping[str, str]) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "selector": dict(selector),
            "ports": [{"name": "http", "port": port, "targetPort": port, "protocol": "TCP"}],
        },
    }


# Deployment readiness as provider-kubernetes evaluates it on the remote object.
READY_CEL = ("has(object.status.availableReplicas) && "
             "object.status.availableReplicas >= object.spec.replicas")


def is_available(remote_status: Mapping[str, Any], replicas: int) -> bool:
    return int(remote_status.get("availableReplicas") or 0) >= replicas
