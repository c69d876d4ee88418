"""yamlout prints what go-yaml v2 (via sigs.k8s.io/yaml) prints."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from modelplane.render.yamlout import dump, dump_documents, go_float


@dataclass
class Case:
    name: str
    value: Any
    want: str


CASES = [
    Case("bool word is double-quoted", {"s": "True"}, 's: "True"\n'),
    Case("number string is double-quoted", {"s": "0"}, 's: "0"\n'),
    Case("empty string", {"s": ""}, 's: ""\n'),
    Case("null string", {"s": "null"}, 's: "null"\n'),
    Case("timestamp string", {"t": "2024-01-01T00:00:00Z"}, 't: "2024-01-01T00:00:00Z"\n'),
    Case("y is a YAML 1.1 bool", {"s": "y"}, 's: "y"\n'),
    Case("n is a YAML 1.1 bool", {"s": "n"}, 's: "n"\n'),
    Case("y as a key", {"y": 1}, '"y": 1\n'),
    Case("exponent without dot is a float in go-yaml", {"s": "1e3"}, 's: "1e3"\n'),
    Case("leading zero digits read as a float", {"s": "09"}, 's: "09"\n'),
    Case("base 60 looks like a number", {"s": "1:20"}, 's: "1:20"\n'),
    Case("colon space cannot be plain", {"m": "a: b"}, "m: 'a: b'\n"),
    Case("plain string", {"m": "hello world"}, "m: hello world\n"),
    Case("multi-line keeps its last newline", {"m": "a\nb\n"}, "m: |\n  a\n  b\n"),
    Case("multi-line without trailing newline", {"m": "a\nb"}, "m: |-\n  a\n  b\n"),
    Case(
        "long line folds at 80 columns",
        {"m": "word " * 20 + "end"},
        "m: word word word word word word word word word word word word word word word word\n"
        "  word word word word end\n",
    ),
    Case("integral float prints as int", {"v": 3.0}, "v: 3\n"),
    Case("fraction", {"v": 0.25}, "v: 0.25\n"),
    Case("large float uses exponent", {"v": 1e21}, "v: 1e+21\n"),
    Case("uint64 range still an integer", {"v": 1e19}, "v: 10000000000000000000\n"),
    Case("beyond uint64 is a float", {"v": 1e20}, "v: 1e+20\n"),
    Case("bool and null", {"b": True, "z": None}, "b: true\nz: null\n"),
    Case("list items not indented under key", {"l": [1, 2]}, "l:\n- 1\n- 2\n"),
    Case("nested lists", {"l": [["a", "b"], []]}, "l:\n- - a\n  - b\n- []\n"),
    Case("list of maps", {"l": [{"b": 1, "a": 2}]}, "l:\n- a: 2\n  b: 1\n"),
    Case("empty map", {"m": {}}, "m: {}\n"),
    Case("keys sort digit runs numerically", {"a10": 1, "a9": 2, "a": 3}, "a: 3\na9: 2\na10: 1\n"),
    Case("non-letters sort before letters", {"Zx": 1, "_x": 2}, "_x: 2\nZx: 1\n"),
    Case("unicode stays readable", {"u": "über"}, "u: über\n"),
    Case("same object twice prints twice, no anchors", {"a": (x := {"k": 1}), "b": x}, "a:\n  k: 1\nb:\n  k: 1\n"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_dump(case):
    assert dump(case.value) == case.want


@pytest.mark.parametrize(
    "value,want",
    [(1.5e-7, "1.5e-07"), (1e-5, "1e-05"), (0.0001, "0.0001"), (123456.5, "123456.5"),
     (1234567.5, "1.2345675e+06"), (-0.25, "-0.25"), (2.5e300, "2.5e+300")],
)
def test_go_float(value, want):
    assert go_float(value) == want


def test_documents_each_follow_a_marker():
    assert dump_documents([{"a": 1}, {"b": 2}]) == "---\na: 1\n---\nb: 2\n"
