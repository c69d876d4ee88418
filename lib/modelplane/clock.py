"""The wall clock, read in one place.

Time enters Modelplane's decisions one way: a function asks its
``Composition.now()``, which is the pipeline context's ``modelplane.ai/now``
when a simulator set it, and else this module's ``now()``. Every other reading
of the date (a condition's ``lastTransitionTime`` in the lab, a mock engine's
``created``) comes from here too, so there is one seam to replace.

Invariants:

- ``now()`` is aware and in UTC.
- Nothing else in ``lib`` reads the date (``datetime.now``, ``time.time``);
  durations and deadlines read ``time.monotonic`` and are not the date. The one
  exception is a certificate's validity (``kube.pki``): OpenSSL checks it
  against the operating system's clock, so it must be made from that one.
- ``use`` swaps the source and returns the previous one: the test suite runs
  the function suites under a skewed and a slowed clock with it
  (``MODELPLANE_TEST_CLOCK``, docs/develop.md), so that a decision which reads
  the wall clock where it should not shows up as a failing test, not as a
  flaky one.
"""
from __future__ import annotations

import datetime
from collections.abc import Callable

Source = Callable[[], datetime.datetime]

# How a timestamp is written in Kubernetes objects (RFC 3339, seconds, UTC).
STAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def system() -> datetime.datetime:
    """The operating system's clock, in UTC."""
    return datetime.datetime.now(datetime.UTC)


_source: Source = system


def now() -> datetime.datetime:
    """The current time (aware, UTC) from the installed source."""
    return _source()


def stamp(t: datetime.datetime | None = None) -> str:
    """``t`` (default: ``now()``) as Kubernetes writes a timestamp: 2026-01-01T00:00:00Z."""
    return (t or now()).astimezone(datetime.UTC).strftime(STAMP_FORMAT)


def use(source: Source) -> Source:
    """Install ``source`` as the clock; returns the one it replaces, to put back."""
    global _source
    previous, _source = _source, source
    return previous
