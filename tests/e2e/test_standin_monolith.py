"""Lab stand-ins for monolithic Upjet providers (provider-nebius, provider-vultr): one package, every CRD.

Pure: no process, no network (runs in `make test`). The service/family layout is covered in test_units.py.
"""
from __future__ import annotations

import pytest
import yaml
from modelplane import paths
from modelplane.e2e import packages

NEBIUS = "xpkg.upbound.io/upbound/provider-nebius"
VULTR = "xpkg.upbound.io/upbound/provider-vultr"


def _fake_cloud(tmp_path, cloud: str, files: tuple[str, ...]):
    folder = tmp_path / f"provider-upjet-{cloud}"
    folder.mkdir()
    for f in files:
        (folder / f).write_text("{}")


def test_monolith_carries_every_vendored_crd_of_its_cloud():
    deps = [d["package"] for d in packages.dependencies(yaml.safe_load((paths.ROOT / "crossplane.yaml").read_text()))]
    assert NEBIUS in deps and VULTR in deps
    crds = packages.standin_crds(deps)
    for path, cloud in ((NEBIUS, "nebius"), (VULTR, "vultr")):
        folder = paths.crds_dir() / f"provider-upjet-{cloud}"
        assert crds[path] == sorted(f"{folder.name}/{f.name}" for f in folder.glob("*.yaml")), path
    assert "provider-upjet-nebius/mk8s.nebius.m.upbound.io_clusters.yaml" in crds[NEBIUS]
    assert "provider-upjet-nebius/nebius.m.upbound.io_providerconfigs.yaml" in crds[NEBIUS]
    assert "provider-upjet-vultr/vke.vultr.m.upbound.io_kubernetes.yaml" in crds[VULTR]
    assert "provider-upjet-vultr/vultr.m.upbound.io_clusterproviderconfigs.yaml" in crds[VULTR]


def test_names_still_parse_as_service_family_or_monolith(tmp_path):
    _fake_cloud(tmp_path, "gcp", ("container.gcp.m.upbound.io_clusters.yaml", "gcp.m.upbound.io_providerconfigs.yaml"))
    _fake_cloud(tmp_path, "nebius", ("mk8s.nebius.m.upbound.io_clusters.yaml", "nebius.m.upbound.io_providerconfigs.yaml"))
    crds = packages.standin_crds(["xpkg.upbound.io/upbound/provider-gcp-container",
                                  "xpkg.upbound.io/upbound/provider-family-gcp", NEBIUS], tmp_path)
    assert crds == {
        "xpkg.upbound.io/upbound/provider-gcp-container": ["provider-upjet-gcp/container.gcp.m.upbound.io_clusters.yaml"],
        "xpkg.upbound.io/upbound/provider-family-gcp": ["provider-upjet-gcp/gcp.m.upbound.io_providerconfigs.yaml"],
        NEBIUS: ["provider-upjet-nebius/mk8s.nebius.m.upbound.io_clusters.yaml",
                 "provider-upjet-nebius/nebius.m.upbound.io_providerconfigs.yaml"],
    }


def test_built_providers_are_not_standins():
    for path in packages.BUILT_PROVIDERS:
        assert not packages.is_standin(path), path
    assert packages.standin_crds(list(packages.BUILT_PROVIDERS)) == {}


def test_monolith_without_vendored_crds_names_the_folder(tmp_path):
    with pytest.raises(ValueError, match=r"provider-linode: no vendored CRDs in .*provider-upjet-linode"):
        packages.standin_crds(["xpkg.upbound.io/upbound/provider-linode"], tmp_path)


def test_monolith_and_service_packages_of_one_cloud_clash(tmp_path):
    _fake_cloud(tmp_path, "nebius", ("mk8s.nebius.m.upbound.io_clusters.yaml",))
    with pytest.raises(ValueError, match=r"provider-nebius and .*provider-nebius-mk8s: the monolithic provider"):
        packages.standin_crds([NEBIUS, "xpkg.upbound.io/upbound/provider-nebius-mk8s"], tmp_path)


def test_monolith_standin_package_holds_its_crds(tmp_path):
    crds = packages.standin_crds([VULTR])[VULTR]
    root = packages.stage_standin(VULTR, crds, tmp_path / "vultr")
    meta = yaml.safe_load((root / "crossplane.yaml").read_text())
    assert meta["metadata"]["name"] == "provider-vultr"
    assert meta["metadata"]["annotations"][packages.STANDIN_ANNOTATION] == "true"
    assert sorted(p.name for p in root.glob("*.yaml")) == ["crossplane.yaml"] + sorted(c.rsplit("/", 1)[1] for c in crds)
