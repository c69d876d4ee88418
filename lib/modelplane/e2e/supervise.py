"""The lab's controller process: the External package runtime and the gateway stand-in, in a loop.

    python -m modelplane.e2e.supervise STATE

Every ``INTERVAL`` seconds: one runtime pass (start or restart what active
package revisions need, publish endpoints and health) and one gateway pass on
the control plane and on every registered workload cluster
(``STATE/workloads.json``: name -> kubeconfig). Errors are logged and retried
on the next pass (the API server may be busy); SIGTERM ends the loop. The
runtime's processes are recorded by the runtime and stopped by ``down``.
"""
from __future__ import annotations

import json
import signal
import sys
import time
import traceback
from pathlib import Path

from modelplane.e2e import controlplane, pkgruntime, standins

INTERVAL = 2.0
WORKLOADS = "workloads.json"


def main(argv: list[str]) -> int:
    state = Path(argv[0]).resolve()
    rec = controlplane.Record.load(state)
    kubeconfig = Path(rec.kubeconfig)
    client = controlplane.admin_client(kubeconfig)
    runtime = pkgruntime.ExternalRuntime(client, state / "runtime", kubeconfig)
    book = standins.Addresses()
    workloads: dict[str, object] = {}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    last = ""
    while not stop:
        try:
            states = runtime.sync()
            standins.gateways_pass(client, controlplane.CONTROL_PLANE, book)
            listed = state / WORKLOADS
            for name, kc in (json.loads(listed.read_text()) if listed.exists() else {}).items():
                if name not in workloads:
                    workloads[name] = controlplane.admin_client(Path(kc))
                standins.gateways_pass(workloads[name], name, book)
            line = " ".join(f"{k}={v}" for k, v in sorted(states.items()))
            if line != last:
                print(time.strftime("%H:%M:%S"), line, flush=True)
                last = line
        except Exception:  # noqa: BLE001 - a busy or restarting API server: try again next pass
            traceback.print_exc()
            sys.stdout.flush()
        time.sleep(INTERVAL)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
