"""``modelplane simulate``: the whole control plane on one machine.

- ``world``: the simulated API server (XRs, composed resources, statuses, the clock)
- ``store``: required-resource selectors answered from an index, and who watches what
- ``codec``: protobuf conversions cached across renders
- ``heap``: the cycle collector kept off the world between waves (``gc.freeze``)
- ``loop``: the watch-driven reconcile loop through the real functions, to the fixed point:
  rounds and waves, over the three below
- ``tracking``: which XRs must render again (the dirty set, TTLs due, watches woken)
- ``reconcile``: one XR: its render inputs, its render, its result applied
- ``sync``: the workload clusters: what each runs (``modelplane.physical``) and the statuses
  their controllers write back
- ``health``, ``addresses``: the statuses controllers write back, valid upstream
- ``scenario``: steps over simulated time, and the timeline
- ``report``: placements, conditions, capacity, resources
- ``progress``: the one progress line on a terminal's stderr (``--quiet`` silences it)
- ``admission_orders``: whether an observed outcome of competing deployments is one some
  admission order reaches (the real scheduler over every order): judges real Crossplane's races

The commands are ``modelplane.cli.simulate`` and ``modelplane.cli.demo``.
"""
from modelplane.simulate.loop import Outcome, Simulator, simulate_dir
from modelplane.simulate.world import World

__all__ = ["Outcome", "Simulator", "World", "simulate_dir"]
