"""The engine observer: what engine pods on one workload cluster say, reported per replica.

One small program per workload cluster (``modelplane engine-observer``, a
Deployment compose-inference-cluster installs in ``modelplane-system``) reads
the pods Modelplane composed and writes, per replica, a ConfigMap in the
replica's own namespace that the replica reads back through an Observe-only
Object (``workloads.engine_status``). Modules:

- ``summary``: one pod's engine container as an ``EngineState`` (pure);
- ``report``: pods grouped per replica, the ConfigMap and its owners (pure);
  ``Report.load`` is the seam for engine load (autoscaling);
- ``loop``: list, compare, write; backoff and periodic full resync;
- ``incluster``: the API server and credentials of the pod's service account.
"""
from __future__ import annotations

from modelplane.observer.incluster import ConfigError, client
from modelplane.observer.loop import Observer, Pass, Settings
from modelplane.observer.report import POD_SELECTOR, Report, reports
from modelplane.observer.summary import engine_states

__all__ = ["POD_SELECTOR", "ConfigError", "Observer", "Pass", "Report", "Settings", "client", "engine_states",
           "reports"]
