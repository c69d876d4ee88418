"""``lab up``, ``lab status``, ``lab down``: the lab's processes, started and stopped by pid.

``up`` starts one etcd, then every cluster in its own thread (their API
servers start side by side: most of the start-up is their CPU), then the
lab's stand-in controller. With a data plane (the default; ``data_plane=False``
or ``$MODELPLANE_LAB_DATA_PLANE=0`` for none) it first makes the lab's network
namespace (``lab.netns``), binds the API servers to its host end, gives every
node a podCIDR, starts a control-plane API server beside the clusters, and
after them the engine supervisor (``lab.engines``) and one Traefik per API
server (``lab.dataplane``). Every process is written to the state file as soon
as it exists, so ``down`` can stop a half-started lab too. A failed ``up``
stops what it started and raises with the failing component's log tail.
"""
from __future__ import annotations

import base64
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from modelplane.errors import InputError
from modelplane.kube import ApiError, ComponentError, Etcd, pki, tools
from modelplane.kube import components as C
from modelplane.kube.apiserver import APIServer
from modelplane.kube.net import free_port, http_ok, read_url
from modelplane.kube.process import Process, port_taken
from modelplane.lab import dataplane, install, netns
from modelplane.lab.remote import RetryingClient
from modelplane.lab.state import ClusterInfo, Component, LabState, Network, default_dir, rss_kib, start_ticks
from modelplane.physical import inventory
from modelplane.validate.admission import load_dir

TOOLS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "lws")
DATA_PLANE_TOOLS = ("traefik",)
READY_TIMEOUT = 120.0
CONTROL_PLANE = "control-plane"
NO_DATA_PLANE_ENV = "MODELPLANE_LAB_DATA_PLANE"   # "0": no data plane (`lab up --no-data-plane`)


class LabError(RuntimeError):
    """The lab cannot start, or a component failed (the message carries its log's tail)."""


Progress = Callable[[str], None]


@dataclass
class _Started:
    cluster: inventory.ClusterInventory
    api: APIServer


class _Recorder:
    """Adds components to the state file as they start (threads share it)."""

    def __init__(self, state: LabState) -> None:
        self.state = state
        self.lock = threading.Lock()
        self.makers: dict[str, Callable[[], Component]] = {}   # label -> start it again

    def drop(self, comp: Component) -> None:
        with self.lock:
            self.state.components.remove(comp)
            self.state.save()

    def add(self, name: str, cluster: str, pid: int, log: Path, port: int = 0, **ports: int) -> Component:
        comp = Component(name=name, cluster=cluster, pid=pid, ticks=start_ticks(pid), log=str(log), port=port,
                         ports=dict(ports))
        with self.lock:
            self.state.components.append(comp)
            self.state.save()
        return comp

    def cluster(self, info: ClusterInfo) -> None:
        with self.lock:
            self.state.clusters[info.name] = info
            self.state.save()


# --- up -----------------------------------------------------------------------


def load_fleet(directory: Path) -> inventory.FleetInventory:
    xrs, others = load_dir(directory)
    fleet = inventory.read_fleet(xrs + others)
    if not fleet.clusters:
        raise InputError(str(directory), "no InferenceCluster here: the lab builds one cluster per InferenceCluster")
    return fleet


