"""The two descriptions of the runtime, read for comparison: the Dockerfile (for users with
Docker) and ``hack/images/build.py`` (``make images``, no Docker)."""
from __future__ import annotations

import importlib.util
import json
import re
import shlex
from functools import cache
from pathlib import Path

from modelplane import paths

# Lines the suite prints at its end (timings, digests): conftest's terminal summary.
REPORT: list[str] = []
# Debian release numbers the Dockerfile's base images name -> the suite mmdebstrap builds.
DEBIAN = {"12": "bookworm", "13": "trixie"}


@cache
def build():
    """``hack/images/build.py`` as a module."""
    spec = importlib.util.spec_from_file_location("mp_images_build", paths.ROOT / "hack" / "images" / "build.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def dockerfile(path: Path | None = None) -> dict:
    """The run stage's ENTRYPOINT, USER, EXPOSE, ENV; both stages' bases; the build stage's
    ``uv sync`` commands, ``ENV`` and ``COPY`` sources; the ``UV_VERSION`` argument."""
    text = (path or paths.ROOT / "Dockerfile").read_text()
    lines, cur = [], ""
    for raw in text.splitlines():
        if raw.lstrip().startswith("#") or not raw.strip():
            continue
        cur += raw.rstrip("\\").strip() + " "
        if not raw.rstrip().endswith("\\"):
            lines.append(cur.strip())
            cur = ""
    stages: list[dict] = []
    for line in lines:
        op, _, rest = line.partition(" ")
        op = op.upper()
        if op == "FROM":
            stages.append({"from": rest.split()[0], "env": {}, "copy": [], "run": [], "args": {}})
            continue
        st = stages[-1]
        if op == "ENV":
            for item in shlex.split(rest):
                k, _, v = item.partition("=")
                st["env"][k] = v
        elif op == "ARG":
            k, _, v = rest.partition("=")
            st["args"][k] = v
        elif op == "COPY" and "--from" not in rest:
            st["copy"] += rest.split()[:-1]
        elif op == "RUN":
            st["run"].append(rest)
        elif op in ("ENTRYPOINT", "USER", "EXPOSE", "WORKDIR"):
            st[op.lower()] = json.loads(rest) if op == "ENTRYPOINT" else rest
    build_stage, run_stage = stages[0], stages[-1]
    return {"build": build_stage, "run": run_stage,
            "uv_sync": [c for r in build_stage["run"] for c in r.split("&&") if "uv sync" in c]}


def debian_suite(image: str) -> str:
    """``debian:bookworm-slim`` -> bookworm; ``gcr.io/distroless/python3-debian12:nonroot`` -> bookworm."""
    m = re.search(r"debian(\d+)", image)
    if m:
        return DEBIAN[m.group(1)]
    return image.split(":", 1)[1].split("-", 1)[0]


def makefile_uv_version() -> str:
    m = re.search(r"^UV_VERSION\s*:?=\s*(\S+)", (paths.ROOT / "Makefile").read_text(), re.MULTILINE)
    return m.group(1)
