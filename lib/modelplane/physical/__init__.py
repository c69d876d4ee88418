"""What a workload cluster physically holds, and how its workloads come to run.

The reconcile loop (``modelplane.simulate``) talks to a fleet of workload
clusters through ``interface`` only; this package holds that interface and the
simulated fleet behind it. ``modelplane.lab`` implements the same interface
with real processes.

- ``interface``: ``PhysicalFleet`` and ``ClusterView`` (``typing.Protocol``),
  ``PoolUse``, ``PendingPod``, ``RemoteKey``
- ``inventory``: pure builders of what a cluster holds before any workload
  arrives: Nodes, DRA ResourceSlices, DeviceClasses, storage (the lab installs
  them; the simulated model reads them)
- ``hardware``: a cluster's nodes and devices, built from ``inventory``
- ``driver_values``: what GPU DRA drivers publish per product (the value table
  classes and selectors are checked against; ``simulate --hardware published``)
- ``kubesched``: kube-scheduler's node and DRA device allocation, as a model
- ``controllers``: the Deployment, LeaderWorkerSet and Job controllers, as models
- ``kubelet``: why a bound pod does not start (a Secret its cluster lacks)
- ``provider``: what provider-kubernetes leaves on a cluster (management
  policies, references, orphans), for both fleets (``simulate.sync``)
- ``simulated``: ``Physical``, the simulated fleet (hardware + controllers +
  scheduler, settled after every sync)
"""
