"""The control-plane cluster: brought up in order, recorded, brought down by pid.

    up(state)      etcd + kube-apiserver, kube-controller-manager, the local registry
                   with every package, Crossplane core (init + start), with a lab
                   data plane a Traefik for the control plane's Gateway API objects
                   (``e2e.gateway``), the supervisor (External runtime + gateway
                   stand-in), then the user's step: ImageConfigs and the
                   Configuration; returns when the Configuration is healthy and
                   every XRD is established.
    status(state)  what runs, what died, every package's health
    down(state)    stops every recorded pid, newest first

Everything lives under ``state``; ``state/controlplane.json`` records the pids,
ports and the kubeconfig. The processes outlive the command that started them
(each has its own session), so ``up`` can return while they keep reconciling.
"""
from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from modelplane import paths
from modelplane.e2e import charts, core, gateway, package_runtime, packages, upstream
from modelplane.e2e.registry import Registry
from modelplane.kube import APIServer, Client, Etcd, components
from modelplane.kube.net import free_port, http_ok
from modelplane.kube.process import ComponentError, Process
from modelplane.lab import NO_DATA_PLANE_ENV

RECORD = "controlplane.json"
CONTROL_PLANE = "control-plane"
# CRDs a real control plane gets from the charts Modelplane's InferenceGateway installs
# (Envoy Gateway ships Gateway API and its own CRDs); the lab's stand-in charts carry none.
CONTROL_PLANE_CRDS = ("gateway-api", "envoy-gateway")
READY_TIMEOUT = 300.0


@dataclass
class Record:
    state: str
    kubeconfig: str = ""
    server: str = ""
    registry: str = ""
    pids: dict[str, int] = field(default_factory=dict)   # component -> pid, in start order
    logs: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    functions: str = "serve"   # what the runtime runs for a FunctionRevision: serve | image
    gateway: str = ""          # the control plane's Traefik address (a lab data plane), else ""

    def save(self) -> None:
        Path(self.state, RECORD).write_text(json.dumps(self.__dict__, indent=2))

    @classmethod
    def load(cls, state: Path) -> Record:
        path = state / RECORD
        if not path.exists():
            raise FileNotFoundError(f"no control plane recorded in {state} (run `modelplane e2e up` first)")
        return cls(**json.loads(path.read_text()))


def admin_client(kubeconfig: Path) -> Client:
    """A REST client from an embedded-data kubeconfig (the ones modelplane.kube writes)."""
    import base64
    import tempfile
    cfg = yaml.safe_load(kubeconfig.read_text())
    cluster, user = cfg["clusters"][0]["cluster"], cfg["users"][0]["user"]
    folder = Path(tempfile.mkdtemp(prefix="mp-e2e-client-"))
    files = {}
    for key, name in (("certificate-authority-data", "ca.crt"), ("client-certificate-data", "tls.crt"),
                      ("client-key-data", "tls.key")):
        src = cluster if key.startswith("certificate-authority") else user
        files[name] = folder / name
        files[name].write_bytes(base64.b64decode(src[key]))
    return Client(cluster["server"], files["ca.crt"], files["tls.crt"], files["tls.key"])


def controller_manager(api: APIServer, directory: Path) -> Process:
    """kube-controller-manager for the control plane (the lab's command line): garbage collection
    of composed resources (owner references), namespace deletion, ServiceAccount tokens."""
    port = free_port()
    proc = Process("kube-controller-manager", components.controller_manager(
        upstream.binary("kube-controller-manager"), api.kubeconfig, port, directory / "kcm-certs",
        api.paths["sa.key"], api.paths["ca.crt"]), directory / "kube-controller-manager.log")
    # insecure: it serves health with a certificate it signed for itself.
    proc.wait_ready(lambda: http_ok(f"https://127.0.0.1:{port}/healthz", timeout=1, insecure=True), 60)
    return proc


def install_crds(client: Client, folders: tuple[str, ...]) -> int:
    n = 0
    for folder in folders:
        for path in sorted((paths.crds_dir() / folder).glob("*.yaml")):
            for doc in yaml.safe_load_all(path.read_text()):
                if doc and doc.get("kind") == "CustomResourceDefinition":
                    client.apply(doc)
                    n += 1
    return n


def _get(client: Client, path: str) -> dict:
    try:
        return client.request("GET", path)
    except Exception:  # noqa: BLE001 - not served yet: the caller waits
        return {}


