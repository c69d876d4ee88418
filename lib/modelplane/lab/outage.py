"""``lab cluster-down NAME`` / ``lab cluster-up NAME``: one lab cluster taken down whole, and back.

To practise (and test) failover, a cluster must really stop answering. ``cluster_down``
stops the cluster's API server and its gateway (Traefik), and the engine supervisor
(``lab.engines``) stops the mock engines of its pods and leaves them stopped while the
cluster is listed in the state file's ``outages``. The control plane then meets what it
meets on a real fleet: every call to that cluster's API server is refused (provider-kubernetes
reports its Objects ``Synced=False`` with the connect error, ``simulate --lab`` too), and
every request the control-plane gateway still sends to the cluster's gateway fails.

The API server and Traefik are *killed* (SIGKILL), neither stopped gracefully nor frozen. An
outage gives no notice: on SIGTERM Traefik would keep finishing open connections for up to its
``graceTimeOut`` (10 s by default) and the API server would drain its requests, so the outage
would begin at no clear moment. A frozen process (SIGSTOP) keeps its listening socket: the
kernel still accepts connections into the backlog and every client call hangs until its own
timeout (30 s per call here) instead of failing at once, which would make each reconcile round
of the control plane slow rather than show the outage. A killed server refuses connections, as
a cluster whose endpoint is gone does. (The engines are stopped by their supervisor, as usual.)
etcd keeps the cluster's objects, so ``cluster_up`` starts the API server again on the same
port, with the same command line (read from ``/proc`` before stopping it) and certificates,
then its Traefik, and the supervisor starts the engines of its Running pods again.

The cluster's controllers (controller manager, scheduler, kwok, LeaderWorkerSet) keep
running: they run without leader election, so they wait for their API server and resume
when it returns, as a real cluster's control loops do after an API outage.
"""
from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from modelplane import clock
from modelplane.kube import ApiError, tools
from modelplane.kube.net import http_ok
from modelplane.kube.process import Process, port_taken
from modelplane.lab import dataplane, engines, netns
from modelplane.lab.remote import RetryingClient
from modelplane.lab.state import Component, LabState, Outage, default_dir, start_ticks

# What goes down, in this order: the gateway first (no new request reaches the cluster), then
# the API server. The engines go with them (the supervisor, which reads ``outages``).
STOPPED = ("traefik", "kube-apiserver")
TIMEOUT = 60.0


class OutageError(RuntimeError):
    """A cluster cannot be taken down or brought back (the message says why and what to do)."""


def _load(root: Path | None) -> LabState:
    root = Path(root or default_dir())
    state = LabState.load(root)
    if state is None or not state.clusters:
        raise OutageError(f"no lab in {root}: start one with `modelplane lab up DIR --state {root}`")
    return state


def _check(state: LabState, name: str) -> None:
    if name not in state.clusters:
        raise OutageError(f"the lab has no cluster {name!r} (it has {', '.join(sorted(state.clusters))})")


