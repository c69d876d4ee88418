"""Run a copy of .ci/run with a stand-in make and stand-in tools check, in a scratch tree.

The copy runs exactly as CI runs it (``bash .ci/run``), but ``CI_MAKE`` points at a script that
records each target and fails the ones named in ``FAIL`` (or never ends the ones in ``SLOW``), and
``hack/tools.sh --check`` answers from ``CACHED`` (the groups whose tools are cached). Every other
stand-in step takes no time, so the verdicts depend only on the figures and the budget: no wall
clock enters a test.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = (ROOT / "hack" / "tools.sh").read_text()


def block(name: str) -> list[list[str]]:
    """The rows of hack/tools.sh's ``NAME="..."`` table, split at ``|``."""
    text = re.search(rf'^{name}="\n(.*?)^"', SCRIPT, re.DOTALL | re.MULTILINE).group(1)
    return [line.split("|") for line in text.splitlines() if line.strip()]


def groups() -> dict[str, list[str]]:
    """hack/tools.sh's groups: name -> tools."""
    return {g: members.split() for g, members in block("groups")}


def needs() -> dict[str, list[str]]:
    """.ci/run's needs: suite -> the tools-* steps it needs."""
    text = re.search(r"declare -A needs=\((.*?)\n\)", (ROOT / ".ci" / "run").read_text(), re.DOTALL).group(1)
    return {m[0]: m[1].split() for m in re.findall(r'\[([a-z0-9-]+)\]="([^"]*)"', text)}



_MAKE = """#!/usr/bin/env bash
echo "$1" >>"$CALLS"
[ "$1" != test ] || echo "$MODELPLANE_TOOLS_DIR" >"$CALLS.test-tools-dir"
for f in $SLOW; do
  # SLOW: the target is still running long after the test has its answer (.ci/run stops it).
  if [ "$f" = "$1" ]; then sleep 300; fi
done
for f in $FAIL; do
  if [ "$f" = "$1" ]; then
    n=$(grep -cx "$1" "$CALLS")
    # FAIL_ONCE: the target fails on its first attempt only.
    if [ -z "${FAIL_ONCE:-}" ] || [ "$n" = 1 ]; then exit 1; fi
  fi
done
exit 0
"""

_TOOLS = """#!/usr/bin/env bash
[ "$1" = --check ] || exit 2
for g in $CACHED; do [ "$g" = "$2" ] && exit 0; done
exit 3
"""


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    calls: list[str]

    @property
    def foreground(self) -> list[str]:
        """The targets other than the tools groups, in the order run."""
        return [c for c in self.calls if not c.startswith("tools-")]

    @property
    def builds(self) -> list[str]:
        return [c for c in self.calls if c.startswith("tools-")]

    def line(self, step: str) -> str:
        """The final table's row for ``step``."""
        for line in self.out.splitlines():
            cells = line.split()
            if len(cells) > 2 and cells[0] == ":::" and cells[1] == step:
                return line
        raise AssertionError(f"no row for {step} in:\n{self.out}")

    @property
    def last(self) -> str:
        return self.out.rstrip().splitlines()[-1]


def run_ci(tmp: Path, times: dict[str, tuple[int, int]] | None = None, *, budget: int = 5400,
           fail: tuple[str, ...] = (), fail_once: bool = False, cached: tuple[str, ...] = (),
           manifest: bool = False, background: bool = False, slow: tuple[str, ...] = ()) -> Run:
    """.ci/run in a scratch copy of the repository's .ci, with ``times`` replacing figures of the
    real table (step -> (cold, cached)) and the stand-ins above."""
    (tmp / ".ci").mkdir(parents=True, exist_ok=True)
    (tmp / "hack").mkdir(exist_ok=True)
    shutil.copy(ROOT / ".ci" / "run", tmp / ".ci" / "run")
    rows = []
    for line in (ROOT / ".ci" / "suite-times.tsv").read_text().splitlines():
        cells = line.split("\t")
        if line and not line.startswith("#") and times and cells[0] in times:
            cold, cached_s = times[cells[0]]
            line = "\t".join([cells[0], str(cold), str(cached_s), cells[3], "test"])
        rows.append(line)
    (tmp / ".ci" / "suite-times.tsv").write_text("\n".join(rows) + "\n")
    (tmp / "hack" / "tools.sh").write_text(_TOOLS)
    make = tmp / "make"
    make.write_text(_MAKE)
    make.chmod(0o755)
    tools_dir = tmp / "tools"
    tools_dir.mkdir(exist_ok=True)
    if manifest:
        (tools_dir / "tools.json").write_text("{}\n")
    calls = tmp / "calls"
    calls.write_text("")
    env = {**os.environ, "CI_MAKE": str(make), "CI_BUDGET_S": str(budget), "CALLS": str(calls),
           "FAIL": " ".join(fail), "CACHED": " ".join(cached), "MODELPLANE_TOOLS_DIR": str(tools_dir),
           "SLOW": " ".join(slow), "CI_TOOLS_BACKGROUND": "1" if background else "0", "CI_POLL_S": "0.05"}
    env.pop("CI_MARGIN_PCT", None)
    env.pop("CI_RESERVE_S", None)
    if fail_once:
        env["FAIL_ONCE"] = "1"
    done = subprocess.run(["bash", str(tmp / ".ci" / "run")], check=False, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120, stdin=subprocess.DEVNULL)
    return Run(done.returncode, done.stdout, calls.read_text().split())
