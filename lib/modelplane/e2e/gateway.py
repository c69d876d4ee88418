"""The data plane of the e2e control plane: a Traefik that serves what real Crossplane composed there.

Crossplane's control plane has its own API server, so the InferenceGateway's Gateway and the
ModelServices' routes it composes live there, not on the lab's control-plane API server (which
``simulate --lab`` uses). With a lab data plane, ``start`` gives that API server what the lab
gives its own:

- the Gateway API CRDs (``controlplane.CONTROL_PLANE_CRDS`` installs the whole ``gateway-api``
  folder, which holds the five kinds Traefik's informers need besides the routes) and the lab's
  GatewayClass ``modelplane-lab``;
- one more Traefik inside the lab's network namespace, on ``198.18.<slot>.9`` (``Network.gateway``:
  the lab's address plan uses .1, .2, .10 and .11 onwards, docs/tools/lab.md), its
  ``kubernetesGateway`` provider reading that API server. The API server therefore listens on the
  slot's host address (``Network.host``), which the namespace reaches through the veth; loopback
  is the host's own and unreachable from inside.

Traefik writes the Gateway's status address itself, so the InferenceGateway's ``status.address``
(and every ModelService's) is that gateway: a request from the host goes control-plane Traefik ->
the cluster's Traefik -> the mock engine on the pod's address.

The lab keeps its Traefik command line and namespace plumbing private (``modelplane.lab`` exports
neither; tests/architecture), so the few facts used here are stated again: the flags mirror the
lab's own Traefik (``lab/dataplane.py``), ``eth0`` is the namespace's end of the veth
(``lab/netns.py``).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from modelplane.kube import Client, tools
from modelplane.kube.net import http_ok
from modelplane.kube.process import ComponentError, Process
from modelplane.lab import GATEWAY_CLASS

NAME = "traefik"
CONTROLLER = "traefik.io/gateway-controller"      # the controllerName Traefik serves
GATEWAY_API = "gateway.networking.k8s.io/v1"
HTTP_PORT = 80                                     # the port of the listeners Modelplane composes
PING_PORT = 8082
HOST_OCTET = 9                                     # 198.18.<slot>.9
INSIDE = "eth0"                                    # the namespace's end of the lab's veth


@dataclass(frozen=True)
class Network:
    """Where the e2e control plane's data plane goes: the lab's namespace and slot."""

    namespace: str
    slot: int
    host: str          # the host end of the lab's veth: the control plane's API server binds here

    @property
    def gateway(self) -> str:
        return f"198.18.{self.slot}.{HOST_OCTET}"

    @classmethod
    def of(cls, lab) -> Network | None:
        """The lab's network (``LabState.network``), or None for a lab without gateways."""
        net = getattr(lab, "network", None)
        if net is None or getattr(lab, "control_plane", None) is None:
            return None
        return cls(namespace=net.namespace, slot=net.slot, host=net.host)


def gateway_class() -> dict:
    return {"apiVersion": GATEWAY_API, "kind": "GatewayClass", "metadata": {"name": GATEWAY_CLASS},
            "spec": {"controllerName": CONTROLLER,
                     "description": "modelplane e2e: Traefik in the lab's network namespace"}}


def traefik(binary: Path, address: str) -> list[str]:
    """Traefik's command line (its API server comes from ``KUBECONFIG``); ``statusAddress`` makes it
    write the Gateway's address."""
    return [str(binary),
            f"--entryPoints.web.address={address}:{HTTP_PORT}",
            f"--entryPoints.traefik.address={address}:{PING_PORT}",
            "--entryPoints.web.transport.lifeCycle.graceTimeOut=1s",   # stop at once on `down`
            "--entryPoints.traefik.transport.lifeCycle.graceTimeOut=1s",
            "--ping=true",
            "--providers.kubernetesGateway=true",
            f"--providers.kubernetesGateway.statusAddress.ip={address}",
            "--providers.kubernetesGateway.throttleDuration=0s",
            "--global.checkNewVersion=false",
            "--global.sendAnonymousUsage=false",
            "--log.level=INFO",
            "--log.noColor=true"]


def accepted(gc: dict) -> bool:
    gen = (gc.get("metadata") or {}).get("generation")
    return any(c.get("type") == "Accepted" and c.get("status") == "True" and c.get("observedGeneration") == gen
               for c in (gc.get("status") or {}).get("conditions") or [])


def _ip() -> str:
    found = shutil.which("ip") or next((p for p in ("/usr/sbin/ip", "/sbin/ip") if os.path.exists(p)), None)
    if not found:
        raise ComponentError("the e2e's data plane needs `ip` (iproute2)")
    return found


def start(client: Client, kubeconfig: Path, network: Network, directory: Path,
          timeout: float = 120.0) -> Process:
    """The GatewayClass on the control plane, then its Traefik; returns once Traefik answers
    ``/ping`` and has accepted the class (its informers have synced)."""
    binary = tools.find("traefik")
    if binary is None:
        raise ComponentError(tools.missing("traefik"))
    client.apply(gateway_class())
    ip = _ip()
    add = subprocess.run([ip, "-n", network.namespace, "addr", "replace", f"{network.gateway}/32", "dev", INSIDE],
                         capture_output=True, text=True, check=False)
    if add.returncode != 0:
        raise ComponentError(f"could not add {network.gateway} in namespace {network.namespace}: {add.stderr.strip()}")
    proc = Process(NAME, [ip, "netns", "exec", network.namespace, *traefik(binary, network.gateway)],
                   directory / "traefik.log", env={"KUBECONFIG": str(kubeconfig)})
    path = f"/apis/{GATEWAY_API}/gatewayclasses/{GATEWAY_CLASS}"
    deadline = time.monotonic() + timeout
    while True:
        if not proc.alive():
            raise proc.failure("exited during start-up")
        try:
            ok = accepted(client.request("GET", path))
        except Exception:  # noqa: BLE001 - the API server is busy: ask again
            ok = False
        if ok and http_ok(f"http://{network.gateway}:{PING_PORT}/ping"):
            return proc
        if time.monotonic() > deadline:
            proc.stop()
            raise ComponentError(f"the control plane's Traefik did not accept GatewayClass {GATEWAY_CLASS} "
                                 f"within {timeout:.0f} s (log: {proc.log})")
        time.sleep(0.5)
