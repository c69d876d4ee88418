"""Read YAML the way `crossplane render` does (go-yaml v2 into JSON).

Scalars resolve by go-yaml's rules (``y`` is true, ``1e3`` a float,
timestamps stay strings); keys become strings as JSON requires. Documents
that are empty are skipped, as Kubernetes' YAML reader does. A key given
twice keeps its last value, as go-yaml's decoding into a map does (measured:
``crossplane render`` v2.2.1 and ``kubectl`` v1.35.4 both accept it).

Hostile YAML is refused the way go-yaml refuses it, so that nothing
downstream ever holds more than the file's own size allows:

- an alias is shared by the parser but copied by ``jsonify``; like go-yaml,
  a document where aliases expand to too large a share of its nodes is an
  error (``document contains excessive aliasing``; a billion laughs stops
  after about a thousand nodes), see ``allowed_alias_ratio``;
- an anchor whose value holds an alias to itself is an error (``anchor 'm'
  value contains itself``), not an endless structure;
- a document is read to ``MAX_DEPTH`` (10,000) levels, go-yaml's limit, and
  refused beyond it (``yaml: line 10: exceeded max depth of 10000``): nodes
  are composed (``nodes``) and copied without recursion, at any depth; what
  runs next needs ``deepstack``.

Each is a ``yaml.YAMLError`` (``YAMLLimitError`` or, for the anchor,
PyYAML's ``ComposerError``), so every caller that reports YAML errors
reports these.

Files may be UTF-8, or UTF-16 or UTF-32 with a byte-order mark (``decode``).
Texts over ``FAST_ABOVE`` are scanned by libyaml; the small ones by PyYAML's
scanner, with its saved simple keys kept in order so that a line of
thousands of ``[`` scans in linear time (``_Scanner``).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.resolver import BaseResolver

from modelplane.render import yaml11
from modelplane.render.nodes import EventComposer, YAMLLimitError
from modelplane.render.yamlout import go_float

# Above this many characters, libyaml scans and parses (several times faster; same values; its
# error messages differ): a 50 MB file then loads in seconds, as it does for the real CLI.
FAST_ABOVE = 1 << 20

# go-yaml's alias budget: up to ALIAS_LOW decoded nodes, 99% may come from aliases; from
# ALIAS_HIGH on, 10%; in between the share falls linearly. Checked once a document has more
# than ALIAS_MIN_ALIASED nodes from aliases and ALIAS_MIN_DECODED nodes in all.
ALIAS_LOW, ALIAS_HIGH = 400_000, 4_000_000
ALIAS_MIN_ALIASED, ALIAS_MIN_DECODED = 100, 1_000


def allowed_alias_ratio(decoded: int) -> float:
    """The share of ``decoded`` nodes that may come from expanding aliases."""
    if decoded <= ALIAS_LOW:
        return 0.99
    if decoded >= ALIAS_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - ALIAS_LOW) / (ALIAS_HIGH - ALIAS_LOW)


class _Resolver(BaseResolver):
    def resolve(self, kind, value, implicit):
        if kind is yaml.ScalarNode and implicit[0]:
            return yaml11.resolve(value)
        return super().resolve(kind, value, implicit)


class _Constructor(SafeConstructor):
    def construct_go_scalar(self, node):
        return yaml11.value(self.construct_scalar(node))[1]


for _tag in (yaml11.BOOL, yaml11.NULL, yaml11.INT, yaml11.FLOAT, yaml11.TIMESTAMP):
    _Constructor.add_constructor(_tag, _Constructor.construct_go_scalar)


class _Scanner(yaml.scanner.Scanner):
    """PyYAML's scanner, with its two walks over the saved simple keys made short.

    PyYAML saves a possible simple key per flow level and, before every token, walks all of
    them twice (the nearest one, the stale ones): a line of 5,000 ``[`` took 23 s. Keys are
    only ever added last, with the largest position and token number so far, and removed
    anywhere, so the dict's order is their order: the nearest is the first, and the stale
    ones (on an earlier line, or over 1,024 characters back) are a prefix. Same tokens, same
    errors, in the same order."""

    def next_possible_simple_key(self):
        for key in self.possible_simple_keys.values():
            return key.token_number
        return None

    def stale_possible_simple_keys(self):
        keys = self.possible_simple_keys
        while keys:
            level = next(iter(keys))
            key = keys[level]
            if key.line == self.line and self.index - key.index <= 1024:
                return
            if key.required:
                raise yaml.scanner.ScannerError("while scanning a simple key", key.mark,
                                                "could not find expected ':'", self.get_mark())
            del keys[level]


class _Loader(EventComposer, yaml.reader.Reader, _Scanner, yaml.parser.Parser, _Constructor, _Resolver):
    def __init__(self, stream):
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        _Constructor.__init__(self)
        _Resolver.__init__(self)


try:
    from yaml.cyaml import CParser as _CParser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    _CParser = None

if _CParser is not None:
    class _CLoader(EventComposer, _CParser, _Constructor, _Resolver):  # type: ignore[misc]
        """libyaml scans and parses (its own composer would recurse in C); the rest is the Python above."""

        def __init__(self, stream):
            _CParser.__init__(self, stream)
            _Constructor.__init__(self)
            _Resolver.__init__(self)
else:  # pragma: no cover - PyYAML built without libyaml
    _CLoader = _Loader


def _key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, bool):
        return "true" if k else "false"
    if k is None:
        return "null"
    if isinstance(k, float):
        return str(int(k)) if k.is_integer() else go_float(k)
    return str(k)


class _Expansion:
    """Counts nodes as ``jsonify`` copies them, go-yaml's way: every key and value is a decoded
    node, and those copied while expanding an alias (a container met a second time) are aliased.

    The walk keeps its open containers in a list, not on the call stack: a document may be
    ``MAX_DEPTH`` levels deep (the composer refuses deeper ones before this runs)."""

    def __init__(self) -> None:
        self.decoded = self.aliased = 0
        self.alias_depth = 0
        self.seen: set[int] = set()      # containers copied once already: meeting one again is an alias
        self.open: set[int] = set()      # containers being copied (on the current path)

    def node(self) -> None:
        self.decoded += 1
        if self.alias_depth:
            self.aliased += 1
            if (self.aliased > ALIAS_MIN_ALIASED and self.decoded > ALIAS_MIN_DECODED
                    and self.aliased / self.decoded > allowed_alias_ratio(self.decoded)):
                raise YAMLLimitError("yaml: document contains excessive aliasing")

    def _enter(self, value: Any) -> bool:
        """Start on a container; whether it is an alias (met before)."""
        ident = id(value)
        if ident in self.open:
            raise YAMLLimitError("yaml: an anchor's value contains itself (an alias inside it refers back to it)")
        alias = ident in self.seen
        self.seen.add(ident)
        self.open.add(ident)
        self.alias_depth += alias
        return alias

    def _leave(self, value: Any, alias: bool) -> None:
        self.alias_depth -= alias
        self.open.discard(id(value))

    def copy(self, value: Any, build: bool = True) -> Any:
        """``value`` as JSON data (with ``build=False``, only the checks, and None)."""
        self.node()
        if not isinstance(value, (dict, list, tuple)):
            return _scalar(value) if build else None
        root = _empty(value) if build else None
        # One frame per open container: (the YAML value, its copy, its children left, alias?).
        stack = [(value, root, _children(value), self._enter(value))]
        while stack:
            source, out, children, alias = stack[-1]
            item = next(children, _DONE)
            if item is _DONE:
                stack.pop()
                self._leave(source, alias)
                continue
            key, child = item
            if key is not _NO_KEY:
                self.node()  # a mapping's key is a decoded node too
            self.node()
            container = isinstance(child, (dict, list, tuple))
            copied = (_empty(child) if container else _scalar(child)) if build else None
            if build:
                if key is _NO_KEY:
                    out.append(copied)
                else:
                    out[_key(key)] = copied
            if container:
                stack.append((child, copied, _children(child), self._enter(child)))
        return root


_DONE = object()
_NO_KEY = object()  # a sequence's children have none (None is a key: YAML's null)


def _children(value: Any) -> Iterator[tuple[Any, Any]]:
    """(key, child) pairs of a container; the key is _NO_KEY in a sequence."""
    if isinstance(value, dict):
        return iter(value.items())
    return ((_NO_KEY, v) for v in value)


def _empty(value: Any) -> Any:
    return {} if isinstance(value, dict) else []


def _scalar(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and yaml11.INT64_MIN <= value <= yaml11.INT64_MAX:
        return int(value)
    return value


def jsonify(value: Any) -> Any:
    """YAML data as JSON data: string keys, lists for sequences, aliases copied within go-yaml's
    budget (``YAMLLimitError`` beyond it)."""
    return _Expansion().copy(value)


def check_expansion(doc: Any) -> Any:
    """``doc`` itself, once it is known to stay within go-yaml's alias budget and to hold no cycle
    (for readers that keep YAML's own values instead of ``jsonify``-ing them)."""
    _Expansion().copy(doc, build=False)
    return doc


# Byte-order marks, longest first: UTF-32LE's starts with UTF-16LE's.
BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
        (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"), (b"\xef\xbb\xbf", "utf-8"))


def bom_encoding(data: bytes) -> str | None:
    """The encoding ``data``'s byte-order mark names, as YAML detects it (1.2 spec, 5.2); None without one."""
    for bom, encoding in BOMS:
        if data.startswith(bom):
            return encoding
    return None


def decode(data: bytes) -> str:
    """A file's bytes as YAML text: UTF-8, or the UTF-16 or UTF-32 its byte-order mark names (the mark
    dropped). go-yaml, and so crossplane render and kubectl, read UTF-16 with a mark, not UTF-32
    (measured, crossplane v2.2.1: ``yaml: control characters are not allowed``); YAML 1.2 asks
    for both. Anything else is a ``yaml.YAMLError`` naming the first bad byte's line and column."""
    encoding = bom_encoding(data)
    if encoding not in (None, "utf-8"):
        try:
            return data[len(_bom(encoding)):].decode(encoding)
        except UnicodeDecodeError as err:
            name = encoding.upper().replace("-LE", " LE").replace("-BE", " BE")
            raise yaml.YAMLError(f"yaml: invalid {name}: {err.reason} at byte {err.start + len(_bom(encoding))}") \
                from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise yaml.YAMLError(invalid_utf8(data, err)) from None


def _bom(encoding: str) -> bytes:
    return next(bom for bom, name in BOMS if name == encoding)


def invalid_utf8(data: bytes, err: UnicodeDecodeError) -> str:
    """``yaml: invalid UTF-8: byte 0xe9 at line 8, column 12`` for ``err`` decoding ``data``."""
    if err.start >= len(data):
        return f"yaml: invalid UTF-8: {err.reason}"
    head = data[: err.start]
    line = head.count(b"\n") + 1
    column = err.start - (head.rfind(b"\n") + 1) + 1
    return f"yaml: invalid UTF-8: byte 0x{data[err.start]:02x} at line {line}, column {column}"


def document_line(text: str, index: int) -> int | None:
    """The line (1-based) where the ``index``-th non-empty document of ``text`` starts (for error
    messages: parses again, so call it only on the way to reporting an error)."""
    try:
        nodes = [n for n in yaml.compose_all(text, Loader=_CLoader) if n is not None]
        return nodes[index].start_mark.line + 1 if index < len(nodes) else None
    except (yaml.YAMLError, RecursionError):
        return None


def located(err: YAMLLimitError, text: str, index: int) -> YAMLLimitError:
    """``err`` saying which document of ``text`` (and the line it starts on) it is about."""
    line = document_line(text, index)
    return YAMLLimitError(f"{err} (document {index}{f', line {line}' if line else ''})")


def _documents(text: str, loader: type) -> list[Any]:
    out, index = [], 0
    try:
        for doc in yaml.load_all(text, Loader=loader):
            if doc is not None:
                out.append(jsonify(doc))
                index += 1
    except YAMLLimitError as err:
        raise located(err, text, index) from None
    except RecursionError:  # nodes and copies are not recursive; merge keys (``<<``) chained thousands deep are
        raise located(YAMLLimitError("yaml: the document nests too deeply (merge keys chained too deep)"), text,
                      index) from None
    return out


def load_all(text: str) -> list[Any]:
    """Every non-empty document of a YAML stream (libyaml parses texts over ``FAST_ABOVE``)."""
    return _documents(text, _CLoader if len(text) > FAST_ABOVE else _Loader)


def load_all_fast(text: str) -> list[Any]:
    """``load_all`` with libyaml's scanner (several times faster; same values; error messages differ).

    For large trusted inputs such as a simulated fleet, not for render's byte-exact CLI."""
    return _documents(text, _CLoader)


def load_one(text: str) -> Any:
    """The first document of a YAML file (render reads one object per file)."""
    try:
        docs = list(yaml.load_all(text, Loader=_CLoader if len(text) > FAST_ABOVE else _Loader))
        return jsonify(docs[0]) if docs else None
    except YAMLLimitError as err:
        raise located(err, text, 0) from None
    except RecursionError:  # as in _documents
        raise located(YAMLLimitError("yaml: the document nests too deeply (merge keys chained too deep)"), text,
                      0) from None
