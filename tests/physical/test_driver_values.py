"""Every class and selector the docs and examples ship, against what the GPU drivers publish.

The value table (``modelplane.physical.driver_values``) says what NVIDIA's and AMD's DRA
drivers publish per product. Here:

- every InferenceClass device under docs/manifests and examples states those values;
- every ModelDeployment selector there keeps the margin (its verdict on a product does not
  change when the product's memory is 2% lower) and matches, with the real CEL matcher, the
  class its page says it lands on, at the table's values and 2% under them;
- ``simulate --hardware published`` places each recipe, and leaves a class that states a
  marketing size with Pending pods.
"""
from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from modelplane import cel, paths
from modelplane.cli import simulate as simulate_cli
from modelplane.physical import driver_values as dv
from modelplane.render import reader
from modelplane.validate.admission import load_dir

from tests.docs import pages

ROOT = paths.ROOT
TREES = (ROOT / "docs" / "manifests", ROOT / "examples")


def _docs() -> Iterator[tuple[Path, dict]]:
    """(file, document) for every manifest under the trees, each real file once."""
    seen: set[Path] = set()
    for tree in TREES:
        for path in paths.yaml_files(tree):
            real = path.resolve()
            if real in seen or path.name.endswith((".wrong.yaml", ".before.yaml")):
                # A .wrong.yaml is wrong on purpose (docs/writing-docs.md); a .before.yaml is the
                # state an upgrade scenario starts from (a class as fleets wrote it before).
                continue
            seen.add(real)
            for doc in reader.load_all_fast(reader.decode(path.read_bytes())):
                if isinstance(doc, dict):
                    yield path.relative_to(ROOT), doc


DOCS = list(_docs())


def _requests(deployment: dict) -> Iterator[tuple[str, dict]]:
    """(where, device request) for every member of a ModelDeployment."""
    for e, engine in enumerate((deployment.get("spec") or {}).get("engines") or []):
        for m, member in enumerate(engine.get("members") or []):
            for r, req in enumerate((member.get("nodeSelector") or {}).get("devices") or []):
                yield f"engines[{e}].members[{m}].nodeSelector.devices[{r}]", req


def _members(deployment: dict) -> Iterator[tuple[str, list[dict]]]:
    for e, engine in enumerate((deployment.get("spec") or {}).get("engines") or []):
        for m, member in enumerate(engine.get("members") or []):
            yield f"engines[{e}].members[{m}]", (member.get("nodeSelector") or {}).get("devices") or []


def _matches(req: dict, device: dict) -> bool:
    """Every selector of ``req`` is true on ``device`` (the scheduler's rule, real CEL)."""
    if device.get("driver") is None:
        return False
    d = cel.Device.from_class_device({"name": "gpu", **device})
    return all(cel.match(s["cel"], d).matched for s in req.get("selectors") or [])


def _fits(requests: list[dict], spec: dict, margin: bool) -> bool:
    """One node of class ``spec`` (as its driver publishes it) serves every request of a member."""
    devices = [d for d in dv.published(spec).get("devices") or []]
    for req in requests:
        ok = [d for d in devices
              if int(d.get("count", 1)) >= int(req.get("count", 1))
              and _matches(req, dv.with_margin(d) if margin else d)]
        if not ok:
            return False
    return True


def _name(doc: dict) -> str:
    meta = doc.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}".lstrip("/")


CLASS_DEVICES = [(f"{path}: InferenceClass {_name(doc)} devices[{i}]", dev)
                 for path, doc in DOCS if doc.get("kind") == "InferenceClass"
                 for i, dev in enumerate((doc.get("spec") or {}).get("devices") or [])]
REQUESTS = [(f"{path}: {_name(doc)} {where}", req)
            for path, doc in DOCS if doc.get("kind") == "ModelDeployment" for where, req in _requests(doc)]


def test_the_trees_hold_classes_and_selectors():
    """The checks below read something: a moved folder must not make them pass vacuously."""
    assert len([d for _, d in CLASS_DEVICES if d.get("driver") in (dv.NVIDIA_DRIVER, dv.AMD_DRIVER)]) >= 20
    assert len(REQUESTS) >= 30


def test_every_class_device_is_what_its_driver_publishes():
    wrong = [f"{where}: {line}" for where, dev in CLASS_DEVICES for line in dv.differences(dev)]
    assert wrong == [], "\n".join(wrong)


def test_every_selector_keeps_the_margin():
    """A selector's verdict on a product must not change when the product's memory is 2% lower:
    ECC mode and driver releases move memory that much, and the cluster's allocator then
    disagrees with the fleet scheduler."""
    wrong = []
    for where, req in REQUESTS:
        for row in dv.ROWS:
            device = row.device()
            if _matches(req, device) != _matches(req, dv.with_margin(device)):
                wrong.append(f"{where}: matches {row.product} ({row.memory}) but not 2% less; ask for at most "
                             f"{dv.selector_floor(row.memory)} (docs/platform/gpu-classes.md, the margin rule)")
    assert wrong == [], "\n".join(wrong)


