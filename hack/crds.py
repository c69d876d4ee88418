#!/usr/bin/env python3
"""The vendored upstream schemas (schemas/upstream): fetch, verify, describe.

    hack/crds.py                 fetch every pinned file, check it against its digest, write it,
                                 and regenerate schemas/upstream/SOURCES.md   (make crds)
    hack/crds.py --only NAME...  the same for some sources (new or bumped ones)
    hack/crds.py --update        accept digests that changed (after a version bump) and record them
    hack/crds.py --check         offline: every file matches its digest, nothing unpinned, SOURCES.md
                                 is current (the test suite runs this)
    hack/crds.py --from DIR ...  take github: sources from DIR/<owner>/<repo>/<commit>/<path> (the
                                 raw-download layout) instead of the network, for machines that
                                 cannot reach GitHub but have the files (e.g. `git show` of a clone)

What to fetch is hack/crds/sources.yaml (written by people); the digest of every
file is hack/crds/SHA256SUMS (written by this script, `sha256sum -c` format).
SOURCES.md is generated from both, so it cannot drift from what is vendored.
hack/crds/README.md says how to add a source.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PINS = ROOT / "hack" / "crds" / "sources.yaml"
SUMS = ROOT / "hack" / "crds" / "SHA256SUMS"
UPSTREAM = ROOT / "schemas" / "upstream"
SOURCES_MD = "SOURCES.md"


class PinError(ValueError):
    """sources.yaml is malformed; the message names the entry and the field."""


class FetchError(RuntimeError):
    """A source could not be downloaded."""


@dataclass(frozen=True)
class Source:
    name: str
    project: str  # upstream GitHub owner/repo, for people
    files: tuple[str, ...]  # paths inside the module or repository
    dir: str  # destination folder under schemas/upstream
    note: str = ""
    go: str = ""  # module@version, fetched with `go mod download`
    ref: str = ""  # GitHub tag, for people (github sources)
    commit: str = ""  # the commit the files are fetched at (github sources)

    @property
    def version(self) -> str:
        return self.go.rsplit("@", 1)[1] if self.go else self.ref

    def dest(self, path: str) -> str:
        """Where an upstream file goes, relative to schemas/upstream."""
        return f"{self.dir}/{path.rsplit('/', 1)[-1]}"

    def dests(self) -> dict[str, str]:
        return {self.dest(p): p for p in self.files}


# ----- the pin file ----------------------------------------------------------

def load_pins(path: Path = PINS) -> list[Source]:
    """Parse and check sources.yaml."""
    doc = yaml.safe_load(path.read_text())
    if not isinstance(doc, dict) or not isinstance(doc.get("sources"), list):
        raise PinError(f"{path}: expected a mapping with a `sources:` list")
    out: list[Source] = []
    names: set[str] = set()
    dests: dict[str, str] = {}
    for i, raw in enumerate(doc["sources"]):
        where = f"{path.name}: sources[{i}]"
        src = _source(raw, where)
        where = f"{path.name}: sources[{i}] ({src.name})"
        if src.name in names:
            raise PinError(f"{where}: name: {src.name!r} is used twice; names must be unique")
        names.add(src.name)
        for path_in, dest in ((p, src.dest(p)) for p in src.files):
            if dest in dests:
                raise PinError(f"{where}: files: {path_in} would overwrite {dest} (also from {dests[dest]}); "
                               "give the source its own dir:")
            dests[dest] = src.name
        out.append(src)
    return out


def _source(raw: object, where: str) -> Source:
    if not isinstance(raw, dict):
        raise PinError(f"{where}: expected a mapping (name, project, go or github, files)")
    known = {"name", "project", "dir", "note", "go", "github", "files"}
    if unknown := sorted(set(raw) - known):
        raise PinError(f"{where}: unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(known))}")
    for field in ("name", "project"):
        if not isinstance(raw.get(field), str) or not raw[field]:
            raise PinError(f"{where}: {field}: required string")
    files = raw.get("files")
    if not isinstance(files, list) or not files or not all(isinstance(f, str) and f for f in files):
        raise PinError(f"{where}: files: required list of paths inside the module or repository")
    if len(set(files)) != len(files):
        raise PinError(f"{where}: files: a path is listed twice")
    kw = {"name": raw["name"], "project": raw["project"], "files": tuple(files),
          "dir": raw.get("dir") or raw["name"], "note": " ".join(str(raw.get("note") or "").split())}
    if ("go" in raw) == ("github" in raw):
        raise PinError(f"{where}: needs exactly one of go: (module@version) or github: (ref and commit)")
    if "go" in raw:
        go = raw["go"]
        if not isinstance(go, str) or go.count("@") != 1 or not all(go.split("@")):
            raise PinError(f"{where}: go: expected module@version (e.g. sigs.k8s.io/lws@v0.9.0), got {go!r}")
        return Source(go=go, **kw)
    gh = raw["github"]
    if (not isinstance(gh, dict) or set(gh) != {"ref", "commit"} or not isinstance(gh["commit"], str)
            or len(gh["commit"]) != 40):
        raise PinError(f"{where}: github: expected {{ref: <tag>, commit: <40-hex commit of that tag>}}")
    return Source(ref=str(gh["ref"]), commit=gh["commit"], **kw)


def read_sums(path: Path = SUMS) -> dict[str, str]:
    """SHA256SUMS as {path under schemas/upstream: hex digest}."""
    if not path.is_file():
        return {}
    out = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            raise PinError(f"{path.name}:{n}: expected '<sha256>  <path>', got {line!r}")
        out[name] = digest
    return out


def write_sums(sums: dict[str, str], path: Path = SUMS) -> None:
    path.write_text("".join(f"{sums[k]}  {k}\n" for k in sorted(sums)))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ----- fetching --------------------------------------------------------------

def fetch(src: Source, from_dir: Path | None = None) -> dict[str, bytes]:
    """{destination: bytes} for every file of ``src``; github: files from ``from_dir`` when given."""
    if src.go:
        base = _go_download(src.go)
        out = {}
        for p in src.files:
            f = base / p
            if not f.is_file():
                raise FetchError(f"{src.go} has no file {p}")
            out[src.dest(p)] = f.read_bytes()
        return out
    if from_dir is not None:
        return {src.dest(p): _github_local(from_dir, src.project, src.commit, p) for p in src.files}
    return {src.dest(p): _github_raw(src.project, src.commit, p) for p in src.files}


def _go_download(module_at_version: str) -> Path:
    """The module's folder in the Go module cache (downloaded through $GOPROXY if absent)."""
    # Outside any module or workspace, so nobody's go.mod or go.work takes part.
    env = {**os.environ, "GO111MODULE": "on", "GOWORK": "off", "GOFLAGS": "-mod=mod"}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            run = subprocess.run(["go", "mod", "download", "-json", module_at_version], cwd=tmp, env=env,
                                 capture_output=True, text=True, timeout=1800, check=False)
        except FileNotFoundError:
            raise FetchError("`go` is not on PATH; install Go to fetch Go module sources") from None
    try:
        info = json.loads(run.stdout)
    except json.JSONDecodeError:
        raise FetchError(f"go mod download {module_at_version}: {run.stderr.strip() or run.stdout.strip()}") from None
    if info.get("Error") or not info.get("Dir"):
        raise FetchError(f"go mod download {module_at_version}: {info.get('Error', 'no Dir in output')}")
    return Path(info["Dir"])


