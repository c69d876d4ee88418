"""The External package runtime: runs what Crossplane's package manager installed, as processes.

Crossplane core runs with ``--package-runtime=External``: it installs packages
and establishes their objects but leaves running them to "an external
controller". This is that controller, doing for each *active* revision what
the Deployment runtime's hooks do (``internal/controller/pkg/runtime`` in
Crossplane v2.3), with processes on loopback instead of Deployments:

- a TLS server Secret ``<package>-tls-server`` (``tls.crt``, ``tls.key``,
  ``ca.crt``) signed by ``crossplane-root-ca`` (``kube.pki``), named in the
  revision's ``status.tlsServerSecretName`` (the package manager will not
  establish a runtime package's objects before that); where the Deployment
  runtime's certificate names the Service, this one names ``127.0.0.1`` and
  ``localhost``, what Crossplane's gRPC client checks when it dials a function;
- FunctionRevision: ``modelplane serve <function>`` on ``127.0.0.1:<port>``
  with that certificate, or (``functions="image"``) the revision's package
  image as a podman container publishing 9443 there (``image_runtime``);
  ``status.endpoint`` is where Crossplane dials;
- ProviderRevision: the provider binary from the tool cache, with the control
  plane's kubeconfig and the certificate for its webhook server; a stand-in
  provider package (no controller: no cloud) runs nothing and says so;
- processes start once the revision is ``RevisionHealthy`` (its objects established),
  as the Deployment runtime's post-establish hook does, and a provider once
  the API server's discovery serves every CRD the revision names (see below);
- condition ``RuntimeHealthy`` once the process answers; for provider-kubernetes,
  once its log shows the namespaced ``Object`` controller set up.

Why the last two: provider-kubernetes v1.2.1 sets its controllers up behind a
CRD gate, in a goroutine that logs a failed set-up only to controller-runtime's
logger, which is a no-op unless ``--debug``
(``provider-kubernetes@v1.2.1/cmd/provider/main.go:105-111``,
``internal/controller/namespaced/object/object.go:259-266``). A set-up that
fails (seen when it ran right after the CRDs appeared) leaves a process that
answers ``/readyz`` and never reconciles an ``Object``. The runtime runs it with
``--debug`` (so the log says what happened), starts it only once discovery
serves its kinds, and restarts it, as a failing liveness probe would, when the
log reports a failed set-up or no ``Object`` controller within ``SET_UP_GRACE``.

``sync()`` is one idempotent pass; the processes it started are recorded in
``<state>/runtime.json`` (pid, port) so a later pass, ``status`` and ``down``
find them.
"""
from __future__ import annotations

import base64
import json
import os
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from modelplane import clock
from modelplane.e2e import image_runtime, runtime_config, upstream
from modelplane.e2e.packages import BUILT_PROVIDERS, STANDIN_ANNOTATION
from modelplane.kube import pki
from modelplane.kube.client import ApiError, Client
from modelplane.kube.net import free_port, http_ok, tcp_open
from modelplane.kube.process import Process

NAMESPACE = "crossplane-system"
ROOT_CA = "crossplane-root-ca"
LABEL_PACKAGE = "pkg.crossplane.io/package"
PKG_API = "pkg.crossplane.io/v1"
RUNTIME_HEALTHY = "RuntimeHealthy"
REVISION_HEALTHY = "RevisionHealthy"
REVISIONS = ("FunctionRevision", "ProviderRevision")
POLL = "10s"
# provider-kubernetes: the controller that must be set up (managed.ControllerName of its namespaced
# Object), the debug lines only a set-up that got through logs (the informer sweep it adds runs at
# once; then reconciles), what its log says when a gated set-up failed, and how long to wait.
OBJECT_CONTROLLER = "managed/object.kubernetes.m.crossplane.io"
SET_UP_MARKS = ("Running garbage collection for resource informers", "Reconciling")
SETUP_FAILED = "unable to setup reconciler"
SET_UP_GRACE = 45.0    # a good start sets it up within a second of its CRD being established
CRD_KINDS = ("CustomResourceDefinition", "ManagedResourceDefinition")
# CRDs a provider's controllers need served before it starts, besides what its revision lists
# (the revision's list may not name its MRDs' CRDs yet).
NEEDS_CRDS = {"provider-kubernetes": ("objects.kubernetes.m.crossplane.io", "objects.kubernetes.crossplane.io")}


@dataclass
class Runner:
    """One process the runtime started for a revision."""

    revision: str
    kind: str
    package: str
    pid: int
    port: int
    log: str
    started: float = 0.0   # clock.now().timestamp() at start
    image: str = ""        # functions="image": the package image the container runs
    container: str = ""    # ... and its container id
    args: list[str] = field(default_factory=list)   # a provider's flags (its runtime config's)