def is_true(obj: Mapping[str, Any], typ: str) -> bool:
    return any(c.get("type") == typ and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


def package_health(client: Client) -> dict[str, str]:
    """kind/name -> Healthy | <the Healthy condition's message> for every package."""
    out = {}
    for plural in ("configurations", "providers", "functions"):
        for p in _get(client, f"/apis/pkg.crossplane.io/v1/{plural}").get("items") or []:
            cond = next((c for c in (p.get("status") or {}).get("conditions") or [] if c["type"] == "Healthy"), {})
            out[f"{p['kind']}/{p['metadata']['name']}"] = (
                "Healthy" if cond.get("status") == "True" else (cond.get("message") or cond.get("reason") or "pending"))
    return out


def xrds_established(client: Client) -> tuple[int, int]:
    items = _get(client, "/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions").get("items") or []
    return sum(is_true(x, "Established") for x in items), len(items)


def functions_mode() -> str:
    """``$MODELPLANE_E2E_FUNCTIONS``: ``serve`` (default: ``modelplane serve`` processes) or ``image``
    (the Function packages ``make xpkg`` built, run from their embedded images by podman)."""
    mode = os.environ.get("MODELPLANE_E2E_FUNCTIONS", "serve")
    if mode not in package_runtime.FUNCTION_MODES:
        raise ValueError(f"MODELPLANE_E2E_FUNCTIONS={mode!r}: one of {', '.join(package_runtime.FUNCTION_MODES)}")
    return mode


def xpkg_dir() -> Path:
    """Where ``make xpkg`` wrote the packages (``$MODELPLANE_XPKG_DIR``, default ``_output``)."""
    return Path(os.environ.get("MODELPLANE_XPKG_DIR") or paths.ROOT / "_output")


def up(state: Path, *, timeout: float = READY_TIMEOUT, log=print, functions: str | None = None,
       network: gateway.Network | None = None, configuration: bool = True) -> Record:
    """With ``network`` (the lab's data plane), the API server listens on the lab's host address
    and a Traefik in the lab's namespace serves the Gateway API objects composed here.

    ``configuration=False`` stops before the user's step: the registry holds only what stands for
    the internet (the providers, pushed under their upstream paths, and the lab's ImageConfigs
    that send those paths there); Modelplane's own packages, the Configuration and the provider
    configs are left to the caller (tests/install runs docs/platform/install.md's commands)."""
    state = state.resolve()
    state.mkdir(parents=True, exist_ok=True)
    rec = Record(str(state), functions=functions or functions_mode())
    started: list[Process] = []

    def step(name: str, fn):
        t = time.monotonic()
        out = fn()
        rec.timings[name] = round(time.monotonic() - t, 1)
        log(f"  {name}: {rec.timings[name]} s")
        return out

    def keep(name: str, proc: Process) -> None:
        started.append(proc)
        rec.pids[name], rec.logs[name] = proc.pid, str(proc.log)
        rec.save()

    try:
        etcd = step("etcd", lambda: Etcd(state / "etcd"))
        keep("etcd", etcd.process)
        api = step("kube-apiserver", lambda: APIServer(state / CONTROL_PLANE, etcd.endpoint, name=CONTROL_PLANE,
                                                       address=network.host if network else "127.0.0.1"))
        keep("kube-apiserver", api.process)
        rec.kubeconfig, rec.server = str(api.kubeconfig), api.url
        client = api.client()
        keep("kube-controller-manager", step("kube-controller-manager", lambda: controller_manager(api, state)))
        registry = step("registry", lambda: Registry(state / "registry"))
        keep("registry", registry.process)
        rec.registry = registry.host
        xp = upstream.binary("crossplane")
        prebuilt = xpkg_dir() if rec.functions == "image" else None
        pkgs = step("packages", lambda: _push_all(xp, registry.host, state / "packages", prebuilt,
                                                  only_providers=not configuration))
        step("crds", lambda: install_crds(client, CONTROL_PLANE_CRDS))
        if network is not None:
            keep(gateway.NAME, step("gateway", lambda: gateway.start(client, api.kubeconfig, network, state)))
            rec.gateway = network.gateway
        step("crossplane-init", lambda: core.init(client, api.kubeconfig, state))
        xpc = step("crossplane", lambda: core.Core(client, api.kubeconfig, state))
        keep("crossplane", xpc.process)
        step("charts", charts.seed)
        sup = Process("supervisor", [sys.executable, "-m", "modelplane.e2e.supervise", state],
                      state / "supervisor.log")
        keep("supervisor", sup)
        for obj in packages.image_configs(registry.host):
            client.apply(obj)
        if not configuration:
            rec.save()
            return rec
        client.apply(packages.configuration(pkgs[0]))
        step("configuration", lambda: wait_installed(client, timeout, sup))
        step("provider-configs", lambda: provider_configs(client, api.kubeconfig))
        rec.save()
        return rec
    except BaseException:
        rec.save()
        for proc in reversed(started):
            proc.stop()
        _stop_runtime(state)
        raise


def _push_all(crossplane: Path, registry: str, workdir: Path, prebuilt: Path | None = None, *,
              only_providers: bool = False) -> list[packages.Package]:
    pkgs = [p for p in packages.plan(workdir, None if only_providers else prebuilt)
            if p.kind == "Provider" or not only_providers]
    for pkg in pkgs:
        packages.build_and_push(crossplane, pkg, registry, workdir)
    return pkgs


def wait_installed(client: Client, timeout: float, supervisor: Process) -> None:
    """Until the Configuration, every function and every built provider is Healthy and every XRD established."""
    deadline = time.monotonic() + timeout
    while True:
        health = package_health(client)
        est, total = xrds_established(client)
        waiting = [f"{k}: {v}" for k, v in sorted(health.items())
                   if v != "Healthy" and not _standin(client, k)]
        if health and not waiting and total and est == total:
            return
        if not supervisor.alive():
            raise supervisor.failure("exited")
        if time.monotonic() > deadline:
            raise ComponentError(f"packages not installed within {timeout:.0f} s; XRDs established {est}/{total}; "
                                 f"waiting for: {'; '.join(waiting) or 'the package manager'}")
        time.sleep(2)


def _standin(client: Client, key: str) -> bool:
    kind, name = key.split("/", 1)
    if kind != "Provider":
        return False
    p = _get(client, f"/apis/pkg.crossplane.io/v1/providers/{name}")
    src = (p.get("spec") or {}).get("package", "")
    return packages.is_standin(src)


def kubeconfig_secret(name: str, namespace: str, kubeconfig: Path) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": name, "namespace": namespace},
            "stringData": {"kubeconfig": kubeconfig.read_text()}}


