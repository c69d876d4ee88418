"""Quick vs soak sizing for the reliability suite, and shared helpers.

Importing this module registers the ``reliability`` hypothesis profile.

``make test`` runs the quick version (a few hundred cases per function);
``make soak`` runs ``tests/reliability/soak.py`` (MODELPLANE_SOAK_EXAMPLES
cases per function, default 10,000, as a table), then sets MODELPLANE_SOAK=1
and runs the tests marked slow at soak size. Slow tests run at quick size when
the variable is unset, so running them by hand is cheap. Measurements go to
/tmp/modelplane-reliability/*.json so they can be read without ``-s``.

The profile's example database lives outside the repository
(``$MODELPLANE_HYPOTHESIS_DB``, default ``~/.cache/modelplane/hypothesis``).
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from modelplane import functions

SOAK = os.environ.get("MODELPLANE_SOAK") == "1"
SOAK_EXAMPLES = int(os.environ.get("MODELPLANE_SOAK_EXAMPLES", "10000"))
REPORTS = Path(os.environ.get("MODELPLANE_RELIABILITY_REPORTS", "/tmp/modelplane-reliability"))
DATABASE = Path(os.environ.get("MODELPLANE_HYPOTHESIS_DB", Path.home() / ".cache" / "modelplane" / "hypothesis"))

settings.register_profile(
    "reliability", deadline=None, derandomize=not SOAK, print_blob=True,
    database=DirectoryBasedExampleDatabase(DATABASE) if SOAK else None,  # derandomized: nothing to keep
    suppress_health_check=list(HealthCheck),
    # No shrinking: hostile values are huge and shrinking them takes minutes; the
    # failing input is reported as generated (check_response keeps it short).
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)

# A FATAL for bad input names where the problem is: spec.x, metadata.y[0], status.z ...
FIELD_PATH = re.compile(r"\b(spec|metadata|status)(\.[A-Za-z_$][\w$.-]*|\[\d+\])|^(spec|metadata|status)\b")


def names_field(message: str) -> bool:
    return bool(FIELD_PATH.search(message))


def require_function(name: str) -> None:
    """Fail (never skip) when a function under test is not built yet."""
    if name not in functions.available():
        pytest.fail(f"{name} has no functions/{name}/fn.py yet; available: {functions.available()}")


def report(name: str, data: dict) -> Path:
    """Write a measurement to the reports folder (one JSON file per measurement)."""
    REPORTS.mkdir(parents=True, exist_ok=True)
    path = REPORTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50/p90/p99/max in milliseconds of samples given in seconds."""
    xs = sorted(samples)
    if not xs:
        return {}

    def pick(q: float) -> float:
        return round(xs[min(len(xs) - 1, int(q * len(xs)))] * 1000, 2)

    return {"n": len(xs), "p50_ms": pick(0.50), "p90_ms": pick(0.90), "p99_ms": pick(0.99),
            "max_ms": round(xs[-1] * 1000, 2)}
