"""modelplane.lab.probe: one live answer, only ever from the lab's own addresses."""
from __future__ import annotations

import http.server
import json
import threading

import pytest
from modelplane.lab import probe
from modelplane.lab.probe import in_lab


@pytest.mark.parametrize("host,ok", [("127.0.0.1", True), ("198.18.3.10", True), ("198.19.200.7", True),
                                     ("198.20.0.1", False), ("8.8.8.8", False), ("example.com", False)])
def test_only_loopback_and_the_lab_network_are_asked(host, ok):
    assert in_lab(host) is ok


def test_outside_the_lab_nothing_is_sent():
    assert probe("http://203.0.113.10/ml-team/qwen/") == "not sent: 203.0.113.10 is outside the lab's network"


class _Models(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"data": [{"id": "qwen"}], "path": self.path}).encode()
        self.send_response(200 if self.path == "/ml-team/qwen/v1/models" else 404)
        self.send_header("X-Modelplane-Answered-By", "cluster=a,pod=p")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_an_answer_is_summed_up_with_who_served_it():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        assert probe(f"http://127.0.0.1:{port}/ml-team/qwen/") == "200 qwen (cluster=a,pod=p)"
        assert probe(f"http://127.0.0.1:{port}/other/").startswith("404")
    finally:
        server.shutdown()
    assert probe(f"http://127.0.0.1:{port}/ml-team/qwen/", timeout=1).startswith("no answer:")
