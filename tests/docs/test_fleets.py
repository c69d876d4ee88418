"""Every fleet a page describes is placed by `modelplane simulate` where the page says.

A page's front matter names fleets (folders under docs/manifests) and, per ModelDeployment,
the InferenceClass every replica must land on (placed and Ready) or the reason it stays
unplaced (docs/writing-docs.md, "Fleets are simulated where the page says").
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from modelplane.render import FunctionPool
from modelplane.simulate.loop import simulate

from tests.docs import pages

# Runs share a worker: the functions' processes start once per worker.
pytestmark = pytest.mark.xdist_group("docs-fleets")


def _claims() -> list[tuple[str, dict]]:
    out = []
    for page in pages.pages():
        for entry in page.meta.get("simulate") or []:
            out.append((page.name, entry))
    return out


CLAIMS = _claims()


def _fleet_folders() -> set[Path]:
    """Folders under docs/manifests holding a ModelDeployment, each as the folder of its file."""
    out = set()
    for path in pages.MANIFESTS.rglob("*"):
        if path.suffix in (".yaml", ".yml") and path.is_file() and not path.name.endswith(".wrong.yaml"):
            docs = [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
            if any(d.get("kind") == "ModelDeployment" for d in docs):
                out.add(path.parent)
    return out


@pytest.fixture(scope="module")
def pool():
    with FunctionPool() as p:
        yield p


def test_every_fleet_is_claimed_by_a_page():
    claimed = {(pages.ROOT / entry["fleet"]).resolve() for _, entry in CLAIMS}
    orphans = sorted(str(f.relative_to(pages.ROOT)) for f in _fleet_folders()
                     if not any(f.resolve() == c or c in f.resolve().parents for c in claimed))
    assert orphans == [], "fleets no page claims (add them to a page's `simulate:` front matter)"


def test_claims_are_well_formed():
    for page, entry in CLAIMS:
        assert set(entry) <= {"fleet", "placed", "unplaced"}, (page, entry)
        assert (pages.ROOT / entry["fleet"]).is_dir(), f"{page}: no folder {entry['fleet']}"
        assert entry.get("placed") or entry.get("unplaced"), f"{page}: {entry['fleet']} asserts nothing"


def _class_of_pool(world, cluster: str, pool: str) -> str | None:
    obj = world.xrs.get(("InferenceCluster", "", cluster))
    for p in ((obj.obj.get("spec") or {}).get("nodePools") or []) if obj else []:
        if p.get("name") == pool:
            return p.get("class")
    return None


def _deployment(world, ref: str) -> dict:
    namespace, _, name = ref.partition("/")
    state = world.xrs.get(("ModelDeployment", namespace, name))
    assert state is not None, f"no ModelDeployment {ref} in the fleet"
    return state.obj


def _scheduled_message(obj: dict) -> str:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Scheduled":
            return c.get("message", "")
    return ""


@pytest.mark.parametrize(("page", "entry"), CLAIMS, ids=[f"{p}:{e['fleet']}" for p, e in CLAIMS])
def test_fleet_lands_where_the_page_says(page, entry, pool):
    world, outcome, _ = simulate(pages.ROOT / entry["fleet"], pool=pool)
    assert outcome.converged, f"{entry['fleet']} did not settle: {outcome.still_changing}"
    text = (pages.DOCS / page).read_text()
    for ref, klass in (entry.get("placed") or {}).items():
        assert f"{klass}" in text, f"{page} asserts {ref} on {klass} but never names the class"
        obj = _deployment(world, ref)
        desired = (obj.get("spec") or {}).get("replicas", 1)
        placements = (obj.get("status") or {}).get("placements") or []
        assert len(placements) == desired, f"{ref}: {len(placements)}/{desired} placed: {_scheduled_message(obj)}"
        for p in placements:
            for member in p.get("members") or []:
                got = _class_of_pool(world, p["cluster"], member["pool"])
                assert got == klass, f"{ref} replica {p.get('index')}: {member} is on class {got}, page says {klass}"
        ready = ((obj.get("status") or {}).get("replicas") or {}).get("ready", 0)
        assert ready == desired, f"{ref}: {ready}/{desired} Ready in the simulation"
    for ref, reason in (entry.get("unplaced") or {}).items():
        obj = _deployment(world, ref)
        desired = (obj.get("spec") or {}).get("replicas", 1)
        placed = len((obj.get("status") or {}).get("placements") or [])
        assert placed < desired, f"{ref}: all {desired} replicas were placed; the page says not"
        message = _scheduled_message(obj)
        assert reason in message, f"{ref}: Scheduled says {message!r}, the page says {reason!r}"
        assert reason in text, f"{page} asserts the reason {reason!r} but does not show it"
