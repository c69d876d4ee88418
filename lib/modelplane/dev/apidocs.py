"""The API reference pages of the docs site, generated from the XRDs (``make docs``).

One page per kind, ``docs/reference/api/<kind>.md``: names and scope, the printer columns
``kubectl get`` shows, then every field of ``spec`` and ``status`` in schema order with its
type, whether it is required, its default, its constraints (enum, bounds, pattern, sizes) and the
messages of the CEL rules that guard it. The pages are written from ``apis/*/definition.yaml``
only, never by hand; ``tests/apis/test_reference_docs.py`` fails while the committed pages differ
from what this module writes.

    python -m modelplane.dev.apidocs            # write the pages
    python -m modelplane.dev.apidocs --check    # exit 1 and name the stale pages
"""
from __future__ import annotations

import argparse
import html
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from modelplane import paths

OUT = paths.ROOT / "docs" / "reference" / "api"
LONG_WORD = 30  # characters; a description word longer than this may break after its dots

# Constraint keywords worth a reader's eye, in the order they are printed.
_BOUNDS = (
    ("minimum", "≥ {}"), ("maximum", "≤ {}"), ("exclusiveMinimum", "> {}"), ("exclusiveMaximum", "< {}"),
    ("minLength", "length ≥ {}"), ("maxLength", "length ≤ {}"),
    ("minItems", "items ≥ {}"), ("maxItems", "items ≤ {}"),
    ("minProperties", "keys ≥ {}"), ("maxProperties", "keys ≤ {}"),
    ("pattern", "pattern `{}`"), ("format", "format {}"),
)


@dataclass
class Field:
    """One row of a reference table."""

    path: str
    type: str
    required: bool
    description: str
    default: object = None
    constraints: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)


def _type_of(schema: dict) -> str:
    if schema.get("x-kubernetes-int-or-string"):
        return "integer or string"
    kind = schema.get("type")
    if kind == "array":
        return f"array of {_type_of(schema.get('items') or {})}"
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict) and not schema.get("properties"):
        return f"map of {_type_of(schema['additionalProperties'])}"
    if kind is None and schema.get("x-kubernetes-preserve-unknown-fields"):
        return "any"
    return str(kind or "any")


def _constraints(schema: dict) -> list[str]:
    out = []
    if "enum" in schema:
        out.append("one of " + ", ".join(f"`{v}`" for v in schema["enum"]))
    for key, text in _BOUNDS:
        if key in schema:
            out.append(text.format(schema[key]))
    if schema.get("x-kubernetes-preserve-unknown-fields") and schema.get("type") == "object":
        out.append("any fields kept")
    if schema.get("nullable"):
        out.append("nullable")
    if schema.get("x-kubernetes-list-type"):
        keys = schema.get("x-kubernetes-list-map-keys")
        out.append(f"list type {schema['x-kubernetes-list-type']}" + (f" by {', '.join(keys)}" if keys else ""))
    return out


def _rules(schema: dict) -> list[str]:
    out = []
    for rule in schema.get("x-kubernetes-validations") or []:
        message = rule.get("message") or rule.get("messageExpression") or ""
        out.append(f"{message} (`{rule.get('rule', '')}`)" if message else f"`{rule.get('rule', '')}`")
    return out


def fields(schema: dict, path: str, required: bool = False) -> list[Field]:
    """``schema`` and everything below it, depth first in schema order."""
    constraints, rules = _constraints(schema), _rules(schema)
    # Scalar items and map values have no row of their own: their limits join the parent's.
    for below, each in ((schema.get("items"), "each item"), (schema.get("additionalProperties"), "each value")):
        if isinstance(below, dict) and not (below.get("properties") or below.get("items")):
            constraints += [f"{each}: {c}" for c in _constraints(below)]
            rules += [f"{each}: {r}" for r in _rules(below)]
    rows = [Field(path=path, type=_type_of(schema), required=required,
                  description=str(schema.get("description") or ""), default=schema.get("default"),
                  constraints=constraints, rules=rules)]
    needed = set(schema.get("required") or [])
    for name, child in (schema.get("properties") or {}).items():
        rows += fields(child, f"{path}.{name}", name in needed)
    # Array items and map values: their fields, under path[] and path.<key>. Their own row only
    # when it says more than its parent's (a rule or a constraint on each item).
    for below, sub_path in ((schema.get("items"), f"{path}[]"), (schema.get("additionalProperties"), f"{path}.<key>")):
        if isinstance(below, dict) and (below.get("properties") or below.get("items")):
            sub = fields(below, sub_path)
            rows += sub if (sub[0].rules or sub[0].constraints) else sub[1:]
    return rows


def _cell(text: str) -> str:
    """Markdown table cell: one line, pipes and angle brackets escaped, long words breakable."""
    text = " ".join(str(text).split())
    text = text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
    # Only prose: a Markdown code span (odd pieces between backticks) would print the tag.
    pieces = text.split("`")
    pieces[::2] = [" ".join(_breakable(word) for word in piece.split(" ")) for piece in pieces[::2]]
    return "`".join(pieces)


