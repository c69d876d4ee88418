"""``modelplane validate``: output lines and exit codes, on a temporary directory."""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from modelplane.cli import validate as cli

from .xrds import widget, xrd

SPEC = {"type": "object", "required": ["size"], "properties": {"size": {"type": "integer", "minimum": 1},
                                                              "note": {"type": "string"}}}
CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "team"}}


def write(path: Path, *docs: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(docs))
    return path


def run(*argv: str) -> tuple[int, list[str], str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(list(argv), stdout=out, stderr=err)
    return code, out.getvalue().splitlines(), err.getvalue()


@pytest.fixture
def apis(tmp_path: Path) -> Path:
    write(tmp_path / "apis" / "widgets" / "definition.yaml", xrd(SPEC))
    return tmp_path / "apis"


@dataclass
class Case:
    name: str
    docs: list[dict]
    want_code: int
    want_lines: list[str]


CASES = [
    Case("valid", [widget({"size": 1}), CONFIG_MAP], 0, [
        "[✓] example.org/v1, Kind=Widget, team/w validated successfully",
        "[✓] v1, Kind=ConfigMap, team/c validated successfully",
        "Total 2 resources: 0 missing schemas, 2 success cases, 0 failure cases"]),
    Case("failure", [widget({"size": 0, "extra": 1})], 1, [
        ('[x] schema validation error example.org/v1, Kind=Widget, team/w : spec.extra: unknown field "extra" '
        "(in {file})"),
        ("[x] schema validation error example.org/v1, Kind=Widget, team/w : spec.size: Invalid value: 0: "
        "should be greater than or equal to 1 (in {file})"),
        "Total 1 resources: 0 missing schemas, 0 success cases, 1 failure cases"]),
    Case("missing schema", [{"apiVersion": "example.org/v1", "kind": "Thing", "metadata": {"name": "t"}}], 0, [
        "[!] could not find CRD/XRD for: example.org/v1, Kind=Thing (in {file})",
        "Total 1 resources: 1 missing schemas, 0 success cases, 0 failure cases"]),
    # The API server drops the null (accepted); crossplane beta validate would reject it.
    Case("null the server drops", [widget({"size": 1, "note": None})], 0, [
        ("[!] warning example.org/v1, Kind=Widget, team/w : spec.note: null: the API server drops it (not "
         "nullable, no default), but crossplane beta validate rejects it (must be of type string): remove the "
         "field or give it a value (in {file})"),
        "[✓] example.org/v1, Kind=Widget, team/w validated successfully",
        "Total 1 resources: 0 missing schemas, 1 success cases, 0 failure cases"]),
    Case("not a resource", [{"hello": "world"}], 1, [
        "[x] invalid document {file}#0: a resource needs apiVersion and kind strings",
        "Total 1 resources: 0 missing schemas, 0 success cases, 1 failure cases"]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_output(tmp_path: Path, apis: Path, case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "in" / "sub" / "docs.yaml", *case.docs)
    (tmp_path / "in" / "README.md").write_text("skipped: not YAML")
    code, lines, err = run("in", "--apis", str(apis))
    want = [line.format(file="in/sub/docs.yaml") for line in case.want_lines]
    assert (code, lines) == (case.want_code, want), f"-want {want}\n+got {lines}\nstderr {err}"


def test_missing_schemas_can_fail(tmp_path: Path, apis: Path) -> None:
    f = write(tmp_path / "t.yaml", {"apiVersion": "example.org/v1", "kind": "Thing", "metadata": {"name": "t"}})
    code, _, _ = run(str(f), "--apis", str(apis), "--error-on-missing-schemas")
    assert code == 1


def test_xrds_in_inputs_are_schemas_and_are_checked(tmp_path: Path) -> None:
    f = write(tmp_path / "all.yaml", xrd(SPEC, scope=None), widget({"size": 2}))
    (tmp_path / "empty").mkdir()
    code, lines, _ = run(str(f), "--apis", str(tmp_path / "empty"))
    assert code == 1
    assert lines[0].startswith("[x] invalid CompositeResourceDefinition/widgets.example.org : spec.scope: Required")
    assert "[✓] example.org/v1, Kind=Widget, team/w validated successfully" in lines


def test_unreadable_yaml(tmp_path: Path, apis: Path) -> None:
    (tmp_path / "bad.yaml").write_text("a: [unclosed\n")
    code, lines, _ = run(str(tmp_path / "bad.yaml"), "--apis", str(apis))
    assert code == 1 and lines[0].startswith("[x] cannot read ")


def test_usage_errors(tmp_path: Path) -> None:
    assert run(str(tmp_path / "absent.yaml"))[0] == 2
    assert run()[0] == 2
    (tmp_path / "x.yaml").write_text("{}")
    assert run(str(tmp_path / "x.yaml"), "--apis", str(tmp_path / "no-such-dir"))[0] == 2
