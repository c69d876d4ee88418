"""The corner-case suite: each case dir under cases/ is rendered and compared byte for byte.

A case holds its inputs, an optional ``args`` file (one argument a line,
``{case}`` = the case dir) and either ``expected.yaml`` (exit 0, stdout) or
``expected.stderr`` (exit 1, nothing on stdout). Functions are the fixture
script, run as a real gRPC server and dialled through the Development
runtime, unless the case brings its own ``functions.yaml`` (Modelplane's
functions, e.g. the InferenceCluster cases over examples/platform; render
starts them). The same cases run through the real CLI (v2.2, classic render)
when `make tools` built it or CROSSPLANE_BIN names one, otherwise they skip;
the CLI dials Modelplane's functions served by `modelplane serve`.
Regenerate goldens with MODELPLANE_UPDATE_GOLDENS=1, then read them.
"""
from __future__ import annotations

import contextlib
import subprocess

import pytest
import yaml
from modelplane import functions
from modelplane.render.runners import ANNOTATION_RUNTIME

from tests.render.helpers import CASES, UPDATE, case_argv, case_names, run_cli, script_function
from tests.support import serve_process
from tests.upstream.need import tool


@pytest.fixture(scope="module")
def target():
    with script_function() as t:
        yield t


@pytest.fixture(scope="module")
def served():
    """Modelplane function -> the address of its `modelplane serve`, started on first use."""
    with contextlib.ExitStack() as stack:
        started: dict[str, str] = {}

        def address(function: str) -> str:
            if function not in started:
                started[function] = stack.enter_context(serve_process(function, "--insecure"))
            return started[function]
        yield address


def _golden(name: str) -> tuple[int, str]:
    d = CASES / name
    if (d / "expected.yaml").exists():
        return 0, (d / "expected.yaml").read_text()
    return 1, (d / "expected.stderr").read_text()


@pytest.mark.parametrize("name", case_names())
def test_case(name, target):
    code, out, err = run_cli(case_argv(name, target))
    if UPDATE:
        d = CASES / name
        for stale in ("expected.yaml", "expected.stderr"):
            (d / stale).unlink(missing_ok=True)
        (d / ("expected.yaml" if code == 0 else "expected.stderr")).write_text(out if code == 0 else err)
    want_code, want = _golden(name)
    assert code == want_code, err
    if want_code == 0:
        assert out == want
        assert err == ""
    else:
        assert out == "", "an error must leave stdout empty"
        assert err == want


@pytest.mark.parametrize("name", case_names())
def test_case_matches_crossplane(name, target, served):
    binary = tool("crossplane")["crossplane"]
    d = CASES / name
    if (d / "functions.yaml").exists():
        # Modelplane's own functions: the CLI would pull their images; serve the one the
        # Composition's steps use and have the CLI dial it as the Development runtime.
        steps = yaml.safe_load((d / "composition.yaml").read_text())["spec"]["pipeline"]
        (function,) = {functions.canonical(s["functionRef"]["name"]) for s in steps}
        argv = [binary, "render", *case_argv(name, served(function)), "-a", f"{ANNOTATION_RUNTIME}=Development"]
    else:
        argv = [binary, "render", *case_argv(name, target)]
    proc = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=120)
    want_code, want = _golden(name)
    assert proc.returncode == want_code, proc.stderr
    if want_code == 0:
        assert proc.stdout == want
    else:
        assert proc.stdout == ""
        assert _one_deadline_wording(proc.stderr) == want


# When a call outlives its deadline, both ends of it time out: the CLI's own context ends ("context
# deadline exceeded") and the server's gRPC ends the call and sends its status ("Deadline
# Exceeded"). Which reaches the CLI first is a race that a busy machine decides either way, so the
# real CLI prints either. Ours always prints the first; the comparison accepts the CLI's other.
_SERVER_DEADLINE = "code = DeadlineExceeded desc = Deadline Exceeded\n"


def _one_deadline_wording(stderr: str) -> str:
    if stderr.endswith(_SERVER_DEADLINE):
        return stderr[: -len(_SERVER_DEADLINE)] + "code = DeadlineExceeded desc = context deadline exceeded\n"
    return stderr
