"""``python -m tests.lab.bench`` (``make lab-bench``): lab start-up time and memory, as a table.

For 1, 3 and all clusters of examples/fleet (plus the solo cluster for 1): seconds until
`lab up` returns ready, resident memory of every lab process once ready (total and per
program), and seconds for `lab down`. Needs `make tools`; prints, never asserts.
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import yaml
from modelplane import paths
from modelplane.kube import tools
from modelplane.lab import runner
from modelplane.validate.admission import load_dir

from tests.bench.columns import table
from tests.lab.lab_fleet import SOLO


def _fleet(target: Path, clusters: int | None) -> Path:
    target.mkdir(parents=True)
    docs = []
    for source in ((SOLO,) if clusters == 1 else (paths.EXAMPLES / "fleet",)):
        xrs, _ = load_dir(source)
        docs += [d for d in xrs if d.get("kind") == "InferenceClass"]
        found = [d for d in xrs if d.get("kind") == "InferenceCluster"]
        docs += found if clusters in (None, 1) else found[:clusters]
    (target / "fleet.yaml").write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return target


def measure(clusters: int | None) -> dict:
    root = Path(tempfile.mkdtemp(prefix="modelplane-lab-bench-"))
    directory = _fleet(root / "fleet", clusters)
    start = time.monotonic()
    state = runner.up(directory, root / "state")
    up = time.monotonic() - start
    _, rows = runner.status(root / "state")
    by_program: dict[str, int] = {}
    for r in rows:
        name = r.label.rsplit("/", 1)[-1]
        by_program[name] = by_program.get(name, 0) + r.rss_kib
    start = time.monotonic()
    runner.down(root / "state")
    down = time.monotonic() - start
    n = len(state.clusters)
    row = {"clusters": n, "nodes": 0, "up s": up, "down s": down,
           "RSS MiB": sum(by_program.values()) // 1024}
    row["nodes"] = sum(p.node_count for c in runner.load_fleet(directory).clusters for p in c.pools)
    for name in ("kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler", "kwok", "lws", "standin",
                 "traefik", "engines"):
        row[f"{name} MiB"] = by_program.get(name, 0) // 1024
    return row


def run() -> list[dict]:
    missing = tools.missing(*runner.TOOLS)
    if missing:
        raise SystemExit(missing)
    return [measure(1), measure(3), measure(None)]


if __name__ == "__main__":
    print("\n".join(table(run())))
    sys.exit(0)