def _breakable(word: str) -> str:
    """A word longer than a narrow column (a CEL example in a description) with ``<wbr>`` after
    each dot: unbroken, it would set the column's least width and push the table off the page."""
    return word.replace(".", ".<wbr>") if len(word) > LONG_WORD else word


def _code_cell(text: str) -> str:
    """Code in a table cell: HTML, because a Markdown code span would print an escaped pipe as ``\\|``.

    Brackets become entities too: Markdown still reads inline HTML's text, and a regex such as
    ``3[4-9]|[4-9][0-9]`` would otherwise parse as a reference link (mkdocs --strict refuses it)."""
    text = html.escape(" ".join(str(text).split()), quote=False)
    for char, entity in (("|", "&#124;"), ("[", "&#91;"), ("]", "&#93;")):
        text = text.replace(char, entity)
    return "<code>" + text + "</code>"


def path_cell(path: str) -> str:
    """A field path in a table cell: code that may break after a dot, never inside a name.

    A browser breaks a long code span anywhere (``spec.engines[].mem`` / ``bers``); ``<wbr>``
    after each dot gives it better places, and the site's stylesheet forbids the others
    (``code.field-path``)."""
    escaped = html.escape(path, quote=False).replace("|", "&#124;")
    return '<code class="field-path">' + escaped.replace(".", ".<wbr>") + "</code>"


def _fmt_default(value: object) -> str:
    if value is None:
        return ""
    return _code_cell(yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("..."))


def _table(rows: list[Field]) -> list[str]:
    out = ["| field | type | required | default | description |", "|---|---|---|---|---|"]
    for row in rows:
        notes = [_cell(row.description)] if row.description else []
        notes += [_cell(c) for c in row.constraints]
        notes += ["rule: " + _rule_cell(r) for r in row.rules]
        out.append(" | ".join([
            f"| {path_cell(row.path)}", _cell(row.type), "yes" if row.required else "", _fmt_default(row.default),
            "<br>".join(notes) + " |",
        ]))
    return out


def _rule_cell(rule: str) -> str:
    # The rule's CEL is in backticks: keep it as code, escape only pipes; the message is text.
    head, sep, code = rule.partition(" (`")
    if not sep:
        return _code_cell(rule.strip("`"))
    return f"{_cell(head)} ({_code_cell(code.removesuffix('`)'))})"


def page(xrd: dict) -> str:
    """The reference page of one XRD."""
    spec = xrd["spec"]
    names = spec["names"]
    version = next(v for v in spec["versions"] if v.get("served", True))
    schema = version["schema"]["openAPIV3Schema"]
    props = schema.get("properties") or {}
    lines = [
        f"# {names['kind']}",
        "",
        ("<!-- Generated by `make docs` (python -m modelplane.dev.apidocs) from "
         f"apis/{names['plural']}/definition.yaml. Do not edit. -->"),
        "",
        _cell((props.get("spec") or {}).get("description") or ""),
        "",
        "| property | value |",
        "|---|---|",
        f"| API version | `{spec['group']}/{version['name']}` |",
        f"| scope | {spec.get('scope', 'Namespaced')} |",
        f"| plural | `{names['plural']}` |",
    ]
    if names.get("shortNames"):
        lines.append(f"| short names | {', '.join(f'`{n}`' for n in names['shortNames'])} |")
    if names.get("categories"):
        lines.append(f"| categories | {', '.join(f'`{n}`' for n in names['categories'])} |")
    columns = version.get("additionalPrinterColumns") or []
    if columns:
        lines += ["", "## Printer columns", "",
                  f"What `kubectl get {names['plural']}` shows, besides NAME and AGE (Crossplane adds SYNCED and READY):",
                  "", "| column | type | from |", "|---|---|---|"]
        lines += [f"| {c['name']} | {c.get('type', '')} | `{c['jsonPath']}` |" for c in columns]
    for part in ("spec", "status"):
        if part not in props:
            continue
        lines += ["", f"## {part}", ""]
        rows = fields(props[part], part, part in (schema.get("required") or []))
        lines += _table(rows)
    lines += ["", ("Crossplane adds the fields every composite resource has (`spec.crossplane`, "
                   "`status.conditions`, ...); they are not listed here."), ""]
    return "\n".join(lines)


def pages(apis: Path = paths.APIS) -> dict[Path, str]:
    """Page path -> text, for every XRD under ``apis``."""
    out = {}
    for definition in sorted(apis.glob("*/definition.yaml")):
        xrd = yaml.safe_load(definition.read_text(encoding="utf-8"))
        out[OUT / f"{xrd['spec']['names']['kind'].lower()}.md"] = page(xrd)
    return out


def stale(apis: Path = paths.APIS) -> list[Path]:
    """Pages whose committed text differs from what the XRDs give (missing ones included)."""
    return [p for p, text in pages(apis).items() if not p.is_file() or p.read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(prog="python -m modelplane.dev.apidocs")
    args.add_argument("--check", action="store_true", help="write nothing; exit 1 naming stale pages")
    opts = args.parse_args(argv)
    if opts.check:
        old = stale()
        for path in old:
            print(f"stale: {path.relative_to(paths.ROOT)} (run make docs)", file=sys.stderr)
        return 1 if old else 0
    OUT.mkdir(parents=True, exist_ok=True)
    for path, text in pages().items():
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(paths.ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
