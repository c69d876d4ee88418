"""The Widget and Gadget schemas and the document cases of test_validator.py
(tests/upstream puts the same definitions and cases before the API server and
beta validate)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .xrds import widget

SPEC = {"type": "object", "required": ["size"], "properties": {
    "size": {"type": "integer", "minimum": 1},
    "mode": {"type": "string", "enum": ["Fast", "Slow"], "default": "Fast"}}}
# The schema of the plain Gadget CRD beside the Widget XRD: one field of each kind a null can sit in.
GADGET = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "on": {"type": "boolean"},
    "obj": {"type": "object", "properties": {"a": {"type": "string"}}},
    "list": {"type": "array", "items": {"type": "string"}},
    "text": {"type": "string"},
    "maybe": {"type": "string", "nullable": True},
    "port": {"x-kubernetes-int-or-string": True},
    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}}}


def gadget(spec: dict) -> dict:
    return {"apiVersion": "example.org/v1", "kind": "Gadget", "metadata": {"name": "g", "namespace": "team"},
            "spec": spec}


@dataclass
class Case:
    name: str
    doc: dict
    want: list[tuple[str, str]] = field(default_factory=list)
    warn: list[str] = field(default_factory=list)  # paths of `validate`'s warnings (beta validate rejects)


CASES = [
    Case("valid", widget({"size": 1})),
    Case("required", widget({}), [("spec.size", "Required value")]),
    Case("unknown field", widget({"size": 1, "colour": "red"}), [("spec.colour", 'unknown field "colour"')]),
    Case("crossplane block accepted", widget({"size": 1, "crossplane": {
        "compositionRef": {"name": "c"}, "compositionUpdatePolicy": "Manual",
        "resourceRefs": [{"apiVersion": "v1", "kind": "Service", "name": "s"}]}})),
    Case("crossplane block checked", widget({"size": 1, "crossplane": {"compositionUpdatePolicy": "Sometimes"}}),
         [("spec.crossplane.compositionUpdatePolicy", "Unsupported value")]),
    Case("namespaced XR refs carry no namespace", widget({"size": 1, "crossplane": {"resourceRefs": [
        {"apiVersion": "v1", "kind": "Service", "name": "s", "namespace": "x"}]}}),
         [("spec.crossplane.resourceRefs[0].namespace", "unknown field")]),
    Case("status conditions need their fields", {**widget({"size": 1}), "status": {"conditions": [
        {"type": "Ready", "status": "True"}]}},
         [("status.conditions[0].lastTransitionTime", "Required value"),
          ("status.conditions[0].reason", "Required value")]),
    Case("XR name at most 63", widget({"size": 1}, name="w" * 64), [("metadata.name", "Too long")]),
    Case("plain CRD", {"apiVersion": "example.org/v1", "kind": "Gadget", "metadata": {"name": "g"},
                       "spec": {"on": "yes"}}, [("spec.on", "must be of type boolean")]),
    # A null where the field is not nullable: kube-apiserver drops it before validating (and
    # so accepts it), crossplane beta validate rejects it as a wrong type; `validate` follows
    # the server and warns. Measured with both (tests/upstream; differences.py lists these).
    Case("null object", gadget({"obj": None}), warn=["spec.obj"]),
    Case("null array", gadget({"list": None}), warn=["spec.list"]),
    Case("null scalar", gadget({"text": None}), warn=["spec.text"]),
    Case("null int-or-string", gadget({"port": None}), warn=["spec.port"]),
    Case("null preserve-unknown-fields object", gadget({"free": None}), warn=["spec.free"]),
    Case("null map value", gadget({"labels": {"a": None}}), warn=["spec.labels[a]"]),
    Case("null inside an object", gadget({"obj": {"a": None}}), warn=["spec.obj.a"]),
    # ...and where all three agree.
    Case("null where nullable", gadget({"maybe": None})),
    Case("null list item", gadget({"list": [None]}), [("spec.list[0]", "Invalid value: null: must be of type string")]),
    Case("null with a default", widget({"size": 1, "mode": None})),
    # Dropped, then missing: the server says "Required value", beta validate "must be of type
    # integer" at the same path; both reject, so no warning.
    Case("null in a required field", widget({"size": None}), [("spec.size", "Required value")]),
]
