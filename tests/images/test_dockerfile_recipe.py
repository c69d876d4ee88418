"""The Dockerfile and ``make images`` describe the same runtime (no image needed: ``make test``).

Same Debian release in both stages and in the image, the same entrypoint, user, port and
environment, the venv at /venv made by ``uv sync --locked --no-editable`` with Debian's
``/usr/bin/python3`` from the same sources, and uv at the Makefile's version. The built image
itself is compared with the Dockerfile in ``test_image_contents.py`` (``make images-test``).
"""
from __future__ import annotations

from tests.images import recipe


def test_same_debian_release_in_both_stages_and_the_image():
    d, b = recipe.dockerfile(), recipe.build()
    assert recipe.debian_suite(d["build"]["from"]) == recipe.debian_suite(d["run"]["from"]) == b.SUITE
    assert "python3" in d["run"]["from"] and "python3" in b.INCLUDE


def test_same_entrypoint_user_port_and_function_variable():
    d, b = recipe.dockerfile(), recipe.build()
    cfg = b.image_config("compose-model-deployment", "0.1.0", "3.11.2")
    assert d["run"]["entrypoint"] == cfg["Entrypoint"] == ["/venv/bin/modelplane", "serve"]
    assert d["run"]["user"] == cfg["User"] == "65532:65532"   # numeric: runAsNonRoot can check it
    assert {f"{d['run']['expose']}/tcp"} == set(cfg["ExposedPorts"]) == {"9443/tcp"}
    assert d["run"]["env"] == {"MODELPLANE_FUNCTION": "$FUNCTION"}
    assert "MODELPLANE_FUNCTION=compose-model-deployment" in cfg["Env"]


def test_same_venv_from_the_same_lock_and_sources():
    d, b = recipe.dockerfile(), recipe.build()
    env = d["build"]["env"]
    assert env["UV_PROJECT_ENVIRONMENT"] == "/venv" and env["UV_PYTHON"] == "/usr/bin/python3"
    assert env["UV_PYTHON_DOWNLOADS"] == "never"
    assert any("--locked" in c and "--no-editable" in c for c in d["uv_sync"]), d["uv_sync"]
    assert all("--locked" in c for c in d["uv_sync"])
    assert set(d["build"]["copy"]) == set(b.SOURCES)
    assert d["build"]["args"]["UV_VERSION"] == recipe.makefile_uv_version()


def test_the_parser_sees_a_changed_dockerfile(tmp_path):
    changed = (recipe.paths.ROOT / "Dockerfile").read_text().replace("USER 65532:65532", "USER nonroot:nonroot")
    (tmp_path / "Dockerfile").write_text(changed)
    assert recipe.dockerfile(tmp_path / "Dockerfile")["run"]["user"] == "nonroot:nonroot"
