"""CEL bombs: selectors built to cost as much as the language allows.

Each bomb takes a nonce so that compile and match caches never hide its cost:
every measurement pays for parsing and evaluating afresh.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


def _list(n: int) -> str:
    return "[" + ",".join(str(i % 10) for i in range(n)) + "]"


@dataclass(frozen=True)
class Bomb:
    name: str
    build: Callable[[int], str]   # nonce -> expression
    matches: bool = False         # a legal selector that is true for an L4 (so scheduling is right)

    def expr(self, nonce: int) -> str:
        return self.build(nonce)


def _tag(nonce: int) -> str:
    return f'"n{nonce}" != "" && '


BOMBS = [
    Bomb("nested-comprehensions-3-deep",
         lambda n: _tag(n) + "[1,2,3].all(x, [1,2,3].all(y, [1,2,3].all(z, x + y + z > 0)))"),
    Bomb("too-many-comprehensions",
         lambda n: _tag(n) + " && ".join(["[1].all(x, true)"] * 9)),
    Bomb("nested-comprehensions-over-big-lists",
         lambda n: _tag(n) + f"{_list(1200)}.all(x, {_list(1200)}.all(y, x >= 0 && y >= 0))"),
    Bomb("comprehension-over-2000-element-list",
         lambda n: _tag(n) + f"{_list(2400)}.exists(x, x == 11)"),
    Bomb("map-of-maps",
         lambda n: _tag(n) + f"{_list(100)}.map(x, {_list(100)}.map(y, x * y)).size() == 100"),
    Bomb("deep-parentheses-1000", lambda n: _tag(n) + "(" * 1000 + "true" + ")" * 1000),
    Bomb("parentheses-at-the-depth-limit", lambda n: _tag(n) + "(" * 30 + "true" + ")" * 30, matches=True),
    Bomb("huge-literal-100k", lambda n: _tag(n) + '"' + "a" * 100_000 + '" == device.driver'),
    Bomb("long-string-just-under-10k", lambda n: _tag(n) + '"' + "a" * 9_900 + '" == device.driver'),
    Bomb("string-concatenation-chain",
         lambda n: _tag(n) + " + ".join(["device.driver"] * 600) + ' == ""'),
    Bomb("long-boolean-chain", lambda n: _tag(n) + " && ".join(["true"] * 1200)),
    Bomb("long-arithmetic-chain", lambda n: _tag(n) + " + ".join(["1"] * 2400) + " > 0"),
    Bomb("map-literal-700-keys",
         lambda n: _tag(n) + "{" + ",".join(f'"k{i}": {i}' for i in range(700)) + "}.size() > 0", matches=True),
    Bomb("reduce-extension", lambda n: _tag(n) + "[1,2].reduce(a, x, a + x) > 0"),
]
