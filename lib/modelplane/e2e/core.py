"""Crossplane core v2.3, out of cluster: ``crossplane core init`` then ``crossplane core start``.

What the Helm chart does with an init container and a Deployment, done with
the same binary and a kubeconfig (docs/e2e-crossplane.md has the source
references):

- init installs the core CRDs (from the module's ``cluster/crds``), the CA and
  Crossplane's client certificate Secrets, the Lock, the default
  DeploymentRuntimeConfig and a ManagedResourceActivationPolicy activating
  every managed resource (the chart's default, ``*``);
- start runs every controller with ``--package-runtime=External`` (the lab's
  runtime runs functions and providers), webhooks off (only the Usage webhook
  is left in v2.3; its server would need a Service the API server can reach),
  the package cache and the client certificate files in the state folder, and
  metrics/health on free loopback ports.
"""
from __future__ import annotations

import base64
import os
import subprocess
import urllib.request
from pathlib import Path

from modelplane.e2e import certs, upstream
from modelplane.kube.client import Client
from modelplane.kube.process import ComponentError, Process
from modelplane.render.runners import free_port

NAMESPACE = "crossplane-system"
SERVICE_ACCOUNT = "crossplane"
CA_SECRET = "crossplane-root-ca"
CLIENT_SECRET = "crossplane-tls-client"
READY_TIMEOUT = 60.0


def init_argv(binary: Path, crds: Path) -> list:
    return [binary, "core", "init", f"--namespace={NAMESPACE}", f"--service-account={SERVICE_ACCOUNT}",
            f"--crds-path={crds}", "--enable-webhooks=false",
            f"--tls-ca-secret-name={CA_SECRET}", f"--tls-client-secret-name={CLIENT_SECRET}",
            "--activation=*"]


def start_argv(binary: Path, state: Path, client_certs: Path, metrics: int, health: int) -> list:
    return [binary, "core", "start", f"--namespace={NAMESPACE}", f"--service-account={SERVICE_ACCOUNT}",
            "--package-runtime=External", "--enable-webhooks=false",
            f"--xpkg-cache-dir={state / 'xpkg-cache'}", f"--tls-client-certs-dir={client_certs}",
            f"--metrics-port={metrics}", f"--health-probe-port={health}",
            # The lab reconciles a few dozen objects: look again sooner than the 1 m default.
            "--poll-interval=10s"]


def prerequisites(client: Client) -> None:
    """The namespace and service account the chart creates (the package fetcher reads the SA)."""
    client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    client.apply({"apiVersion": "v1", "kind": "ServiceAccount",
                  "metadata": {"name": SERVICE_ACCOUNT, "namespace": NAMESPACE}})


def init(client: Client, kubeconfig: Path, state: Path) -> None:
    """Run ``crossplane core init`` to completion (it is idempotent)."""
    prerequisites(client)
    binary = upstream.binary("crossplane-core")
    log = state / "crossplane-init.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        done = subprocess.run([str(a) for a in init_argv(binary, upstream.source("crossplane-core", "cluster", "crds"))],
                              stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "KUBECONFIG": str(kubeconfig)},
                              timeout=120, check=False)
    if done.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
        raise ComponentError(f"crossplane core init failed ({done.returncode}; log: {log}):\n{tail}")


def client_certs(client: Client, state: Path) -> Path:
    """The client Secret as files: what the chart mounts for ``--tls-client-certs-dir``."""
    secret = client.request("GET", f"/api/v1/namespaces/{NAMESPACE}/secrets/{CLIENT_SECRET}")
    data = {k: base64.b64decode(v) for k, v in (secret.get("data") or {}).items()}
    return certs.write_dir(state / "tls" / "crossplane-client", {k: data[k] for k in ("ca.crt", "tls.crt", "tls.key")})


class Core:
    """A running ``crossplane core start``."""

    def __init__(self, client: Client, kubeconfig: Path, state: Path) -> None:
        self.metrics, self.health = free_port(), free_port()
        (state / "xpkg-cache").mkdir(parents=True, exist_ok=True)
        argv = start_argv(upstream.binary("crossplane-core"), state, client_certs(client, state),
                          self.metrics, self.health)
        self.process = Process("crossplane", argv, state / "crossplane.log", env={"KUBECONFIG": str(kubeconfig)})
        self.process.wait_ready(self.ready, READY_TIMEOUT)

    def ready(self) -> bool:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                f"http://127.0.0.1:{self.health}/readyz", timeout=1) as rsp:
            return rsp.status == 200

    def stop(self) -> None:
        self.process.stop()
