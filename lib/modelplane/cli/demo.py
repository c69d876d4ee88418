"""``modelplane demo``: simulate the example fleet and say what happened, briefly."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from modelplane import paths
from modelplane.simulate import report
from modelplane.simulate.loop import simulate_dir


def run(argv: list[str], stdout: TextIO | None = None) -> int:
    out = stdout or sys.stdout
    directory = Path(argv[0]) if argv else paths.EXAMPLES / "fleet"
    print(f"Simulating {directory} (no cluster, no network: every function runs as a local gRPC server)...",
          file=out, flush=True)
    world, outcome = simulate_dir(directory)
    counts = report.summary_counts(world)
    ready = ", ".join(f"{kind} {r}/{t}" for kind, (r, t) in counts.items())
    state = "reached a fixed point" if outcome.converged else "did NOT settle"
    print(f"\nThe fleet {state} after {outcome.rounds} rounds. Ready: {ready}.\n", file=out)
    print("Where every replica landed:", file=out)
    print("\n".join("  " + line for line in report.placements(world)), file=out)
    print("\nOne OpenAI-compatible endpoint per ModelService:", file=out)
    print("\n".join("  " + line for line in report.services(world)), file=out)
    not_ready = [line for line in report.conditions(world) if line.endswith("READY=False")]
    if not_ready:
        print("\nNot ready (see --show conditions for why):", file=out)
        print("\n".join("  " + line.split("  READY")[0] for line in not_ready), file=out)
    print(
        "\nSee more:\n"
        f"  .venv/bin/modelplane simulate {directory} --show conditions   # every XR's conditions\n"
        f"  .venv/bin/modelplane simulate {directory} --show resources    # every composed resource as YAML\n"
        f"  .venv/bin/modelplane simulate {directory} --unready <name>    # leave a resource unready",
        file=out,
    )
    return 0 if outcome.converged else 1
