"""A cold CI run as .ci/suite-times.tsv predicts it, step by step.

.ci/run builds the tools groups in the background at idle priority while the foreground steps run
in order. A group's ``cold`` figure is its build's wall time alone on the machine (both cores); a
foreground step's ``cpu`` figure is the CPU seconds it used in a cold run, so it leaves the builder
``1 - cpu / (2 x cold)`` of the machine while it runs (none for a step that keeps both cores busy).
When a suite needs a group that is not built yet, the foreground waits and the builder has the
whole machine. A step starts only if it still fits (.ci/run's guard):

    start + cold x margin  <=  budget - reserve

This is the model the table is judged against (tests/ci/test_ci_run.py); each run of .ci/run ends
with the seen times that correct it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORES = 2


@dataclass(frozen=True)
class Row:
    step: str
    cold: int
    cached: int
    cpu: int


@dataclass(frozen=True)
class Planned:
    step: str
    start: float  # seconds into the run; for a group: when the foreground needs it
    end: float
    fits: bool


def rows(path: Path = ROOT / ".ci" / "suite-times.tsv") -> dict[str, Row]:
    out = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            step, cold, cached, cpu, _ = line.split("\t", 4)
            out[step] = Row(step, int(cold), int(cached), int(cpu))
    return out


def plan(table: dict[str, Row], order: list[str], needs: dict[str, list[str]], *, budget: int = 5400,
         reserve: int = 120, margin: float = 1.5) -> list[Planned]:
    """Each step of ``order`` (groups named tools-*, in build order among themselves) as the model
    runs it on a cold machine."""
    groups = [s for s in order if s.startswith("tools-")]
    left = {g: float(table[g].cold) for g in groups}  # build seconds still to do, alone
    built_at: dict[str, float] = {}
    t = 0.0

    def build(seconds: float, share: float) -> None:
        """The builder works ``seconds`` of wall time with ``share`` of the machine."""
        nonlocal t
        work, clock = seconds * share, t
        for g in groups:
            if g in built_at or work <= 0:
                continue
            done = min(work, left[g])
            left[g] -= done
            work -= done
            clock += done / share if share else 0
            if left[g] <= 0:
                built_at[g] = clock
        t += seconds

    out = []
    for step in order:
        if step in left:
            continue
        for g in needs.get(step, []):
            while g not in built_at:  # the foreground waits: the builder has the machine
                build(sum(left[x] for x in groups[:groups.index(g) + 1] if x not in built_at), 1.0)
        row = table[step]
        fits = t + row.cold * margin <= budget - reserve
        if not fits:
            out.append(Planned(step, t, t, False))
            continue
        share = max(0.0, 1 - row.cpu / (CORES * row.cold)) if row.cold else 1.0
        start = t
        build(row.cold, share)
        out.append(Planned(step, start, t, True))
    for g in groups:  # when each build ended (inf: not by the end of the run)
        out.append(Planned(g, 0.0, built_at.get(g, float("inf")), g in built_at))
    return out
