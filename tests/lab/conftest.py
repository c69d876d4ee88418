"""The lab tests' shared lab: one set of workload clusters per pytest run, torn down after.

The process tests are marked ``lab`` (and ``slow``, so ``make test`` stays quick):
``make lab-test`` runs them, and they skip with one reason when `make tools` has
not built the upstream programs (under MODELPLANE_REQUIRE_TOOLS=1 they fail instead).
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from modelplane import paths
from modelplane.lab import runner
from modelplane.validate.admission import load_dir

from tests.lab.lab_fleet import SOLO, data_plane, need_tools


def pytest_configure(config):
    config.addinivalue_line("markers", "lab: starts lab workload clusters from the tool cache (make lab-test)")


def fleet_dir(target: Path) -> Path:
    """Every cluster the lab tests use: the example fleet's and the solo cluster (with their classes)."""
    target.mkdir(parents=True, exist_ok=True)
    docs = []
    for source in (paths.EXAMPLES / "fleet", SOLO):
        xrs, _ = load_dir(source)
        docs += [d for d in xrs if d.get("kind") in ("InferenceCluster", "InferenceClass")]
    (target / "clusters.yaml").write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return target


@pytest.fixture(scope="session")
def lab(request):
    """The running lab's state (4 clusters; a data plane as root or in CI); its folder is kept
    when a test failed."""
    need_tools()
    root = Path(tempfile.mkdtemp(prefix="modelplane-lab-"))
    failed_before = request.session.testsfailed
    state = runner.up(fleet_dir(root / "fleet"), root / "state", data_plane=data_plane())
    try:
        yield state
    finally:
        runner.down(root / "state")
        if request.session.testsfailed > failed_before:
            print(f"\nlab logs kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
