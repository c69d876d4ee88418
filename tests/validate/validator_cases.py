"""The Widget and Gadget schemas and the document cases of test_validator.py
(tests/upstream puts the same definitions and cases before the API server and
beta validate)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .xrds import widget

SPEC = {"type": "object", "required": ["size"], "properties": {
    "size": {"type": "integer", "minimum": 1},
    "mode": {"type": "string", "enum": ["Fast", "Slow"], "default": "Fast"}}}
# The schema of the plain Gadget CRD beside the Widget XRD.
GADGET = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"on": {"type": "boolean"}}}}}


@dataclass
class Case:
    name: str
    doc: dict
    want: list[tuple[str, str]] = field(default_factory=list)


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
]
