"""What one fuzz case is and how it is judged: shared by the pytest fuzz tests and ``make soak``.

A case is an XR of the function's kind (shaped or hostile), observed children
and the inputs the function requires on a healthy XR, each either absent or
a list of schema-shaped items. A response is a problem when the call took
longer than the hang guard, answered FATAL "internal error" (a bug in the
function), or answered a FATAL that names no field.
"""
from __future__ import annotations

import functools

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from hypothesis import strategies as st

from tests import support
from tests.reliability import fleet
from tests.reliability import strategies as S
from tests.reliability.common import names_field

# A hang guard, not a speed target: a call that takes this long is stuck (a
# pathological input looping). Speed lives in `make bench`; on a loaded 2-core
# machine a healthy call can take a couple of seconds.
HANG_GUARD_S = 30.0


@functools.cache
def requirement_kinds(function: str) -> dict[str, str]:
    """name -> kind of every input ``function`` asks for on a healthy XR (through the loop)."""
    rsp = fleet.converge(support.run, function, fleet.baseline(function))
    return {name: sel["kind"] for name, sel in fleet.selectors(rsp.requirements).items()}


def cases(function: str) -> st.SearchStrategy:
    """(xr, observed, required) for ``function``: shaped or hostile XRs, random children and inputs."""
    required = st.fixed_dictionaries({name: st.one_of(st.none(), S.required_items(kind))
                                      for name, kind in requirement_kinds(function).items()})
    return st.tuples(st.one_of(S.shaped(function), S.hostile(function)), S.observed_children(), required)


def request(xr: dict, observed: dict, required: dict) -> fnv1.RunFunctionRequest:
    return support.request(xr, observed=observed, required={k: v for k, v in required.items() if v is not None})


def problem(function: str, rsp: fnv1.RunFunctionResponse, elapsed: float) -> str | None:
    """Why ``rsp`` shows a bug (one line), or None when it is a fine answer."""
    if elapsed >= HANG_GUARD_S:
        return f"{function} hung for {elapsed:.2f}s"
    message = support.fatal(rsp)
    if message is None:
        return None
    if message.startswith("internal error"):
        return f"{function}: {message}"
    if not names_field(message):
        return f"{function}: FATAL does not name a field: {message}"
    return None


def check_response(function: str, rsp: fnv1.RunFunctionResponse, elapsed: float, xr: dict) -> None:
    """``problem`` as an assertion, with the XR that caused it (shortened)."""
    found = problem(function, rsp, elapsed)
    assert found is None, f"{found}\nXR: {str(xr)[:2000]}"
