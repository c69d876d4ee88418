"""``modelplane lab``: real workload clusters on this machine, with fake GPU nodes and a real data plane.

Each InferenceCluster of a directory becomes a local cluster of upstream
programs from the tool cache (``make tools``): kube-apiserver (one shared etcd,
one prefix per cluster), kube-controller-manager, kube-scheduler with DRA,
kwok (fake nodes and pod lifecycles) and the LeaderWorkerSet controller.
The lab installs each cluster's inventory (``modelplane.physical.inventory``:
Nodes, DRA ResourceSlices, DeviceClasses, storage), so pods bind to GPUs by
the real scheduler without a single GPU.

With a data plane (the default; it needs root), requests really travel: the lab
lives in a network namespace of its own (addresses in 198.18.0.0/15 only), every
engine pod gets a mock engine on its pod IP whose ``/health`` is the pod's
readiness, every cluster a Traefik serving the GatewayClass ``modelplane-lab``,
and a control-plane API server with its own Traefik stands beside the clusters.

- ``runner``: ``up`` / ``status`` / ``down`` (the processes, their readiness)
- ``state``: where a running lab keeps its processes, ports, kubeconfigs and addresses
- ``install``: the lab's own objects, applied once a cluster is up
- ``remote``: clients of every lab cluster; server-side apply in dependency order
- ``backend``: ``LabPhysical``, the lab as a ``physical.interface.PhysicalFleet``
  (``simulate --lab``)
- ``standin``: the Envoy Gateway stand-in that gives Gateways of other classes and
  LoadBalancer Services their (unreachable) addresses
- ``netns``: the network namespace, the veth pair and the address plan
- ``engines``: the supervisor of the mock engines, and pod readiness from their ``/health``
- ``dataplane``: Traefik's command line, the CRDs it needs, the ``modelplane-lab`` GatewayClass
- ``controlplane``: ``simulate --lab``'s routing objects on the control-plane API server
- ``probe``: one live request through the data plane (``simulate --lab --show routes``)
- ``outage``: ``cluster_down`` / ``cluster_up``, one cluster taken down whole and back (failover practice)

Other packages use the lab through the names below only (a test checks it).
"""
from modelplane.lab.backend import LabMismatch, LabPhysical, open_lab, warnings
from modelplane.lab.dataplane import GATEWAY_CLASS
from modelplane.lab.outage import OutageError, cluster_down, cluster_up
from modelplane.lab.probe import in_lab, probe
from modelplane.lab.remote import Remote
from modelplane.lab.runner import NO_DATA_PLANE_ENV, READY_TIMEOUT, LabError, down, status, up
from modelplane.lab.standin import sweep
from modelplane.lab.state import ClusterInfo, LabState, default_dir

__all__ = [
    "GATEWAY_CLASS",
    "NO_DATA_PLANE_ENV",
    "READY_TIMEOUT",
    "ClusterInfo",
    "LabError",
    "LabMismatch",
    "LabPhysical",
    "LabState",
    "OutageError",
    "Remote",
    "cluster_down",
    "cluster_up",
    "default_dir",
    "down",
    "in_lab",
    "open_lab",
    "probe",
    "status",
    "sweep",
    "up",
    "warnings",
]
