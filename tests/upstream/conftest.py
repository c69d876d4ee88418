"""The session's API server: etcd + kube-apiserver on loopback, started once per run
(once per xdist worker), torn down after; its folder (logs, kubeconfig) is kept
and printed when a test failed."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from modelplane.kube import control_plane

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
