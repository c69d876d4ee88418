"""hack/tools.sh's groups and .ci/run's needs agree with what the suites run.

A suite that starts a program of a group .ci/run did not build for it fails on CI only after
the long builds; these checks fail in make test instead.
"""
from __future__ import annotations

import subprocess

from modelplane.kube import tools
from modelplane.lab import runner

from tests.ci.cirun import ROOT, block, groups, needs


def provided(suite: str) -> set[str]:
    return {t for g in needs()[suite] for t in groups()[g.removeprefix("tools-")]}


def test_every_tool_is_in_exactly_one_group():
    built = [row[0] for row in block("table")]
    members = [t for ts in groups().values() for t in ts]
    assert sorted(members) == sorted(built) == sorted(tools.KNOWN)


def test_each_suite_gets_the_programs_it_runs():
    assert {"crossplane", "etcd", "kube-apiserver", "kubectl"} <= provided("e2e")
    assert "crossplane" in provided("images-test")  # make xpkg builds and inspects with it
    assert set(runner.TOOLS) | set(runner.DATA_PLANE_TOOLS) | {"kubectl"} <= provided("lab-test")
    assert set(tools.KNOWN) == provided("e2e-crossplane-images") == provided("e2e-crossplane-images-long")
    from tests.install.needs import TOOLS as INSTALL_TOOLS
    assert set(INSTALL_TOOLS) <= provided("install-test")


def test_check_says_what_is_not_cached(tmp_path):
    env = {"MODELPLANE_TOOLS_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["bash", str(ROOT / "hack" / "tools.sh"), "--check", "lab"], check=False, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 3
    assert done.stdout.strip() == "not cached: kube-controller-manager kube-scheduler kwok lws traefik"


def test_an_unknown_group_is_named_with_the_known_ones(tmp_path):
    done = subprocess.run(["bash", str(ROOT / "hack" / "tools.sh"), "labs"], check=False, capture_output=True,
                          text=True, env={"MODELPLANE_TOOLS_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}, timeout=60)
    assert done.returncode == 1
    assert "unknown tool or group 'labs'" in done.stderr and "groups: judges lab control-plane" in done.stderr
