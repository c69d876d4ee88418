"""schemas/upstream agrees with its pins (hack/crds): offline, so it runs in every `make test`.

The first test is the guard: a hand-edited CRD, a file nobody pinned, a pinned
file that went missing or a stale SOURCES.md fails the suite. The rest show
that the checker really finds each of those, on a copy.
"""
from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

from tests.support import ROOT


def _load_crds():
    spec = importlib.util.spec_from_file_location("hack_crds", ROOT / "hack" / "crds.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


crds = _load_crds()


def test_vendored_schemas_match_their_pins():
    assert crds.check(crds.load_pins(), crds.read_sums()) == []


def test_every_pin_names_its_upstream_version():
    for src in crds.load_pins():
        assert src.version.startswith("v"), src.name
        assert src.go or len(src.commit) == 40, src.name


def test_the_package_loads_schemas_from_the_vendored_folder():
    from modelplane import paths
    assert paths.UPSTREAM.resolve() == crds.UPSTREAM.resolve()


@pytest.fixture(scope="module")
def small():
    """Two real sources (a handful of small files), enough to break in every way."""
    return [s for s in crds.load_pins() if s.name in ("metallb", "provider-kubernetes")]


@pytest.fixture
def copy(tmp_path: Path, small) -> tuple[Path, dict[str, str]]:
    sums = crds.read_sums()
    for src in small:
        for dest in src.dests():
            (tmp_path / dest).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(crds.UPSTREAM / dest, tmp_path / dest)
    mine = {d: sums[d] for s in small for d in s.dests()}
    (tmp_path / crds.SOURCES_MD).write_text(crds.render_sources_md(small, mine, tmp_path))
    assert crds.check(small, mine, tmp_path) == []
    return tmp_path, mine


def test_check_finds_a_changed_file(copy, small):
    root, sums = copy
    f = root / "metallb" / "metallb.io_ipaddresspools.yaml"
    f.write_bytes(f.read_bytes().replace(b"IPAddressPool", b"IPAddressPoo1", 1))
    problems = crds.check(small, sums, root)
    assert any(p.startswith("metallb/metallb.io_ipaddresspools.yaml: sha256 ") for p in problems), problems


def test_check_finds_a_missing_file(copy, small):
    root, sums = copy
    (root / "provider-kubernetes" / "kubernetes.m.crossplane.io_objects.yaml").unlink()
    assert "provider-kubernetes/kubernetes.m.crossplane.io_objects.yaml: pinned but missing (run make crds)" in \
        crds.check(small, sums, root)


def test_check_finds_an_unpinned_file(copy, small):
    root, sums = copy
    (root / "metallb" / "metallb.io_bgppeers.yaml").write_text("kind: CustomResourceDefinition\n")
    assert any(p.startswith("metallb/metallb.io_bgppeers.yaml: not pinned") for p in crds.check(small, sums, root))


def test_check_finds_a_pin_without_digest_and_a_stale_sources_md(copy, small):
    root, sums = copy
    del sums["metallb/metallb.io_l2advertisements.yaml"]
    problems = crds.check(small, sums, root)
    assert any(p.startswith("metallb/metallb.io_l2advertisements.yaml: listed in sources.yaml but has no digest")
               for p in problems), problems
    assert any(p.startswith("SOURCES.md is stale") for p in problems), problems


def test_sources_md_describes_each_file():
    text = (crds.UPSTREAM / crds.SOURCES_MD).read_text()
    assert "| `metallb/metallb.io_ipaddresspools.yaml` | `config/crd/bases/metallb.io_ipaddresspools.yaml` | " \
           "IPAddressPool [Namespaced] — metallb.io/v1beta1 (storage) |" in text
    assert "Go module `go.universe.tf/metallb@v0.16.2`" in text


@pytest.mark.parametrize("entry, want", [
    ({"name": "x", "project": "o/r", "files": ["a.yaml"]}, "needs exactly one of go: (module@version) or github:"),
    ({"name": "x", "project": "o/r", "go": "example.org/m", "files": ["a.yaml"]}, "go: expected module@version"),
    ({"name": "x", "project": "o/r", "github": {"ref": "v1"}, "files": ["a.yaml"]}, "github: expected {ref: <tag>"),
    ({"name": "x", "project": "o/r", "go": "m@v1", "files": []}, "files: required list"),
    ({"name": "x", "project": "o/r", "go": "m@v1", "file": ["a"]}, "unknown field(s) file"),
    ({"project": "o/r", "go": "m@v1", "files": ["a"]}, "name: required string"),
])
def test_bad_pin_entries_say_which_field(tmp_path: Path, entry: dict, want: str):
    import yaml
    pins = tmp_path / "sources.yaml"
    pins.write_text(yaml.safe_dump({"sources": [entry]}))
    with pytest.raises(crds.PinError, match="sources\\[0\\]") as err:
        crds.load_pins(pins)
    assert want in str(err.value)


def test_two_sources_may_not_write_the_same_file(tmp_path: Path):
    pins = tmp_path / "sources.yaml"
    pins.write_text("sources:\n- {name: a, project: o/r, go: m@v1, dir: d, files: [x/c.yaml]}\n"
                    "- {name: b, project: o/r, go: m@v2, dir: d, files: [y/c.yaml]}\n")
    with pytest.raises(crds.PinError, match=r"sources\[1\] \(b\): files: y/c.yaml would overwrite d/c.yaml"):
        crds.load_pins(pins)


def test_sync_writes_new_files_refuses_changed_digests_and_drops_unpinned(tmp_path: Path, monkeypatch):
    src = crds.Source(name="demo", project="o/r", files=("crds/a.yaml", "crds/b.yaml"), dir="demo", go="m@v1")
    upstream, sums = tmp_path / "upstream", tmp_path / "SHA256SUMS"
    (upstream / "old").mkdir(parents=True)
    (upstream / "old" / "gone.yaml").write_text("x")
    served = {"demo/a.yaml": b"a: 1\n", "demo/b.yaml": b"b: 1\n"}
    monkeypatch.setattr(crds, "fetch", lambda s: dict(served))
    monkeypatch.setattr(crds, "describe", lambda data, name: "described")

    assert crds.sync([src], set(), update=False, upstream=upstream, sums_path=sums) == []
    assert (upstream / "demo" / "a.yaml").read_bytes() == b"a: 1\n"
    assert not (upstream / "old" / "gone.yaml").exists()  # not pinned: removed by a full run
    assert crds.read_sums(sums) == {d: crds.sha256(b) for d, b in served.items()}

    served["demo/a.yaml"] = b"a: 2\n"  # upstream changed under the same version
    errors = crds.sync([src], set(), update=False, upstream=upstream, sums_path=sums)
    assert len(errors) == 1 and errors[0].startswith("demo/a.yaml: upstream sha256 ")
    assert "--update --only demo" in errors[0]
    assert (upstream / "demo" / "a.yaml").read_bytes() == b"a: 1\n"  # left as pinned

    assert crds.sync([src], {"demo"}, update=True, upstream=upstream, sums_path=sums) == []
    assert (upstream / "demo" / "a.yaml").read_bytes() == b"a: 2\n"
    assert crds.read_sums(sums)["demo/a.yaml"] == crds.sha256(b"a: 2\n")
    assert crds.check([src], crds.read_sums(sums), upstream) == []


def test_sync_reports_a_source_it_cannot_fetch_and_keeps_its_files(tmp_path: Path, monkeypatch):
    src = crds.Source(name="far", project="o/r", files=("a.yaml",), dir="far", ref="v1", commit="0" * 40)
    upstream, sums = tmp_path / "upstream", tmp_path / "SHA256SUMS"
    (upstream / "far").mkdir(parents=True)
    (upstream / "far" / "a.yaml").write_bytes(b"kept\n")
    crds.write_sums({"far/a.yaml": crds.sha256(b"kept\n")}, sums)

    def unreachable(s):
        raise crds.FetchError("no route to host")
    monkeypatch.setattr(crds, "fetch", unreachable)
    monkeypatch.setattr(crds, "describe", lambda data, name: "described")
    errors = crds.sync([src], set(), update=False, upstream=upstream, sums_path=sums)
    assert errors == ["far: could not fetch (no route to host); its vendored files were left as they are"]
    assert (upstream / "far" / "a.yaml").read_bytes() == b"kept\n"
    assert crds.check([src], crds.read_sums(sums), upstream) == []