def cmdline(pid: int) -> list[str]:
    """The command line of ``pid`` (``/proc/<pid>/cmdline``); [] when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def _traefik_argv(state: LabState, name: str) -> list[str]:
    # Rebuilt rather than read back: `ip netns exec` replaced itself with Traefik, so the
    # recorded pid's command line has lost the namespace part.
    return netns.command(state.network.namespace, dataplane.traefik(tools.find("traefik"), state.clusters[name].gateway))


def engine_processes(root: Path, cluster: str) -> list[int]:
    """Pids of the mock engines the supervisor runs for ``cluster`` (their ``--pod`` file lives in
    ``<state>/engines/<cluster>/``)."""
    marker = f"{Path(root).resolve()}/engines/{cluster}/"
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            argv = cmdline(int(proc.name))
            if "mock-engine" in argv and any(a.startswith(marker) for a in argv) and start_ticks(int(proc.name)):
                pids.append(int(proc.name))
    return sorted(pids)


def _wait(what: str, done, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise OutageError(f"{what} did not happen within {timeout:.0f} s")
        time.sleep(0.1)


def cluster_down(name: str, root: Path | None = None, *, timeout: float = TIMEOUT) -> list[str]:
    """Take lab cluster ``name`` down whole; returns the labels of what was stopped (engines
    counted as one ``<cluster>/engines (N)``)."""
    state = _load(root)
    _check(state, name)
    if name in state.outages:
        raise OutageError(f"lab cluster {name} is already down: `modelplane lab cluster-up {name}` brings it back")
    broken = [c.label for c in state.broken()]
    if broken:
        raise OutageError(f"the lab is not healthy (not running: {', '.join(broken)}); see `modelplane lab status`")
    comps = [c for n in STOPPED if (c := state.find(n, name)) is not None]
    argv = {c.label: (_traefik_argv(state, name) if c.name == "traefik" else cmdline(c.pid)) for c in comps}
    # Recorded before anything stops: the supervisor reads it and stops the engines, and a
    # `lab status` meanwhile shows a cluster going down, not a broken lab.
    state.outages[name] = Outage(since=clock.now().timestamp(), argv=argv)
    state.save()
    stopped = [comp.label for comp in comps if _kill(comp)]
    if state.network is not None and state.find("engines") is not None:
        n = len(engine_processes(Path(state.root), name))
        _wait(f"the engine supervisor stopping {name}'s engines",
              lambda: not engine_processes(Path(state.root), name), timeout)
        stopped.append(f"{name}/engines ({n})")
    return stopped


def _kill(comp: Component) -> bool:
    """SIGKILL ``comp`` and wait until it is gone; True when it was running."""
    if not comp.alive():
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(comp.pid, signal.SIGKILL)
    _wait(f"{comp.label} exiting", lambda: not comp.alive(), 10.0)
    return True


def cluster_up(name: str, root: Path | None = None, *, timeout: float = TIMEOUT) -> list[str]:
    """Bring lab cluster ``name`` back after ``cluster_down``: its API server (same port, same
    objects), then its Traefik; returns once it answers, its gateway pings and the engine of every
    Running pod answers ``/health`` again."""
    state = _load(root)
    _check(state, name)
    outage = state.outages.get(name)
    if outage is None:
        raise OutageError(f"lab cluster {name} is not down (`modelplane lab cluster-down {name}` takes it down)")
    info = state.clusters[name]
    client = RetryingClient(info.server, *(Path(info.kubeconfig).parent / "pki" / f
                                           for f in ("ca.crt", "admin.crt", "admin.key")))
    started = []
    for comp_name in reversed(STOPPED):          # the API server first: Traefik reads it
        comp = state.find(comp_name, name)
        if comp is None or comp.alive():
            continue
        env = dataplane.traefik_env(Path(info.kubeconfig)) if comp_name == "traefik" else None
        _restart(state, comp, outage.argv[comp.label], env)
        started.append(comp.label)
        if comp_name == "kube-apiserver":
            _wait_alive(comp, f"{name}'s API server answering /readyz", client.ready, timeout)
        else:
            _wait_alive(comp, f"{name}'s Traefik answering /ping",
                        lambda: http_ok(dataplane.ping_url(info.gateway)), timeout)
    del state.outages[name]
    state.save()          # the supervisor starts the engines again
    if state.network is not None and state.find("engines") is not None:
        _wait(f"the engines of {name}'s Running pods answering /health",
              lambda: _engines_answer(client), timeout)
    return started


def _restart(state: LabState, comp: Component, argv: list[str], env: dict[str, str] | None) -> None:
    if not argv:
        raise OutageError(f"no command line recorded for {comp.label}: stop the lab (`modelplane lab down`) "
                          f"and start it again")
    proc = Process(comp.name, argv, Path(comp.log), env=env)
    comp.pid, comp.ticks = proc.pid, start_ticks(proc.pid)
    state.save()


def _wait_alive(comp: Component, what: str, done, timeout: float) -> None:
    def check() -> bool:
        if not comp.alive():
            hint = " (its port was taken meanwhile: `modelplane lab down` and up again)" if port_taken(comp.tail(5)) else ""
            raise OutageError(f"{comp.label} exited while starting again{hint} (log: {comp.log}):\n{comp.tail()}")
        try:
            return bool(done())
        except OSError:
            return False
    _wait(what, check, timeout)


def _engines_answer(client) -> bool:
    try:
        pods = client.get("/api/v1/pods").get("items") or []
    except (ApiError, OSError):
        return False
    return all(engines.healthy(p["status"]["podIP"], port) for p in pods if engines.wants_engine(p)
               for port, http in [engines.engine_port(p)] if http)
