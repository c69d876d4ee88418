"""Kubernetes quantities: every input form, exact equality, canonical text, arithmetic, errors."""
import decimal
import subprocess
import sys
from dataclasses import dataclass
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kubernetes.utils import parse_quantity
from modelplane import quantity
from modelplane.quantity import Quantity, QuantityError


@dataclass(frozen=True)
class Case:
    name: str
    raw: object
    want: Decimal
    want_str: str


PARSE = [
    Case("binary Ki", "1Ki", Decimal(1024), "1Ki"),
    Case("binary Mi", "3Mi", Decimal(3 * 2**20), "3Mi"),
    Case("binary Gi", "80Gi", Decimal(80 * 2**30), "80Gi"),
    Case("binary Ti", "2Ti", Decimal(2 * 2**40), "2Ti"),
    Case("binary Pi", "1Pi", Decimal(2**50), "1Pi"),
    Case("binary Ei", "1Ei", Decimal(2**60), "1Ei"),
    Case("binary normalises up", "1024Mi", Decimal(2**30), "1Gi"),
    Case("binary fraction", "0.5Gi", Decimal(2**29), "512Mi"),
    Case("binary not a multiple of 1024", "1025", Decimal(1025), "1025"),
    Case("binary over int64 is capped", "8Ei", Decimal(2**63 - 1), "9223372036854775807"),
    Case("decimal nano", "100n", Decimal("1e-7"), "100n"),
    Case("decimal micro", "3u", Decimal("0.000003"), "3u"),
    Case("decimal milli", "250m", Decimal("0.25"), "250m"),
    Case("decimal plain", "1500", Decimal(1500), "1500"),
    Case("decimal kilo", "2k", Decimal(2000), "2k"),
    Case("decimal mega", "5M", Decimal(5 * 10**6), "5M"),
    Case("decimal giga", "1G", Decimal(10**9), "1G"),
    Case("decimal tera", "7T", Decimal(7 * 10**12), "7T"),
    Case("decimal peta", "1P", Decimal(10**15), "1P"),
    Case("decimal exa", "1E", Decimal(10**18), "1E"),
    Case("decimal beyond exa stays E", "1000E", Decimal(10**21), "1000E"),
    Case("fraction becomes milli", "1.5", Decimal("1.5"), "1500m"),
    Case("kilo fraction", "1.5k", Decimal(1500), "1500"),
    Case("leading dot", ".5", Decimal("0.5"), "500m"),
    Case("trailing dot", "5.", Decimal(5), "5"),
    Case("exponent", "1e3", Decimal(1000), "1e3"),
    Case("capital exponent negative", "1E-3", Decimal("0.001"), "1e-3"),
    Case("exponent with plus", "2.5e+2", Decimal(250), "250"),
    Case("exponent not a multiple of 3", "12e-1", Decimal("1.2"), "1200e-3"),
    Case("negative", "-1k", Decimal(-1000), "-1k"),
    Case("explicit plus", "+5m", Decimal("0.005"), "5m"),
    Case("zero", "0", Decimal(0), "0"),
    Case("negative zero", "-0", Decimal(0), "0"),
    Case("sub-nano rounds up", "0.1n", Decimal("1e-9"), "1n"),
    Case("negative sub-nano rounds away from zero", "-0.1n", Decimal("-1e-9"), "-1n"),
    Case("int input", 5, Decimal(5), "5"),
    Case("float input keeps its short text", 0.1, Decimal("0.1"), "100m"),
    Case("float input", 2.5, Decimal("2.5"), "2500m"),
]


@pytest.mark.parametrize("case", PARSE, ids=lambda c: c.name)
def test_parse(case: Case) -> None:
    q = Quantity(case.raw)
    assert q.value == case.want, f"-want {case.want}, +got {q.value}"
    assert str(q) == case.want_str
    assert Quantity(str(q)) == q


BAD = [
    ("empty", ""),
    ("word", "lots"),
    ("unknown suffix", "1Gb"),
    ("lower-case binary", "1ki"),
    ("space", " 1"),
    ("underscore", "1_000"),
    ("not a number", "NaN"),
    ("exponent and suffix", "1e3k"),
    ("non-ASCII digit", "\u0661"),
    ("bare exponent", "e3"),
    ("dangling exponent", "1e"),
    ("hex", "0x10"),
    ("huge exponent", "1e5000"),
    ("too long", "1" * 65),
    ("bool", True),
    ("none", None),
    ("infinite float", float("inf")),
]


@pytest.mark.parametrize("name,raw", BAD, ids=[b[0] for b in BAD])
def test_bad_input_names_the_string_and_the_forms(name: str, raw: object) -> None:
    with pytest.raises(QuantityError) as err:
        Quantity(raw)
    assert isinstance(err.value, ValueError)
    msg = str(err.value)
    if isinstance(raw, str) and len(raw) < 60:
        assert repr(raw) in msg
    assert "Ki Mi Gi" in msg