def _github_raw(project: str, commit: str, path: str) -> bytes:
    # For projects whose Go module the module proxy does not serve (e.g. too large).
    url = f"https://raw.githubusercontent.com/{project}/{commit}/{path}"
    try:
        with urllib.request.urlopen(url, timeout=120) as rsp:
            return rsp.read()
    except OSError as e:
        raise FetchError(f"{url}: {e}") from None


def _github_local(from_dir: Path, project: str, commit: str, path: str) -> bytes:
    # Same layout as the raw URL, so the commit is part of the path and a file of another
    # commit cannot be taken by mistake; the digest check in sync() still applies.
    f = from_dir / project / commit / path
    if not f.is_file():
        raise FetchError(f"--from: no file {f} (expected <dir>/<owner>/<repo>/<commit>/<path>)")
    return f.read_bytes()


# ----- SOURCES.md ------------------------------------------------------------

def describe(data: bytes, name: str) -> str:
    """What a vendored file defines, for people: kind [scope] - group/versions, or the OpenAPI document."""
    if name.endswith(".json"):
        doc = json.loads(data)
        return f"OpenAPI {doc.get('swagger') or doc.get('openapi')}, {len(doc.get('definitions', {}))} definitions"
    doc = yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    spec = doc["spec"]
    versions = []
    for v in spec["versions"]:
        flags = [f for f, on in (("storage", v.get("storage")), ("not served", not v.get("served", True)),
                                 ("deprecated", v.get("deprecated"))) if on]
        versions.append(f"{spec['group']}/{v['name']}" + (f" ({', '.join(flags)})" if flags else ""))
    return f"{spec['names']['kind']} [{spec.get('scope', '?')}] — {', '.join(versions)}"


