"""The External package runtime: runs what Crossplane's package manager installed, as processes.

Crossplane core runs with ``--package-runtime=External``: it installs packages
and establishes their objects but leaves running them to "an external
controller". This is that controller, doing for each *active* revision what
the Deployment runtime's hooks do (``internal/controller/pkg/runtime`` in
Crossplane v2.3), with processes on loopback instead of Deployments:

- a TLS server Secret ``<package>-tls-server`` (``tls.crt``, ``tls.key``,
  ``ca.crt``) signed by ``crossplane-root-ca``, named in the revision's
  ``status.tlsServerSecretName`` (the package manager will not establish a
  runtime package's objects before that);
- FunctionRevision: ``modelplane serve <function>`` on ``127.0.0.1:<port>``
  with that certificate; ``status.endpoint`` is where Crossplane dials;
- ProviderRevision: the provider binary from the tool cache, with the control
  plane's kubeconfig and the certificate for its webhook server; a stand-in
  provider package (no controller: no cloud) runs nothing and says so;
- processes start once the revision is ``RevisionHealthy`` (its objects established),
  as the Deployment runtime's post-establish hook does;
- condition ``RuntimeHealthy`` once the process answers.

``sync()`` is one idempotent pass; the processes it started are recorded in
``<state>/runtime.json`` (pid, port) so a later pass, ``status`` and ``down``
find them.
"""
from __future__ import annotations

import base64
import json
import os
import signal
import socket
import sys
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from modelplane.e2e import certs, upstream
from modelplane.e2e.packages import BUILT_PROVIDERS, STANDIN_ANNOTATION
from modelplane.kube.client import ApiError, Client
from modelplane.kube.process import Process
from modelplane.render.runners import free_port

NAMESPACE = "crossplane-system"
ROOT_CA = "crossplane-root-ca"
LABEL_PACKAGE = "pkg.crossplane.io/package"
PKG_API = "pkg.crossplane.io/v1"
RUNTIME_HEALTHY = "RuntimeHealthy"
REVISION_HEALTHY = "RevisionHealthy"
REVISIONS = ("FunctionRevision", "ProviderRevision")
POLL = "10s"


@dataclass
class Runner:
    """One process the runtime started for a revision."""

    revision: str
    kind: str
    package: str
    pid: int
    port: int
    log: str


def package_path(revision: Mapping[str, Any]) -> str:
    """The package path without tag or digest (``xpkg.crossplane.io/modelplane/compose-x``)."""
    src = (revision.get("spec") or {}).get("image", "")  # the source as the package named it (pre-rewrite)
    src = src.split("@", 1)[0]
    head, _, tail = src.rpartition(":")
    return head if head and "/" not in tail else src


