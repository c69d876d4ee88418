"""Progress of a long simulation, told on one terminal line.

The reconcile loop reports to a *sink*: a round began (its number and the XRs
the world holds), XRs were reconciled, a phase with no count began (functions
starting or stopping), the line is no longer wanted. ``NO_PROGRESS`` ignores
all of it and is every caller's default, so library callers, tests and piped
output never see a byte of it.

``Terminal`` draws ``round 3 · 412/1,208 XRs · 12.4 s [######..............]``
by rewriting one line with a carriage return, at most every ``interval``
seconds (a round's start and a phase always draw: they are rare and say the
most). The count is the XRs reconciled in this round, of the XRs in the world:
one XR may render twice in a round (InferenceClusters render between
ModelDeployment waves) and a round may create XRs, so the count is capped at
the total. The line is cut to the terminal's width, since a wrapped line can no
longer be rewritten in place, and ``clear`` blanks it before anyone else writes
to the terminal (the timeline's lines on stdout, the final messages on stderr).
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Protocol, TextIO

BAR = 20
INTERVAL = 0.1          # seconds between two redraws: ten a second reads as live and costs nothing
WIDTH = 80              # columns when the stream cannot say (not a terminal after all)


class Progress(Protocol):
    """What the reconcile loop reports; every method returns quickly and never raises."""

    def phase(self, what: str) -> None:
        """Something with no count began (``starting functions``)."""

    def round_started(self, n: int, total: int) -> None:
        """Round ``n`` began, with ``total`` XRs in the world."""

    def reconciled(self, k: int = 1, total: int | None = None) -> None:
        """``k`` more XRs were reconciled this round; ``total`` is the world's XRs now, when it grew."""

    def clear(self) -> None:
        """Blank the line so others can write; the next report draws it again."""

    def done(self) -> None:
        """The run is over: blank the line for good."""


class NoProgress:
    """The default sink: says nothing."""

    def phase(self, what: str) -> None:
        pass

    def round_started(self, n: int, total: int) -> None:
        pass

    def reconciled(self, k: int = 1, total: int | None = None) -> None:
        pass

    def clear(self) -> None:
        pass

    def done(self) -> None:
        pass


NO_PROGRESS = NoProgress()


def line(round_no: int, done: int, total: int, elapsed: float, bar: int = BAR) -> str:
    """``round 3 · 412/1,208 XRs · 12.4 s [#######.............]``; ``done`` is capped at ``total``."""
    done = min(done, total)
    filled = bar * done // total if total > 0 else 0
    return (f"round {round_no} · {done:,}/{total:,} XRs · {elapsed:.1f} s "
            f"[{'#' * filled}{'.' * (bar - filled)}]")


def phase_line(what: str, elapsed: float) -> str:
    """``starting functions · 0.3 s``."""
    return f"{what} · {elapsed:.1f} s"


class Terminal:
    """A sink that rewrites one line of ``stream`` (a terminal: the caller checked ``isatty``)."""

    def __init__(self, stream: TextIO, *, clock: Callable[[], float] = time.monotonic,
                 interval: float = INTERVAL, width: int | None = None):
        self.stream = stream
        self.clock = clock
        self.interval = interval
        self.width = width if width is not None else _columns(stream)
        self.start = clock()
        self._drawn = 0                 # characters of the line on screen now (0: blank)
        self._last = float("-inf")      # clock at the last draw
        self._what: str | None = None   # the phase shown, when no round is
        self._round = 0
        self._done = 0
        self._total = 0
        self._over = False

    def phase(self, what: str) -> None:
        self._what = what
        self._draw(force=True)

    def round_started(self, n: int, total: int) -> None:
        self._what = None
        self._round, self._done, self._total = n, 0, total
        self._draw(force=True)

    def reconciled(self, k: int = 1, total: int | None = None) -> None:
        self._done += k
        if total is not None:
            self._total = total
        self._draw(force=False)

    def clear(self) -> None:
        if self._drawn:
            # Spaces rather than an ANSI erase: any terminal understands them.
            self.stream.write("\r" + " " * self._drawn + "\r")
            self.stream.flush()
            self._drawn = 0
        # The next report draws at once: the line just vanished.
        self._last = float("-inf")

    def done(self) -> None:
        self.clear()
        self._over = True

    def _draw(self, force: bool) -> None:
        if self._over:
            return
        now = self.clock()
        if not force and now - self._last < self.interval:
            return
        elapsed = now - self.start
        if self._what is not None:
            text = phase_line(self._what, elapsed)
        else:
            text = line(self._round, self._done, self._total, elapsed)
        # One column short of the width: a line that fills it wraps on some terminals.
        text = text[: max(1, self.width - 1)]
        pad = " " * max(0, self._drawn - len(text))
        self.stream.write("\r" + text + pad)
        self.stream.flush()
        self._drawn = len(text)
        self._last = now


def _columns(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns or WIDTH
    except (AttributeError, OSError, ValueError):
        return WIDTH


def for_stream(stream: TextIO, quiet: bool) -> Progress:
    """A ``Terminal`` on ``stream`` when it is a terminal and not ``quiet``, else ``NO_PROGRESS``."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # a closed or fake stream is not a terminal
        tty = False
    return Terminal(stream) if tty and not quiet else NO_PROGRESS


__all__ = ["NO_PROGRESS", "NoProgress", "Progress", "Terminal", "for_stream", "line", "phase_line"]
