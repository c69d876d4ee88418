"""modelplane.render.reader's limits: aliases expand within go-yaml's budget, never a cycle, never a crash."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane.render import reader
from modelplane.validate import manifests

from tests.cli import hostile_yaml as H


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    error: str | None  # None: loads


def _reused(times: int, size: int) -> str:
    """An anchor of ``size`` items, aliased ``times`` times: ordinary YAML when both are small."""
    items = ",".join(f'"v{i}"' for i in range(size))
    return "base: &b [" + items + "]\nuses:\n" + "".join("  - *b\n" for _ in range(times))


CASES = [
    Case("an anchor used a few times", _reused(5, 10), None),
    Case("a merge key", "a: &a {x: 1}\nb:\n  <<: *a\n  y: 2\n", None),
    Case("aliases under the budget: 1,000 copies of a 100-item list", _reused(1000, 100), None),
    Case("the billion laughs", H.laughs().decode(), "excessive aliasing (document 0, line 1)"),
    Case("a smaller bomb still far over", H.laughs(5).decode(), "excessive aliasing"),
    Case("an anchor holding itself", "a: &a\n  b: *a\n", "anchor 'a' value contains itself"),
    Case("a list holding itself", "a: &l [1, *l]\n", "contains itself"),
    Case("a second document's bomb", "a: 1\n---\n" + H.laughs().decode(), "(document 1, line 3)"),
    # go-yaml reads 10,000 levels and refuses more; the root mapping is the first.
    Case("10,000 levels", "x: " + "[" * 9_999 + "]" * 9_999 + "\n", None),
    Case("10,001 levels", "x: " + "[" * 10_000 + "]" * 10_000 + "\n", "line 1: exceeded max depth of 10000"),
    Case("10,001 levels of block mappings", "".join("  " * i + "a:\n" for i in range(10_001)) + "  " * 10_001 + "b\n",
         "line 10001: exceeded max depth of 10000"),
    Case("far deeper than libyaml's C stack survives", "x: " + "[" * 2_000_000 + "]" * 2_000_000 + "\n",
         "exceeded max depth of 10000"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("load", [reader.load_all, reader.load_all_fast, manifests.load_text],
                         ids=["render", "libyaml", "validate"])
def test_aliases_stay_within_the_budget(case, load):
    if case.error is None:
        docs = load(case.text)
        assert docs and isinstance(docs[0], dict)
        return
    with pytest.raises(reader.yaml.YAMLError) as err:   # YAMLLimitError, or the composer's own
        load(case.text)
    want = case.error if load is reader.load_all or "anchor '" not in case.error else "contains"
    assert want in str(err.value)


def test_expanded_aliases_are_copies():
    doc = reader.load_all("a: &a {x: [1]}\nb: *a\n")[0]
    assert doc == {"a": {"x": [1]}, "b": {"x": [1]}}
    assert doc["a"] is not doc["b"] and doc["a"]["x"] is not doc["b"]["x"]


@pytest.mark.parametrize(("decoded", "share"), [(1_000, 0.99), (400_000, 0.99), (2_200_000, 0.545),
                                                (4_000_000, 0.10), (9_000_000, 0.10)])
def test_the_allowed_share_of_aliases_falls_from_99_to_10_percent(decoded, share):
    assert reader.allowed_alias_ratio(decoded) == pytest.approx(share)


def test_large_texts_are_read_by_libyaml_with_the_same_values():
    small = "a: y\nb: 1e3\nc: 2026-01-01\nd: 0x1F\n"
    padded = small + "pad: " + "x" * reader.FAST_ABOVE + "\n"
    got = reader.load_all(padded)[0]
    assert {k: got[k] for k in "abcd"} == reader.load_all(small)[0] == {"a": True, "b": 1000, "c": "2026-01-01",
                                                                       "d": 31}


@pytest.mark.parametrize(("data", "want"), [
    (b"\xef\xbb\xbfa: 1\n", "a: 1\n"),
    ("a: é\n".encode("utf-16"), "a: é\n"),
    ("a: é\n".encode("utf-16-be").join([b"\xfe\xff", b""]), "a: é\n"),
    # Beyond go-yaml (crossplane render and kubectl refuse these): YAML 1.2 reads UTF-32 by its mark.
    ("\ufeffa: é\n".encode("utf-32-le"), "a: é\n"),
    ("\ufeffa: é\n".encode("utf-32-be"), "a: é\n"),
])
def test_decode_reads_the_encoding_the_byte_order_mark_names(data, want):
    assert reader.decode(data) == want


@pytest.mark.parametrize(("data", "want"), [
    (b"\xff\xfea\x00:", "invalid UTF-16 LE: truncated data at byte 4"),
    (b"\x00\x00\xfe\xff\x00\x00\x00a\x00", "invalid UTF-32 BE: truncated data at byte 8"),
    ("a: 1\n".encode("utf-16-le"), "special characters are not allowed"),  # no mark: UTF-8, as go-yaml reads
])
def test_decode_refuses_what_its_mark_does_not_fit(data, want):
    with pytest.raises(reader.yaml.YAMLError, match=want):
        reader.load_all(reader.decode(data))


def test_decode_names_the_first_bad_byte():
    with pytest.raises(reader.yaml.YAMLError, match=r"invalid UTF-8: byte 0xff at line 2, column 4"):
        reader.decode(b"a: 1\nb: \xff\n")
