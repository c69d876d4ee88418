"""A reader that goes away ends the command quietly, with status 141, as it ends POSIX tools.

``modelplane simulate DIR | head`` closes the pipe after ten lines. A C tool or
a Go program (``crossplane render`` among them: Go's runtime lets SIGPIPE kill
a program that writes to a broken stdout or stderr) dies of SIGPIPE there, and
the shell reports 128 + 13 = 141. Python ignores SIGPIPE, so the write raises
BrokenPipeError instead: through the commands' catch-alls it became an
``internal error`` line, elsewhere a traceback, and the final flush at exit
printed one more ``Exception ignored`` line.

Restoring SIGPIPE's default action would end the command the POSIX way, but
for every pipe and socket of the process: ``simulate`` talks to function
processes over pipes and gRPC, and a function that dies would then kill it
silently, without its error. So only stdout and stderr are watched:
:func:`guarded` wraps them while a command runs, a write or flush that finds
the reader gone raises :class:`PipeClosed`, and the command ends with status
:data:`EXIT_STATUS` and nothing printed. Its ``finally`` blocks still run (the
function processes stop).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TextIO

__all__ = ["EXIT_STATUS", "PipeClosed", "guarded"]

EXIT_STATUS = 128 + 13  # what a shell reports for a program killed by SIGPIPE, as `yes | head` leaves it


class PipeClosed(BaseException):
    """stdout's or stderr's reader has gone. A BaseException, so a command's catch-all
    ``except Exception`` (one line instead of a traceback) lets it through."""


class _Watched:
    """A text stream whose write and flush turn BrokenPipeError into PipeClosed; all else passes through."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise PipeClosed from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise PipeClosed from None

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def guarded(command: Callable[[], int]) -> int:
    """Run ``command`` with stdout and stderr watched; its exit status, or EXIT_STATUS if a reader went away."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Watched(out), _Watched(err)
    try:
        code = command()
        # Output to a pipe is block-buffered: most of it is written here, not at exit, where a
        # broken pipe could only be reported as "Exception ignored".
        sys.stdout.flush()
        sys.stderr.flush()
        return code
    except PipeClosed:
        _discard(out)
        _discard(err)
        return EXIT_STATUS
    finally:
        sys.stdout, sys.stderr = out, err


def _discard(stream: TextIO) -> None:
    """Flush what ``stream`` still holds; if its reader is gone, send the rest (and the flush at exit) nowhere."""
    try:
        stream.flush()
        return
    except BrokenPipeError:
        pass
    except (OSError, ValueError):
        return  # closed, or not a file: nothing will be flushed at exit either
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        return  # a stream without a descriptor (a test's capture) holds nothing the exit would flush
