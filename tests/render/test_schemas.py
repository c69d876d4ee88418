"""``-s/--required-schemas``: loading OpenAPI documents and answering SchemaSelectors."""
from __future__ import annotations

import json

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane.render.errors import RenderError
from modelplane.render.schemas import SchemaFetcher, load_required_schemas

from tests.render.helpers import CASES, run_cli

GVK = "x-kubernetes-group-version-kind"


def _doc(schemas: dict) -> dict:
    return {"openapi": "3.0.0", "components": {"schemas": schemas}}


def _kind(group: str, version: str, kind: str, **extra) -> dict:
    return {"type": "object", GVK: [{"group": group, "version": version, "kind": kind}], **extra}


def test_loads_json_files_recursively_in_lexical_order(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "a.json").write_text(json.dumps(_doc({"A": _kind("a", "v1", "A")})))
    (tmp_path / "b" / "z.json").write_text(json.dumps(_doc({"B": _kind("b", "v1", "B")})))
    (tmp_path / "c.json").write_text(json.dumps(_doc({"C": _kind("c", "v1", "C")})))
    (tmp_path / "skip.yaml").write_text("not: json")
    docs = load_required_schemas(str(tmp_path))
    assert [sorted(d["components"]["schemas"]) for d in docs] == [["A"], ["B"], ["C"]]


def test_a_single_json_file_is_accepted(tmp_path):
    f = tmp_path / "apps.json"
    f.write_text(json.dumps(_doc({})))
    assert load_required_schemas(str(f)) == [_doc({})]


@pytest.mark.parametrize(
    "text,want",
    [
        ("", "unexpected end of JSON input"),
        ('{"components": ', "unexpected end of JSON input"),
        ('{"a" 1}', "invalid character '1' after object key"),
        ('{"a": 1 "b": 2}', "invalid character '\"' after object key:value pair"),
        ('{"a": [1 2]}', "invalid character '2' after array element"),
        ("{'a': 1}", "invalid character '\\'' looking for beginning of object key string"),
        ('{"a": 1} x', "invalid character 'x' after top-level value"),
        ("[]", "json: cannot unmarshal array into Go value of type spec3.OpenAPI"),
    ],
)
def test_bad_json_reads_like_go(tmp_path, text, want):
    f = tmp_path / "bad.json"
    f.write_text(text)
    with pytest.raises(RenderError) as err:
        load_required_schemas(str(tmp_path))
    assert str(err.value) == f'cannot load required schemas from "{tmp_path}": cannot parse OpenAPI JSON from "{f}": {want}'


def test_directory_without_json(tmp_path):
    (tmp_path / "apps.yaml").write_text("{}")
    with pytest.raises(RenderError) as err:
        load_required_schemas(str(tmp_path))
    assert str(err.value) == f'cannot load required schemas from "{tmp_path}": no JSON files found in "{tmp_path}"'


def test_missing_directory_through_the_cli():
    case = CASES / "required-schemas"
    missing = str(case / "absent")
    code, out, err = run_cli(
        [str(case / "xr.yaml"), str(case / "composition.yaml"), str(CASES / "functions.yaml"), "-s", missing]
    )
    assert (code, out) == (1, "")
    assert err == (
        f'crossplane: error: cannot load required schemas from "{missing}": '
        f"cannot walk directory: stat {missing}: no such file or directory\n"
    )


def _fetch(docs: list[dict], api_version: str, kind: str) -> fnv1.Schema:
    return SchemaFetcher(docs).fetch(fnv1.SchemaSelector(api_version=api_version, kind=kind))


def test_first_document_wins_and_core_group_is_empty():
    first = _doc({"CM": _kind("", "v1", "ConfigMap", description="first")})
    second = _doc({"CM": _kind("", "v1", "ConfigMap", description="second")})
    got = _fetch([first, second], "v1", "ConfigMap")
    assert got.openapi_v3["description"] == "first"


def test_not_found_is_an_empty_schema():
    got = _fetch([_doc({"CM": _kind("", "v1", "ConfigMap")})], "v2", "ConfigMap")
    assert got == fnv1.Schema() and not got.HasField("openapi_v3")


def test_refs_are_flattened_and_cycles_stop():
    docs = [
        _doc(
            {
                "Node": _kind(
                    "g", "v1", "Node", properties={"next": {"$ref": "#/components/schemas/Node"}},
                    additionalProperties={"allOf": [{"$ref": "#/components/schemas/Leaf"}], "description": "dropped"},
                ),
                "Leaf": {"type": "string"},
            }
        )
    ]
    got = SchemaFetcher(docs).find("g/v1", "Node")
    assert got["properties"]["next"] == {"type": "object"}
    assert got["additionalProperties"] == {"type": "string"}


def test_dangling_ref_and_bad_api_version_fail():
    docs = [_doc({"N": _kind("g", "v1", "N", properties={"x": {"$ref": "#/components/schemas/Gone"}})})]
    with pytest.raises(RenderError, match='cannot resolve Ref "#/components/schemas/Gone": schema not found'):
        _fetch(docs, "g/v1", "N")
    with pytest.raises(RenderError, match='cannot parse apiVersion "a/b/c": unexpected GroupVersion string: a/b/c'):
        _fetch(docs, "a/b/c", "N")
