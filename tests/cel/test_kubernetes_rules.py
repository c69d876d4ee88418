"""The "kubernetes" library (x-kubernetes-validations rules) and evaluate_rule()."""
from dataclasses import dataclass

import pytest
from modelplane import cel


@dataclass(frozen=True)
class Case:
    name: str
    expr: str
    want: object


ROWS = [
    Case("lowerAscii", '"GPU-Ä".lowerAscii()', "gpu-Ä"),
    Case("upperAscii", '"gpu-ä".upperAscii()', "GPU-ä"),
    Case("split", '"a,b,c".split(",")', ["a", "b", "c"]),
    Case("split with limit", '"a,b,c".split(",", 2)', ["a", "b,c"]),
    Case("split limit zero", '"a,b".split(",", 0)', []),
    Case("join", '["a", "b"].join("-")', "a-b"),
    Case("join without separator", '["a", "b"].join()', "ab"),
    Case("indexOf string", '"hello".indexOf("l")', 2),
    Case("indexOf with offset", '"hello".indexOf("l", 3)', 3),
    Case("indexOf absent", '"hello".indexOf("z")', -1),
    Case("lastIndexOf string", '"hello".lastIndexOf("l")', 3),
    Case("lastIndexOf with offset", '"hello".lastIndexOf("l", 2)', 2),
    Case("replace", '"a-b-c".replace("-", "_")', "a_b_c"),
    Case("replace n", '"a-b-c".replace("-", "_", 1)', "a_b-c"),
    Case("substring", '"modelplane".substring(5)', "plane"),
    Case("substring range", '"modelplane".substring(0, 5)', "model"),
    Case("trim", '"  x \\t".trim()', "x"),
    Case("charAt", '"abc".charAt(1)', "b"),
    Case("startsWith", '"gpu.nvidia.com".startsWith("gpu.")', True),
    Case("endsWith", '"gpu.nvidia.com".endsWith(".com")', True),
    Case("contains", '"gpu.nvidia.com".contains("nvidia")', True),
    Case("matches", '"qwen3-8b".matches("^[a-z0-9-]+$")', True),
    Case("matches false", '"Qwen".matches("^[a-z]+$")', False),
    Case("isSorted true", "[1, 2, 2, 5].isSorted()", True),
    Case("isSorted false", '["b", "a"].isSorted()', False),
    Case("sum", "[1, 2, 3].sum()", 6),
    Case("sum empty", "[].sum()", 0),
    Case("min", "[3, 1, 2].min()", 1),
    Case("max", "[3, 1, 2].max()", 3),
    Case("list indexOf", '["a", "b", "a"].indexOf("a")', 0),
    Case("list lastIndexOf", '["a", "b", "a"].lastIndexOf("a")', 2),
    Case("quantity in rules", 'quantity("1Gi") == quantity("1024Mi")', True),
    Case("isQuantity", 'isQuantity("500m") && !isQuantity("5 m")', True),
    Case("quantity add int", 'quantity("1k").add(24).asInteger()', 1024),
    Case("asApproximateFloat", 'quantity("250m").asApproximateFloat()', 0.25),
    Case("size", 'size("abc") + size([1]) + size({"a": 1})', 5),
    Case("all", "[1, 2].all(x, x > 0)", True),
    Case("exists", "[1, 2].exists(x, x > 1)", True),
    Case("exists_one", "[1, 2, 3].exists_one(x, x > 2)", True),
    Case("map", "[1, 2].map(x, x * 10)", [10, 20]),
    Case("filter", "[1, 2, 3].filter(x, x != 2)", [1, 3]),
    Case("has on a map", 'has({"a": 1}.a) && !has({"a": 1}.b)', True),
    Case("ternary", "1 > 2 ? 'x' : 'y'", "y"),
]


@pytest.mark.parametrize("case", ROWS, ids=lambda c: c.name)
def test_kubernetes_library(case: Case) -> None:
    got = cel.compile(case.expr, library="kubernetes").evaluate({})
    assert got == case.want, f"-want {case.want!r}, +got {got!r}"
    assert type(got) is type(case.want)


ERRORS = [
    Case("substring out of range", '"abc".substring(2, 9)', "out of range"),
    Case("charAt out of range", '"abc".charAt(5)', "out of range"),
    Case("max of empty list", "[].max()", "empty list"),
    Case("sum of strings", '["a"].sum()', "want int or double"),
    Case("isSorted of mixed list", '[1, "a"].isSorted()', "mixes"),
    Case("join of ints", "[1, 2].join()", "want strings"),
    Case("asInteger of a fraction", 'quantity("1.5").asInteger()', "not an integer"),
    Case("lowerAscii on int", "(1).lowerAscii()", "no such overload"),
    Case("quantity ordering operator", 'quantity("1") < quantity("2")', "no such overload: quantity < quantity"),
]


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c.name)
def test_kubernetes_library_errors(case: Case) -> None:
    with pytest.raises(cel.CELError) as err:
        cel.compile(case.expr, library="kubernetes").evaluate({})
    assert case.want in str(err.value)
    assert "\n" not in str(err.value)


@dataclass(frozen=True)
class RuleCase:
    name: str
    expr: str
    self_value: object
    want: tuple
    old_self: object = None


XR = {"metadata": {"name": "default"}, "spec": {"replicas": 2, "engines": [{"name": "a"}, {"name": "b"}]}}

RULES = [
    RuleCase("root rule sees metadata.name", "self.metadata.name == 'default'", XR, (True, None)),
    RuleCase("false rule", "self.spec.replicas > 5", XR, (False, None)),
    RuleCase("unique names", "self.spec.engines.all(e, self.spec.engines.exists_one(f, f.name == e.name))", XR,
             (True, None)),
    RuleCase("scalar self", "self.matches('^[a-z]+$')", "qwen", (True, None)),
    RuleCase("oldSelf transition rule", "self >= oldSelf", 3, (True, None), old_self=2),
    RuleCase("oldSelf transition rule violated", "self >= oldSelf", 1, (False, None), old_self=2),
    RuleCase("missing field", "self.spec.size > 1", XR, (False, "no such member in mapping: 'size'")),
    RuleCase("non-bool result", "self.spec.replicas", XR, (False, "rule returned int, want bool")),
    RuleCase("syntax error", "self.spec.replicas >", XR, (False, "syntax error")),
]


@pytest.mark.parametrize("case", RULES, ids=lambda c: c.name)
def test_evaluate_rule(case: RuleCase) -> None:
    ok, error = cel.evaluate_rule(case.expr, case.self_value, old_self=case.old_self)
    want_ok, want_error = case.want
    assert ok is want_ok
    if want_error is None:
        assert error is None
    else:
        assert error is not None and want_error in error, f"-want {want_error!r}, +got {error!r}"
