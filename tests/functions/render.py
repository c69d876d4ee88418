"""`modelplane render` of one XR through its Composition in a subprocess, the
functions as real gRPC servers (the replica, endpoint and service render tests)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from tests.support import ROOT

FUNCTIONS = ROOT / "examples" / "functions.yaml"


def render(tmp_path: Path, xr: dict, plural: str, extra: list[dict] | None = None) -> list[dict]:
    xr_file = tmp_path / "xr.yaml"
    xr_file.write_text(yaml.safe_dump(xr))
    argv = [sys.executable, "-m", "modelplane.cli", "render", str(xr_file),
            str(ROOT / "apis" / plural / "composition.yaml"), str(FUNCTIONS)]
    if extra:
        extra_file = tmp_path / "extra.yaml"
        extra_file.write_text(yaml.safe_dump_all(extra))
        argv += ["-e", str(extra_file)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
    assert out.returncode == 0, out.stderr
    return [d for d in yaml.safe_load_all(out.stdout) if d]
