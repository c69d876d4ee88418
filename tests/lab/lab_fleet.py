"""What the lab tests share: the solo cluster's folder and the check for the lab's tools."""
from __future__ import annotations

from pathlib import Path

from modelplane.lab import runner

from tests.upstream.need import tool

SOLO = Path(__file__).resolve().parent / "fleets" / "solo"


def need_tools() -> None:
    """Skip (or fail under MODELPLANE_REQUIRE_TOOLS=1) unless `make tools` built the lab's programs."""
    tool(*runner.TOOLS)
