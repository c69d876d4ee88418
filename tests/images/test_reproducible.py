"""Two builds from the same inputs give the same images: ``hack/images/build.py --fresh`` into an
empty cache (mmdebstrap and uv sync again, nothing reused) must give the layer digests and the
image IDs of the images ``make images`` built."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from modelplane import paths

from tests.images import recipe

pytestmark = [pytest.mark.slow, pytest.mark.images]


def test_a_fresh_build_gives_the_same_digests(built, tmp_path):
    env = {**os.environ, "MODELPLANE_IMAGES_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, str(paths.ROOT / "hack/images/build.py"), "--fresh", "--no-load"],
                          env=env, capture_output=True, text=True, timeout=1200, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    again = json.loads((tmp_path / "images.json").read_text())
    assert again["layers"] == built["layers"]
    assert {k: v["id"] for k, v in again["functions"].items()} == {k: v["id"] for k, v in built["functions"].items()}
    recipe.REPORT.append(f"two builds, one digest: compose-model-deployment "
                         f"{again['functions']['compose-model-deployment']['id']}")
