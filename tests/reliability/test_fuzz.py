"""Fuzz every function: hostile XRs, observed children and required inputs.

Each call must answer within a second, never as an "internal error" (that is
a bug in the function), and a FATAL must name the field to fix. Run
in-process for volume, then a smaller batch over real gRPC against
``modelplane serve`` (which must still be alive afterwards).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane import functions

from tests import support
from tests.reliability import fleet
from tests.reliability import strategies as S
from tests.reliability.common import SOAK, SOAK_EXAMPLES, names_field, require_function
from tests.reliability.procs import Server

# A hang guard, not a speed target: a call that takes this long is stuck (a
# pathological input looping). Speed lives in `make bench`; on a loaded 2-core
# machine a healthy call can take a couple of seconds.
HANG_GUARD_S = 30.0


@dataclass(frozen=True)
class Case:
    family: str          # which XR strategy
    examples: int        # hypothesis examples per function (quick mode)


QUICK = [Case("shaped", 100), Case("hostile", 100)]


def requirement_kinds(function: str) -> dict[str, str]:
    """name -> kind of every input ``function`` asks for on a healthy XR (through the loop)."""
    rsp = fleet.converge(support.run, function, fleet.baseline(function))
    return {name: sel["kind"] for name, sel in fleet.selectors(rsp.requirements).items()}


def check_response(function: str, rsp, elapsed: float, xr: dict) -> None:
    assert elapsed < HANG_GUARD_S, f"{function} hung for {elapsed:.2f}s"
    message = support.fatal(rsp)
    if message is None:
        return
    assert not message.startswith("internal error"), f"{function}: {message}\nXR: {str(xr)[:2000]}"
    assert names_field(message), f"{function}: FATAL does not name a field: {message}"


def fuzz(function: str, xr_strategy: st.SearchStrategy, examples: int) -> None:
    kinds = requirement_kinds(function)
    required = st.fixed_dictionaries({name: st.one_of(st.none(), S.required_items(kind))
                                      for name, kind in kinds.items()})

    @settings(settings.get_profile("reliability"), max_examples=examples)
    @given(xr=xr_strategy, observed=S.observed_children(), required=required)
    def one(xr, observed, required):
        req = support.request(xr, observed=observed,
                              required={k: v for k, v in required.items() if v is not None})
        start = time.perf_counter()
        rsp = support.run(function, req)
        check_response(function, rsp, time.perf_counter() - start, xr)

    one()


@pytest.mark.parametrize("case", QUICK, ids=lambda c: c.family)
@pytest.mark.parametrize("function", functions.ALL)
def test_fuzzed_inputs_never_crash_and_fatal_names_a_field(function, case):
    require_function(function)
    strategy = S.shaped(function) if case.family == "shaped" else S.hostile(function)
    fuzz(function, strategy, case.examples)


@pytest.mark.slow
@pytest.mark.parametrize("function", functions.ALL)
def test_soak_fuzz(function):
    require_function(function)
    n = SOAK_EXAMPLES if SOAK else 50
    fuzz(function, st.one_of(S.shaped(function), S.hostile(function)), n)


@pytest.mark.parametrize("function", functions.ALL)
def test_fuzz_over_grpc_keeps_the_server_alive(function):
    require_function(function)
    n = 200 if SOAK else 20
    with Server(function, "--insecure") as server:
        @settings(settings.get_profile("reliability"), max_examples=n)
        @given(xr=st.one_of(S.shaped(function), S.hostile(function)))
        def one(xr):
            start = time.perf_counter()
            rsp = support.call(server.address, support.request(xr), timeout=10)
            check_response(function, rsp, time.perf_counter() - start, xr)

        one()
        assert server.alive(), server.logs()[-2000:]
        # Still serving a healthy request after the storm.
        rsp = support.call(server.address, support.request(fleet.baseline(function)))
        assert not (support.fatal(rsp) or "").startswith("internal error")
