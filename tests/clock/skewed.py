"""A wrong wall clock for the test suite: ``MODELPLANE_TEST_CLOCK`` installs one in
``modelplane.clock`` (``tests/conftest.py`` reads it when pytest starts).

A test whose verdict hangs on the wall clock (a TTL computed from it, two readings
that must land in one second, a timestamp built from the real date) passes on a
quiet machine and fails on a busy one. Under a wrong clock it fails every time:

- ``skew:+86400`` moves every reading by that many seconds (signed).
- ``slow:30`` makes each reading 30 s later than the one before, on top of the
  real clock: a machine so slow that every step takes half a minute.
- ``skew:-3600,slow:5``: both.

A function given ``modelplane.ai/now`` in its pipeline context never reads the
clock, so only what leaves it out is under test here.
"""
from __future__ import annotations

import contextlib
import datetime
import itertools
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from modelplane import clock

ENV = "MODELPLANE_TEST_CLOCK"
EXAMPLE = "skew:+86400,slow:30"


@dataclass(frozen=True)
class Spec:
    skew: float = 0.0    # seconds added to every reading
    slow: float = 0.0    # seconds added per reading made before it

    def __str__(self) -> str:
        return f"skew:{self.skew:+g},slow:{self.slow:g}"


SPEC = pytest.StashKey[Spec | None]()


def parse(text: str) -> Spec:
    """``skew:S``, ``slow:S`` or both, comma-separated; an error names the variable and a valid value."""
    fields: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition(":")
        try:
            seconds = float(value)
        except ValueError:
            seconds = None
        if not sep or key not in ("skew", "slow") or seconds is None or key in fields:
            raise ValueError(f"{ENV}={text!r}: {part!r} is not skew:<seconds> or slow:<seconds> "
                             f"(each once), e.g. {EXAMPLE}")
        if key == "slow" and seconds < 0:
            raise ValueError(f"{ENV}={text!r}: slow must be 0 or more seconds per reading, e.g. slow:30")
        fields[key] = seconds
    if not fields:
        raise ValueError(f"{ENV}={text!r}: empty; set it to e.g. {EXAMPLE}, or unset it")
    return Spec(**fields)


class Skewed:
    """A clock source: ``real`` moved by ``spec``. Thread-safe: function servers read the
    clock from worker threads."""

    def __init__(self, spec: Spec, real: clock.Source = clock.system):
        self.spec = spec
        self._real = real
        self._count = itertools.count()
        self._lock = threading.Lock()

    def __call__(self) -> datetime.datetime:
        with self._lock:
            n = next(self._count)
        return self._real() + datetime.timedelta(seconds=self.spec.skew + n * self.spec.slow)


def install_from_env() -> Spec | None:
    """Install the clock ``MODELPLANE_TEST_CLOCK`` asks for (None, and nothing done, when unset)."""
    text = os.environ.get(ENV, "")
    if not text:
        return None
    spec = parse(text)
    clock.use(Skewed(spec))
    return spec


@contextlib.contextmanager
def using(source: clock.Source) -> Iterator[None]:
    """``modelplane.clock`` reads ``source`` inside the block (a test that is about the clock)."""
    previous = clock.use(source)
    try:
        yield
    finally:
        clock.use(previous)


def at(text: str) -> clock.Source:
    """A stopped clock showing the RFC 3339 time ``text``."""
    t = datetime.datetime.fromisoformat(text)
    return lambda: t
