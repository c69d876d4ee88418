"""A program run as a child process: its log, readiness, clean stop, and a retry when its port was taken.

Every program Modelplane starts goes through ``Process``: etcd and the API
servers, the lab's controllers, Crossplane, the registry, and the function
servers ``render`` and ``simulate`` start for themselves.

- Output goes to ``log``, appended (kept with the state folder, so a failed
  start can be read afterwards); with no ``log``, to an anonymous file that
  goes away with the process (``render``'s function servers leave nothing behind).
- By default each child gets its own session: a Ctrl-C in the terminal
  reaches the Python parent, which stops children in order, instead of killing
  etcd before the API server that writes to it. ``own_session=False`` keeps
  the child in the terminal's process group (a function server dies with the
  ``render`` that started it on Ctrl-C).
- ``stop`` is SIGTERM, then SIGKILL after the grace period.

``start_ready`` starts a server on ports it picks with ``net.free_port`` and
starts it again on new ports when it died because another program took one in
between (``port_taken``).
"""
from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

STOP_GRACE = 10.0
PORT_ATTEMPTS = 3
# What etcd, kube-apiserver and the Go controllers log when a port is taken ("listen tcp ...: bind: ...").
_PORT_TAKEN = "address already in use"


class ComponentError(RuntimeError):
    """A component failed to start or died; the message ends with its log's last lines."""


def port_taken(log_tail: str) -> bool:
    """Does this log end say the program could not bind its port?"""
    return _PORT_TAKEN in log_tail


class Process:
    """A started program. ``wait_ready(probe)`` polls ``probe`` until it returns True."""

    def __init__(self, name: str, argv: Sequence[str], log: Path | None = None,
                 env: Mapping[str, str] | None = None, *, own_session: bool = True,
                 grace: float = STOP_GRACE) -> None:
        self.name = name
        self.argv = [str(a) for a in argv]
        self.log = log
        self.grace = grace
        self._terminated = False  # SIGTERM sent (``terminate``); ``stop`` only waits then
        if log is None:
            out = self._anonymous = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process
        else:
            self._anonymous = None
            log.parent.mkdir(parents=True, exist_ok=True)
            out = open(log, "ab")  # noqa: SIM115 - the child holds its own copy; ours closes below
        try:
            self.proc = subprocess.Popen(
                self.argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env={**os.environ, **(env or {})}, start_new_session=own_session,
            )
        finally:
            if log is not None:
                out.close()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def output(self) -> str:
        """Everything it wrote so far ("" when the log cannot be read)."""
        try:
            if self._anonymous is not None:
                # pread: the child shares this file's offset, so seeking would move where it writes.
                fd = self._anonymous.fileno()
                return os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace")
            return self.log.read_text(errors="replace") if self.log else ""
        except (OSError, ValueError):  # ValueError: the anonymous log is closed (stopped)
            return ""

    def tail(self, lines: int = 25) -> str:
        """The last lines of the log."""
        return "\n".join(self.output().rstrip().splitlines()[-lines:])

    def failure(self, what: str) -> ComponentError:
        return ComponentError(f"{self.name} {what} (log: {self.log}):\n{self.tail()}")

    def wait_ready(self, probe: Callable[[], bool], timeout: float, interval: float = 0.1) -> float:
        """Poll ``probe`` every ``interval`` s until True; returns the seconds it took. Raises
        ComponentError when the process exits first or ``timeout`` passes."""
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
            time.sleep(interval)

    def terminate(self) -> None:
        """SIGTERM without waiting: stopping many processes, send every SIGTERM first and
        ``stop`` each afterwards, so their shutdowns overlap instead of adding up."""
        if self.alive() and not self._terminated:
            self.proc.send_signal(signal.SIGTERM)
            self._terminated = True

    def stop(self, grace: float | None = None) -> int | None:
        """SIGTERM (unless ``terminate`` sent it), then SIGKILL after ``grace`` seconds (default:
        the one it was started with); returns the exit code. An anonymous log is gone afterwards."""
        if self.alive():
            self.terminate()
            try:
                self.proc.wait(self.grace if grace is None else grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._anonymous is not None:
            self._anonymous.close()
        return self.proc.returncode

    def bind_failed(self) -> bool:
        """True when it died because a port was taken (a free port raced with someone else)."""
        return not self.alive() and port_taken(self.tail(60))


def start_ready(start: Callable[[], tuple[Process, Callable[[], bool]]], timeout: float,
                attempts: int = PORT_ATTEMPTS) -> tuple[Process, float]:
    """Start a server and wait until it is ready: ``start()`` picks its ports, starts it and
    returns it with its readiness probe. When it dies because a port was taken between the pick
    and its bind, ``start()`` runs again (new ports), ``attempts`` times in all; any other failure
    stops it and raises ComponentError. Returns the process and the seconds its ready wait took."""
    for attempt in range(attempts):
        process, probe = start()
        try:
            return process, process.wait_ready(probe, timeout)
        except ComponentError:
            if process.bind_failed() and attempt + 1 < attempts:
                continue
            process.stop()
            raise
    raise AssertionError("unreachable: the last attempt returns or raises")
