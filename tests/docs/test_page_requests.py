"""Every request a page shows is sent, and every address it reads is the one simulate gives.

A page's front matter may name the ModelService its requests go to (docs/writing-docs.md,
"Requests are answered"):

    requests:
      fleet: docs/manifests/recipes/llama-3.1-8b-vllm
      service: ml-team/llama-3-1-8b
      unanswered: "..."     # optional: why no mock can answer (the text the page says)

The fleet is simulated; each ``kubectl get modelservice`` the page shows must name that service
and print, through its jsonpath, what the simulated ModelService holds; each ``# needs: engine``
block runs with ``url`` set to a mock engine of every engine container the service reaches
(tests/docs/engines.py), and prints what the page says it prints. Every recipe ends in such a
request.
"""
from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from modelplane.render import FunctionPool
from modelplane.simulate.loop import simulate

from tests.docs import engines, pages
from tests.docs.runner import block_env, run_block

pytestmark = pytest.mark.xdist_group("docs-requests")

RECIPES = pages.DOCS / "recipes"
ENTRY_KEYS = {"fleet", "service", "unanswered"}


def _claims() -> list[tuple[pages.Page, dict]]:
    return [(p, p.meta["requests"]) for p in pages.pages() if p.meta.get("requests")]


CLAIMS = _claims()
IDS = [p.name for p, _ in CLAIMS]


@pytest.fixture(scope="module")
def pool():
    with FunctionPool() as p:
        yield p


@pytest.fixture(scope="module")
def worlds(pool):
    """One simulation per fleet, shared by the pages that send requests to it."""
    @cache
    def world(fleet: str):
        w, outcome, _ = simulate(pages.ROOT / fleet, pool=pool)
        assert outcome.converged, f"{fleet} did not settle: {outcome.still_changing}"
        return w
    return world


def _service(world, entry: dict) -> dict:
    namespace, _, name = entry["service"].partition("/")
    state = world.xrs.get(("ModelService", namespace, name))
    assert state is not None, f"no ModelService {entry['service']} in {entry['fleet']}"
    return state.obj


def test_every_recipe_ends_in_a_request():
    for path in sorted(RECIPES.glob("*.md")):
        if path.name == "index.md":
            continue
        page = pages.parse(path)
        entry = page.meta.get("requests")
        assert entry, f"{page.path.name}: no `requests:` front matter (the ModelService its request goes to)"
        fleets = [s["fleet"] for s in page.meta.get("simulate") or []]
        assert entry["fleet"] in fleets, f"{page.path.name}: requests go to {entry['fleet']}, not a fleet it simulates"
        includes = {inc for f in page.fences for inc in f.includes}
        assert f"{entry['fleet']}/service.yaml" in includes, f"{page.path.name}: does not show its service.yaml"
        runnable = [f for f, _ in page.runnable()]
        assert any(engines.KUBECTL.search(f.body) for f in runnable), f"{page.path.name}: reads no address"
        asks = [f for f in runnable if f.needs == "engine"] if not entry.get("unanswered") else [
            f for f in runnable if "/v1/chat/completions" in f.body]
        assert asks, f"{page.path.name}: sends no request"


def test_request_claims_are_well_formed():
    assert len(CLAIMS) >= 13   # twelve recipes and send-a-request
    for page, entry in CLAIMS:
        assert set(entry) <= ENTRY_KEYS, (page.name, entry)
        assert (pages.ROOT / entry["fleet"]).is_dir(), f"{page.name}: no folder {entry['fleet']}"
        assert entry.get("service", "").count("/") == 1, f"{page.name}: service is NAMESPACE/NAME"


@pytest.mark.parametrize(("page", "entry"), CLAIMS, ids=IDS)
def test_page_reads_the_address_simulate_gives(page, entry, worlds):
    service = _service(worlds(entry["fleet"]), entry)
    namespace, _, name = entry["service"].partition("/")
    assert (service.get("status") or {}).get("address"), f"{entry['service']} has no address in the simulation"
    seen = 0
    for fence, output in page.runnable():
        gets = engines.kubectl_gets(fence.body)
        for g in gets:
            assert (g.namespace, g.name) == (namespace, name), f"{page.name}:{fence.line} reads {g}"
        if gets and output is not None:
            printed = "\n".join(engines.jsonpath(g.template, service) for g in gets)
            want = pages.expected_lines(output.body)
            got = [line.rstrip() for line in printed.splitlines() if line.strip()]
            assert want == got, f"{page.name}:{output.line}: the page shows {want}, simulate gives {got}"
        seen += len(gets)
    assert seen, f"{page.name}: no `kubectl get modelservice` reads the address"


@pytest.mark.parametrize(("page", "entry"), CLAIMS, ids=IDS)
def test_page_requests_are_answered_by_the_engines_the_service_reaches(page, entry, worlds, tmp_path: Path):
    service = _service(worlds(entry["fleet"]), entry)
    pods = engines.engine_pods(worlds(entry["fleet"]), service)
    assert pods, f"{entry['service']} reaches no engine container in the simulation"
    blocks = [(f, o) for f, o in page.runnable() if f.needs == "engine"]
    if entry.get("unanswered"):
        assert not blocks, f"{page.name}: says its requests are unanswered, yet has `# needs: engine` blocks"
        assert entry["unanswered"] in page.text, f"{page.name}: does not say why: {entry['unanswered']!r}"
        assert any(p.refused for p in pods), (
            f"{page.name}: the mock engine now imitates {[p.workload for p in pods]}: "
            "make the request block `# needs: engine` and drop `unanswered`")
        return
    assert blocks, f"{page.name}: no `# needs: engine` block sends a request"
    assert not [p for p in pods if p.refused], [p.refused for p in pods]
    # The blocks run where a reader would (paths under docs/ resolve), writing nothing into the repository.
    cwd = tmp_path / "reader"
    cwd.mkdir()
    (cwd / "docs").symlink_to(pages.DOCS)
    with engines.serving(pods) as served:
        assert served, f"no engine of {entry['service']} serves HTTP"
        for pod, engine in served:
            env = block_env(pages.ROOT, tmp_path / "lab-state")
            env["url"] = engine.url
            for fence, output in blocks:
                done = run_block(fence.body, cwd, env)
                printed = done.stdout + done.stderr
                where = f"{page.name}:{fence.line} against a mock of {pod.workload} ({pod.config.served_names}) at {engine.url}"
                assert done.returncode == 0, f"{where} exited {done.returncode}:\n{printed[-4000:]}"
                if output is not None:
                    missing = pages.appear_in_order(pages.expected_lines(output.body), printed)
                    assert missing is None, f"{where}: the page shows {missing!r}, it printed:\n{printed[-4000:]}"
