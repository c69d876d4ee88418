"""``x-kubernetes-validations``: CEL rules, evaluated where they are declared.

``evaluate`` walks a value and its schema together. At every node that holds a
value of the declared type it runs the node's rules with ``self`` bound to the
value (at the root, ``self.metadata`` exposes only name and generateName, as in
Kubernetes). Transition rules (those reading ``oldSelf``) need a stored object
and are skipped offline. A failed rule is reported with its ``message``, else
its ``messageExpression`` result, else ``failed rule: <rule>``, at
``fieldPath`` (relative to the node) when given, else at the node. A rule that
cannot be evaluated is reported as such.

``check_xrd`` checks an XRD before anything is validated against it: an
explicit scope, a structural schema, and rules (and message expressions) that
compile.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from . import openapi, structural, xrd
from .finding import INVALID, Problem, child, entry, index

_OLD_SELF = re.compile(r"\boldSelf\b")
_FIELD_PATH_KEY = re.compile(r"\[['\"]([^'\"]*)['\"]\]")


def is_transition_rule(rule: str) -> bool:
    """True when ``rule`` reads ``oldSelf`` (it then only runs on updates)."""
    return bool(_OLD_SELF.search(rule))


def evaluate(value: Any, schema: Mapping[str, Any], path: str = "", *,
             definitions: openapi.Definitions = None, resource: bool = True,
             compile_errors: bool = True) -> list[Problem]:
    """Every failed or failing rule in ``schema`` for ``value``.

    ``compile_errors=False`` skips rules that do not compile instead of
    reporting them (for upstream CRDs, whose rules may use CEL libraries our
    engine lacks; that is our gap, not a problem of the manifest).
    """
    out: list[Problem] = []
    _walk(value, schema, path, definitions, out, resource, compile_errors)
    return out


def _walk(value: Any, schema: Mapping[str, Any], path: str, defs: openapi.Definitions,
          out: list[Problem], root: bool, compile_errors: bool) -> None:
    schema = openapi.resolve(schema, defs)
    if value is None or not openapi.type_matches(value, schema):
        return  # the schema walk reports the type; rules would only add noise
    rules = schema.get("x-kubernetes-validations") or []
    if rules:
        self_value = value
        if root and isinstance(value, dict) and isinstance(value.get("metadata"), dict):
            meta = value["metadata"]
            self_value = {**value, "metadata": {k: meta[k] for k in ("name", "generateName") if k in meta}}
        for rule in rules:
            problem = _check_rule(rule, self_value, path, compile_errors)
            if problem:
                out.append(problem)
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if root and key == "metadata":
                continue
            if key in props:
                _walk(item, props[key], child(path, key), defs, out, False, compile_errors)
            elif isinstance(extra, Mapping):
                _walk(item, extra, entry(path, key), defs, out, False, compile_errors)
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            _walk(item, schema["items"], index(path, i), defs, out, False, compile_errors)


def _check_rule(rule: Mapping[str, Any], self_value: Any, path: str, compile_errors: bool) -> Problem | None:
    from modelplane.cel import CELError, compile, evaluate_rule

    expr = rule.get("rule", "")
    if is_transition_rule(expr):
        return None
    at = _field_path(path, rule.get("fieldPath"))
    if not compile_errors:
        try:
            compile(expr, library="kubernetes")
        except CELError:
            return None
    ok, error = evaluate_rule(expr, self_value)
    if ok:
        return None
    if error is not None:
        if not compile_errors and ("unknown function" in error or "undeclared reference" in error):
            return None
        return Problem(at, f"rule could not be evaluated: {error} (rule: {expr})", reason=INVALID)
    return Problem(at, _message(rule, self_value, expr), reason=_reason(rule))


def _reason(rule: Mapping[str, Any]) -> str:
    """The error type of a failed rule: its ``reason`` (Forbidden, Required, Duplicate), else
    Invalid (fieldErrorForReason, k8s.io/apiextensions-apiserver@v0.35.4
    pkg/apiserver/schema/cel/validation.go:678-691)."""
    reason = rule.get("reason")
    return reason if reason in ("FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate") else INVALID


def has_rules(schema: Mapping[str, Any]) -> bool:
    """Whether ``schema`` declares a CEL rule anywhere (``$ref`` is not followed: only the
    built-in kinds' swagger uses it, and it declares none)."""
    if not isinstance(schema, Mapping):
        return False
    if schema.get("x-kubernetes-validations"):
        return True
    subs = list((schema.get("properties") or {}).values())
    subs += [schema[k] for k in ("items", "additionalProperties") if isinstance(schema.get(k), Mapping)]
    return any(has_rules(sub) for sub in subs)


def _message(rule: Mapping[str, Any], self_value: Any, expr: str) -> str:
    from modelplane.cel import CELError, compile

    if rule.get("messageExpression"):
        try:
            text = compile(rule["messageExpression"], library="kubernetes").evaluate({"self": self_value})
        except CELError as err:
            return f"failed rule: {expr} (messageExpression failed: {err.message})"
        if isinstance(text, str) and text.strip():
            return text
    if rule.get("message"):
        return str(rule["message"])
    return f"failed rule: {expr}"


def _field_path(path: str, field_path: str | None) -> str:
    """Join a rule's relative ``fieldPath`` (``.a.b``, ``.m['k']``) to the node path."""
    if not field_path:
        return path
    rel = _FIELD_PATH_KEY.sub(lambda m: f"[{m.group(1)}]", field_path).lstrip(".")
    if not path:
        return rel
    return f"{path}{rel}" if rel.startswith("[") else f"{path}.{rel}"


# --------------------------------------------------------------------------- XRD checks


def check_xrd(doc: Mapping[str, Any]) -> list[Problem]:
    """Problems with an XRD itself: scope, structural schema, rules (paths name the version)."""
    from modelplane.cel import CELError, compile

    out: list[Problem] = []
    spec = doc.get("spec") or {}
    if not spec.get("scope"):
        out.append(Problem("spec.scope", "Required value: write the scope explicitly (Namespaced or Cluster); "
                                         "crossplane's offline validate reads a missing scope as LegacyCluster"))
    for i, version in enumerate(spec.get("versions") or []):
        base = f"spec.versions[{i}].schema.openAPIV3Schema"
        source = ((version.get("schema") or {}).get("openAPIV3Schema"))
        if not isinstance(source, Mapping):
            out.append(Problem(base, "Required value: every version needs an openAPIV3Schema"))
            continue
        crd_schema = xrd.to_crd({**doc, "spec": {**spec, "versions": [version]}})
        schema = crd_schema["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        for p in structural.check(schema):
            out.append(Problem(f"{base}.{p.path}" if p.path != "<root>" else base, p.message))
        for rule_path, rule in _rules(schema, ""):
            at = f"{base}.{rule_path}" if rule_path else base
            for key in ("rule", "messageExpression"):
                expr = rule.get(key)
                if key == "rule" and not expr:
                    out.append(Problem(at, "x-kubernetes-validations: rule: Required value"))
                if not expr:
                    continue
                try:
                    compile(expr, library="kubernetes")
                except CELError as err:
                    out.append(Problem(at, f"x-kubernetes-validations: {key} {expr!r} does not compile: "
                                           f"{err.message}"))
    return out


def _rules(schema: Mapping[str, Any], path: str):
    for rule in schema.get("x-kubernetes-validations") or []:
        yield path, rule
    for key, sub in (schema.get("properties") or {}).items():
        yield from _rules(sub, f"{path}.properties.{key}" if path else f"properties.{key}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), Mapping):
            yield from _rules(schema[key], f"{path}.{key}" if path else key)
