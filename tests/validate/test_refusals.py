"""``validate`` refuses what compose-model-deployment refuses, in the function's words, and nothing else.

Each row's XR goes both ways: through the Validator, and (defaulted, as the
API server stores it) through the real function in-process. The two must
agree, and ``refused`` pins which way, so a row cannot pass by both admitting.
"""
from __future__ import annotations

import copy
import io
from dataclasses import dataclass

import pytest
import yaml
from modelplane import paths
from modelplane.cli import validate as cli
from modelplane.validate import Finding, Validator

from tests.functions.deployments import FN, PD, QWEN_DEMO
from tests.support import fatal, request, run

SELECTORS = "spec.engines[{e}].members[{m}].nodeSelector.devices[{d}].selectors"
MEMORY = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("20Gi")) >= 0'


@dataclass
class Case:
    name: str
    selectors: list[str]
    refused: bool
    base: dict = None     # QWEN_DEMO unless given
    engine: int = 0       # whose first member's first device gets the selectors
    want_path: str = ""   # the field the refusal names


CASES = [
    Case("a selector that compiles is admitted by both", [MEMORY], refused=False),
    Case("matches() is refused: DRA selectors get no regular expressions",
         [MEMORY, 'device.attributes["gpu.nvidia.com"].productName.matches("H100.*")'], refused=True,
         want_path=SELECTORS.format(e=0, m=0, d=0) + "[1].cel"),
    Case("a syntax error is refused", ["device.attributes["], refused=True,
         want_path=SELECTORS.format(e=0, m=0, d=0) + "[0].cel"),
    Case("a selector nested past the guards is refused", ["(" * 40 + "true" + ")" * 40], refused=True,
         want_path=SELECTORS.format(e=0, m=0, d=0) + "[0].cel"),
    Case("the path names the second engine", ['device.driver.matches("nv.*")'], refused=True, base=PD, engine=1,
         want_path=SELECTORS.format(e=1, m=0, d=0) + "[0].cel"),
]


@pytest.fixture(scope="module")
def validator() -> Validator:
    return Validator.from_paths([paths.APIS])


def _xr(case: Case) -> dict:
    xr = copy.deepcopy(case.base or QWEN_DEMO)
    member = xr["spec"]["engines"][case.engine]["members"][0]
    member["nodeSelector"]["devices"][0]["selectors"] = [{"cel": s} for s in case.selectors]
    return xr


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_validate_refuses_what_the_function_refuses(validator, case):
    xr = _xr(case)
    got = validator.validate_document(xr, "md.yaml")
    function_says = fatal(run(FN, request(validator.apply_defaults(xr))))
    if not case.refused:
        assert (got, function_says) == ([], None)
        return
    assert function_says is not None and function_says.startswith(case.want_path + ": "), function_says
    want = [Finding("md.yaml", f"ModelDeployment/ml-team/{xr['metadata']['name']}", case.want_path,
                    function_says.removeprefix(case.want_path + ": "), refused_by=FN)]
    assert got == want, f"-want {want}\n+got  {got}"


def test_schema_errors_come_first_and_alone(validator):
    """The function never sees an object the API server refused: its check does not run."""
    xr = _xr(CASES[1])
    xr["spec"]["replicas"] = -1
    got = validator.validate_document(xr, "md.yaml")
    assert [f.refused_by for f in got] == [""], got
    assert got[0].path == "spec.replicas", got


def test_the_cli_line_names_the_function(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "md.yaml").write_text(yaml.safe_dump(_xr(CASES[1])))
    out = io.StringIO()
    code = cli.run(["md.yaml", "--no-upstream"], stdout=out, stderr=io.StringIO())
    lines = out.getvalue().splitlines()
    assert code == 1
    assert lines[0].startswith("[x] compose-model-deployment refuses modelplane.ai/v1alpha1, Kind=ModelDeployment, "
                               f"ml-team/qwen-demo : {CASES[1].want_path}: matches() is not available in selectors"), \
        lines[0]
    assert lines[-1] == "Total 1 resources: 0 missing schemas, 0 success cases, 1 failure cases"