EQUAL = [("1Gi", "1024Mi"), ("1k", "1000"), ("1e3", "1k"), ("0.5", "500m"), ("1Ki", "1.024k"), ("1G", "1e9")]


@pytest.mark.parametrize("a,b", EQUAL)
def test_equal_values_are_equal_and_hash_alike(a: str, b: str) -> None:
    assert Quantity(a) == Quantity(b)
    assert hash(Quantity(a)) == hash(Quantity(b))
    assert Quantity(a).compare_to(Quantity(b)) == 0
    assert len({Quantity(a), Quantity(b)}) == 1


@dataclass(frozen=True)
class OpCase:
    name: str
    got: object
    want: object


OPS = [
    OpCase("compare less", Quantity("20Gi").compare_to(Quantity("24Gi")), -1),
    OpCase("compare greater", Quantity("80Gi").compare_to(Quantity("40Gi")), 1),
    OpCase("ordering operator", Quantity("999Mi") < Quantity("1Gi"), True),
    OpCase("add keeps receiver format", str(Quantity("1Gi").add(Quantity("512Mi"))), "1536Mi"),
    OpCase("add exact", Quantity("0.1").add(Quantity("0.2")) == Quantity("300m"), True),
    OpCase("sub to negative", str(Quantity("1k").sub(Quantity("1500"))), "-500"),
    OpCase("operator +", Quantity("1") + Quantity("1") == Quantity("2"), True),
    OpCase("sign negative", Quantity("-1m").sign(), -1),
    OpCase("sign zero", Quantity("0Gi").sign(), 0),
    OpCase("sign positive", Quantity("1n").sign(), 1),
    OpCase("is_integer yes", Quantity("2k").is_integer(), True),
    OpCase("is_integer no", Quantity("1500m").is_integer(), False),
    OpCase("is_integer beyond int64", Quantity("1e30").is_integer(), False),
    OpCase("as_integer", Quantity("1.5Gi").as_integer(), 1610612736),
    OpCase("as_approximate_float", Quantity("250m").as_approximate_float(), 0.25),
]


@pytest.mark.parametrize("case", OPS, ids=lambda c: c.name)
def test_operations(case: OpCase) -> None:
    assert case.got == case.want, f"-want {case.want!r}, +got {case.got!r}"


def test_as_integer_of_a_fraction_is_an_error() -> None:
    with pytest.raises(QuantityError, match="not an integer"):
        Quantity("1500m").as_integer()


def test_quantities_are_immutable() -> None:
    with pytest.raises(AttributeError):
        Quantity("1").value = Decimal(2)  # type: ignore[misc]


numbers = st.decimals(min_value=Decimal("-1e20"), max_value=Decimal("1e20"), places=3, allow_nan=False)
suffixes = st.sampled_from(["", "Ki", "Mi", "Gi", "Ti", "n", "u", "m", "k", "M", "G", "T", "e3", "E-2", "e0"])


@given(numbers, suffixes)
def test_str_round_trip_preserves_the_value(n: Decimal, suffix: str) -> None:
    q = Quantity(f"{n:f}{suffix}")
    again = Quantity(str(q))
    assert again == q
    assert again.value == q.value


@given(numbers, numbers)
def test_comparison_agrees_with_decimal(a: Decimal, b: Decimal) -> None:
    qa, qb = Quantity(f"{a:f}"), Quantity(f"{b:f}")
    assert qa.compare_to(qb) == (a > b) - (a < b)
    assert (qa == qb) == (a == b)
    assert (qa < qb) == (a < b)
    assert qa.add(qb).value == a + b


# The value of every form the grammar accepts equals what the Kubernetes Python client computes for it
# (kubernetes.utils.parse_quantity, the parser this module used before it stopped importing the client).
_NUMBERS = st.from_regex(r"[+-]?(?:[0-9]{1,12}(?:\.[0-9]{0,9})?|\.[0-9]{1,9})", fullmatch=True)
_SUFFIXES = st.sampled_from(["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"])
_EXPONENTS = st.integers(min_value=-40, max_value=40).map(lambda e: f"e{e:+d}" if e % 2 else f"E{e}")


@given(_NUMBERS, st.one_of(_SUFFIXES, _EXPONENTS))
def test_value_is_the_kubernetes_clients(number: str, suffix: str) -> None:
    text = number + suffix
    match = quantity._GRAMMAR.fullmatch(text)
    assert match is not None, text
    with decimal.localcontext(quantity._CONTEXT):
        assert quantity._value(match) == parse_quantity(text), text


def test_reading_a_quantity_does_not_load_the_kubernetes_client() -> None:
    # 23 MiB in every function server that reads a quantity, for one multiplication
    code = "import sys, modelplane.quantity as q; q.Quantity('1Gi'); print('kubernetes' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