def data_plane_default() -> bool:
    """On unless ``$MODELPLANE_LAB_DATA_PLANE`` is 0 (or false, no, off)."""
    return os.environ.get(NO_DATA_PLANE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def up(directory: Path, root: Path | None = None, *, timeout: float = READY_TIMEOUT,
       progress: Progress | None = None, data_plane: bool | None = None) -> LabState:
    """Start the lab for the InferenceClusters in ``directory``; returns its state once every
    cluster is ready (nodes Ready, slices published, controllers healthy; with a data plane,
    every Traefik answering and its GatewayClass accepted)."""
    say = progress or (lambda _msg: None)
    fleet = load_fleet(directory)
    data_plane = data_plane_default() if data_plane is None else data_plane
    missing = tools.missing(*TOOLS)
    if missing:
        raise LabError(f"the lab needs upstream programs: {missing}")
    if data_plane:
        try:
            netns.check()
        except netns.NetnsError as err:
            raise LabError(f"{err}. Run as root, or start the lab without a data plane "
                           f"(`modelplane lab up --no-data-plane`, or {NO_DATA_PLANE_ENV}=0): "
                           "its pods then answer nothing and Gateways get unreachable addresses") from None
        if len(fleet.clusters) > netns.MAX_CLUSTERS:
            raise LabError(f"the lab's data plane has room for {netns.MAX_CLUSTERS} clusters, "
                           f"not {len(fleet.clusters)}")
    root = Path(root or default_dir()).resolve()
    root.mkdir(parents=True, exist_ok=True)
    previous = LabState.load(root)
    if previous and previous.running():
        raise LabError(f"a lab is already running in {root} ({len(previous.running())} processes): "
                       f"run `modelplane lab down --state {root}` first")
    for sub in ["etcd", "engines", CONTROL_PLANE, *(c.name for c in fleet.clusters),
                *(previous.clusters if previous else {})]:
        shutil.rmtree(root / sub, ignore_errors=True)
    state = LabState(directory=str(Path(directory).resolve()), root=str(root))
    state.save()
    rec = _Recorder(state)
    start = time.monotonic()
    try:
        plan = None
        if data_plane:
            plan = netns.create(root)
            ns, host_end = netns.names(root)
            state.network = Network(namespace=ns, host_end=host_end, slot=plan.slot, host=plan.host)
            state.save()
            say(f"network namespace {ns}: host end {plan.host} ({host_end}), pods {plan.pods}")
        elif os.geteuid() == 0:
            netns.delete(root)   # what a crashed lab with a data plane left
        etcd = Etcd(root / "etcd")
        rec.add("etcd", "", etcd.process.pid, etcd.process.log, port=int(etcd.endpoint.rsplit(":", 1)[1]))
        say(f"etcd ready at {etcd.endpoint}")
        ca = pki.CA("modelplane-lab-ca")
        crds = install.workload_crds()
        gateways = plan is not None and _gateways(say)
        extra = dataplane.crds() if gateways else []
        deadline = start + timeout
        jobs = [lambda c=c, i=i: _start_cluster(rec, fleet, c, i, etcd.endpoint, ca, crds + extra, deadline, say,
                                                plan, gateways)
                for i, c in enumerate(fleet.clusters)]
        if gateways:
            jobs.append(lambda: _start_control_plane(rec, etcd.endpoint, ca, crds + extra, deadline, say, plan))
        _in_threads(jobs)
        _start_standin(rec, root)
        if plan:
            _start_engines(rec, root)
        state.ready_seconds = round(time.monotonic() - start, 1)
        state.save()
        say(f"lab ready in {state.ready_seconds} s: {', '.join(c.name for c in fleet.clusters)}")
        return state
    except BaseException:
        stop(state)
        if state.network:
            netns.delete(root)
        raise


def _in_threads(jobs: list[Callable[[], None]]) -> None:
    errors: list[BaseException] = []

    def run(job: Callable[[], None]) -> None:
        try:
            job()
        except BaseException as err:  # noqa: BLE001 - re-raised below, after every thread ends
            errors.append(err)

    threads = [threading.Thread(target=run, args=(j,), daemon=True) for j in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def _start_cluster(rec: _Recorder, fleet: inventory.FleetInventory, cluster: inventory.ClusterInventory,
                   index: int, etcd: str, ca: pki.CA, crds: list[dict], deadline: float, say: Progress,
                   plan: netns.Plan | None = None, gateways: bool = False) -> None:
    d = Path(rec.state.root) / cluster.name
    api = APIServer(d, etcd, name=cluster.name, ca=ca, timeout=max(deadline - time.monotonic(), 1.0),
                    address=plan.host if plan else "127.0.0.1")
    rec.add("kube-apiserver", cluster.name, api.process.pid, api.process.log, port=api.port)
    say(f"{cluster.name}: kube-apiserver ready at {api.url} ({api.ready_seconds:.1f} s)")
    client = RetryingClient(api.url, api.paths["ca.crt"], api.paths["admin.crt"], api.paths["admin.key"])
    kubeconfig = Path(api.kubeconfig)
    node_ip = f"10.{200 + index % 50}.0.1"

    kcm, sched, kwok = (tools.find(n) for n in ("kube-controller-manager", "kube-scheduler", "kwok"))
    _spawn(rec, cluster.name, "kube-controller-manager", d, lambda port: (C.controller_manager(
        kcm, kubeconfig, port, d / "kcm-certs", api.paths["sa.key"], api.paths["ca.crt"]), {}))
    _spawn(rec, cluster.name, "kube-scheduler", d,
           lambda port: (C.scheduler(sched, kubeconfig, port, d / "scheduler-certs"), {}))
    stages = d / "kwok-stages.yaml"
    stages.write_text(C.dump_all(C.kwok_stages(engine_readiness=plan is not None)))
    _spawn(rec, cluster.name, "kwok", d, lambda port: (C.kwok(kwok, kubeconfig, port, stages, node_ip), {}))

    t = time.monotonic()
    install.install_crds(client, [*crds, C.disaggregatedset_stub()],
                         timeout=max(deadline - time.monotonic(), 1.0))
    say(f"{cluster.name}: CRDs established ({time.monotonic() - t:.1f} s)")
    certs = d / "lws-certs"
    pair = ca.issue("lws-webhook", dns=pki.LOOPBACK_DNS, ips=pki.LOOPBACK_IPS, server=True)
    pair.write(certs, "tls")  # tls.crt, tls.key: the names the webhook server reads
    lws, ca_bundle = tools.find("lws"), base64.b64encode(ca.cert).decode()

    def lws_argv(health_port: int) -> tuple[list[str], dict[str, int]]:
        hook_port = free_port()
        cfg = d / "lws-config.yaml"
        cfg.write_text(C.dump_all([C.lws_config(hook_port, health_port, certs)]))
        for hook in C.lws_webhooks(hook_port, ca_bundle):  # (re)point the API server at this port
            client.apply(hook, field_manager="modelplane-lab")
        return C.lws(lws, kubeconfig, cfg), {"webhook": hook_port}

    _spawn(rec, cluster.name, "lws", d, lws_argv, env=C.LWS_ENV)

    objects = inventory.cluster_objects(fleet, cluster)
    if plan:
        objects = _with_pod_cidrs(objects, plan, index)
    if gateways:
        objects.append(dataplane.gateway_class(cluster.name))
    install.create_all(client, objects)
    secret = d / "kubeconfig-secret.yaml"
    secret.write_text(C.dump_all([inventory.kubeconfig_secret(cluster, kubeconfig.read_text())]))
    rec.cluster(ClusterInfo(name=cluster.name, server=api.url, kubeconfig=str(kubeconfig), secret=str(secret),
                            secret_ref=dict(cluster.secret_ref), node_ip=node_ip,
                            gateway=plan.gateway(index) if gateways else "",
                            pods=plan.cluster_pods(index) if plan else ""))
    if gateways:
        _start_traefik(rec, cluster.name, d, kubeconfig, plan.gateway(index))
    t = time.monotonic()
    _wait_ready(rec, cluster, client, deadline)
    if gateways:
        _wait_data_plane(rec, cluster.name, client, plan.gateway(index), deadline)
    say(f"{cluster.name}: ready: {sum(p.node_count for p in cluster.pools)} nodes, controllers healthy"
        + (f", Traefik on {plan.gateway(index)}:{dataplane.HTTP_PORT}" if gateways else "")
        + f" ({time.monotonic() - t:.1f} s after the lab objects)")


def _spawn(rec: _Recorder, cluster: str, name: str, d: Path,
           make: Callable[[int], tuple[list[str], dict[str, int]]], *, env: dict[str, str] | None = None) -> Component:
    """Start ``name`` on a fresh free port (``make(port)`` -> argv and other ports it serves);
    remembered so a start that lost its port to another program can be retried."""
    port = free_port()
    argv, ports = make(port)
    proc = Process(name, argv, d / f"{name}.log", env=env)
    comp = rec.add(name, cluster, proc.pid, proc.log, port=port, **ports)
    rec.makers[comp.label] = lambda: _spawn(rec, cluster, name, d, make, env=env)
    return comp


def _start_standin(rec: _Recorder, root: Path) -> None:
    argv = [sys.executable, "-m", "modelplane.lab.standin", str(root)]
    proc = Process("standin", argv, root / "standin.log")
    rec.add("standin", "", proc.pid, proc.log)


# --- the data plane -------------------------------------------------------------


def _gateways(say: Progress) -> bool:
    """Can the lab run Traefik (its binary built, the Gateway API CRDs it needs vendored)?"""
    missing = tools.missing(*DATA_PLANE_TOOLS)
    if not missing:
        try:
            dataplane.crds()
        except FileNotFoundError as err:
            missing = str(err)
    if missing:
        say(f"no gateway data plane (engines only): {missing}")
    return not missing


def _with_pod_cidrs(objects: list[dict], plan: netns.Plan, index: int) -> list[dict]:
    """The cluster's objects with a podCIDR on every Node (kwok gives a pod an IP from its node's)."""
    out, j = [], 0
    for obj in objects:
        if obj.get("kind") == "Node":
            cidr = plan.node_pods(index, j)
            j += 1
            obj = {**obj, "spec": {**(obj.get("spec") or {}), "podCIDR": cidr, "podCIDRs": [cidr]}}
        out.append(obj)
    return out


def _start_traefik(rec: _Recorder, cluster: str, d: Path, kubeconfig: Path, gateway_ip: str) -> None:
    ns = rec.state.network.namespace
    netns.add(ns, gateway_ip)
    argv = netns.command(ns, dataplane.traefik(tools.find("traefik"), gateway_ip))
    proc = Process("traefik", argv, d / "traefik.log", env=dataplane.traefik_env(kubeconfig))
    rec.add("traefik", cluster, proc.pid, proc.log, port=dataplane.HTTP_PORT, ping=dataplane.PING_PORT)


def _start_control_plane(rec: _Recorder, etcd: str, ca: pki.CA, crds: list[dict], deadline: float,
                         say: Progress, plan: netns.Plan) -> None:
    """An API server for the control plane's routes (Gateway API kinds, ``modelplane-lab``, a Traefik).
    No controller manager: the control plane's Services are selector-less, with EndpointSlices
    written beside them, which Traefik reads as they are."""
    name = CONTROL_PLANE
    d = Path(rec.state.root) / name
    api = APIServer(d, etcd, name=name, ca=ca, timeout=max(deadline - time.monotonic(), 1.0), address=plan.host)
    rec.add("kube-apiserver", name, api.process.pid, api.process.log, port=api.port)
    say(f"{name}: kube-apiserver ready at {api.url} ({api.ready_seconds:.1f} s)")
    client = RetryingClient(api.url, api.paths["ca.crt"], api.paths["admin.crt"], api.paths["admin.key"])
    gateway_crds = [c for c in crds if c["spec"]["group"] == "gateway.networking.k8s.io"]
    install.install_crds(client, gateway_crds, timeout=max(deadline - time.monotonic(), 1.0))
    install.create_all(client, [dataplane.gateway_class(name)])
    info = ClusterInfo(name=name, server=api.url, kubeconfig=str(api.kubeconfig), secret="",
                       gateway=plan.control_plane_gateway)
    with rec.lock:
        rec.state.control_plane = info
        rec.state.save()
    _start_traefik(rec, name, d, Path(api.kubeconfig), plan.control_plane_gateway)
    _wait_data_plane(rec, name, client, plan.control_plane_gateway, deadline)
    say(f"{name}: ready: Traefik on {plan.control_plane_gateway}:{dataplane.HTTP_PORT}")


def _start_engines(rec: _Recorder, root: Path) -> None:
    argv = [sys.executable, "-m", "modelplane.lab.engines", str(root)]
    proc = Process("engines", argv, root / "engines.log")
    rec.add("engines", "", proc.pid, proc.log)


def _wait_data_plane(rec: _Recorder, cluster: str, client, gateway_ip: str, deadline: float) -> None:
    """Traefik answers /ping and has accepted the lab's GatewayClass."""
    comp = rec.state.find("traefik", cluster)
    while True:
        if not comp.alive():
            raise LabError(f"{comp.label} exited during start-up (log: {comp.log}):\n{comp.tail()}")
        gc = client.get(f"/apis/{dataplane.GATEWAY_API}/gatewayclasses/{dataplane.GATEWAY_CLASS}")
        if http_ok(dataplane.ping_url(gateway_ip)) and dataplane.class_accepted(gc):
            return
        if time.monotonic() > deadline:
            raise LabError(f"{comp.label} did not accept GatewayClass {dataplane.GATEWAY_CLASS} in time "
                           f"(log: {comp.log}):\n{comp.tail()}")
        time.sleep(0.2)


# --- readiness ----------------------------------------------------------------


def _get(url: str) -> str:
    # insecure: the controllers serve health with certificates they signed for themselves.
    return read_url(url, timeout=2, insecure=url.startswith("https:")).decode(errors="replace")


def _healthy(comp: Component) -> bool:
    if comp.name in ("kube-controller-manager", "kube-scheduler"):
        return _get(f"https://127.0.0.1:{comp.port}/healthz") == "ok"
    if comp.name == "kwok":
        return _get(f"http://127.0.0.1:{comp.port}/healthz") == "ok"
    if comp.name == "lws":
        return _get(f"http://127.0.0.1:{comp.port}/readyz") == "ok"
    return True


def _nodes_ready(client, want: int) -> bool:
    items = client.get("/api/v1/nodes").get("items") or []
    ready = [n for n in items if any(c.get("type") == "Ready" and c.get("status") == "True"
                                     for c in (n.get("status") or {}).get("conditions") or [])
             and not any(t.get("key") == "node.kubernetes.io/not-ready" for t in (n.get("spec") or {}).get("taints") or [])]
    return len(ready) >= want


def _default_account(client) -> bool:
    try:
        client.get("/api/v1/namespaces/default/serviceaccounts/default")
        return True
    except ApiError:
        return False


BIND_RETRIES = 3


def _wait_ready(rec: _Recorder, cluster: inventory.ClusterInventory, client, deadline: float) -> None:
    want = sum(p.node_count for p in cluster.pools)
    pending: list[str] = []
    retries: dict[str, int] = {}
    while True:
        comps = [c for c in rec.state.components if c.cluster == cluster.name]
        for comp in comps:
            if comp.alive():
                continue
            # A free port can be taken by another program between our pick and its bind: pick again.
            # (Here, not kube.process.start_ready: the controllers start side by side and are
            # awaited in this one loop, with the nodes.)
            if (port_taken(comp.tail(5)) and retries.get(comp.label, 0) < BIND_RETRIES
                    and comp.label in rec.makers):
                retries[comp.label] = retries.get(comp.label, 0) + 1
                rec.drop(comp)
                rec.makers[comp.label]()
                continue
            raise LabError(f"{comp.label} exited during start-up (log: {comp.log}):\n{comp.tail()}")
        comps = [c for c in rec.state.components if c.cluster == cluster.name]
        pending = []
        for comp in comps:
            try:
                if not _healthy(comp):
                    pending.append(comp.label)
            except OSError:
                pending.append(comp.label)
        if not pending:
            if not _nodes_ready(client, want):
                pending.append(f"{cluster.name}: {want} Ready nodes")
            elif not _default_account(client):
                pending.append(f"{cluster.name}: the default ServiceAccount")
        if not pending:
            return
        if time.monotonic() > deadline:
            raise LabError(f"{cluster.name} was not ready in time; still waiting for: {', '.join(pending)}")
        time.sleep(0.2)


# --- status and down ------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    label: str
    pid: int
    alive: bool
    port: int
    rss_kib: int
    log: str
    tail: str   # the log's last lines when it is not running
    down: bool = False   # stopped on purpose with its cluster (``lab cluster-down``), not crashed


def status(root: Path | None = None) -> tuple[LabState | None, list[Row]]:
    state = LabState.load(Path(root or default_dir()))
    if state is None:
        return None, []
    rows = []
    for c in state.components:
        alive = c.alive()
        down = not alive and state.stopped_on_purpose(c)
        rows.append(Row(c.label, c.pid, alive, c.port, rss_kib(c.pid) if alive else 0, c.log,
                        "" if alive or down else c.tail(), down))
    return state, rows


def stop(state: LabState) -> list[str]:
    """Stop every recorded process, newest first; returns the labels that were running."""
    stopped = []
    for comp in reversed(state.components):
        try:
            if comp.stop():
                stopped.append(comp.label)
        except ProcessLookupError:
            pass
    return stopped


def down(root: Path | None = None) -> list[str]:
    """Stop the lab in ``root``; its logs stay, its etcd data, state file and network namespace go
    (a namespace a crashed lab left is removed too, state file or not)."""
    root = Path(root or default_dir())
    state = LabState.load(root)
    if state is None:
        netns.delete(root)
        return []
    stopped = stop(state)
    left = [c.label for c in state.components if c.alive()]
    if left:
        raise LabError(f"still running after stop: {', '.join(left)}")
    netns.delete(root)
    shutil.rmtree(root / "etcd" / "data", ignore_errors=True)
    state.path.unlink(missing_ok=True)
    return stopped


__all__ = ["TOOLS", "ComponentError", "LabError", "Row", "down", "load_fleet", "status", "stop", "up"]
