"""Every runnable block of every page runs, and prints what the page says it prints.

A page's ``sh`` blocks run in order, in a scratch copy of the repository with ``.venv/bin``
first on PATH; a ``text`` block right after one is its output, whose lines must appear in what
it printed, in order. Blocks whose first line says ``# needs: ...`` are left to the suite that
has what they need (docs/writing-docs.md).
"""
from __future__ import annotations

import pytest

from tests.docs import pages
from tests.docs.runner import block_env, run_block, scratch_copy


def _pages_with_commands() -> list[pages.Page]:
    return [p for p in pages.pages() if any(f.needs is None for f, _ in p.runnable())]


def test_some_page_has_commands():
    assert len(_pages_with_commands()) >= 3


def test_needs_markers_name_a_known_need():
    for page in pages.pages():
        for fence, _ in page.runnable():
            first = fence.body.lstrip().splitlines()[0] if fence.body.strip() else ""
            if first.startswith("# needs"):
                assert fence.needs, f"{page.name}:{fence.line}: unknown need {first!r} (docs/writing-docs.md)"


@pytest.mark.parametrize("page", _pages_with_commands(), ids=lambda p: p.name)
def test_page_commands_run_and_print_what_the_page_shows(page, tmp_path):
    scratch = scratch_copy(tmp_path / "repo")
    env = block_env(scratch, tmp_path / "lab-state")
    for fence, output in page.runnable():
        if fence.needs is not None:
            continue
        done = run_block(fence.body, scratch, env)
        printed = done.stdout + done.stderr
        assert done.returncode == 0, f"{page.name}:{fence.line} exited {done.returncode}:\n{printed[-4000:]}"
        if output is not None:
            missing = pages.appear_in_order(pages.expected_lines(output.body), printed)
            assert missing is None, (f"{page.name}:{output.line}: the page shows {missing!r}, "
                                     f"the command printed:\n{printed[-4000:]}")
