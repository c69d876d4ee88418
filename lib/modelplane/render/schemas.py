"""``-s/--required-schemas DIR``: answer a function's SchemaSelectors offline.

The directory holds ``kubectl get --raw /openapi/v3/<group>/<version>``
output: JSON documents ``{"openapi": "3.0.0", "components": {"schemas":
{...}}}`` whose kind schemas carry ``x-kubernetes-group-version-kind``.
Loading follows the CLI's ``LoadRequiredSchemas``:

- the directory is walked recursively in lexical order and every ``*.json``
  file is read (a single ``.json`` file given as DIR is read too);
- no JSON file at all is an error, as is a file that is not JSON.

A ``SchemaSelector{api_version, kind}`` is answered like the CLI's
``FilteringSchemaFetcher``:

- documents are searched in file order for a schema whose
  ``x-kubernetes-group-version-kind`` has exactly one entry with the same
  group and version (case-insensitive) and the same kind (case-sensitive);
- that schema is returned with its local ``$ref``s
  (``#/components/schemas/<name>``, also when wrapped in ``allOf``)
  replaced by the referred schema under ``properties``,
  ``additionalProperties`` and ``items``; a reference back into the chain
  being resolved becomes ``{"type": "object"}``, as the API server's
  resolver does;
- a kind that is nowhere to be found gives an empty ``Schema``: the
  request still carries the key, meaning "looked up, none found".
"""
from __future__ import annotations

import json
import os

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.render.errors import RenderError
from modelplane.render.fetch import as_struct

REF_PREFIX = "#/components/schemas/"
GVK_EXTENSION = "x-kubernetes-group-version-kind"

_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "bool", int: "number", float: "number"}


def _json_files(path: str) -> list[str]:
    if not os.path.lexists(path):
        raise RenderError(f"cannot walk directory: stat {path}: no such file or directory")
    if not os.path.isdir(path):
        return [path] if os.path.splitext(path)[1] == ".json" else []
    files: list[str] = []
    # Go's WalkDir visits entries in lexical order and descends as it goes,
    # so a file in a subdirectory sorts where the subdirectory's name does.
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        if os.path.isdir(full) and not os.path.islink(full):
            files.extend(_json_files(full))
        elif os.path.splitext(name)[1] == ".json":
            files.append(full)
    return files


def _go_json_error(text: str, err: json.JSONDecodeError) -> str:
    """Python's JSON error in the words of Go's encoding/json."""
    if err.pos >= len(text.rstrip()):
        return "unexpected end of JSON input"
    char = text[err.pos]
    quoted = "'\\''" if char == "'" else "'" + json.dumps(char)[1:-1].replace('\\"', '"') + "'"
    where = {
        "Expecting value": "looking for beginning of value",
        "Expecting ':' delimiter": "after object key",
        "Expecting property name enclosed in double quotes": "looking for beginning of object key string",
        "Extra data": "after top-level value",
    }.get(err.msg)
    if where is None and err.msg == "Expecting ',' delimiter":
        # Go names the container the comma was missing in.
        opener = _innermost_open(text[: err.pos])
        where = "after array element" if opener == "[" else "after object key:value pair"
    return f"invalid character {quoted} {where or 'looking for beginning of value'}"


def _innermost_open(prefix: str) -> str:
    stack: list[str] = []
    in_string = escaped = False
    for c in prefix:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            stack.append(c)
        elif c in "]}" and stack:
            stack.pop()
    return stack[-1] if stack else ""


