"""A command whose reader goes away (``modelplane simulate DIR | head``) ends quietly with status 141.

The subprocess cases give the command a pipe whose read end is closed before it
starts, so its first write finds no reader whatever the machine's speed: the
verdict does not depend on when ``head`` would have exited.
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from modelplane import paths
from modelplane.cli import pipe

EXAMPLES = paths.ROOT / "examples"


@dataclass
class Case:
    name: str
    argv: list[str]
    closed: str = "stdout"            # which stream has no reader
    files: dict[str, Path] = field(default_factory=dict)  # name in the temp folder -> copied from


CASES = [
    Case("help, printed by the dispatcher", ["--help"]),
    Case("validate: the write fails inside its catch-all", ["validate", "--no-upstream", str(EXAMPLES / "ml-team")]),
    Case("an error line to a stderr with no reader", ["validate", "no-such-file.yaml"], closed="stderr"),
    Case("simulate --show timeline: a round's line fails while functions run",
         ["simulate", "{tmp}", "--show", "timeline", "-q"],
         files={"classes.yaml": EXAMPLES / "fleet" / "inference-classes.yaml"}),
]


def _closed_pipe() -> int:
    """The write end of a pipe whose read end is already closed."""
    read, write = os.pipe()
    os.close(read)
    return write


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_closed_reader_ends_the_command_quietly(tmp_path, case):
    for name, source in case.files.items():
        (tmp_path / name).write_bytes(source.read_bytes())
    argv = [a.replace("{tmp}", str(tmp_path)) for a in case.argv]
    write = _closed_pipe()
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, case.closed: write}
    try:
        done = subprocess.run([sys.executable, "-m", "modelplane.cli", *argv], check=False, cwd=tmp_path,
                              text=True, timeout=600, **streams)
    finally:
        os.close(write)
    other = done.stderr if case.closed == "stdout" else done.stdout
    assert (done.returncode, other) == (pipe.EXIT_STATUS, ""), f"-want (141, '')\n+got  ({done.returncode}, {other!r})"


class _Gone(io.StringIO):
    """A stream whose reader has gone: every write and flush fails as a closed pipe's does."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_catch_all_in_the_command_does_not_swallow_it(monkeypatch):
    monkeypatch.setattr(sys, "stdout", _Gone())
    caught = []

    def command() -> int:
        try:
            print("a line")
        except Exception as err:  # noqa: BLE001 - what render, simulate and validate do
            caught.append(err)
        return 0

    assert pipe.guarded(command) == pipe.EXIT_STATUS
    assert caught == []


def test_streams_are_restored_and_status_kept_when_nothing_breaks(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    assert pipe.guarded(lambda: print("fine") or 3) == 3
    assert sys.stdout is out
    assert out.getvalue() == "fine\n"