def controllers_started(log: str) -> str:
    """provider-kubernetes' log (``--debug``) -> "yes" (its Object controller is set up), "failed"
    (a gated set-up failed) or "not yet"."""
    failed = False
    for line in log.splitlines():
        if OBJECT_CONTROLLER in line and any(mark in line for mark in SET_UP_MARKS):
            return "yes"
        failed |= SETUP_FAILED in line
    return "failed" if failed else "not yet"


def served_in_discovery(crd: Mapping[str, Any], discovery: Mapping[str, Mapping[str, Any]]) -> bool:
    """Is ``crd`` Established and is its plural listed for every served version in ``discovery``
    (group/version -> the API server's APIResourceList)?"""
    if not _true(crd, "Established"):
        return False
    spec = crd.get("spec") or {}
    plural = (spec.get("names") or {}).get("plural", "")
    for v in spec.get("versions") or []:
        if not v.get("served"):
            continue
        listed = discovery.get(f"{spec.get('group')}/{v.get('name')}") or {}
        if plural not in {r.get("name") for r in listed.get("resources") or []}:
            return False
    return True


def package_path(revision: Mapping[str, Any]) -> str:
    """The package path without tag or digest (``xpkg.crossplane.io/modelplane/compose-x``)."""
    src = (revision.get("spec") or {}).get("image", "")  # the source as the package named it (pre-rewrite)
    src = src.split("@", 1)[0]
    head, _, tail = src.rpartition(":")
    return head if head and "/" not in tail else src


