"""Fuzz every function: hostile XRs, observed children and required inputs.

Each call must answer (``fuzzing.HANG_GUARD_S``), never as an "internal
error" (that is a bug in the function), and a FATAL must name the field to
fix. Run in-process, then a smaller batch over real gRPC against
``modelplane serve`` (which must still be alive afterwards). These are the
quick sizes; ``make soak`` runs the same cases 10,000 per function
(``tests/reliability/soak.py``).
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
from tests.reliability.common import SOAK, require_function
from tests.reliability.fuzzing import check_response, requirement_kinds
from tests.reliability.procs import Server


@dataclass(frozen=True)
class Case:
    family: str          # which XR strategy
    examples: int        # hypothesis examples per function (quick mode)


QUICK = [Case("shaped", 100), Case("hostile", 100)]


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