def load_required_schemas(path: str) -> list[dict]:
    """The OpenAPI documents under ``path``, in walk order."""
    try:
        files = _json_files(path)
        if not files:
            raise RenderError(f'no JSON files found in "{path}"')
        docs = []
        for f in files:
            try:
                with open(f, encoding="utf-8") as fh:
                    text = fh.read()
            except OSError as err:
                reason = os.strerror(err.errno).lower() if err.errno else str(err)
                raise RenderError(f'cannot read file "{f}": open {f}: {reason}') from None
            try:
                doc = json.loads(text)
            except json.JSONDecodeError as err:
                raise RenderError(f'cannot parse OpenAPI JSON from "{f}": {_go_json_error(text, err)}') from None
            if doc is None:
                doc = {}  # Go decodes a JSON null into the zero document
            if not isinstance(doc, dict):
                raise RenderError(
                    f'cannot parse OpenAPI JSON from "{f}": json: cannot unmarshal '
                    f"{_JSON_TYPES.get(type(doc), 'value')} into Go value of type spec3.OpenAPI"
                )
            docs.append(doc)
        return docs
    except RenderError as err:
        raise err.wrap(f'cannot load required schemas from "{path}"') from None


def parse_group_version(api_version: str) -> tuple[str, str]:
    """(group, version) as apimachinery's ``schema.ParseGroupVersion`` splits it."""
    if api_version in ("", "/"):
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise RenderError(f'cannot parse apiVersion "{api_version}": unexpected GroupVersion string: {api_version}')


def _ref_of(schema: dict) -> str | None:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref:
        return ref
    # kube-openapi wraps a $ref in allOf to keep the field's description.
    for item in schema.get("allOf") or []:
        if isinstance(item, dict) and (inner := _ref_of(item)):
            return inner
    return None


def _flatten(schema: dict, defs: dict, visiting: set[str]) -> dict:
    result = schema
    ref = _ref_of(schema)
    if ref is not None:
        if ref in visiting:
            return {"type": "object"}  # a cycle: stop with an opaque object
        resolved = defs.get(ref.removeprefix(REF_PREFIX))
        if not isinstance(resolved, dict):
            raise RenderError(
                f'cannot flatten schema references: internal error: cannot resolve Ref "{ref}": schema not found'
            )
        visiting = visiting | {ref}
        result = resolved  # the referring schema's own fields are dropped, as upstream
    out = dict(result)
    if isinstance(result.get("properties"), dict):
        out["properties"] = {
            k: _flatten(v, defs, visiting) if isinstance(v, dict) else v for k, v in result["properties"].items()
        }
    if isinstance(result.get("additionalProperties"), dict):
        out["additionalProperties"] = _flatten(result["additionalProperties"], defs, visiting)
    if isinstance(result.get("items"), dict):
        out["items"] = _flatten(result["items"], defs, visiting)
    return out


class SchemaFetcher:
    """Answers SchemaSelectors from loaded OpenAPI documents."""

    def __init__(self, docs: list[dict]):
        self.docs = docs

    def find(self, api_version: str, kind: str) -> dict | None:
        """The kind's flattened schema as plain data, or None."""
        group, version = parse_group_version(api_version)
        for doc in self.docs:
            defs = (doc.get("components") or {}).get("schemas") if isinstance(doc.get("components"), dict) else None
            if not isinstance(defs, dict):
                continue
            # Go ranges over a map here; name order keeps duplicates deterministic.
            for name in sorted(defs):
                schema = defs[name]
                if not isinstance(schema, dict):
                    continue
                gvks = schema.get(GVK_EXTENSION)
                if not isinstance(gvks, list) or len(gvks) != 1 or not isinstance(gvks[0], dict):
                    continue
                gvk = gvks[0]
                g, v, k = (gvk.get(f) if isinstance(gvk.get(f), str) else "" for f in ("group", "version", "kind"))
                if g.lower() != group.lower() or v.lower() != version.lower() or k != kind:
                    continue
                return _flatten(schema, defs, {REF_PREFIX + name})
        return None

    def fetch(self, sel: fnv1.SchemaSelector) -> fnv1.Schema:
        """The Schema message a request carries; empty when the kind is unknown."""
        found = self.find(sel.api_version, sel.kind)
        return fnv1.Schema() if found is None else fnv1.Schema(openapi_v3=as_struct(found))
