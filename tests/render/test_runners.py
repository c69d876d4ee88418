"""How render reaches functions, the engine API simulate reuses, and the installed command."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from modelplane.render import FunctionPool, RenderError, RenderInputs, documents, dump_documents, render
from modelplane.render.loader import load_composition, load_functions, load_xr
from modelplane.render.runners import Development, Local, pid_of, runtime_for

from tests.render.fixtures.script_fn import ScriptRunner
from tests.render.helpers import CASES, SCRIPT_FN, case_argv, script_function, wait_gone

CASE = CASES / "dropped-by-later-step"
VENV_BIN = Path(sys.executable).parent


def _fn(name: str, annotations: dict | None = None, package: str = "") -> dict:
    meta = {"name": name, **({"annotations": annotations} if annotations else {})}
    return {"apiVersion": "pkg.crossplane.io/v1", "kind": "Function", "metadata": meta, "spec": {"package": package}}


@pytest.mark.parametrize(
    "fn,want",
    [
        (_fn("f", {"render.crossplane.io/runtime": "Development"}), Development("localhost:9443")),
        (
            _fn("f", {"render.crossplane.io/runtime": "Development",
                      "render.crossplane.io/runtime-development-target": "dns:///fn.example:7443"}),
            Development("dns:///fn.example:7443"),
        ),
    ],
)
def test_development_runtime_targets(fn, want):
    assert runtime_for(fn) == want


@pytest.mark.parametrize(
    "fn,message",
    [
        (_fn("function-x", package="xpkg.example.org/x/function-x:v1"), "no Docker engine here"),
        (_fn("f", {"render.crossplane.io/runtime": "Podman"}), 'annotation value "Podman" (unknown runtime)'),
    ],
)
def test_runtimes_that_cannot_run_here(fn, message):
    with pytest.raises(RenderError, match=message.replace("(", r"\(").replace(")", r"\)")):
        runtime_for(fn)


def test_modelplane_function_found_by_package_path(monkeypatch):
    from modelplane import functions

    monkeypatch.setattr(functions, "available", lambda: ["compose-model-cache"])
    fn = _fn("anything", package="xpkg.example.org/modelplane/compose-model-cache:v0.1.0")
    assert runtime_for(fn) == Local("compose-model-cache")
    assert runtime_for(_fn("modelplane-compose-model-cache")) == Local("compose-model-cache")


def _inputs(functions: list[dict]) -> RenderInputs:
    return RenderInputs(
        xr=load_xr(str(CASE / "xr.yaml")),
        composition=load_composition(str(CASE / "composition.yaml")),
        functions=functions,
        timeout=60,
    )


def test_local_function_started_once_reused_and_stopped(monkeypatch):
    """A Docker-runtime Modelplane function runs as a local process, kept across renders."""
    from modelplane import functions

    monkeypatch.setattr(functions, "available", lambda: ["compose-model-cache"])
    comp = load_composition(str(CASE / "composition.yaml"))
    for step in comp["spec"]["pipeline"]:
        step["functionRef"]["name"] = "modelplane-compose-model-cache"
    fns = [_fn("modelplane-compose-model-cache")]

    def command(function: str, address: str) -> list[str]:
        assert function == "compose-model-cache"
        return [sys.executable, str(SCRIPT_FN), "--insecure", "--address", address]

    pool = FunctionPool(command=command)
    with pool:
        first = render(RenderInputs(xr=load_xr(str(CASE / "xr.yaml")), composition=comp, functions=fns), pool)
        pid = pid_of(pool, "compose-model-cache")
        second = render(RenderInputs(xr=load_xr(str(CASE / "xr.yaml")), composition=comp, functions=fns), pool)
        assert pid_of(pool, "compose-model-cache") == pid
    assert first == second
    assert dump_documents(documents(first, first.xr)) == (CASE / "expected.yaml").read_text()
    assert wait_gone(pid), "closing the pool must stop the function process"


def test_in_process_function():
    with FunctionPool() as pool:
        pool.serve_in_process("function-script", ScriptRunner())
        out = render(_inputs(load_functions(str(CASES / "functions.yaml"))), pool)
    assert [c["metadata"]["annotations"]["crossplane.io/composition-resource-name"] for c in out.composed] == ["a"]


def test_modelplane_render_command_end_to_end():
    with script_function() as target:
        proc = subprocess.run(
            [str(VENV_BIN / "modelplane"), "render", *case_argv("warning-exits-zero", target)],
            check=False, capture_output=True, text=True, timeout=120,
        )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == (CASES / "warning-exits-zero" / "expected.yaml").read_text()


def test_modelplane_render_command_error_leaves_stdout_empty():
    proc = subprocess.run(
        [str(VENV_BIN / "modelplane"), "render", str(CASE / "xr.yaml"), str(CASE / "missing.yaml"),
         str(CASES / "functions.yaml")],
        check=False, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.startswith(f'crossplane: error: cannot load Composition from "{CASE / "missing.yaml"}"')
