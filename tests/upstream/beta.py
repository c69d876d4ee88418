"""`crossplane beta validate` (v2.2) as a judge: one verdict per document.

beta validate always looks for Crossplane's own CRDs in the crossplane image,
which it downloads into ``--cache-dir`` unless a copy is there; there is no
network at test time, so the cache gets an empty entry for that image and the
vendored Crossplane CRDs (schemas/upstream/crossplane, the files the image
carries) are passed as extensions with the others. Kubernetes built-in kinds
have no CRD: beta validate reports them as missing schemas ("[!]").

Documents are validated in batches (one process each) in which no two share
apiVersion, kind and name, so every output line belongs to exactly one of them.
Each batch gets only the definitions of its kinds: beta validate compiles every
schema and CEL rule it is given, and the cloud providers' CRDs are large.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

CROSSPLANE_IMAGE_CACHE = "xpkg.crossplane.io/crossplane/crossplane@v{version}/package.yaml"


@dataclass(frozen=True)
class Verdict:
    """accepted, the field paths of the errors, the raw lines (missing: no schema for the kind)."""

    accepted: bool
    fields: tuple[str, ...]
    lines: tuple[str, ...]
    missing: bool = False


def seed_cache(cache: Path, version: str) -> None:
    """An empty cached crossplane image: its CRDs come in as extensions, only those a batch needs."""
    target = cache / CROSSPLANE_IMAGE_CACHE.format(version=version.lstrip("v"))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("# Crossplane's CRDs are passed as extensions (schemas/upstream/crossplane)\n")


def _gvk(doc: dict) -> str:
    api, kind = doc.get("apiVersion", ""), doc.get("kind", "")
    group, _, version = api.rpartition("/")
    return f"{group}/{version}, Kind={kind}" if group else f"/{version}, Kind={kind}"


def _name(doc: dict) -> str:
    meta = doc.get("metadata") or {}
    return meta.get("name") or (meta.get("annotations") or {}).get("crossplane.io/composition-resource-name", "")


def _key(doc: dict) -> tuple[str, str]:
    return _gvk(doc), _name(doc)


def field_of(error: str) -> str:
    """``spec.size: Required value`` -> ``spec.size``; a root error (``<nil>: ...``) -> ``<no field>``."""
    path = error.split(": ", 1)[0]
    return "<no field>" if path in ("<nil>", "") else path


def batches(docs: list[dict]) -> list[list[int]]:
    """Indexes of ``docs`` grouped so that no batch holds two documents with the same key."""
    out: list[tuple[set, list[int]]] = []
    for i, d in enumerate(docs):
        k = _key(d)
        for keys, members in out:
            if k not in keys:
                keys.add(k)
                members.append(i)
                break
        else:
            out.append(({k}, [i]))
    return [members for _, members in out]


def validate(binary: Path, definitions: list[dict], docs: list[dict], workdir: Path) -> list[Verdict]:
    """One Verdict per document, in order."""
    workdir.mkdir(parents=True, exist_ok=True)
    cache = workdir / "cache"
    version = subprocess.run([binary, "version", "--client"], capture_output=True, text=True, check=True,
                             timeout=60).stdout.split()[-1]
    seed_cache(cache, version)
    by_kind: dict[tuple[str, str], list[dict]] = {}
    for d in definitions:
        spec = d.get("spec") or {}
        by_kind.setdefault((spec.get("group", ""), (spec.get("names") or {}).get("kind", "")), []).append(d)
    verdicts: list[Verdict | None] = [None] * len(docs)
    for n, members in enumerate(batches(docs)):
        kinds = {(docs[i].get("apiVersion", "").rpartition("/")[0], docs[i].get("kind", "")) for i in members}
        ext = workdir / f"extensions-{n}.yaml"
        ext.write_text(yaml.safe_dump_all([d for k in sorted(kinds) for d in by_kind.get(k, [])], sort_keys=False))
        res = workdir / f"resources-{n}.yaml"
        res.write_text(yaml.safe_dump_all([docs[i] for i in members], sort_keys=False))
        out = subprocess.run([binary, "beta", "validate", str(ext), str(res), "--cache-dir", str(cache)],
                             capture_output=True, text=True, timeout=300, check=False)
        if "Total " not in out.stdout:
            raise RuntimeError(f"crossplane beta validate failed: {out.stderr or out.stdout}")
        lines = out.stdout.splitlines()
        for i in members:
            verdicts[i] = _verdict(docs[i], lines)
    return [v for v in verdicts if v is not None]


def _verdict(doc: dict, lines: list[str]) -> Verdict:
    gvk, name = _key(doc)
    missing = f"[!] could not find CRD/XRD for: {gvk}"
    errors = []
    for prefix in ("[x] schema validation error ", "[x] CEL validation error "):
        head = f"{prefix}{gvk}, {name} : "
        errors += [line[len(head):] for line in lines if line.startswith(head)]
    if errors:
        return Verdict(False, tuple(sorted({field_of(e) for e in errors})), tuple(errors))
    if f"[✓] {gvk}, {name} validated successfully" in lines:
        return Verdict(True, (), ())
    if missing in lines:
        return Verdict(True, (), (missing,), missing=True)
    raise AssertionError(f"no verdict for {gvk} {name} in:\n" + "\n".join(lines))
