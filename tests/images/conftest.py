"""The image suite (``make images-test``): the function images ``make images`` built, run by the
real tools. Needs root, podman (``hack/images/packages.sh``) and the crossplane CLI (``make tools``).

``podman_service`` is ``podman system service`` on a socket in a temporary folder, started once
for the session and stopped after: what ``crossplane render`` dials with ``DOCKER_HOST``.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

REQUIRED = os.environ.get("MODELPLANE_REQUIRE_TOOLS") == "1"


def pytest_configure(config):
    config.addinivalue_line("markers", "images: runs the function images with podman (make images-test)")


def need_images() -> dict:
    """``images.json`` of ``make images``; skips (fails under ``make images-test``) without it."""
    from modelplane.e2e import podman

    try:
        podman.binary()
        return podman.manifest()
    except podman.MissingImages as err:
        if REQUIRED:
            pytest.fail(str(err))
        pytest.skip(str(err))


@pytest.fixture(scope="session")
def built() -> dict:
    return need_images()


@pytest.fixture(scope="session")
def podman_service(built):
    from modelplane.e2e import podman

    folder = Path(tempfile.mkdtemp(prefix="mp-podman-"))
    service = podman.Service(folder)
    try:
        yield service
    finally:
        service.stop()
        shutil.rmtree(folder, ignore_errors=True)


def pytest_terminal_summary(terminalreporter):
    from tests.images import recipe

    for line in recipe.REPORT:
        terminalreporter.write_line(f"::: {line}")
