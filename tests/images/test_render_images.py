"""The real ``crossplane render`` (v2.2, its default Docker runtime) runs the function images
``make images`` built, through podman's Docker API, and prints the same bytes as the same CLI
dialling ``modelplane serve`` (the Development runtime).

Every XR of the simulated example fleet, at its fixed point (observed and required resources
as in ``tests/upstream/test_render_fleet.py``). Each render names one Function, annotated with
the built image (``runtime-docker-image``) and ``runtime-docker-pull-policy: Never``: nothing is
pulled, the container runs from the local image or the render fails. The seconds per call
through each runtime are printed at the end of the run (``recipe.REPORT``).
"""
from __future__ import annotations

import contextlib
import os
import subprocess
import time

import pytest
import yaml
from modelplane import functions, paths
from modelplane.render.runners import ANNOTATION_RUNTIME, ANNOTATION_TARGET
from modelplane.simulate.loop import Simulator, load_compositions, simulate_dir
from modelplane.simulate.world import label

from tests.images import recipe
from tests.support import serve_process
from tests.upstream.need import tool

pytestmark = [pytest.mark.slow, pytest.mark.images]
IMAGE = "render.crossplane.io/runtime-docker-image"
PULL = "render.crossplane.io/runtime-docker-pull-policy"
TIMES: dict[str, list[float]] = {"image": [], "serve": []}


def _dump(path, docs):
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return str(path)


def _function(name: str, annotations: dict) -> dict:
    fns = {d["metadata"]["name"]: d for d in yaml.safe_load_all((paths.EXAMPLES / "functions.yaml").read_text()) if d}
    fn = fns[name]
    return {**fn, "metadata": {**fn["metadata"], "annotations": annotations}}


def _render(crossplane, argv, env=None):
    t = time.monotonic()
    done = subprocess.run([str(crossplane), "render", *argv], capture_output=True, text=True, timeout=180,
                          check=False, env=env)
    return done, time.monotonic() - t


@pytest.fixture(scope="module")
def targets():
    with contextlib.ExitStack() as stack:
        yield {f"modelplane-{name}": stack.enter_context(serve_process(name, "--insecure"))
               for name in functions.available()}


def test_every_fleet_xr_renders_the_same_through_the_images(built, podman_service, targets, tmp_path):
    crossplane = tool("crossplane")["crossplane"]
    fleet, outcome = simulate_dir(paths.EXAMPLES / "fleet")
    assert outcome.converged
    compositions = load_compositions()
    observed_of = Simulator(fleet, pool=None).observed
    required = _dump(tmp_path / "required.yaml", fleet.candidates())
    env = {**os.environ, "DOCKER_HOST": podman_service.docker_host}
    compared, differ = 0, []
    for key in fleet.ordered():
        comp = compositions[key[0]]
        fn = comp["spec"]["pipeline"][0]["functionRef"]["name"]
        image = built["functions"][fn.removeprefix("modelplane-")]["ref"]
        d = tmp_path / label(key).replace("/", "_")
        d.mkdir()
        common = [_dump(d / "xr.yaml", [fleet.xrs[key].obj]), _dump(d / "composition.yaml", [comp])]
        rest = ["-e", required, "-r"]
        observed = observed_of(key)
        if observed:
            rest += ["-o", _dump(d / "observed.yaml", observed)]
        via_serve = _dump(d / "fn-serve.yaml", [_function(fn, {ANNOTATION_RUNTIME: "Development",
                                                               ANNOTATION_TARGET: targets[fn]})])
        via_image = _dump(d / "fn-image.yaml", [_function(fn, {IMAGE: image, PULL: "Never"})])
        ref, t_serve = _render(crossplane, [*common, via_serve, *rest])
        got, t_image = _render(crossplane, [*common, via_image, *rest], env)
        TIMES["serve"].append(t_serve)
        TIMES["image"].append(t_image)
        compared += 1
        assert ref.returncode == 0, f"{label(key)} through modelplane serve: {ref.stderr}"
        if (got.returncode, got.stdout) != (ref.returncode, ref.stdout):
            (d / "serve.out").write_text(ref.stdout + ref.stderr)
            (d / "image.out").write_text(got.stdout + got.stderr)
            differ.append(f"{label(key)}: diff {d}/serve.out {d}/image.out")
    for k in ("serve", "image"):
        ts = sorted(TIMES[k])
        recipe.REPORT.append(f"crossplane render through {k}: {len(ts)} calls, median {ts[len(ts) // 2]:.2f} s, "
                             f"max {ts[-1]:.2f} s, total {sum(ts):.0f} s")
    assert compared == len(fleet.xrs) >= 20
    assert not differ, "\n".join(differ)


def test_render_really_runs_the_image(built, podman_service, tmp_path):
    """With an image podman does not have, the same render fails with podman's own words: the
    runs above went through the container, not around it."""
    crossplane = tool("crossplane")["crossplane"]
    fn = "modelplane-compose-inference-class"
    missing = built["functions"]["compose-inference-class"]["ref"].rsplit(":", 1)[0] + ":v0.0.0-missing"
    docs = yaml.safe_load_all((paths.EXAMPLES / "platform" / "inference-classes.yaml").read_text())
    xr = _dump(tmp_path / "xr.yaml", [next(d for d in docs if d and d.get("kind") == "InferenceClass")])
    comp = str(paths.APIS / "inferenceclasses" / "composition.yaml")
    fns = _dump(tmp_path / "fn.yaml", [_function(fn, {IMAGE: missing, PULL: "Never"})])
    done, _ = _render(crossplane, [xr, comp, fns],
                      {**os.environ, "DOCKER_HOST": podman_service.docker_host})
    assert done.returncode != 0
    assert "image not known" in done.stderr or "no such image" in done.stderr.lower(), done.stderr

