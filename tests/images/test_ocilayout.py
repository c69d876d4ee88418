"""Reproducible layers and archives (``modelplane.e2e.ocilayout``) and the image runtime's pure
parts (``modelplane.e2e.image_runtime``): no podman, no root (``make test``)."""
from __future__ import annotations

import json
import os
import tarfile

from modelplane.e2e import image_runtime, ocilayout


def _tree(root, when: int):
    (root / "venv" / "bin").mkdir(parents=True)
    (root / "venv" / "bin" / "b").write_text("b")
    (root / "venv" / "a").write_text("a")
    os.link(root / "venv" / "a", root / "venv" / "a-link")
    (root / "venv" / "py").symlink_to("/usr/bin/python3")
    (root / "proc" / "1").mkdir(parents=True)
    (root / "proc" / "1" / "x").write_text("runtime")
    for p in [root, *root.rglob("*")]:
        os.utime(p, (when, when), follow_symlinks=False)


def test_same_tree_at_other_times_gives_the_same_layer(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _tree(a, ocilayout.EPOCH + 1000)   # built later: clamped to EPOCH
    _tree(b, ocilayout.EPOCH + 99999)
    da = ocilayout.write_layer(a, tmp_path / "a.tar")
    db = ocilayout.write_layer(b, tmp_path / "b.tar")
    assert da == db and da.startswith("sha256:")
    with tarfile.open(tmp_path / "a.tar") as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert list(members) == sorted(members, key=os.fsencode)   # path order
    assert "proc" in members and "proc/1" not in members       # the runtime's folders stay empty
    assert members["venv/a-link"].islnk() and members["venv/a-link"].linkname == "venv/a"
    assert members["venv/py"].issym() and members["venv/py"].linkname == "/usr/bin/python3"
    assert {m.mtime for m in members.values()} == {ocilayout.EPOCH}
    assert {(m.uname, m.gname) for m in members.values()} == {("", "")}


def test_older_times_are_kept_and_content_changes_the_digest(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _tree(a, 1_600_000_000)
    _tree(b, 1_600_000_000)
    (b / "venv" / "bin" / "b").write_text("B")
    os.utime(b / "venv" / "bin" / "b", (1_600_000_000, 1_600_000_000))
    da = ocilayout.write_layer(a, tmp_path / "a.tar", tops=("venv",))
    assert da != ocilayout.write_layer(b, tmp_path / "b.tar", tops=("venv",))
    with tarfile.open(tmp_path / "a.tar") as tar:
        assert tar.getnames()[0] == "venv" and "proc" not in tar.getnames()
        assert tar.getmember("venv/a").mtime == 1_600_000_000


def test_archive_holds_each_layer_once_and_ids_are_config_digests(tmp_path):
    _tree(tmp_path / "t", ocilayout.EPOCH)
    layer = tmp_path / "l.tar"
    diff_id = ocilayout.write_layer(tmp_path / "t", layer)
    images = [ocilayout.Image(ocilayout.config_bytes({"Env": [f"F={n}"]}, [diff_id], ["x"]), ((layer, diff_id),),
                              (f"localhost/t/{n}:v1",)) for n in ("a", "b")]
    assert images[0].id != images[1].id
    ocilayout.write_archive(tmp_path / "out.tar", images)
    with tarfile.open(tmp_path / "out.tar") as tar:
        names = tar.getnames()
        manifest = json.load(tar.extractfile("manifest.json"))
    assert names.count(diff_id.split(":")[1] + ".tar") == 1
    assert [m["RepoTags"] for m in manifest] == [["localhost/t/a:v1"], ["localhost/t/b:v1"]]
    assert [m["Config"] for m in manifest] == [i.id.split(":")[1] + ".json" for i in images]


def test_the_image_runtime_runs_the_resolved_package_and_mounts_tls_like_a_secret(tmp_path):
    rev = {"spec": {"image": "xpkg.crossplane.io/modelplane/compose-x:v0.1.0"},
           "status": {"resolvedImage": "127.0.0.1:5000/xpkg.crossplane.io/modelplane/compose-x:v0.1.0"}}
    assert image_runtime.image_ref(rev) == "127.0.0.1:5000/xpkg.crossplane.io/modelplane/compose-x:v0.1.0"
    assert image_runtime.image_ref({"spec": rev["spec"]}) == rev["spec"]["image"]
    assert image_runtime._loopback("127.0.0.1:5000/x:v1") and image_runtime._loopback("localhost:5000/x")
    assert not image_runtime._loopback("xpkg.crossplane.io/modelplane/x:v1")
    src = tmp_path / "tls"
    src.mkdir()
    for name in ("tls.crt", "tls.key", "ca.crt"):
        (src / name).write_text(name)
    (src / "tls.key").chmod(0o600)
    vol = image_runtime.secret_volume(src, tmp_path / "vol")
    assert sorted(p.name for p in vol.iterdir()) == ["ca.crt", "tls.crt", "tls.key"]
    assert {oct(p.stat().st_mode & 0o777) for p in vol.iterdir()} == {"0o644"}