def provider_configs(client: Client, kubeconfig: Path) -> None:
    """The control plane's own helm ClusterProviderConfig ``default`` (InferenceGateway's Releases).

    In cluster it would use InjectedIdentity; out of cluster the provider has no pod identity,
    so it reads the control plane's kubeconfig from a Secret, the same way workload clusters work."""
    client.apply(kubeconfig_secret("control-plane-kubeconfig", core.NAMESPACE, kubeconfig))
    client.apply({"apiVersion": "helm.m.crossplane.io/v1beta1", "kind": "ClusterProviderConfig",
                  "metadata": {"name": "default"},
                  "spec": {"credentials": {"source": "Secret", "secretRef": {
                      "namespace": core.NAMESPACE, "name": "control-plane-kubeconfig", "key": "kubeconfig"}}}})


def register(client: Client, lab: Any) -> list[str]:
    """Each lab cluster's kubeconfig Secret on the control plane (the Existing InferenceClusters read it)."""
    names = []
    for name, info in sorted(lab.clusters.items()):
        for doc in yaml.safe_load_all(Path(info.secret).read_text()):
            if doc:
                client.apply({"apiVersion": "v1", "kind": "Namespace",
                              "metadata": {"name": doc["metadata"]["namespace"]}})
                client.apply(doc)
        names.append(name)
    return names


