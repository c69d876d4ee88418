"""`simulate`'s progress line: drawn on a terminal's stderr only, throttled, blanked, and never in stdout."""
from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from modelplane.render import FunctionPool
from modelplane.simulate.loop import simulate
from modelplane.simulate.progress import NO_PROGRESS, Terminal, for_stream, line

from tests.simulate import fleets


# ----- the line ------------------------------------------------------------------------------
@dataclass
class LineCase:
    name: str
    round_no: int
    done: int
    total: int
    elapsed: float
    want: str


LINE_CASES = [
    LineCase("thousands get separators, the bar is filled in proportion", 3, 412, 1208, 12.44,
             "round 3 · 412/1,208 XRs · 12.4 s [######..............]"),
    LineCase("nothing reconciled yet", 1, 0, 32, 0.0, "round 1 · 0/32 XRs · 0.0 s [....................]"),
    LineCase("an XR rendered twice in a round does not overfill", 2, 40, 32, 1.05,
             "round 2 · 32/32 XRs · 1.1 s [####################]"),
    LineCase("an empty world draws an empty bar", 1, 0, 0, 0.2, "round 1 · 0/0 XRs · 0.2 s [....................]"),
]


@pytest.mark.parametrize("case", LINE_CASES, ids=[c.name for c in LINE_CASES])
def test_line(case):
    got = line(case.round_no, case.done, case.total, case.elapsed)
    assert got == case.want, f"-want {case.want!r}\n+got  {got!r}"


# ----- the terminal sink, on a fake clock ----------------------------------------------------
class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _sink(width: int = 80) -> tuple[Terminal, io.StringIO, Clock]:
    out, clock = io.StringIO(), Clock()
    return Terminal(out, clock=clock, width=width), out, clock


def _screen(written: str) -> str:
    """What a terminal shows on the line: each '\\r' returns to column 0 and overwrites."""
    cells: list[str] = []
    col = 0
    for ch in written:
        if ch == "\r":
            col = 0
            continue
        assert ch != "\n", f"the progress line never ends a line: {written!r}"
        if col < len(cells):
            cells[col] = ch
        else:
            cells.append(ch)
        col += 1
    return "".join(cells).rstrip()


def test_reconciled_redraws_at_most_once_per_interval():
    sink, out, clock = _sink()
    sink.round_started(1, 100)
    drawn = out.getvalue().count("\r")
    for _ in range(30):                 # 30 XRs within 0.03 s: no redraw
        clock.now += 0.001
        sink.reconciled(1)
    assert out.getvalue().count("\r") == drawn
    clock.now += 0.1                    # the interval passed: the next one draws, with every XR counted
    sink.reconciled(1)
    assert out.getvalue().count("\r") == drawn + 1
    assert _screen(out.getvalue()) == "round 1 · 31/100 XRs · 0.1 s [######..............]"


def test_a_round_start_always_draws_and_the_total_follows_the_world():
    sink, out, clock = _sink()
    sink.round_started(1, 10)
    clock.now += 0.01
    sink.round_started(2, 10)           # within the interval, drawn anyway
    assert _screen(out.getvalue()) == "round 2 · 0/10 XRs · 0.0 s [....................]"
    clock.now += 0.5
    sink.reconciled(5, total=20)        # the round created ten XRs
    assert _screen(out.getvalue()) == "round 2 · 5/20 XRs · 0.5 s [#####...............]"


def test_a_phase_shows_what_is_awaited_and_a_shorter_line_overwrites_a_longer_one():
    sink, out, clock = _sink()
    sink.round_started(9, 1208)
    clock.now += 2.0
    sink.phase("stopping functions")
    assert _screen(out.getvalue()) == "stopping functions · 2.0 s"


def test_the_line_is_cut_to_the_terminal_width():
    sink, out, _ = _sink(width=20)
    sink.round_started(3, 1208)
    assert _screen(out.getvalue()) == "round 3 · 0/1,208 X"    # 19 columns: a full line may wrap


def test_clear_blanks_the_line_and_the_next_report_draws_it_at_once():
    sink, out, clock = _sink()
    sink.round_started(1, 10)
    sink.clear()
    assert _screen(out.getvalue()) == ""
    assert out.getvalue().endswith("\r")     # the cursor is back at column 0 for the next writer
    clock.now += 0.001                        # well within the interval
    sink.reconciled(1)
    assert _screen(out.getvalue()) == "round 1 · 1/10 XRs · 0.0 s [##..................]"


