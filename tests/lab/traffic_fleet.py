"""What the traffic tests share: the traffic fleet on two of the lab's clusters, and reading who answered."""
from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from modelplane.validate.admission import load_dir

HERE = Path(__file__).resolve().parent
MODELS = HERE / "fleets" / "traffic"
CLUSTERS = ("solo", "onprem-west")
ANSWERED_BY = "X-Modelplane-Answered-By"


def fleet(lab, target: Path) -> Path:
    """The traffic models on two of the lab's own clusters (with their classes)."""
    xrs, _ = load_dir(Path(lab.directory))
    keep = [d for d in xrs if d.get("kind") == "InferenceClass"
            or (d.get("kind") == "InferenceCluster" and d["metadata"]["name"] in CLUSTERS)]
    target.mkdir(parents=True, exist_ok=True)
    (target / "clusters.yaml").write_text(yaml.safe_dump_all(keep, sort_keys=False))
    shutil.copy(MODELS / "models.yaml", target / "models.yaml")
    return target


def who(header: str) -> dict[str, str]:
    """``X-Modelplane-Answered-By`` as a dict (cluster, namespace, pod, deployment, replica)."""
    return dict(part.split("=", 1) for part in header.split(",") if "=" in part)