def data_plane_default() -> bool:
    """``$MODELPLANE_LAB_DATA_PLANE`` not 0 (or false, no, off): what ``modelplane lab up`` reads too."""
    return os.environ.get(NO_DATA_PLANE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def wants_data_plane() -> bool:
    """The e2e runs over the lab's data plane (requests really travel) when this process is root
    and ``$MODELPLANE_LAB_DATA_PLANE`` is not 0; otherwise the lab has none (docs/e2e-crossplane.md)."""
    return data_plane_default() and os.geteuid() == 0


def data_plane_opted_out() -> bool:
    """The user asked for no data plane (``$MODELPLANE_LAB_DATA_PLANE=0``), as opposed to not being root."""
    return not data_plane_default()


def up_with_lab(platform: list[Path], state: Path, *, timeout: float = READY_TIMEOUT, log=print,
                simulate_lab: list[Path] | None = None) -> tuple[Record, Any]:
    """The whole lab: the platform manifests rewritten as Existing (``state/fleet``), one workload
    cluster each (``modelplane lab``, in ``state/lab``), the control plane, the clusters' Secrets.

    With ``simulate_lab`` (folders of the ML team's manifests), ``modelplane simulate --lab`` first
    runs the fleet and those folders on the lab's clusters, before the control plane exists
    (``parity.record``: ``state/simulate-lab.json``), and leaves the clusters empty again."""
    from modelplane.e2e import fleet, parity
    from modelplane.lab import down as lab_down
    from modelplane.lab import up as lab_up

    state = state.resolve()
    data_plane = wants_data_plane()
    # The fleet names the lab's GatewayClass itself (bring your own gateway), so Crossplane and
    # simulate --lab compose the very same objects (simulate --lab would otherwise pick it alone,
    # lab.backend.LabPhysical.adopt). Without a data plane both compose the examples as written.
    fleet.rewrite(platform, state / "fleet", gateway_class=fleet.LAB_GATEWAY_CLASS if data_plane else None)
    t = time.monotonic()
    lab = lab_up(state / "fleet", state / "lab", progress=lambda m: log(f"  lab: {m}"), data_plane=data_plane)
    lab_seconds = round(time.monotonic() - t, 1)
    network = gateway.Network.of(lab)
    if data_plane and network is None:
        lab_down(state / "lab")
        raise ComponentError("the lab came up without its gateways (is traefik built? `make tools`): the e2e "
                             f"sends requests through them; set {NO_DATA_PLANE_ENV}=0 to run without")
    try:
        sim_seconds = None
        if simulate_lab is not None:
            t = time.monotonic()
            done = parity.record(parity.stage(state / "fleet", simulate_lab, state / parity.INPUT), state / "lab",
                                 state / parity.RECORD)
            sim_seconds = round(time.monotonic() - t, 1)
            log(f"  simulate --lab: {done['seconds']} s (exit {done['returncode']}), with the reset {sim_seconds} s")
        rec = up(state / "control-plane", timeout=timeout, log=log, network=network)
        rec.timings["lab"] = lab_seconds
        if sim_seconds is not None:
            rec.timings["simulate-lab"] = sim_seconds
        register(admin_client(Path(rec.kubeconfig)), lab)
        rec.save()
    except BaseException:
        lab_down(state / "lab")
        raise
    return rec, lab


def down_with_lab(state: Path) -> list[str]:
    from modelplane.lab import down as lab_down

    stopped = down(state / "control-plane") if (state / "control-plane" / RECORD).exists() else []
    return stopped + [f"lab/{n}" for n in lab_down(state / "lab")]


def status(state: Path) -> dict[str, Any]:
    rec = Record.load(state)
    procs = {name: ("running" if package_runtime._alive(pid) else "exited") for name, pid in rec.pids.items()}
    runtime = json.loads((state / "runtime" / "runtime.json").read_text()) if (state / "runtime" / "runtime.json").exists() else {}
    procs.update({f"runtime/{k}": ("running" if package_runtime._alive(v["pid"]) else "exited") for k, v in runtime.items()})
    out: dict[str, Any] = {"processes": procs}
    try:
        out["packages"] = package_health(admin_client(Path(rec.kubeconfig)))
    except Exception as err:  # noqa: BLE001 - the API server may be the thing that died
        out["packages"] = {"error": str(err)}
    return out


def _stop_runtime(state: Path) -> list[str]:
    """Stop what the External runtime started (recorded in runtime/runtime.json)."""
    stopped = []
    runtime = state / "runtime" / "runtime.json"
    if runtime.exists():
        runners = json.loads(runtime.read_text())
        for name, r in sorted(runners.items()):
            package_runtime.stop_pid(r["pid"])
            stopped.append(f"runtime/{name}")
        runtime.write_text("{}")
        if any(r.get("container") for r in runners.values()):   # stopped ones that --rm has not removed yet
            from modelplane.e2e import image_runtime
            image_runtime.remove_all()
    return stopped


def down(state: Path) -> list[str]:
    """Stop every recorded component newest first (the supervisor before what it started),
    then the runtime's processes."""
    rec = Record.load(state)
    stopped = []
    for name, pid in reversed(list(rec.pids.items())):
        package_runtime.stop_pid(pid)
        stopped.append(name)
        if name == "supervisor":  # nothing restarts the runtime's processes now
            stopped += _stop_runtime(state)
    stopped += _stop_runtime(state)
    rec.pids = {}
    rec.save()
    return stopped
