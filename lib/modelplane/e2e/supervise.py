"""The control plane's controller process: the External package runtime and the gateway stand-in.

    python -m modelplane.e2e.supervise STATE

Every ``INTERVAL`` seconds: one runtime pass (start or restart what active
package revisions need, publish endpoints and health) and one pass of the
lab's Envoy Gateway stand-in (``modelplane.lab.standin``) over the control
plane, where the InferenceGateway's Gateway lives (the lab runs its own over
the workload clusters). Errors are logged and retried on the next pass (the
API server may be busy); SIGTERM ends the loop. The runtime's processes are
recorded by the runtime and stopped by ``down``.
"""
from __future__ import annotations

import signal
import sys
import time
import traceback
from pathlib import Path

from modelplane import clock, lab
from modelplane.e2e import controlplane, package_runtime

INTERVAL = 2.0
# The stand-in's address block is 100.64.<index>.0/24, one per cluster; the lab numbers its
# workload clusters from 0, so the control plane takes one far from them.
CONTROL_PLANE_INDEX = 200


def main(argv: list[str]) -> int:
    state = Path(argv[0]).resolve()
    rec = controlplane.Record.load(state)
    kubeconfig = Path(rec.kubeconfig)
    client = controlplane.admin_client(kubeconfig)
    runtime = package_runtime.ExternalRuntime(client, state / "runtime", kubeconfig, functions=rec.functions)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    last = ""
    while not stop:
        try:
            states = runtime.sync()
            lab.sweep(client, CONTROL_PLANE_INDEX)
            line = " ".join(f"{k}={v}" for k, v in sorted(states.items()))
            if line != last:
                print(clock.now().strftime("%H:%M:%S"), line, flush=True)
                last = line
        except Exception:  # noqa: BLE001 - a busy or restarting API server: try again next pass
            traceback.print_exc()
            sys.stdout.flush()
        time.sleep(INTERVAL)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
