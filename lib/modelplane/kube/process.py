"""One upstream program run as a child process: its log file, readiness, clean stop.

Output goes to ``<log>`` (kept with the state folder, so a failed start can be
read afterwards). Each child gets its own session: a Ctrl-C in the terminal
reaches the Python parent, which stops children in order, instead of killing
etcd before the API server that writes to it.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

STOP_GRACE = 10.0


class ComponentError(RuntimeError):
    """A component failed to start or died; the message ends with its log's last lines."""


class Process:
    """A started program. ``wait_ready(probe)`` polls ``probe`` until it returns True."""

    def __init__(self, name: str, argv: Sequence[str], log: Path, env: Mapping[str, str] | None = None) -> None:
        self.name = name
        self.argv = [str(a) for a in argv]
        self.log = log
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(
                self.argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env={**os.environ, **(env or {})}, start_new_session=True,
            )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, lines: int = 25) -> str:
        """The last lines of the log."""
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.rstrip().splitlines()[-lines:])

    def failure(self, what: str) -> ComponentError:
        return ComponentError(f"{self.name} {what} (log: {self.log}):\n{self.tail()}")

    def wait_ready(self, probe: Callable[[], bool], timeout: float) -> float:
        """Poll ``probe`` until True; returns the seconds it took. Raises ComponentError
        when the process exits first or ``timeout`` passes."""
        start = time.monotonic()
        while True:
            if not self.alive():
                raise self.failure(f"exited with code {self.proc.returncode} before it was ready")
            try:
                if probe():
                    return time.monotonic() - start
            except OSError:
                pass  # not listening yet
            if time.monotonic() - start > timeout:
                raise self.failure(f"was not ready within {timeout:.0f} s")
            time.sleep(0.1)

    def stop(self, grace: float = STOP_GRACE) -> int | None:
        """SIGTERM, then SIGKILL after ``grace`` seconds; returns the exit code."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def bind_failed(self) -> bool:
        """True when it died because a port was taken (a free port raced with someone else)."""
        return not self.alive() and "address already in use" in self.tail(60)