def condition(status: str, reason: str, message: str) -> dict:
    return {"type": RUNTIME_HEALTHY, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def with_condition(conditions: list[dict], new: dict) -> list[dict]:
    """``conditions`` with ``new`` in place of its type (transition time kept when nothing changed)."""
    out, placed = [], False
    for c in conditions:
        if c.get("type") != new["type"]:
            out.append(c)
            continue
        same = (c.get("status"), c.get("reason"), c.get("message")) == (new["status"], new["reason"], new["message"])
        out.append(c if same else new)
        placed = True
    return out if placed else [*out, new]


def _true(obj: Mapping[str, Any], typ: str) -> bool:
    return any(c.get("type") == typ and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


def _alive(pid: int) -> bool:
    try:  # our own child that exited is a zombie until reaped: reap it first
        if os.waitpid(pid, os.WNOHANG)[0]:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _tcp_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _http_ok(port: int, path: str) -> bool:
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                f"http://127.0.0.1:{port}{path}", timeout=1) as rsp:
            return rsp.status == 200
    except OSError:
        return False


class ExternalRuntime:
    def __init__(self, client: Client, state: Path, kubeconfig: Path, *, python: str = sys.executable) -> None:
        self.client = client
        self.state = state
        self.kubeconfig = kubeconfig
        self.python = python
        state.mkdir(parents=True, exist_ok=True)
        self.record = state / "runtime.json"
        self._tls: dict[str, tuple[str, Path]] = {}
        self.runners: dict[str, Runner] = {
            name: Runner(**r) for name, r in (json.loads(self.record.read_text()) if self.record.exists() else {}).items()
        }

    # ----- records -----------------------------------------------------------------------------
    def _save(self) -> None:
        self.record.write_text(json.dumps({k: asdict(v) for k, v in sorted(self.runners.items())}, indent=2))

    # ----- TLS -----------------------------------------------------------------------------------
    def _secret(self, name: str) -> dict | None:
        try:
            return self.client.request("GET", f"/api/v1/namespaces/{NAMESPACE}/secrets/{name}")
        except ApiError as err:
            if err.code == 404:
                return None
            raise

    def server_secret(self, package: str) -> tuple[str, Path]:
        """Ensure ``<package>-tls-server``; returns its name and a folder with its files (once per package)."""
        if package not in self._tls:
            self._tls[package] = self._server_secret(package)
        return self._tls[package]

    def _server_secret(self, package: str) -> tuple[str, Path]:
        name = f"{package}-tls-server"
        found = self._secret(name)
        data = {k: base64.b64decode(v) for k, v in ((found or {}).get("data") or {}).items()}
        if not all(data.get(k) for k in ("tls.crt", "tls.key", "ca.crt")):
            ca = self._secret(ROOT_CA)
            if ca is None:
                raise RuntimeError(f"no Secret {NAMESPACE}/{ROOT_CA}: run `crossplane core init` first")
            ca_data = {k: base64.b64decode(v) for k, v in ca["data"].items()}
            data = certs.issue(ca_data["tls.crt"], ca_data["tls.key"], package)
            body = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                    "metadata": {"name": name, "namespace": NAMESPACE,
                                 "labels": {LABEL_PACKAGE: package, "modelplane.ai/lab": "runtime"}},
                    "data": {k: base64.b64encode(v).decode() for k, v in data.items()}}
            self.client.apply(body)
        return name, certs.write_dir(self.state / "tls" / package, data)

    # ----- processes ---------------------------------------------------------------------------------
    def _start(self, revision: str, kind: str, package: str, argv: list, env: Mapping[str, str],
               port: int) -> Runner:
        log = self.state / "logs" / f"{package}.log"
        proc = Process(package, argv, log, env=env)
        runner = Runner(revision, kind, package, proc.pid, port, str(log))
        self.runners[package] = runner
        self._save()
        return runner

    def _function(self, rev: dict, package: str, tls_dir: Path) -> Runner:
        name = package_path(rev).rsplit("/", 1)[1]
        port = free_port()
        return self._start(rev["metadata"]["name"], "Function", package, [
            self.python, "-m", "modelplane.cli", "serve", name,
            "--address", f"127.0.0.1:{port}", "--tls-certs-dir", tls_dir,
        ], {}, port)

    def _provider(self, rev: dict, package: str, tls_dir: Path, tool: str) -> Runner:
        port = free_port()
        # What a DeploymentRuntimeConfig's args would say: look at remote objects every 10 s
        # (default 10 min: a lab run would wait that long for a Deployment to turn Available).
        argv: list = [upstream.binary(tool), f"--poll={POLL}"]
        if tool == "provider-kubernetes":  # the only one with a health probe flag; watches for spec.watch
            argv += [f"--health-probe-bind-addr=127.0.0.1:{port}", "--enable-watches"]
        return self._start(rev["metadata"]["name"], "Provider", package, argv,
                           {"KUBECONFIG": str(self.kubeconfig), "TLS_SERVER_CERTS_DIR": str(tls_dir),
                            "POD_NAMESPACE": NAMESPACE}, port)

    def _healthy(self, runner: Runner, tool: str | None) -> bool:
        if not _alive(runner.pid):
            return False
        if runner.kind == "Function":
            return _tcp_open(runner.port)
        if tool == "provider-kubernetes":
            return _http_ok(runner.port, "/readyz")
        return True  # provider-helm serves no probe: a live process is all there is to see

    # ----- the pass ----------------------------------------------------------------------------------
    def _revisions(self, kind: str) -> list[dict]:
        try:
            return self.client.request("GET", f"/apis/{PKG_API}/{kind.lower()}s").get("items") or []
        except ApiError as err:
            if err.code in (404, 429, 503):  # Crossplane's CRDs not installed or not served yet
                return []
            raise

    def _patch_status(self, kind: str, rev: dict, change) -> None:
        """Apply ``change`` to the listed revision's status; write only when it changed. A conflict
        (Crossplane wrote in between) is left to the next pass, which reads it afresh."""
        status = json.loads(json.dumps(rev.get("status") or {}))
        change(status)
        if status == (rev.get("status") or {}):
            return
        path = f"/apis/{PKG_API}/{kind.lower()}s/{rev['metadata']['name']}/status"
        try:
            self.client.request("PUT", path, {**rev, "status": status})
        except ApiError as err:
            if err.code not in (404, 409):
                raise

    def sync(self) -> dict[str, str]:
        """One pass over active revisions; returns package -> one-word state."""
        states: dict[str, str] = {}
        for kind in REVISIONS:
            for rev in self._revisions(kind):
                if (rev.get("spec") or {}).get("desiredState") != "Active":
                    continue
                package = (rev["metadata"].get("labels") or {}).get(LABEL_PACKAGE)
                if not package:
                    continue
                states[package] = self._sync_one(kind, rev, package)
        return states

    def _sync_one(self, kind: str, rev: dict, package: str) -> str:
        name = rev["metadata"]["name"]
        secret, tls_dir = self.server_secret(package)
        path = package_path(rev)
        standin = (rev["metadata"].get("annotations") or {}).get(STANDIN_ANNOTATION) == "true"
        tool = BUILT_PROVIDERS.get(path)
        if kind == "ProviderRevision" and (standin or tool is None):
            why = ("lab stand-in: its CRDs only, no controller runs (no cloud in the lab)" if standin
                   else f"the lab has no build of {path}")

            def standin_status(s: dict) -> None:
                s["tlsServerSecretName"] = secret
                s["conditions"] = with_condition(s.get("conditions") or [],
                                                 condition("False", "UnhealthyPackageRevision", why))

            self._patch_status(kind, rev, standin_status)
            return "stand-in"
        runner = self.runners.get(package)
        if runner is None and not _true(rev, REVISION_HEALTHY):
            # Like the Deployment runtime's post-establish hook: start only once the revision
            # established its objects (a provider started before its CRDs exist may never
            # start its controllers: seen with provider-kubernetes v1.2.1's SafeStart gate).
            self._patch_status(kind, rev, lambda s: s.__setitem__("tlsServerSecretName", secret))
            return "establishing"
        if runner is None or runner.revision != name or not _alive(runner.pid):
            if runner is not None:
                stop_pid(runner.pid)
            runner = (self._function(rev, package, tls_dir) if kind == "FunctionRevision"
                      else self._provider(rev, package, tls_dir, tool))
        healthy = self._healthy(runner, tool)
        where = f"127.0.0.1:{runner.port}"

        def change(s: dict) -> None:
            s["tlsServerSecretName"] = secret
            if kind == "FunctionRevision":
                s["endpoint"] = where
            cond = (condition("True", "HealthyPackageRevision", f"pid {runner.pid}") if healthy else
                    condition("Unknown", "UnknownPackageRevisionHealth", f"pid {runner.pid} starting (log: {runner.log})"))
            s["conditions"] = with_condition(s.get("conditions") or [], cond)

        self._patch_status(kind, rev, change)
        return "running" if healthy else "starting"

    def dead(self) -> list[Runner]:
        """Runners whose process has exited (a crash is reported, not hidden)."""
        return [r for r in self.runners.values() if not _alive(r.pid)]

    def stop(self) -> None:
        for runner in self.runners.values():
            stop_pid(runner.pid)
        self.runners.clear()
        self._save()


def stop_pid(pid: int, grace: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds. Only pids this runtime recorded."""
    if not _alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not _alive(pid):
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
