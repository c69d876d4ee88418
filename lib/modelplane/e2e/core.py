"""Crossplane core v2.3, out of cluster: ``crossplane core init`` then ``crossplane core start``.

What the Helm chart does with an init container and a Deployment, done with
the same binary and a kubeconfig (docs/e2e-crossplane.md has the source
references):

- init installs the core CRDs (from the module's ``cluster/crds``), the CA and
  Crossplane's client certificate Secrets, the Lock, the default
  DeploymentRuntimeConfig and a ManagedResourceActivationPolicy activating
  every managed resource (the chart's default, ``*``);
- start runs every controller with ``--package-runtime=External`` (the lab's
  runtime runs functions and providers), the package cache and the client
  certificate files in the state folder, and metrics/health on free loopback
  ports;
- the Usage webhook, the only one left in v2.3, runs as in a real install:
  without it Crossplane starts no Usage controllers either (``core.go:648``)
  and Usages order nothing. init would point its
  ValidatingWebhookConfiguration at a Service no API server here can reach,
  so init runs with webhooks off and the lab applies the module's
  ``cluster/webhookconfigurations/usage.yaml`` itself, with a loopback URL
  and a server certificate signed by Crossplane's CA (what init would issue).
"""
from __future__ import annotations

import base64
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from modelplane.e2e import upstream
from modelplane.kube import pki
from modelplane.kube.client import Client
from modelplane.kube.net import free_port, http_ok
from modelplane.kube.process import ComponentError, Process, start_ready

NAMESPACE = "crossplane-system"
SERVICE_ACCOUNT = "crossplane"
CA_SECRET = "crossplane-root-ca"
CLIENT_SECRET = "crossplane-tls-client"
READY_TIMEOUT = 60.0
WEBHOOK_CERT_NAME = "crossplane-webhook"


# Settings go in through the environment variables the chart sets: kong derives some flag
# names oddly from the field names (CRDsPath -> --cr-ds-path, TLSCASecretName -> --tlsca-secret-name).
def init_env(crds: Path) -> dict[str, str]:
    return {"POD_NAMESPACE": NAMESPACE, "POD_SERVICE_ACCOUNT": SERVICE_ACCOUNT, "CRDS_PATH": str(crds),
            "ENABLE_WEBHOOKS": "false", "TLS_CA_SECRET_NAME": CA_SECRET, "TLS_CLIENT_SECRET_NAME": CLIENT_SECRET}


def init_argv(binary: Path) -> list:
    return [binary, "core", "init", "--activation=*"]


def start_env(state: Path, client_certs: Path, metrics: int, health: int, webhook: int,
              server_certs: Path) -> dict[str, str]:
    return {"POD_NAMESPACE": NAMESPACE, "POD_SERVICE_ACCOUNT": SERVICE_ACCOUNT, "PACKAGE_RUNTIME": "External",
            "ENABLE_WEBHOOKS": "true", "WEBHOOK_PORT": str(webhook), "TLS_SERVER_CERTS_DIR": str(server_certs),
            "XPKG_CACHE_DIR": str(state / "xpkg-cache"),
            "TLS_CLIENT_CERTS_DIR": str(client_certs), "METRICS_PORT": str(metrics),
            "HEALTH_PROBE_PORT": str(health)}


def webhook_configurations(source: Path, port: int, ca_bundle: bytes) -> list[dict]:
    """The module's webhook configurations (``cluster/webhookconfigurations``) dialled at
    ``https://127.0.0.1:<port><path>``: a Service reference becomes a loopback URL."""
    out = []
    for path in sorted(source.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if not doc:
                continue
            for hook in doc.get("webhooks") or []:
                svc = (hook.get("clientConfig") or {}).get("service") or {}
                hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{svc.get('path', '')}",
                                        "caBundle": base64.b64encode(ca_bundle).decode()}
            out.append(doc)
    return out


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


def _secret(client: Client, name: str) -> dict[str, bytes]:
    secret = client.request("GET", f"/api/v1/namespaces/{NAMESPACE}/secrets/{name}")
    return {k: base64.b64decode(v) for k, v in (secret.get("data") or {}).items()}


def client_certs(client: Client, state: Path) -> Path:
    """The client Secret as files: what the chart mounts for ``--tls-client-certs-dir``."""
    data = _secret(client, CLIENT_SECRET)
    return pki.write_files(state / "tls" / "crossplane-client", {k: data[k] for k in ("ca.crt", "tls.crt", "tls.key")})


def server_certs(client: Client, state: Path) -> tuple[Path, bytes]:
    """The webhook server's certificate (loopback names, signed by ``crossplane-root-ca``) as
    files for ``TLS_SERVER_CERTS_DIR``, and the CA the API server must trust."""
    ca = _secret(client, CA_SECRET)
    data = pki.CA.from_pem(ca["tls.crt"], ca["tls.key"]).loopback_tls(WEBHOOK_CERT_NAME)
    return pki.write_files(state / "tls" / WEBHOOK_CERT_NAME, data), ca["tls.crt"]


class Core:
    """A running ``crossplane core start``."""

    def __init__(self, client: Client, kubeconfig: Path, state: Path) -> None:
        (state / "xpkg-cache").mkdir(parents=True, exist_ok=True)
        server, ca = server_certs(client, state)
        certs = client_certs(client, state)

        def start() -> tuple[Process, Callable[[], bool]]:
            # New ports on every attempt: another process may take a picked port before core binds
            # it (seen with suites beside each other: "bind: address already in use").
            self.metrics, self.health, self.webhook = free_port(), free_port(), free_port()
            env = {**start_env(state, certs, self.metrics, self.health, self.webhook, server),
                   "KUBECONFIG": str(kubeconfig)}
            process = Process("crossplane", start_argv(upstream.binary("crossplane-core")),
                              state / "crossplane.log", env=env)
            return process, self.ready

        # Ready includes the webhook server listening (core.go:681).
        self.process, _ = start_ready(start, READY_TIMEOUT)
        for obj in webhook_configurations(upstream.source("crossplane-core", "cluster", "webhookconfigurations"),
                                          self.webhook, ca):
            client.apply(obj)

    def ready(self) -> bool:
        return http_ok(f"http://127.0.0.1:{self.health}/readyz", timeout=1)

    def stop(self) -> None:
        self.process.stop()
