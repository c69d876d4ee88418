"""The lab's data-plane network: one Linux network namespace per lab, joined to the host by a veth pair.

Everything a request can reach lives in ``198.18.0.0/15`` (RFC 2544, reserved for network tests,
never routed on the Internet) and inside the namespace this module creates; nothing else is
addressed. A lab takes a *slot* ``k`` (0-7, the lowest no other running lab holds), so several
labs (``pytest -n 2`` runs up to four, beside a developer's) never share an address:

    198.18.<k>.1/24          the host end of the veth (API servers of the lab bind here)
    198.18.<k>.2/24          the namespace end (``eth0`` inside the namespace)
    198.18.<k>.9             the Crossplane e2e's control-plane gateway (``modelplane.e2e.gateway``)
    198.18.<k>.10            the control-plane gateway (its Traefik)
    198.18.<k>.<11+i>        cluster ``i``'s gateway (its Traefik)
    198.19.<32k>.0/19        the lab's pods, routed from the host via 198.18.<k>.2
    198.19.<32k+4i>.0/22     cluster ``i``'s pods (8 clusters); node ``j`` has the /27 ``j`` of it
                             (``spec.podCIDRs``; 32 nodes of 30 pods)

Pod and gateway addresses are /32s on the namespace's ``eth0``, added when a process needs them
(``add``) and removed when it is gone (``remove``). The namespace is named after the state folder
(``mplab-<hash>``, the host end ``mpl-<hash>``: at most 15 characters, as Linux wants), so
``lab down`` and a later ``lab up`` find and remove what a crashed lab left.

Needs root and ``ip`` (iproute2). ``command(ns, argv)`` runs a program inside the namespace.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import ipaddress
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

SLOTS = 8
MAX_CLUSTERS = 8
NODES_PER_CLUSTER = 32          # /27 per node in a /22 per cluster
INSIDE = "eth0"                 # the namespace end of the veth
_LOCK = Path("/run/modelplane-lab.lock")


class NetnsError(RuntimeError):
    """The namespace cannot be made (not root, no ``ip``, no free slot) or an ``ip`` call failed."""


def names(root: Path | str) -> tuple[str, str]:
    """(namespace, host end of the veth) for the lab in state folder ``root``."""
    digest = hashlib.sha256(str(Path(root).resolve()).encode()).hexdigest()[:8]
    return f"mplab-{digest}", f"mpl-{digest}"


@dataclass(frozen=True)
class Plan:
    """The addresses of the lab in slot ``slot`` (module doc)."""

    slot: int

    @property
    def host(self) -> str:
        return f"198.18.{self.slot}.1"

    @property
    def inside(self) -> str:
        return f"198.18.{self.slot}.2"

    @property
    def control_plane_gateway(self) -> str:
        return f"198.18.{self.slot}.10"

    @property
    def crossplane_gateway(self) -> str:
        """The gateway of the Crossplane e2e's own control plane (``modelplane.e2e``), beside the lab's."""
        return f"198.18.{self.slot}.9"

    def gateway(self, cluster: int) -> str:
        self._check(cluster)
        return f"198.18.{self.slot}.{11 + cluster}"

    @property
    def pods(self) -> str:
        return f"198.19.{32 * self.slot}.0/19"

    def cluster_pods(self, cluster: int) -> str:
        self._check(cluster)
        return f"198.19.{32 * self.slot + 4 * cluster}.0/22"

    def node_pods(self, cluster: int, node: int) -> str:
        if not 0 <= node < NODES_PER_CLUSTER:
            raise NetnsError(f"the lab's data plane has room for {NODES_PER_CLUSTER} nodes per cluster, not {node + 1}")
        net = ipaddress.ip_network(self.cluster_pods(cluster))
        return str(list(net.subnets(new_prefix=27))[node])

    @staticmethod
    def _check(cluster: int) -> None:
        if not 0 <= cluster < MAX_CLUSTERS:
            raise NetnsError(f"the lab's data plane has room for {MAX_CLUSTERS} clusters, not {cluster + 1}")


def _ip() -> str:
    found = shutil.which("ip") or next((p for p in ("/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip") if os.path.exists(p)),
                                       None)
    if not found:
        raise NetnsError("the lab's data plane needs `ip` (iproute2: apt-get install iproute2)")
    return found


def check() -> None:
    """Raise NetnsError unless this process can make namespaces (root, ``ip``)."""
    if os.geteuid() != 0:
        raise NetnsError("the lab's data plane needs root: it creates a network namespace and a veth pair "
                         "with `ip netns`")
    _ip()


def ip(*args: str, ns: str | None = None, check_rc: bool = True) -> str:
    """Run ``ip args`` (inside ``ns`` when given); its output. Raises NetnsError on failure."""
    argv = [_ip(), *(["-n", ns] if ns else []), *args]
    run = subprocess.run(argv, capture_output=True, text=True, check=False)
    if check_rc and run.returncode != 0:
        raise NetnsError(f"`{' '.join(argv[1:])}` failed: {run.stderr.strip() or run.stdout.strip()}")
    return run.stdout


def command(ns: str, argv: Sequence[str]) -> list[str]:
    """``argv`` run inside namespace ``ns``."""
    return [_ip(), "netns", "exec", ns, *map(str, argv)]


def exists(ns: str) -> bool:
    return Path("/run/netns", ns).exists()


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """Slot picking and creation, one lab at a time (two `lab up` side by side)."""
    _LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(_LOCK, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _slots_taken() -> set[int]:
    taken = set()
    for line in ip("-o", "-4", "addr", "show").splitlines():
        parts = line.split()
        if "inet" in parts:
            addr = parts[parts.index("inet") + 1].split("/")[0]
            a, b, c, _ = (int(x) for x in addr.split("."))
            if (a, b) == (198, 18) and c < SLOTS:
                taken.add(c)
    return taken


def create(root: Path | str) -> Plan:
    """The lab's namespace and veth pair, up, with the slot's addresses and routes; returns the plan.
    Whatever a crashed lab of the same state folder left is removed first."""
    check()
    ns, host_end = names(root)
    delete(root)
    with _locked():
        free = [s for s in range(SLOTS) if s not in _slots_taken()]
        if not free:
            raise NetnsError(f"every one of the {SLOTS} lab data-plane slots (198.18.0-{SLOTS - 1}.0/24) is in use: "
                             "stop another lab first")
        plan = Plan(free[0])
        try:
            ip("netns", "add", ns)
            ip("link", "add", host_end, "type", "veth", "peer", "name", INSIDE, "netns", ns)
            ip("addr", "add", f"{plan.host}/24", "dev", host_end)
            ip("link", "set", host_end, "up")
            ip("addr", "add", f"{plan.inside}/24", "dev", INSIDE, ns=ns)
            ip("link", "set", INSIDE, "up", ns=ns)
            ip("link", "set", "lo", "up", ns=ns)
            ip("route", "add", plan.pods, "via", plan.inside, "dev", host_end)
        except NetnsError:
            delete(root)
            raise
    return plan


def add(ns: str, address: str) -> None:
    """``address``/32 on the namespace's ``eth0`` (already there: fine)."""
    ip("addr", "add", f"{address}/32", "dev", INSIDE, ns=ns, check_rc=False)
    if address not in addresses(ns):
        raise NetnsError(f"could not add {address} in namespace {ns}")


