"""What the validator reports: a ``Problem`` (path + message) inside one schema
walk, and a ``Finding`` (a problem placed on a resource in a file).

Paths are Kubernetes field paths: ``spec.engines[0].members[1].worker.nodes``;
map entries read ``metadata.labels[app]``; the resource root is ``""``.

Each problem has an error type, named as the API server names it in a Status
cause's ``reason`` (``FieldValueRequired``...): ``error_type`` reads it off the
message (our messages start as the server's do: ``Required value``,
``Unsupported value: ...``), unless the problem states it (a CEL rule's
message is free text; the server reports it as ``FieldValueInvalid``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

REQUIRED = "FieldValueRequired"
NOT_SUPPORTED = "FieldValueNotSupported"
TOO_LONG = "FieldValueTooLong"
TOO_MANY = "FieldValueTooMany"
TYPE_INVALID = "FieldValueTypeInvalid"
INVALID = "FieldValueInvalid"
DUPLICATE = "FieldValueDuplicate"
FORBIDDEN = "FieldValueForbidden"
# Not a field error: with strict field validation (kubectl's default) the server refuses the
# request while decoding it ("strict decoding error: unknown field ..."), a 400 with no causes.
UNKNOWN_FIELD = "UnknownField"

# The errors that make kube-apiserver skip every CEL rule of the object (hasBlockingErr,
# k8s.io/apiextensions-apiserver@v0.35.4 pkg/registry/customresource/strategy.go:404-411),
# and the one error it reports instead, at no field (<nil>) with value null.
BLOCKING = frozenset({NOT_SUPPORTED, REQUIRED, TOO_LONG, TOO_MANY, TYPE_INVALID})
RULES_NOT_CHECKED = ("Invalid value: null: some validation rules were not checked because the object was invalid; "
                     "correct the existing errors to complete validation")

_PREFIXES = (("Required value", REQUIRED), ("Unsupported value", NOT_SUPPORTED), ("Too long", TOO_LONG),
             ("Too many", TOO_MANY), ("Duplicate value", DUPLICATE), ("Forbidden", FORBIDDEN),
             ("unknown field", UNKNOWN_FIELD))
# kube-openapi's type failure ("must be of type integer", for int-or-string "integer,string").
_TYPE_FAILURES = (": must be of type ", ": must be an integer or a string", ": must be a quantity")


def error_type(message: str) -> str:
    """The API server's error type (a Status cause's reason) for one of our messages."""
    for prefix, kind in _PREFIXES:
        if message.startswith(prefix):
            return kind
    if message.startswith("Invalid value") and any(t in message for t in _TYPE_FAILURES):
        return TYPE_INVALID
    return INVALID


@dataclass(frozen=True, order=True)
class Problem:
    """One violation at one field path."""

    path: str
    message: str
    reason: str = field(default="", compare=False)  # the error type, when the message cannot tell

    @property
    def error_type(self) -> str:
        return self.reason or error_type(self.message)

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


@dataclass(frozen=True, order=True)
class Finding:
    """A problem with one resource of one source file.

    ``resource`` reads ``Kind/name`` (``Kind/namespace/name`` when namespaced).
    ``missing_schema`` marks the "could not find CRD/XRD" outcome, which is not
    a validation failure of the resource itself.
    """

    source: str
    resource: str
    path: str
    message: str
    missing_schema: bool = False
    reason: str = field(default="", compare=False)  # as Problem.reason
    refused_by: str = ""  # admitted, but this composition function refuses it (``refusals``)

    @property
    def error_type(self) -> str:
        return self.reason or error_type(self.message)

    def __str__(self) -> str:
        where = f"{self.source}: " if self.source else ""
        field = f"{self.path}: " if self.path else ""
        return f"{where}{self.resource}: {field}{self.message}"


def child(path: str, key: str) -> str:
    """The path of property ``key`` below ``path``."""
    return f"{path}.{key}" if path else key


def index(path: str, i: int) -> str:
    """The path of list item ``i`` below ``path``."""
    return f"{path}[{i}]"


def entry(path: str, key: str) -> str:
    """The path of map entry ``key`` (additionalProperties) below ``path``."""
    return f"{path}[{key}]"


def show(value: object, limit: int = 80) -> str:
    """A short JSON-ish rendering of a value for messages (objects and lists by type)."""
    import json

    if isinstance(value, dict):
        return '"object"'
    if isinstance(value, list):
        return '"array"'
    try:
        text = json.dumps(value, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
