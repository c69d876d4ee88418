"""The suites that make time-based decisions pass under a wrong wall clock (``MODELPLANE_TEST_CLOCK``).

A verdict that depends on the wall clock fails here every time, instead of once in a while
on a busy machine. ``make test`` runs the time-deciding suites twice in a subprocess: the
clock a day ahead, then a clock that moves 30 s at every reading (each call, each reading
within a call, lands on another second).
"""
from __future__ import annotations

import datetime
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest
from modelplane import clock, paths

from tests.clock import skewed

# The suites where time decides something: failover and drain (deployment, the function's
# rollout and eviction tests, the function's own tests), the TTL and the answers the server
# may give again (pipeline/test_server.py); this file's session test proves the clock was set.
SUITES = (
    "tests/clock/test_skewed_clock.py::test_the_session_clock_is_the_one_the_environment_asks_for",
    "tests/deployment",
    "tests/functions/test_model_deployment.py",
    "tests/functions/test_model_deployment_rollout.py",
    "tests/functions/test_model_deployment_eviction.py",
    "tests/pipeline/test_server.py",
)


@dataclass(frozen=True)
class Parsed:
    name: str
    text: str
    want: skewed.Spec | str     # a Spec, or a phrase the error must contain


PARSED = [
    Parsed("a day ahead", "skew:+86400", skewed.Spec(skew=86400)),
    Parsed("an hour behind", "skew:-3600", skewed.Spec(skew=-3600)),
    Parsed("slow only", "slow:30", skewed.Spec(slow=30)),
    Parsed("both, spaces allowed", " skew:10 , slow:0.5 ", skewed.Spec(skew=10, slow=0.5)),
    Parsed("an unknown key", "fast:3", "'fast:3' is not skew:<seconds> or slow:<seconds>"),
    Parsed("no number", "skew:soon", "'skew:soon' is not"),
    Parsed("a key twice", "skew:1,skew:2", "(each once)"),
    Parsed("a clock going backwards", "slow:-1", "slow must be 0 or more"),
    Parsed("nothing", ",", "empty"),
]


@pytest.mark.parametrize("case", PARSED, ids=lambda c: c.name)
def test_parse(case: Parsed):
    if isinstance(case.want, skewed.Spec):
        assert skewed.parse(case.text) == case.want
        return
    with pytest.raises(ValueError) as err:
        skewed.parse(case.text)
    assert skewed.ENV in str(err.value) and case.want in str(err.value)


T = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def test_a_skewed_clock_moves_every_reading_by_the_skew():
    source = skewed.Skewed(skewed.Spec(skew=-90), real=lambda: T)
    assert [source(), source()] == [T - datetime.timedelta(seconds=90)] * 2


def test_a_slow_clock_moves_each_reading_past_the_one_before():
    source = skewed.Skewed(skewed.Spec(skew=5, slow=30), real=lambda: T)
    assert [(source() - T).total_seconds() for _ in range(3)] == [5, 35, 65]


def test_the_session_clock_is_the_one_the_environment_asks_for():
    # Run in every session: without MODELPLANE_TEST_CLOCK the clock is the system's; with it,
    # the subprocesses below prove the conftest installed it.
    # The margins (a minute) are for a machine that stalls between two readings, not the verdict.
    text = os.environ.get(skewed.ENV, "")
    spec = skewed.parse(text) if text else skewed.Spec()
    first, second = clock.now(), clock.now()
    assert (second - first).total_seconds() >= spec.slow - 1
    ahead = (first - clock.system()).total_seconds()
    assert ahead >= spec.skew - 60
    if not spec.slow:
        assert ahead <= spec.skew + 60


@dataclass(frozen=True)
class Wrong:
    name: str
    env: str


WRONG = [Wrong("a day ahead", "skew:+86400"), Wrong("30 s per reading", "slow:30")]


@pytest.mark.parametrize("case", WRONG, ids=lambda c: c.name)
def test_the_time_deciding_suites_pass_under_a_wrong_clock(case: Wrong):
    env = {**os.environ, skewed.ENV: case.env}
    argv = [sys.executable, "-m", "pytest", "-p", "no:xdist", "-m", "not slow and not docs",
            *SUITES]
    # The timeout only keeps a hung run from hanging make test; it is not the verdict.
    done = subprocess.run(argv, cwd=paths.ROOT, env=env, capture_output=True, text=True, timeout=900, check=False)
    tail = "\n".join((done.stdout + done.stderr).splitlines()[-30:])
    assert done.returncode == 0, f"{skewed.ENV}={case.env}: a verdict depends on the wall clock:\n{tail}"
    assert " passed" in done.stdout and " failed" not in done.stdout, tail
