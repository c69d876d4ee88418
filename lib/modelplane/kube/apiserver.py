"""kube-apiserver on loopback (or another local ``address``: the lab's data plane),
backed by an etcd under its own key prefix.

Serving certificate, client CA and an admin client certificate (group
``system:masters``) come from one CA (``pki.CA``, shareable between
servers); each server gets its own service-account signing key. The state
folder holds ``pki/``, ``kubeconfig`` (embedded data) and ``kube-apiserver.log``.
Several servers may share one etcd: each passes a distinct ``name``, which
becomes its ``--etcd-prefix`` (``/registry/<name>``).

Ready means ``/readyz`` says ok: every post-start hook done (built-in
APIs, RBAC bootstrap roles, the CRD controllers), so a CRD can be created
right away. ``resource.k8s.io/v1`` (DRA) is served by default from 1.34.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from modelplane.kube import kubeconfig as kc
from modelplane.kube import pki, tools
from modelplane.kube.client import Client
from modelplane.kube.net import free_port
from modelplane.kube.process import ComponentError, Process, start_ready

READY_TIMEOUT = 20.0
SERVICE_CIDR = "10.96.0.0/16"
ISSUER = "https://kubernetes.default.svc.cluster.local"
_SERVING_NAMES = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                  "kubernetes.default.svc.cluster.local")


class APIServer:
    """A running kube-apiserver. ``url``, ``kubeconfig`` (path) and ``client()`` reach it as admin."""

    def __init__(self, directory: Path, etcd_endpoint: str, *, name: str = "local", ca: pki.CA | None = None,
                 binary: Path | None = None, extra_args: Sequence[str] = (),
                 timeout: float = READY_TIMEOUT, address: str = "127.0.0.1") -> None:
        binary = binary or tools.find("kube-apiserver")
        if binary is None:
            raise ComponentError(tools.missing("kube-apiserver"))
        self.name = name
        self.directory = directory
        self.ca = ca or pki.CA(f"{name}-ca")
        self.address = address
        files = self._pki(directory / "pki")

        def start() -> tuple[Process, Callable[[], bool]]:
            self.port = free_port()
            self.url = f"https://{address}:{self.port}"
            self.kubeconfig = kc.write(directory / "kubeconfig", kc.build(
                name, self.url, self.ca.cert, files["admin"].cert, files["admin"].key))
            process = Process("kube-apiserver", [
                binary,
                f"--etcd-servers={etcd_endpoint}", f"--etcd-prefix=/registry/{name}",
                f"--bind-address={address}", f"--advertise-address={address}", f"--secure-port={self.port}",
                f"--cert-dir={directory / 'pki'}",
                f"--tls-cert-file={self.paths['serving.crt']}", f"--tls-private-key-file={self.paths['serving.key']}",
                f"--client-ca-file={self.paths['ca.crt']}",
                f"--service-account-issuer={ISSUER}",
                f"--service-account-key-file={self.paths['sa.pub']}",
                f"--service-account-signing-key-file={self.paths['sa.key']}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--authorization-mode=RBAC",
                "--allow-privileged=true",
                # The "kubernetes" Service's endpoints would point at loopback: nothing can use them.
                "--endpoint-reconciler-type=none",
                "--profiling=false",
                *extra_args,
            ], directory / "kube-apiserver.log")
            return process, self.client().ready

        self.process, self.ready_seconds = start_ready(start, timeout)

    def _pki(self, directory: Path) -> dict[str, pki.Pair]:
        """Write the CA, serving, admin and service-account files; ``self.paths`` names them."""
        pairs = {
            "ca": self.ca.pair,
            "serving": self.ca.issue("kube-apiserver", dns=_SERVING_NAMES,
                                     ips=tuple(dict.fromkeys(("127.0.0.1", self.address, "10.96.0.1"))),
                                     server=True),
            "admin": self.ca.issue("admin", organizations=("system:masters",), client=True),
            "sa": pki.signing_key(),
        }
        self.paths: dict[str, Path] = {}
        for stem, pair in pairs.items():
            crt, key = pair.write(directory, stem)
            if stem == "sa":  # a bare key pair: the "certificate" is the public key
                crt = crt.rename(directory / "sa.pub")
            self.paths[crt.name] = crt
            self.paths[key.name] = key
        return pairs

    def client(self) -> Client:
        """An admin REST client (a new one: discovery caches are per client)."""
        return Client(self.url, self.paths["ca.crt"], self.paths["admin.crt"], self.paths["admin.key"])

    def stop(self) -> None:
        self.process.stop()
