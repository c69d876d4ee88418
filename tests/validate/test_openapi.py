"""The structural OpenAPI walk: one row per keyword and Kubernetes extension."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from modelplane.validate import openapi


@dataclass
class Case:
    name: str
    schema: dict
    value: Any
    want: list[str] = field(default_factory=list)  # "path: message-substring"; [] means valid


def obj(props: dict, **kw: Any) -> dict:
    return {"type": "object", "properties": props, **kw}


INT_OR_STRING = {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
MAP_LIST = {
    "type": "array",
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["name"],
    "items": obj({"name": {"type": "string"}, "n": {"type": "integer"}}, required=["name"]),
}

CASES = [
    Case("string ok", obj({"a": {"type": "string"}}), {"a": "x"}),
    Case("string wrong type", obj({"a": {"type": "string"}}), {"a": 1}, ["a: must be of type string"]),
    Case("integer rejects bool", obj({"a": {"type": "integer"}}), {"a": True}, ["a: must be of type integer"]),
    Case("integer accepts integral float", obj({"a": {"type": "integer"}}), {"a": 2.0}),
    Case("integer rejects fraction", obj({"a": {"type": "integer"}}), {"a": 2.5}, ["a: must be of type integer"]),
    Case("number accepts int", obj({"a": {"type": "number"}}), {"a": 2}),
    Case("boolean", obj({"a": {"type": "boolean"}}), {"a": "true"}, ["a: must be of type boolean"]),
    Case("array type", obj({"a": {"type": "array", "items": {"type": "string"}}}), {"a": "x"},
         ["a: must be of type array"]),
    Case("item type with index", obj({"a": {"type": "array", "items": {"type": "string"}}}), {"a": ["x", 2]},
         ["a[1]: must be of type string"]),
    Case("required", obj({"a": {"type": "string"}}, required=["a"]), {}, ["a: Required value"]),
    Case("enum", obj({"a": {"type": "string", "enum": ["X", "Y"]}}), {"a": "Z"},
         ['a: Unsupported value: "Z": supported values: "X", "Y"']),
    Case("minimum", obj({"a": {"type": "integer", "minimum": 1}}), {"a": 0}, ["a: greater than or equal to 1"]),
    Case("exclusive minimum", obj({"a": {"type": "integer", "minimum": 1, "exclusiveMinimum": True}}), {"a": 1},
         ["a: should be greater than 1"]),
    Case("maximum", obj({"a": {"type": "integer", "maximum": 8}}), {"a": 9}, ["a: less than or equal to 8"]),
    Case("exclusive maximum", obj({"a": {"type": "number", "maximum": 8, "exclusiveMaximum": True}}), {"a": 8},
         ["a: should be less than 8"]),
    Case("maxLength", obj({"a": {"type": "string", "maxLength": 3}}), {"a": "abcd"}, ["a: Too long"]),
    Case("minLength", obj({"a": {"type": "string", "minLength": 1}}), {"a": ""}, ["a: at least 1 chars"]),
    Case("pattern", obj({"a": {"type": "string", "pattern": "^[a-z]+$"}}), {"a": "A1"}, ["a: should match"]),
    Case("minItems", obj({"a": {"type": "array", "items": {"type": "string"}, "minItems": 1}}), {"a": []},
         ["a: at least 1 items"]),
    Case("maxItems", obj({"a": {"type": "array", "items": {"type": "string"}, "maxItems": 1}}), {"a": ["x", "y"]},
         ["a: Too many: 2"]),
    Case("minProperties", obj({"a": {"type": "object", "additionalProperties": {"type": "string"},
                                     "minProperties": 1}}), {"a": {}}, ["a: at least 1 properties"]),
    Case("maxProperties", obj({"a": {"type": "object", "additionalProperties": {"type": "string"},
                                     "maxProperties": 1}}), {"a": {"x": "1", "y": "2"}}, ["a: at most 1 properties"]),
    Case("date-time ok", obj({"t": {"type": "string", "format": "date-time"}}), {"t": "2024-01-01T00:00:00Z"}),
    Case("date-time bad", obj({"t": {"type": "string", "format": "date-time"}}), {"t": "yesterday"},
         ["t: RFC 3339"]),
    Case("nullable allows null", obj({"a": {"type": "string", "nullable": True}}), {"a": None}),
    Case("null rejected", obj({"a": {"type": "string"}}), {"a": None}, ["a: Invalid value: null"]),
    Case("unknown field rejected with path", obj({"spec": obj({"engines": {"type": "array", "items": obj(
        {"name": {"type": "string"}})}})}), {"spec": {"engines": [{"name": "a"}, {"nmae": "b"}]}},
         ['spec.engines[1].nmae: unknown field "nmae"']),
    Case("additionalProperties schema", obj({"m": {"type": "object", "additionalProperties": {"type": "integer"}}}),
         {"m": {"x": 1, "y": "no"}}, ["m[y]: must be of type integer"]),
    Case("additionalProperties true", obj({"m": {"type": "object", "additionalProperties": True}}),
         {"m": {"anything": {"goes": 1}}}),
    Case("preserve-unknown keeps extra fields", obj({"v": {"type": "object",
                                                           "x-kubernetes-preserve-unknown-fields": True}}),
         {"v": {"any": [1, {"deep": True}]}}),
    Case("preserve-unknown still checks declared fields", obj({"v": obj(
        {"n": {"type": "integer"}}, **{"x-kubernetes-preserve-unknown-fields": True})}), {"v": {"n": "x", "o": 1}},
         ["v.n: must be of type integer"]),
    Case("int-or-string int", obj({"p": INT_OR_STRING}), {"p": 8080}),
    Case("int-or-string string", obj({"p": INT_OR_STRING}), {"p": "http"}),
    Case("int-or-string rejects list", obj({"p": INT_OR_STRING}), {"p": [1]},
         ["p: must be an integer or a string"]),
    Case("embedded resource admits apiVersion/kind/metadata", obj({"m": {
        "type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True}}),
         {"m": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}}}),
    Case("embedded resource needs kind", obj({"m": {
        "type": "object", "x-kubernetes-embedded-resource": True, "properties": {"data": {"type": "object",
                                                                                    "additionalProperties": True}}}}),
         {"m": {"apiVersion": "v1", "metadata": {"name": "c"}}}, ["m.kind: Required value"]),
    Case("embedded resource metadata checked", obj({"m": {
        "type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True}}),
         {"m": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}}},
         ["m.metadata.name: RFC 1123 subdomain"]),
    Case("list-map duplicate key", obj({"l": MAP_LIST}), {"l": [{"name": "a"}, {"name": "b"}, {"name": "a"}]},
         ['l[2]: Duplicate value: {name: "a"}']),
    Case("list-map distinct keys", obj({"l": MAP_LIST}), {"l": [{"name": "a", "n": 1}, {"name": "b", "n": 1}]}),
    Case("list-set duplicate", obj({"s": {"type": "array", "items": {"type": "string"},
                                          "x-kubernetes-list-type": "set"}}), {"s": ["a", "a"]},
         ['s[1]: Duplicate value: "a"']),
    Case("allOf", obj({"a": {"type": "integer", "allOf": [{"minimum": 2}]}}), {"a": 1},
         ["a: greater than or equal to 2"]),
    Case("anyOf none", obj({"a": obj({"x": {"type": "string"}, "y": {"type": "string"}},
                                     anyOf=[{"required": ["x"]}, {"required": ["y"]}])}), {"a": {}},
         ["a: must validate at least one schema (anyOf)"]),
    Case("anyOf one", obj({"a": obj({"x": {"type": "string"}, "y": {"type": "string"}},
                                    anyOf=[{"required": ["x"]}, {"required": ["y"]}])}), {"a": {"y": "1"}}),
    Case("oneOf two", obj({"a": obj({"x": {"type": "string"}, "y": {"type": "string"}},
                                    oneOf=[{"required": ["x"]}, {"required": ["y"]}])}), {"a": {"x": "1", "y": "2"}},
         ["a: must validate one and only one schema (oneOf), matched 2"]),
    Case("not", obj({"a": {"type": "string", "not": {"enum": ["forbidden"]}}}), {"a": "forbidden"},
         ["a: must not validate the schema (not)"]),
    Case("junctors never reject fields by name", obj({"a": obj({"x": {"type": "string"}},
                                                               allOf=[{"properties": {}}])}), {"a": {"x": "1"}}),
    Case("root metadata is ObjectMeta", obj({"metadata": {"type": "object"}}),
         {"metadata": {"name": "ok", "labels": {"a": "b"}, "bogus": 1}}, ['metadata.bogus: unknown field "bogus"']),
    Case("root metadata name constraint", obj({"metadata": {"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 5}}}}), {"metadata": {"name": "toolong"}},
         ["metadata.name: Too long"]),
    Case("label value must be a string", obj({"metadata": {"type": "object"}}),
         {"metadata": {"name": "x", "labels": {"replica": 0}}}, ["metadata.labels[replica]: must be of type string"]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_validate(case: Case) -> None:
    got = [str(p) for p in openapi.validate(case.value, case.schema)]
    assert len(got) == len(case.want), f"-want {case.want}\n+got {got}"
    for want in case.want:
        path, _, message = want.partition(": ")
        assert any(g.startswith(path + ": ") and message in g for g in got), f"-want {want!r}\n+got {got}"


@dataclass
class DefaultCase:
    name: str
    schema: dict
    value: Any
    want: Any


DEFAULT_CASES = [
    DefaultCase("top-level default", obj({"spec": obj({"replicas": {"type": "integer", "default": 1}})}),
                {"spec": {}}, {"spec": {"replicas": 1}}),
    DefaultCase("absent object is not created", obj({"spec": obj({"replicas": {"type": "integer", "default": 1}})}),
                {}, {}),
    DefaultCase("defaulted object gets nested defaults",
                obj({"s": {**obj({"mode": {"type": "string", "default": "Unified"}}), "default": {}}}),
                {}, {"s": {"mode": "Unified"}}),
    DefaultCase("list items", obj({"l": {"type": "array", "items": obj({"copies": {"type": "integer",
                                                                                   "default": 1}})}}),
                {"l": [{}, {"copies": 3}]}, {"l": [{"copies": 1}, {"copies": 3}]}),
    DefaultCase("map values", obj({"m": {"type": "object", "additionalProperties": obj(
        {"claim": {"type": "string", "default": "DRA"}})}}), {"m": {"gpu": {}}}, {"m": {"gpu": {"claim": "DRA"}}}),
    DefaultCase("explicit value kept", obj({"a": {"type": "string", "default": "x"}}), {"a": "y"}, {"a": "y"}),
    DefaultCase("null pruned then defaulted", obj({"a": {"type": "string", "default": "x"}}), {"a": None},
                {"a": "x"}),
    DefaultCase("null pruned without default", obj({"a": {"type": "string"}}), {"a": None}, {}),
    DefaultCase("nullable null kept", obj({"a": {"type": "string", "nullable": True, "default": "x"}}),
                {"a": None}, {"a": None}),
]


@pytest.mark.parametrize("case", DEFAULT_CASES, ids=lambda c: c.name)
def test_apply_defaults(case: DefaultCase) -> None:
    before = repr(case.value)
    assert openapi.apply_defaults(case.value, case.schema) == case.want
    assert repr(case.value) == before, "apply_defaults must not modify its input"


def test_list_map_key_default_counts_for_uniqueness() -> None:
    schema = obj({"l": {**MAP_LIST, "x-kubernetes-list-map-keys": ["name", "proto"],
                        "items": obj({"name": {"type": "string"}, "proto": {"type": "string", "default": "TCP"}},
                                     required=["name"])}})
    got = [str(p) for p in openapi.validate({"l": [{"name": "a"}, {"name": "a", "proto": "TCP"}]}, schema)]
    assert got and got[0].startswith("l[1]: Duplicate value"), got


def test_swagger_refs_resolve() -> None:
    defs = {"Port": obj({"port": {"type": "integer"}}, required=["port"])}
    schema = obj({"ports": {"type": "array", "items": {"$ref": "#/definitions/Port"}}})
    got = [str(p) for p in openapi.validate({"ports": [{"port": 1}, {}]}, schema, definitions=defs)]
    assert got == ["ports[1].port: Required value"]
