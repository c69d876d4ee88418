"""Where things live: the repository root, our XRDs, and the upstream CRDs.

Upstream CRDs are read from ``$MODELPLANE_CRDS`` or ``../shared/crds`` next to
the checkout; tests and the validator use the same lookup.
"""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APIS = ROOT / "apis"
FUNCTIONS = ROOT / "functions"
EXAMPLES = ROOT / "examples"


def crds_dir() -> Path:
    """The folder of upstream CRD schemas (``$MODELPLANE_CRDS`` wins)."""
    env = os.environ.get("MODELPLANE_CRDS")
    if env:
        return Path(env)
    for candidate in (ROOT.parent / "shared" / "crds", ROOT / "third_party" / "crds"):
        if candidate.is_dir():
            return candidate
    return ROOT.parent / "shared" / "crds"
