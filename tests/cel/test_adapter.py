"""The adapter: caching, value conversion, error shape, exported surface."""
from dataclasses import dataclass

import pytest
from modelplane import cel
from modelplane.quantity import Quantity
from modelplane.semver import Version


def test_compile_is_cached_per_library_and_expression() -> None:
    expr = "1 + 2 == 3 && true"
    cel.reset_stats()
    a = cel.compile(expr)
    b = cel.compile(expr)
    c = cel.compile(expr, library="kubernetes")
    assert a is b
    assert c is not a
    assert cel.stats()["compiles"] == 2


def test_syntax_errors_are_cached_too() -> None:
    cel.reset_stats()
    for _ in range(3):
        with pytest.raises(cel.CELError, match="syntax error"):
            cel.compile("1 + + ")
    assert cel.stats()["compiles"] == 1


def test_unknown_library() -> None:
    with pytest.raises(ValueError, match="unknown CEL library 'cel-go'"):
        cel.compile("true", library="cel-go")


@dataclass(frozen=True)
class Case:
    name: str
    expr: str
    activation: dict
    want: object


CONVERSIONS = [
    Case("bool", "x", {"x": True}, True),
    Case("int", "x + 1", {"x": 41}, 42),
    Case("float", "x * 2.0", {"x": 1.25}, 2.5),
    Case("string", "x + '!'", {"x": "hi"}, "hi!"),
    Case("nested dict and list", "x.a[1].b", {"x": {"a": [{"b": 1}, {"b": 2}]}}, 2),
    Case("map result", "{'k': x}", {"x": [1]}, {"k": [1]}),
    Case("null", "x == null", {"x": None}, True),
    Case("quantity in and out", "x.add(quantity('1Gi'))", {"x": Quantity("1Gi")}, Quantity("2Gi")),
    Case("version in and out", "semver('1.2.3')", {}, Version.parse("1.2.3")),
]


@pytest.mark.parametrize("case", CONVERSIONS, ids=lambda c: c.name)
def test_conversion(case: Case) -> None:
    got = cel.compile(case.expr).evaluate(case.activation)
    assert got == case.want, f"-want {case.want!r}, +got {got!r}"
    assert type(got) is type(case.want)


def test_errors_are_one_trimmed_line_without_the_activation() -> None:
    big = {f"key{i}": "x" * 100 for i in range(200)}
    with pytest.raises(cel.CELError) as err:
        cel.compile("missing.field == 1").evaluate({"big": big})
    msg = str(err.value)
    assert "\n" not in msg
    assert len(msg) <= 240
    assert "key1" not in msg
    assert "missing" in msg


def test_heterogeneous_equality_is_an_error() -> None:
    with pytest.raises(cel.CELError, match="no such overload: string == int"):
        cel.compile("x == 1").evaluate({"x": "1"})


def test_rejected_is_a_cel_error() -> None:
    assert issubclass(cel.CELRejected, cel.CELError)


def test_cannot_pass_arbitrary_objects() -> None:
    with pytest.raises(cel.CELError, match="cannot pass a object"):
        cel.compile("x == 1").evaluate({"x": object()})


def test_exported_members() -> None:
    assert sorted(cel.__all__) == [
        "CELError", "CELRejected", "Device", "DeviceError", "MatchResult", "Program",
        "compile", "evaluate_rule", "match", "reset_stats", "stats", "transient_rejections",
    ]


def test_only_the_adapter_imports_the_engine() -> None:
    from pathlib import Path

    import modelplane.cel as pkg

    importers = sorted(p.name for p in Path(pkg.__file__).parent.glob("*.py") if "celpy" in p.read_text())
    assert importers == ["adapter.py"]
