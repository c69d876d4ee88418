"""Tests that run upstream programs ask for them here.

Without ``make tools`` they skip with one reason (``kube-apiserver not built:
run `make tools```); under ``make e2e`` (``MODELPLANE_REQUIRE_TOOLS=1``) a
missing program fails instead, so CI cannot pass by skipping.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from modelplane.kube import tools

REQUIRED = os.environ.get("MODELPLANE_REQUIRE_TOOLS") == "1"


def tool(*names: str) -> dict[str, Path]:
    """name -> path of every program named; skips (or fails under make e2e) when one is missing."""
    reason = tools.missing(*names)
    if reason:
        if REQUIRED:
            pytest.fail(reason)
        pytest.skip(reason)
    return {n: tools.find(n) for n in names}
