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


@pytest.fixture(scope="session")
def fleet():
    """``modelplane simulate examples/fleet`` at its fixed point (the World)."""
    from modelplane import paths
    from modelplane.simulate.loop import simulate_dir

    world, outcome = simulate_dir(paths.EXAMPLES / "fleet")
    assert outcome.converged, outcome.still_changing
    return world


# Verdict tables filled by the judge suites and printed at the end of the run:
# title -> rows of (section, case, modelplane validate, the other judge, note).
TABLES: dict[str, list[tuple[str, str, str, str, str]]] = {}


def pytest_terminal_summary(terminalreporter):
    for title, table in TABLES.items():
        if not table:
            continue
        other = title.split(" vs ", 1)[-1].upper()
        rows = [("SECTION", "CASE", "MODELPLANE VALIDATE", other, "NOTE"), *table]
        widths = [min(60, max(len(r[i]) for r in rows)) for i in range(4)]
        terminalreporter.section(title)
        for r in rows:
            terminalreporter.write_line("  ".join(c[:w].ljust(w) for c, w in zip(r, widths)) + "  " + r[4])
        disagree = sum(1 for r in table if r[4].startswith("DISAGREE"))
        terminalreporter.write_line(f"{len(table)} cases, {disagree} disagreements")
