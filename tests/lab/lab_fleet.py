"""What the lab tests share: the solo cluster's folder and the checks for the lab's tools and data plane."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from modelplane.lab import runner

from tests.upstream.need import REQUIRED, tool

SOLO = Path(__file__).resolve().parent / "fleets" / "solo"
# In CI (or under make lab-test) the data plane is part of what is tested: never skipped there.
STRICT = REQUIRED or os.environ.get("CI") == "true"


def data_plane() -> bool:
    """Start the test labs with a data plane? As root, or where skipping is not allowed
    (then a missing root fails the lab's start with the lab's own message)."""
    return os.geteuid() == 0 or STRICT


def need_tools() -> None:
    """Skip (or fail under MODELPLANE_REQUIRE_TOOLS=1) unless `make tools` built the lab's programs
    (Traefik too when the labs have a data plane)."""
    tool(*runner.TOOLS, *(runner.DATA_PLANE_TOOLS if data_plane() else ()))


def need_data_plane(state) -> None:
    """Skip unless the lab has a data plane: only when not root and skipping is allowed."""
    need_tools()
    if state.network is None:
        if STRICT:
            pytest.fail("the lab has no data plane (it needs root)")
        pytest.skip("the lab's data plane needs root (ip netns)")
