"""Guards: expressions that could stall the function are rejected, never crash it."""
import threading
import time
from dataclasses import dataclass

import pytest
from modelplane import cel
from modelplane.cel import guards


@dataclass(frozen=True)
class Case:
    name: str
    expr: str
    want: str  # a phrase of the CELRejected message


def _list(n: int) -> str:
    return "[" + ",".join(["1"] * n) + "]"


REJECTED = [
    Case("10 KiB + 1", "true" + " " * (10 * 1024 - 4 + 1), "more than the limit of 10240"),
    Case("200 nested parens", "(" * 200 + "true" + ")" * 200, "more than 32 deep"),
    Case("nested lists", "[" * 40 + "]" * 40 + " == []", "more than 32 deep"),
    Case("comprehension bomb", "[1,2].all(a, [1,2].all(b, [1,2].all(c, true)))", "nested more than 2 deep"),
    Case("too many comprehensions", " && ".join(["[1].all(x, true)"] * 9), "more than 8 comprehensions"),
    Case("reduce is not Kubernetes CEL", "[1].reduce(a, b, 0, a + b) == 1", "reduce() is not available"),
    Case("long operator chain", "1" + " + 1" * 2400 + " > 0", "too deeply"),
    Case("long negation chain", "!" * 3000 + "true", "too deeply"),
    Case("quadratic comprehension", f"{_list(1500)}.all(a, {_list(1500)}.all(b, a == b))", "exceeded"),
]


@pytest.mark.parametrize("case", REJECTED, ids=lambda c: c.name)
def test_rejected(case: Case) -> None:
    with pytest.raises(cel.CELRejected) as err:
        cel.compile(case.expr).evaluate({})
    assert case.want in str(err.value)
    assert len(str(err.value)) <= 240


ACCEPTED = [
    Case("exactly 10 KiB", "true" + " " * (10 * 1024 - 4), ""),
    Case("32 nested parens", "(" * 32 + "true" + ")" * 32, ""),
    Case("brackets inside strings do not count", '"' + "(" * 100 + '" != ""', ""),
    Case("macro names inside strings do not count", '"x.all(" + \'.exists(\' + """.map(""" != ""', ""),
    Case("two nested comprehensions", "[1,2].all(a, [1,2].exists(b, a == b))", ""),
    Case("eight comprehensions", " && ".join(["[1].all(x, true)"] * 8), ""),
]


@pytest.mark.parametrize("case", ACCEPTED, ids=lambda c: c.name)
def test_accepted(case: Case) -> None:
    assert cel.compile(case.expr).evaluate({}) is True


def test_guard_constants() -> None:
    assert guards.MAX_BYTES == 10 * 1024
    assert guards.MAX_DEPTH == 32


def test_match_reports_a_rejection_as_no_match_with_reason() -> None:
    got = cel.match("(" * 200 + "true" + ")" * 200, cel.Device("gpu", "gpu.nvidia.com"))
    assert got.matched is False
    assert got.error is not None and "deep" in got.error


def test_budget_stops_an_expensive_evaluation_quickly() -> None:
    # A guard test with a generous margin: the step budget, not the data size, bounds the time.
    expr = f"{_list(4000)}.all(a, {_list(4000)}.exists(b, a != b))"
    start = time.monotonic()
    with pytest.raises(cel.CELRejected):
        cel.compile(expr).evaluate({})
    assert time.monotonic() - start < 20


def test_concurrent_compile_and_evaluate() -> None:
    exprs = [f'device.driver == "d{i}"' for i in range(20)]
    device = cel.Device("gpu", "d7")
    results: dict[str, list[bool]] = {}
    errors: list[BaseException] = []

    def work(name: str) -> None:
        try:
            results[name] = [cel.compile(e).evaluate(device.activation()) for e in exprs]
        except BaseException as err:  # noqa: BLE001 - the test reports any failure from a thread
            errors.append(err)

    threads = [threading.Thread(target=work, args=(f"t{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    want = [i == 7 for i in range(20)]
    assert all(r == want for r in results.values()) and len(results) == 8
