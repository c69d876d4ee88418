"""Render parity with our own functions: every XR of the simulated example fleet,
rendered by the real `crossplane render` (v2.2, classic) and by `modelplane render`
from the same inputs, must print the same bytes.

The inputs are the fleet at its fixed point: the XR with its status, what it
composed (observed, XR children as they live), every other object as required
resources. Our eight functions run as `modelplane serve` processes and both CLIs
dial them through the Development runtime (`-a` overrides every Function's
annotations, so each call names the one function its Composition's step uses).
"""
from __future__ import annotations

import contextlib
import subprocess

import pytest
import yaml
from modelplane import functions, paths
from modelplane.render.runners import ANNOTATION_RUNTIME, ANNOTATION_TARGET
from modelplane.simulate.loop import Simulator, load_compositions
from modelplane.simulate.world import label

from tests.render.helpers import run_cli
from tests.support import serve_process
from tests.upstream.need import tool

pytestmark = pytest.mark.slow  # simulates the fleet and runs the real CLI 25 times: `make e2e`


@pytest.fixture(scope="module")
def targets():
    """Function name (as Compositions name it) -> the address of its `modelplane serve`."""
    with contextlib.ExitStack() as stack:
        yield {f"modelplane-{name}": stack.enter_context(serve_process(name, "--insecure"))
               for name in functions.available()}


def _dump(path, docs):
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return str(path)


def test_every_fleet_xr_renders_the_same(fleet, targets, tmp_path):
    crossplane = tool("crossplane")["crossplane"]
    compositions = load_compositions()
    observed_of = Simulator(fleet, pool=None).observed  # what Crossplane would observe (no calls made)
    required = _dump(tmp_path / "required.yaml", fleet.candidates())
    compared, differ = 0, []
    for key in fleet.ordered():
        xr = fleet.xrs[key].obj
        comp = compositions[key[0]]
        fn = comp["spec"]["pipeline"][0]["functionRef"]["name"]
        d = tmp_path / label(key).replace("/", "_")
        d.mkdir()
        argv = [_dump(d / "xr.yaml", [xr]), _dump(d / "composition.yaml", [comp]),
                str(paths.EXAMPLES / "functions.yaml"), "-e", required, "-r",
                "-a", f"{ANNOTATION_RUNTIME}=Development", "-a", f"{ANNOTATION_TARGET}={targets[fn]}"]
        observed = observed_of(key)
        if observed:
            argv += ["-o", _dump(d / "observed.yaml", observed)]
        code, out, err = run_cli(argv)
        real = subprocess.run([crossplane, "render", *argv], capture_output=True, text=True, timeout=120,
                              check=False)
        compared += 1
        if (code, out, err.strip()) != (real.returncode, real.stdout, real.stderr.strip()):
            (d / "modelplane.out").write_text(out + err)
            (d / "crossplane.out").write_text(real.stdout + real.stderr)
            differ.append(f"{label(key)}: diff {d}/modelplane.out {d}/crossplane.out")
    assert compared == len(fleet.xrs) >= 20
    assert not differ, "\n".join(differ)
