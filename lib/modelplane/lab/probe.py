"""One live request through the lab's data plane: what ``simulate --lab --show routes`` prints.

``probe(url)`` sends ``GET <url>v1/models`` (every OpenAI-compatible engine answers it, with no
model to name) and sums up the answer: the status, the served model and who answered (the mock
engine's ``X-Modelplane-Answered-By`` header). Only the lab's own addresses are asked: loopback
and the lab's test network (198.18.0.0/15); anything else is reported, not sent.
"""
from __future__ import annotations

import http.client
import ipaddress
import json
from urllib.parse import urlsplit

ANSWERED_BY = "X-Modelplane-Answered-By"
LAB_NET = ipaddress.ip_network("198.18.0.0/15")
TIMEOUT = 10.0


def in_lab(host: str) -> bool:
    """Whether ``host`` is an address the lab owns (a request may go there)."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip in LAB_NET


def probe(url: str, timeout: float = TIMEOUT) -> str:
    """``200 qwen (cluster=..,pod=..)``, or why there is no answer."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not in_lab(host):
        return f"not sent: {host or url} is outside the lab's network"
    path = (parts.path or "/").rstrip("/") + "/v1/models"
    conn = http.client.HTTPConnection(host, parts.port or 80, timeout=timeout)
    try:
        conn.request("GET", path)
        rsp = conn.getresponse()
        body = rsp.read(64 * 1024)
        who = rsp.getheader(ANSWERED_BY) or ""
    except OSError as err:
        return f"no answer: {err}"
    finally:
        conn.close()
    model = ""
    try:
        data = json.loads(body)
        model = ",".join(m.get("id", "") for m in data.get("data") or [] if isinstance(m, dict))
    except (ValueError, AttributeError):
        pass
    return " ".join(p for p in (str(rsp.status), model, f"({who})" if who else "") if p)
