"""The end-to-end session: lab workload clusters + a control plane where real Crossplane runs.

Started once per session that asks for ``e2e`` (``make e2e-crossplane``),
torn down after; the state folder (every log, kubeconfigs, the registry) is
kept and printed when a test failed. Before the control plane starts,
``modelplane simulate --lab`` runs the same manifests on the same lab clusters
(``modelplane.e2e.parity``), for the comparison with Crossplane.
``MODELPLANE_E2E_STATE=<dir>`` runs the suite against a lab already up
(``modelplane e2e up examples/platform --simulate-lab examples/ml-team --state
<dir>``) and leaves it running: for working on a failing step.

Run as root, the lab has its data plane (``modelplane.e2e.controlplane.wants_data_plane``) and
the tests marked ``e2e_data_plane`` send requests through it; without it they fail and say
why, unless ``MODELPLANE_LAB_DATA_PLANE=0`` asked for none: then they are deselected, and the
session's summary says so.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import KubectlCalls, poll_until

TOOLS = ("crossplane", "crossplane-core", "provider-kubernetes", "provider-helm", "etcd", "kube-apiserver",
         "kube-controller-manager", "kube-scheduler", "kubectl", "kwok", "lws")


DATA_PLANE_MARK = "e2e_data_plane"


def pytest_configure(config):
    config.addinivalue_line("markers", f"{DATA_PLANE_MARK}: sends requests through the lab's data plane "
                                       "(deselected with MODELPLANE_LAB_DATA_PLANE=0)")


def _opted_out() -> bool:
    from modelplane.e2e.controlplane import data_plane_opted_out
    return data_plane_opted_out()


def pytest_collection_modifyitems(config, items):
    if not _opted_out():
        return
    gone = [i for i in items if i.get_closest_marker(DATA_PLANE_MARK)]
    if gone:
        config.hook.pytest_deselected(items=gone)
        items[:] = [i for i in items if i not in gone]


def pytest_terminal_summary(terminalreporter, config):
    gone = [i for i in terminalreporter.stats.get("deselected", []) if i.get_closest_marker(DATA_PLANE_MARK)]
    if gone and _opted_out():
        terminalreporter.write_line(f"e2e: MODELPLANE_LAB_DATA_PLANE=0 (no data plane): deselected {len(gone)} "
                                    f"test(s) that send requests through the composed routes: "
                                    f"{', '.join(i.name for i in gone)}")


@dataclass
class E2E(KubectlCalls):
    state: Path
    kubeconfig: Path
    kubectl_bin: Path
    lab: Any            # modelplane.lab.state.LabState
    timings: dict

    def defaulted(self, obj: dict) -> dict:
        """``obj`` as the server would store it (defaults, pruning): a server-side dry-run create
        under another name, so it never meets the live object."""
        probe = json.loads(json.dumps(obj))
        probe.pop("status", None)
        meta = probe["metadata"] = {k: v for k, v in probe["metadata"].items() if k in ("name", "namespace", "labels")}
        meta["name"] = meta["name"][:240] + "-dry-run"
        return json.loads(self.kubectl("create", "--dry-run=server", "-o", "json", "-f", "-", stdin=json.dumps(probe)))

    def defaulted_all(self, objs: list[dict]) -> list[dict]:
        """``defaulted`` for many objects in one server-side dry-run (one kubectl call)."""
        if not objs:
            return []
        probes = []
        for obj in objs:
            probe = json.loads(json.dumps(obj))
            probe.pop("status", None)
            meta = probe["metadata"] = {k: v for k, v in probe["metadata"].items() if k in ("name", "namespace", "labels")}
            meta["name"] = meta["name"][:240] + "-dry-run"
            probes.append(probe)
        text = self.kubectl("create", "--dry-run=server", "-o", "json", "-f", "-",
                            stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": probes}))
        items, at, decoder = [], 0, json.JSONDecoder()
        while text[at:].strip():   # one JSON document per object, one after the other
            obj, at = decoder.raw_decode(text, len(text) - len(text[at:].lstrip()))
            items += obj["items"] if obj.get("kind") == "List" else [obj]
        assert len(items) == len(objs), f"dry-run returned {len(items)} objects for {len(objs)}"
        return items

    @functools.cached_property
    def simulate_lab(self) -> dict:
        """What ``modelplane simulate --lab`` did on these lab clusters before the control plane
        started (``modelplane.e2e.parity.record``)."""
        from modelplane.e2e import parity
        return parity.load(self.state / parity.RECORD)

    def cluster_kubeconfig(self, name: str) -> Path:
        return Path(self.lab.clusters[name].kubeconfig)

    def wait(self, what: str, probe: Callable[[], Any], timeout: float = 300, every: float = 3) -> Any:
        """Poll ``probe`` until it returns something truthy; fail with its last answer."""
        return poll_until(what, probe, timeout, every)


@pytest.fixture(scope="session")
def e2e(request):
    from modelplane import paths
    from modelplane.e2e import controlplane, registry
    from modelplane.kube import tools

    from tests.upstream.need import tool

    tool(*TOOLS)
    reuse = os.environ.get("MODELPLANE_E2E_STATE")
    if reuse:  # a running `modelplane e2e up examples/platform --state DIR`: use it, leave it running
        from modelplane.lab.state import LabState
        state = Path(reuse).resolve()
        rec = controlplane.Record.load(state / "control-plane")
        yield E2E(state, Path(rec.kubeconfig), tools.find("kubectl"), LabState.load(state / "lab"), rec.timings)
        return
    if registry.find_binary() is None:
        reason = f"no OCI registry for Crossplane's package manager: {registry.INSTALL_HINT}"
        from tests.upstream.need import REQUIRED
        (pytest.fail if REQUIRED else pytest.skip)(reason)
    state = Path(tempfile.mkdtemp(prefix="modelplane-e2e-"))
    failed_before = request.session.testsfailed
    try:
        # simulate --lab runs first, on the same lab clusters, and empties them again (parity.record).
        rec, lab = controlplane.up_with_lab([paths.EXAMPLES / "platform"], state, timeout=600,
                                            log=lambda m: print(m, flush=True),
                                            simulate_lab=[paths.EXAMPLES / "ml-team"])
    except BaseException:
        print(f"\ne2e state kept in {state}")
        controlplane.down_with_lab(state)
        raise
    try:
        yield E2E(state, Path(rec.kubeconfig), tools.find("kubectl"), lab, rec.timings)
    finally:
        controlplane.down_with_lab(state)
        if request.session.testsfailed > failed_before:
            print(f"\ne2e logs kept in {state}")
        else:
            shutil.rmtree(state, ignore_errors=True)