def _claims() -> list[tuple[str, str, str, str]]:
    """(page, fleet, deployment, class) for every deployment a page says lands on a class."""
    return [(page.name, entry["fleet"], dep, cls)
            for page in pages.pages() for entry in page.meta.get("simulate") or []
            for dep, cls in (entry.get("placed") or {}).items()]


CLAIMS = _claims()


def _fleet(fleet: str) -> tuple[dict[str, dict], dict[str, dict]]:
    """(class name -> spec, namespace/name -> ModelDeployment) of a folder, as simulate loads it."""
    xrs, _ = load_dir(ROOT / fleet)
    classes = {x["metadata"]["name"]: x.get("spec") or {} for x in xrs if x.get("kind") == "InferenceClass"}
    deployments = {_name(x): x for x in xrs if x.get("kind") == "ModelDeployment"}
    return classes, deployments


def test_pages_claim_the_recipes():
    assert {f for _, f, _, _ in CLAIMS} >= {str(p.relative_to(ROOT)) for p in (ROOT / "docs/manifests/recipes").iterdir()}


@pytest.mark.parametrize("page,fleet,deployment,klass", CLAIMS, ids=[f"{c[1]}:{c[2]}" for c in CLAIMS])
def test_each_deployment_matches_the_class_its_page_names(page, fleet, deployment, klass):
    """With the table's values, and with 2% less memory, every member finds its devices on one
    node of the class the page says the deployment lands on."""
    classes, deployments = _fleet(fleet)
    assert klass in classes, f"{page}: class {klass} is not in {fleet}"
    for where, requests in _members(deployments[deployment]):
        assert _fits(requests, classes[klass], margin=False), \
            f"{fleet}: {deployment} {where} matches no device of {klass} as the driver publishes it"
        assert _fits(requests, classes[klass], margin=True), \
            f"{fleet}: {deployment} {where} matches {klass} only without the 2% margin"


def test_every_example_deployment_fits_a_class_of_the_example_fleet():
    classes, deployments = _fleet("examples/fleet")
    assert deployments
    wrong = [f"{name} {where}" for name, dep in deployments.items() for where, requests in _members(dep)
             if requests and not any(_fits(requests, spec, margin=True) for spec in classes.values())]
    assert wrong == [], f"examples/fleet: members no class serves with the driver's values: {wrong}"


# ----- the table itself ------------------------------------------------------------------

def test_driver_version_is_published_without_leading_zeros():
    """NVML says 580.159.04; the driver parses it with Masterminds semver and prints 580.159.4."""
    assert dv.NVIDIA.driver_version == "580.159.4"
    assert dv.NVIDIA.cuda_driver_version == "13.0.0"
    assert dv.Pairing("570.133.07", "12.8", "", "").driver_version == "570.133.7"


def test_the_pairing_is_a_driver_the_pinned_dra_driver_starts_on():
    """The measured driver (580) starts the pinned DRA driver line (0.4.x: 565 on) and the line
    the values were measured with (25.12: 580 on, nvmlDeviceGetAddressingMode)."""
    from modelplane.platform import gpu_drivers
    from modelplane.platform.stack import COMPONENTS
    pinned = next(c.version for c in COMPONENTS if c.key == "draDriver")
    branch = int(dv.NVIDIA.nvml_driver.split(".")[0])
    for version in (pinned, dv.NVIDIA.dra_driver):
        assert branch >= gpu_drivers.release_for(version).min_driver, version


def test_every_row_names_its_source_and_what_varies():
    for row in dv.ROWS:
        assert row.source and row.varies, row.product
        assert dv.row(row.driver, row.product) is row
        assert row.memory.endswith("Mi") and row.memory_mi() > 0, "NVML reports whole MiB"


@pytest.mark.parametrize("memory,want", [("81559Mi", "78Gi"), ("143771Mi", "137Gi"), ("23034Mi", "22Gi"),
                                         ("196592Mi", "188Gi"), ("80Gi", "78Gi")])
def test_selector_floor(memory, want):
    assert str(dv.selector_floor(memory)) == want


def test_a_marketing_size_is_a_difference():
    dev = {"driver": "gpu.nvidia.com", "attributes": {"productName": {"string": "NVIDIA H100 80GB HBM3"}},
           "capacity": {"memory": {"value": "80Gi"}}}
    assert dv.differences(dev) == ["capacity memory is 80Gi, the driver publishes 81559Mi"]
    dev["capacity"]["memory"]["value"] = "81559Mi"
    dev["attributes"]["driverVersion"] = {"version": "570.133.20"}
    want = "attribute driverVersion is version: 570.133.20, the driver publishes version: 580.159.4"
    assert dv.differences(dev) == [want]


