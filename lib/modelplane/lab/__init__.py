"""``modelplane lab``: real workload clusters on this machine, with fake GPU nodes.

Each InferenceCluster of a directory becomes a local cluster of upstream
programs from the tool cache (``make tools``): kube-apiserver (one shared etcd,
one prefix per cluster), kube-controller-manager, kube-scheduler with DRA,
kwok (fake nodes and pod lifecycles) and the LeaderWorkerSet controller.
The lab installs each cluster's inventory (``modelplane.physical.inventory``:
Nodes, DRA ResourceSlices, DeviceClasses, storage), so pods bind to GPUs by
the real scheduler without a single GPU.

- ``runner``: ``up`` / ``status`` / ``down`` (the processes, their readiness)
- ``state``: where a running lab keeps its processes, ports and kubeconfigs
- ``install``: the lab's own objects, applied once a cluster is up
- ``remote``: clients of every lab cluster; server-side apply in dependency order
- ``backend``: ``LabPhysical``, the lab as a ``physical.interface.PhysicalFleet``
  (``simulate --lab``)
- ``standin``: the Envoy Gateway stand-in that gives Gateways and
  LoadBalancer Services their addresses

Other packages use the lab through the names below only (a test checks it).
"""
from modelplane.lab.backend import LabMismatch, LabPhysical, open_lab, warnings
from modelplane.lab.remote import Remote
from modelplane.lab.runner import READY_TIMEOUT, LabError, down, status, up
from modelplane.lab.standin import sweep
from modelplane.lab.state import default_dir

__all__ = [
    "READY_TIMEOUT", "LabError", "LabMismatch", "LabPhysical", "Remote", "default_dir", "down", "open_lab",
    "status", "sweep", "up", "warnings",
]