def render_sources_md(sources: list[Source], sums: dict[str, str], upstream: Path = UPSTREAM) -> str:
    lines = [
        "# Upstream CRDs and Kubernetes OpenAPI: where each file comes from",
        "",
        ("<!-- Generated by hack/crds.py from hack/crds/sources.yaml and hack/crds/SHA256SUMS;"
         " do not edit: change those and run `make crds`. -->"),
        "",
        "Byte-for-byte copies of upstream files, used by `modelplane validate`, `modelplane render -s` and the",
        "tests to check composed resources. `make crds` fetches them again from the pinned sources and checks",
        "each against its SHA-256; the test suite fails when a file here differs from its digest, a pinned",
        "file is missing, or a file is not pinned. To add or bump a source, see hack/crds/README.md.",
        "",
    ]
    total_files = total_bytes = 0
    for src in sources:
        if src.go:
            origin = f"Go module `{src.go}` (`go mod download`)"
        else:
            origin = (f"https://github.com/{src.project} `{src.ref}`, commit `{src.commit}`"
                      " (raw file download: the Go module proxy does not serve this module or version)")
        upstream_line = f"Upstream: https://github.com/{src.project} **{src.version}**. Fetched from: {origin}."
        lines += [f"## {src.name}", "", upstream_line, ""]
        if src.note:
            lines += [src.note, ""]
        lines += ["| file | upstream path | defines | bytes | sha256 |", "|---|---|---|---|---|"]
        for path in src.files:
            dest = src.dest(path)
            f = upstream / dest
            if f.is_file():
                data = f.read_bytes()
                what, size = describe(data, dest), f"{len(data)}"
                total_files, total_bytes = total_files + 1, total_bytes + len(data)
            else:
                what, size = "**missing**", "-"
            lines.append(f"| `{dest}` | `{path}` | {what} | {size} | `{sums.get(dest, 'unpinned')[:16]}…` |")
        lines.append("")
    lines.append(f"Total: {total_files} files, {total_bytes:,} bytes.")
    return "\n".join(lines) + "\n"


# ----- check and sync --------------------------------------------------------