def test_an_unknown_product_asks_for_a_row():
    dev = {"driver": "gpu.nvidia.com", "attributes": {"productName": {"string": "NVIDIA H20"}}}
    assert "not in the value table" in dv.differences(dev)[0]
    assert dv.differences({"driver": "nic.nvidia.com"}) == []


def test_published_replaces_what_the_class_states_and_keeps_the_rest():
    spec = {"devices": [
        {"name": "gpu", "driver": "gpu.nvidia.com", "count": 8, "deviceClassName": "gpu.nvidia.com",
         "attributes": {"productName": {"string": "NVIDIA H200"}, "rack": {"string": "r1"}},
         "capacity": {"memory": {"value": "141Gi"}}},
        {"name": "nic", "driver": "nic.nvidia.com", "count": 8, "claim": "Synthetic"}],
        "provisioning": {"nebius": {"platform": "gpu-h200-sxm"}}}
    got = dv.published(spec)
    gpu = got["devices"][0]
    assert gpu["capacity"]["memory"] == {"value": "143771Mi"}
    assert gpu["attributes"]["rack"] == {"string": "r1"}
    assert gpu["attributes"]["driverVersion"] == {"version": "580.159.4"}
    assert got["devices"][1] == spec["devices"][1] and got["provisioning"] == spec["provisioning"]


# ----- simulate --hardware published -----------------------------------------------------

def _simulate(directory: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = simulate_cli.run([str(directory), "--hardware", "published", "--show", "capacity", "-q"],
                            stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("recipe", sorted(p.name for p in (ROOT / "docs/manifests/recipes").iterdir()))
def test_each_recipe_runs_on_what_the_driver_publishes(recipe):
    """The issue's check: on nodes publishing the real values, every recipe's pods are scheduled."""
    code, out, err = _simulate(ROOT / "docs/manifests/recipes" / recipe)
    assert code == 0, err
    assert "No Pending pods." in out, out


def _write(directory: Path, docs: list[dict]) -> None:
    directory.mkdir()
    (directory / "fleet.yaml").write_text(yaml.safe_dump_all(docs), encoding="utf-8")


def test_a_class_stating_the_marketing_size_leaves_pods_pending(tmp_path):
    """What issue 47 found: a class saying 80Gi and a selector asking 80Gi agree on the fleet;
    the nodes publish 81559Mi and kube-scheduler leaves the pod Pending."""
    cluster = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster", "metadata": {"name": "dc"},
               "spec": {"cluster": {"source": "Existing",
                                    "existing": {"kubeconfigSecretRef": {"namespace": "ns", "name": "kc"}}},
                        "nodePools": [{"name": "h100", "class": "h100", "nodeCount": 1}]}}
    klass = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceClass", "metadata": {"name": "h100"},
             "spec": {"devices": [{"name": "gpu", "driver": "gpu.nvidia.com", "count": 8,
                                   "deviceClassName": "gpu.nvidia.com",
                                   "attributes": {"productName": {"string": "NVIDIA H100 80GB HBM3"}},
                                   "capacity": {"memory": {"value": "80Gi"}}}]}}
    deployment = yaml.safe_load((ROOT / "docs/manifests/recipes/llama-3.3-70b-vllm/deployment.yaml").read_text())
    deployment["spec"].pop("modelCacheRef")
    member = deployment["spec"]["engines"][0]["members"][0]
    member["nodeSelector"]["devices"][0]["selectors"] = [
        {"cel": 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0'}]
    _write(tmp_path / "old", [cluster, klass, deployment])
    code, out, err = _simulate(tmp_path / "old")
    assert code == 0, err
    assert "selector 1 false" in out, out


def test_the_page_shows_the_table():
    """docs/platform/gpu-classes.md's value table is this table: product, driver, memory, the
    selector ceiling and the attributes, row for row."""
    text = (ROOT / "docs/platform/gpu-classes.md").read_text(encoding="utf-8")
    section = text.split("## What the drivers publish", 1)[1].split("\n### ", 1)[0]
    rows = [[c.strip().strip("`") for c in line.strip("|").split("|")]
            for line in section.splitlines() if line.startswith("| `")][1:]  # [0] is the header
    want = []
    for r in dv.ROWS:
        a = r.attributes
        family = (a.get("architecture") or a.get("family") or {}).get("string", "-")
        want.append([r.product, r.driver, family, a.get("cudaComputeCapability", {}).get("version", "-"),
                     a.get("brand", {}).get("string", "-"), r.memory, dv.gib(r.memory),
                     str(dv.selector_floor(r.memory))])
    assert [row[:8] for row in rows] == want


def test_a_file_named_published_is_read_as_a_file(tmp_path, monkeypatch):
    (tmp_path / "fleet").mkdir()
    (tmp_path / "published").write_text("# nothing\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    assert simulate_cli.run(["fleet", "--hardware", "./published", "-q"], stdout=out, stderr=err) == 1
    assert "--hardware: published holds no InferenceClass" in err.getvalue(), err.getvalue()