def test_done_blanks_the_line_for_good():
    sink, out, clock = _sink()
    sink.round_started(1, 10)
    sink.done()
    written = out.getvalue()
    clock.now += 1.0
    sink.reconciled(1)
    sink.round_started(2, 10)
    sink.phase("stopping functions")
    sink.done()
    assert out.getvalue() == written
    assert _screen(written) == ""


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_only_a_terminal_without_quiet_gets_a_line():
    assert for_stream(io.StringIO(), quiet=False) is NO_PROGRESS
    assert for_stream(Tty(), quiet=True) is NO_PROGRESS
    assert isinstance(for_stream(Tty(), quiet=False), Terminal)


# ----- the loop reports to its sink ------------------------------------------------------------
class Recorder:
    def __init__(self):
        self.rounds: list[int] = []
        self.counts: dict[int, int] = {}           # round -> XRs reconciled in it
        self.phases: list[str] = []

    def phase(self, what: str) -> None:
        self.phases.append(what)

    def round_started(self, n: int, total: int) -> None:
        self.rounds.append(n)
        self.counts[n] = 0

    def reconciled(self, k: int = 1, total: int | None = None) -> None:
        self.counts[self.rounds[-1]] += k

    def clear(self) -> None:
        pass

    def done(self) -> None:
        pass


def _fleet(directory: Path) -> Path:
    return fleets.write(directory, fleets.gpu_class("h100-8x"), fleets.existing_cluster("solo", [("gpu", "h100-8x", 1)]),
                        fleets.gateway(), fleets.deployment("chat"), fleets.service("chat", "chat"))


def test_the_loop_reports_each_round_and_every_xr_it_reconciles(tmp_path):
    rec = Recorder()
    with FunctionPool() as pool:
        _, outcome, _ = simulate(_fleet(tmp_path / "f"), pool=pool, progress=rec)
    assert outcome.converged, outcome.still_changing
    assert rec.phases == ["starting functions"]
    assert rec.rounds == list(range(1, outcome.rounds + 1))
    # Every render is a reconcile; an XR that cannot render yet (its inputs are missing) is one too.
    assert sum(rec.counts.values()) >= outcome.renders > 0
    assert rec.counts[1] >= 5            # the five XRs loaded all render in the first round


# ----- the command: stdout never changes, stderr only on a terminal ---------------------------
COMMAND = [sys.executable, "-m", "modelplane.cli", "simulate"]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Path:
    return _fleet(tmp_path_factory.mktemp("progress") / "fleet")


def _piped(argv: list[str]) -> subprocess.CompletedProcess:
    """Run with stdout and stderr both pipes (as under a script or CI)."""
    return subprocess.run([*COMMAND, *argv], check=False, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def piped(fleet) -> subprocess.CompletedProcess:
    return _piped([str(fleet)])


def _on_a_terminal(argv: list[str]) -> tuple[int, bytes, bytes]:
    """Run with stderr on a pseudo-terminal: exit code, stdout, everything the terminal got."""
    master, slave = pty.openpty()
    got: list[bytes] = []

    def drain() -> None:
        # Read as it comes: a terminal whose buffer fills blocks the writer.
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:          # EIO: every copy of the slave is closed
                return
            if not chunk:
                return
            got.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        proc = subprocess.Popen([*COMMAND, *argv], stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
        os.close(slave)
        out, _ = proc.communicate(timeout=120)
        reader.join(timeout=10)
    finally:
        os.close(master)
    return proc.returncode, out, b"".join(got)


def test_piped_stderr_stays_empty_and_quiet_changes_nothing(piped, fleet):
    quiet = _piped([str(fleet), "--quiet"])
    assert piped.returncode == 0, piped.stderr.decode()
    assert piped.stdout.startswith(b"# ") and b" XRs reconciled in " in piped.stdout
    assert piped.stderr == b""
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, piped.stdout, b"")


def test_a_terminal_shows_progress_and_stdout_is_byte_identical(piped, fleet):
    code, out, tty = _on_a_terminal([str(fleet)])
    assert code == 0
    assert out == piped.stdout
    text = tty.decode()
    assert "starting functions" in text
    assert "round 1 · " in text and " XRs · " in text and "[" in text
    assert "\n" not in text              # one line, rewritten in place ...
    assert _screen(text) == ""           # ... and blank at the end


def test_quiet_keeps_a_terminal_silent(piped, fleet):
    code, out, tty = _on_a_terminal([str(fleet), "-q"])
    assert (code, out, tty) == (0, piped.stdout, b"")
