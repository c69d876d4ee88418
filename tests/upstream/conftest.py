"""The session's API server: etcd + kube-apiserver on loopback, started once per run
(once per xdist worker), torn down after; its folder (logs, kubeconfig) is kept
and printed when a test failed."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from modelplane.kube import control_plane

from tests.upstream import tables
from tests.upstream.need import tool


@pytest.fixture(scope="session")
def apiserver(request):
    tool("etcd", "kube-apiserver")
    root = Path(tempfile.mkdtemp(prefix="modelplane-apiserver-"))
    failed_before = request.session.testsfailed
    try:
        with control_plane(root, name="e2e") as api:
            yield api
    except Exception:
        print(f"\nAPI server state kept in {root}")
        raise
    if request.session.testsfailed > failed_before:
        print(f"\nAPI server logs kept in {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def fleet():
    """``modelplane simulate examples/fleet`` at its fixed point (the World)."""
    from modelplane import paths
    from modelplane.simulate.loop import simulate_dir

    world, outcome = simulate_dir(paths.EXAMPLES / "fleet")
    assert outcome.converged, outcome.still_changing
    return world


def pytest_terminal_summary(terminalreporter):
    tables.write(terminalreporter)
