"""Every example folder that reads a Secret carries it (a placeholder), so it simulates as it
would run: each ModelReplica ends with SecretsFound=True and Ready, and each ModelCache hydrates.
Without the placeholder the simulated pods would wait for the Secret (``physical.kubelet``)."""
from __future__ import annotations

from pathlib import Path

import pytest
from modelplane import paths
from modelplane.render import FunctionPool
from modelplane.simulate.loop import simulate
from modelplane.validate.admission import load_dir

ROOTS = (paths.EXAMPLES, paths.ROOT / "docs" / "manifests")


def _reads(xr: dict) -> set[str]:
    """The Secrets a ModelDeployment's templates or a ModelCache's token name."""
    out: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            for key in ("secretKeyRef", "secretRef", "tokenSecretRef"):
                ref = node.get(key)
                if isinstance(ref, dict) and ref.get("name") and not ref.get("optional"):
                    out.add(ref["name"])
            if isinstance(node.get("secret"), dict) and node["secret"].get("secretName") \
                    and not node["secret"].get("optional"):
                out.add(node["secret"]["secretName"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    if xr.get("kind") in ("ModelDeployment", "ModelCache"):
        walk(xr.get("spec"))
    return out


def _folders() -> list[Path]:
    """Folders that simulate on their own (they hold an InferenceCluster) and read a Secret."""
    found = []
    for root in ROOTS:
        for folder in sorted({p.parent for p in root.rglob("*.yaml")}):
            xrs, _ = load_dir(folder)
            if any(x.get("kind") == "InferenceCluster" for x in xrs) and any(_reads(x) for x in xrs):
                found.append(folder)
    return found


FOLDERS = _folders()


def test_the_folders_that_read_a_secret_are_found():
    names = {f.name for f in FOLDERS}
    assert {"llama-3.1-8b-vllm", "gemma-3-27b-vllm", "fleet"} <= names, names


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda f: str(f.relative_to(paths.ROOT)))
def test_each_folder_provides_the_secrets_it_reads(folder: Path):
    xrs, others = load_dir(folder)
    have = {(o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in others if o.get("kind") == "Secret"}
    want = {(x["metadata"].get("namespace", ""), s) for x in xrs for s in _reads(x)}
    assert want <= have, f"{folder}: add a placeholder Secret for {sorted(want - have)} (see secret.yaml elsewhere)"


SMALL = [f for f in FOLDERS if f.parent.name == "recipes"]


@pytest.fixture(scope="module")
def pool():
    with FunctionPool() as p:
        yield p


@pytest.mark.parametrize("folder", SMALL, ids=lambda f: f.name)
def test_each_recipe_that_reads_a_secret_simulates_with_it_found(folder: Path, pool):
    world, outcome, _ = simulate(folder, pool=pool)
    assert outcome.converged
    replicas = [s.obj for k, s in world.xrs.items() if k[0] == "ModelReplica"]
    assert replicas, f"{folder.name}: no replica placed"
    for r in replicas:
        conds = {c["type"]: c for c in r["status"]["conditions"]}
        assert conds["SecretsFound"]["status"] == "True", (r["metadata"]["name"], conds["SecretsFound"])
        assert conds["Ready"]["status"] == "True", (r["metadata"]["name"], conds["Ready"])
