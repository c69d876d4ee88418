"""``modelplane serve`` subprocesses for reliability tests, with their logs kept.

Unlike tests.support.serve_process this writes the server's output to files
(a pipe nobody reads fills up under load and stalls the server) and exposes
the process, so tests can signal it and read what it logged.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Self

from tests import support


class Server:
    """One ``modelplane serve FUNCTION`` process on a free local port."""

    def __init__(self, function: str, *extra: str, env: Mapping[str, str] | None = None):
        self._dir = Path(tempfile.mkdtemp(prefix="modelplane-rel-"))
        self._out = open(self._dir / "stdout", "w")  # noqa: SIM115 - lives as long as the process
        self._err = open(self._dir / "stderr", "w")  # noqa: SIM115 - closed in stop()
        # Port 0 and --address-file: the port this server got, never one another server took first.
        address_file = self._dir / "address"
        cmd = [sys.executable, "-m", "modelplane.cli", "serve", function, "--address", "127.0.0.1:0",
               "--address-file", str(address_file), *extra]
        self.proc = subprocess.Popen(cmd, env={**os.environ, **(env or {})}, stdout=self._out, stderr=self._err,
                                     cwd=support.ROOT)
        try:
            self.address = support.wait_for_address(self.proc, address_file, 60)
        except RuntimeError as err:
            raise RuntimeError(f"{err}: {self.logs()}") from None
        self.port = int(self.address.rpartition(":")[2])

    def alive(self) -> bool:
        return self.proc.poll() is None

    def logs(self) -> str:
        self._out.flush()
        self._err.flush()
        return (self._dir / "stdout").read_text() + (self._dir / "stderr").read_text()

    def sigterm(self) -> None:
        self.proc.send_signal(signal.SIGTERM)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._out.close()
        self._err.close()
        return self.proc.returncode

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
