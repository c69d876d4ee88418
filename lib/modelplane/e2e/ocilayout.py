"""Image layers and image archives written byte for byte the same from the same inputs.

A layer is a tar of a folder: entries in path order, every timestamp clamped to
one fixed time (``EPOCH``), owners as numbers (no user or group names), no
device nodes, nothing from ``/proc``, ``/sys``, ``/dev``, ``/run`` or ``/tmp``.
An image is a config (JSON, keys sorted, no spaces) naming its layers by the
sha256 of their tar (``diff_ids``); its ID is the sha256 of that config, which
``podman load`` keeps as the image ID. Two builds from the same inputs give the
same layers, the same configs and so the same IDs.

``write_archive`` writes the ``docker save`` format (``manifest.json``, the
configs, each layer once): what ``podman load`` and ``crossplane xpkg build
--embed-runtime-image-tarball`` read.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import tarfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

# 2026-01-01T00:00:00Z: no file in an image is newer (files from Debian packages keep their
# packaged time when it is older).
EPOCH = 1767225600
# Folders whose contents a container runtime provides (mounts): kept as empty folders.
RUNTIME_DIRS = ("dev", "proc", "sys", "run", "tmp")
CHUNK = 1 << 20


def created() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(EPOCH))


def _walk(root: Path, top: str) -> Iterable[tuple[Path, str]]:
    """(path, name in the layer) for ``root/top`` and everything below it, depth first, each
    folder's entries in byte order of their names."""
    start = root / top if top else root
    if top:
        yield start, top
        if start.is_symlink() or not start.is_dir():
            return
    stack = [(start, top)]
    while stack:
        path, name = stack.pop()
        if path is not start:
            yield path, name
            if not path.is_dir() or path.is_symlink() or ("/" not in name and not top and name in RUNTIME_DIRS):
                continue
        entries = sorted(os.listdir(path), key=os.fsencode)
        stack.extend((path / e, f"{name}/{e}" if name else e) for e in reversed(entries))


def write_layer(root: Path, dest: Path, tops: Sequence[str] = ("",), skip: Iterable[str] = ()) -> str:
    """Tar the folders ``tops`` (relative to ``root``; ``""`` is all of it) into ``dest``; returns
    ``sha256:<hex>`` of the tar (the layer's diff_id). ``skip`` names files or folders left out."""
    skipped = set(skip)
    seen_inodes: dict[tuple[int, int], str] = {}
    with dest.open("wb") as raw, tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for top in tops:
            for path, arc in _walk(root, top):
                if arc in skipped or any(arc.startswith(s + "/") for s in skipped):
                    continue
                st = path.lstat()
                if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) or stat.S_ISSOCK(st.st_mode) \
                        or stat.S_ISFIFO(st.st_mode):
                    continue
                info = tarfile.TarInfo(arc)
                info.mode = stat.S_IMODE(st.st_mode)
                info.uid, info.gid, info.uname, info.gname = st.st_uid, st.st_gid, "", ""
                info.mtime = min(int(st.st_mtime), EPOCH)
                key = (st.st_dev, st.st_ino)
                if stat.S_ISLNK(st.st_mode):
                    info.type, info.linkname = tarfile.SYMTYPE, os.readlink(path)
                    tar.addfile(info)
                elif stat.S_ISDIR(st.st_mode):
                    info.type = tarfile.DIRTYPE
                    tar.addfile(info)
                elif st.st_nlink > 1 and key in seen_inodes:
                    info.type, info.linkname = tarfile.LNKTYPE, seen_inodes[key]
                    tar.addfile(info)
                else:
                    if st.st_nlink > 1:
                        seen_inodes[key] = arc
                    info.size = st.st_size
                    with path.open("rb") as f:
                        tar.addfile(info, f)
    return "sha256:" + file_sha256(dest)


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class Image:
    """One image: its config (as bytes) and its layers, bottom first."""

    config: bytes
    layers: tuple[tuple[Path, str], ...]   # (tar file, its diff_id)
    tags: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return "sha256:" + hashlib.sha256(self.config).hexdigest()


def config_bytes(config: Mapping, diff_ids: Sequence[str], history: Sequence[str]) -> bytes:
    """The image config: ``config`` (Entrypoint, Env, User, ...) over ``diff_ids``."""
    doc = {
        "architecture": "amd64", "os": "linux", "created": created(),
        "config": dict(config),
        "rootfs": {"type": "layers", "diff_ids": list(diff_ids)},
        "history": [{"created": created(), "created_by": h} for h in history],
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o644, EPOCH
    tar.addfile(info, io.BytesIO(data))


def write_archive(dest: Path, images: Sequence[Image]) -> None:
    """``docker save`` format holding ``images`` (a layer shared by several is written once)."""
    manifest, written = [], set()
    with dest.open("wb") as raw, tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for image in images:
            config_name = image.id.split(":", 1)[1] + ".json"
            if config_name not in written:
                _add_bytes(tar, config_name, image.config)
                written.add(config_name)
            names = []
            for layer, diff_id in image.layers:
                name = f"{diff_id.split(':', 1)[1]}.tar"
                if name not in written:
                    info = tarfile.TarInfo(name)
                    info.size, info.mode, info.mtime = layer.stat().st_size, 0o644, EPOCH
                    with layer.open("rb") as f:
                        tar.addfile(info, f)
                    written.add(name)
                names.append(name)
            manifest.append({"Config": config_name, "RepoTags": list(image.tags), "Layers": names})
        _add_bytes(tar, "manifest.json", json.dumps(manifest, separators=(",", ":")).encode())
