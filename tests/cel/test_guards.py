"""Guards: expressions that could stall the function are rejected, never crash it."""
import dataclasses
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
    Case("long operator chain", "1" + " + 1" * 2400 + " > 0", "more than 32 operators in a row"),
    Case("long negation chain", "!" * 3000 + "true", "more than 32 operators in a row"),
    Case("long comparison chain", " && ".join(['device.driver == "x"'] * 17), "more than 32 operators in a row"),
    Case("too many tokens", " && ".join(['device.attributes["x"].y'] * 12), "107 tokens > 100"),
    Case("big list literal", f"1 in {_list(33)}", "literal of more than 32 entries"),
    Case("long string literal", '"' + "a" * 513 + '" == device.driver', "string literal of 513 characters > 512"),
    Case("long raw string literal", "r'" + "a" * 600 + "' != ''", "string literal of 600 characters > 512"),
    Case("quadratic comprehension", f"{_list(20)}.all(a, {_list(20)}.all(b, a == b))", "exceeded 515 steps"),
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
    Case("32 operators in a row", " && ".join(["true"] * 33), ""),
    Case("chains restart in brackets", " && ".join(["(" + " && ".join(["true"] * 10) + ")"] * 4), ""),
    Case("32-entry literal", f"1 in {_list(32)}", ""),
    Case("indexing is not a literal", '{"a": [1, 2]}["a"][1] == 2', ""),
    Case("512-character string", '"' + "a" * 512 + '" != ""', ""),
    Case("escaped quotes stay inside the string", r""" "a\"b" + 'c\'d' != "" """, ""),
    Case("comments are not tokens", "true // " + "x " * 200, ""),
    Case("selector of 99 tokens", f"1 in {_list(32)} && 1 in {_list(14)}", ""),
]


@pytest.mark.parametrize("case", ACCEPTED, ids=lambda c: c.name)
def test_accepted(case: Case) -> None:
    assert cel.compile(case.expr).evaluate({}) is True


def test_guard_constants() -> None:
    assert guards.MAX_BYTES == 10 * 1024
    assert guards.MAX_DEPTH == 32
    dra = guards.LIMITS["dra"]
    assert (dra.tokens, dra.literal_entries, dra.string_chars, dra.chain) == (100, 32, 512, 32)
    assert (dra.steps, dra.token_steps, dra.cpu_ms) == (1000, 5, 20.0)


def test_check_returns_the_token_count() -> None:
    assert guards.check('device.attributes["gpu.nvidia.com"].architecture == "Hopper"') == 10


def test_parsing_is_charged_to_the_step_budget() -> None:
    # Parse and evaluation share one budget: a longer selector gets fewer evaluation steps.
    assert cel.compile("true").steps == 1000 - 5
    assert cel.compile(" && ".join(["true"] * 25)).steps == 1000 - 5 * 49


def test_kubernetes_rules_get_wider_limits() -> None:
    # Validation runs offline and upstream CRDs carry rules of ~370 tokens.
    rule = " && ".join(["(self.a != 'x')"] * 30)
    with pytest.raises(cel.CELRejected, match="tokens > 100"):
        cel.compile(rule)
    assert cel.compile(rule, library="kubernetes").evaluate({"self": {"a": "y"}}) is True
    group = "(" + " && ".join(["true"] * 10) + ")"
    with pytest.raises(cel.CELRejected, match=r"rule too complex: 2,\d{3} tokens > 2,048; split it into several rules"):
        cel.compile(" && ".join([group] * 100), library="kubernetes")


ADVERSARIAL = {
    "long space": "x" + " " * 10_000,
    "long comment run": "x" + "//" * 5_000,
    "backslashes in an unclosed string": "'x" + "\\" * 5_000,
    "unclosed strings on many lines": "\"'\n" * 3_000,
    "unclosed triple quote": "'''" + '"' * 10_000,
    "escaped triple quotes": '"""\\' * 2_500,
}


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_scanning_is_linear(text: str) -> None:
    # A backtracking scan took seconds on inputs like these; a linear one takes milliseconds.
    start = time.thread_time()  # CPU time: a loaded machine must not fail a linear scan
    try:
        guards.check(text[: guards.MAX_BYTES], guards.LIMITS["kubernetes"])
    except cel.CELRejected:
        pass
    assert time.thread_time() - start < 0.5