def remove(ns: str, address: str) -> None:
    ip("addr", "del", f"{address}/32", "dev", INSIDE, ns=ns, check_rc=False)


def addresses(ns: str) -> set[str]:
    out = ip("-o", "-4", "addr", "show", "dev", INSIDE, ns=ns, check_rc=False)
    return {p[p.index("inet") + 1].split("/")[0] for p in (line.split() for line in out.splitlines()) if "inet" in p}


def pids(ns: str) -> list[int]:
    """Processes inside the namespace (every one of them the lab's: nobody else uses it)."""
    if not exists(ns):
        return []
    out = ip("netns", "pids", ns, check_rc=False)
    return [int(p) for p in out.split() if p.isdigit()]


def delete(root: Path | str) -> bool:
    """Remove the lab's namespace and veth (idempotent); True when there was something to remove.
    Processes still inside the namespace (a crashed lab's) are killed first: they are the lab's."""
    if os.geteuid() != 0:
        return False
    ns, host_end = names(root)
    found = False
    for pid in pids(ns):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
            found = True
    if Path("/sys/class/net", host_end).exists():
        ip("link", "del", host_end, check_rc=False)
        found = True
    if exists(ns):
        ip("netns", "del", ns, check_rc=False)
        found = True
    return found


def gone(root: Path | str) -> bool:
    """Neither the namespace nor the host end of its veth exists."""
    ns, host_end = names(root)
    return not exists(ns) and not Path("/sys/class/net", host_end).exists()
