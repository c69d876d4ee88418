"""Session-wide set-up, kept to what must happen before any test runs (shared helpers
live in fixture modules, never here: tests/architecture/test_tests.py)."""
from __future__ import annotations

import pytest

from tests.clock import skewed


def pytest_configure(config):
    # Opt-in: MODELPLANE_TEST_CLOCK=skew:+86400 (or slow:30) runs every test under a wrong
    # wall clock, so a verdict that hangs on the clock fails every time (docs/develop.md).
    # Each xdist worker runs this too: the clock is wrong wherever tests run.
    try:
        config.stash[skewed.SPEC] = skewed.install_from_env()
    except ValueError as err:
        raise pytest.UsageError(str(err)) from None


def pytest_report_header(config):
    spec = config.stash.get(skewed.SPEC, None)
    return [f"{skewed.ENV}: modelplane.clock is {spec}"] if spec else []
