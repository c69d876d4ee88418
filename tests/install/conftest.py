"""The install session (``make install-test``): a control plane with real Crossplane core and a
local registry, stopped just before the user's step (``controlplane.up(configuration=False)``).

The registry holds what stands for the internet (provider-kubernetes and provider-helm built by
``make tools``, the cloud providers' stand-ins, under their upstream paths, with the lab's
ImageConfigs sending those paths there); Modelplane's packages are not there yet. The tests then
do what docs/platform/install.md tells a platform engineer: push ``make xpkg``'s packages to
"their" registry (a path of the local one, ``$REGISTRY``), point Crossplane at it, install the
providers with their runtime configs, then the Configuration. The functions run from the pushed
package images (podman, as ``make e2e-crossplane-images``), so this needs root.

The state folder (every log) is kept and printed when a test failed.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.install.needs import TOOLS
from tests.support import KubectlCalls, poll_until

INSTALL_MARK = "install"
# The path below the local registry that plays the platform team's registry.
REGISTRY_PATH = "platform"


def pytest_configure(config):
    config.addinivalue_line("markers", f"{INSTALL_MARK}: docs/platform/install.md's commands against real "
                                       "Crossplane and a local registry (make install-test)")


@dataclass
class Install(KubectlCalls):
    state: Path          # the session's folder
    kubeconfig: Path     # the control plane's
    registry: str        # "their" registry: 127.0.0.1:<port>/platform
    kubectl_bin: Path

    def apply(self, obj: dict, kubeconfig: Path | None = None) -> None:
        self.kubectl("apply", "-f", "-", stdin=json.dumps(obj), kubeconfig=kubeconfig)

    def runtime(self) -> dict[str, dict]:
        """What the lab's package runtime runs: package -> its record (pid, args, image)."""
        path = self.state / "control-plane" / "runtime" / "runtime.json"
        return json.loads(path.read_text()) if path.exists() else {}

    @staticmethod
    def wait(what: str, probe: Callable[[], Any], timeout: float = 300, every: float = 2) -> Any:
        """Poll ``probe`` until it returns something truthy; fail with its last answer. The timeout
        is a hang guard, never the verdict."""
        return poll_until(what, probe, timeout, every)


def _need_root_and_podman() -> None:
    from tests.upstream.need import REQUIRED
    reason = None
    if os.geteuid() != 0:
        reason = "the functions run from their package images with podman: run as root (make install-test)"
    elif shutil.which("podman") is None:
        reason = "no podman: make images installs it (hack/images/packages.sh)"
    if reason:
        (pytest.fail if REQUIRED else pytest.skip)(reason)


@pytest.fixture(scope="session")
def install(request):
    from modelplane.e2e import controlplane, registry
    from modelplane.kube import tools

    from tests.upstream.need import REQUIRED, tool

    tool(*TOOLS)
    _need_root_and_podman()
    if registry.find_binary() is None:
        (pytest.fail if REQUIRED else pytest.skip)(f"no OCI registry: {registry.INSTALL_HINT}")
    built = controlplane.xpkg_dir()
    if not (built / "packages.json").is_file():
        (pytest.fail if REQUIRED else pytest.skip)(f"no packages in {built}: run `make xpkg` (make install-test does)")
    state = Path(tempfile.mkdtemp(prefix="modelplane-install-"))
    failed_before = request.session.testsfailed
    try:
        rec = controlplane.up(state / "control-plane", functions="image", configuration=False, timeout=600,
                              log=lambda m: print(m, flush=True))
    except BaseException:
        print(f"\ninstall state kept in {state}")
        if (state / "control-plane" / controlplane.RECORD).exists():
            controlplane.down(state / "control-plane")
        raise
    try:
        yield Install(state, Path(rec.kubeconfig), f"{rec.registry}/{REGISTRY_PATH}", tools.find("kubectl"))
    finally:
        controlplane.down(state / "control-plane")
        if request.session.testsfailed > failed_before:
            print(f"\ninstall logs kept in {state}")
        else:
            shutil.rmtree(state, ignore_errors=True)
