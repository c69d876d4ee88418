"""``modelplane simulate``: the whole control plane on one machine.

- ``world``: the simulated API server (XRs, composed resources, statuses)
- ``health``: the statuses a healthy fleet reports for composed resources
- ``loop``: render every XR through the real functions until the fixed point
- ``report``: placement table, conditions, resources as YAML
- ``cli`` / ``demo``: the commands
"""
from modelplane.simulate.loop import Outcome, Simulator, simulate_dir
from modelplane.simulate.world import World

__all__ = ["Outcome", "Simulator", "World", "simulate_dir"]