def condition(status: str, reason: str, message: str) -> dict:
    return {"type": RUNTIME_HEALTHY, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": clock.stamp()}


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


FUNCTION_MODES = ("serve", "image")


class ExternalRuntime:
    def __init__(self, client: Client, state: Path, kubeconfig: Path, *, python: str = sys.executable,
                 functions: str = "serve") -> None:
        if functions not in FUNCTION_MODES:
            raise ValueError(f"functions={functions!r}: one of {', '.join(FUNCTION_MODES)}")
        self.functions = functions
        self.client = client
        self.state = state
        self.kubeconfig = kubeconfig
        self.python = python
        state.mkdir(parents=True, exist_ok=True)
        self.record = state / "runtime.json"
        self._tls: dict[str, tuple[str, Path]] = {}
        self._set_up_pids: set[int] = set()
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
            data = pki.CA.from_pem(ca_data["tls.crt"], ca_data["tls.key"]).loopback_tls(package)
            body = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                    "metadata": {"name": name, "namespace": NAMESPACE,
                                 "labels": {LABEL_PACKAGE: package, "modelplane.ai/lab": "runtime"}},
                    "data": {k: base64.b64encode(v).decode() for k, v in data.items()}}
            self.client.apply(body)
        return name, pki.write_files(self.state / "tls" / package, data)

    # ----- processes ---------------------------------------------------------------------------------
    def _start(self, revision: str, kind: str, package: str, argv: list, env: Mapping[str, str],
               port: int) -> Runner:
        log = self.state / "logs" / f"{package}.log"
        if log.exists():   # an earlier run's log is kept beside it: health reads this run's only
            log.rename(log.with_name(f"{package}.{clock.now().strftime('%H%M%S')}-{time.monotonic_ns()}.log"))
        proc = Process(package, argv, log, env=env)
        runner = Runner(revision, kind, package, proc.pid, port, str(log), clock.now().timestamp())
        self.runners[package] = runner
        self._save()
        return runner

    def _function(self, rev: dict, package: str, tls_dir: Path) -> Runner:
        name = package_path(rev).rsplit("/", 1)[1]
        port = free_port()
        if self.functions == "image":
            return self._container(rev, package, tls_dir, port)
        return self._start(rev["metadata"]["name"], "Function", package, [
            self.python, "-m", "modelplane.cli", "serve", name,
            "--address", f"127.0.0.1:{port}", "--tls-certs-dir", tls_dir,
        ], {}, port)

    def _container(self, rev: dict, package: str, tls_dir: Path, port: int) -> Runner:
        """The revision's package image as a container (``image_runtime``), published on ``port``."""
        log = self.state / "logs" / f"{package}.log"
        if log.exists():
            log.rename(log.with_name(f"{package}.{clock.now().strftime('%H%M%S')}-{time.monotonic_ns()}.log"))
        ref = image_runtime.image_ref(rev)
        pid, cid = image_runtime.start(f"mp-{package}", ref, port, tls_dir, self.state / "volumes" / package, log)
        runner = Runner(rev["metadata"]["name"], "Function", package, pid, port, str(log), clock.now().timestamp(), ref, cid)
        self.runners[package] = runner
        self._save()
        return runner

    def _provider_args(self, rev: dict, package: str, tool: str) -> list[str]:
        """The provider's flags: its DeploymentRuntimeConfig's args (``runtime_config``) over the
        lab's defaults. The defaults look at remote objects every 10 s (the provider's own default
        is 10 min: a lab run would wait that long for a Deployment to turn Available)."""
        lab = [f"--poll={POLL}"]
        if tool == "provider-kubernetes":  # watches for spec.watch
            # --debug: its gated controller set-up reports failures only to a debug logger (module doc).
            lab += ["--enable-watches", "--debug"]
        provider = self._get(f"/apis/{PKG_API}/providers/{package}")
        configs = (self._get("/apis/pkg.crossplane.io/v1beta1/imageconfigs") or {}).get("items") or []
        name = runtime_config.config_name(provider, configs, image_runtime.image_ref(rev))
        config = self._get(f"/apis/pkg.crossplane.io/v1beta1/deploymentruntimeconfigs/{name}")
        return runtime_config.merge_args(lab, runtime_config.container_args(config))

    def _get(self, path: str) -> dict | None:
        try:
            return self.client.request("GET", path)
        except ApiError as err:
            if err.code == 404:
                return None
            raise

    def _provider(self, rev: dict, package: str, tls_dir: Path, tool: str, args: list[str]) -> Runner:
        port = free_port()
        argv: list = [upstream.binary(tool), *args]
        if tool == "provider-kubernetes":  # the only one with a health probe flag
            argv.append(f"--health-probe-bind-addr=127.0.0.1:{port}")
        runner = self._start(rev["metadata"]["name"], "Provider", package, argv,
                             {"KUBECONFIG": str(self.kubeconfig), "TLS_SERVER_CERTS_DIR": str(tls_dir),
                              "POD_NAMESPACE": NAMESPACE}, port)
        runner.args = list(args)
        self._save()
        return runner

    def _healthy(self, runner: Runner, tool: str | None) -> bool:
        if not _alive(runner.pid):
            return False
        if runner.kind == "Function":
            return tcp_open(runner.port)
        if tool == "provider-kubernetes":
            return http_ok(f"http://127.0.0.1:{runner.port}/readyz") and self._set_up(runner) == "yes"
        return True  # provider-helm serves no probe: a live process is all there is to see

    def _set_up(self, runner: Runner) -> str:
        if runner.pid in self._set_up_pids:   # once set up, always: the (debug) log is not read again
            return "yes"
        try:
            found = controllers_started(Path(runner.log).read_text(errors="replace"))
        except OSError:
            return "not yet"
        if found == "yes":
            self._set_up_pids.add(runner.pid)
        return found

    def _wedged(self, runner: Runner, tool: str | None) -> str:
        """Why a live provider-kubernetes must be restarted ("" when it must not)."""
        if tool != "provider-kubernetes" or not _alive(runner.pid):
            return ""
        set_up = self._set_up(runner)
        if set_up == "failed":
            return f"its log reports a failed controller set-up ({SETUP_FAILED!r})"
        if set_up != "yes" and runner.started and clock.now().timestamp() - runner.started > SET_UP_GRACE:
            return f"no {OBJECT_CONTROLLER} controller {SET_UP_GRACE:.0f} s after start"
        return ""

    def _kinds_served(self, rev: Mapping[str, Any], tool: str | None) -> bool:
        """Does discovery serve every CRD the revision established (its MRDs name their CRDs) and
        every CRD the provider's controllers need (``NEEDS_CRDS``)?"""
        discovery: dict[str, dict] = {}
        names = [r["name"] for r in (rev.get("status") or {}).get("objectRefs") or [] if r.get("kind") in CRD_KINDS]
        for name in dict.fromkeys([*names, *NEEDS_CRDS.get(tool or "", ())]):
            try:
                crd = self.client.request("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
                spec = crd.get("spec") or {}
                for v in spec.get("versions") or []:
                    gv = f"{spec.get('group')}/{v.get('name')}"
                    if v.get("served") and gv not in discovery:
                        discovery[gv] = self.client.request("GET", f"/apis/{gv}")
            except ApiError as err:
                if err.code in (404, 429, 503):
                    return False
                raise
            if not served_in_discovery(crd, discovery):
                return False
        return True

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
        if runner is None and kind == "ProviderRevision" and not self._kinds_served(rev, tool):
            self._patch_status(kind, rev, lambda s: s.__setitem__("tlsServerSecretName", secret))
            return "establishing"
        wedged = self._wedged(runner, tool) if runner is not None and runner.revision == name else ""
        args = self._provider_args(rev, package, tool) if kind == "ProviderRevision" else []
        # A changed runtime config rolls the provider, as it would roll its Deployment.
        if not wedged and runner is not None and kind == "ProviderRevision" and runner.args != args:
            wedged = f"its runtime config's args changed to {args}"
        if wedged:
            print(f"restarting {package} (pid {runner.pid}): {wedged}; log {runner.log}", file=sys.stderr, flush=True)
        if runner is None or runner.revision != name or not _alive(runner.pid) or wedged:
            if runner is not None:
                stop_pid(runner.pid)
            runner = (self._function(rev, package, tls_dir) if kind == "FunctionRevision"
                      else self._provider(rev, package, tls_dir, tool, args))
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
