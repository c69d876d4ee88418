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