def test_match_reports_a_rejection_as_no_match_with_reason() -> None:
    got = cel.match("(" * 200 + "true" + ")" * 200, cel.Device("gpu", "gpu.nvidia.com"))
    assert got.matched is False
    assert got.error is not None and "deep" in got.error


def test_budget_stops_an_expensive_evaluation_quickly(monkeypatch: pytest.MonkeyPatch) -> None:
    # A generous margin (the target is 10 ms): the budget, not the data, bounds the work. CPU
    # time, not the wall clock, so a loaded machine cannot fail it; and the CPU deadline is moved
    # out of reach, so the step budget (what this test is about) is what stops it, however slow
    # the machine (test_cpu_deadline_rejects_and_is_transient covers the deadline).
    monkeypatch.setitem(guards.LIMITS, "dra", dataclasses.replace(guards.LIMITS["dra"], cpu_ms=60_000.0))
    expr = f"{_list(15)}.all(a, {_list(15)}.exists(b, a != b) && [a, a].map(c, c * 2).size() > 0)"
    start = time.thread_time()
    with pytest.raises(cel.CELRejected, match="selector too expensive: evaluation exceeded"):
        cel.compile(expr).evaluate({})
    assert time.thread_time() - start < 1


def test_cpu_deadline_rejects_and_is_transient(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(guards.LIMITS, "dra", dataclasses.replace(guards.LIMITS["dra"], cpu_ms=0))
    with pytest.raises(cel.CELRejected, match="more than 0 ms of CPU") as err:
        cel.compile(f"{_list(10)}.all(a, a == 1)").evaluate({})
    assert err.value.transient


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


def test_garbage_collection_is_not_charged_to_a_selector() -> None:
    import gc

    from modelplane.cel import adapter

    junk = [[i] for i in range(200_000)]  # something for the collector to walk
    with adapter._collections_timed:          # as while an evaluation runs
        cpu, charged = time.thread_time(), adapter._cpu()
        gc.collect()
        assert adapter._cpu() - charged < time.thread_time() - cpu
    del junk


def test_collections_are_timed_only_while_an_evaluation_runs() -> None:
    # A gc callback slows every allocation-heavy caller; code that evaluates nothing must not pay for it.
    import gc

    from modelplane.cel import adapter

    seen: list[bool] = []
    timed = adapter._time_collections

    def probe(activation_value: object) -> bool:
        seen.append(timed in gc.callbacks)
        return True

    assert timed not in gc.callbacks
    with adapter._collections_timed:
        with adapter._collections_timed:      # a second evaluation (another thread) at once
            assert gc.callbacks.count(timed) == 1
        assert timed in gc.callbacks           # the first still runs
    assert timed not in gc.callbacks
    assert cel.compile("1 + 1 == 2").evaluate({}) is True and timed not in gc.callbacks
    orig = adapter._Metered.evaluate
    try:
        adapter._Metered.evaluate = lambda self, context: probe(context) and orig(self, context)
        assert cel.compile("2 > 1").evaluate({}) is True
    finally:
        adapter._Metered.evaluate = orig
    assert seen == [True] and timed not in gc.callbacks


def test_device_selectors_get_no_regular_expressions():
    # The DRA selector surface has no regex (seed 001), and a backtracking
    # pattern would run inside one evaluation step, beyond every budget.
    for expr in ('device.driver.matches("^(a+)+$")', 'matches(device.driver, "gpu")'):
        with pytest.raises(cel.CELRejected, match=r"matches\(\) is not available in selectors"):
            cel.compile(expr)
    assert cel.compile('"gpu.nvidia.com".matches("^gpu")', library="kubernetes").evaluate({}) is True
