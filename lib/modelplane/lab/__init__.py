"""``modelplane lab``: real workload clusters on this machine, with fake GPU nodes.

Each InferenceCluster of a directory becomes a local cluster of upstream
programs from the tool cache (``make tools``): kube-apiserver (one shared etcd,
one prefix per cluster), kube-controller-manager, kube-scheduler with DRA,
kwok (fake nodes and pod lifecycles) and the LeaderWorkerSet controller.
The lab publishes each node's devices as DRA ResourceSlices, so pods bind to
GPUs by the real scheduler without a single GPU.

- ``fleet``: pure builders (Nodes, ResourceSlices, DeviceClasses, storage)
- the process side (``up``/``status``/``down``) and the ``simulate --lab``
  backend live in their own modules; see the README section "Try it on a
  local lab".
"""
