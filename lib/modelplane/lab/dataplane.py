"""The lab's gateway data plane: one Traefik per lab cluster (and one for the control plane).

With a data plane (``lab.netns``), ``lab up`` installs on every lab API server the Gateway API
kinds Traefik's gateway provider watches (``DATA_PLANE_CRDS``: BackendTLSPolicy, GRPCRoute, TLSRoute, ListenerSet, TCPRoute,
UDPRoute, beside the lab's own
``install.WORKLOAD_CRDS``: its informers never sync without them) and the GatewayClass
``modelplane-lab`` (controllerName ``traefik.io/gateway-controller``, labelled
``modelplane.ai/lab`` so a simulate reset keeps it). Then, once those CRDs are Established, it
starts Traefik inside the lab's namespace:

- entry point ``web`` on ``<gateway ip>:80`` (the port of the Gateway listeners Modelplane
  composes), ``traefik`` on ``<gateway ip>:8082`` for ``/ping`` (its readiness);
- the ``kubernetesgateway`` provider against that cluster's API server (``KUBECONFIG``: the
  lab's admin kubeconfig; Traefik reads it when it is set), ``statusAddress.ip`` the gateway
  IP, so Traefik itself writes every Gateway's address and conditions;
- no version check and no anonymous usage report; its log in ``<state>/<cluster>/traefik.log``.

Traefik serves only the GatewayClasses with its controllerName; the stand-in (``lab.standin``)
keeps answering the others (Envoy Gateway's) and never touches ``modelplane-lab``.
"""
from __future__ import annotations

from pathlib import Path

from modelplane.lab import install
from modelplane.physical.inventory import LAB_LABEL

GATEWAY_CLASS = "modelplane-lab"
CONTROLLER = "traefik.io/gateway-controller"
GATEWAY_API = "gateway.networking.k8s.io/v1"
HTTP_PORT = 80
PING_PORT = 8082
# Kinds Traefik's gateway provider lists besides the lab's own (under paths.crds_dir()).
DATA_PLANE_CRDS = (
    "gateway-api/gateway.networking.k8s.io_backendtlspolicies.yaml",
    "gateway-api/gateway.networking.k8s.io_grpcroutes.yaml",
    "gateway-api/gateway.networking.k8s.io_tlsroutes.yaml",
    "gateway-api/gateway.networking.k8s.io_listenersets.yaml",
    "gateway-api/gateway.networking.k8s.io_tcproutes.yaml",
    "gateway-api/gateway.networking.k8s.io_udproutes.yaml",
)


def crds(root: Path | None = None) -> list[dict]:
    """The documents of ``DATA_PLANE_CRDS``."""
    return install.load_crds(DATA_PLANE_CRDS, "Traefik's gateway provider needs it", root)


def gateway_class(cluster: str) -> dict:
    """The lab's GatewayClass, served by Traefik (labelled as the lab's own: a reset keeps it)."""
    return {
        "apiVersion": GATEWAY_API,
        "kind": "GatewayClass",
        "metadata": {"name": GATEWAY_CLASS, "labels": {LAB_LABEL: cluster}},
        "spec": {"controllerName": CONTROLLER,
                 "description": "modelplane lab: Traefik in the lab's network namespace"},
    }


def traefik(binary: Path, gateway_ip: str) -> list[str]:
    """Traefik's command line for one cluster (its API server comes from ``KUBECONFIG``)."""
    return [
        str(binary),
        f"--entryPoints.web.address={gateway_ip}:{HTTP_PORT}",
        f"--entryPoints.traefik.address={gateway_ip}:{PING_PORT}",
        # A stopped lab stops at once: no 10 s of graceful draining per Traefik.
        "--entryPoints.web.transport.lifeCycle.graceTimeOut=1s",
        "--entryPoints.traefik.transport.lifeCycle.graceTimeOut=1s",
        "--ping=true",
        "--providers.kubernetesGateway=true",
        f"--providers.kubernetesGateway.statusAddress.ip={gateway_ip}",
        "--providers.kubernetesGateway.throttleDuration=0s",
        "--global.checkNewVersion=false",
        "--global.sendAnonymousUsage=false",
        "--log.level=INFO",
        "--log.noColor=true",
    ]


def traefik_env(kubeconfig: Path | str) -> dict[str, str]:
    return {"KUBECONFIG": str(kubeconfig)}


def ping_url(gateway_ip: str) -> str:
    return f"http://{gateway_ip}:{PING_PORT}/ping"


def class_accepted(gc: dict) -> bool:
    gen = (gc.get("metadata") or {}).get("generation")
    return any(c.get("type") == "Accepted" and c.get("status") == "True" and c.get("observedGeneration") == gen
               for c in (gc.get("status") or {}).get("conditions") or [])
