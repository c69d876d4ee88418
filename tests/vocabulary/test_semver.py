"""Strict semver 2.0 parsing and precedence, as Kubernetes' semver() sees it."""
import itertools
from dataclasses import dataclass

import pytest
from modelplane.semver import Version, VersionError

PRECEDENCE = [
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.1",
    "1.1.0",
    "2.0.0",
    "10.0.0",
]


@pytest.mark.parametrize("lower,higher", list(itertools.pairwise(PRECEDENCE)))
def test_precedence_chain(lower: str, higher: str) -> None:
    a, b = Version.parse(lower), Version.parse(higher)
    assert a < b
    assert a.compare_to(b) == -1
    assert b.compare_to(a) == 1


def test_sorting_a_shuffled_list_restores_precedence() -> None:
    shuffled = [Version.parse(v) for v in reversed(PRECEDENCE)]
    assert [str(v) for v in sorted(shuffled)] == PRECEDENCE


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    want: tuple


PARSE = [
    Case("plain", "9.0.0", (9, 0, 0, (), ())),
    Case("compute capability", "8.9.0", (8, 9, 0, (), ())),
    Case("pre-release and build", "1.2.3-rc.1+build.5", (1, 2, 3, ("rc", "1"), ("build", "5"))),
    Case("hyphen identifier", "1.0.0-x-y-z.--", (1, 0, 0, ("x-y-z", "--"), ())),
    Case("big numbers", "123.456.789", (123, 456, 789, (), ())),
]


@pytest.mark.parametrize("case", PARSE, ids=lambda c: c.name)
def test_parse(case: Case) -> None:
    v = Version.parse(case.text)
    assert (v.major, v.minor, v.patch, v.prerelease, v.build) == case.want
    assert str(v) == case.text


def test_build_metadata_is_ignored_in_precedence() -> None:
    assert Version.parse("1.0.0+a") == Version.parse("1.0.0+b")
    assert hash(Version.parse("1.0.0+a")) == hash(Version.parse("1.0.0"))
    assert Version.parse("1.0.0+zzz").compare_to(Version.parse("1.0.0")) == 0


BAD = [
    ("v prefix (strict, like DRA)", "v1.2.3"),
    ("missing patch", "1.2"),
    ("major only", "1"),
    ("leading zero", "01.2.3"),
    ("leading zero pre-release number", "1.2.3-01"),
    ("empty pre-release", "1.2.3-"),
    ("empty build", "1.2.3+"),
    ("empty identifier", "1.2.3-a..b"),
    ("bad character", "1.2.3-a_b"),
    ("spaces", " 1.2.3"),
    ("empty", ""),
]


@pytest.mark.parametrize("name,text", BAD, ids=[b[0] for b in BAD])
def test_bad_input_raises_a_clear_error(name: str, text: str) -> None:
    with pytest.raises(VersionError) as err:
        Version.parse(text)
    assert repr(text) in str(err.value)
    assert isinstance(err.value, ValueError)


def test_non_string_is_an_error() -> None:
    with pytest.raises(VersionError, match="not a string"):
        Version.parse(123)  # type: ignore[arg-type]
