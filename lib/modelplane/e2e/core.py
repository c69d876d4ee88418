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
import time
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


# Settings go in through the environment variables the chart sets: kong derives some flag
# names oddly from the field names (CRDsPath -> --cr-ds-path, TLSCASecretName -> --tlsca-secret-name).
def init_env(crds: Path) -> dict[str, str]:
    return {"POD_NAMESPACE": NAMESPACE, "POD_SERVICE_ACCOUNT": SERVICE_ACCOUNT, "CRDS_PATH": str(crds),
            "ENABLE_WEBHOOKS": "false", "TLS_CA_SECRET_NAME": CA_SECRET, "TLS_CLIENT_SECRET_NAME": CLIENT_SECRET}


def init_argv(binary: Path) -> list:
    return [binary, "core", "init", "--activation=*"]


def start_env(state: Path, client_certs: Path, metrics: int, health: int) -> dict[str, str]:
    return {"POD_NAMESPACE": NAMESPACE, "POD_SERVICE_ACCOUNT": SERVICE_ACCOUNT, "PACKAGE_RUNTIME": "External",
            "ENABLE_WEBHOOKS": "false", "XPKG_CACHE_DIR": str(state / "xpkg-cache"),
            "TLS_CLIENT_CERTS_DIR": str(client_certs), "METRICS_PORT": str(metrics),
            "HEALTH_PROBE_PORT": str(health)}


def start_argv(binary: Path) -> list:
    # The lab reconciles a few dozen objects: look again sooner than the 1 m default.
    return [binary, "core", "start", "--poll-interval=10s"]


def prerequisites(client: Client) -> None:
    """The namespace and service account the chart creates (the package fetcher reads the SA)."""
    client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    client.apply({"apiVersion": "v1", "kind": "ServiceAccount",
                  "metadata": {"name": SERVICE_ACCOUNT, "namespace": NAMESPACE}})


def init(client: Client, kubeconfig: Path, state: Path, attempts: int = 5) -> int:
    """Run ``crossplane core init`` to completion; returns the attempts it took.

    init applies the core CRDs and then, at once, objects of those kinds (the Lock), which
    fails while the API server has not started serving them yet; in a cluster the kubelet
    restarts the init container. Here: run it again (every step is idempotent)."""
    prerequisites(client)
    binary = upstream.binary("crossplane-core")
    env = {**os.environ, **init_env(upstream.source("crossplane-core", "cluster", "crds")),
           "KUBECONFIG": str(kubeconfig)}
    log = state / "crossplane-init.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, attempts + 1):
        with open(log, "ab") as out:
            done = subprocess.run([str(a) for a in init_argv(binary)], stdout=out, stderr=subprocess.STDOUT,
                                  env=env, timeout=120, check=False)
        if done.returncode == 0:
            return attempt
        time.sleep(2)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
    raise ComponentError(f"crossplane core init failed {attempts} times (log: {log}):\n{tail}")


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
        env = {**start_env(state, client_certs(client, state), self.metrics, self.health),
               "KUBECONFIG": str(kubeconfig)}
        self.process = Process("crossplane", start_argv(upstream.binary("crossplane-core")), state / "crossplane.log",
                               env=env)
        self.process.wait_ready(self.ready, READY_TIMEOUT)

    def ready(self) -> bool:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                f"http://127.0.0.1:{self.health}/readyz", timeout=1) as rsp:
            return rsp.status == 200

    def stop(self) -> None:
        self.process.stop()
