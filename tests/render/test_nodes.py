"""``render.nodes`` composes what PyYAML composes, to go-yaml's 10,000 levels, without recursion;
``reader._Scanner`` yields PyYAML's tokens."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
import yaml
from modelplane import paths
from modelplane.render import nodes, reader

TEXTS = {
    "block and flow": "a: 1\nb: [x, {y: z}]\nc:\n  - d\n  - e: f\n",
    "anchors and aliases": "base: &b {x: [1, 2]}\nuse: *b\nlist: [*b, *b]\n",
    "a merge key": "a: &a {x: 1}\nb:\n  <<: *a\n  y: 2\n",
    "tags and styles": "a: !!str 1\nb: 'q'\nc: |\n  lit\nd: >\n  fold\ne: !custom {k: v}\n",
    "a complex key": "? [a, b]\n: c\n",
    "documents": "a: 1\n---\n- 2\n---\n3\n...\n",
    "an empty value and a null key": "a:\n~: b\n",
    "a scalar root": "just text\n",
    "anchor redefined in the next document": "a: &x 1\n---\nb: &x 2\n",
}


def _shape(node, seen=None):
    """A node as plain data: tag, value, style, start line and column; a node met again is ('alias', n)."""
    seen = {} if seen is None else seen
    if id(node) in seen:
        return ("alias", seen[id(node)])
    seen[id(node)] = len(seen)
    where = (node.start_mark.line, node.start_mark.column)
    if isinstance(node, yaml.ScalarNode):
        return ("scalar", node.tag, node.value, node.style, where)
    if isinstance(node, yaml.SequenceNode):
        return ("seq", node.tag, node.flow_style, where, [_shape(n, seen) for n in node.value])
    return ("map", node.tag, node.flow_style, where, [(_shape(k, seen), _shape(v, seen)) for k, v in node.value])


class _StockPython(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, yaml.composer.Composer,
                   yaml.constructor.SafeConstructor, reader._Resolver):
    def __init__(self, stream):
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        reader._Resolver.__init__(self)


class _StockC(yaml.cyaml.CParser, yaml.constructor.SafeConstructor, reader._Resolver):
    def __init__(self, stream):
        yaml.cyaml.CParser.__init__(self, stream)
        yaml.constructor.SafeConstructor.__init__(self)
        reader._Resolver.__init__(self)


def _corpus() -> dict[str, str]:
    out = dict(TEXTS)
    for f in sorted(paths.EXAMPLES.glob("**/*.yaml"))[:20]:
        out[str(f.relative_to(paths.ROOT))] = f.read_text(encoding="utf-8")
    return out


@pytest.mark.parametrize("name", list(_corpus()))
def test_same_nodes_as_pyyaml(name):
    text = _corpus()[name]
    for stock, loader in ((_StockPython, reader._Loader), (_StockC, reader._CLoader)):
        want = [_shape(n) for n in yaml.compose_all(text, Loader=stock)]
        got = [_shape(n) for n in yaml.compose_all(text, Loader=loader)]
        assert got == want, f"{loader.__name__}: -want {want}\n+got  {got}"


@pytest.mark.parametrize("name", list(_corpus()))
def test_same_tokens_as_pyyaml(name):
    class Linear(yaml.reader.Reader, reader._Scanner, yaml.parser.Parser):  # the parser for dispose()
        def __init__(self, stream):
            yaml.reader.Reader.__init__(self, stream)
            reader._Scanner.__init__(self)

    class Stock(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
        def __init__(self, stream):
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)

    text = _corpus()[name] + "\nflow: [[[a, {b: [c]}], d], e]\n"

    def tokens(cls):
        out = []
        try:
            for t in yaml.scan(text, Loader=cls):
                out.append((type(t).__name__, t.start_mark.index, getattr(t, "value", None)))
        except yaml.YAMLError as err:  # the same error, after the same tokens
            out.append(str(err))
        return out

    assert tokens(Linear) == tokens(Stock)


@dataclass
class ErrorCase:
    name: str
    text: str
    want: str


ERRORS = [
    ErrorCase("an undefined alias", "a: *nope\n", "found undefined alias 'nope'"),
    ErrorCase("a duplicate anchor", "a: &x 1\nb: &x 2\n", "found duplicate anchor 'x'; first occurrence"),
    ErrorCase("an alias inside its own anchor", "a: &m\n  b: *m\n", "anchor 'm' value contains itself"),
    ErrorCase("a key without a colon", "a: 1\nb\nc: 2\n", "could not find expected ':'"),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c.name for c in ERRORS])
@pytest.mark.parametrize("load", [reader.load_all, reader.load_all_fast], ids=["python", "libyaml"])
def test_errors_name_the_problem(case, load):
    with pytest.raises(yaml.YAMLError, match=case.want):
        load(case.text)


def _flow(levels: int) -> str:
    return "[" * levels + "]" * levels


def _block(levels: int) -> str:
    return "".join("  " * i + "a:\n" for i in range(levels)) + "  " * levels + "b\n"


@dataclass
class DepthCase:
    name: str
    text: str
    refused: bool


DEPTHS = [
    DepthCase("10,000 flow sequences", _flow(nodes.MAX_DEPTH), False),
    DepthCase("10,001 flow sequences", _flow(nodes.MAX_DEPTH + 1), True),
    DepthCase("10,000 flow mappings", "{a: " * nodes.MAX_DEPTH + "1" + "}" * nodes.MAX_DEPTH, False),
    DepthCase("10,001 flow mappings", "{a: " * (nodes.MAX_DEPTH + 1) + "1" + "}" * (nodes.MAX_DEPTH + 1), True),
    DepthCase("10,000 block mappings", _block(nodes.MAX_DEPTH), False),
    DepthCase("10,001 block mappings", _block(nodes.MAX_DEPTH + 1), True),
]


@pytest.mark.parametrize("case", DEPTHS, ids=[c.name for c in DEPTHS])
@pytest.mark.parametrize("load", [reader.load_all, reader.load_all_fast], ids=["python", "libyaml"])
def test_go_yaml_depth(case, load):
    if case.refused:
        with pytest.raises(nodes.YAMLLimitError, match="exceeded max depth of 10000: nest at most 10,000 levels"):
            load(case.text)
        return
    doc, depth = load(case.text)[0], 1
    while isinstance(doc, (list, dict)) and doc:
        doc = doc[0] if isinstance(doc, list) else next(iter(doc.values()))
        depth += isinstance(doc, (list, dict))
    assert depth == nodes.MAX_DEPTH
