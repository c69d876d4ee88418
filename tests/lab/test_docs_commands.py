"""The docs' lab commands run: every ``# needs: lab`` block of a page, in order, in a scratch
copy of the repository, against a lab of their own (a state folder of this test), with each
block's output checked as docs-test checks the others (docs/writing-docs.md)."""
from __future__ import annotations

import subprocess

import pytest
from modelplane.lab import runner

from tests.docs import pages
from tests.docs.runner import block_env, run_marked_blocks, scratch_copy
from tests.lab.lab_fleet import data_plane, need_tools

pytestmark = [pytest.mark.slow, pytest.mark.lab]

LAB_PAGES = [p for p in pages.pages() if any(f.needs == "lab" for f, _ in p.runnable())]


def test_the_lab_page_has_lab_commands():
    assert any(p.name == "tools/lab.md" for p in LAB_PAGES)


@pytest.mark.parametrize("page", LAB_PAGES, ids=lambda p: p.name)
def test_lab_blocks_run(page, tmp_path):
    need_tools()
    scratch = scratch_copy(tmp_path / "repo")
    state = tmp_path / "lab-state"
    env = block_env(scratch, state)
    if not data_plane():
        env[runner.NO_DATA_PLANE_ENV] = "0"
    try:
        run_marked_blocks(page, "lab", scratch, env)
    finally:
        # Whatever a block left running stops with the test, whatever the page says.
        subprocess.run([str(pages.ROOT / ".venv" / "bin" / "modelplane"), "lab", "down", "--state", str(state)],
                       capture_output=True, timeout=120, check=False, env=env)