def check(sources: list[Source], sums: dict[str, str], upstream: Path = UPSTREAM) -> list[str]:
    """Every way the vendored folder disagrees with its pins, offline; [] when it agrees."""
    problems = []
    pinned = {d for s in sources for d in s.dests()}
    for dest in sorted(pinned - set(sums)):
        problems.append(f"{dest}: listed in sources.yaml but has no digest in SHA256SUMS (run make crds)")
    for dest in sorted(set(sums) - pinned):
        problems.append(f"{dest}: has a digest in SHA256SUMS but no entry in sources.yaml")
    for dest in sorted(pinned & set(sums)):
        f = upstream / dest
        if not f.is_file():
            problems.append(f"{dest}: pinned but missing (run make crds)")
        elif (got := sha256(f.read_bytes())) != sums[dest]:
            problems.append(f"{dest}: sha256 {got} differs from the pinned {sums[dest]}; "
                            "restore the upstream file (make crds) or pin the new one (hack/crds.py --update)")
    on_disk = {p.relative_to(upstream).as_posix() for p in upstream.rglob("*") if p.is_file()}
    for dest in sorted(on_disk - pinned - {SOURCES_MD}):
        problems.append(f"{dest}: not pinned; add it to hack/crds/sources.yaml or delete it")
    md = upstream / SOURCES_MD
    if not md.is_file() or md.read_text() != render_sources_md(sources, sums, upstream):
        problems.append(f"{SOURCES_MD} is stale; run make crds (or hack/crds.py --only <a source>)")
    return problems


def sync(sources: list[Source], only: set[str], update: bool, upstream: Path = UPSTREAM,
         sums_path: Path = SUMS, from_dir: Path | None = None) -> list[str]:
    """Fetch, verify and write the selected sources; returns the errors (empty on success)."""
    sums = read_sums(sums_path)
    errors = []
    for src in sources:
        if only and src.name not in only:
            continue
        print(f"{src.name}: {src.go or f'{src.project}@{src.ref}'}", file=sys.stderr)
        try:
            blobs = fetch(src, from_dir) if from_dir is not None else fetch(src)
        except FetchError as e:
            errors.append(f"{src.name}: could not fetch ({e}); its vendored files were left as they are")
            continue
        for dest, data in blobs.items():
            digest, pinned = sha256(data), sums.get(dest)
            if pinned and pinned != digest and not update:
                errors.append(f"{dest}: upstream sha256 {digest} differs from the pinned {pinned}; if you "
                              "changed the version on purpose, run hack/crds.py --update --only " + src.name)
                continue
            f = upstream / dest
            f.parent.mkdir(parents=True, exist_ok=True)
            if not f.is_file() or f.read_bytes() != data:
                f.write_bytes(data)
                print(f"  wrote {dest} ({len(data)} bytes)", file=sys.stderr)
            sums[dest] = digest
    if not only:  # a full run also drops what is no longer pinned
        pinned = {d for s in sources for d in s.dests()}
        for dest in sorted(set(sums) - pinned):
            del sums[dest]
        for f in sorted(upstream.rglob("*")):
            rel = f.relative_to(upstream).as_posix()
            if f.is_file() and rel not in pinned and rel != SOURCES_MD:
                f.unlink()
                print(f"  removed {rel} (not pinned)", file=sys.stderr)
    write_sums(sums, sums_path)
    (upstream / SOURCES_MD).write_text(render_sources_md(sources, sums, upstream))
    return errors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="hack/crds.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="offline: compare the folder with its pins")
    ap.add_argument("--only", nargs="+", default=[], metavar="NAME", help="sources to fetch (default: all)")
    ap.add_argument("--update", action="store_true", help="record changed upstream digests instead of failing")
    ap.add_argument("--from", dest="from_dir", type=Path, metavar="DIR",
                    help="read github: sources from DIR/<owner>/<repo>/<commit>/<path> instead of the network")
    args = ap.parse_args(argv)
    try:
        sources = load_pins()
        if args.check:
            problems = check(sources, read_sums())
        else:
            unknown = sorted(set(args.only) - {s.name for s in sources})
            if unknown:
                print(f"--only: no source named {', '.join(unknown)} in {PINS.name}", file=sys.stderr)
                return 2
            problems = sync(sources, set(args.only), args.update, from_dir=args.from_dir)
    except PinError as e:
        print(e, file=sys.stderr)
        return 2
    for p in problems:
        print(p, file=sys.stderr)
    if not problems:
        print(f"schemas/upstream matches hack/crds ({sum(len(s.files) for s in sources)} files)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
