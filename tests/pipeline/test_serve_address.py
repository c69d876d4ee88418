"""``modelplane serve --address 127.0.0.1:0 --address-file FILE``, and a port already taken.

gRPC binds with SO_REUSEPORT unless told not to: two function servers on one port would share it,
the kernel handing each connection to either, so a caller could be answered by another function
(seen once under ``make test``). The server turns it off, so a second bind fails with a sentence,
and every server our commands and tests start binds port 0 and writes the port it got.
"""
from __future__ import annotations

import subprocess
import sys

from tests.support import ROOT, call, fatal, request, serve_popen

GATEWAY = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceGateway", "metadata": {"name": "default"},
           "spec": {}}


def test_port_zero_and_the_address_file_name_the_port_the_server_got():
    with serve_popen("compose-inference-gateway", "--insecure") as (_, address):
        host, _, port = address.rpartition(":")
        assert host == "127.0.0.1" and int(port) > 0
        assert fatal(call(address, request(GATEWAY), timeout=60)) is None


def test_a_second_server_on_a_taken_port_fails_with_a_sentence_instead_of_sharing_it():
    with serve_popen("compose-inference-gateway", "--insecure") as (_, address):
        second = subprocess.run([sys.executable, "-m", "modelplane.cli", "serve", "compose-model-cache",
                                 "--insecure", "--address", address], check=False, capture_output=True, text=True,
                                timeout=120, cwd=ROOT)
        assert second.returncode == 1
        assert f"modelplane serve: cannot listen on {address}: another process listens there" in second.stderr
        assert "Traceback" not in second.stderr
        # The first server still answers, and only it.
        assert fatal(call(address, request(GATEWAY), timeout=60)) is None
