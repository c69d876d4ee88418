"""The lab's state file: every process it started, how to recognise it, how to stop it.

``<state>/lab.json`` records, per component, its pid, the kernel's start time
of that pid (so a recycled pid is never mistaken for ours), its port and log.
``lab status`` and ``lab down`` work from this file alone, from any shell. With a
data plane it also names the network namespace (``network``), each cluster's
gateway address and pod range, and the control-plane API server (``control_plane``).
A cluster taken down on purpose (``lab cluster-down``, ``lab.outage``) is listed in
``outages`` with what it takes to start its stopped processes again.
"""
from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

STATE_FILE = "lab.json"
STOP_GRACE = 10.0


def default_dir() -> Path:
    """``$MODELPLANE_LAB_STATE`` or ``~/.local/state/modelplane/lab``."""
    env = os.environ.get("MODELPLANE_LAB_STATE")
    return Path(env) if env else Path.home() / ".local" / "state" / "modelplane" / "lab"


def start_ticks(pid: int) -> int | None:
    """The pid's start time (clock ticks since boot, /proc/<pid>/stat field 22); None when gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    fields = raw[raw.rindex(")") + 2:].split()
    if fields[0] in ("Z", "X"):  # a zombie has exited; only its exit status is left
        return None
    return int(fields[19])


def rss_kib(pid: int) -> int:
    """Resident memory of ``pid`` in KiB (0 when gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


@dataclass
class Component:
    name: str            # kube-apiserver, kwok, ...
    cluster: str         # "" for lab-wide components (etcd, the stand-ins)
    pid: int
    ticks: int | None    # start_ticks(pid) when started
    log: str
    port: int = 0
    ports: dict[str, int] = field(default_factory=dict)  # other ports it serves (webhook, health)

    @property
    def label(self) -> str:
        return f"{self.cluster}/{self.name}" if self.cluster else self.name

    def alive(self) -> bool:
        """Running, and still the process we started (not a recycled pid)."""
        _reap(self.pid)
        return self.ticks is not None and start_ticks(self.pid) == self.ticks

    def tail(self, lines: int = 20) -> str:
        try:
            text = Path(self.log).read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.rstrip().splitlines()[-lines:])

    def stop(self, grace: float = STOP_GRACE) -> bool:
        """SIGTERM, then SIGKILL after ``grace`` s. True when it was running."""
        if not self.alive():
            return False
        os.kill(self.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if not self.alive():
                return True
            time.sleep(0.05)
        if self.alive():
            os.kill(self.pid, signal.SIGKILL)
            while self.alive():
                time.sleep(0.02)
        return True


def _reap(pid: int) -> None:
    """Collect the exit status if ``pid`` is our own exited child (else it lingers as a zombie)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except (ChildProcessError, OSError):
        pass


@dataclass
class ClusterInfo:
    name: str
    server: str
    kubeconfig: str
    secret: str              # the kubeconfig Secret manifest (existing.kubeconfigSecretRef's shape)
    secret_ref: dict[str, str] = field(default_factory=dict)
    node_ip: str = ""
    gateway: str = ""        # its Traefik's address in the lab's network namespace ("" without a data plane)
    pods: str = ""           # the pod range of its nodes' podCIDRs


@dataclass
class Network:
    """The lab's data plane (``lab.netns``): the namespace, the host end of its veth, the slot."""

    namespace: str
    host_end: str
    slot: int
    host: str                # the host end's address: the lab's API servers listen here


@dataclass
class Outage:
    """A cluster taken down on purpose (``lab.outage``): when, and how to start again what was stopped."""

    since: float                                     # wall-clock seconds (clock.now()) when it went down
    argv: dict[str, list[str]] = field(default_factory=dict)   # component label -> its command line


@dataclass
class LabState:
    directory: str                                   # the manifests the lab was built from
    root: str                                        # the state folder
    components: list[Component] = field(default_factory=list)
    clusters: dict[str, ClusterInfo] = field(default_factory=dict)
    ready_seconds: float | None = None
    network: Network | None = None                   # None: no data plane (``lab up --no-data-plane``)
    control_plane: ClusterInfo | None = None         # the control-plane API server (with a data plane)
    outages: dict[str, Outage] = field(default_factory=dict)   # clusters taken down on purpose, by name

    @property
    def path(self) -> Path:
        return Path(self.root) / STATE_FILE

    def save(self) -> None:
        data = asdict(self)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        tmp.replace(self.path)

    @classmethod
    def load(cls, root: Path) -> LabState | None:
        path = Path(root) / STATE_FILE
        try:
            data: dict[str, Any] = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except ValueError as err:
            raise ValueError(f"{path}: not a lab state file ({err}); remove it after stopping its processes") from None
        comps = [Component(**c) for c in data.get("components") or []]
        clusters = {k: ClusterInfo(**v) for k, v in (data.get("clusters") or {}).items()}
        network = Network(**data["network"]) if data.get("network") else None
        cp = ClusterInfo(**data["control_plane"]) if data.get("control_plane") else None
        outages = {k: Outage(**v) for k, v in (data.get("outages") or {}).items()}
        return cls(directory=data.get("directory", ""), root=str(root), components=comps, clusters=clusters,
                   ready_seconds=data.get("ready_seconds"), network=network, control_plane=cp, outages=outages)

    def running(self) -> list[Component]:
        return [c for c in self.components if c.alive()]

    def stopped_on_purpose(self, comp: Component) -> bool:
        """Is ``comp`` one a ``lab cluster-down`` stopped (not a crash)?"""
        outage = self.outages.get(comp.cluster)
        return outage is not None and comp.label in outage.argv

    def broken(self) -> list[Component]:
        """Components not running that no ``lab cluster-down`` stopped: a lab in this state is not healthy."""
        return [c for c in self.components if not c.alive() and not self.stopped_on_purpose(c)]

    def find(self, name: str, cluster: str = "") -> Component | None:
        return next((c for c in self.components if c.name == name and c.cluster == cluster), None)
