"""x-kubernetes-validations evaluated with CEL, plus check_xrd, on small synthetic XRDs."""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from modelplane.validate import Validator, check_xrd, rules

from .xrds import widget, xrd


def validator_for(doc: dict) -> Validator:
    v = Validator.from_paths([])
    v.add_document(doc, "widgets.yaml")
    return v


def spec_with(props: dict, *rules_: dict, required: list[str] | None = None) -> dict:
    s = {"type": "object", "properties": props, "x-kubernetes-validations": list(rules_)}
    if required:
        s["required"] = required
    return s


INT = {"type": "integer"}
STR = {"type": "string"}


@dataclass
class Case:
    name: str
    schema: dict
    spec: dict
    want: list[tuple[str, str]] = field(default_factory=list)  # (path, message substring)
    root: dict | None = None
    name_: str = "w"


INT_OR_STRING = {"x-kubernetes-int-or-string": True}
NOT_CHECKED = "Invalid value: null: some validation rules were not checked because the object was invalid"

CASES = [
    # cel-go (the API server) compares an int-or-string holding a string with an int as unequal, no error.
    Case("int-or-string string == int is false", spec_with({"surge": INT_OR_STRING},
                                                           {"rule": "!(self.surge == 0)", "message": "zero"}),
         {"surge": "25%"}),
    Case("int-or-string int == int compares", spec_with({"surge": INT_OR_STRING},
                                                        {"rule": "self.surge != 0", "message": "zero"}),
         {"surge": 0}, [("spec", "zero")]),
    Case("rule holds", spec_with({"min": INT, "max": INT}, {"rule": "self.min <= self.max", "message": "min>max"}),
         {"min": 1, "max": 2}),
    Case("message reported at node", spec_with({"min": INT, "max": INT},
                                               {"rule": "self.min <= self.max", "message": "min must be <= max"}),
         {"min": 3, "max": 2}, [("spec", "min must be <= max")]),
    Case("fieldPath moves the report", spec_with({"min": INT, "max": INT}, {
        "rule": "self.min <= self.max", "message": "too small", "fieldPath": ".max"}),
         {"min": 3, "max": 2}, [("spec.max", "too small")]),
    Case("default message names the rule", spec_with({"a": INT}, {"rule": "self.a > 0"}), {"a": 0},
         [("spec", "failed rule: self.a > 0")]),
    Case("messageExpression", spec_with({"a": INT}, {"rule": "self.a > 0",
                                                      "messageExpression": "'a is ' + string(self.a)"}),
         {"a": -2}, [("spec", "a is -2")]),
    Case("runtime error is reported", spec_with({"a": STR}, {"rule": "size(self.a) / 0 == 1", "message": "never"}),
         {"a": "x"}, [("spec", "rule could not be evaluated")]),
    Case("transition rule skipped", spec_with({"a": INT}, {"rule": "self.a == oldSelf.a", "message": "immutable"}),
         {"a": 1}),
    Case("rules on list items, per item", spec_with({"engines": {"type": "array", "items": {
        "type": "object", "properties": {"copies": INT},
        "x-kubernetes-validations": [{"rule": "self.copies >= 1", "message": "copies >= 1"}]}}}),
         {"engines": [{"copies": 1}, {"copies": 0}]}, [("spec.engines[1]", "copies >= 1")]),
    Case("rules on map values", spec_with({"m": {"type": "object", "additionalProperties": {
        "type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('x')", "message": "x-prefix"}]}}}),
         {"m": {"good": "xa", "bad": "ya"}}, [("spec.m[bad]", "x-prefix")]),
    Case("absent field: its rules do not run", spec_with({"o": {"type": "object", "properties": {"a": INT},
                                                                "x-kubernetes-validations": [{"rule": "false"}]}}),
         {}),
    Case("strings extension", spec_with({"s": STR}, {"rule": "self.s.lowerAscii() == self.s", "message": "lower"}),
         {"s": "ABC"}, [("spec", "lower")]),
    Case("defaults apply before rules", spec_with({"mode": {"type": "string", "default": "Unified"}},
                                                  {"rule": "self.mode == 'Unified'", "message": "mode"}), {}),
    Case("root rule sees metadata.name", {"type": "object", "properties": {}}, {},
         [("", "must be named default")],
         root={"x-kubernetes-validations": [{"rule": "self.metadata.name == 'default'",
                                             "message": "must be named default"}]}),
    Case("root rule passes", {"type": "object", "properties": {}}, {},
         root={"x-kubernetes-validations": [{"rule": "self.metadata.name == 'default'"}]}, name_="default"),
    # kube-apiserver skips every rule once a value is missing, unsupported, too long, too many
    # or of the wrong type, and says so once, at no field (tests/upstream measures it).
    Case("a missing field stops the rules", spec_with({"a": INT, "b": INT},
                                                      {"rule": "self.a > self.b", "message": "a > b"}, required=["a"]),
         {"b": 1}, [("spec.a", "Required value"), ("", NOT_CHECKED)]),
    Case("a wrong type stops the rules", spec_with({"a": INT, "s": STR}, {"rule": "self.a > 0", "message": "a > 0"}),
         {"a": 0, "s": 1}, [("spec.s", "must be of type string"), ("", NOT_CHECKED)]),
    Case("an unsupported value stops the rules", spec_with({"a": INT, "e": {"type": "string", "enum": ["x"]}},
                                                           {"rule": "self.a > 0", "message": "a > 0"}),
         {"a": 0, "e": "y"}, [("spec.e", "Unsupported value"), ("", NOT_CHECKED)]),
    Case("a value below its minimum does not", spec_with({"a": {"type": "integer", "minimum": 1}},
                                                         {"rule": "self.a > 5", "message": "a > 5"}),
         {"a": 0}, [("spec.a", "should be greater than or equal to 1"), ("spec", "a > 5")]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_rules(case: Case) -> None:
    v = validator_for(xrd(case.schema, root=case.root))
    got = [(f.path, f.message) for f in v.validate_document(widget(case.spec, name=case.name_))]
    assert len(got) == len(case.want), f"-want {case.want}\n+got {got}"
    for (want_path, want_msg), (path, msg) in zip(case.want, got):
        assert path == want_path and want_msg in msg, f"-want {(want_path, want_msg)}\n+got {(path, msg)}"


def test_error_types() -> None:
    # The server's Status cause reasons: a rule's `reason` when it names one, else Invalid.
    schema = spec_with({"a": INT, "r": INT, "e": {"type": "string", "enum": ["x"]}},
                       {"rule": "self.a > 0", "message": "a > 0", "reason": "FieldValueForbidden"},
                       {"rule": "self.a > 1", "message": "a > 1"}, required=["r"])
    v = validator_for(xrd(schema))
    got = [(f.path, f.error_type) for f in v.validate_document(widget({"a": 0}))]
    assert got == [("spec.r", "FieldValueRequired"), ("", "FieldValueInvalid")]
    got = [(f.path, f.error_type) for f in v.validate_document(widget({"a": 0, "r": 1}))]
    assert got == [("spec", "FieldValueForbidden"), ("spec", "FieldValueInvalid")]
    got = [(f.path, f.error_type) for f in v.validate_document(widget({"a": "0", "r": 1, "e": "y", "u": 1}))]
    assert got == [("spec.a", "FieldValueTypeInvalid"), ("spec.e", "FieldValueNotSupported"),
                   ("spec.u", "UnknownField"), ("", "FieldValueInvalid")]


def test_root_rule_cannot_read_labels() -> None:
    # Kubernetes exposes only name and generateName of metadata to root rules.
    root = {"x-kubernetes-validations": [{"rule": "!has(self.metadata.labels)", "message": "labels hidden"}]}
    v = validator_for(xrd({"type": "object", "properties": {}}, root=root))
    assert v.validate_document(widget({}, labels={"a": "b"})) == []


def test_transition_rule_detection() -> None:
    assert rules.is_transition_rule("self.a == oldSelf.a")
    assert not rules.is_transition_rule("self.oldSelfish == 1")


@dataclass
class XRDCase:
    name: str
    doc: dict
    want: list[tuple[str, str]] = field(default_factory=list)


BASE = "spec.versions[0].schema.openAPIV3Schema"
XRD_CASES = [
    XRDCase("clean", xrd()),
    XRDCase("missing scope", xrd(scope=None), [("spec.scope", "write the scope explicitly")]),
    XRDCase("rule does not compile", xrd(spec_with({"a": INT}, {"rule": "self.a >"})),
            [(f"{BASE}.properties.spec", "does not compile")]),
    XRDCase("messageExpression does not compile", xrd(spec_with({"a": INT}, {"rule": "true",
                                                                            "messageExpression": "'a' +"})),
            [(f"{BASE}.properties.spec", "messageExpression")]),
    XRDCase("node without type", xrd({"type": "object", "properties": {"a": {"description": "untyped"}}}),
            [(f"{BASE}.properties.spec.properties.a", "type: Required value")]),
    XRDCase("object that can hold nothing", xrd({"type": "object", "properties": {"o": {"type": "object"}}}),
            [(f"{BASE}.properties.spec.properties.o", "can hold no fields")]),
    XRDCase("array without items", xrd({"type": "object", "properties": {"l": {"type": "array"}}}),
            [(f"{BASE}.properties.spec.properties.l", "items: Required value")]),
    XRDCase("list-map key must be required", xrd({"type": "object", "properties": {"l": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "properties": {"name": STR}}}}}),
            [(f"{BASE}.properties.spec.properties.l", "must be required or have a default")]),
    XRDCase("int-or-string without type is structural", xrd({"type": "object", "properties": {"p": {
        "x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}}})),
    XRDCase("type inside a junctor", xrd({"type": "object", "properties": {"a": STR},
                                          "oneOf": [{"type": "object", "required": ["a"]}]}),
            [(f"{BASE}.properties.spec.oneOf[0]", "type: Forbidden")]),
]


@pytest.mark.parametrize("case", XRD_CASES, ids=lambda c: c.name)
def test_check_xrd(case: XRDCase) -> None:
    got = [(p.path, p.message) for p in check_xrd(case.doc)]
    assert len(got) == len(case.want), f"-want {case.want}\n+got {got}"
    for (want_path, want_msg), (path, msg) in zip(case.want, got):
        assert path == want_path and want_msg in msg, f"-want {(want_path, want_msg)}\n+got {(path, msg)}"
