"""Running a page's sh blocks as a reader would: in a scratch copy of the repository, with the
project's .venv first on PATH (tests/docs/test_commands.py; tests/lab runs the lab's blocks)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.docs import pages

BLOCK_TIMEOUT_S = 600


def scratch_copy(target: Path) -> Path:
    """The repository's files (tracked and new, ignored ones left out) copied with their times
    (so make's stamps stay fresh), and the project's .venv linked in."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=pages.ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = pages.ROOT / name
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the work tree, not yet in git
        dest = target / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest, follow_symlinks=False)
    (target / ".venv").symlink_to(pages.ROOT / ".venv")
    return target


def run_block(body: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=BLOCK_TIMEOUT_S, stdin=subprocess.DEVNULL, check=False)


def block_env(scratch: Path, state: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{scratch / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["MODELPLANE_LAB_STATE"] = str(state)  # never the user's lab
    env.pop("VIRTUAL_ENV", None)
    return env


def run_marked_blocks(page: pages.Page, needs: str, scratch: Path, env: dict[str, str]) -> int:
    """Run every block of ``page`` marked ``# needs: <needs>`` in order, as a reader would; each must
    exit 0 and print what the page shows after it. Returns how many ran (suites outside docs-test:
    the lab's and the install's blocks)."""
    ran = 0
    for fence, output in page.runnable():
        if fence.needs != needs:
            continue
        body = "\n".join(fence.body.splitlines()[1:])
        done = run_block(body, scratch, env)
        printed = done.stdout + done.stderr
        assert done.returncode == 0, f"{page.name}:{fence.line} exited {done.returncode}:\n{printed[-4000:]}"
        if output is not None:
            missing = pages.appear_in_order(pages.expected_lines(output.body), printed)
            assert missing is None, f"{page.name}:{output.line}: the page shows {missing!r}:\n{printed[-4000:]}"
        ran += 1
    return ran
