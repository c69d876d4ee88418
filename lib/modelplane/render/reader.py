"""Read YAML the way `crossplane render` does (go-yaml v2 into JSON).

Scalars resolve by go-yaml's rules (``y`` is true, ``1e3`` a float,
timestamps stay strings); keys become strings as JSON requires. Documents
that are empty are skipped, as Kubernetes' YAML reader does.
"""
from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.resolver import BaseResolver

from modelplane.render import yaml11
from modelplane.render.yamlout import go_float


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


class _Loader(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, yaml.composer.Composer,
              _Constructor, _Resolver):
    def __init__(self, stream):
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        _Constructor.__init__(self)
        _Resolver.__init__(self)


try:
    from yaml.cyaml import CParser as _CParser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    _CParser = None

if _CParser is not None:
    class _CLoader(_CParser, _Constructor, _Resolver):  # type: ignore[misc]
        """libyaml scans and parses; resolving and constructing are the Python rules above."""

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


def jsonify(value: Any) -> Any:
    """YAML data as JSON data: string keys, lists for sequences."""
    if isinstance(value, dict):
        return {_key(k): jsonify(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonify(v) for v in value]
    if isinstance(value, float) and value.is_integer() and yaml11.INT64_MIN <= value <= yaml11.INT64_MAX:
        return int(value)
    return value


def load_all(text: str) -> list[Any]:
    """Every non-empty document of a YAML stream."""
    return [jsonify(doc) for doc in yaml.load_all(text, Loader=_Loader) if doc is not None]


def load_all_fast(text: str) -> list[Any]:
    """``load_all`` with libyaml's scanner (several times faster; same values; error messages differ).

    For large trusted inputs such as a simulated fleet, not for render's byte-exact CLI."""
    return [jsonify(doc) for doc in yaml.load_all(text, Loader=_CLoader) if doc is not None]


def load_one(text: str) -> Any:
    """The first document of a YAML file (render reads one object per file)."""
    docs = list(yaml.load_all(text, Loader=_Loader))
    return jsonify(docs[0]) if docs else None
