"""``modelplane simulate``: the whole control plane on one machine.

- ``world``: the simulated API server (XRs, composed resources, statuses, the clock)
- ``store``: required-resource selectors answered from an index, and who watches what
- ``codec``: protobuf conversions cached across renders
- ``loop``: the watch-driven reconcile loop through the real functions, to the fixed point
- ``nodes``, ``kubesched``, ``controllers``, ``physical``: each workload cluster played
  physically (nodes and DRA devices, kube-scheduler + DRA, workload controllers)
- ``health``, ``addresses``: the statuses controllers write back, valid upstream
- ``scenario``: steps over simulated time, and the timeline
- ``report``: placements, conditions, capacity, resources
- ``cli`` / ``demo``: the commands
"""
from modelplane.simulate.loop import Outcome, Simulator, simulate_dir
from modelplane.simulate.world import World

__all__ = ["Outcome", "Simulator", "World", "simulate_dir"]
